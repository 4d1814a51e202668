/**
 * A server's stderr, cut into lines (at `\r?\n`) for its log. Bounded: a server that writes megabytes without a
 * newline must not grow memory without bound, so a line past {@link MAX_STDERR_LINE} characters is reported cut (with
 * `…`) and the rest of it, up to its newline, is dropped.
 */
import { cutBetweenWords } from "../../common/text.ts";

const MAX_STDERR_LINE = 4096;

export class StderrLines {
  private line = "";
  private skipping = false;

  constructor(private readonly emit: (line: string) => void) {}

  push(text: string): void {
    const pieces = text.split("\n");
    for (let i = 0; i < pieces.length; i++) {
      if (!this.skipping) this.line += pieces[i];
      if (i < pieces.length - 1) {
        if (!this.skipping) this.send(this.line);
        this.line = "";
        this.skipping = false;
      } else if (this.line.length > MAX_STDERR_LINE) {
        // Report the start of an overlong line now and drop the rest of it, up to its newline.
        this.send(this.line);
        this.line = "";
        this.skipping = true;
      }
    }
  }

  /** A last line without a newline, at stream end. */
  flush(): void {
    if (!this.skipping && this.line !== "") this.send(this.line);
    this.line = "";
    this.skipping = false;
  }

  private send(line: string): void {
    if (line.endsWith("\r")) line = line.slice(0, -1);
    this.emit(line.length > MAX_STDERR_LINE ? `${cutBetweenWords(line, MAX_STDERR_LINE)}…` : line);
  }
}
