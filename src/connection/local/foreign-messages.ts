/**
 * Messages on a local server's stdout of a method MCP does not have. Some servers log in JSON-RPC's shape and then
 * exit, and that is where they say why: `@twilio-alpha/mcp` without credentials sends
 * `{"jsonrpc":"2.0","method":"log","params":{"message":"Error: Invalid AccountSid"},"id":"…"}`. The SDK answers such
 * a request with "Method not found" and drops such a notification, and before the handshake (./server-started.ts) the
 * first message only counts as a sign of life, so they are noted here, as they arrive.
 */
import type { Transport } from "@modelcontextprotocol/client";
import { wrapIncoming } from "../incoming-messages.ts";

/** The methods of every MCP revision, by their first segment (the SDK keeps its list to itself). */
const MCP_METHOD =
  /^(?:ping$|initialize$|(?:notifications|sampling|elicitation|roots|tasks|completion|logging|tools|resources|prompts|server|subscriptions)\/)/;

/** Makes `transport` tell `note` of each request or notification it hands up whose method MCP does not have. */
export function noteForeignMessages<T extends Transport>(
  transport: T,
  note: (method: string, params: unknown) => void,
): T {
  return wrapIncoming(transport, (next) => (message, extra) => {
    if ("method" in message && !MCP_METHOD.test(message.method)) note(message.method, message.params);
    next(message, extra);
  });
}
