/**
 * The fields that say what to start or where to connect: `type`, `command` and `args`, `url`, `env`, `headers`,
 * `cwd`. They decide the transport, and with it whether the other validators treat the server as local or remote.
 */
import { containerRunWarnings } from "./container-run.ts";
import { redact } from "../../common/redact.ts";
import { programName, quoteValue } from "../../common/text.ts";
import type { JsonObject } from "../../common/values.ts";
import { isCommandValue } from "../command-value.ts";
import { argSecrets, shellVariables } from "../substitute.ts";
import type { ServerConfig, TransportKind } from "../types.ts";
import { MAX_TIMER_MS, stringMap } from "./fields.ts";

/** Every spelling of `type` other clients write, and the transport each one means. */
const TYPE_ALIASES: Record<string, TransportKind> = {
  stdio: "stdio",
  local: "stdio",
  http: "http",
  "streamable-http": "http",
  streamablehttp: "http",
  streamable_http: "http",
  remote: "http",
  sse: "sse",
};

/** The transport a `type` value means (any case), or undefined for one no client uses. */
export function transportOfType(type: string): TransportKind | undefined {
  const key = type.toLowerCase();
  // Own keys only: `"constructor" in TYPE_ALIASES` is true through the prototype.
  return Object.hasOwn(TYPE_ALIASES, key) ? TYPE_ALIASES[key] : undefined;
}

/** What to start or where to connect. */
export type Endpoint = Pick<
  ServerConfig,
  "transport" | "type" | "command" | "args" | "url" | "env" | "headers" | "headersTtl" | "cwd"
>;

/** Far above any real server's address (servers commonly refuse request lines over 8 KB). */
const MAX_URL_LENGTH = 16_384;

/**
 * Returns an error message when `url` is not an absolute http(s) URL. A URL built from variables can only be checked
 * once they are known (at connect time); before that only its scheme is.
 */
export function checkUrl(url: string): string | undefined {
  // Every error, log line and notice about the server quotes its URL, and each is redacted first: a URL of megabytes
  // would cost that work in each of them, on the event loop every other server's handshake needs.
  if (url.length > MAX_URL_LENGTH)
    return `\`url\` is ${url.length} characters long; at most ${MAX_URL_LENGTH} are taken (got ${quoteValue(url, 60)})`;
  if (url.includes("${"))
    return /^(https?:\/\/|\$\{)/i.test(url.trim())
      ? undefined
      : `\`url\` must start with http:// or https:// (got ${quoteValue(url)})`;
  if (!URL.canParse(url)) return `\`url\` is not a valid URL: ${quoteValue(url)}`;
  const { protocol } = new URL(url);
  if (protocol !== "http:" && protocol !== "https:")
    return `\`url\` must use http or https (got ${protocol.replace(/:$/, "")})`;
  return undefined;
}

/** {@link checkUrl} for another field that holds a URL (`auth.tokenUrl`): its problem, naming that field. */
export function checkUrlField(url: string | undefined, field: string, errors: string[]): void {
  const problem = url === undefined ? undefined : checkUrl(url);
  if (problem) errors.push(problem.replace("`url`", `\`${field}\``));
}

/**
 * Other clients' names for `url`: Windsurf writes `serverUrl`, Gemini CLI `httpUrl` (its Streamable HTTP endpoint; its
 * own `url` is a legacy SSE one, which ours finds too, as a server that refuses Streamable HTTP is tried as SSE).
 */
const URL_FIELDS = ["url", "serverUrl", "httpUrl"] as const;

/** Reads the endpoint fields. The transport is `type`'s when it names one, else `url` makes it http and `command` stdio. */
export function validateEndpoint(entry: JsonObject, errors: string[], warnings: string[] = []): Endpoint {
  const { type, kind, field } = typeField(entry, errors);
  const urlFields = URL_FIELDS.filter((name) => entry[name] !== undefined && entry[name] !== null);
  const hasUrl = urlFields.length > 0;
  const hasCommand = entry.command !== undefined && entry.command !== null;
  if (!hasUrl && !hasCommand) errors.push("needs either `command` (a local server) or `url` (a remote server)");
  else if (hasUrl && hasCommand)
    errors.push(
      `has both \`${urlFields[0]}\` and \`command\`; keep one (\`url\` for a remote server, \`command\` for a local one)`,
    );
  if (urlFields.length > 1)
    errors.push(`has both ${urlFields.map((name) => `\`${name}\``).join(" and ")}; keep \`url\``);
  const before = errors.length;
  const { command, args } = commandLine(entry, hasCommand, errors);
  if (command !== undefined && errors.length === before) checkArguments(command, args, errors, warnings);
  const url = hasUrl ? urlField(entry[urlFields[0]!], errors) : undefined;

  if (kind === "stdio" && hasUrl && !hasCommand)
    errors.push(
      `\`${field}\` ${quoteValue(type)} runs a local command, but the entry has a \`url\` and no \`command\``,
    );
  if ((kind === "http" || kind === "sse") && hasCommand && !hasUrl)
    errors.push(`\`${field}\` ${quoteValue(type)} connects to a URL, but the entry has a \`command\` and no \`url\``);

  // opencode writes `environment`; everyone else `env`.
  const env = { ...stringMap(entry.environment, "environment", errors), ...stringMap(entry.env, "env", errors) };
  const headers = stringMap(entry.headers, "headers", errors);
  const headersTtl = headersTtlField(entry.headersTtl, hasUrl, errors);
  if (command !== undefined) warnings.push(...containerRunWarnings(command, args, env));

  let cwd: string | undefined;
  if (entry.cwd !== undefined && entry.cwd !== null) {
    if (typeof entry.cwd !== "string" || entry.cwd.trim() === "") errors.push("`cwd` must be a non-empty string");
    else cwd = entry.cwd;
  }
  if (hasUrl !== hasCommand) misplacedFields(hasUrl, { args, env, headers, cwd }, warnings);
  const transport = kind ?? (hasUrl ? "http" : "stdio");
  // A shell's `-c` script reads its own variables.
  const shell = command !== undefined && SHELLS.has(programName(command)) && args[0] === "-c";
  const fields = { command, cwd, url, ...(!shell && prefixed("args", args)), ...prefixed("env", env) };
  checkShellVariables({ ...fields, ...prefixed("headers", headers) }, warnings);
  return { transport, type, command, args, url, env, headers, headersTtl, cwd };
}

