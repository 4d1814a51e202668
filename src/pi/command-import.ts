/**
 * `/mcp import`: copies the servers of other MCP clients (../config/import/) into a config file and starts them. Asked
 * step by step in the TUI; with words after it (`/mcp import --all`, `/mcp import github fs --local`) nothing is asked,
 * so a script or `pi -p` can import too, and what the questions would have decided follows from the words.
 */
import { parseArgs } from "node:util";
import type { ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { errorMessage } from "../common/errors.ts";
import { Redactor } from "../common/redact.ts";
import { shown, SHOWN } from "../common/terminal-text.ts";
import { plural } from "../common/text.ts";
import { unsetVariablesNotice } from "../config/add-server.ts";
import { discoverImports } from "../config/import/discover.ts";
import { pathSecrets } from "../config/import/secrets.ts";
import type { ImportedServer } from "../config/import/import-types.ts";
import { argSecrets, inlineEnvSecrets } from "../config/substitute.ts";
import type { ConfigScope } from "../config/types.ts";
import { setServerEntry } from "../config/write/server-edits.ts";
import { startWritten } from "./command-add.ts";
import { type CommandDeps, failed, reportTrust, sessionHolds, show } from "./command-context.ts";
import { askTarget } from "./command-config.ts";

const IMPORT_USAGE = `Usage: /mcp import                      shows what other clients have, and asks what to copy
       /mcp import --all [options]        copies every server found
       /mcp import <server>... [options]  copies the servers named
Options:
  -l, --local     into this project's .pi/mcp.json (default: your own mcp.json); --scope project|user says the same
  --replace       replace a server of the same name that is configured already (else it is skipped)`;

/** The options after `/mcp import`, for completion. */
export const IMPORT_OPTION_NAMES = ["--all", "--local", "--scope", "--replace"];

const SKIP_SECRETS = "No, skip this server";

/** Where the imported servers go and what to do where a question would be asked. */
interface Choices {
  chosen: ImportedServer[];
  target: { scope: ConfigScope; path: string };
  /** Whether a server of the same name that is configured already is replaced; `notReplaced` says how it would be. */
  replace: (server: ImportedServer) => Promise<boolean>;
  notReplaced?: string;
  /** Whether secrets written inline are copied into the project's file. */
  copySecrets: (server: ImportedServer, path: string) => Promise<boolean>;
}

function describeImport(server: ImportedServer): string {
  const args = ((server.entry.args as string[] | undefined) ?? []).filter((arg) => typeof arg === "string");
  const { url } = server.entry;
  const line = typeof url === "string" ? url : [server.entry.command, ...args].join(" ");
  // Another client's entry may hold a key inline (a flag's value, a URL's password or query): shown as `***`.
  const what = new Redactor([
    ...argSecrets(args),
    ...args.filter((_arg, i) => server.inlineSecrets.includes(`args[${i}]`)),
    ...(typeof url === "string" ? [...inlineEnvSecrets("url", url), ...pathSecrets(url)] : []),
  ]).text(line);
  const lines = [`  ${server.name}  (${server.client}, ${server.sourcePath})  ${what}`];
  for (const note of server.notes) lines.push(`      note: ${note}`);
  if (server.inlineSecrets.length) lines.push(`      inline secrets: ${server.inlineSecrets.join(", ")}`);
  return lines.join("\n");
}

/** `/mcp import [words]`: finds other clients' servers and copies the chosen ones into a config file. */
export async function importServers(deps: CommandDeps, words: readonly string[], ctx: ExtensionCommandContext) {
  const { servers, errors } = await discoverImports(deps.importLocations());
  const problems = errors.length ? `\nCould not read:\n${errors.map((e) => `  ${e}`).join("\n")}` : "";
  if (servers.length === 0) {
    const none = `No MCP servers found in the configs of Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Codex or opencode.${problems}`;
    return words.length ? failed(ctx, none) : show(ctx, none);
  }
  const preview = `Found ${plural(servers.length, "MCP server")} in other clients:\n${servers.map(describeImport).join("\n")}${problems}`;
  // With words no list is shown: what could not be imported is said all the same.
  if (words.length && problems) show(ctx, problems.trimStart(), "warning");
  if (words.length === 0 && !ctx.hasUI)
    return show(ctx, `${preview}\nRun /mcp import --all, or /mcp import <server>..., to copy them.`);
  const choices = words.length ? fromWords(deps, servers, words, ctx) : await askChoices(deps, servers, preview, ctx);
  if (choices) await copy(deps, choices, ctx);
}

/** What the words say, or undefined when they say something wrong (said why). */
function fromWords(
  deps: CommandDeps,
  servers: readonly ImportedServer[],
  words: readonly string[],
  ctx: ExtensionCommandContext,
): Choices | undefined {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...words],
      allowPositionals: true,
      options: {
        all: { type: "boolean" },
        local: { type: "boolean", short: "l" },
        scope: { type: "string", short: "s" },
        replace: { type: "boolean" },
      },
    });
  } catch (error) {
    return void failed(ctx, `${errorMessage(error)}\n${IMPORT_USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.scope !== undefined && values.scope !== "project" && values.scope !== "user")
    return void failed(ctx, `--scope is project or user, not '${values.scope}'.\n${IMPORT_USAGE}`);
  if (values.local && values.scope === "user")
    return void failed(ctx, `--local and --scope user say different files.\n${IMPORT_USAGE}`);
  const named = positionals.length > 0;
  if ((values.all === true) === named)
    return void failed(ctx, `Name the servers to import, or say --all (not both).\n${IMPORT_USAGE}`);
  const unknown = positionals.filter((name) => !servers.some((server) => server.name === name));
  if (unknown.length)
    return void failed(
      ctx,
      `Not found in other clients' configs: ${unknown.join(", ")}. Found: ${[...new Set(servers.map((s) => s.name))].join(", ")}.`,
    );
  const scope = values.local || values.scope === "project" ? "project" : "user";
  const target = deps.bridge.sourceOf(scope);
  if (!target) return void failed(ctx, `There is no ${scope} config file to import into.`);
  return {
    chosen: values.all ? [...servers] : servers.filter((server) => positionals.includes(server.name)),
    target: { scope, path: target.path },
    replace: async () => values.replace === true,
    notReplaced: " (--replace replaces it)",
    copySecrets: async () => false,
  };
}

