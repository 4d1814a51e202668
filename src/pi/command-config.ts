/**
 * The `/mcp` subcommands that change config files: add (a guided flow), remove, enable/disable (import is
 * ./command-import.ts). Files are changed through the bridge (`McpBridge.writeConfig`, on ../config/write/), which keeps the
 * rest of a file as it was, never writes over one that does not parse, and keeps project trust in step with the change.
 */
import type { ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { HEADER_NAME } from "../config/add-arguments.ts";
import { type AddAuth, type AddTransport, buildEntry, suggestServerName } from "../config/add-server.ts";
import { isVariableName } from "../config/substitute.ts";
import { askServerName, type CommandDeps, failed, reportTrust, show } from "./command-context.ts";
import { saveAndStart } from "./command-add.ts";
import type { ConfigScope } from "../config/types.ts";
import { validateServerEntry } from "../config/validate/entry.ts";
import { remoteOfProxy } from "../config/import/mcp-remote.ts";
import { findInlineSecrets } from "../config/import/secrets.ts";
import { checkUrl } from "../config/validate/endpoint.ts";
import { commandArgument } from "../config/validate/name.ts";
import { removeServerEntry, setServerField } from "../config/write/server-edits.ts";
import type { ServerConnection } from "../connection/server-connection.ts";
import { errorMessage } from "../common/errors.ts";
import { registryAnswers } from "./command-registry.ts";
import { startedTools } from "./command-off.ts";

const TRANSPORT_CHOICES: Record<string, AddTransport> = {
  "A local command (stdio)": "stdio",
  "A URL (Streamable HTTP or SSE)": "http",
};
const FROM_REGISTRY = "Find it in the MCP registry";
const AUTH_CHOICES = [
  "None",
  "Bearer token from an environment variable",
  "API key header from an environment variable",
  "OAuth (sign in in the browser)",
];

/** The file new entries go into, as the user picks it (this project's or the user's); undefined when they cancel. */
export async function askTarget(
  deps: CommandDeps,
  ctx: ExtensionCommandContext,
  title: string,
): Promise<{ scope: ConfigScope; path: string } | undefined> {
  const project = deps.bridge.sourceOf("project");
  const user = deps.bridge.sourceOf("user");
  const choices: Array<{ label: string; scope: ConfigScope; path: string }> = [];
  if (project) choices.push({ label: `This project (${project.path})`, scope: "project", path: project.path });
  if (user) choices.push({ label: `All projects (${user.path})`, scope: "user", path: user.path });
  const labels = choices.map((c) => c.label);
  const choice = await ctx.ui.select(title, labels);
  return choices.find((c) => c.label === choice);
}

const notAVariable = (word: string) =>
  `'${word}' is not an environment variable name (letters, digits and _; not starting with a digit).`;

/** Asks for a variable name (or what `problem` takes), `suggested` on Enter, until it is one (or the user gives up). */
async function askVariable(
  ctx: ExtensionCommandContext,
  title: string,
  suggested: string,
  problem = (answer: string) => (isVariableName(answer) ? undefined : notAVariable(answer)),
): Promise<string | undefined> {
  for (let tries = 0; tries < 3; tries++) {
    const typed = await ctx.ui.input(`${title} (Enter for '${suggested}')`, suggested);
    if (typed === undefined) return undefined;
    const answer = typed.trim() || suggested;
    if (!problem(answer)) return answer;
    ctx.ui.notify(problem(answer)!, "warning");
  }
  return undefined;
}

/**
 * The variables a local server needs from the environment, by name (a README's `BRAVE_API_KEY`): a local server gets
 * only those its `env` names. A value typed with one (`NAME=value`) is not written: it stays in pi's environment.
 */
async function askVariables(ctx: ExtensionCommandContext): Promise<string[] | undefined> {
  for (let tries = 0; tries < 3; tries++) {
    const answer = await ctx.ui.input("Environment variables it needs, by name (Enter for none)", "BRAVE_API_KEY");
    if (answer === undefined) return undefined;
    const names = answer
      .split(/[\s,]+/)
      .filter(Boolean)
      .map((word) => word.split("=")[0]!);
    const wrong = names.find((name) => !isVariableName(name));
    if (wrong === undefined) return [...new Set(names)];
    ctx.ui.notify(notAVariable(wrong), "warning");
  }
  return undefined;
}

/** `/mcp add`: transport, endpoint, name, authentication, where to save; then writes the entry and starts the server. */
export async function addServer(deps: CommandDeps, ctx: ExtensionCommandContext): Promise<void> {
  if (!ctx.hasUI)
    return show(
      ctx,
      '/mcp add asks its questions in pi\'s interactive mode. Without it, give them on one line: /mcp add <server> [options] -- <command> (or --url <url>); or add the server to .pi/mcp.json (project) or ~/.pi/agent/mcp.json (user) under "mcpServers".',
      "warning",
    );
  const cancelled = () => ctx.ui.notify("No server added.", "info");
  const transportChoice = await ctx.ui.select("Add an MCP server: how does pi reach it?", [
    ...Object.keys(TRANSPORT_CHOICES),
    FROM_REGISTRY,
  ]);
  if (!transportChoice) return cancelled();
  if (transportChoice === FROM_REGISTRY) {
    const found = await registryAnswers(deps, ctx);
    return found ? saveNewEntry(deps, ctx, found.name, found.entry) : cancelled();
  }
  let transport = TRANSPORT_CHOICES[transportChoice]!;
  let endpoint = (
    await ctx.ui.input(
      transport === "stdio" ? "The command that starts the server, with its arguments" : "The server's URL",
      transport === "stdio" ? "npx -y @modelcontextprotocol/server-everything" : "https://example.com/mcp",
    )
  )?.trim();
  if (!endpoint) return cancelled();
  // `npx mcp-remote <url>` (a stdio proxy to a remote server, from another client's README): reached directly.
  const proxied =
    transport === "stdio"
      ? remoteOfProxy(buildEntry({ transport, endpoint, auth: { kind: "none" } }), { add() {} })
      : undefined;
  if (typeof proxied?.url === "string") {
    [transport, endpoint] = ["http", proxied.url];
    // Its headers and OAuth flags are not carried over: the questions that follow set how it signs in.
    const flags =
      proxied.headers || proxied.auth ? " (its --header and OAuth flags are not: answer below how it signs in)" : "";
    ctx.ui.notify(
      `mcp-remote reaches ${endpoint}: it is added as that remote server, which mcp-bridge connects to itself${flags}`,
      "info",
    );
  }
  const problem = transport === "http" ? checkUrl(endpoint) : undefined;
  if (problem) return ctx.ui.notify(problem.replace("`url`", "The URL"), "error");
  const name = await askServerName(deps, ctx, suggestServerName({ transport, endpoint }));
  if (!name) return cancelled();

  let auth: AddAuth = { kind: "none" };
  let variables: string[] = [];
  if (transport === "stdio") {
    const asked = await askVariables(ctx);
    if (!asked) return cancelled();
    variables = asked;
  } else {
    const choice = await ctx.ui.select("How does it authenticate?", AUTH_CHOICES);
    if (!choice) return cancelled();
    // A variable name may not start with a digit (a server named `1pass`): the suggestion must be one Enter can take.
    const stem = name
      .toUpperCase()
      .replace(/[^A-Z0-9]/g, "_")
      .replace(/^(?=[0-9])/, "MCP_");
    if (choice === AUTH_CHOICES[1]) {
      const variable = await askVariable(ctx, "The environment variable that holds the token", `${stem}_TOKEN`);
      if (!variable) return cancelled();
      auth = { kind: "bearer", variable };
    } else if (choice === AUTH_CHOICES[2]) {
      const header = await askVariable(ctx, "The header that carries the key", "X-API-Key", (answer) =>
        HEADER_NAME.test(answer) ? undefined : `'${answer}' is not a header name (letters, digits and -).`,
      );
      if (!header) return cancelled();
      const variable = await askVariable(ctx, "The environment variable that holds the key", `${stem}_API_KEY`);
      if (!variable) return cancelled();
      auth = { kind: "api-key", header, variable };
    } else if (choice === AUTH_CHOICES[3]) auth = { kind: "oauth" };
  }

  await saveNewEntry(deps, ctx, name, buildEntry({ transport, endpoint, auth, variables }));
}

/** The end of `/mcp add`, step by step: where to save the entry; then it is written and started. */
async function saveNewEntry(
  deps: CommandDeps,
  ctx: ExtensionCommandContext,
  name: string,
  entry: Record<string, unknown>,
): Promise<void> {
  const target = await askTarget(deps, ctx, "Save it where?");
  if (!target) return ctx.ui.notify("No server added.", "info");
  const validated = validateServerEntry(name, entry, { scope: target.scope, path: target.path });
  if (!validated.config) return ctx.ui.notify(`That entry would not work: ${validated.errors.join("; ")}`, "error");
  // A project file is often committed: a secret typed inline is refused there, as on one line (./command-add.ts).
  const secrets = target.scope === "project" ? findInlineSecrets(entry) : [];
  if (secrets.length > 0)
    return ctx.ui.notify(
      `Not added: '${name}' would write secrets into the project file ${target.path} (${secrets.join(", ")}), which is often committed. Pass them from your environment (\${NAME}), or save it to your own file.`,
      "error",
    );
  await saveAndStart(deps, ctx, name, entry, target.path);
}

/** A server added for this session only is in no file: says so (as a refusal), `why` after it, and returns true. */
function inNoFile(connection: ServerConnection, ctx: ExtensionCommandContext, why: string): boolean {
  const { scope, path } = connection.config.source;
  const text = `'${connection.name}' was added for this session only (${path})${why}.`;
  if (scope === "session") failed(ctx, text, "warning");
  return scope === "session";
}

/** `/mcp remove`: deletes the entry from the file that defines it; its tools leave pi at once. */
export async function removeServer(
  deps: CommandDeps,
  connection: ServerConnection,
  ctx: ExtensionCommandContext,
): Promise<void> {
  const why = " and is in no file; the extension that added it removes it, and it ends with the session";
  if (inNoFile(connection, ctx, why)) return;
  const { source } = connection.config;
  if (source.scope === "bundled" || source.scope === "package") {
    const from = source.package ? `the pi package ${source.package.name}` : "the extension";
    const off = `/mcp disable ${commandArgument(connection.name)}`;
    return failed(
      ctx,
      `'${connection.name}' comes with ${from} (${source.path}) and cannot be removed; ${off} turns it off.`,
      "warning",
    );
  }
  if (ctx.hasUI && !(await ctx.ui.confirm("Remove?", `Remove MCP server '${connection.name}' from ${source.path}?`)))
    return show(ctx, "Nothing removed.");
  // A higher file's switch of it (this project's override) would be left switching nothing: an error at each load.
  const override = (await deps.bridge.configured()).find((c) => c.name === connection.name)?.enabledSource?.path;
  for (const file of new Set([source.path, override ?? source.path])) {
    try {
      const written = await deps.bridge.writeConfig(file, (text) => {
        if (text === undefined) throw new Error("the file is gone");
        return removeServerEntry(text, connection.name);
      });
      reportTrust(ctx, written, [connection.name]);
    } catch (error) {
      return failed(ctx, `Could not remove '${connection.name}' from ${file}: ${errorMessage(error)}`);
    }
  }
  deps.registry.syncServer(connection, []);
  await deps.bridge.remove(connection.name);
  deps.syncRegistered?.(); // a server another extension registered under its name is no longer left out
  show(ctx, `Removed MCP server '${connection.name}' from ${source.path}; its tools are gone from this session.`);
}

/**
 * `/mcp enable` / `/mcp disable`: saves `enabled` in the file that defines the server — or, for a server defined for
 * every project (user file) or shipped with the extension, as an override in this project's file.
 */
export async function setEnabled(
  deps: CommandDeps,
  connection: ServerConnection,
  enabled: boolean,
  ctx: ExtensionCommandContext,
): Promise<void> {
  if (inNoFile(connection, ctx, ": there is no file to switch it in")) return;
  const { source } = connection.config;
  const project = deps.bridge.sourceOf("project");
  // A higher file's switch of this server (this project's override) decides it: it is changed there.
  const configured = (await deps.bridge.configured()).find((c) => c.name === connection.name);
  const override = configured?.enabledSource;
  let target = source.path;
  if (override) target = override.path;
  // Enabled in its files already: nothing is written (a project file is often committed), it is only started.
  else if (enabled && configured?.enabled) target = source.path;
  // A package's manifest is the package's own: an update would replace it, so the switch goes into the project's file.
  else if ((source.scope === "bundled" || source.scope === "package") && project) target = project.path;
  else if (source.scope === "user" && project && ctx.hasUI) {
    const here = `Only in this project (${project.path})`;
    const everywhere = `In every project (${source.path})`;
    const choice = await ctx.ui.select(`${enabled ? "Enable" : "Disable"} '${connection.name}' where?`, [
      here,
      everywhere,
    ]);
    if (!choice) return;
    if (choice === here) target = project.path;
  }
  // A `"disabled": true` left beside the `enabled` written would still switch it off.
  const { name } = connection;
  const save = (text?: string) =>
    setServerField(setServerField(text, name, "disabled", undefined), name, "enabled", enabled);
  try {
    if (!enabled || !configured?.enabled) reportTrust(ctx, await deps.bridge.writeConfig(target, save), [name]);
  } catch (error) {
    return failed(ctx, `Could not save it in ${target}: ${errorMessage(error)}`);
  }
  const where = `in ${target}`;
  if (!enabled) {
    deps.registry.syncServer(connection, []);
    await connection.disable();
    return show(ctx, `Disabled MCP server '${connection.name}' ${where}; its tools are gone from this session.`);
  }
  // The saved entry may differ from the one this session started with only in `enabled`: start it now. One connected
  // already keeps its session: a restart would lose what the server holds for it.
  try {
    const started =
      connection.status === "connected"
        ? connection
        : await deps.bridge.replace({ ...connection.config, enabled: true });
    show(ctx, `Enabled MCP server '${connection.name}' ${where}: ${startedTools(started)}.`);
  } catch (error) {
    failed(ctx, `Enabled MCP server '${connection.name}' ${where}, but it did not start: ${errorMessage(error)}`);
  }
}
