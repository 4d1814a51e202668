/**
 * Puts the line about each MCP server (./../tools/server-guide.ts) into the system prompt of every turn, through pi's
 * `before_agent_start` event: from the servers whose tools pi has now, in config order, so it follows servers that
 * connect late, reconnect with new instructions, or go away.
 */
import type { BeforeAgentStartEvent, BeforeAgentStartEventResult } from "@mariozechner/pi-coding-agent";
import type { McpBridge } from "../bridge/mcp-bridge.ts";
import { formatServerGuide, type ServerGuideEntry } from "../tools/server-guide.ts";
import type { ToolRegistry } from "./tool-registry.ts";

/** The guide as things stand: servers with tools registered, their description and instructions redacted. */
export function currentServerGuide(bridge: McpBridge, registry: ToolRegistry): string | undefined {
  const entries: ServerGuideEntry[] = [];
  for (const connection of bridge.connections.values()) {
    const toolNames = registry.toolsOf(connection.name).map((t) => t.name);
    const { description } = connection.config;
    entries.push({
      server: connection.name,
      toolNames,
      description: description && connection.redact(description),
      instructions: connection.instructions,
    });
  }
  return formatServerGuide(entries);
}

/** The `before_agent_start` handler: the guide after pi's own system prompt (and other extensions' changes to it). */
export function serverGuideHandler(bridge: McpBridge, registry: ToolRegistry): (event: BeforeAgentStartEvent) => BeforeAgentStartEventResult | undefined {
  return (event) => {
    const guide = currentServerGuide(bridge, registry);
    return guide ? { systemPrompt: `${event.systemPrompt}\n\n${guide}` } : undefined;
  };
}
