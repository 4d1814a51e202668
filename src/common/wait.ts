/**
 * Waiting on a promise for a bounded time: what every "give up after a while" in the bridge is built from.
 */

export interface WaitLimit {
  ms: number;
  /** The error a wait that ran out of time rejects with. */
  timedOut: () => unknown;
  /** A caller who may stop waiting sooner. */
  signal?: AbortSignal;
  /** The error a wait whose signal fired rejects with. */
  aborted?: () => unknown;
}

/** `promise`'s own outcome, unless `limit.ms` pass or `limit.signal` fires first. */
export async function within<T>(promise: Promise<T>, limit: WaitLimit): Promise<T> {
  const { signal } = limit;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(limit.timedOut()), limit.ms);
    if (!signal) return;
    onAbort = () => reject(limit.aborted?.() ?? signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, stop]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}

/** Waits for `promise` at most `ms`; true if it settled (either way) in time. */
export async function settleWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const settled = promise.then(() => true).catch(() => true);
  return within(settled, { ms, timedOut: () => new Error("timed out") }).catch(() => false);
}
