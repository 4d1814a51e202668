/**
 * Finds and reads other MCP clients' configurations, so `/mcp import` can offer to copy their servers. Parsing is pure;
 * only `discoverImports` touches the file system, and every location comes from the `ImportLocations` passed in.
 *
 * Each imported entry is rewritten into mcp-bridge's own format (and checked with `validateServerEntry`), so it can be
 * written into `.pi/mcp.json` or the user file as is. Values are never echoed into notes or errors: a config file often
 * holds credentials, and the import UI shows both.
 */
import { readFile } from "node:fs/promises";
import * as path from "node:path";
import { parse as parseToml } from "smol-toml";
import { isToggleOnly, parseConfigText } from "./parse.ts";
import { validateServerEntry } from "./validate/entry.ts";
import { isObject, type JsonObject } from "../common/values.ts";

export type ClientId = "claude-desktop" | "claude-code" | "cursor" | "vscode" | "windsurf" | "codex" | "opencode";

export interface ImportedServer {
  name: string;
  client: ClientId;
  sourcePath: string;
  /** An entry in mcp-bridge's own format, ready to write into .pi/mcp.json or the user file (validateServerEntry must accept it). */
  entry: Record<string, unknown>;
  /** Human notes: `${input:…}` prompts turned into ${VAR}s, an unsupported field dropped, a disabled server, … */
  notes: string[];
  /** Inline values that look like secrets (in env or headers, not `${VAR}` references): their keys, never their values. */
  inlineSecrets: string[];
}

export interface ImportLocations {
  home: string;
  projectRoot: string;
  platform: NodeJS.Platform;
  env: Record<string, string | undefined>;
}

export interface ClientConfigFile {
  client: ClientId;
  path: string;
  scope: "user" | "project";
}

export const CLIENT_LABELS: Readonly<Record<ClientId, string>> = {
  "claude-desktop": "Claude Desktop",
  "claude-code": "Claude Code",
  cursor: "Cursor",
  vscode: "VS Code",
  windsurf: "Windsurf",
  codex: "Codex",
  opencode: "opencode",
};



// ---------------------------------------------------------------------------------------------------------------------
// Where each client keeps its configuration
// ---------------------------------------------------------------------------------------------------------------------

/** Every config file each client documents, for this platform (whether or not it exists). */
export function candidateFiles(loc: ImportLocations): ClientConfigFile[] {
  // Paths are built for the target platform, not the one running the code, so Windows paths can be tested anywhere.
  const p = loc.platform === "win32" ? path.win32 : path.posix;
  const fromEnv = (name: string): string | undefined => {
    const value = loc.env[name];
    return value !== undefined && value.trim() !== "" ? value : undefined;
  };
  const { home, projectRoot: root } = loc;
  // Electron apps (Claude Desktop, VS Code) keep their settings in the platform's application-data directory.
  const appData =
    loc.platform === "win32"
      ? (fromEnv("APPDATA") ?? p.join(home, "AppData", "Roaming"))
      : loc.platform === "darwin"
        ? p.join(home, "Library", "Application Support")
        : (fromEnv("XDG_CONFIG_HOME") ?? p.join(home, ".config"));
  // opencode uses XDG directories on every platform, Windows and macOS included.
  const xdgConfig = fromEnv("XDG_CONFIG_HOME") ?? p.join(home, ".config");
  const codexHome = fromEnv("CODEX_HOME") ?? p.join(home, ".codex");
  const claudeDir = fromEnv("CLAUDE_CONFIG_DIR") ?? home;
  const opencodeConfig = fromEnv("OPENCODE_CONFIG");

  const files: ClientConfigFile[] = [
    { client: "claude-desktop", scope: "user", path: p.join(appData, "Claude", "claude_desktop_config.json") },
    { client: "claude-code", scope: "project", path: p.join(root, ".mcp.json") },
    { client: "claude-code", scope: "user", path: p.join(claudeDir, ".claude.json") },
    { client: "cursor", scope: "project", path: p.join(root, ".cursor", "mcp.json") },
    { client: "cursor", scope: "user", path: p.join(home, ".cursor", "mcp.json") },
    { client: "vscode", scope: "project", path: p.join(root, ".vscode", "mcp.json") },
    { client: "vscode", scope: "user", path: p.join(appData, "Code", "User", "mcp.json") },
    { client: "windsurf", scope: "user", path: p.join(home, ".codeium", "windsurf", "mcp_config.json") },
    { client: "codex", scope: "project", path: p.join(root, ".codex", "config.toml") },
    { client: "codex", scope: "user", path: p.join(codexHome, "config.toml") },
    { client: "opencode", scope: "project", path: p.join(root, "opencode.json") },
    { client: "opencode", scope: "project", path: p.join(root, "opencode.jsonc") },
    { client: "opencode", scope: "user", path: p.join(xdgConfig, "opencode", "opencode.json") },
    { client: "opencode", scope: "user", path: p.join(xdgConfig, "opencode", "opencode.jsonc") },
    { client: "opencode", scope: "user", path: p.join(xdgConfig, "opencode", "config.json") },
  ];
  if (opencodeConfig !== undefined) files.push({ client: "opencode", scope: "user", path: p.resolve(root, opencodeConfig) });

  // With the project root at the home directory, a project file and a user file are the same file: read it once, as
  // the user file it really is (`~/.cursor/mcp.json` is Cursor's global configuration whatever directory pi is in).
  const byPath = new Map<string, ClientConfigFile>();
  for (const file of files) {
    const key = loc.platform === "win32" ? file.path.toLowerCase() : file.path;
    const earlier = byPath.get(key);
    if (earlier) earlier.scope = "user";
    else byPath.set(key, file);
  }
  return [...byPath.values()];
}

