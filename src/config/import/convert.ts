/**
 * Converting one client's server entry into mcp-bridge's entry format: fields renamed and reshaped, a `type` that
 * says nothing dropped, OAuth settings mapped to `auth`, and a note for everything that could not be carried over.
 * Pure; variables are rewritten afterwards (./variables.ts).
 */
import { defineOwn, isObject, type JsonObject } from "../../common/values.ts";
import { isVariableName } from "../substitute.ts";
import { transportOfType } from "../validate/endpoint.ts";
import { SECONDS_BELOW } from "../validate/timeout.ts";
import { filesystemDirectoriesDropped } from "../validate/usage.ts";
import type { ClientId } from "./import-types.ts";
import { remoteOfProxy } from "./mcp-remote.ts";

/** Collects notes once each, in order. */
export class Notes {
  readonly list: string[] = [];
  add(note: string): void {
    if (!this.list.includes(note)) this.list.push(note);
  }
}

/** The entry in mcp-bridge's format, fields in writing order; what was dropped or changed goes to `notes`. */
export function convertEntry(client: ClientId, raw: JsonObject, notes: Notes): JsonObject {
  const entry =
    client === "codex"
      ? convertCodex(raw, notes)
      : client === "opencode"
        ? convertOpencode(raw, notes)
        : convertStandard(client, raw, notes);
  // The directories the entry names are where the server worked in the client it comes from.
  if (filesystemDirectoriesDropped(entry).length) {
    entry.roots = false;
    notes.add(
      '`"roots": false` added: the filesystem server keeps to the directories in its `args` (offered the project root as its root, it would work there instead)',
    );
  }
  const remote = remoteOfProxy(entry, notes);
  // What is not about the process stays with the remote entry.
  if (remote) for (const key of ["timeout", "requestTimeout", "enabled"]) if (key in entry) remote[key] = entry[key];
  return inWritingOrder(remote ?? entry);
}

const FIELD_ORDER = "type command args env cwd url headers auth timeout requestTimeout enabled".split(" ");

/** The entry's fields in the order a person would write them, since the import writes it into a file people read. */
function inWritingOrder(entry: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of FIELD_ORDER) if (key in entry) out[key] = entry[key];
  for (const key of Object.keys(entry)) if (!(key in out)) out[key] = entry[key];
  return out;
}

/**
 * The `type` to write, if any. A type that only says what `command`/`url` already say is left out; `sse` (legacy SSE
 * must not be probed as Streamable HTTP) and anything contradictory or unknown is kept, so validation can report it.
 */
function keptType(type: unknown, entry: JsonObject): unknown {
  if (type === undefined || type === null) return undefined;
  const local = entry.command !== undefined && entry.url === undefined;
  const remote = entry.url !== undefined && entry.command === undefined;
  if (typeof type === "string") {
    const kind = transportOfType(type);
    if (kind === "stdio" && local) return undefined;
    if (kind === "http" && remote) return undefined;
  }
  return type;
}

/** Env and header maps: numbers and booleans become the strings a process or request sees; anything else is left for validation. */
function stringifyScalars(value: unknown): unknown {
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  // Defined, not assigned: a `__proto__` key stays a key, for validation to refuse, instead of setting a prototype.
  for (const [k, v] of Object.entries(value))
    defineOwn(out, k, typeof v === "number" || typeof v === "boolean" ? String(v) : v);
  return out;
}

/** Arguments: numbers and booleans become strings, as a command line has them; anything else is left for validation. */
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

/**
 * A handshake deadline in ms as `timeout`: below 1000 the bridge reads `timeout` as pi 1.x's seconds (see
 * ../validate/timeout.ts), so a shorter one is raised to 1000 ms, with a note.
 */
function putConnectTimeout(entry: JsonObject, ms: number, field: string, notes: Notes): void {
  if (ms < SECONDS_BELOW)
    notes.add(
      `\`${field}\` of ${ms} ms is raised to ${SECONDS_BELOW} ms, the shortest \`timeout\` read as milliseconds`,
    );
  entry.timeout = Math.max(ms, SECONDS_BELOW);
}

/**
 * Sets a remote entry's `auth` from another client's OAuth settings (`value`, at `owner`); `fields` maps each of ours
 * to their spellings. What is not read is noted, on a local entry too, which gets no `auth`.
 */
