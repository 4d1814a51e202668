/**
 * The bounds on one server's tool list, so a hostile or broken server cannot flood pi with tools or hand it schemas
 * that exhaust memory or the stack: at most `maxTools` tools, none whose input schema is over `maxSchemaBytes` as
 * JSON or nested deeper than {@link MAX_SCHEMA_DEPTH}. Pure.
 */
import type { Tool } from "@modelcontextprotocol/client";
import type { ServerLimits } from "../config/types.ts";
import { shown, SHOWN } from "../common/terminal-text.ts";
import { formatBytes, plural } from "../common/text.ts";

/**
 * How deeply a tool's input schema may nest objects and arrays. Real schemas stay within a few dozen levels; a few
 * hundred already overflow the stack of schema compilation, and a few thousand that of `JSON.stringify`. Text in a
 * schema is made safe to show down to this depth (./server-text.ts), so nothing deeper may be registered.
 */
export const MAX_SCHEMA_DEPTH = 64;

/** How many skipped tools a warning names. */
const NAMES_LISTED = 5;

/** Whether `value` nests objects or arrays deeper than `max` levels. Iterative, so any depth is safe to measure. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<{ node: unknown; depth: number }> = [{ node: value, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (node === null || typeof node !== "object") continue;
    if (depth >= max) return true;
    for (const child of Object.values(node))
      if (child !== null && typeof child === "object") stack.push({ node: child, depth: depth + 1 });
  }
  return false;
}

/** Why a tool's input schema is refused (`reason` is shared by every tool refused for it), or undefined when it is within the limits. */
function schemaProblem(tool: Tool, maxSchemaBytes: number): { reason: string; detail?: string } | undefined {
  if (nestedDeeperThan(tool.inputSchema, MAX_SCHEMA_DEPTH))
    return { reason: `nested deeper than ${MAX_SCHEMA_DEPTH} levels` };
  const bytes = Buffer.byteLength(JSON.stringify(tool.inputSchema ?? {}));
  if (bytes > maxSchemaBytes)
    return { reason: `over the ${formatBytes(maxSchemaBytes)} limit (\`maxSchemaBytes\`)`, detail: formatBytes(bytes) };
  return undefined;
}

/** Names for a message, quoted, the first few of them. */
export function listedNames(tools: Array<{ name: string; detail?: string }>): string {
  // A name is the server's text: shown without control sequences, and not at any length.
  const listed = tools.slice(0, NAMES_LISTED).map((t) => {
    const name = shown(t.name, SHOWN.name, "line");
    return t.detail ? `'${name}' (${t.detail})` : `'${name}'`;
  });
  return tools.length > NAMES_LISTED
    ? `${listed.join(", ")} and ${tools.length - NAMES_LISTED} more`
    : listed.join(", ");
}

/**
 * The tools of a list that may be registered: those with a usable schema, at most `maxTools` of them in the server's
 * order. `warning` (one sentence, for the server's row) says what was left out and which setting allows more.
 */
export function limitTools(
  tools: readonly Tool[],
  limits: Pick<ServerLimits, "maxTools" | "maxSchemaBytes">,
): { tools: Tool[]; warning?: string } {
  const usable: Tool[] = [];
  const refused: Array<{ name: string; reason: string; detail?: string }> = [];
  for (const tool of tools) {
    const problem = schemaProblem(tool, limits.maxSchemaBytes);
    if (problem) refused.push({ name: tool.name, ...problem });
    else usable.push(tool);
  }
  const parts: string[] = [];
  if (usable.length > limits.maxTools)
    parts.push(
      `it lists ${plural(usable.length, "usable tool")}; only the first ${limits.maxTools} are registered (\`maxTools\`)`,
    );
  for (const reason of new Set(refused.map((r) => r.reason))) {
    const which = refused.filter((r) => r.reason === reason);
    parts.push(`${plural(which.length, "tool")} left out because the input schema is ${reason}: ${listedNames(which)}`);
  }
  return { tools: usable.slice(0, limits.maxTools), warning: parts.length ? parts.join("; ") : undefined };
}
