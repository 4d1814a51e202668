/**
 * A server's message nested thousands of levels deep (a tool schema built to hurt) overflows the stack of the SDK's
 * recursive result validation, and the whole answer is lost with it: one bad tool would take the server's whole list
 * down. So every message a transport hands up is cut first at a depth no honest message reaches; what was below
 * becomes `{}`. What the cut value sits in stays nested past the bridge's own schema limits
 * (../../translate/tool-list-limits.ts), so the tool it belongs to is still refused there, by name, with the usual
 * warning.
 */
import type { Transport } from "@modelcontextprotocol/client";
import { wrapIncoming } from "../incoming-messages.ts";

/** Far deeper than any real message, far shallower than what overflows a validator's stack. */
const MAX_MESSAGE_DEPTH = 256;

/** `value` with everything below `maxDepth` levels replaced by `{}`; the same object when nothing is that deep. */
export function cutDeepNesting<T>(value: T, maxDepth = MAX_MESSAGE_DEPTH): T {
  return cut(value, maxDepth) as T;
}

function cut(value: unknown, depthLeft: number): unknown {
  if (value === null || typeof value !== "object") return value;
  if (depthLeft <= 0) return {};
  // Every message passes here: plain loops, so a message with nothing to cut allocates nothing.
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const next = cut(item, depthLeft - 1);
      if (next !== item) (copy ??= [...value])[i] = next;
    }
    return copy ?? value;
  }
  let copy: Record<string, unknown> | undefined;
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const item = record[key];
    const next = cut(item, depthLeft - 1);
    if (next !== item) (copy ??= { ...record })[key] = next;
  }
  return copy ?? value;
}

/**
 * Makes `transport` cut every message it hands up (see {@link cutDeepNesting}) before whoever listens sees it. The
 * listener is installed later, by the SDK's `connect`, so the cut wraps whatever handler is set.
 */
export function guardNesting<T extends Transport>(transport: T): T {
  return wrapIncoming(transport, (next) => (message, extra) => next(cutDeepNesting(message), extra));
}
