/**
 * Finds and reads other MCP clients' configurations, so `/mcp import` can offer to copy their servers. Ties the import
 * steps together: where each client keeps its files (./locations.ts), reading them (./client-servers.ts), converting
 * each entry (./convert.ts), rewriting its variables (./variables.ts), checking it with `validateServerEntry` and
 * finding inline secrets (./secrets.ts). Only `discoverImports` touches the file system.
 *
 * Values are never echoed into notes or errors: a config file often holds credentials, and the import UI shows both.
 */
import { readUtf8File, UnreadableTextError } from "../../common/utf8-file.ts";
import { quoteValue } from "../../common/text.ts";
import { isObject, type JsonObject } from "../../common/values.ts";
import * as path from "node:path";
import { isToggleOnly, parseConfigText } from "../parse.ts";
import { validateServerEntry } from "../validate/entry.ts";
import { convertEntry, Notes } from "./convert.ts";
import { candidateFiles } from "./locations.ts";
import { claudeProjects, LOCAL_NOTE, readClientServers } from "./client-servers.ts";
import { findInlineSecrets } from "./secrets.ts";
import {
  CLIENT_LABELS,
  type ClientConfigFile,
  describeClientFile,
  type ImportedServer,
  type ImportLocations,
  type ImportResult,
  type VsCodeInput,
} from "./import-types.ts";
import { rewriteVariables } from "./variables.ts";

/** Reads every candidate that exists (fs), parses it; missing files are skipped silently, unreadable/invalid ones reported. */
export async function discoverImports(loc: ImportLocations): Promise<ImportResult> {
  const results = await Promise.all(
    candidateFiles(loc).map(async (file): Promise<ImportResult> => {
      let text: string;
      try {
        text = await readUtf8File(file.path);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // A client that is not installed has no file (or not even its directory): nothing to say about it.
        if (code === "ENOENT" || code === "ENOTDIR") return { servers: [], errors: [] };
        const denied = code === "EACCES" || code === "EPERM";
        const why = code === "EISDIR" ? "it is a directory" : denied ? "permission denied" : (code ?? "unknown error");
        const reason = error instanceof UnreadableTextError ? error.message : why;
        return { servers: [], errors: [`${describeClientFile(file)}: cannot read the file: ${reason}`] };
      }
      return parseClientConfig(file, text, loc);
    }),
  );
  const servers = results.flatMap((r) => r.servers);
  // Claude Code uses this project's local-scope server (~/.claude.json) over the project's own (.mcp.json) of its name.
  const local = new Set(servers.filter((s) => s.notes.includes(LOCAL_NOTE)).map((s) => s.name));
  const mcpJson = candidateFiles(loc).find((f) => f.client === "claude-code" && f.scope === "project")?.path;
  const shadowed = (s: ImportedServer) => s.sourcePath === mcpJson && local.has(s.name);
  const { rejected, off } = mcpJson ? await offInClaudeCode(loc, mcpJson) : { rejected: [], off: [] };
  for (const s of servers) {
    const ours = s.sourcePath === mcpJson || s.notes.includes(LOCAL_NOTE);
    const why =
      s.sourcePath === mcpJson && rejected.includes(s.name)
        ? "disabled in Claude Code (disabledMcpjsonServers)"
        : ours && off.includes(s.name)
          ? "switched off for this project in Claude Code (disabledMcpServers)"
          : undefined;
    if (!why || s.entry.enabled === false) continue;
    s.entry.enabled = false;
    s.notes.push(`${why}; imported with "enabled": false`);
  }
  return { servers: servers.filter((s) => !shadowed(s)), errors: results.flatMap((r) => r.errors) };
}

/**
 * What the user switched off in Claude Code: the project's .mcp.json servers it rejected (`disabledMcpjsonServers` of
 * its settings, the project's and the user's, or of the project's entry in ~/.claude.json), and this project's servers
 * switched off in its /mcp menu (`disabledMcpServers` of that entry).
 */
