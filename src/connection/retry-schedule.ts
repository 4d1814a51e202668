/**
 * The reconnect (remote) or restart (local) schedule of one server: attempt n waits `backoffDelay(n - 1)`, runs, and on
 * a failure that retrying may fix schedules the next, until the policy's attempts run out. One schedule at a time;
 * stopping it wakes a wait at once.
 */
import { BridgeError } from "../common/errors.ts";
import type { RetryPolicy } from "../config/types.ts";
import { backoffDelay } from "./health.ts";

/**
 * Whether a new attempt may fix a failed connect. A bad config and rejected credentials are never retried; for a
 * local server, neither is a missing or unrunnable command, or a server that hung in its handshake.
 */
export function worthRetrying(error: unknown, local: boolean): boolean {
  if (error instanceof BridgeError && (error.kind === "config" || error.kind === "auth")) return false;
  if (!local) return true;
  if (error instanceof BridgeError && error.kind === "timeout") return false;
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return code !== "ENOENT" && code !== "EACCES";
}

export interface RetryHooks {
  /** One attempt (a connect); resolves when the server is back. */
  attempt(n: number): Promise<void>;
  /** Whether a further attempt may succeed after this failure. */
  retryable(error: unknown): boolean;
  /** Attempt `n` is due at `at` (epoch ms). */
  scheduled(n: number, at: number): void;
  /** Attempt `n` failed; `retryIn` is the wait before the next, or null when none follows. */
  failed(n: number, error: unknown, retryIn: number | null): void;
  /** The schedule ended without success; `error` is the last failure. */
  gaveUp(error: unknown): void;
}

export class RetrySchedule {
  private current?: Promise<void>;
  private wake = new AbortController();

  constructor(
    private readonly policy: RetryPolicy,
    private readonly hooks: RetryHooks,
  ) {}

  /** The schedule under way, if any: resolves when it ends (back, given up, or stopped). */
  get running(): Promise<void> | undefined {
    return this.current;
  }

  /** Starts the schedule unless it runs already. */
  start(): Promise<void> {
    this.current ??= this.run().finally(() => {
      this.current = undefined;
    });
    return this.current;
  }

  /** Ends the schedule (a wait ends at once; an attempt under way finishes) and waits for it. Ready to start again. */
  async stop(): Promise<void> {
    this.wake.abort();
    await this.current?.catch(() => undefined);
    this.wake = new AbortController();
  }

  /** Stops for good (shutdown): later starts do nothing. */
  close(): void {
    this.wake.abort();
  }

  /** Aborted when the schedule is stopped: for waits outside it that should end with it (a sign-in). */
  get signal(): AbortSignal {
    return this.wake.signal;
  }

  private async run(): Promise<void> {
    const { policy, hooks } = this;
    let lastError: unknown;
    for (let n = 1; n <= policy.maxAttempts; n++) {
      const delay = backoffDelay(n - 1, policy);
      // Later attempts were announced when the one before failed, with this same delay.
      if (n === 1) hooks.scheduled(n, Date.now() + delay);
      if (!(await this.sleep(delay))) return;
      try {
        await hooks.attempt(n);
        return;
      } catch (error) {
        lastError = error;
        if (this.wake.signal.aborted) return;
        const more = n < policy.maxAttempts && hooks.retryable(error);
        const retryIn = more ? backoffDelay(n, policy) : null;
        if (retryIn !== null) hooks.scheduled(n + 1, Date.now() + retryIn);
        hooks.failed(n, error, retryIn);
        if (!more) break;
      }
    }
    if (!this.wake.signal.aborted) hooks.gaveUp(lastError);
  }

  /** Waits `ms` unless the schedule is stopped first; false if it was. */
  private sleep(ms: number): Promise<boolean> {
    const signal = this.wake.signal;
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve(true);
      }, ms);
      // A pending retry must not keep a pi that is done from exiting.
      timer.unref();
      const onAbort = () => {
        clearTimeout(timer);
        resolve(false);
      };
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}
