/**
 * The `/mcp` command: the dashboard and list, and the subcommands that test, reconnect, sign in and out
 * (./command-auth.ts), switch a server off and on for this session (./command-off.ts), and change which servers there
 * are (add, remove, enable, disable, import — in ./command-config.ts).
 */
import type { ExtensionCommandContext, ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { McpBridge } from "../bridge/mcp-bridge.ts";
import { addServerLine } from "./command-add.ts";
import { ADD_OPTION_NAMES } from "../config/add-arguments.ts";
import { addServer, removeServer, setEnabled } from "./command-config.ts";
import { IMPORT_OPTION_NAMES, importServers } from "./command-import.ts";
import { noServerNamed, SANDBOXED_FLAG, trustCommand, untrustCommand } from "./command-trust.ts";
import { type CommandDeps, failed, MCP_COMMAND_DESCRIPTION, show } from "./command-context.ts";
import { McpDashboard } from "./dashboard.ts";
import { BridgeError, errorMessage } from "../common/errors.ts";
import type { ServerConnection } from "../connection/server-connection.ts";
import { serverRows } from "./server-rows.ts";
import { requestToolWire } from "./pi-line.ts";
import { formatServerList, type ServerRow } from "./status-format.ts";
import { closestMatch, plural } from "../common/text.ts";
import { splitCommandLine } from "../config/add-server.ts";
import { commandArgument } from "../config/validate/name.ts";
import { scopeLabel } from "../config/types.ts";
import { definitionChars, estimatedTokens, modelFacingTool } from "../exposure/definition-cost.ts";
import { formatProvenance } from "../translate/provenance.ts";
import { RESOURCE_TOOL_NAMES } from "./resource-tools.ts";
import { promptListingText, resourceListingText } from "./offer-listing.ts";
import { isSandboxed } from "../config/sandbox-setting.ts";
import { sandboxCheck } from "./sandbox-check.ts";
import { saysOff, switchOffCommand, switchOnCommand } from "./command-off.ts";
import { logsText } from "./command-logs.ts";
import { logout, signIn, signInToWaiting } from "./command-auth.ts";
import { isSessionServer } from "../bridge/session-servers.ts";

/** The named server, or one the user picks; undefined (with a message) when there is none. */
async function pickServer(
  bridge: McpBridge,
  name: string | undefined,
  ctx: ExtensionContext,
  action: string,
  subcommand = action,
): Promise<ServerConnection | undefined> {
  const names = [...bridge.connections.keys()];
  if (name) {
    const connection = bridge.connection(name);
    if (!connection) failed(ctx, noServerNamed(bridge, name), "warning");
    return connection;
  }
  if (names.length === 0) return void failed(ctx, "No MCP servers configured.", "warning");
  if (!ctx.hasUI)
    return void failed(ctx, `Usage: /mcp ${subcommand} <server>. Configured: ${names.join(", ")}.`, "warning");
  const choice = await ctx.ui.select(`Which server to ${action}?`, names);
  return choice ? bridge.connection(choice) : undefined;
}

/** The status rows, the declared tools' cost by the session's exposure, each tool as the current model gets it. */
function statusRows(deps: CommandDeps, ctx: ExtensionContext): ServerRow[] {
  const { exposure, serversOff } = deps;
  const cost = exposure && { exposure, wire: requestToolWire(ctx.model), catalog: deps.catalogShares?.() };
  return serverRows(deps.bridge, deps.registry, deps.env, cost, (connection) => serversOff.isOff(connection));
}

/** What `/mcp` says about the session's `auto` exposure, if it decided. */
function autoNotes(deps: CommandDeps): string[] {
  const note = deps.exposure?.autoNote();
  return note ? [note] : [];
}

function formatTools(deps: CommandDeps, server: string | undefined): string {
  const active = new Set(deps.pi.getActiveTools());
  const activeLabel = (name: string) => (active.has(name) ? "direct" : "inactive");
  const tools = deps.registry.tools.filter((t) => server === undefined || t.server === server);
  const prompts = (deps.promptCommands?.() ?? []).filter((p) => server === undefined || p.server === server);
  const none = server ? `MCP server '${server}' has no tools registered.` : "No MCP tools are registered.";
  const lines = [tools.length ? "Registered name  ·  provenance  ·  config scope  ·  exposure" : none];
  for (const tool of tools) {
    const source = deps.bridge.connection(tool.server)?.config.source;
    const scope = source ? scopeLabel(source) : "?";
    const exposure = deps.exposure?.label(tool.server, tool.originalName) ?? activeLabel(tool.name);
    lines.push(`  ${tool.name}  ·  ${formatProvenance(tool.provenance)}  ·  ${scope}  ·  ${exposure}`);
  }
  lines.push(...autoNotes(deps));
  if (prompts.length)
    lines.push(
      "Prompt commands  ·  provenance",
      ...prompts.map((p) => `  /${p.name}  ·  ${formatProvenance(p.provenance)}`),
    );
  // The resource tools belong to no one server: each call names the server it reads from.
  const offering = deps.resourceServers?.() ?? [];
  const resourceServers = offering.filter((s) => server === undefined || s === server);
  if (resourceServers.length) {
    const reach = resourceServers.map((s) => `mcp:${s}/resources`).join(", ");
    const exposure = (name: string) => deps.exposure?.sharedLabel(name, offering) ?? activeLabel(name);
    lines.push(
      "Resource tools  ·  servers they reach  ·  exposure",
      ...RESOURCE_TOOL_NAMES.map((name) => `  ${name}  ·  ${reach}  ·  ${exposure(name)}`),
    );
  }
  return lines.join("\n");
}

/** Connects afresh with the server's config, lists its tools and how big each one's definition is, then disconnects. */
async function testServer(deps: CommandDeps, connection: ServerConnection, ctx: ExtensionContext): Promise<void> {
  // A sandboxed server is never started unsandboxed: say first whether its sandbox can run here at all.
  const sandboxed = isSandboxed(deps.bridge.sandboxOf(connection.config));
  const check = sandboxed ? await sandboxCheck() : undefined;
  if (check && !check.ok)
    return failed(
      ctx,
      `MCP server '${connection.name}' runs sandboxed. ${check.text} Or set "sandbox": false for it to run with your full rights.`,
    );
  const scratch = await deps.bridge.scratchConnection(connection.config);
  const started = Date.now();
  try {
    await scratch.connect();
    // Each tool's entry in a request to the current model (name, description, parameters in its provider's wrapper),
    // not the whole listing.
    const wire = requestToolWire(ctx.model);
    const sizes = scratch.tools.map((tool) => {
      const sent = modelFacingTool(connection.name, tool, connection.config.prefix);
      return { name: tool.name, chars: definitionChars(sent, wire) };
    });
    const total = sizes.reduce((n, s) => n + s.chars, 0);
    const lines = [
      `MCP server '${connection.name}' works: connected in ${Date.now() - started} ms over ${scratch.transport}, ${plural(sizes.length, "tool")}; ` +
        `declared directly they would add ${total.toLocaleString("en-US")} characters to each request (about ${estimatedTokens(total).toLocaleString("en-US")} tokens).`,
      ...(check ? [`  sandboxed: ${check.text}`] : []),
      ...sizes.map(
        (s) =>
          `  ${s.name}  ${s.chars.toLocaleString("en-US")} characters (about ${estimatedTokens(s.chars).toLocaleString("en-US")} tokens)`,
      ),
    ];
    show(ctx, lines.join("\n"));
  } catch (error) {
    const kind = error instanceof BridgeError ? ` [${error.kind}]` : "";
    failed(ctx, `MCP server '${connection.name}' failed the test${kind}: ${errorMessage(error)}`);
  } finally {
    // Not waited for: a server that outlives its input would hold the command, and `pi -p`'s exit, for its grace.
    void scratch.close();
  }
}

async function reconnect(connection: ServerConnection, ctx: ExtensionContext): Promise<void> {
  try {
    // A shared server is restarted for every pi session that uses it: each of them sees it reconnect.
    const others = (connection.shared?.sessions ?? 1) - 1;
    if (connection.restartShared() && others > 0)
      show(
        ctx,
        `MCP server '${connection.name}' is shared: restarting it for ${plural(others, "other pi session")} too.`,
      );
    await connection.reconnect();
    show(ctx, `Reconnected to MCP server '${connection.name}': ${plural(connection.tools.length, "tool")}.`);
  } catch (error) {
    failed(ctx, errorMessage(error));
  }
}

async function dashboard(deps: CommandDeps, ctx: ExtensionContext): Promise<void> {
  const source = { rows: () => statusRows(deps, ctx), logTail: deps.logTail };
  let opened = false;
  try {
    await ctx.ui.custom<void>((tui, _theme, _keybindings, done) => {
      opened = true;
      return new McpDashboard(tui, source, () => done());
    });
  } catch {
    // Reported below as text.
  }
  // A UI without custom components (RPC mode returns at once, without building one): the same as text.
  if (!opened) show(ctx, listText(deps, ctx));
}

/** Runs `action` on the named server, or on one the user picks. */
function onServer(
  verb: string,
  action: (deps: CommandDeps, connection: ServerConnection, ctx: ExtensionCommandContext) => Promise<void>,
) {
  return async (deps: CommandDeps, [name]: string[], ctx: ExtensionCommandContext, subcommand?: string) => {
    const connection = await pickServer(deps.bridge, name, ctx, verb, subcommand);
    if (connection) await action(deps, connection, ctx);
  };
}

/** A prompt or resource listing: of the named server, or of every server. */
function listing(kind: "prompts" | "resources") {
  return async (deps: CommandDeps, [name]: string[], ctx: ExtensionContext) => {
    const connection = name === undefined ? undefined : await pickServer(deps.bridge, name, ctx, kind);
    if (name !== undefined && !connection) return;
    const servers = connection ? [connection] : [...deps.bridge.connections.values()];
    const off = (c: ServerConnection) => deps.serversOff.isOff(c);
    const text =
      kind === "prompts"
        ? await promptListingText(servers, deps.fetchPrompts, off, ctx.signal)
        : await resourceListingText(servers, off, ctx.signal);
    show(ctx, text);
  };
}

function listText(deps: CommandDeps, ctx: ExtensionContext): string {
  return formatServerList(statusRows(deps, ctx), deps.bridge.problems, Date.now(), autoNotes(deps));
}

interface Subcommand {
  name: string;
  help: string;
  /**
   * Which servers completion offers as the argument: any, those that need trust, those that run or may (not off for
   * the session nor disabled), those off for the session, those that may use OAuth (and are on); or none (no argument).
   */
  completes?: "server" | "project server" | "server on" | "server off" | "OAuth server" | "OAuth server on";
  /** Options completion offers after the subcommand, beside the servers. */
  flags?: readonly string[];
  run: (deps: CommandDeps, args: string[], ctx: ExtensionCommandContext, subcommand: string) => Promise<void> | void;
}

/** Every `/mcp` subcommand, in the order completion offers them. */
const SUBCOMMANDS: readonly Subcommand[] = [
  {
    name: "list",
    help: "Every server's state, metrics and tools, as text",
    run: (deps, _, ctx) => show(ctx, listText(deps, ctx)),
  },
  {
    name: "tools",
    help: "The MCP tools pi has: registered and original names, server, source, exposure",
    completes: "server",
    run: (deps, [name], ctx) =>
      name === undefined || deps.bridge.connection(name)
        ? show(ctx, formatTools(deps, name))
        : failed(ctx, noServerNamed(deps.bridge, name), "warning"),
  },
  {
    name: "prompts",
    help: "Each server's prompts: the command that runs each, and its arguments",
    completes: "server",
    run: listing("prompts"),
  },
  {
    name: "resources",
    help: "Each server's resources and resource templates",
    completes: "server",
    run: listing("resources"),
  },
  {
    name: "logs",
    help: "A local server's last stderr lines and what the bridge logged about it, with where each log is",
    completes: "server",
    run: onServer("show the logs of", async (deps, connection, ctx) => show(ctx, logsText(deps, connection))),
  },
  {
    name: "add",
    help: "Add a server: step by step, or on one line (/mcp add <server> [options] -- <command>, or --url <url>)",
    flags: ADD_OPTION_NAMES,
    run: (deps, words, ctx) => (words.length > 0 ? addServerLine(deps, words, ctx) : addServer(deps, ctx)),
  },
  {
    name: "remove",
    help: "Remove a server from its config file",
    completes: "server",
    run: onServer("remove", removeServer),
  },
  {
    name: "test",
    help: "Connect to a server, list its tools and their sizes, disconnect",
    completes: "server",
    run: onServer("test", testServer),
  },
  {
    name: "reconnect",
    help: "Drop a server's connection and connect again",
    completes: "server on",
    run: onServer("reconnect", async (deps, connection, ctx) => {
      // Disabled in its config: not started, and told how to enable it, as /mcp on says.
      if (connection.status === "disabled") return switchOnCommand(deps, connection, ctx);
      if (!saysOff(deps.serversOff, connection, ctx)) await reconnect(connection, ctx);
    }),
  },
  {
    name: "enable",
    help: "Turn a server on (saved in its config)",
    completes: "server",
    run: onServer("enable", (deps, connection, ctx) => setEnabled(deps, connection, true, ctx)),
  },
  {
    name: "disable",
    help: "Turn a server off (saved in its config)",
    completes: "server",
    run: onServer("disable", (deps, connection, ctx) => setEnabled(deps, connection, false, ctx)),
  },
  {
    name: "off",
    help: "Switch a server off for this session only (no config file changes); /reload keeps it off",
    completes: "server on",
    run: onServer("switch off", switchOffCommand),
  },
  {
    name: "on",
    help: "Switch a server that is off for this session on again",
    completes: "server off",
    run: onServer("switch on", switchOnCommand),
  },
  {
    name: "import",
    help: "Copy servers from Claude, Cursor, VS Code, Windsurf, Codex or opencode (step by step, or --all or by name)",
    flags: IMPORT_OPTION_NAMES,
    run: importServers,
  },
  {
    name: "auth",
    help: "Sign in to a server that uses OAuth (or sign in again); without a name, to each that waits for a sign-in",
    completes: "OAuth server on",
    run: async (deps, args, ctx) => {
      if (args[0] === undefined && (await signInToWaiting(deps, ctx))) return;
      await onServer("sign in to", signIn)(deps, args, ctx, "auth");
    },
  },
  {
    name: "logout",
    help: "Forget a server's OAuth tokens and client registration",
    completes: "OAuth server",
    run: onServer("sign out of", (_, connection, ctx) => logout(connection, ctx)),
  },
  {
    name: "trust",
    help: "Trust this project's servers (or the named ones) and start them; --sandboxed: each in a sandbox only",
    completes: "project server",
    flags: [SANDBOXED_FLAG],
    run: trustCommand,
  },
  {
    name: "untrust",
    help: "Stop trusting this project's servers (or the named ones) and stop them",
    completes: "project server",
    run: untrustCommand,
  },
  {
    name: "doctor",
    help: "Check that sandboxed servers can run here (the sandbox's tools)",
    run: async (_, __, ctx) => {
      const check = await sandboxCheck();
      if (check.ok) show(ctx, check.text);
      else failed(ctx, check.text);
    },
  },
];
const SUBCOMMAND_NAMES = SUBCOMMANDS.map((s) => s.name);

export function registerMcpCommand(deps: CommandDeps): void {
  const { pi, bridge, serversOff } = deps;
  const offers = (completes: NonNullable<Subcommand["completes"]>, c: ServerConnection) => {
    if (completes === "project server") return bridge.trust.stateOf(c.name) !== undefined;
    // And one added disabled for this session, which /mcp on starts (it has no file for /mcp enable).
    if (completes === "server off")
      return serversOff.isOff(c) || (c.status === "disabled" && isSessionServer(c.config));
    if (completes.startsWith("OAuth") && c.config.oauth === undefined) return false;
    return completes === "server" || completes === "OAuth server" || (!serversOff.isOff(c) && c.status !== "disabled");
  };
  pi.registerCommand("mcp", {
    description: MCP_COMMAND_DESCRIPTION,
    getArgumentCompletions: (prefix) => {
      // Quotes group words, as in the handler. A trailing space, not quoted (`test "my `), starts the next word.
      const words = splitCommandLine(prefix);
      if (splitCommandLine(`${prefix}x`).length > words.length) words.push("");
      if (words.length <= 1) {
        const items = SUBCOMMANDS.filter((s) => s.name.startsWith(words[0] ?? ""));
        return items.length ? items.map((s) => ({ value: s.name, label: s.name, description: s.help })) : null;
      }
      const subcommand = SUBCOMMANDS.find((s) => s.name === words[0]);
      const completes = subcommand?.completes;
      if (!subcommand || (!completes && !subcommand.flags)) return null;
      // A flag is offered once typed (`trust --s`, `add fs --e`) and after a server (`trust probe `).
      const last = words.at(-1) ?? "";
      const flags = (subcommand.flags ?? [])
        .filter((f) => f.startsWith(last) && (last !== "" || (completes && words.length > 2)))
        .map((f) => ({ value: [...words.slice(0, -1).map(commandArgument), f].join(" "), label: f }));
      // trust and untrust take several names: each after the first completes too, but for those already typed.
      const next = (c: ServerConnection) =>
        words.length === 2 || (completes === "project server" && !words.slice(1, -1).includes(c.name));
      const servers = [...bridge.connections.values()]
        .filter((c) => completes && next(c) && c.name.startsWith(last) && offers(completes, c))
        .map((c) => ({
          value: [...words.slice(0, -1).map(commandArgument), commandArgument(c.name)].join(" "),
          label: c.name,
          description: serversOff.isOff(c) ? "off for this session" : c.trusted ? c.status : "not trusted",
        }));
      return servers.length || flags.length ? [...servers, ...flags] : null;
    },
    handler: async (args, ctx: ExtensionCommandContext) => {
      // A server name with spaces comes quoted: /mcp test "my server".
      const [sub = "", ...names] = splitCommandLine(args);
      if (sub === "") {
        if (ctx.hasUI) await dashboard(deps, ctx);
        else show(ctx, listText(deps, ctx));
        return;
      }
      const subcommand = SUBCOMMANDS.find((s) => s.name === sub);
      if (subcommand) {
        await subcommand.run(deps, names, ctx, sub);
        // A command that put a new connection in an off server's place (enable, trust, remove) lifted its switch.
        serversOff.recordChanges();
      } else {
        // `help`, or a word that is no subcommand (`lst`: did you mean `list`?): the subcommands and what each does.
        const guess = closestMatch(sub, SUBCOMMAND_NAMES);
        const head = sub === "help" ? "/mcp alone shows the servers." : `Unknown /mcp subcommand '${sub}'.`;
        const table = SUBCOMMANDS.map((s) => `\n  ${s.name.padEnd(10)} ${s.help}`).join("");
        const level = sub === "help" ? "info" : "warning";
        show(ctx, `${head}${guess ? ` Did you mean '${guess}'?` : ""} Subcommands:${table}`, level);
        if (level === "warning" && !ctx.hasUI) process.exitCode = 1; // as failed() does: a script's typo fails
      }
    },
  });
}
