/**
 * Whether a request may have reached its server: it did once the SDK handed one of its messages to the transport
 * while the session was open. A request that never got that far (no open session, a transport already closed) is
 * safe to send on the next session; one that did may have run, which decides whether a lost connection may repeat it
 * (./request-recovery.ts). Told by a marker the request's options carry to the transport, not by any error's words.
 *
 * The marker is the request's `onresumptiontoken`: the one per-request option the SDK hands to `transport.send`
 * with the message, on every transport (Streamable HTTP also calls it with SSE event ids, which it ignores). An
 * `AsyncLocalStorage` would follow the request through its async calls too, but on Node 20 and 22 it turns on promise
 * hooks for the whole process: every promise pi makes would pay for every tool call the bridge makes.
 */
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";

/** One request's record: set once any message of it was handed to an open transport. */
export interface Delivery {
  sent: boolean;
}

/** What the transport tells a request's marker on taking its message; not an SSE event id (Streamable HTTP's tokens). */
const SENT = "\0mcp-bridge: sent";

/** What the transport is given with a request's message: the marker of the request it belongs to, if any. */
type SendOptions = { onresumptiontoken?: (token: string) => void };

/**
 * The marker of `delivery`, for the request's `onresumptiontoken` option. It is told, not read: a property on each
 * call's function gave every call a hidden class of its own in V8; a WeakMap entry costs the garbage collector more.
 */
export function deliveryMarker(delivery: Delivery): (token: string) => void {
  return (token) => void (token === SENT && (delivery.sent = true));
}

/**
 * Makes `transport` mark a request as sent when it is given one of its messages while `open()` holds. The check
 * comes before the write: a write that fails half-way may still have reached the server.
 */
export function markDeliveries(transport: Transport, open: () => boolean): void {
  const send = transport.send.bind(transport);
  transport.send = (message: JSONRPCMessage, options) => {
    const marker = (options as SendOptions | undefined)?.onresumptiontoken;
    if (marker && "method" in message && "id" in message && open()) marker(SENT);
    return send(message, options);
  };
}
