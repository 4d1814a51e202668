/**
 * A server's tools as pi gets them, and a call the way pi makes it. Apart from ./helpers.ts because the tool registry
 * brings pi itself in (1.7 s of CPU to import on Node 20), which tests of the connection alone do not need.
 */
import type { AgentToolResult, ToolDefinition } from "@mariozechner/pi-coding-agent";
import type { McpBridge } from "../src/bridge/mcp-bridge.ts";
import type { ServerConnection } from "../src/connection/server-connection.ts";
import { ToolRegistry } from "../src/pi/tool-registry.ts";

/** A connection's tools as pi would receive them, registered through the real registry. */
export function toolsOf(connection: ServerConnection): Map<string, ToolDefinition> {
  const tools = new Map<string, ToolDefinition>();
  new ToolRegistry(
    (def) => tools.set(def.name, def as ToolDefinition),
    () => connection,
  ).registerServer(connection);
  return tools;
}

/** `bridge`'s tools, registered as pi's session registers them, kept current; `tools` has them by their pi names. */
export function registeredTools(bridge: McpBridge): { tools: Map<string, ToolDefinition>; registry: ToolRegistry } {
  const tools = new Map<string, ToolDefinition>();
  const registry = new ToolRegistry(
    (def) => tools.set(def.name, def as ToolDefinition),
    (name) => bridge.connection(name),
  );
  bridge.onTools((connection, list) => registry.syncServer(connection, list));
  return { tools, registry };
}

export interface ToolRun {
  result: AgentToolResult<unknown>;
  /** The text parts, joined. */
  text: string;
  /** The text of each progress update. */
  updates: string[];
}

/** Runs a tool the way pi does: its `execute` with a signal and an update callback. */
export async function runTool(
  tool: ToolDefinition | undefined,
  params: Record<string, unknown> = {},
  signal?: AbortSignal,
): Promise<ToolRun> {
  if (!tool) throw new Error("the tool is not registered");
  const updates: string[] = [];
  const result = await tool.execute(
    "call-id",
    params as never,
    signal,
    (u) => updates.push((u.content[0] as { text: string }).text),
    undefined as never,
  );
  const text = result.content
    .filter((c) => c.type === "text")
    .map((c) => (c as { text: string }).text)
    .join("\n");
  return { result, text, updates };
}
