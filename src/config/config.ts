/**
 * Config parsing, validation and layering. Pure: callers read the files and pass their text in.
 */
import { parse as parseJsonc, printParseErrorCode, type ParseError } from "jsonc-parser";
import {
  DEFAULT_HEALTH_CHECK_INTERVAL_MS,
  DEFAULT_INIT_TIMEOUT_MS,
  DEFAULT_LOCAL_RETRY,
  DEFAULT_PING_TIMEOUT_MS,
  DEFAULT_REMOTE_RETRY,
  type RetryPolicy,
} from "../connection/health.ts";
import { isObject, type JsonObject } from "../common/values.ts";

/** Where a config layer comes from, highest priority first. */
export type ConfigScope = "flag" | "project" | "user" | "bundled";
export const SCOPES_BY_PRIORITY: readonly ConfigScope[] = ["flag", "project", "user", "bundled"];

export interface ConfigSource {
  scope: ConfigScope;
  path: string;
}

/** The transport a server asks for. `http` is Streamable HTTP, with the legacy SSE fallback. */
export type TransportKind = "stdio" | "http" | "sse";

export const DEFAULT_CONNECT_TIMEOUT_MS = 15_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** A validated server entry. Strings may still hold `${VAR}` references: they are resolved at connect time. */
export interface ServerConfig {
  name: string;
  source: ConfigSource;
  /** Set when a higher layer only toggled `enabled` for this server. */
  enabledSource?: ConfigSource;
  transport: TransportKind;
  /** The `type` field as written, if any. */
  type?: string;
  command?: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  url?: string;
  headers: Record<string, string>;
  /** Connect (initialize) timeout in ms: `timeout`, or for a local server `initTimeout` (default 10 s). */
  timeout: number;
  /** Per-request timeout in ms; progress notifications reset it. */
  requestTimeout: number;
  enabled: boolean;
  /** Replaces `mcp_<server>` in tool names; `""` means bare tool names. */
  prefix?: string;
  /** Start only when a tool is first called; tools come from the cache until then. */
  lazy: boolean;
  /** Reconnects (remote) or restarts after a crash (local); `maxAttempts: 0` turns them off. */
  retry: RetryPolicy;
  /** How often an idle connection is checked, in ms; 0 turns the check off. */
  healthCheckInterval: number;
  /** How long a health-check ping may take, in ms. */
  pingTimeout: number;
  /** OAuth for a remote server; undefined when it is off (a local server, `"auth": false`, or a static Authorization header). */
  oauth?: OAuthSettings;
  /** The entry as written, for fields later features read. */
  raw: Record<string, unknown>;
}

export const DEFAULT_OAUTH_CALLBACK_PORT = 9876;

/** A remote server's `auth` block. Strings may hold `${VAR}`s (resolved at sign-in). */
export interface OAuthSettings {
  /** A client registered with the authorization server beforehand; without it the bridge registers itself. */
  clientId?: string;
  clientSecret?: string;
  /** Both set: these endpoints are used instead of discovery. */
  authorizationUrl?: string;
  tokenUrl?: string;
  scopes?: string[];
  callbackPort: number;
  /** A Client ID Metadata Document (an https URL) to use as the client id where the server supports it. */
  clientMetadataUrl?: string;
}

export interface ConfigProblem {
  level: "error" | "warning";
  source: ConfigSource;
  server?: string;
  message: string;
}

export interface ConfigFileInput {
  source: ConfigSource;
  /** The file's text; `undefined` when the file does not exist. */
  text: string | undefined;
}

export interface LayeredConfig {
  /** Valid servers in a stable order (highest-priority file first, then file order). Disabled ones included. */
  servers: ServerConfig[];
  problems: ConfigProblem[];
}

/** The top-level keys other clients use for their server map. */
export const SERVER_MAP_KEYS = ["mcpServers", "servers", "mcp"] as const;

const TYPE_ALIASES: Record<string, TransportKind> = {
  stdio: "stdio",
  local: "stdio",
  http: "http",
  "streamable-http": "http",
  streamablehttp: "http",
  "streamable_http": "http",
  remote: "http",
  sse: "sse",
};