// ---------------------------------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------------------------------

function where(file: ClientConfigFile): string {
  return `${CLIENT_LABELS[file.client]} config ${file.path}`;
}

interface RawServer {
  name: string;
  raw: unknown;
  /** Notes that come from where the entry was found, not from its fields. */
  notes: string[];
}

/** Parses one file's text. Never throws: problems come back as `errors`. */
export function parseClientConfig(
  file: ClientConfigFile,
  text: string,
  loc: ImportLocations,
): { servers: ImportedServer[]; errors: string[] } {
  try {
    const found = file.client === "codex" ? codexServers(text) : jsonServers(file, text, loc);
    if ("error" in found) return { servers: [], errors: [`${where(file)}: ${found.error}`] };
    const servers: ImportedServer[] = [];
    const errors: string[] = [];
    for (const { name, raw, notes } of found.servers) {
      // `{"enabled": false}` alone switches off a server defined elsewhere (opencode's remote defaults): nothing to copy.
      if (isToggleOnly(raw)) continue;
      if (!isObject(raw)) {
        errors.push(`${where(file)}: server "${name}": the entry must be an object; not imported`);
        continue;
      }
      const result = convertServer(file, name, raw, notes, found.inputs, loc);
      if ("error" in result) errors.push(`${where(file)}: server "${name}": ${result.error}; not imported`);
      else servers.push(result.server);
    }
    return { servers, errors };
  } catch (error) {
    // Only a bug gets here; the message is ours (the parsers' messages are not passed through), so it holds no values.
    return { servers: [], errors: [`${where(file)}: could not be read (${error instanceof Error ? error.name : "unknown error"})`] };
  }
}

interface VsCodeInput {
  id: string;
  description?: string;
  password: boolean;
  default?: string;
}

type Found = { servers: RawServer[]; inputs: Map<string, VsCodeInput> } | { error: string };

function mapEntries(map: JsonObject, notes: string[] = []): RawServer[] {
  return Object.entries(map).map(([name, raw]) => ({ name, raw, notes: [...notes] }));
}

function jsonServers(file: ClientConfigFile, text: string, loc: ImportLocations): Found {
  const parsed = parseConfigText(text);
  if (parsed.error !== undefined) return { error: parsed.error };
  const doc = parsed.value;
  if (!isObject(doc)) return { error: "the file does not hold a JSON object" };
  const inputs = new Map<string, VsCodeInput>();

  const single = (key: string): Found => {
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
      const mcp = doc.mcp;
      if (mcp === undefined || mcp === null) return { servers: [], inputs };
      if (!isObject(mcp)) return { error: "`mcp` must be an object mapping server names to their settings" };
      // Newer opencode nests the map one level down, under `mcp.servers`; a v1 server that happens to be called
      // "servers" has its own `type`, `command` or `url`.
      const nested = mcp.servers;
      if (isObject(nested) && !("type" in nested) && !("command" in nested) && !("url" in nested)) return { servers: mapEntries(nested), inputs };
      return { servers: mapEntries(mcp), inputs };
    }
    case "claude-code":
      return claudeCodeServers(doc, loc, inputs);
    default:
      return single("mcpServers");
  }
}