/** What the user answers, step by step; undefined when they cancel. */
async function askChoices(
  deps: CommandDeps,
  servers: readonly ImportedServer[],
  preview: string,
  ctx: ExtensionCommandContext,
): Promise<Choices | undefined> {
  ctx.ui.notify(shown(preview, SHOWN.view), "info");
  const all = `Import all ${servers.length}`;
  const oneByOne = "Choose one by one";
  const how = await ctx.ui.select("Import which servers?", [all, oneByOne, "Cancel"]);
  if (how !== all && how !== oneByOne) return undefined;
  let chosen = [...servers];
  if (how === oneByOne) {
    chosen = [];
    for (const server of servers)
      if (await ctx.ui.confirm(`Import '${server.name}'?`, describeImport(server))) chosen.push(server);
  }
  if (chosen.length === 0) return void ctx.ui.notify("Nothing imported.", "info");
  const target = await askTarget(deps, ctx, "Save them where?");
  if (!target) return undefined;
  return {
    chosen,
    target,
    replace: (server) =>
      ctx.ui.confirm(
        "Replace?",
        `A server named '${server.name}' is configured already. Replace it with ${server.client}'s?`,
      ),
    copySecrets: async (server, path) => {
      // A select, not a confirm: pi's confirm offers "Yes" first, and Enter must not copy secrets.
      const answer = await ctx.ui.select(
        `Copy secrets into the project file? '${server.name}' has secrets written inline (${server.inlineSecrets.join(", ")}). A project file is often committed to version control.`,
        [SKIP_SECRETS, `Yes, copy them into ${path}`],
      );
      return answer !== undefined && answer !== SKIP_SECRETS;
    },
  };
}

/** Writes the chosen servers into the target file and starts them, saying of each what became of it. */
async function copy(deps: CommandDeps, choices: Choices, ctx: ExtensionCommandContext) {
  const { chosen, target, replace, copySecrets, notReplaced = "" } = choices;
  const skipped: string[] = [];
  const accepted: ImportedServer[] = [];
  for (const server of chosen) {
    if (accepted.some((taken) => taken.name === server.name)) {
      skipped.push(`${server.name} (${server.client}): another client's '${server.name}' was taken first`);
      continue;
    }
    // Its extension's, in no file: an entry written under its name would take it from that extension.
    if (sessionHolds(deps, server.name)) {
      skipped.push(`${server.name}: the name of a server added for this session`);
      continue;
    }
    if (deps.bridge.connection(server.name) && !(await replace(server))) {
      skipped.push(`${server.name}: already configured${notReplaced}`);
      continue;
    }
    // A project file is often committed: secrets written into it inline would leave the machine.
    if (target.scope === "project" && server.inlineSecrets.length && !(await copySecrets(server, target.path))) {
      skipped.push(
        `${server.name}: has inline secrets (${server.inlineSecrets.join(", ")}); import it into the user config, or replace them with \${VAR}s`,
      );
      continue;
    }
    accepted.push(server);
  }
  const skips = skipped.map((s) => `Skipped ${s}.`);
  const nothing = ["Nothing imported.", ...skips].join("\n");
  // Declining every server in the TUI is no failure; a script that imported nothing should know.
  if (accepted.length === 0) return ctx.hasUI ? show(ctx, nothing) : failed(ctx, nothing);
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
    return failed(ctx, `Could not write ${target.path}: ${errorMessage(error)}`);
  }
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
  const report = [...outcomes.map((outcome) => outcome.text), ...skips].join("\n");
  if (outcomes.some((outcome) => outcome.failed)) failed(ctx, report, "warning");
  else show(ctx, report);
}
