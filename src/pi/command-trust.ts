/**
 * Project trust as the user meets it: the question at session start about project servers that are new or changed
 * (trust sandboxed / trust all / choose / don't trust), and `/mcp trust [--sandboxed]` and `/mcp untrust`, which work
 * without a UI too (running the command is the consent).
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { McpBridge } from "../bridge/mcp-bridge.ts";
import { errorMessage } from "../common/errors.ts";
import { plural } from "../common/text.ts";
import { shown, SHOWN } from "../common/terminal-text.ts";
import { describeForTrust, sandboxedAnswer, trustQuestion } from "../trust/trust-rules.ts";
import { describeSource } from "../config/types.ts";
import { commandArgument } from "../config/validate/name.ts";
import type { ServerConnection } from "../connection/server-connection.ts";
import { failed, show } from "./command-context.ts";
import type { ToolRegistry } from "./tool-registry.ts";

export interface TrustDeps {
  bridge: McpBridge;
  registry: ToolRegistry;
}

/** `/mcp trust … --sandboxed`: trust the servers to run in a sandbox only. */
export const SANDBOXED_FLAG = "--sandboxed";

export const TRUST_SANDBOXED = "Trust, sandboxed: start them, each local one in a sandbox";
export const TRUST_ALL = "Trust all and start them";
export const TRUST_CHOOSE = "Choose which to trust";
export const TRUST_NONE = "Don't trust (ask again only if they change)";
/** The answers about one server, when the user chooses. */
const CHOOSE_SANDBOXED = "Trust, sandboxed";
export const CHOOSE_FULLY = "Trust fully";
const CHOOSE_NONE = "Don't trust";

/** A server the user trusts, and whether only in a sandbox. */
interface Trusted {
  connection: ServerConnection;
  sandboxed: boolean;
}

/**
 * Starts the servers the user trusts now, and says how each went — and, for one trusted before the other way, that
 * it now runs with or without the sandbox.
 */
async function trustAndStart(deps: TrustDeps, servers: readonly Trusted[], ctx: ExtensionContext): Promise<void> {
  const was = new Map(servers.map(({ connection }) => [connection.name, wasTrusted(deps, connection)]));
  let results: Awaited<ReturnType<McpBridge["trust"]["trust"]>>;
  const trust = (sandboxed: boolean) => {
    const group = servers.filter((s) => s.sandboxed === sandboxed).map((s) => s.connection);
    return group.length ? deps.bridge.trust.trust(group, sandboxed) : [];
  };
  try {
    results = (await Promise.all([trust(true), trust(false)])).flat();
  } catch (error) {
    return failed(
      ctx,
      `Trusted for this session, but the answer could not be saved: ${errorMessage(error)}`,
      "warning",
    );
  }
  const lines = results.map(({ connection, error }) => {
    const boxed = deps.bridge.trust.sandboxed(connection.config);
    const how = `trusted${boxed ? " sandboxed" : ""}${switched(was.get(connection.name), boxed)}`;
    if (error !== undefined) return `  ✕ ${connection.name}: ${how}, but it did not start: ${errorMessage(error)}`;
    if (!connection.config.enabled)
      return `  ${connection.name}: ${how} (it is disabled; /mcp enable ${commandArgument(connection.name)} starts it)`;
    if (connection.status === "not started") return `  ${connection.name}: ${how}; it starts on first use`;
    if (connection.status === "connecting")
      return `  ${connection.name}: ${how}, starting; its tools appear when it is ready`;
    return `  ${connection.name}: ${how}, ${connection.status}, ${plural(connection.tools.length, "tool")}`;
  });
  const text = [`Trusted ${plural(results.length, "MCP server")} of ${deps.bridge.projectRoot}:`, ...lines].join("\n");
  // One that did not start fails a script, as /mcp enable does.
  if (results.some((r) => r.error)) failed(ctx, text, "warning");
  else show(ctx, text);
}

/** How the user trusted a server so far: `"sandboxed"`, `"fully"`, or not at all. */
function wasTrusted(deps: TrustDeps, connection: ServerConnection): "sandboxed" | "fully" | undefined {
  if (deps.bridge.trust.stateOf(connection.name) !== "trusted") return undefined;
  return deps.bridge.trust.sandboxed(connection.config) ? "sandboxed" : "fully";
}

function switched(was: "sandboxed" | "fully" | undefined, sandboxed: boolean): string {
  if (was === "sandboxed" && !sandboxed) return " (fully now: it no longer runs in a sandbox)";
  if (was === "fully" && sandboxed) return " (now only in a sandbox: it was trusted fully)";
  return "";
}

/**
 * At session start, in a UI: asks once about the enabled project servers that are new or changed since the user last
 * answered, then starts the ones trusted — each local one in a sandbox if the user trusts them "sandboxed". A server
 * the user declined is not asked about again until it changes. The startup notice, which names the servers left
 * untrusted and `/mcp trust`, comes after this.
 */