function putAuth(
  entry: JsonObject,
  value: JsonObject,
  owner: string,
  fields: Partial<Record<"clientId" | "clientSecret" | "scopes" | "callbackPort", string[]>>,
  notes: Notes,
): void {
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
  if (entry.url !== undefined) put(entry, "auth", auth);
}

/** The `mcpServers`/`servers` shape shared by Claude Desktop, Claude Code, Cursor, VS Code and Windsurf. */
function convertStandard(client: ClientId, raw: JsonObject, notes: Notes): JsonObject {
  const entry: JsonObject = {};
  const handled = new Set(["type", "command", "args", "env", "cwd", "url", "headers", "enabled", "disabled"]);
  let url = raw.url;
  if (client === "windsurf") {
    handled.add("serverUrl");
    if (raw.serverUrl !== undefined && raw.serverUrl !== null) {
      if (url !== undefined && url !== null)
        notes.add("has both `serverUrl` and `url`; `serverUrl` is used, as in Windsurf");
      url = raw.serverUrl;
    }
  }
  put(entry, "command", raw.command);
  put(entry, "args", argList(raw.args));
  put(entry, "env", stringifyScalars(raw.env));
  put(entry, "cwd", raw.cwd);
  put(entry, "url", url);
  put(entry, "headers", stringifyScalars(raw.headers));
  const type = keptType(raw.type, entry);
  if (type !== undefined) entry.type = type;

  if (raw.envFile !== undefined) {
    handled.add("envFile");
    dropped(notes, "envFile", "is not supported: copy the variables it sets into `env`");
  }
  if (client === "claude-code") {
    if (raw.headersHelper !== undefined) {
      handled.add("headersHelper");
      dropped(
        notes,
        "headersHelper",
        "(a command that prints headers) is not supported: put the headers under `headers`",
      );
    }
    if (isObject(raw.oauth)) {
      handled.add("oauth");
      const fields = { clientId: ["clientId"], scopes: ["scopes"], callbackPort: ["callbackPort"] };
      putAuth(entry, raw.oauth, "oauth", fields, notes);
    }
  }
  if (client === "cursor" && isObject(raw.auth)) {
    handled.add("auth");
    // Cursor's static OAuth client: `{"CLIENT_ID": …, "CLIENT_SECRET": …, "scopes": […]}`.
    const fields = { clientId: ["CLIENT_ID"], clientSecret: ["CLIENT_SECRET"], scopes: ["scopes"] };
    putAuth(entry, raw.auth, "auth", fields, notes);
  }
  if (client === "vscode" && isObject(raw.dev)) {
    // Its development mode: the files whose change restarts the server carry over; its debugger does not.
    handled.add("dev");
    if (raw.dev.watch !== undefined) entry.dev = { watch: raw.dev.watch };
    if (raw.dev.debug !== undefined) dropped(notes, "dev.debug", "(VS Code's debugger) is not supported");
  }
  if (client === "windsurf" && raw.disabledTools !== undefined) {
    handled.add("disabledTools");
    if (Array.isArray(raw.disabledTools) && raw.disabledTools.length > 0)
      dropped(notes, "disabledTools", "is not supported: all the server's tools are offered");
  }
  if (raw.disabled === true || raw.enabled === false) entry.enabled = false;
  for (const key of Object.keys(raw)) if (!handled.has(key)) dropped(notes, key);
  return entry;
}

