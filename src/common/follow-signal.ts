/**
 * A signal of the bridge's own that follows a signal many calls share (pi gives the parallel tool calls of one turn
 * one signal). The SDK adds an abort listener to each request's signal while the request runs: hundreds of calls at
 * once would pile hundreds of listeners onto pi's signal (MaxListenersExceededWarning), and raising pi's limit is not
 * the bridge's to do. So the calls that share a signal get followers of it (a few, see SPREAD), whose limit is the
 * bridge's own; a follower per call (or `AbortSignal.any`) would cost a new signal, several microseconds, on every call.
 */
import { setMaxListeners } from "node:events";

/**
 * How many followers a shared signal gets. Each add and remove of a listener walks the signal's list: a thousand calls
 * at once on one follower would cost half a million steps; spread over this many, some thirty thousand.
 */
const SPREAD = 32;

const followers = new WeakMap<AbortSignal, { next: number; signals: AbortSignal[] }>();

/** A signal that aborts (with the same reason) when `shared` does: one of a few shared by every caller of `shared`. */
export function followSignal(shared: AbortSignal): AbortSignal {
  let known = followers.get(shared);
  if (!known) followers.set(shared, (known = { next: 0, signals: [follower(shared)] }));
  // Runs of calls on each in turn (calls one at a time stay on one); the others follow the first, so that `shared`
  // (pi's) carries one listener of the bridge's.
  const index = Math.floor(known.next++ / SPREAD) % SPREAD;
  return (known.signals[index] ??= follower(known.signals[0]!));
}

function follower(signal: AbortSignal): AbortSignal {
  const own = new AbortController();
  // Each request listens while it runs and takes its listener off when it ends: many at once are expected here.
  setMaxListeners(0, own.signal);
  if (signal.aborted) own.abort(signal.reason);
  else signal.addEventListener("abort", () => own.abort(signal.reason), { once: true });
  return own.signal;
}

/**
 * Aborts `controller` (with the same reason) when `caller` does, until the returned function is called. By hand, not
 * through `AbortSignal.any`: on Node 20 that leaves an entry on `caller` for every signal made from it, and one caller's
 * signal may serve many requests.
 */
export function abortWith(controller: AbortController, caller: AbortSignal | undefined): () => void {
  if (!caller) return () => undefined;
  const follow = () => controller.abort(caller.reason);
  if (caller.aborted) {
    follow();
    return () => undefined;
  }
  caller.addEventListener("abort", follow, { once: true });
  return () => caller.removeEventListener("abort", follow);
}