export async function askTrust(deps: TrustDeps, ctx: ExtensionContext): Promise<void> {
  if (!ctx.hasUI || !deps.bridge.trust.asks) return;
  const pending = deps.bridge.trust.untrusted().flatMap((connection) => {
    const state = deps.bridge.trust.stateOf(connection.name);
    return state === "new" || state === "changed" ? [{ connection, config: connection.config, state }] : [];
  });
  if (pending.length === 0) return;
  const choice = await ctx.ui.select(trustQuestion(deps.bridge.projectRoot, pending), [
    TRUST_SANDBOXED,
    TRUST_ALL,
    TRUST_CHOOSE,
    TRUST_NONE,
  ]);
  // Dismissed without an answer: nothing runs, and the question comes again next time.
  if (choice === undefined) return;
  const trusted: Trusted[] = [];
  const declined: ServerConnection[] = [];
  if (choice === TRUST_SANDBOXED || choice === TRUST_ALL)
    for (const { connection } of pending) trusted.push({ connection, sandboxed: choice === TRUST_SANDBOXED });
  if (choice === TRUST_CHOOSE) {
    for (const { connection, config } of pending) {
      // A remote server runs no process here: there is nothing to sandbox.
      const options =
        config.transport === "stdio" ? [CHOOSE_SANDBOXED, CHOOSE_FULLY, CHOOSE_NONE] : [CHOOSE_FULLY, CHOOSE_NONE];
      const title = `Trust MCP server '${shown(connection.name, SHOWN.body, "visible")}'?`;
      const answer = await ctx.ui.select([title, ...describeForTrust(config)].join("\n"), options);
      if (answer === CHOOSE_SANDBOXED || answer === CHOOSE_FULLY)
        trusted.push({ connection, sandboxed: answer === CHOOSE_SANDBOXED });
      // Escape on one server's question is no answer: it is asked about again next time.
      else if (answer === CHOOSE_NONE) declined.push(connection);
    }
  }
  if (choice === TRUST_NONE) declined.push(...pending.map((p) => p.connection));
  if (declined.length)
    await deps.bridge.trust
      .distrust(declined)
      .catch((error: unknown) => show(ctx, `Could not save the answer: ${errorMessage(error)}`, "warning"));
  if (trusted.length) await trustAndStart(deps, trusted, ctx);
}

/** What to say when no server has the name the user typed. */
export function noServerNamed(bridge: McpBridge, name: string): string {
  return `No MCP server named '${name}'. Configured: ${[...bridge.connections.keys()].join(", ") || "none"}.`;
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
  for (const name of new Set(names)) {
    const connection = deps.bridge.connection(name);
    if (!connection) return void failed(ctx, noServerNamed(deps.bridge, name), "warning");
    if (deps.bridge.trust.stateOf(name) === undefined)
      return void failed(
        ctx,
        `MCP server '${name}' comes from ${describeSource(connection.config.source)}, not from the project's file: it needs no trust.`,
        "warning",
      );
    picked.push(connection);
  }
  return picked;
}

/**
 * `/mcp trust [server…] [--sandboxed]`: trusts the named project servers (all untrusted ones without names) and starts
 * them; with `--sandboxed`, each local one only in a sandbox. A server trusted the other way is trusted anew this way.
 */
export async function trustCommand(deps: TrustDeps, args: readonly string[], ctx: ExtensionContext): Promise<void> {
  const sandboxed = args.includes(SANDBOXED_FLAG);
  const names = args.filter((a) => a !== SANDBOXED_FLAG);
  const picked = pick(deps, names, () => deps.bridge.trust.untrusted(), ctx);
  if (!picked) return;
  const wanted = (c: ServerConnection) => (sandboxedAnswer(c.config, sandboxed) ? "sandboxed" : "fully");
  const todo = picked.filter((c) => wasTrusted(deps, c) !== wanted(c));
  if (todo.length === 0)
    return show(
      ctx,
      picked.length
        ? `Already trusted${picked.some((c) => wanted(c) === "sandboxed") ? " sandboxed" : ""}: ${picked.map((c) => c.name).join(", ")}.`
        : "No project MCP server is waiting for trust.",
    );
  const servers = todo.map((connection) => ({ connection, sandboxed }));
  await trustAndStart(deps, servers, ctx);
}

/** `/mcp untrust [server…]`: stops the named project servers (all without names), withdraws their tools, remembers it. */
export async function untrustCommand(deps: TrustDeps, names: readonly string[], ctx: ExtensionContext): Promise<void> {
  const picked = pick(
    deps,
    names,
    () => [...deps.bridge.connections.values()].filter((c) => deps.bridge.trust.stateOf(c.name) !== undefined),
    ctx,
  );
  if (!picked) return;
  if (picked.length === 0) return show(ctx, "This project defines no MCP servers.");
  for (const connection of picked) deps.registry.syncServer(connection, []);
  try {
    await deps.bridge.trust.distrust(picked);
  } catch (error) {
    return failed(
      ctx,
      `Stopped for this session, but the answer could not be saved: ${errorMessage(error)}`,
      "warning",
    );
  }
  const stopped = picked.map((c) => c.name);
  show(
    ctx,
    `No longer trusted, stopped: ${stopped.join(", ")}. /mcp trust ${stopped.length === 1 ? commandArgument(stopped[0]!) : "[server…]"} runs ${stopped.length === 1 ? "it" : "them"} again.`,
  );
}