/**
 * Fields of the other kind of server are ignored, and a user who wrote them expects them to reach the server (a token
 * in a remote server's `env`, a local one's `headers`): a 401 or a server without its key would not say why.
 */
function misplacedFields(
  remote: boolean,
  fields: { args: string[]; env: Record<string, string>; headers: Record<string, string>; cwd?: string },
  warnings: string[],
): void {
  const given = {
    args: fields.args.length > 0,
    env: Object.keys(fields.env).length > 0,
    cwd: fields.cwd !== undefined,
    headers: Object.keys(fields.headers).length > 0,
  };
  const names = (remote ? (["args", "env", "cwd"] as const) : (["headers"] as const))
    .filter((name) => given[name])
    .map((name) => `\`${name}\``);
  if (names.length === 0) return;
  const [verb, be] = names.length > 1 ? ["apply", "are"] : ["applies", "is"];
  warnings.push(
    remote
      ? `${names.join(", ")} ${verb} to local (command) servers only, and ${be} ignored for this remote one: what it needs goes in \`headers\``
      : `\`headers\` applies to remote (url) servers only, and is ignored for this local one: what it needs goes in \`env\` or \`args\``,
  );
}

/** `headersTtl`: seconds a `!command` header value may be sent before its command runs again; in ms. */
function headersTtlField(value: unknown, remote: boolean, errors: string[]): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value * 1000 > MAX_TIMER_MS) {
    errors.push(
      `\`headersTtl\` must be a number of seconds, more than 0 and at most ${MAX_TIMER_MS / 1000} (got ${quoteValue(value)})`,
    );
    return undefined;
  }
  if (!remote) errors.push("`headersTtl` is for a remote server's `headers`; a local server has none");
  return value * 1000;
}

/** Other clients' names for `type`: LangChain's MCP adapters and mcp-use write `transport`, Cline `transportType`. */
const TYPE_FIELDS = ["type", "transport", "transportType"] as const;

