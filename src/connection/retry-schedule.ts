/**
 * The reconnect (remote) or restart (local) schedule of one server: attempt n waits `backoffDelay(n - 1)`, runs, and on
 * a failure that retrying may fix schedules the next, until the policy's attempts run out. One schedule at a time;
 * stopping it wakes a wait at once. The attempts are counted across runs: a server that connects and then fails again
 * goes on from the attempt it had reached, so one that crashes right after every good connect still runs out; only a
 * drop after the server stayed up for a while ({@link STABLE_AFTER_MS}), or `reset()` (the user asked for a fresh
 * start), begins again at 1.
 */
import { BridgeError, codeOf } from "../common/errors.ts";
import type { RetryPolicy } from "../config/types.ts";
import { backoffDelay } from "./health.ts";

/** Why a local server's process could not be spawned at all, where no restart changes that. */
const PERMANENT_SPAWN_CODES = new Set(["ENOENT", "ENOTDIR", "EACCES", "E2BIG"]);

/**
 * Whether a new attempt may fix a failed connect. A bad config and rejected credentials are never retried; for a
 * local server, neither is a command that cannot be run at all (missing, not executable, its arguments too long, or
 * a package the registry does not have: those are reported as config errors). A server that ran out of time is
 * retried: a slow start (an `npx` download, a loaded machine) is often faster the second time.
 */
export function worthRetrying(error: unknown, local: boolean): boolean {
  if (error instanceof BridgeError && (error.kind === "config" || error.kind === "auth")) return false;
  if (!local) return true;
  return !PERMANENT_SPAWN_CODES.has(codeOf((error as { cause?: unknown } | undefined)?.cause) ?? "");
}

/** Until when (epoch ms) the server at each URL (not origin: a gateway's servers share one) asked to be left alone. */
const askedToWait = new Map<string, number>();

/** Notes the `Retry-After` (seconds, or an HTTP date) of a 429 or 503 from the server at `url`: its next attempt waits. */
export function noteRetryAfter(url: string, header: string | null, now = Date.now()): void {
  const at = header === null ? NaN : /^\s*\d+\s*$/.test(header) ? now + Number(header) * 1000 : Date.parse(header);
  if (Number.isFinite(at)) askedToWait.set(new URL(url).href, at);
}

/** A server that stays connected this long has recovered: a later drop starts the attempt count again. */
export const STABLE_AFTER_MS = 60_000;

export interface RetryHooks {
  /** One attempt (a connect); resolves when the server is back. */
  attempt(n: number): Promise<void>;
  /** Whether a further attempt may succeed after this failure. */
  retryable(error: unknown): boolean;
  /** Attempt `n` is due at `at` (epoch ms). */
  scheduled(n: number, at: number): void;
  /** Attempt `n` failed; `retryIn` is the wait before the next, or null when none follows. */
  failed?(n: number, error: unknown, retryIn: number | null): void;
  /** The schedule ended without success; `error` is the last failure. */
  gaveUp(error: unknown): void;
  /** A remote server's URL: a wait it asked for (`noteRetryAfter`) holds the next attempt, up to the longest delay. */
  url?(): string | undefined;
}

export class RetrySchedule {
  private current?: Promise<void>;
  private wake = new AbortController();
  /** Attempts made since the last `reset()`. */
  private used = 0;
  /** When the server last connected (epoch ms). */
  private upSince = 0;
  /** Ends the wait under way, if any, as if its time had come. */
  private endWait?: () => void;

  constructor(
    private readonly policy: RetryPolicy,
    private readonly hooks: RetryHooks,
    private readonly stableAfterMs = STABLE_AFTER_MS,
  ) {}

  /** The schedule under way, if any: resolves when it ends (back, given up, or stopped). */
  get running(): Promise<void> | undefined {
    return this.current;
  }

  /** Attempts made since the last `reset()`, successful ones included. */
  get attemptsMade(): number {
    return this.used;
  }

  /** True when no attempt is left: a start now gives up at once. */
  get exhausted(): boolean {
    return this.used >= this.policy.maxAttempts;
  }

  /** The wait before the next attempt after a failure with `error`; null when none is left or retrying cannot help. */
  retryIn(error: unknown): number | null {
    return this.exhausted || !this.hooks.retryable(error) ? null : this.delay(this.used);
  }

  /** The wait before retry `attempt` (0-based): the backoff, or the longer wait the server asked for. */
  private delay(attempt: number): number {
    return Math.max(backoffDelay(attempt, this.policy), Math.min(this.asked(), this.policy.maxDelayMs));
  }

  /** What is left of the wait the server asked for (ms; 0 or less: none). */
  private asked(): number {
    const url = this.hooks.url?.();
    return (url && URL.canParse(url) ? (askedToWait.get(new URL(url).href) ?? 0) : 0) - Date.now();
  }

  /** The next failure starts again at attempt 1. */
  reset(): void {
    this.used = 0;
  }

  /** The server connected. */
  connected(now = Date.now()): void {
    this.upSince = now;
  }

  /** The server dropped: if it had stayed up long enough, the attempts it used before are forgiven. */
  dropped(now = Date.now()): void {
    if (now - this.upSince >= this.stableAfterMs) this.reset();
  }

  /** Starts the schedule unless it runs already; `cause` is what made it necessary (given up with, if no attempt is left). */
  start(cause?: unknown): Promise<void> {
    this.current ??= this.run(cause).finally(() => (this.current = undefined));
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

  /**
   * Ends the wait before the next attempt now, if the schedule waits: a call wants the server (a remote one restarted
   * while pi was idle is likely back), and the backoff is for nobody then. The attempt counts as the schedule's own.
   */
  hurry(): void {
    // Not while the server's own `Retry-After` runs: it said it would not be back sooner.
    if (this.asked() <= 0) this.endWait?.();
  }

  /** Aborted when the schedule is stopped: for waits outside it that should end with it (a sign-in). */
  get signal(): AbortSignal {
    return this.wake.signal;
  }

  private async run(cause: unknown): Promise<void> {
    const { policy, hooks } = this;
    let lastError = cause;
    const first = this.used + 1;
    for (let n = first; n <= policy.maxAttempts; n++) {
      const delay = this.delay(n - 1);
      // Later attempts were announced when the one before failed, with this same delay.
      if (n === first) hooks.scheduled(n, Date.now() + delay);
      if (!(await this.sleep(delay))) return;
      this.used = n;
      try {
        await hooks.attempt(n);
        return;
      } catch (error) {
        lastError = error;
        if (this.wake.signal.aborted) return;
        const retryIn = this.retryIn(error);
        if (retryIn !== null) hooks.scheduled(n + 1, Date.now() + retryIn);
        hooks.failed?.(n, error, retryIn);
        if (retryIn === null) break;
      }
    }
    if (!this.wake.signal.aborted) hooks.gaveUp(lastError);
  }

  /** Waits `ms` unless the schedule is stopped first; false if it was. */
  private sleep(ms: number): Promise<boolean> {
    const signal = this.wake.signal;
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const end = (waited: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.endWait = undefined;
        resolve(waited);
      };
      const timer = setTimeout(() => end(true), ms);
      // A pending retry must not keep a pi that is done from exiting.
      timer.unref();
      const onAbort = () => end(false);
      signal.addEventListener("abort", onAbort, { once: true });
      this.endWait = () => end(true);
    });
  }
}
