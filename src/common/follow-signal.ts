/**
 * A signal of the bridge's own that follows a signal many calls share (pi gives the parallel tool calls of one turn
 * one signal). The SDK adds an abort listener to each request's signal while the request runs: hundreds of calls at
 * once would pile hundreds of listeners onto pi's signal (MaxListenersExceededWarning), and raising pi's limit is not
 * the bridge's to do. So every call that shares a signal gets one follower of it, whose limit is the bridge's own; a
 * follower per call (or `AbortSignal.any`) would cost a new signal, several microseconds, on every call.
 */
import { setMaxListeners } from "node:events";

const followers = new WeakMap<AbortSignal, AbortSignal>();

/** A signal that aborts (with the same reason) when `shared` does: the same one for every caller of `shared`. */
export function followSignal(shared: AbortSignal): AbortSignal {
  const known = followers.get(shared);
  if (known) return known;
  const own = new AbortController();
  // Each request listens while it runs and takes its listener off when it ends: many at once are expected here.
  setMaxListeners(0, own.signal);
  if (shared.aborted) own.abort(shared.reason);
  else shared.addEventListener("abort", () => own.abort(shared.reason), { once: true });
  followers.set(shared, own.signal);
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