/** `type` (or another client's name for it) as written, and the transport it names; neither when absent or unknown. */
function typeField(entry: JsonObject, errors: string[]): { type?: string; kind?: TransportKind; field?: string } {
  const field = TYPE_FIELDS.find((name) => entry[name] !== undefined && entry[name] !== null);
  if (field === undefined) return {};
  const value = entry[field];
  const kind = typeof value === "string" ? transportOfType(value) : undefined;
  if (kind === undefined) {
    errors.push(
      `unknown \`${field}\` ${quoteValue(value)} (use "stdio" or "local" for a command, "http", "streamable-http" or "remote" for Streamable HTTP, "sse" for legacy SSE)`,
    );
    return {};
  }
  return { type: value as string, kind, field };
}

/** `command` as a string (with `args`) or as an array holding the executable and its first arguments. */
function commandLine(entry: JsonObject, hasCommand: boolean, errors: string[]): { command?: string; args: string[] } {
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
    if (typeof entry.args === "string")
      errors.push(
        redact(
          `\`args\` must be an array of strings, one per argument: ${JSON.stringify(entry.args.trim().split(/\s+/))}`,
          argSecrets(entry.args.trim().split(/\s+/)),
        ),
      );
    else if (!Array.isArray(entry.args)) errors.push("`args` must be an array of strings");
    else if (!entry.args.every((a) => typeof a === "string" || typeof a === "number" || typeof a === "boolean"))
      errors.push("`args` must be an array of strings");
    else args = [...args, ...entry.args.map(String)];
  }
  return { command, args };
}

function urlField(value: unknown, errors: string[]): string | undefined {
  if (typeof value !== "string") {
    errors.push("`url` must be a string");
    return undefined;
  }
  const urlError = checkUrl(value);
  if (urlError) errors.push(urlError);
  return value;
}

const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh"]);

/** `args[0]`, `env.HOME`: each value of a list or map under the name a message gives it. */
function prefixed(field: string, values: readonly string[] | Record<string, string>): Record<string, string> {
  const sep = Array.isArray(values) ? (key: string) => `[${key}]` : (key: string) => `.${key}`;
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [`${field}${sep(key)}`, value]));
}

/**
 * `$HOME` or `%APPDATA%` where `${HOME}` was meant: no shell reads the entry, so the server would get the text. (A
 * `!command` value runs in a shell, which reads them.)
 */
function checkShellVariables(fields: Record<string, string | undefined>, warnings: string[]): void {
  for (const [field, value] of Object.entries(fields)) {
    const found = value === undefined || isCommandValue(value) ? undefined : shellVariables(value);
    // An `env` or header value, or a URL, may hold a secret (a password with a `$` in it): name only the variables.
    const meant = found && (SECRET_FIELD.test(field) ? shellVariables(found.written.join(" "))?.meant : found.meant);
    if (found)
      warnings.push(
        `\`${field}\` holds ${found.written.join(", ")}, which is passed on as written (no shell reads the entry): write ${JSON.stringify(meant)} for the variable's value`,
      );
  }
}

const SECRET_FIELD = /^(?:env\.|headers\.|url$)/;

/** A flag and its value written as one argument (`"-y @scope/server"`), which the program gets as one word. */
const FLAG_WITH_VALUE = /^--?[A-Za-z][\w-]*\s+\S/;

/**
 * Arguments that cannot mean what they say: a flag and its value in one string, and an `npx` given no package (it
 * then starts a shell, which would run what the bridge sends as commands).
 */
function checkArguments(command: string, args: readonly string[], errors: string[], warnings: string[]): void {
  for (const [i, arg] of args.entries())
    if (FLAG_WITH_VALUE.test(arg))
      warnings.push(
        redact(
          `\`args[${i}]\` is ${quoteValue(arg)}: the program gets it as one argument; write each as its own string: ${JSON.stringify(arg.trim().split(/\s+/)).slice(1, -1)}`,
          argSecrets(arg.trim().split(/\s+/)),
        ),
      );
  if (programName(command) === "npx" && args.every((a) => a.startsWith("-")))
    errors.push(
      'runs `npx` with no package to run (npx would start a shell instead); name the package in `args`, e.g. ["-y", "@modelcontextprotocol/server-memory"]',
    );
}