/** Fields that only toggle a lower layer's server on or off. */
const TOGGLE_FIELDS = new Set(["enabled", "disabled"]);



export function describeSource(source: ConfigSource): string {
  return `${source.scope} config ${source.path}`;
}

/** Parses a config file's text: JSON with comments, trailing commas and a UTF-8 BOM tolerated. */
export function parseConfigText(text: string): { value?: unknown; error?: string } {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trim() === "") return { value: {} };
  const errors: ParseError[] = [];
  const value = parseJsonc(body, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const first = errors[0]!;
    const { line, column } = lineAndColumn(body, first.offset);
    return { error: `not valid JSON: ${printParseErrorCode(first.error)} at line ${line}, column ${column}` };
  }
  return { value };
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === "\n") {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** Finds the server map(s) in a parsed file, in any of the accepted shapes. */
export function extractServerEntries(
  doc: unknown,
  source: ConfigSource,
): { entries: Array<{ name: string; entry: unknown }>; problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  const entries: Array<{ name: string; entry: unknown }> = [];
  if (!isObject(doc)) {
    problems.push({ level: "error", source, message: "the file must hold a JSON object with an `mcpServers` (or `servers`, `mcp`) object" });
    return { entries, problems };
  }
  const seen = new Map<string, string>();
  for (const key of SERVER_MAP_KEYS) {
    if (!(key in doc)) continue;
    const map = doc[key];
    if (!isObject(map)) {
      problems.push({ level: "error", source, message: `\`${key}\` must be an object mapping server names to their settings` });
      continue;
    }
    for (const [name, entry] of Object.entries(map)) {
      const earlier = seen.get(name);
      if (earlier !== undefined) {
        problems.push({ level: "warning", source, server: name, message: `defined under both \`${earlier}\` and \`${key}\`; the \`${earlier}\` entry is used` });
        continue;
      }
      seen.set(name, key);
      entries.push({ name, entry });
    }
  }
  return { entries, problems };
}

/** True for an entry that only switches a server defined in a lower layer on or off. */
export function isToggleOnly(entry: unknown): entry is JsonObject {
  if (!isObject(entry)) return false;
  const keys = Object.keys(entry);
  return keys.length > 0 && keys.every((k) => TOGGLE_FIELDS.has(k));
}

function stringMap(value: unknown, field: string, errors: string[]): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) {
    errors.push(`\`${field}\` must be an object of names to string values`);
    return {};
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === "string") out[k] = v;
    // Numbers and booleans are common in hand-written env blocks; their string form is what a process sees anyway.
    else if (typeof v === "number" || typeof v === "boolean") out[k] = String(v);
    else errors.push(`\`${field}.${k}\` must be a string`);
  }
  return out;
}

function booleanField(entry: JsonObject, field: string, fallback: boolean, errors: string[]): boolean {
  const value = entry[field];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "boolean") {
    errors.push(`\`${field}\` must be true or false (got ${JSON.stringify(value)})`);
    return fallback;
  }
  return value;
}

function countField(value: unknown, field: string, fallback: number, errors: string[]): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    errors.push(`\`${field}\` must be a whole number, 0 or more (got ${JSON.stringify(value)})`);
    return fallback;
  }
  return value;
}

function nonNegativeMs(value: unknown, field: string, fallback: number, errors: string[]): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    errors.push(`\`${field}\` must be a number of milliseconds, 0 or more (got ${JSON.stringify(value)})`);
    return fallback;
  }
  return value;
}

const OAUTH_FIELDS = new Set(["type", "clientId", "clientSecret", "authorizationUrl", "tokenUrl", "scopes", "scope", "callbackPort", "clientMetadataUrl"]);

/**
 * A remote server's OAuth settings from `auth`: `false`/`"none"` turns OAuth off, `true`/`"oauth"` or an object turns
 * it on; without `auth` it is on unless a static `Authorization` header is configured.
 */
