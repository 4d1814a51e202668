/**
 * The `/mcp` command: each server's state and its tools. (The full command set is built on this later.)
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { McpBridge } from "./bridge.ts";
import { formatServerList, type ServerRow } from "./status-format.ts";
import { configVarRefs, type Environment } from "./substitute.ts";
import type { ToolRegistry } from "./tool-registry.ts";

export function serverRows(bridge: McpBridge, registry: ToolRegistry, env: Environment): ServerRow[] {
  return [...bridge.connections.values()].map((c) => {
    const tools = registry.toolsOf(c.name);
    const transport = c.transport ? (c.fellBackToSse ? "sse (fallback)" : c.transport) : c.config.transport;
    return {
      name: c.name,
      status: c.status,
      transport,
      source: c.config.source.scope,
      enabled: c.config.enabled,
      toolCount: c.status === "connected" ? tools.length : 0,
      error: c.lastError,
      warnings: c.warnings,
      tools: tools.map((t) => ({ name: t.name, originalName: t.originalName })),
      vars: configVarRefs(c.config).map((name) => ({ name, set: env[name] !== undefined && env[name] !== "" })),
    };
  });
}

/** Shows text to the user: a notice in the TUI, stderr-bound console output in print/JSON mode. */
export function show(ctx: ExtensionContext, text: string, level: "info" | "warning" | "error" = "info"): void {
  if (ctx.hasUI) ctx.ui.notify(text, level);
  else console.log(text);
}

const SUBCOMMANDS = [{ value: "list", label: "list", description: "Show every server's state and tools" }];

export function registerMcpCommand(pi: ExtensionAPI, bridge: McpBridge, registry: ToolRegistry, env: Environment): void {
  pi.registerCommand("mcp", {
    description: "Show MCP servers, their state and their tools",
    getArgumentCompletions: (prefix) => {
      const items = SUBCOMMANDS.filter((s) => s.value.startsWith(prefix.trim()));
      return items.length ? items : null;
    },
    handler: async (args, ctx) => {
      const sub = args.trim().split(/\s+/)[0] ?? "";
      if (sub !== "" && sub !== "list") {
        show(ctx, `Unknown /mcp subcommand '${sub}'. Available: ${SUBCOMMANDS.map((s) => s.value).join(", ")}`, "warning");
        return;
      }
      show(ctx, formatServerList(serverRows(bridge, registry, env), bridge.problems));
    },
  });
}