async function offInClaudeCode(loc: ImportLocations, mcpJson: string): Promise<Record<"rejected" | "off", unknown[]>> {
  const read = async (file: string) => parseConfigText(await readUtf8File(file).catch(() => "")).value;
  const claudeJson = candidateFiles(loc).find((f) => f.client === "claude-code" && f.scope === "user");
  const local = claudeJson && (await read(claudeJson.path));
  const projects = isObject(local) ? claudeProjects(local, loc) : [];
  // The user's settings are beside ~/.claude.json in CLAUDE_CONFIG_DIR, else in ~/.claude.
  const own = loc.env.CLAUDE_CONFIG_DIR?.trim() ? loc.env.CLAUDE_CONFIG_DIR : path.join(loc.home, ".claude");
  const files = ["settings.json", "settings.local.json"].map((f) => path.join(mcpJson, "..", ".claude", f));
  const settings = await Promise.all([...files, path.join(own, "settings.json")].map(read));
  const listed = (docs: unknown[], key: string) =>
    docs.flatMap((doc) => (isObject(doc) && Array.isArray(doc[key]) ? doc[key] : []));
  return {
    rejected: listed([...settings, ...projects], "disabledMcpjsonServers"),
    off: listed(projects, "disabledMcpServers"),
  };
}

/** Parses one file's text. Never throws: problems come back as `errors`. */
export function parseClientConfig(file: ClientConfigFile, text: string, loc: ImportLocations): ImportResult {
  const where = describeClientFile(file);
  try {
    const found = readClientServers(file, text, loc);
    if ("error" in found) return { servers: [], errors: [`${where}: ${found.error}`] };
    const servers: ImportedServer[] = [];
    const errors: string[] = [];
    for (const { name, raw, notes } of found.servers) {
      // `{"enabled": false}` alone switches off a server defined elsewhere (opencode's remote defaults): nothing to copy.
      if (isToggleOnly(raw)) continue;
      if (!isObject(raw)) {
        errors.push(`${where}: server ${quoteValue(name, 60)}: the entry must be an object; not imported`);
        continue;
      }
      const result = importServer(file, name, raw, notes, found.inputs, loc);
      if ("error" in result) errors.push(`${where}: server ${quoteValue(name, 60)}: ${result.error}; not imported`);
      else servers.push(result.server);
    }
    return { servers, errors };
  } catch (error) {
    // Only a bug gets here; the message is ours (the parsers' messages are not passed through), so it holds no values.
    const name = error instanceof Error ? error.name : "unknown error";
    return { servers: [], errors: [`${where}: could not be read (${name})`] };
  }
}

/** One entry as mcp-bridge would load it, or why it cannot be imported. */
function importServer(
  file: ClientConfigFile,
  name: string,
  raw: JsonObject,
  placeNotes: string[],
  inputs: Map<string, VsCodeInput>,
  loc: ImportLocations,
): { server: ImportedServer } | { error: string } {
  const notes = new Notes();
  for (const note of placeNotes) notes.add(note);
  const label = CLIENT_LABELS[file.client];
  const entry = convertEntry(file.client, raw, notes);
  rewriteVariables(file.client, entry, { loc, inputs, notes, label });
  if (entry.enabled === false) notes.add(`disabled in ${label}; imported with "enabled": false`);

  const result = validateServerEntry(name, entry, { scope: file.scope, path: file.path });
  if (!result.config) {
    // A URL can carry a key in its query, and `checkUrl` quotes it: keep it out of the message.
    const url = typeof entry.url === "string" ? entry.url : undefined;
    const errors = result.errors.map((e) =>
      url && url.length > 0 ? e.split(quoteValue(url)).join("(the url)").split(url).join("(the url)") : e,
    );
    return { error: errors.join("; ") };
  }
  const inlineSecrets = findInlineSecrets(entry);
  return { server: { name, client: file.client, sourcePath: file.path, entry, notes: notes.list, inlineSecrets } };
}