function oauthSettings(entry: JsonObject, headers: Record<string, string>, errors: string[]): OAuthSettings | undefined {
  const auth = entry.auth;
  const defaults: OAuthSettings = { callbackPort: DEFAULT_OAUTH_CALLBACK_PORT };
  if (auth === undefined || auth === null) {
    return Object.keys(headers).some((h) => h.toLowerCase() === "authorization") ? undefined : defaults;
  }
  if (auth === false || auth === "none") return undefined;
  if (auth === true || auth === "oauth") return defaults;
  if (!isObject(auth)) {
    errors.push('`auth` must be "oauth", false, or an object with `clientId`, `scopes`, `callbackPort` …');
    return undefined;
  }
  for (const key of Object.keys(auth)) if (!OAUTH_FIELDS.has(key)) errors.push(`unknown field \`auth.${key}\``);
  if (auth.type !== undefined && auth.type !== "oauth") errors.push('`auth.type` must be "oauth"');
  const settings: OAuthSettings = { ...defaults };
  const text = (field: string): string | undefined => {
    const value = auth[field];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "string" || value.trim() === "") {
      errors.push(`\`auth.${field}\` must be a non-empty string`);
      return undefined;
    }
    return value;
  };
  settings.clientId = text("clientId");
  settings.clientSecret = text("clientSecret");
  settings.authorizationUrl = text("authorizationUrl");
  settings.tokenUrl = text("tokenUrl");
  settings.clientMetadataUrl = text("clientMetadataUrl");
  for (const field of ["authorizationUrl", "tokenUrl"] as const) {
    const url = settings[field];
    const problem = url === undefined ? undefined : checkUrl(url);
    if (problem) errors.push(problem.replace("`url`", `\`auth.${field}\``));
  }
  if ((settings.authorizationUrl === undefined) !== (settings.tokenUrl === undefined)) {
    errors.push("`auth.authorizationUrl` and `auth.tokenUrl` go together: set both, or neither to use discovery");
  }
  if (settings.clientSecret !== undefined && settings.clientId === undefined) errors.push("`auth.clientSecret` needs `auth.clientId`");
  if (settings.clientMetadataUrl !== undefined && !/^https:\/\/[^/]+\/./.test(settings.clientMetadataUrl)) {
    errors.push("`auth.clientMetadataUrl` must be an https URL with a path");
  }
  const scopes = auth.scopes ?? auth.scope;
  if (typeof scopes === "string") settings.scopes = scopes.split(/\s+/).filter(Boolean);
  else if (Array.isArray(scopes) && scopes.every((x) => typeof x === "string")) settings.scopes = scopes as string[];
  else if (scopes !== undefined) errors.push("`auth.scopes` must be an array of strings (or one space-separated string)");
  if (auth.callbackPort !== undefined) {
    const port = auth.callbackPort;
    if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535) errors.push("`auth.callbackPort` must be a port number, 1 to 65535");
    else settings.callbackPort = port;
  }
  return settings;
}

/**
 * The retry policy: remote servers reconnect (`reconnect`: true/false or `{maxAttempts, initialDelay, maxDelay}`),
 * local ones restart after a crash (`restartOnCrash`, `maxRestarts`; `reconnect` may tune the delays).
 */
function retryPolicy(entry: JsonObject, local: boolean, errors: string[]): RetryPolicy {
  const base = local ? DEFAULT_LOCAL_RETRY : DEFAULT_REMOTE_RETRY;
  let policy: RetryPolicy = { ...base };
  const reconnect = entry.reconnect;
  if (reconnect === false) policy.maxAttempts = 0;
  else if (isObject(reconnect)) {
    policy = {
      maxAttempts: countField(reconnect.maxAttempts, "reconnect.maxAttempts", base.maxAttempts, errors),
      initialDelayMs: positiveNumber(reconnect.initialDelay, "reconnect.initialDelay", base.initialDelayMs, errors),
      maxDelayMs: positiveNumber(reconnect.maxDelay, "reconnect.maxDelay", base.maxDelayMs, errors),
    };
  } else if (reconnect !== undefined && reconnect !== null && reconnect !== true) {
    errors.push("`reconnect` must be true, false or an object with `maxAttempts`, `initialDelay` and `maxDelay`");
  }
  if (local) {
    policy.maxAttempts = countField(entry.maxRestarts, "maxRestarts", policy.maxAttempts, errors);
    if (!booleanField(entry, "restartOnCrash", true, errors)) policy.maxAttempts = 0;
  } else {
    for (const field of ["restartOnCrash", "maxRestarts", "initTimeout"]) {
      if (entry[field] !== undefined) errors.push(`\`${field}\` applies to local (command) servers only; use \`reconnect\` and \`timeout\` for a remote one`);
    }
  }
  return policy;
}

