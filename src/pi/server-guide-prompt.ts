/**
 * Puts the line about each MCP server (../translate/server-guide-text.ts) into the system prompt of every turn,
 * through pi's `before_agent_start` event: from the servers whose tools the model is told about now, in config order,
 * so it follows servers that connect late, reconnect with new instructions, or go away. Servers whose tools wait
 * behind `tool_search` get the catalog of their tool names (../exposure/tool-catalog.ts) or a line naming them.
 */
import type { BeforeAgentStartEvent, BeforeAgentStartEventResult } from "@mariozechner/pi-coding-agent";
import type { McpBridge } from "../bridge/mcp-bridge.ts";
import { formatServerGuide, type ServerGuideEntry } from "../translate/server-guide-text.ts";
import type { RegisteredTool, ToolRegistry } from "./tool-registry.ts";

export interface GuideScope {
  /** Whether the model is told about the tool in its requests now. */
  isDeclared(tool: RegisteredTool): boolean;
  /** The line about servers whose tools are found with `tool_search`, if any are. */
  deferredLine(): string | undefined;
}

/**
 * The `before_agent_start` handler: the guide as things stand (servers with declared tools, their description and
 * instructions redacted) after pi's own system prompt (and other extensions' changes to it).
 */
export function serverGuideHandler(
  bridge: McpBridge,
  registry: ToolRegistry,
  scope: GuideScope,
): (event: BeforeAgentStartEvent) => BeforeAgentStartEventResult | undefined {
  return (event) => {
    const entries = [...bridge.connections.values()].map((connection): ServerGuideEntry => {
      const declared = registry.toolsOf(connection.name).filter((t) => scope.isDeclared(t));
      const { description } = connection.config;
      return {
        server: connection.name,
        toolNames: declared.map((t) => t.name),
        description: description && connection.redact(description),
        instructions: connection.instructions,
      };
    });
    const guide = [formatServerGuide(entries), scope.deferredLine()].filter((part) => part !== undefined).join("\n\n");
    return guide ? { systemPrompt: `${event.systemPrompt}\n\n${guide}` } : undefined;
  };
}
