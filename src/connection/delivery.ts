/**
 * Whether a request may have reached its server: it did once the SDK handed one of its messages to the transport
 * while the session was open. A request that never got that far (no open session, a transport already closed) is
 * safe to send on the next session; one that did may have run, which decides whether a lost connection may repeat it
 * (./request-recovery.ts). Told by a marker the request's options carry to the transport, not by any error's words.
 *
 * The marker is the request's `onresumptiontoken`: the one per-request option the SDK hands to `transport.send`
 * with the message, on every transport (a no-op here; Streamable HTTP calls it with SSE event ids). An
 * `AsyncLocalStorage` would follow the request through its async calls too, but on Node 20 and 22 it turns on promise
 * hooks for the whole process: every promise pi makes would pay for every tool call the bridge makes.
 */
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";

/** One request's record: set once any message of it was handed to an open transport. */
export interface Delivery {
  sent: boolean;
}

/** A request's `onresumptiontoken`: a no-op carrying its request's record (a WeakMap entry would cost each call more). */
type Marker = ((token: string) => void) & { delivery?: Delivery };

/** What the transport is given with a request's message: the marker of the request it belongs to, if any. */
type SendOptions = { onresumptiontoken?: Marker };

/** The marker of `delivery`, for the request's `onresumptiontoken` option. */
export function deliveryMarker(delivery: Delivery): (token: string) => void {
  const marker: Marker = () => {};
  marker.delivery = delivery;
  return marker;
}

/**
 * Makes `transport` mark a request as sent when it is given one of its messages while `open()` holds. The check
 * comes before the write: a write that fails half-way may still have reached the server.
 */
export function markDeliveries(transport: Transport, open: () => boolean): void {
  const send = transport.send.bind(transport);
  transport.send = (message: JSONRPCMessage, options) => {
    const delivery = (options as SendOptions | undefined)?.onresumptiontoken?.delivery;
    if (delivery && "method" in message && "id" in message && open()) delivery.sent = true;
    return send(message, options);
  };
}
