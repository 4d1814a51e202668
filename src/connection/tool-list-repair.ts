/**
 * Tool lists that break the MCP schema in one way with one meaning: a tool's `inputSchema` without `type` (mcp-obsidian
 * sends `{"$schema": …}` alone, a schema generator's empty output), or none (absent, or null). The SDK checks a list
 * whole and refuses it for one such tool, so every tool of the server was lost. Such a schema is read as the object
 * schema it can only be, with whatever properties it lists, and the tool is marked, so `/mcp` says so. A schema of
 * another `type` has no one meaning, and is left for the SDK to refuse. A list that pages on past the SDK's bound
 * ends there, rather than be refused whole.
 */
import type { Transport } from "@modelcontextprotocol/client";
import { isObject } from "../common/values.ts";
import { wrapIncoming } from "./incoming-messages.ts";

/** The key in the `_meta` of a tool whose input schema had no `type`. */
export const SCHEMA_WITHOUT_TYPE = "mcp-bridge/input-schema-without-type";

/** How many pages of a list the SDK reads (its `listMaxPages`) before it fails the list whole. */
const SDK_MAX_PAGES = 64;
/** Repairs the answers to the `tools/list` requests sent over `transport` before the SDK checks them. */
export function repairToolLists<T extends Transport>(transport: T): T {
  const asked = new Set<string | number>();
  let pages = 0; // of the list read since its first
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if ("method" in message && message.method === "tools/list" && "id" in message) {
      asked.add(message.id);
      if (!message.params?.cursor) pages = 0;
    }
    return send(message, options);
  };
  return wrapIncoming(transport, (next) => (message, extra) => {
    if (!("method" in message) && "result" in message && message.id !== undefined && asked.delete(message.id))
      repair(message.result, ++pages >= SDK_MAX_PAGES);
    next(message, extra);
  });
}

function repair(result: unknown, last: boolean): void {
  if (!isObject(result) || !Array.isArray(result.tools)) return;
  if (last) delete result.nextCursor;
  for (const tool of result.tools) {
    if (!isObject(tool)) continue;
    const schema = tool.inputSchema;
    if ((schema ?? undefined) !== undefined && !(isObject(schema) && schema.type === undefined)) continue;
    tool.inputSchema = { ...(isObject(schema) ? schema : {}), type: "object" };
    tool._meta = { ...(isObject(tool._meta) ? tool._meta : {}), [SCHEMA_WITHOUT_TYPE]: true };
  }
}