/** A positive number in `field` as milliseconds (`factor` 1000 for seconds, 1 for ms); anything else is left out, with a note. */
function durationMs(raw: JsonObject, field: string, factor: number, notes: Notes): number | undefined {
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
  const handled = new Set(
    "command args env env_vars cwd url bearer_token bearer_token_env_var http_headers env_http_headers enabled startup_timeout_sec startup_timeout_ms tool_timeout_sec enabled_tools disabled_tools".split(
      " ",
    ),
  );
  put(entry, "command", raw.command);
  put(entry, "args", argList(raw.args));

  // `env_vars` forwards variables from Codex's own environment; `${NAME}` does the same from pi's.
  const env: JsonObject = isObject(raw.env) ? { ...(stringifyScalars(raw.env) as JsonObject) } : {};
  if (Array.isArray(raw.env_vars)) {
    for (const name of raw.env_vars) {
      if (typeof name !== "string" || !isVariableName(name))
        dropped(notes, "env_vars", "holds an entry that is not a variable name; it was left out");
      else if (env[name] === undefined) env[name] = `\${${name}}`;
    }
  } else if (raw.env_vars !== undefined) dropped(notes, "env_vars", "is not a list of variable names and was left out");
  put(entry, "env", raw.env !== undefined && !isObject(raw.env) ? raw.env : env);
  put(entry, "cwd", raw.cwd);
  put(entry, "url", raw.url);

  const headers: JsonObject = isObject(raw.http_headers)
    ? { ...(stringifyScalars(raw.http_headers) as JsonObject) }
    : {};
  if (raw.http_headers !== undefined && !isObject(raw.http_headers))
    dropped(notes, "http_headers", "is not a table and was left out");
  if (isObject(raw.env_http_headers)) {
    for (const [header, variable] of Object.entries(raw.env_http_headers)) {
      if (typeof variable === "string" && isVariableName(variable)) headers[header] = `\${${variable}}`;
      else dropped(notes, `env_http_headers.${header}`, "is not a variable name and was left out");
    }
  } else if (raw.env_http_headers !== undefined) dropped(notes, "env_http_headers", "is not a table and was left out");
  if (typeof raw.bearer_token_env_var === "string" && raw.bearer_token_env_var.trim() !== "") {
    headers.Authorization = `Bearer \${${raw.bearer_token_env_var.trim()}}`;
  } else if (typeof raw.bearer_token === "string" && raw.bearer_token !== "") {
    // Older Codex versions took the token itself; it stays inline here and is flagged as an inline secret.
    headers.Authorization = `Bearer ${raw.bearer_token}`;
  }
  put(entry, "headers", headers);

  // The note names the field the value came from: `startup_timeout_ms` where `_sec` is there but no duration.
  const inSeconds = durationMs(raw, "startup_timeout_sec", 1000, notes);
  const timeout = inSeconds ?? durationMs(raw, "startup_timeout_ms", 1, notes);
  if (timeout !== undefined)
    putConnectTimeout(entry, timeout, inSeconds !== undefined ? "startup_timeout_sec" : "startup_timeout_ms", notes);
  const requestTimeout = durationMs(raw, "tool_timeout_sec", 1000, notes);
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
  const handled = new Set(
    "type command args environment env cwd url headers enabled disabled timeout oauth".split(" "),
  );
  if (Array.isArray(raw.command) && raw.command.length > 0 && raw.command.every((c) => typeof c === "string")) {
    entry.command = raw.command[0];
    put(entry, "args", [...raw.command.slice(1), ...(Array.isArray(raw.args) ? (argList(raw.args) as unknown[]) : [])]);
  } else {
    put(entry, "command", raw.command);
    put(entry, "args", argList(raw.args));
  }
  const env = {
    ...(isObject(raw.environment) ? (stringifyScalars(raw.environment) as JsonObject) : {}),
    ...(isObject(raw.env) ? (stringifyScalars(raw.env) as JsonObject) : {}),
  };
  put(entry, "env", env);
  put(entry, "cwd", raw.cwd);
  put(entry, "url", raw.url);
  put(entry, "headers", stringifyScalars(raw.headers));
  const type = keptType(raw.type, entry);
  if (type !== undefined) entry.type = type;

  // opencode's `timeout` (ms) bounds fetching the tool list; newer versions split it into `startup` and `request`.
  const timeout = raw.timeout;
  if (typeof timeout === "number" && timeout > 0) putConnectTimeout(entry, timeout, "timeout", notes);
  else if (isObject(timeout)) {
    if (typeof timeout.startup === "number" && timeout.startup > 0)
      putConnectTimeout(entry, timeout.startup, "timeout.startup", notes);
    if (typeof timeout.request === "number" && timeout.request > 0) entry.requestTimeout = timeout.request;
  } else if (timeout !== undefined)
    dropped(notes, "timeout", "is not a positive number of milliseconds and was left out");

  if (raw.oauth === false) {
    if (entry.url !== undefined) entry.auth = false;
  } else if (isObject(raw.oauth)) {
    const fields = {
      clientId: ["clientId", "client_id"],
      clientSecret: ["clientSecret", "client_secret"],
      scopes: ["scope", "scopes"],
    };
    putAuth(entry, raw.oauth, "oauth", fields, notes);
  }
  if (raw.enabled === false || raw.disabled === true) entry.enabled = false;
  for (const key of Object.keys(raw)) if (!handled.has(key)) dropped(notes, key);
  return entry;
}