function positiveNumber(value: unknown, field: string, fallback: number, errors: string[]): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    errors.push(`\`${field}\` must be a positive number of milliseconds (got ${JSON.stringify(value)})`);
    return fallback;
  }
  return value;
}

/**
 * Returns an error message when `url` is not an absolute http(s) URL. A URL built from variables can only be checked
 * once they are known (at connect time); before that only its scheme is.
 */
export function checkUrl(url: string): string | undefined {
  if (url.includes("${")) {
    return /^(https?:\/\/|\$\{)/i.test(url.trim()) ? undefined : `\`url\` must start with http:// or https:// (got ${JSON.stringify(url)})`;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `\`url\` is not a valid URL: ${JSON.stringify(url)}`;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return `\`url\` must use http or https (got ${parsed.protocol.replace(/:$/, "")})`;
  }
  return undefined;
}

/**
 * Validates one server entry. Returns the config, or the reasons it is unusable.
 * Unknown fields are kept in `raw` and otherwise ignored, so entries written for other clients still load.
 */
export function validateServerEntry(
  name: string,
  entry: unknown,
  source: ConfigSource,
): { config?: ServerConfig; errors: string[]; warnings: string[] } {
  const errors: string[] = [];
  const warnings: string[] = [];
  if (name.trim() === "") return { errors: ["a server name must not be empty"], warnings };
  if (!isObject(entry)) return { errors: ["the entry must be an object"], warnings };

  let type: string | undefined;
  let kind: TransportKind | undefined;
  if (entry.type !== undefined) {
    if (typeof entry.type !== "string" || !(entry.type.toLowerCase() in TYPE_ALIASES)) {
      errors.push(
        `unknown \`type\` ${JSON.stringify(entry.type)} (use "stdio" or "local" for a command, "http", "streamable-http" or "remote" for Streamable HTTP, "sse" for legacy SSE)`,
      );
    } else {
      type = entry.type;
      kind = TYPE_ALIASES[entry.type.toLowerCase()];
    }
  }

  const hasUrl = entry.url !== undefined && entry.url !== null;
  const hasCommand = entry.command !== undefined && entry.command !== null;
  if (!hasUrl && !hasCommand) {
    errors.push("needs either `command` (a local server) or `url` (a remote server)");
  } else if (hasUrl && hasCommand) {
    errors.push("has both `url` and `command`; keep one (`url` for a remote server, `command` for a local one)");
  }

  let command: string | undefined;
  let args: string[] = [];
  if (hasCommand) {
    if (typeof entry.command === "string") {
      if (entry.command.trim() === "") errors.push("`command` must not be empty");
      command = entry.command;
    } else if (Array.isArray(entry.command)) {
      if (entry.command.length === 0 || !entry.command.every((c) => typeof c === "string")) {
        errors.push("`command` as an array must hold the executable and its arguments, all strings");
      } else if ((entry.command[0] as string).trim() === "") {
        errors.push("`command` must not be empty");
      } else {
        command = entry.command[0] as string;
        args = (entry.command as string[]).slice(1);
      }
    } else {
      errors.push("`command` must be a string (with `args`) or an array of strings");
    }
  }
  if (entry.args !== undefined && entry.args !== null) {
    if (!Array.isArray(entry.args)) {
      errors.push("`args` must be an array of strings");
    } else if (!entry.args.every((a) => typeof a === "string" || typeof a === "number" || typeof a === "boolean")) {
      errors.push("`args` must be an array of strings");
    } else {
      args = [...args, ...entry.args.map(String)];
    }
  }

  let url: string | undefined;
  if (hasUrl) {
    if (typeof entry.url !== "string") errors.push("`url` must be a string");
    else {
      const urlError = checkUrl(entry.url);
      if (urlError) errors.push(urlError);
      url = entry.url;
    }
  }

  if (kind === "stdio" && hasUrl && !hasCommand) errors.push(`\`type\` "${type}" runs a local command, but the entry has a \`url\` and no \`command\``);
  if ((kind === "http" || kind === "sse") && hasCommand && !hasUrl) errors.push(`\`type\` "${type}" connects to a URL, but the entry has a \`command\` and no \`url\``);

  // opencode writes `environment`; everyone else `env`.
  const env = { ...stringMap(entry.environment, "environment", errors), ...stringMap(entry.env, "env", errors) };
  const headers = stringMap(entry.headers, "headers", errors);

  let cwd: string | undefined;
  if (entry.cwd !== undefined && entry.cwd !== null) {
    if (typeof entry.cwd !== "string" || entry.cwd.trim() === "") errors.push("`cwd` must be a non-empty string");
    else cwd = entry.cwd;
  }

  const local = kind === "stdio" || (kind === undefined && !hasUrl);
  // A local server's handshake deadline is `initTimeout` (RISE-057); `timeout` is accepted as its older name.
  const timeout = local
    ? positiveNumber(entry.initTimeout ?? entry.timeout, entry.initTimeout !== undefined ? "initTimeout" : "timeout", DEFAULT_INIT_TIMEOUT_MS, errors)
    : positiveNumber(entry.timeout, "timeout", DEFAULT_CONNECT_TIMEOUT_MS, errors);
  const lazy = booleanField(entry, "lazy", false, errors);
  const retry = retryPolicy(entry, local, errors);
  const healthCheckInterval = nonNegativeMs(entry.healthCheckInterval, "healthCheckInterval", DEFAULT_HEALTH_CHECK_INTERVAL_MS, errors);
  const pingTimeout = positiveNumber(entry.pingTimeout, "pingTimeout", DEFAULT_PING_TIMEOUT_MS, errors);
  let oauth: OAuthSettings | undefined;
  if (local) {
    if (entry.auth !== undefined && entry.auth !== null && entry.auth !== false && entry.auth !== "none") errors.push("`auth` applies to remote (url) servers only");
  } else {
    oauth = oauthSettings(entry, headers, errors);
  }
  const requestTimeout = positiveNumber(entry.requestTimeout, "requestTimeout", DEFAULT_REQUEST_TIMEOUT_MS, errors);

  let enabled = true;
  if (entry.enabled !== undefined) {
    if (typeof entry.enabled !== "boolean") errors.push("`enabled` must be true or false");
    else enabled = entry.enabled;
  }
  if (entry.disabled !== undefined) {
    if (typeof entry.disabled !== "boolean") errors.push("`disabled` must be true or false");
    else if (entry.disabled) enabled = false;
  }

  let prefix: string | undefined;
  if (entry.prefix !== undefined && entry.prefix !== null) {
    if (typeof entry.prefix !== "string") errors.push("`prefix` must be a string (\"\" for bare tool names)");
    else prefix = entry.prefix;
  }

  if (entry.envFile !== undefined) warnings.push("`envFile` is not supported and is ignored; list the variables under `env`");

  if (errors.length > 0) return { errors, warnings };
  return {
    config: {
      name,
      source,
      transport: kind ?? (hasUrl ? "http" : "stdio"),
      type,
      command,
      args,
      env,
      cwd,
      url,
      headers,
      timeout,
      requestTimeout,
      enabled,
      prefix,
      lazy,
      retry,
      healthCheckInterval,
      pingTimeout,
      oauth,
      raw: entry,
    },
    errors,
    warnings,
  };
}

/**
 * Merges config files into one server list. Higher layers replace lower ones by server name; an entry that only sets
 * `enabled`/`disabled` switches the lower layer's server instead of replacing it. A bad entry is reported and skipped;
 * a lower layer's valid entry of the same name then stays in effect.
 */
export function layerConfigs(files: readonly ConfigFileInput[]): LayeredConfig {
  const problems: ConfigProblem[] = [];
  const rank = (scope: ConfigScope) => SCOPES_BY_PRIORITY.indexOf(scope);
  const byPriority = [...files].sort((a, b) => rank(a.source.scope) - rank(b.source.scope));
  const parsedFiles: Array<{ source: ConfigSource; entries: Array<{ name: string; entry: unknown }> }> = [];
  for (const file of byPriority) {
    if (file.text === undefined) continue;
    const parsed = parseConfigText(file.text);
    if (parsed.error !== undefined) {
      problems.push({ level: "error", source: file.source, message: `${parsed.error}; its servers are skipped` });
      continue;
    }
    const { entries, problems: shapeProblems } = extractServerEntries(parsed.value, file.source);
    problems.push(...shapeProblems);
    parsedFiles.push({ source: file.source, entries });
  }

  // Apply the lowest layer first, so each higher one lands on top of it.
  const merged = new Map<string, ServerConfig>();
  for (const { source, entries } of [...parsedFiles].reverse()) {
    for (const { name, entry } of entries) {
      if (isToggleOnly(entry)) {
        const lower = merged.get(name);
        if (lower) merged.set(name, applyToggle(lower, entry, source));
        else problems.push({ level: "error", source, server: name, message: "only sets `enabled`, but no lower-priority config defines this server" });
        continue;
      }
      const result = validateServerEntry(name, entry, source);
      for (const warning of result.warnings) problems.push({ level: "warning", source, server: name, message: warning });
      if (!result.config) {
        const lower = merged.get(name);
        const fallback = lower ? ` (the entry from ${describeSource(lower.source)} is used instead)` : "";
        problems.push({ level: "error", source, server: name, message: `${result.errors.join("; ")}; skipped${fallback}` });
        continue;
      }
      merged.set(name, result.config);
    }
  }

  // Stable order: highest-priority file first, then the order entries appear in each file.
  const order = new Set<string>();
  for (const { entries } of parsedFiles) for (const { name } of entries) if (merged.has(name)) order.add(name);
  return { servers: [...order].map((name) => merged.get(name)!), problems };
}

function applyToggle(config: ServerConfig, entry: JsonObject, source: ConfigSource): ServerConfig {
  let enabled = config.enabled;
  if (typeof entry.enabled === "boolean") enabled = entry.enabled;
  if (entry.disabled === true) enabled = false;
  return { ...config, enabled, enabledSource: source };
}

export const CONFIG_FLAG = "mcp-config";

/**
 * The `--mcp-config <file>` value from a command line. pi hands flag values to extensions only after their factories
 * have run, and the bridge needs the file inside its factory, so it reads the command line itself.
 */
export function configFlagFromArgv(argv: readonly string[]): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") break;
    if (arg === `--${CONFIG_FLAG}`) {
      const next = argv[i + 1];
      if (next !== undefined && !next.startsWith("-")) {
        value = next;
        i++;
      }
    } else if (arg.startsWith(`--${CONFIG_FLAG}=`)) {
      value = arg.slice(CONFIG_FLAG.length + 3);
    }
  }
  return value;
}

/** pi invocations that load extensions only to list things (`--help`, `--list-models`) and then exit. */
const INFO_ONLY_FLAGS = new Set(["--help", "-h", "--list-models"]);

/** True when pi was started only to print information, so connecting to servers would only slow it down. */
export function isInfoOnlyInvocation(argv: readonly string[]): boolean {
  for (const arg of argv.slice(2)) {
    if (arg === "--") return false;
    if (INFO_ONLY_FLAGS.has(arg)) return true;
  }
  return false;
}
