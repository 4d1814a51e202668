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
import { type FetchLike, type Middleware, SdkError, SdkErrorCode, type Transport } from "@modelcontextprotocol/client";
import { type Dispatcher, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from "undici";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../../config/defaults.ts";
import { bodyBound, boundedResponse, unencoded } from "./bounded-response.ts";
import type { MessageTooLargeError } from "../message-limit.ts";
import { dispatcherFor } from "../../common/env-proxy.ts";
import { noteRefusals } from "./refusal-words.ts";
import { noteRetryAfter } from "../retry-schedule.ts";
import { currentScope, outsideRequestScope } from "./request-scope.ts";
import { exchangeStarting, sendUntilRead } from "./unread-request.ts";

/**
 * At most this many TCP connections to one server (a burst of calls does not open a socket each, as the SDK's own
 * client does); more concurrent requests wait for one to be free. A long SSE response holds its connection, so this is
 * also how many calls can stream at once (16 left a thousand calls waiting on each other's round trips).
 */
export const MAX_CONNECTIONS_PER_SERVER = 64;

/** A JSON-RPC notification the SDK sends: the serialized message begins with its method (a call's arguments may hold one). */
const NOTIFICATION = /^\{(?:"jsonrpc":"2\.0",)?"method":"notifications\//;
const isNotification = (init: RequestInit | undefined) =>
  typeof init?.body === "string" && NOTIFICATION.test(init.body);

export interface ServerPoolOptions {
  /** The longest message a response may carry; the default without it. */
  maxMessageBytes?: number;
  /** A message over the limit came on an exchange outside any request of this pool (its stream is closed already). */
  tooLarge?: (error: MessageTooLargeError) => void;
  /** More middleware on every request (OAuth's), outside the pool's own. */
  middleware?: Middleware;
  /** What the server said when it last refused a request's credentials (./refusal-words.ts), if it said anything. */
  refused?: (words: string | undefined) => void;
  /** The server's URL: a `Retry-After` on any request of its (an SSE message endpoint's too) holds its reconnects. */
  url?: string;
}

/** One server's connection pool, and `fetch` through it in the shape the SDK transports take. */
export class ServerPool {
  /** Through pi's proxy where its environment names one (../../common/env-proxy.ts). */
  private readonly agent = dispatcherFor({ connections: MAX_CONNECTIONS_PER_SERVER });
  private readonly limit: number;
  /** The pool with every response body bounded as it arrives. */
  private readonly dispatcher: Dispatcher;

  /** The fetch the SDK transports take: the one place its path is composed. */
  readonly fetch: FetchLike;

  constructor(private readonly options: ServerPoolOptions = {}) {
    this.limit = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.dispatcher = this.agent.compose(bodyBound(this.limit, () => this.tooLargeHere(), exchangeStarting));
    // The SDK transports add DPoP (`withDpopFromProvider`) outside these, as their provider has `dpop()`.
    const inner = options.refused ? noteRefusals(options.refused)(this.send) : this.send;
    this.fetch = options.middleware ? options.middleware(inner) : inner;
  }

  /** Notifications sent from inside a request (the cancellation a timeout sends) are not tied to it: they must arrive. */
  private readonly send: FetchLike = (url, init) =>
    isNotification(init) ? outsideRequestScope(() => this.exchange(url, init)) : this.exchange(url, init);

  /** The request under way here, if it runs on this pool: what it fetches ends with it. */
  private scopeHere() {
    const scope = currentScope();
    return scope?.pool === this ? scope : undefined;
  }

  /** Who hears of a message over the limit on an exchange started here: the request it belongs to, or the owner. */
  private tooLargeHere(): (error: MessageTooLargeError) => void {
    const scope = this.scopeHere();
    return scope ? scope.fail : (error) => this.options.tooLarge?.(error);
  }

  /** undici through this pool: the request scope's signal instead of the transport's, which fires only at its close. */
  private async exchange(url: string | URL, init: RequestInit | undefined): Promise<Response> {
    // (Combining both with `AbortSignal.any` would leave an entry on the transport's long-lived signal per request.)
    const signal = this.scopeHere()?.signal ?? init?.signal ?? undefined;
    const options = { ...(init as UndiciRequestInit), signal, dispatcher: this.dispatcher };
    // A request written on a connection the server was closing as idle never reached it: sent again on another.
    const send = () => undiciFetch(url, options) as unknown as Promise<Response>;
    const response = await sendUntilRead(send, init?.body, MAX_CONNECTIONS_PER_SERVER);
    if (response.status === 429 || response.status === 503)
      noteRetryAfter(this.options.url ?? String(url), response.headers.get("retry-after"));
    if (unencoded(response.headers.get("content-encoding"))) return response;
    return boundedResponse(response, this.limit, this.tooLargeHere());
  }

  /** Closes every socket at once. */
  async destroy(): Promise<void> {
    await this.agent.destroy().catch(() => undefined);
  }
}

/**
 * Makes a request sent over `transport` fail as soon as its SSE answer ends without the result (the server or a proxy
 * closed the stream, or it broke, with no event id to resume from), as a connection lost under it: in a request scope,
 * the request; outside any (the handshake), the open, through `unscoped` while `session().open` is false. The SDK's
 * transport tells only whoever passed `onRequestStreamEnd`, and its client passes none: such a request waited for its
 * whole timeout, which then said to raise it. `session().client` is the SDK client the transport is for.
 */
export function failOnStreamEnd<T extends Transport>(
  transport: T,
  session: () => { client: object; open: boolean },
  unscoped: (error: Error) => void,
): T {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    // (A request that listens for its stream's end itself, `subscriptions/listen`, keeps its own.)
    if (!("id" in message) || !("method" in message) || options?.onRequestStreamEnd) return send(message, options);
    const { id } = message;
    const fail = currentScope()?.fail ?? ((error: Error) => session().open || unscoped(error));
    // Called at the end of every stream, answered or not: an answered request is gone from the SDK's table.
    const onRequestStreamEnd = () => {
      if (awaitingAnswers(session().client).has(Number(id))) fail(new SdkError(SdkErrorCode.ConnectionClosed, ENDED));
    };
    return send(message, { ...options, onRequestStreamEnd });
  };
  return transport;
}

const ENDED = "the server ended its response stream before answering";

/** The SDK client's table of the requests that await their answer, by id. */
export const awaitingAnswers = (client: object): Map<unknown, unknown> =>
  (client as { _responseHandlers?: Map<unknown, unknown> })._responseHandlers ?? new Map();