/**
 * Claude Code's `.mcp.json` holds the project's servers. `~/.claude.json` holds the user scope at the top and the local
 * scope (one project only) under `projects["<absolute path>"]`; Claude Code prefers a local server to a user one of the
 * same name, and so does the import.
 */
function claudeCodeServers(doc: JsonObject, loc: ImportLocations, inputs: Map<string, VsCodeInput>): Found {
  const user = doc.mcpServers;
  if (user !== undefined && user !== null && !isObject(user)) return { error: "`mcpServers` must be an object mapping server names to their settings" };
  let local: JsonObject | undefined;
  if (isObject(doc.projects)) {
    const wanted = projectKey(loc.projectRoot, loc.platform);
    for (const [dir, settings] of Object.entries(doc.projects)) {
      if (projectKey(dir, loc.platform) === wanted && isObject(settings) && isObject(settings.mcpServers)) local = settings.mcpServers;
    }
  }
  const localNote = "from Claude Code's local scope: it applies to this project only";
  const servers = local ? mapEntries(local, [localNote]) : [];
  for (const server of servers) {
    if (isObject(user) && server.name in user) server.notes.push("replaces Claude Code's user-scope server of the same name, as in Claude Code");
  }
  for (const server of isObject(user) ? mapEntries(user) : []) {
    if (!local || !(server.name in local)) servers.push(server);
  }
  return { servers, inputs };
}

/** `~/.claude.json` keys projects by absolute path, with forward slashes on Windows. */
function projectKey(dir: string, platform: NodeJS.Platform): string {
  let key = dir.replace(/\\/g, "/");
  if (key.length > 1) key = key.replace(/\/+$/, "");
  return platform === "win32" ? key.toLowerCase() : key;
}

function codexServers(text: string): Found {
  let doc: JsonObject;
  try {
    doc = parseToml(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    // smol-toml's message ends with the offending lines, which may hold a token: keep only its first line.
    const line = typeof (error as { line?: unknown }).line === "number" ? (error as { line: number }).line : undefined;
    const column = typeof (error as { column?: unknown }).column === "number" ? (error as { column: number }).column : undefined;
    const reason = (error instanceof Error ? error.message : "").split("\n")[0]!.replace(/^Invalid TOML document:\s*/, "") || "syntax error";
    return { error: `not valid TOML: ${reason}${line !== undefined ? ` at line ${line}, column ${column}` : ""}` };
  }
  const map = doc.mcp_servers;
  if (map === undefined) return { servers: [], inputs: new Map() };
  if (!isObject(map)) return { error: "`mcp_servers` must be a table of servers ([mcp_servers.<name>])" };
  return { servers: mapEntries(map), inputs: new Map() };
}

// ---------------------------------------------------------------------------------------------------------------------
// Converting one entry
// ---------------------------------------------------------------------------------------------------------------------

/** Collects notes once each, in order. */
class Notes {
  readonly list: string[] = [];
  add(note: string): void {
    if (!this.list.includes(note)) this.list.push(note);
  }
}

function convertServer(
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
  const entry = file.client === "codex" ? convertCodex(raw, notes) : file.client === "opencode" ? convertOpencode(raw, notes) : convertStandard(file.client, raw, notes);
  rewriteStrings(entry, (text, field) => rewriteVariables(file.client, text, field, { loc, inputs, notes, label }));
  if (entry.enabled === false) notes.add(`disabled in ${label}; imported with "enabled": false`);
  const ordered = inWritingOrder(entry);

  const result = validateServerEntry(name, ordered, { scope: file.scope, path: file.path });
  if (!result.config) {
    // A URL can carry a key in its query, and `checkUrl` quotes it: keep it out of the message.
    const url = typeof ordered.url === "string" ? ordered.url : undefined;
    const errors = result.errors.map((e) => (url && url.length > 0 ? e.split(JSON.stringify(url)).join("(the url)").split(url).join("(the url)") : e));
    return { error: errors.join("; ") };
  }
  return { server: { name, client: file.client, sourcePath: file.path, entry: ordered, notes: notes.list, inlineSecrets: findInlineSecrets(ordered) } };
}

const FIELD_ORDER = ["type", "command", "args", "env", "cwd", "url", "headers", "auth", "timeout", "requestTimeout", "enabled"];

/** The entry's fields in the order a person would write them, since the import writes it into a file people read. */
function inWritingOrder(entry: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of FIELD_ORDER) if (key in entry) out[key] = entry[key];
  for (const key of Object.keys(entry)) if (!(key in out)) out[key] = entry[key];
  return out;
}

