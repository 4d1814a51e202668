/**
 * What every `/mcp` subcommand works with, and how it talks to the user.
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { McpBridge } from "../bridge/mcp-bridge.ts";
import type { ImportLocations } from "../config/import/types.ts";
import type { Environment } from "../config/substitute.ts";
import type { ToolRegistry } from "./tool-registry.ts";

export interface CommandDeps {
  pi: ExtensionAPI;
  bridge: McpBridge;
  registry: ToolRegistry;
  env: Environment;
  /** The last lines of a server's own log. */
  logTail(server: string, lines: number): string[];
  /** Where other clients keep their configs (for /mcp import). */
  importLocations(): ImportLocations;
}

/** Shows text to the user: a notice in the TUI, stderr-bound console output in print/JSON mode. */
export function show(ctx: ExtensionContext, text: string, level: "info" | "warning" | "error" = "info"): void {
  if (ctx.hasUI) ctx.ui.notify(text, level);
  else console.log(text);
}
