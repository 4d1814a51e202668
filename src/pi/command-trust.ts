/**
 * Project trust as the user meets it: the question at session start about project servers that are new or changed
 * (trust all / choose / don't trust), and `/mcp trust` and `/mcp untrust`, which work without a UI too (running the
 * command is the consent).
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { McpBridge } from "../bridge/mcp-bridge.ts";
import { errorMessage } from "../common/errors.ts";
import { plural } from "../common/text.ts";
import { shown, SHOWN } from "../common/terminal-text.ts";
import { describeForTrust, trustQuestion } from "../trust/trust-rules.ts";
import { describeSource } from "../config/types.ts";
import type { ServerConnection } from "../connection/server-connection.ts";
import { show } from "./command-context.ts";
import type { ToolRegistry } from "./tool-registry.ts";

export interface TrustDeps {
  bridge: McpBridge;
  registry: ToolRegistry;
}

export const TRUST_ALL = "Trust all and start them";
export const TRUST_CHOOSE = "Choose which to trust";
export const TRUST_NONE = "Don't trust (ask again only if they change)";

/** Starts the servers the user trusts now, and says how each went. */
async function trustAndStart(
  deps: TrustDeps,
  connections: readonly ServerConnection[],
  ctx: ExtensionContext,
): Promise<void> {
  let results: Awaited<ReturnType<McpBridge["trust"]>>;
  try {
    results = await deps.bridge.trust(connections);
  } catch (error) {
    show(ctx, `Trusted for this session, but the answer could not be saved: ${errorMessage(error)}`, "warning");
    return;
  }
  const lines = results.map(({ connection, error }) => {
    if (error !== undefined) return `  ✕ ${connection.name}: trusted, but it did not start: ${errorMessage(error)}`;
    if (!connection.config.enabled)
      return `  ${connection.name}: trusted (it is disabled; /mcp enable ${connection.name} starts it)`;
    if (connection.status === "not started") return `  ${connection.name}: trusted; it starts on first use`;
    if (connection.status === "connecting")
      return `  ${connection.name}: trusted, starting; its tools appear when it is ready`;
    return `  ${connection.name}: trusted, ${connection.status}, ${plural(connection.tools.length, "tool")}`;
  });
  show(
    ctx,
    [`Trusted ${plural(results.length, "MCP server")} of ${deps.bridge.projectRoot}:`, ...lines].join("\n"),
    results.some((r) => r.error) ? "warning" : "info",
  );
}

/**
 * At session start, in a UI: asks once about the enabled project servers that are new or changed since the user last
 * answered, then starts the ones trusted. A server the user declined is not asked about again until it changes. The
 * startup notice, which names the servers left untrusted and `/mcp trust`, comes after this.
 */
export async function askTrust(deps: TrustDeps, ctx: ExtensionContext): Promise<void> {
  if (!ctx.hasUI || !deps.bridge.asksTrust) return;
  const pending = deps.bridge.untrusted().flatMap((connection) => {
    const state = deps.bridge.trustStateOf(connection.name);
    return state === "new" || state === "changed" ? [{ connection, config: connection.config, state }] : [];
  });
  if (pending.length === 0) return;
  const choice = await ctx.ui.select(trustQuestion(deps.bridge.projectRoot, pending), [
    TRUST_ALL,
    TRUST_CHOOSE,
    TRUST_NONE,
  ]);
  // Dismissed without an answer: nothing runs, and the question comes again next time.
  if (choice === undefined) return;
  let trusted = choice === TRUST_ALL ? pending : [];
  if (choice === TRUST_CHOOSE) {
    trusted = [];
    for (const server of pending) {
      if (
        await ctx.ui.confirm(
          `Trust MCP server '${shown(server.connection.name, SHOWN.body, "visible")}'?`,
          describeForTrust(server.config).join("\n"),
        )
      )
        trusted.push(server);
    }
  }
  const declined = pending.filter((p) => !trusted.includes(p)).map((p) => p.connection);
  if (declined.length)
    await deps.bridge
      .distrust(declined)
      .catch((error: unknown) => show(ctx, `Could not save the answer: ${errorMessage(error)}`, "warning"));
  if (trusted.length)
    await trustAndStart(
      deps,
      trusted.map((p) => p.connection),
      ctx,
    );
}

/** The named servers (all of `fallback` without names); an unknown name or a server that needs no trust is reported. */
function pick(
  deps: TrustDeps,
  names: readonly string[],
  fallback: () => ServerConnection[],
  ctx: ExtensionContext,
): ServerConnection[] | undefined {
  if (names.length === 0) return fallback();
  const picked: ServerConnection[] = [];
  for (const name of names) {
    const connection = deps.bridge.connection(name);
    if (!connection) {
      show(
        ctx,
        `No MCP server named '${name}'. Configured: ${[...deps.bridge.connections.keys()].join(", ") || "none"}.`,
        "warning",
      );
      return undefined;
    }
    if (deps.bridge.trustStateOf(name) === undefined) {
      show(
        ctx,
        `MCP server '${name}' comes from ${describeSource(connection.config.source)}, not from the project's file: it needs no trust.`,
        "warning",
      );
      return undefined;
    }
    picked.push(connection);
  }
  return picked;
}

/** `/mcp trust [server…]`: trusts the named project servers (all untrusted ones without names) and starts them. */
export async function trustCommand(deps: TrustDeps, names: readonly string[], ctx: ExtensionContext): Promise<void> {
  const picked = pick(deps, names, () => deps.bridge.untrusted(), ctx);
  if (!picked) return;
  const todo = picked.filter((c) => deps.bridge.trustStateOf(c.name) !== "trusted");
  if (todo.length === 0) {
    show(
      ctx,
      picked.length
        ? `Already trusted: ${picked.map((c) => c.name).join(", ")}.`
        : "No project MCP server is waiting for trust.",
    );
    return;
  }
  await trustAndStart(deps, todo, ctx);
}

/** `/mcp untrust [server…]`: stops the named project servers (all without names), withdraws their tools, remembers it. */
export async function untrustCommand(deps: TrustDeps, names: readonly string[], ctx: ExtensionContext): Promise<void> {
  const picked = pick(
    deps,
    names,
    () => [...deps.bridge.connections.values()].filter((c) => deps.bridge.trustStateOf(c.name) !== undefined),
    ctx,
  );
  if (!picked) return;
  if (picked.length === 0) {
    show(ctx, "This project defines no MCP servers.");
    return;
  }
  for (const connection of picked) deps.registry.syncServer(connection, []);
  try {
    await deps.bridge.distrust(picked);
  } catch (error) {
    show(ctx, `Stopped for this session, but the answer could not be saved: ${errorMessage(error)}`, "warning");
    return;
  }
  const stopped = picked.map((c) => c.name);
  show(
    ctx,
    `No longer trusted, stopped: ${stopped.join(", ")}. /mcp trust ${stopped.length === 1 ? stopped[0] : "[server…]"} runs ${stopped.length === 1 ? "it" : "them"} again.`,
  );
}
