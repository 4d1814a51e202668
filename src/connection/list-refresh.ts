/**
 * What a server's `list_changed` starts (reading its tool list again, or telling the prompt commands and resource
 * tools), run at most once a second per list: some servers say their list changed whenever it is read, and the bridge
 * read it again each time (17 reads a second, each a new tool list in pi, for as long as the session ran). One run at
 * a time; a change said while one runs or waits is served by the next run, so the last change is always read.
 */

/** The least time from the start of one run to the start of the next. */
const LIST_REFRESH_INTERVAL_MS = 1000;

export class ListRefresh<T> {
  private running = false;
  private again = false;
  private lastStart = Number.NEGATIVE_INFINITY;
  /** What the newest request was for (the session that said it): the next run gets it. */
  private latest!: T;

  constructor(
    private readonly run: (latest: T) => Promise<void> | void,
    private readonly intervalMs = LIST_REFRESH_INTERVAL_MS,
  ) {}

  /** The list changed. */
  request(latest: T): void {
    this.latest = latest;
    if (this.running) this.again = true;
    else void this.loop();
  }

  private async loop(): Promise<void> {
    this.running = true;
    do {
      this.again = false;
      const wait = this.lastStart + this.intervalMs - Date.now();
      // A pending run must not keep a pi that is done from exiting.
      if (wait > 0) await new Promise<void>((resolve) => setTimeout(resolve, wait).unref());
      this.lastStart = Date.now();
      try {
        await this.run(this.latest);
      } catch {
        // Each run reports its own failure.
      }
    } while (this.again);
    this.running = false;
  }
}
