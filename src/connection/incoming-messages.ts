/**
 * Listening in on the messages a transport hands up. The SDK installs its listener (`onmessage`) when it connects,
 * after the bridge made the transport (and ./local/server-started.ts installs one before it), so a wrapper has to wrap
 * whichever handler is set later, not the one set now.
 */
import type { Transport } from "@modelcontextprotocol/client";

export type IncomingHandler = NonNullable<Transport["onmessage"]>;

/**
 * Makes each handler set as `transport.onmessage` from now on run through `wrap`. Wrappers compose: the one installed
 * first wraps what the later ones made of the handler, so it sees each message first.
 */
export function wrapIncoming<T extends Transport>(transport: T, wrap: (next: IncomingHandler) => IncomingHandler): T {
  const previous = Object.getOwnPropertyDescriptor(transport, "onmessage");
  let handler: Transport["onmessage"];
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    enumerable: true,
    get: () => (previous?.get ? (previous.get.call(transport) as Transport["onmessage"]) : handler),
    set: (next: Transport["onmessage"]) => {
      const wrapped = next && wrap(next);
      if (previous?.set) previous.set.call(transport, wrapped);
      else handler = wrapped;
    },
  });
  return transport;
}
