/**
 * `/mcp add` with words after it: the one-line form (../config/add-arguments.ts). It asks nothing it can do without,
 * so it works without a UI too (`pi -p "/mcp add fs -- npx -y @modelcontextprotocol/server-filesystem ."`, a script,
 * an agent). Both forms write the entry and start the server in this session at once (`saveAndStart`).
 */
import type { ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { errorMessage } from "../common/errors.ts";
import { plural } from "../common/text.ts";
import { readUtf8File } from "../common/utf8-file.ts";
import { ADD_USAGE, parseAddLine } from "../config/add-arguments.ts";
import { unsetVariablesNotice } from "../config/add-server.ts";
import { remoteOfProxy } from "../config/import/mcp-remote.ts";
import { findInlineSecrets } from "../config/import/secrets.ts";
import type { ServerConfig } from "../config/types.ts";
import type { ServerConnection } from "../connection/server-connection.ts";
import { validateServerEntry } from "../config/validate/entry.ts";
import { filesystemDirectoriesDropped } from "../config/validate/usage.ts";
import { commandArgument } from "../config/validate/name.ts";
import { serverNames, setServerEntry } from "../config/write/server-edits.ts";
import { type CommandDeps, failed, reportTrust, sessionHolds, show } from "./command-context.ts";

/** The names of the servers a config file defines; none when it is missing or does not parse (then it is not written). */
async function namesIn(file: string): Promise<string[]> {
  try {
    return serverNames(await readUtf8File(file));
  } catch {
    return [];
  }
}

/** What became of the server this session started for the new entry. */
function startedText(config: ServerConfig, status: string, tools: number): string {
  if (status === "needs sign-in") return `it needs a sign-in: /mcp auth ${commandArgument(config.name)}`;
  if (status === "not started") return config.enabled ? "it starts on first use" : "it is disabled";
  return status === "connected" ? `connected, ${plural(tools, "tool")}` : status;
}

/** `/mcp add <server> [options] (-- <command> [args…] | --url <url>)`: writes the entry and starts the server. */
export async function addServerLine(deps: CommandDeps, words: readonly string[], ctx: ExtensionCommandContext) {
  const refuse = (text: string) => failed(ctx, text);
  const parsed = parseAddLine(words);
  if ("error" in parsed) return refuse(`${parsed.error}\n${ADD_USAGE}`);
  const { name, scope, replace } = parsed.line;
  let entry = parsed.line.entry;
  // `npx mcp-remote <url>` (a stdio proxy to a remote server, from another client's README): reached directly.
  const notes: string[] = [];
  const remote = remoteOfProxy(entry, { add: (note) => notes.push(note) });
  if (remote) {
    const { exposure, description } = entry;
    entry = {
      ...remote,
      ...(exposure !== undefined && { exposure }),
      ...(description !== undefined && { description }),
    };
    show(ctx, `mcp-remote: ${notes.join("; ")}.`);
  }
  // The directories named are where the user means it to work, not the project root it would be offered instead.
  if (filesystemDirectoriesDropped(entry).length) entry = { ...entry, roots: false };
  const target = deps.bridge.sourceOf(scope);
  if (!target) return refuse(`There is no ${scope} config file to add '${name}' to.`);
  const validated = validateServerEntry(name, entry, target);
  if (!validated.config) return refuse(`That entry would not work: ${validated.errors.join("; ")}.`);

  // A project file is often committed: secrets written into it inline would leave the machine.
  const secrets = scope === "project" ? findInlineSecrets(entry) : [];
  if (secrets.length > 0)
    return refuse(
      `Not added: '${name}' would write secrets into the project file ${target.path} (${secrets.join(", ")}), which is often committed. Pass them from your environment (--env NAME, or \${NAME} in a header), or leave out --local to add it to your own file.`,
    );
  if (!replace && (await namesIn(target.path)).includes(name)) {
    const there = `'${name}' is in ${target.path} already`;
    if (!ctx.hasUI) return refuse(`Not added: ${there}; /mcp add --replace replaces its entry.`);
    if (!(await ctx.ui.confirm("Replace?", `${there}. Replace its entry?`))) return show(ctx, "No server added.");
  }
  await saveAndStart(deps, ctx, name, entry, target.path);
}

/** Both forms of `/mcp add` end here: the entry is written into `file`, and the server it defines started. */
export async function saveAndStart(
  deps: CommandDeps,
  ctx: ExtensionCommandContext,
  name: string,
  entry: Record<string, unknown>,
  file: string,
): Promise<void> {
  if (sessionHolds(deps, name)) return failed(ctx, sessionHolds(deps, name)!);
  try {
    // The user wrote this entry just now: it needs no question about trusting it.
    reportTrust(ctx, await deps.bridge.writeConfig(file, (text) => setServerEntry(text, name, entry), [name]), [name]);
  } catch (error) {
    return failed(ctx, `Could not save '${name}' to ${file}: ${errorMessage(error)}`);
  }
  const unset = unsetVariablesNotice(name, entry, deps.env);
  if (unset) show(ctx, unset, "warning");
  const [outcome] = await startWritten(deps, ctx, [{ name, told: `Added MCP server '${name}' to ${file}` }], file);
  if (outcome?.failed) failed(ctx, outcome.text);
  else show(ctx, outcome?.text ?? "");
}

/** What became of a server whose entry was just written, in a sentence; `failed` where it did not start. */
export interface WrittenStart {
  text: string;
  failed?: boolean;
}

/**
 * Starts the servers the files now define under the names written into `file`, together, where that entry is the one
 * in effect; `told` is how each sentence begins ("Added MCP server 'x' to …"). Writing an entry was the consent a
 * project server needs: trusted for this session at once (the write recorded it for later ones), as `/mcp trust` would.
 */
export async function startWritten(
  deps: CommandDeps,
  ctx: ExtensionCommandContext,
  written: ReadonlyArray<{ name: string; told: string }>,
  file: string,
): Promise<WrittenStart[]> {
  const all = await deps.bridge.configured();
  const configs = written.map(({ name }) => all.find((config) => config.name === name));
  const starting = configs.filter((config): config is ServerConfig => config?.source.path === file);
  // Tools of an entry a new one replaced leave now; the new server's arrive as it connects.
  for (const { name } of starting) {
    const old = deps.bridge.connection(name);
    if (old) deps.registry.syncServer(old, []);
  }
  // An npx server may take a while to install: the TUI says what it waits for meanwhile.
  const names = starting.map(({ name }) => `'${name}'`).join(", ");
  if (ctx.hasUI && names)
    ctx.ui.notify(`Starting MCP ${starting.length === 1 ? "server" : "servers"} ${names}…`, "info");
  const untrusted = starting.filter((config) => !deps.bridge.trust.allows(config));
  const trusting = Promise.all(untrusted.map((config) => deps.bridge.renew(config))).then((renewed) =>
    renewed.length ? deps.bridge.trust.trust(renewed) : [],
  );
  const start = async (config: ServerConfig): Promise<ServerConnection> => {
    if (!untrusted.includes(config)) return deps.bridge.replace(config);
    const result = (await trusting).find(({ connection }) => connection.name === config.name);
    if (result?.error !== undefined) throw result.error;
    return result!.connection;
  };
  return Promise.all(
    configs.map(async (config, i): Promise<WrittenStart> => {
      const told = written[i]!.told;
      if (!config) return { text: `${told}.` };
      if (config.source.path !== file)
        return { text: `${told}; the entry in ${config.source.path} comes first, so that one stays in effect.` };
      try {
        const started = await start(config);
        return { text: `${told}: ${startedText(config, started.status, started.tools.length)}.` };
      } catch (error) {
        return { text: `${told}, but it did not start: ${errorMessage(error)}`, failed: true };
      }
    }),
  );
}
