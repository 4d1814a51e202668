/**
 * The `/mcp` subcommands that change config files: add (a guided flow), remove, enable/disable, and import from other
 * MCP clients. Files are changed through the bridge (`McpBridge.writeConfig`, on ../config/write/), which keeps the
 * rest of a file as it was, never writes over one that does not parse, and keeps project trust in step with the change.
 */
import type { ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { shown, SHOWN } from "../common/terminal-text.ts";
import {
  type AddAuth,
  type AddTransport,
  buildEntry,
  suggestServerName,
  unsetVariablesNotice,
} from "../config/add-server.ts";
import { argSecrets, isVariableName } from "../config/substitute.ts";
import { askServerName, type CommandDeps, reportTrust, show } from "./command-context.ts";
import { saveAndStart, startWritten } from "./command-add.ts";
import type { ConfigScope } from "../config/types.ts";
import { validateServerEntry } from "../config/validate/entry.ts";
import { remoteOfProxy } from "../config/import/mcp-remote.ts";
import { checkUrl } from "../config/validate/endpoint.ts";
import { commandArgument } from "../config/validate/name.ts";
import { removeServerEntry, setServerEntry, setServerField } from "../config/write/server-edits.ts";
import { discoverImports } from "../config/import/discover.ts";
import type { ImportedServer } from "../config/import/import-types.ts";
import type { ServerConnection } from "../connection/server-connection.ts";
import { errorMessage } from "../common/errors.ts";
import { Redactor } from "../common/redact.ts";
import { plural } from "../common/text.ts";
import { registryAnswers } from "./command-registry.ts";

const TRANSPORT_CHOICES: Record<string, AddTransport> = {
  "A local command (stdio)": "stdio",
  "A URL (Streamable HTTP or SSE)": "http",
};
const FROM_REGISTRY = "Find it in the MCP registry";
const SKIP_SECRETS = "No, skip this server";
const AUTH_CHOICES = [
  "None",
  "Bearer token from an environment variable",
  "API key header from an environment variable",
  "OAuth (sign in in the browser)",
];

function scopeChoices(deps: CommandDeps): Array<{ label: string; scope: ConfigScope; path: string }> {
  const project = deps.bridge.sourceOf("project");
  const user = deps.bridge.sourceOf("user");
  const choices: Array<{ label: string; scope: ConfigScope; path: string }> = [];
  if (project) choices.push({ label: `This project (${project.path})`, scope: "project", path: project.path });
  if (user) choices.push({ label: `All projects (${user.path})`, scope: "user", path: user.path });
  return choices;
}

const notAVariable = (word: string) =>
  `'${word}' is not an environment variable name (letters, digits and _; not starting with a digit).`;

/** Asks for a variable name until it is one (or the user gives up). */
async function askVariable(
  ctx: ExtensionCommandContext,
  title: string,
  placeholder: string,
): Promise<string | undefined> {
  for (let tries = 0; tries < 3; tries++) {
    const answer = (await ctx.ui.input(title, placeholder))?.trim();
    if (!answer) return undefined;
    if (isVariableName(answer)) return answer;
    ctx.ui.notify(notAVariable(answer), "warning");
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
  if (!ctx.hasUI) {
    show(
      ctx,
      '/mcp add asks its questions in pi\'s interactive mode. Without it, add the server to .pi/mcp.json (project) or ~/.pi/agent/mcp.json (user) under "mcpServers".',
      "warning",
    );
    return;
  }
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
  if (transport === "http") {
    const problem = checkUrl(endpoint);
    if (problem) {
      ctx.ui.notify(problem.replace("`url`", "The URL"), "error");
      return;
    }
  }
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
    if (choice === AUTH_CHOICES[1]) {
      const variable = await askVariable(
        ctx,
        "The environment variable that holds the token",
        `${name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_TOKEN`,
      );
      if (!variable) return cancelled();
      auth = { kind: "bearer", variable };
    } else if (choice === AUTH_CHOICES[2]) {
      const header = (await ctx.ui.input("The header that carries the key", "X-API-Key"))?.trim();
      if (!header) return cancelled();
      const variable = await askVariable(
        ctx,
        "The environment variable that holds the key",
        `${name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_API_KEY`,
      );
      if (!variable) return cancelled();
      auth = { kind: "api-key", header, variable };
    } else if (choice === AUTH_CHOICES[3]) {
      auth = { kind: "oauth" };
    }
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
  const scopes = scopeChoices(deps);
  const scopeChoice = await ctx.ui.select(
    "Save it where?",
    scopes.map((s) => s.label),
  );
  const target = scopes.find((s) => s.label === scopeChoice);
  if (!target) return ctx.ui.notify("No server added.", "info");
  const validated = validateServerEntry(name, entry, { scope: target.scope, path: target.path });
  if (!validated.config) {
    ctx.ui.notify(`That entry would not work: ${validated.errors.join("; ")}`, "error");
    return;
  }
  await saveAndStart(deps, ctx, name, entry, target.path);
}

/** A server added for this session only is in no file: says so, `why` after it, and returns true. */
function inNoFile(connection: ServerConnection, ctx: ExtensionCommandContext, why: string): boolean {
  const { scope, path } = connection.config.source;
  const text = `'${connection.name}' was added for this session only (${path})${why}.`;
  if (scope === "session") show(ctx, text, "warning");
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
    return show(
      ctx,
      `'${connection.name}' comes with ${from} (${source.path}) and cannot be removed; ${off} turns it off.`,
      "warning",
    );
  }
  if (ctx.hasUI && !(await ctx.ui.confirm("Remove?", `Remove MCP server '${connection.name}' from ${source.path}?`))) {
    return show(ctx, "Nothing removed.");
  }
  try {
    const written = await deps.bridge.writeConfig(source.path, (text) => {
      if (text === undefined) throw new Error("the file is gone");
      return removeServerEntry(text, connection.name);
    });
    reportTrust(ctx, written, [connection.name]);
  } catch (error) {
    return show(ctx, `Could not remove '${connection.name}' from ${source.path}: ${errorMessage(error)}`, "error");
  }
  deps.registry.syncServer(connection, []);
  await deps.bridge.remove(connection.name);
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
  let target = source.path;
  // A package's manifest is the package's own: an update would replace it, so the switch goes into the project's file.
  if ((source.scope === "bundled" || source.scope === "package") && project) target = project.path;
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
  try {
    reportTrust(
      ctx,
      await deps.bridge.writeConfig(target, (text) => setServerField(text, connection.name, "enabled", enabled)),
      [connection.name],
    );
  } catch (error) {
    return show(ctx, `Could not save it in ${target}: ${errorMessage(error)}`, "error");
  }
  const where = `in ${target}`;
  if (!enabled) {
    deps.registry.syncServer(connection, []);
    await connection.disable();
    return show(ctx, `Disabled MCP server '${connection.name}' ${where}; its tools are gone from this session.`);
  }
  // The saved entry may differ from the one this session started with only in `enabled`: start it now.
  try {
    const started = await deps.bridge.replace({ ...connection.config, enabled: true });
    show(
      ctx,
      `Enabled MCP server '${connection.name}' ${where}: ${started.status === "not started" ? "it starts on first use" : `${plural(started.tools.length, "tool")}`}.`,
    );
  } catch (error) {
    show(
      ctx,
      `Enabled MCP server '${connection.name}' ${where}, but it did not start: ${errorMessage(error)}`,
      "error",
    );
  }
}

function describeImport(server: ImportedServer): string {
  const args = ((server.entry.args as string[] | undefined) ?? []).filter((arg) => typeof arg === "string");
  const line = typeof server.entry.url === "string" ? server.entry.url : [server.entry.command, ...args].join(" ");
  // Another client's entry may hold a key inline: shown as `***`, like every secret the bridge shows.
  const what = new Redactor(argSecrets(args)).text(line);
  const lines = [`  ${server.name}  (${server.client}, ${server.sourcePath})  ${what}`];
  for (const note of server.notes) lines.push(`      note: ${note}`);
  if (server.inlineSecrets.length) lines.push(`      inline secrets: ${server.inlineSecrets.join(", ")}`);
  return lines.join("\n");
}

/** `/mcp import`: finds other clients' servers, shows them, and copies the chosen ones into a config file. */
export async function importServers(deps: CommandDeps, ctx: ExtensionCommandContext): Promise<void> {
  const { servers, errors } = await discoverImports(deps.importLocations());
  const problems = errors.length ? `\nCould not read:\n${errors.map((e) => `  ${e}`).join("\n")}` : "";
  if (servers.length === 0) {
    show(
      ctx,
      `No MCP servers found in the configs of Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Codex or opencode.${problems}`,
    );
    return;
  }
  const preview = `Found ${servers.length} MCP server${servers.length === 1 ? "" : "s"} in other clients:\n${servers.map(describeImport).join("\n")}${problems}`;
  if (!ctx.hasUI) return show(ctx, `${preview}\nRun /mcp import in pi's interactive mode to copy them.`);
  ctx.ui.notify(shown(preview, SHOWN.view), "info");
  const all = `Import all ${servers.length}`;
  const oneByOne = "Choose one by one";
  const how = await ctx.ui.select("Import which servers?", [all, oneByOne, "Cancel"]);
  if (how !== all && how !== oneByOne) return;
  let chosen = servers;
  if (how === oneByOne) {
    chosen = [];
    for (const server of servers)
      if (await ctx.ui.confirm(`Import '${server.name}'?`, describeImport(server))) chosen.push(server);
  }
  if (chosen.length === 0) {
    ctx.ui.notify("Nothing imported.", "info");
    return;
  }
  const scopes = scopeChoices(deps);
  const scopeChoice = await ctx.ui.select(
    "Save them where?",
    scopes.map((s) => s.label),
  );
  const target = scopes.find((s) => s.label === scopeChoice);
  if (!target) return;

  const skipped: string[] = [];
  const accepted: ImportedServer[] = [];
  const seen = new Set<string>();
  for (const server of chosen) {
    if (seen.has(server.name)) {
      skipped.push(`${server.name} (${server.client}): another client's '${server.name}' was taken first`);
      continue;
    }
    if (
      deps.bridge.connection(server.name) &&
      !(await ctx.ui.confirm(
        "Replace?",
        `A server named '${server.name}' is configured already. Replace it with ${server.client}'s?`,
      ))
    ) {
      skipped.push(`${server.name}: already configured`);
      continue;
    }
    // A project file is often committed: secrets written into it inline would leave the machine.
    if (target.scope === "project" && server.inlineSecrets.length) {
      // A select, not a confirm: pi's confirm offers "Yes" first, and Enter must not copy secrets.
      const answer = await ctx.ui.select(
        `Copy secrets into the project file? '${server.name}' has secrets written inline (${server.inlineSecrets.join(", ")}). A project file is often committed to version control.`,
        [SKIP_SECRETS, `Yes, copy them into ${target.path}`],
      );
      if (answer === undefined || answer === SKIP_SECRETS) {
        skipped.push(
          `${server.name}: has inline secrets (${server.inlineSecrets.join(", ")}); import it into the user config, or replace them with \${VAR}s`,
        );
        continue;
      }
    }
    seen.add(server.name);
    accepted.push(server);
  }
  if (accepted.length) {
    const names = accepted.map((server) => server.name);
    try {
      // The user picked these servers after seeing them: no second question about trusting them.
      const written = await deps.bridge.writeConfig(
        target.path,
        (text) => {
          let next = text;
          for (const server of accepted)
            next = setServerEntry(next, server.name, { ...server.entry, importedFrom: server.client });
          return next ?? "";
        },
        names,
      );
      reportTrust(ctx, written, names);
    } catch (error) {
      ctx.ui.notify(`Could not write ${target.path}: ${errorMessage(error)}`, "error");
      return;
    }
  }
  const skips = skipped.map((s) => `Skipped ${s}.`);
  if (accepted.length === 0) return show(ctx, ["Nothing imported.", ...skips].join("\n"));
  for (const server of accepted) {
    const unset = unsetVariablesNotice(server.name, server.entry, deps.env);
    if (unset) show(ctx, unset, "warning");
  }
  // Started at once, as /mcp add does: the user chose these servers to use them now.
  const told = accepted.map(({ name, client }) => ({
    name,
    told: `Imported '${name}' (${client}) into ${target.path}`,
  }));
  const outcomes = await startWritten(deps, ctx, told, target.path);
  show(
    ctx,
    [...outcomes.map((outcome) => outcome.text), ...skips].join("\n"),
    outcomes.some((outcome) => outcome.failed) ? "warning" : "info",
  );
}
