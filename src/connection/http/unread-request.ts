/**
 * A request the server never read: the keep-alive race every HTTP client meets. A server closes a connection idle for
 * its own timeout (Node's 5 s, nginx's 75 s); a request written on it just then is never read, and the server's kernel
 * resets the connection for the unread bytes. undici lets an idle connection go before the server's announced timeout,
 * but a busy event loop (pi at work, a thousand calls being set up) can hold that check back past it.
 *
 * Told apart from a server that read the request and failed by all of: the connection had carried an earlier request
 * (it was the server's to close as idle), no byte of the answer came back, and it was reset (ECONNRESET) or could not
 * be written to (EPIPE). A kernel resets only a connection closed with bytes unread, and with one request on a
 * connection at a time (undici's way with HTTP/1.1) they were this request's. A plain end (FIN) is left alone: a
 * server that read the request and then died ends a connection so too. undici's `sendHeaders` channel says which
 * connection carried a request and what had been read on it before.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { subscribe } from "node:diagnostics_channel";
import type { Socket } from "node:net";
import { causeChain, codeOf } from "../../common/errors.ts";

/** One HTTP exchange as undici sent it. */
interface Exchange {
  socket?: Socket;
  /** The connection had carried an earlier request. */
  reused: boolean;
  /** Bytes read on the connection before this request was written. */
  readBefore: number;
}

const exchanges = new AsyncLocalStorage<Exchange>();
const carried = new WeakSet<Socket>();
/** The exchange whose request undici starts writing now (see `exchangeStarting`); its headers are published next. */
let starting: Exchange | undefined;

/** The codes of a connection the server dropped without reading what was written on it. */
const UNREAD_CODES = new Set(["ECONNRESET", "EPIPE"]);

/**
 * Asked as a request is dispatched (in its fetch's async context): what its handler calls as undici starts writing it
 * on a connection, just before undici publishes its headers with the socket. A request that waited for a free
 * connection is written in the async context of the one that freed it, which cannot tell the two apart.
 */
export function exchangeStarting(): () => void {
  const exchange = exchanges.getStore();
  return () => void (starting = exchange);
}

subscribe("undici:client:sendHeaders", (message) => {
  const exchange = starting;
  starting = undefined;
  const { socket } = message as { socket: Socket };
  if (exchange) Object.assign(exchange, { socket, reused: carried.has(socket), readBefore: socket.bytesRead });
  carried.add(socket);
});

/** Whether `error`, which ended `exchange` before its answer, means the server never read the request. */
function neverRead(exchange: Exchange, error: unknown): boolean {
  const { socket, reused, readBefore } = exchange;
  if (!socket || !reused || socket.bytesRead !== readBefore) return false;
  return causeChain(error).some((link) => UNREAD_CODES.has(codeOf(link) ?? ""));
}

/**
 * Runs `send` (one fetch) and sends it again as long as the server never read it (at most `times` more): it is then
 * the same as sending it for the first time, whatever the request does. Each time costs one stale pooled connection,
 * so a pool of `times` connections is used up by then. A body that is not a string cannot be read twice.
 */
export async function sendUntilRead(send: () => Promise<Response>, body: unknown, times: number): Promise<Response> {
  for (let left = times; ; left--) {
    const exchange: Exchange = { reused: false, readBefore: 0 };
    try {
      return await exchanges.run(exchange, send);
    } catch (error) {
      const again = left > 0 && (body === undefined || body === null || typeof body === "string");
      if (!again || !neverRead(exchange, error)) throw error;
    }
  }
}
