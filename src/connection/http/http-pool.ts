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
import { applyMiddlewares, type FetchLike, type Middleware } from "@modelcontextprotocol/client";
import { Agent, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from "undici";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../../config/defaults.ts";
import { boundedResponse } from "./bounded-response.ts";
import type { MessageTooLargeError } from "../message-limit.ts";
import { currentScope } from "./request-scope.ts";
import { sendUntilRead } from "./unread-request.ts";

/**
 * At most this many TCP connections to one server; more concurrent requests wait for one to be free. A long SSE
 * response holds its connection, so this is also how many calls can stream at once.
 */
export const MAX_CONNECTIONS_PER_SERVER = 16;

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
    const scope = currentScope();
    // (Combining both with `AbortSignal.any` would leave an entry on the transport's long-lived signal per request.)
    const signal = scope?.pool === this && !isNotification(init) ? scope.signal : (init?.signal ?? undefined);
    const options = { ...(init as UndiciRequestInit), signal, dispatcher: this.agent };
    // A request written on a connection the server was closing as idle never reached it: sent again on another.
    const send = () => undiciFetch(url, options) as unknown as Promise<Response>;
    return sendUntilRead(send, init?.body, MAX_CONNECTIONS_PER_SERVER);
  };

  /** Every response body bounded; past the bound, the request whose scope fetched it fails, or the owner is told. */
  private readonly bounded: Middleware = (next) => async (url, init) => {
    const scope = currentScope();
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
