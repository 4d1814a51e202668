/**
 * Reading a client's config file: JSON(C) for most clients, TOML for Codex, each with its server map in its own
 * place. The entries come back as written, with the VS Code inputs they may refer to. Pure.
 */
import { parse as parseToml } from "smol-toml";
import { isObject, type JsonObject } from "../../common/values.ts";
import { parseConfigText, splitBom } from "../parse.ts";
import type { ClientConfigFile, ImportLocations, VsCodeInput } from "./import-types.ts";

/** One server as a client wrote it. */
interface RawServer {
  name: string;
  raw: unknown;
  /** Notes that come from where the entry was found, not from its fields. */
  notes: string[];
}

export type ClientServers = { servers: RawServer[]; inputs: Map<string, VsCodeInput> } | { error: string };

/** The servers of one file's text, or why the file cannot be read; the error never quotes the file. */
export function readClientServers(file: ClientConfigFile, text: string, loc: ImportLocations): ClientServers {
  return file.client === "codex" ? codexServers(text) : jsonServers(file, text, loc);
}

function mapEntries(map: JsonObject, notes: string[] = []): RawServer[] {
  return Object.entries(map).map(([name, raw]) => ({ name, raw, notes: [...notes] }));
}

function jsonServers(file: ClientConfigFile, text: string, loc: ImportLocations): ClientServers {
  const parsed = parseConfigText(text);
  if (parsed.error !== undefined) return { error: parsed.error };
  const doc = parsed.value;
  if (!isObject(doc)) return { error: "the file does not hold a JSON object" };
  const inputs = new Map<string, VsCodeInput>();

  const single = (key: string): ClientServers => {
    const map = doc[key];
    if (map === undefined || map === null) return { servers: [], inputs };
    if (!isObject(map)) return { error: `\`${key}\` must be an object mapping server names to their settings` };
    return { servers: mapEntries(map), inputs };
  };

  switch (file.client) {
    case "vscode":
      for (const input of Array.isArray(doc.inputs) ? doc.inputs : []) {
        if (!isObject(input) || typeof input.id !== "string") continue;
        inputs.set(input.id, {
          id: input.id,
          description: typeof input.description === "string" ? input.description : undefined,
          password: input.password === true,
          default: typeof input.default === "string" ? input.default : undefined,
        });
      }
      return single("servers");
    case "opencode": {
      // Newer opencode nests the map one level down, under `mcp.servers`; a v1 server that happens to be called
      // "servers" has its own `type`, `command` or `url`.
      const nested = isObject(doc.mcp) ? doc.mcp.servers : undefined;
      if (isObject(nested) && !("type" in nested) && !("command" in nested) && !("url" in nested))
        return { servers: mapEntries(nested), inputs };
      return single("mcp");
    }
    case "claude-code":
      return claudeCodeServers(doc, loc, inputs);
    default:
      return single("mcpServers");
  }
}

export const LOCAL_NOTE = "from Claude Code's local scope: it applies to this project only";

/**
 * Claude Code's `.mcp.json` holds the project's servers. `~/.claude.json` holds the user scope at the top and the local
 * scope (one project only) under `projects["<absolute path>"]`; Claude Code prefers a local server to a user one of the
 * same name, and so does the import.
 */
function claudeCodeServers(doc: JsonObject, loc: ImportLocations, inputs: Map<string, VsCodeInput>): ClientServers {
  const user = doc.mcpServers;
  if (user !== undefined && user !== null && !isObject(user))
    return { error: "`mcpServers` must be an object mapping server names to their settings" };
  const local = claudeProjects(doc, loc).findLast((settings) => isObject(settings.mcpServers))?.mcpServers as
    JsonObject | undefined;
  const servers = local ? mapEntries(local, [LOCAL_NOTE]) : [];
  for (const server of servers)
    if (isObject(user) && server.name in user)
      server.notes.push("replaces Claude Code's user-scope server of the same name, as in Claude Code");
  for (const server of isObject(user) ? mapEntries(user) : [])
    if (!local || !(server.name in local)) servers.push(server);
  return { servers, inputs };
}

/** This project's entries in `~/.claude.json` (its local-scope servers, its answers about `.mcp.json`). */
export function claudeProjects(doc: JsonObject, loc: Pick<ImportLocations, "projectRoot" | "platform">): JsonObject[] {
  const wanted = projectKey(loc.projectRoot, loc.platform);
  return Object.entries(isObject(doc.projects) ? doc.projects : {})
    .filter(([dir, settings]) => projectKey(dir, loc.platform) === wanted && isObject(settings))
    .map(([, settings]) => settings as JsonObject);
}

/** `~/.claude.json` keys projects by absolute path, with forward slashes on Windows. */
function projectKey(dir: string, platform: NodeJS.Platform): string {
  let key = dir.replace(/\\/g, "/");
  if (key.length > 1) key = key.replace(/\/+$/, "");
  return platform === "win32" ? key.toLowerCase() : key;
}

function codexServers(text: string): ClientServers {
  let doc: JsonObject;
  try {
    doc = parseToml(splitBom(text).body);
  } catch (error) {
    // smol-toml's message ends with the offending lines, which may hold a token: keep only its first line.
    const line = typeof (error as { line?: unknown }).line === "number" ? (error as { line: number }).line : undefined;
    const column =
      typeof (error as { column?: unknown }).column === "number" ? (error as { column: number }).column : undefined;
    const reason =
      (error instanceof Error ? error.message : "").split("\n")[0]!.replace(/^Invalid TOML document:\s*/, "") ||
      "syntax error";
    return { error: `not valid TOML: ${reason}${line !== undefined ? ` at line ${line}, column ${column}` : ""}` };
  }
  const map = doc.mcp_servers;
  if (map === undefined) return { servers: [], inputs: new Map() };
  if (!isObject(map)) return { error: "`mcp_servers` must be a table of servers ([mcp_servers.<name>])" };
  return { servers: mapEntries(map), inputs: new Map() };
}
