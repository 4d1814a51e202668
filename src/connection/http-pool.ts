/**
 * A remote server's own HTTP connections: a pool with a bounded number of sockets, and requests whose HTTP exchange
 * ends with them.
 *
 * The SDK's Streamable HTTP transport sends every request with one signal that fires only when the whole transport
 * closes, so a call that timed out or was cancelled leaves its response stream (an SSE stream the server may never
 * end) open until shutdown. Here a call, a ping or a tool-list fetch runs in a request scope (`inRequestScope`): what
 * it fetches is tied to the scope, which is aborted when the request settles, whichever way. Notifications sent from
 * inside a scope (the cancellation a timeout sends) are not tied to it, so they still reach the server.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { Agent, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from "undici";

/**
 * At most this many TCP connections to one server; more concurrent requests wait for one to be free. A long SSE
 * response holds its connection, so this is also how many calls can stream at once.
 */
export const MAX_CONNECTIONS_PER_SERVER = 16;

const scopes = new AsyncLocalStorage<AbortSignal>();

/** Runs one request; whatever it fetched is aborted once it settles (a response stream the server left open included). */
export async function inRequestScope<T>(request: () => Promise<T>): Promise<T> {
  const done = new AbortController();
  try {
    return await scopes.run(done.signal, request);
  } finally {
    done.abort();
  }
}

/** True inside a request scope that has ended: an error raised here comes from the bridge ending the exchange. */
export function requestScopeEnded(): boolean {
  return scopes.getStore()?.aborted === true;
}

/** A JSON-RPC notification the SDK sends (its body is the serialized message). */
function isNotification(init: RequestInit | undefined): boolean {
  return typeof init?.body === "string" && init.body.includes('"method":"notifications/');
}

/** One server's connection pool, and `fetch` through it in the shape the SDK transports take. */
export class ServerPool {
  private readonly agent = new Agent({ connections: MAX_CONNECTIONS_PER_SERVER });

  readonly fetch: FetchLike = (url, init) => {
    const scope = scopes.getStore();
    // The scope's signal replaces the transport's, which fires only when the transport closes: by then the request has
    // settled and its scope has ended anyway, and `destroy()` ends every socket. (Combining the two with
    // `AbortSignal.any` would leave an entry on the transport's long-lived signal for every request.)
    const signal = scope && !isNotification(init) ? scope : (init?.signal ?? undefined);
    return undiciFetch(url, { ...(init as UndiciRequestInit), signal, dispatcher: this.agent }) as unknown as Promise<Response>;
  };

  /** Closes every socket at once. */
  async destroy(): Promise<void> {
    await this.agent.destroy().catch(() => undefined);
  }
}
