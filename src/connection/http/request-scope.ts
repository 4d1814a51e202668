/**
 * Request scopes (./http-pool.ts says what they are for): a request and what it fetched, ended together. Apart from the
 * pool, whose HTTP client loads only with a remote server, since code that runs for every server marks work as
 * outside any request.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { abortWith } from "../../common/follow-signal.ts";

/**
 * A request under way and the pool it runs on. Work started inside a scope stays inside it (the async context is
 * inherited, a reconnect started from an error handler included), so a scope applies only to its own pool's fetches:
 * a new session opened from there is not tied to a request that has ended.
 */
interface RequestScope {
  /** The pool the request runs on (`ServerPool`): only its own fetches are tied to the scope. */
  pool: object;
  signal: AbortSignal;
  /** Ends the request at once with `error` (a message over the limit), and with it everything it fetched. */
  fail(error: Error): void;
}

const scopes = new AsyncLocalStorage<RequestScope>();

/**
 * Why a request's exchanges are aborted once it is over: what `abort()` gives without a reason (an AbortError), made
 * once instead of once per request, stack and all. Only what is left of a settled request sees it.
 */
const REQUEST_OVER = new DOMException("This operation was aborted", "AbortError");

/**
 * Runs one request on `pool` (none: a local server, nothing to do); whatever it fetched through the pool is aborted
 * once it settles, a response stream the server left open included. A message over the limit ends the request at
 * once with `MessageTooLargeError`; `cut` fires then, for the request to be cancelled on the server too, and so it
 * does when `caller` (the caller's own signal) fires: the request needs that one signal only.
 */
export function inRequestScope<T>(
  pool: object | undefined,
  request: (cut?: AbortSignal) => Promise<T>,
  caller?: AbortSignal,
): Promise<T> {
  return pool ? inScope(pool, request, caller) : request();
}

/** Runs `start` outside any request's scope: a stream it opens (a standing subscription) outlives the request. */
export function outsideRequestScope<T>(start: () => T): T {
  return scopes.exit(start);
}

async function inScope<T>(pool: object, request: (cut: AbortSignal) => Promise<T>, caller?: AbortSignal): Promise<T> {
  const done = new AbortController();
  const cut = new AbortController();
  // The caller's signal is shared by all the calls of pi's turn.
  const unfollow = abortWith(cut, caller);
  let fail!: (error: Error) => void;
  const failed = new Promise<never>((_, reject) => {
    fail = (error) => {
      // Rejected before `cut` fires, so this error, not the cancellation's, is what the request ends with.
      reject(error);
      cut.abort(error);
      // At once, so the transport's report of the stream it lost is seen as the bridge's doing (`requestScopeEnded`).
      done.abort(REQUEST_OVER);
    };
  });
  try {
    // Without the race, a request whose SSE answer was cut would wait for its timeout.
    return await Promise.race([scopes.run({ pool, signal: done.signal, fail }, () => request(cut.signal)), failed]);
  } finally {
    done.abort(REQUEST_OVER);
    unfollow();
  }
}

/** True inside a request scope that has ended: an error raised here comes from the bridge ending the exchange. */
export function requestScopeEnded(): boolean {
  return scopes.getStore()?.signal.aborted === true;
}

/** The scope of the request under way here, if any. */
export function currentScope(): RequestScope | undefined {
  return scopes.getStore();
}