const TRANSPORT_LOCAL = new Set(["stdio", "local"]);
const TRANSPORT_HTTP = new Set(["http", "streamable-http", "streamablehttp", "streamable_http", "remote"]);

/**
 * The `type` to write, if any. A type that only says what `command`/`url` already say is left out; `sse` (legacy SSE
 * must not be probed as Streamable HTTP) and anything contradictory or unknown is kept, so validation can report it.
 */
function keptType(type: unknown, entry: JsonObject): unknown {
  if (type === undefined || type === null) return undefined;
  const local = entry.command !== undefined && entry.url === undefined;
  const remote = entry.url !== undefined && entry.command === undefined;
  if (typeof type === "string") {
    const t = type.toLowerCase();
    if (TRANSPORT_LOCAL.has(t) && local) return undefined;
    if (TRANSPORT_HTTP.has(t) && remote) return undefined;
  }
  return type;
}

/** Env and header maps: numbers and booleans become the strings a process or request sees; anything else is left for validation. */
function stringMap(value: unknown): unknown {
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) out[k] = typeof v === "number" || typeof v === "boolean" ? String(v) : v;
  return out;
}

function argList(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  return value.map((a) => (typeof a === "number" || typeof a === "boolean" ? String(a) : a));
}

/** Sets a field unless it is absent or empty (an empty `env` or `args` says nothing worth writing). */
function put(entry: JsonObject, key: string, value: unknown): void {
  if (value === undefined || value === null) return;
  if (Array.isArray(value) && value.length === 0) return;
  if (isObject(value) && Object.keys(value).length === 0) return;
  entry[key] = value;
}

function dropped(notes: Notes, field: string, why = "is not supported by mcp-bridge and was left out"): void {
  notes.add(`\`${field}\` ${why}`);
}

/** An `auth` block for mcp-bridge from another client's OAuth settings; `fields` maps each of ours to their spellings. */
function authBlock(value: JsonObject, owner: string, fields: Record<"clientId" | "clientSecret" | "scopes" | "callbackPort", string[]>, notes: Notes): JsonObject {
  const auth: JsonObject = {};
  const used = new Set<string>();
  for (const [ours, theirs] of Object.entries(fields)) {
    for (const key of theirs) {
      if (value[key] === undefined || value[key] === null) continue;
      used.add(key);
      if (auth[ours] === undefined) auth[ours] = value[key];
    }
  }
  for (const key of Object.keys(value)) if (!used.has(key)) dropped(notes, `${owner}.${key}`);
  return auth;
}

/** The `mcpServers`/`servers` shape shared by Claude Desktop, Claude Code, Cursor, VS Code and Windsurf. */
function convertStandard(client: ClientId, raw: JsonObject, notes: Notes): JsonObject {
  const entry: JsonObject = {};
  const handled = new Set(["type", "command", "args", "env", "cwd", "url", "headers", "enabled", "disabled"]);
  let url = raw.url;
  if (client === "windsurf") {
    handled.add("serverUrl");
    if (raw.serverUrl !== undefined && raw.serverUrl !== null) {
      if (url !== undefined && url !== null) notes.add("has both `serverUrl` and `url`; `serverUrl` is used, as in Windsurf");
      url = raw.serverUrl;
    }
  }
  put(entry, "command", raw.command);
  put(entry, "args", argList(raw.args));
  put(entry, "env", stringMap(raw.env));
  put(entry, "cwd", raw.cwd);
  put(entry, "url", url);
  put(entry, "headers", stringMap(raw.headers));
  const type = keptType(raw.type, entry);
  if (type !== undefined) entry.type = type;

  if (raw.envFile !== undefined) {
    handled.add("envFile");
    dropped(notes, "envFile", "is not supported: copy the variables it sets into `env`");
  }
  if (client === "claude-code") {
    if (raw.headersHelper !== undefined) {
      handled.add("headersHelper");
      dropped(notes, "headersHelper", "(a command that prints headers) is not supported: put the headers under `headers`");
    }
    if (isObject(raw.oauth)) {
      handled.add("oauth");
      const auth = authBlock(raw.oauth, "oauth", { clientId: ["clientId"], clientSecret: [], scopes: ["scopes"], callbackPort: ["callbackPort"] }, notes);
      if (entry.url !== undefined) put(entry, "auth", auth);
    }
  }
  if (client === "cursor" && isObject(raw.auth)) {
    handled.add("auth");
    // Cursor's static OAuth client: `{"CLIENT_ID": …, "CLIENT_SECRET": …, "scopes": […]}`.
    const auth = authBlock(raw.auth, "auth", { clientId: ["CLIENT_ID"], clientSecret: ["CLIENT_SECRET"], scopes: ["scopes"], callbackPort: [] }, notes);
    if (entry.url !== undefined) put(entry, "auth", auth);
  }
  if (client === "windsurf" && raw.disabledTools !== undefined) {
    handled.add("disabledTools");
    if (Array.isArray(raw.disabledTools) && raw.disabledTools.length > 0) dropped(notes, "disabledTools", "is not supported: all the server's tools are offered");
  }
  if (raw.disabled === true || raw.enabled === false) entry.enabled = false;
  for (const key of Object.keys(raw)) if (!handled.has(key)) dropped(notes, key);
  return entry;
}

