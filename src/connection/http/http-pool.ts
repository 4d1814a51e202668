/**
 * A remote server's own HTTP connections: a pool with a bounded number of sockets, and requests whose HTTP exchange
 * ends with them.
 *
 * The SDK's Streamable HTTP transport sends every request with one signal that fires only when the whole transport
 * closes, so a call that timed out or was cancelled leaves its response stream (an SSE stream the server may never
 * end) open until shutdown. Here a call, a ping or a tool-list fetch runs in a request scope (`inRequestScope`): what
 * it fetches is tied to the scope, which is aborted when the request settles, whichever way. Notifications sent from
 * inside a scope (the cancellation a timeout sends) are not tied to it, so they still reach the server.
 *
 * Every response body is bounded by `maxMessageBytes` here (./bounded-response.ts). A message over it fails the request
 * whose scope fetched it, with `MessageTooLargeError`, and nothing else; one on an exchange outside any request (the
 * handshake, a standing stream) is the pool owner's to handle.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { applyMiddlewares, type FetchLike, type Middleware } from "@modelcontextprotocol/client";
import { Agent, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from "undici";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../../config/defaults.ts";
import { boundedResponse } from "./bounded-response.ts";
import type { MessageTooLargeError } from "../message-limit.ts";

/**
 * At most this many TCP connections to one server; more concurrent requests wait for one to be free. A long SSE
 * response holds its connection, so this is also how many calls can stream at once.
 */
export const MAX_CONNECTIONS_PER_SERVER = 16;

/**
 * A request under way and the pool it runs on. Work started inside a scope stays inside it (the async context is
 * inherited, a reconnect started from an error handler included), so a scope applies only to its own pool's fetches:
 * a new session opened from there is not tied to a request that has ended.
 */
interface RequestScope {
  pool: ServerPool;
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
 * once with `MessageTooLargeError`; `cut` fires then, for the request to be cancelled on the server too.
 */
export function inRequestScope<T>(
  pool: ServerPool | undefined,
  request: (cut?: AbortSignal) => Promise<T>,
): Promise<T> {
  return pool ? inScope(pool, request) : request();
}

/** Runs `start` outside any request's scope: a stream it opens (a standing subscription) outlives the request. */
export function outsideRequestScope<T>(start: () => T): T {
  return scopes.exit(start);
}

async function inScope<T>(pool: ServerPool, request: (cut: AbortSignal) => Promise<T>): Promise<T> {
  const done = new AbortController();
  const cut = new AbortController();
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
  }
}

/** True inside a request scope that has ended: an error raised here comes from the bridge ending the exchange. */
export function requestScopeEnded(): boolean {
  return scopes.getStore()?.signal.aborted === true;
}

/** A JSON-RPC notification the SDK sends (its body is the serialized message). */
function isNotification(init: RequestInit | undefined): boolean {
  return typeof init?.body === "string" && init.body.includes('"method":"notifications/');
}

export interface ServerPoolOptions {
  /** The longest message a response may carry; the default without it. */
  maxMessageBytes?: number;
  /** A message over the limit came on an exchange outside any request of this pool (its stream is closed already). */
  tooLarge?: (error: MessageTooLargeError) => void;
  /** More middleware on every request (OAuth's), outside the pool's own. */
  middleware?: Middleware;
}

/** One server's connection pool, and `fetch` through it in the shape the SDK transports take. */
export class ServerPool {
  private readonly agent = new Agent({ connections: MAX_CONNECTIONS_PER_SERVER });

  /** The fetch the SDK transports take: the one place its path is composed (innermost first). */
  readonly fetch: FetchLike;

  constructor(private readonly options: ServerPoolOptions = {}) {
    // The SDK transports add DPoP (`withDpopFromProvider`) outside these, as their provider has `dpop()`.
    this.fetch = applyMiddlewares(this.bounded, ...(options.middleware ? [options.middleware] : []))(this.send);
  }

  /** undici through this pool: the request scope's signal instead of the transport's, which fires only at its close. */
  private readonly send: FetchLike = (url, init) => {
    const scope = scopes.getStore();
    // (Combining both with `AbortSignal.any` would leave an entry on the transport's long-lived signal per request.)
    const signal = scope?.pool === this && !isNotification(init) ? scope.signal : (init?.signal ?? undefined);
    const sent = undiciFetch(url, { ...(init as UndiciRequestInit), signal, dispatcher: this.agent });
    return sent as unknown as Promise<Response>;
  };

  /** Every response body bounded; past the bound, the request whose scope fetched it fails, or the owner is told. */
  private readonly bounded: Middleware = (next) => async (url, init) => {
    const scope = scopes.getStore();
    const tied = scope?.pool === this && !isNotification(init) ? scope : undefined;
    const limit = this.options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    const tooLarge = (error: MessageTooLargeError) => (tied ? tied.fail(error) : this.options.tooLarge?.(error));
    return boundedResponse(await next(url, init), limit, tooLarge);
  };

  /** Closes every socket at once. */
  async destroy(): Promise<void> {
    await this.agent.destroy().catch(() => undefined);
  }
}
