/**
 * Whether a request may have reached its server: it did once the SDK handed one of its messages to the transport
 * while the session was open. A request that never got that far (no open session, a transport already closed) is
 * safe to send on the next session; one that did may have run, which decides whether a lost connection may repeat it
 * (./request-recovery.ts). Told by a marker the request carries through its async calls, not by any error's words.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";

/** One request's record: set once any message of it was handed to an open transport. */
export interface Delivery {
  sent: boolean;
}

const deliveries = new AsyncLocalStorage<Delivery>();

/** Runs `send` with `delivery` as the record its messages mark. */
export function recordDelivery<T>(delivery: Delivery | undefined, send: () => Promise<T>): Promise<T> {
  return delivery ? deliveries.run(delivery, send) : send();
}

/**
 * Makes `transport` mark the request under way as sent when it is given a request while `open()` holds. The check
 * comes before the write: a write that fails half-way may still have reached the server.
 */
export function markDeliveries(transport: Transport, open: () => boolean): void {
  const send = transport.send.bind(transport);
  transport.send = (message: JSONRPCMessage, options) => {
    const delivery = deliveries.getStore();
    if (delivery && "method" in message && "id" in message && open()) delivery.sent = true;
    return send(message, options);
  };
}