function seconds(raw: JsonObject, field: string, factor: number, notes: Notes): number | undefined {
  const value = raw[field];
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    dropped(notes, field, "is not a positive number and was left out");
    return undefined;
  }
  return Math.round(value * factor);
}

/** Codex's `[mcp_servers.<name>]` tables (`~/.codex/config.toml`). */
function convertCodex(raw: JsonObject, notes: Notes): JsonObject {
  const entry: JsonObject = {};
  const handled = new Set([
    "command", "args", "env", "env_vars", "cwd", "url", "bearer_token", "bearer_token_env_var", "http_headers", "env_http_headers",
    "enabled", "startup_timeout_sec", "startup_timeout_ms", "tool_timeout_sec", "enabled_tools", "disabled_tools",
  ]);
  put(entry, "command", raw.command);
  put(entry, "args", argList(raw.args));

  // `env_vars` forwards variables from Codex's own environment; `${NAME}` does the same from pi's.
  const env: JsonObject = isObject(raw.env) ? { ...(stringMap(raw.env) as JsonObject) } : {};
  if (Array.isArray(raw.env_vars)) {
    for (const name of raw.env_vars) {
      if (typeof name === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
        if (env[name] === undefined) env[name] = `\${${name}}`;
      } else {
        dropped(notes, "env_vars", "holds an entry that is not a variable name; it was left out");
      }
    }
  } else if (raw.env_vars !== undefined) {
    dropped(notes, "env_vars", "is not a list of variable names and was left out");
  }
  put(entry, "env", raw.env !== undefined && !isObject(raw.env) ? raw.env : env);
  put(entry, "cwd", raw.cwd);
  put(entry, "url", raw.url);

  const headers: JsonObject = isObject(raw.http_headers) ? { ...(stringMap(raw.http_headers) as JsonObject) } : {};
  if (raw.http_headers !== undefined && !isObject(raw.http_headers)) dropped(notes, "http_headers", "is not a table and was left out");
  if (isObject(raw.env_http_headers)) {
    for (const [header, variable] of Object.entries(raw.env_http_headers)) {
      if (typeof variable === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(variable)) headers[header] = `\${${variable}}`;
      else dropped(notes, `env_http_headers.${header}`, "is not a variable name and was left out");
    }
  } else if (raw.env_http_headers !== undefined) {
    dropped(notes, "env_http_headers", "is not a table and was left out");
  }
  if (typeof raw.bearer_token_env_var === "string" && raw.bearer_token_env_var.trim() !== "") {
    headers.Authorization = `Bearer \${${raw.bearer_token_env_var.trim()}}`;
  } else if (typeof raw.bearer_token === "string" && raw.bearer_token !== "") {
    // Older Codex versions took the token itself; it stays inline here and is flagged as an inline secret.
    headers.Authorization = `Bearer ${raw.bearer_token}`;
  }
  put(entry, "headers", headers);

  const timeout = seconds(raw, "startup_timeout_sec", 1000, notes) ?? seconds(raw, "startup_timeout_ms", 1, notes);
  if (timeout !== undefined) entry.timeout = timeout;
  const requestTimeout = seconds(raw, "tool_timeout_sec", 1000, notes);
  if (requestTimeout !== undefined) entry.requestTimeout = requestTimeout;
  for (const field of ["enabled_tools", "disabled_tools"]) {
    if (raw[field] !== undefined) dropped(notes, field, "is not supported: all the server's tools are offered");
  }
  if (raw.enabled === false) entry.enabled = false;
  for (const key of Object.keys(raw)) if (!handled.has(key)) dropped(notes, key);
  return entry;
}

