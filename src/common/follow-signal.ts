/**
 * A signal of a call's own that follows a signal many calls share (pi gives the parallel tool calls of one turn one
 * signal). The SDK adds an abort listener to each request's signal and never takes it off, so each request needs a
 * signal of its own; `AbortSignal.any` gives one, but costs a few microseconds and weak references the garbage
 * collector must process for every call. Here all the calls that follow one shared signal hang off a single listener
 * on it, and a call leaves the set when it ends.
 */

const followers = new WeakMap<AbortSignal, Set<AbortController>>();

export interface FollowingSignal {
  signal: AbortSignal;
  /** The call is over: the shared signal no longer needs to reach it. */
  release(): void;
}

/** A new signal that aborts (with the same reason) when `shared` does, until it is released. */
export function followSignal(shared: AbortSignal): FollowingSignal {
  const own = new AbortController();
  if (shared.aborted) {
    own.abort(shared.reason);
    return { signal: own.signal, release: () => {} };
  }
  let set = followers.get(shared);
  if (!set) {
    const calls = new Set<AbortController>();
    followers.set(shared, calls);
    shared.addEventListener(
      "abort",
      () => {
        followers.delete(shared);
        for (const call of calls) call.abort(shared.reason);
      },
      { once: true },
    );
    set = calls;
  }
  const calls = set;
  calls.add(own);
  return { signal: own.signal, release: () => calls.delete(own) };
}
