/**
 * The `/mcp` command: each server's state and its tools. (The full command set is built on this later.)
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { McpBridge } from "./bridge.ts";
import type { ServerState } from "./health.ts";
import { retryDetail } from "./health.ts";
import { formatServerList, type ServerRow } from "./status-format.ts";
import { configVarRefs, type Environment } from "./substitute.ts";
import { interactiveSignIn } from "./sign-in.ts";
import type { ToolRegistry } from "./tool-registry.ts";

/** What `/mcp` says a server is doing about being down, or how far a connect has got. */
function detailOf(state: ServerState, now: number): string | undefined {
  if (state.status === "connecting") return state.retryAttempt > 0 ? `connecting (attempt ${state.retryAttempt}/${state.maxAttempts})` : "connecting";
  if (state.lastError?.includes("needs you to sign in")) return "needs sign-in";
  if (state.gaveUp) return state.retryAttempt > 0 ? `gave up after ${state.retryAttempt} attempts` : "not retried";
  return retryDetail(state, now);
}

export function serverRows(bridge: McpBridge, registry: ToolRegistry, env: Environment, now = Date.now()): ServerRow[] {
  return [...bridge.connections.values()].map((c) => {
    const tools = registry.toolsOf(c.name);
    const transport = c.transport ? (c.fellBackToSse ? "sse (fallback)" : c.transport) : c.config.transport;
    const state = c.state;
    return {
      name: c.name,
      status: c.status,
      transport,
      source: c.config.source.scope,
      enabled: c.config.enabled,
      // A lazy server's tools are registered (from the cache) before it runs.
      toolCount: c.status === "connected" || c.status === "not started" ? tools.length : 0,
      lastActive: state.lastSuccessfulCommunication,
      detail: detailOf(state, now),
      metrics: c.metrics(now),
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

const SUBCOMMANDS = [
  { value: "list", label: "list", description: "Show every server's state and tools" },
  { value: "auth", label: "auth", description: "Sign in to a server that uses OAuth (or sign in again)" },
  { value: "logout", label: "logout", description: "Forget a server's OAuth tokens and client registration" },
];

/** The sign-in handler for a command: the browser where there is one, else a pasted redirect URL. */
function commandSignIn(ctx: ExtensionContext) {
  return interactiveSignIn({
    notify: (text) => show(ctx, text),
    input: ctx.hasUI ? (prompt) => ctx.ui.input(prompt) : undefined,
  });
}

async function signIn(bridge: McpBridge, name: string | undefined, ctx: ExtensionContext): Promise<void> {
  const connection = name ? bridge.connection(name) : undefined;
  if (!connection) {
    show(ctx, name ? `No MCP server named '${name}'.` : "Usage: /mcp auth <server>", "warning");
    return;
  }
  try {
    await connection.signIn(commandSignIn(ctx));
    show(ctx, `Signed in to MCP server '${connection.name}': ${connection.tools.length} tool${connection.tools.length === 1 ? "" : "s"}.`);
  } catch (error) {
    show(ctx, error instanceof Error ? error.message : String(error), "error");
  }
}

async function logout(bridge: McpBridge, name: string | undefined, ctx: ExtensionContext): Promise<void> {
  const connection = name ? bridge.connection(name) : undefined;
  if (!connection) {
    show(ctx, name ? `No MCP server named '${name}'.` : "Usage: /mcp logout <server>", "warning");
    return;
  }
  const removed = await connection.logout();
  show(ctx, removed ? `Signed out of MCP server '${connection.name}': its tokens and client registration are deleted.` : `Nothing stored for MCP server '${connection.name}'.`);
}

export function registerMcpCommand(pi: ExtensionAPI, bridge: McpBridge, registry: ToolRegistry, env: Environment): void {
  pi.registerCommand("mcp", {
    description: "Show MCP servers, their state and their tools; sign in and out",
    getArgumentCompletions: (prefix) => {
      const words = prefix.trimStart().split(/\s+/);
      if (words.length <= 1) {
        const items = SUBCOMMANDS.filter((s) => s.value.startsWith(words[0] ?? ""));
        return items.length ? items : null;
      }
      const servers = [...bridge.connections.values()]
        .filter((c) => c.name.startsWith(words[1] ?? ""))
        .map((c) => ({ value: `${words[0]} ${c.name}`, label: c.name, description: c.status }));
      return servers.length ? servers : null;
    },
    handler: async (args, ctx) => {
      const [sub = "", name] = args.trim().split(/\s+/);
      switch (sub) {
        case "":
        case "list":
          show(ctx, formatServerList(serverRows(bridge, registry, env), bridge.problems));
          return;
        case "auth":
          await signIn(bridge, name, ctx);
          return;
        case "logout":
          await logout(bridge, name, ctx);
          return;
        default:
          show(ctx, `Unknown /mcp subcommand '${sub}'. Available: ${SUBCOMMANDS.map((s) => s.value).join(", ")}`, "warning");
      }
    },
  });
}