/** opencode's `mcp` entries: `type: "local"` with `command` as an array and `environment`, or `type: "remote"`. */
function convertOpencode(raw: JsonObject, notes: Notes): JsonObject {
  const entry: JsonObject = {};
  const handled = new Set(["type", "command", "args", "environment", "env", "cwd", "url", "headers", "enabled", "disabled", "timeout", "oauth"]);
  if (Array.isArray(raw.command) && raw.command.length > 0 && raw.command.every((c) => typeof c === "string")) {
    entry.command = raw.command[0];
    put(entry, "args", [...raw.command.slice(1), ...(Array.isArray(raw.args) ? (argList(raw.args) as unknown[]) : [])]);
  } else {
    put(entry, "command", raw.command);
    put(entry, "args", argList(raw.args));
  }
  const env = { ...(isObject(raw.environment) ? (stringMap(raw.environment) as JsonObject) : {}), ...(isObject(raw.env) ? (stringMap(raw.env) as JsonObject) : {}) };
  put(entry, "env", env);
  put(entry, "cwd", raw.cwd);
  put(entry, "url", raw.url);
  put(entry, "headers", stringMap(raw.headers));
  const type = keptType(raw.type, entry);
  if (type !== undefined) entry.type = type;

  // opencode's `timeout` (ms) bounds fetching the tool list; newer versions split it into `startup` and `request`.
  const timeout = raw.timeout;
  if (typeof timeout === "number" && timeout > 0) entry.timeout = timeout;
  else if (isObject(timeout)) {
    if (typeof timeout.startup === "number" && timeout.startup > 0) entry.timeout = timeout.startup;
    if (typeof timeout.request === "number" && timeout.request > 0) entry.requestTimeout = timeout.request;
  } else if (timeout !== undefined) dropped(notes, "timeout", "is not a positive number of milliseconds and was left out");

  if (raw.oauth === false) {
    if (entry.url !== undefined) entry.auth = false;
  } else if (isObject(raw.oauth)) {
    const auth = authBlock(raw.oauth, "oauth", { clientId: ["clientId", "client_id"], clientSecret: ["clientSecret", "client_secret"], scopes: ["scope", "scopes"], callbackPort: [] }, notes);
    if (entry.url !== undefined) put(entry, "auth", auth);
  }
  if (raw.enabled === false || raw.disabled === true) entry.enabled = false;
  for (const key of Object.keys(raw)) if (!handled.has(key)) dropped(notes, key);
  return entry;
}

// ---------------------------------------------------------------------------------------------------------------------
// Variables
// ---------------------------------------------------------------------------------------------------------------------

/** Applies `fn` to every string a server's variables may appear in, naming the field for notes. */
function rewriteStrings(entry: JsonObject, fn: (text: string, field: string) => string): void {
  if (typeof entry.command === "string") entry.command = fn(entry.command, "command");
  if (Array.isArray(entry.args)) entry.args = entry.args.map((a, i) => (typeof a === "string" ? fn(a, `args[${i}]`) : a));
  if (typeof entry.cwd === "string") entry.cwd = fn(entry.cwd, "cwd");
  if (typeof entry.url === "string") entry.url = fn(entry.url, "url");
  for (const field of ["env", "headers"]) {
    const map = entry[field];
    if (!isObject(map)) continue;
    for (const [k, v] of Object.entries(map)) if (typeof v === "string") map[k] = fn(v, `${field}.${k}`);
  }
  if (isObject(entry.auth)) {
    for (const [k, v] of Object.entries(entry.auth)) if (typeof v === "string") entry.auth[k] = fn(v, `auth.${k}`);
  }
}

/**
 * The variable name a VS Code input becomes: `github-token` → `GITHUB_TOKEN`, `apiKey` → `API_KEY`. VS Code prompts
 * for an input; pi reads the same value from its environment.
 */
export function inputVarName(id: string): string {
  const snake = id
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .toUpperCase();
  if (snake === "") return "INPUT";
  return /^[0-9]/.test(snake) ? `_${snake}` : snake;
}

