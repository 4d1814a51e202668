/**
 * What every `/mcp` subcommand works with, and how it talks to the user.
 */
import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { McpBridge } from "../bridge/mcp-bridge.ts";
import type { ImportLocations } from "../config/import/import-types.ts";
import type { Environment } from "../config/substitute.ts";
import type { McpProvenance } from "../translate/provenance.ts";
import { shown, SHOWN } from "../common/terminal-text.ts";
import { CONFIG_FLAG, NO_MCP_FLAG } from "../config/argv.ts";
import { printCommandOutput } from "./print-output.ts";
import { trustNotRecorded } from "../trust/trust-rules.ts";
import type { PromptFetch } from "./offer-listing.ts";
import type { ToolExposure } from "../exposure/tool-exposure.ts";
import type { ToolRegistry } from "./tool-registry.ts";
import type { ServersOff } from "./servers-off.ts";

/** /mcp in pi's command list (here, apart from the command's code, which loads on first use). */
export const MCP_COMMAND_DESCRIPTION =
  "MCP servers: status, tools, add/remove/test/reconnect/enable/disable/import, on/off for this session, sign in and out, trust";

/** A local server's own log of its stderr, or the bridge's log, `mcp.log`. */
type LogKind = "stderr" | "bridge";

export interface CommandDeps {
  pi: ExtensionAPI;
  bridge: McpBridge;
  registry: ToolRegistry;
  /** The servers switched off for this session (/mcp off, /mcp on). */
  serversOff: ServersOff;
  /** Each tool's exposure, for /mcp and /mcp tools. */
  exposure?: ToolExposure;
  /** The characters of the system prompt's catalog of deferred tools that are each server's. */
  catalogShares?: () => ReadonlyMap<string, number>;
  /** The prompt commands whose servers offer their prompts now (for /mcp tools). */
  promptCommands?: () => Array<{ name: string; server: string; provenance: McpProvenance }>;
  /** The servers the resource tools reach now (for /mcp tools); none while the tools are not there. */
  resourceServers?: () => string[];
  /** A server's prompts with the commands that run them, fetched afresh (for /mcp prompts). */
  fetchPrompts: PromptFetch;
  env: Environment;
  /** The last lines of a server's own log (its stderr), or of what the bridge's log says of it. */
  logTail(server: string, lines: number, log?: LogKind): string[];
  /** Where that log is. */
  logFile(server: string, log: LogKind): string;
  /** Where other clients keep their configs (for /mcp import). */
  importLocations(): ImportLocations;
  /** pi 1.x: takes in again the servers pi has registered (one left out for a config server's name may fit now). */
  syncRegistered?: () => void;
}

/**
 * Shows text to the user: a notice in the TUI. Without a UI, what a command reports (an info from a command's context)
 * is its output, written where `pi -p "/mcp list" > out.txt` captures it (see ./print-output.ts); warnings, errors and
 * notices from events go to stderr with pi's own diagnostics.
 */
export function show(ctx: ExtensionContext, text: string, level: "info" | "warning" | "error" = "info"): void {
  // What a command reports (a listing of every server and tool) may be long; a notice of what happened may not.
  const safe = shown(text, level === "info" ? SHOWN.view : SHOWN.notice);
  if (ctx.hasUI) ctx.ui.notify(safe, level);
  else if (level === "info" && isCommandContext(ctx)) printCommandOutput(safe);
  else console.log(safe);
}

/**
 * Says what went wrong; a script (no UI) sees it in pi's exit status too: pi keeps an exit code an extension set unless
 * its own run failed (`pi -p "/mcp test x"`).
 */
export function failed(ctx: ExtensionContext, text: string, level: "warning" | "error" = "error"): void {
  show(ctx, text, level);
  if (!ctx.hasUI) process.exitCode = 1;
}

/** Says when a change was saved but its record of trust was not. */
export function reportTrust(ctx: ExtensionContext, written: { trustError?: unknown }, servers: readonly string[]) {
  if (written.trustError !== undefined) show(ctx, trustNotRecorded(servers, written.trustError), "warning");
}

/** pi hands commands a context with session controls (`waitForIdle` among them); events get a plain one. */
function isCommandContext(ctx: ExtensionContext): ctx is ExtensionCommandContext {
  return typeof (ctx as Partial<ExtensionCommandContext>).waitForIdle === "function";
}

/** Why `name` is not free for a file's entry: a server added for this session has it (its entry would replace it). */
export function sessionHolds(deps: CommandDeps, name: string): string | undefined {
  const source = deps.bridge.connection(name)?.config.source;
  if (source?.scope === "session")
    return `Not added: '${name}' is taken by a server added for this session (${source.path}); pick another name.`;
}

/** A name for a new server, `suggested` by default; undefined if the user gives up (or keeps one that exists). */
export async function askServerName(
  deps: CommandDeps,
  ctx: ExtensionCommandContext,
  suggested: string,
): Promise<string | undefined> {
  const typed = await ctx.ui.input(`A name for it (Enter for '${suggested}')`, suggested);
  if (typed === undefined) return undefined;
  const name = typed.trim() || suggested;
  if (!deps.bridge.connection(name)) return name;
  if (sessionHolds(deps, name)) return void ctx.ui.notify(sessionHolds(deps, name)!, "error");
  return (await ctx.ui.confirm("Replace?", `A server named '${name}' exists. Replace its entry?`)) ? name : undefined;
}

/** The bridge's flags on pi's command line (which it also reads itself: ../config/argv.ts). */
export function registerFlags(pi: ExtensionAPI): void {
  pi.registerFlag(CONFIG_FLAG, {
    type: "string",
    description: "Also load MCP servers from this JSON file (highest priority)",
  });
  pi.registerFlag(NO_MCP_FLAG, { type: "boolean", description: "Start no MCP server and offer no MCP tool this run" });
}

/** `pi --no-mcp`: no server starts and no tool is registered; `/mcp` says why. */
export function registerMcpOff(pi: ExtensionAPI): void {
  pi.registerCommand("mcp", {
    description: MCP_COMMAND_DESCRIPTION,
    handler: async (_args, ctx) =>
      show(ctx, "MCP is off for this run (--no-mcp): no server was started. Start pi without --no-mcp to use them."),
  });
}