/** A reference mcp-bridge resolves itself: `${VAR}`, `${VAR:-default}`, `${env:VAR}` (and `${PROJECT_ROOT}`). */
const OWN_REFERENCE = /^(?:env:)?[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?$/;

interface RewriteContext {
  loc: ImportLocations;
  inputs: Map<string, VsCodeInput>;
  notes: Notes;
  label: string;
}

/** Turns a client's variable syntax into mcp-bridge's, and notes any reference that cannot be carried over. */
function rewriteVariables(client: ClientId, text: string, field: string, ctx: RewriteContext): string {
  let out = text;
  if (client === "vscode" || client === "cursor") out = rewriteEditorVariables(client, out, ctx);
  if (client === "opencode") {
    // opencode's `{env:VAR}` (no dollar sign) is our `${VAR}`.
    out = out.replace(/(?<!\$)\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => `\${${name}}`);
    for (const match of out.matchAll(/(?<!\$)\{file:[^}]*\}/g)) {
      ctx.notes.add(`\`${match[0]}\` in \`${field}\` (opencode reads a file there) is not supported and is passed on as written`);
    }
  }
  for (const match of out.matchAll(/\$\{([^}]*)\}/g)) {
    if (!OWN_REFERENCE.test(match[1]!)) {
      ctx.notes.add(`\`${match[0]}\` in \`${field}\` is a ${ctx.label} variable mcp-bridge cannot resolve; it is passed on as written`);
    }
  }
  return out;
}

/** VS Code and Cursor share predefined variables; VS Code adds `${input:…}` prompts. */
function rewriteEditorVariables(client: ClientId, text: string, ctx: RewriteContext): string {
  const p = ctx.loc.platform === "win32" ? path.win32 : path.posix;
  return text.replace(/\$\{([^}]*)\}/g, (match, inner: string) => {
    switch (inner) {
      case "workspaceFolder":
        ctx.notes.add("`${workspaceFolder}` became `${PROJECT_ROOT}`, the directory pi starts in");
        return "${PROJECT_ROOT}";
      case "userHome":
        return ctx.loc.home;
      case "workspaceFolderBasename":
        ctx.notes.add("`${workspaceFolderBasename}` became this project's folder name");
        return p.basename(ctx.loc.projectRoot);
      case "pathSeparator":
      case "/":
        return p.sep;
    }
    if (client !== "vscode" || !inner.startsWith("input:")) return match;
    const id = inner.slice("input:".length);
    const input = ctx.inputs.get(id);
    const name = inputVarName(id);
    const about = input?.description ? ` (${input.description})` : "";
    ctx.notes.add(`VS Code input "${id}"${about} became \${${name}}: set ${name} in the environment pi starts from`);
    // A visible default can stay as the fallback; a password prompt's default is not copied anywhere.
    const fallback = input && !input.password && input.default !== undefined && !input.default.includes("}") ? `:-${input.default}` : "";
    return `\${${name}${fallback}}`;
  });
}

// ---------------------------------------------------------------------------------------------------------------------
// Inline secrets
// ---------------------------------------------------------------------------------------------------------------------

const SECRET_NAME = /token|secret|key|password|passwd|auth|credential/i;

/** Shapes of well-known credentials, matched whatever the key is called. */
const SECRET_VALUES: readonly RegExp[] = [
  /^(?:bearer|basic|token)\s+\S{8,}/i,
  /^sk-[A-Za-z0-9_-]{16,}/,
  /^(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}/,
  /^gh[pousr]_[A-Za-z0-9]{20,}/,
  /^github_pat_[A-Za-z0-9_]{20,}/,
  /^glpat-[A-Za-z0-9_-]{20,}/,
  /^xox[abposr]-[A-Za-z0-9-]{10,}/,
  /^AKIA[0-9A-Z]{16}$/,
  /^AIza[0-9A-Za-z_-]{35}$/,
  /^eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\./,
  // A connection string with a password: `postgres://user:pass@host/db`.
  /^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:[^/\s@]+@/i,
];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function entropyBitsPerChar(text: string): number {
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** A literal that looks like a credential by its shape: a known prefix, or a long random-looking token. */
function looksLikeSecretValue(value: string): boolean {
  const v = value.trim();
  if (SECRET_VALUES.some((re) => re.test(v))) return true;
  return v.length >= 32 && /^[A-Za-z0-9+/=_.-]+$/.test(v) && /[A-Za-z]/.test(v) && /[0-9]/.test(v) && !UUID.test(v) && entropyBitsPerChar(v) >= 3.5;
}

/** Values that cannot be a credential even under a secret-sounding name (`AUTH_ENABLED=true`, a key file's path). */
function isHarmless(value: string): boolean {
  const v = value.trim();
  if (v === "" || /^(?:true|false|yes|no|on|off|null|none|\d{1,6})$/i.test(v)) return true;
  if (/^(?:\/|~[/\\]|\.{1,2}[/\\]|[A-Za-z]:[/\\])/.test(v)) return true;
  if (/^https?:\/\//i.test(v) && !/^[a-z]+:\/\/[^/@]*@/i.test(v) && !v.includes("?")) return true;
  return false;
}

/** False for a value that refers to something else: a `${VAR}`, or an opencode `{file:…}` left as written. */
function isLiteral(value: string): boolean {
  return !value.includes("${") && !/\{file:[^}]*\}/.test(value);
}

/** The keys (`env.X`, `headers.Y`, `args[2]`, `url`, `auth.clientSecret`) whose literal values look like secrets. */
function findInlineSecrets(entry: JsonObject): string[] {
  const found: string[] = [];
  for (const field of ["env", "headers"]) {
    const map = entry[field];
    if (!isObject(map)) continue;
    for (const [key, value] of Object.entries(map)) {
      if (typeof value !== "string" || !isLiteral(value)) continue;
      if (looksLikeSecretValue(value) || (SECRET_NAME.test(key) && !isHarmless(value))) found.push(`${field}.${key}`);
    }
  }
  const args = entry.args;
  if (Array.isArray(args)) {
    args.forEach((arg: unknown, i) => {
      if (typeof arg === "string" && isLiteral(arg) && argHoldsSecret(arg, i > 0 ? args[i - 1] : undefined)) found.push(`args[${i}]`);
    });
  }
  if (typeof entry.url === "string" && isLiteral(entry.url) && urlHoldsSecret(entry.url)) found.push("url");
  if (isObject(entry.auth) && typeof entry.auth.clientSecret === "string" && isLiteral(entry.auth.clientSecret)) found.push("auth.clientSecret");
  return found;
}

/** An argument that carries a credential: `--api-key=…`, the value after `--token`, or a credential-shaped literal. */
function argHoldsSecret(arg: string, previous: unknown): boolean {
  const assignment = /^--?([A-Za-z0-9_-]+)=(.*)$/.exec(arg);
  if (assignment) return (SECRET_NAME.test(assignment[1]!) && !isHarmless(assignment[2]!)) || looksLikeSecretValue(assignment[2]!);
  const afterSecretFlag = typeof previous === "string" && /^--?[A-Za-z][A-Za-z0-9_-]*$/.test(previous) && SECRET_NAME.test(previous);
  return (afterSecretFlag && !arg.startsWith("-") && !isHarmless(arg)) || looksLikeSecretValue(arg);
}

function urlHoldsSecret(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.password !== "") return true;
  for (const [name, value] of parsed.searchParams) {
    if ((SECRET_NAME.test(name) && !isHarmless(value)) || looksLikeSecretValue(value)) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------------------------------
// Discovery
// ---------------------------------------------------------------------------------------------------------------------

/** Reads every candidate that exists (fs), parses it; missing files are skipped silently, unreadable/invalid ones reported. */
export async function discoverImports(loc: ImportLocations): Promise<{ servers: ImportedServer[]; errors: string[] }> {
  const results = await Promise.all(
    candidateFiles(loc).map(async (file): Promise<{ servers: ImportedServer[]; errors: string[] }> => {
      let text: string;
      try {
        text = await readFile(file.path, "utf8");
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // A client that is not installed has no file (or not even its directory): nothing to say about it.
        if (code === "ENOENT" || code === "ENOTDIR") return { servers: [], errors: [] };
        const reason = code === "EISDIR" ? "it is a directory" : code === "EACCES" || code === "EPERM" ? "permission denied" : (code ?? "unknown error");
        return { servers: [], errors: [`${where(file)}: cannot read the file: ${reason}`] };
      }
      return parseClientConfig(file, text, loc);
    }),
  );
  return { servers: results.flatMap((r) => r.servers), errors: results.flatMap((r) => r.errors) };
}
