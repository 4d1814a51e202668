/**
 * `/mcp add` on one line: a server's name, options, then the command that starts it or its URL, as pi 1.x's
 * `pi mcp add` takes them (and, for `--scope`, `-e`, `-H`, `--transport` and a URL in the command's place, Claude
 * Code's `claude mcp add`), so a line written for either works here. The words become the config entry. Pure.
 */
import { isVariableName } from "./substitute.ts";

export const ADD_USAGE = `Usage: /mcp add <server> [options] -- <command> [args...]
       /mcp add <server> [options] --url <url>      (or the URL where the command would be)
Options:
  -l, --local                 this project's .pi/mcp.json (default: your own mcp.json); --scope project|user says the same
  -e, --env KEY[=VALUE]       a local server's variable; KEY alone passes pi's own (\${KEY}), so no value is written
  --cwd <dir>                 a local server's working directory
  -H, --header 'Name: value'  a header sent to a remote server (Name=value also works)
  --bearer-token-env-var NAME sends "Authorization: Bearer \${NAME}"
  --oauth                     sign in with OAuth (also --oauth-client-id, --oauth-client-secret, --oauth-callback-port,
                              --oauth-client-name, --oauth-client-registration auto|cimd|dcr)
  -t, --transport http|sse    a remote server's transport (default: Streamable HTTP, falling back to SSE)
  --exposure <mode>           direct, deferred, auto, hidden or codemode
  --description <text>        what the server is for, shown to the model
  --replace                   replace an entry of that name in the file without asking`;

type OptionKind = "flag" | "value" | "list";

/** Each OAuth option and the field of `auth` it sets. */
const OAUTH_OPTIONS: ReadonlyArray<[string, string]> = [
  ["oauth-client-id", "clientId"],
  ["oauth-client-secret", "clientSecret"],
  ["oauth-callback-port", "callbackPort"],
  ["oauth-client-name", "clientName"],
  ["oauth-client-registration", "clientRegistration"],
];
const OPTIONS: Readonly<Record<string, OptionKind>> = {
  local: "flag",
  replace: "flag",
  oauth: "flag",
  scope: "value",
  url: "value",
  transport: "value",
  cwd: "value",
  "bearer-token-env-var": "value",
  ...Object.fromEntries(OAUTH_OPTIONS.map(([option]) => [option, "value" as const])),
  exposure: "value",
  description: "value",
  env: "list",
  header: "list",
};
const SHORT: Readonly<Record<string, string>> = { l: "local", e: "env", H: "header", t: "transport", s: "scope" };
const REMOTE_ONLY = ["header", "bearer-token-env-var", "oauth", ...OAUTH_OPTIONS.map(([option]) => option)];
const LOCAL_ONLY = ["env", "cwd"];
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The options' names, for completion. */
export const ADD_OPTION_NAMES = Object.keys(OPTIONS).map((name) => `--${name}`);

export interface AddLine {
  name: string;
  entry: Record<string, unknown>;
  /** The file it goes to: this project's or the user's. */
  scope: "project" | "user";
  /** An entry of that name in the file is replaced without asking. */
  replace: boolean;
}

interface Parsed {
  positional: string[];
  values: Map<string, string | true>;
  lists: Map<string, string[]>;
}

const isUrl = (word: string | undefined) => word !== undefined && /^https?:\/\//i.test(word);

/**
 * Options until `--` or the command's first word (after the name): the words from there are the command's, its own
 * options (`npx -y …`) among them. After a URL options go on (`… https://host/mcp --header 'Name: value'`).
 */
function parseWords(words: readonly string[]): Parsed | string {
  const parsed: Parsed = { positional: [], values: new Map(), lists: new Map() };
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    // `-- npx -y pkg` with no name before it would name the server `npx` and run `-y`.
    if (word === "--" && parsed.positional.length === 0) return "Name the server first.";
    if (word === "--" || (parsed.positional.length >= 2 && !isUrl(parsed.positional[1]))) {
      parsed.positional.push(...words.slice(word === "--" ? i + 1 : i));
      break;
    }
    if (!word.startsWith("-") || word === "-") {
      parsed.positional.push(word);
      continue;
    }
    const equals = word.startsWith("--") ? word.indexOf("=") : -1;
    const written = equals > 0 ? word.slice(0, equals) : word;
    const name = written.startsWith("--") ? written.slice(2) : SHORT[written.slice(1)];
    const kind = name !== undefined && Object.hasOwn(OPTIONS, name) ? OPTIONS[name] : undefined;
    if (name === undefined || kind === undefined) return `Unknown option ${written}.`;
    if (kind === "flag") {
      if (equals > 0) return `${written} takes no value.`;
      parsed.values.set(name, true);
      continue;
    }
    const value = equals > 0 ? word.slice(equals + 1) : words[++i];
    if (value === undefined) return `${written} needs a value.`;
    if (kind === "list") parsed.lists.set(name, [...(parsed.lists.get(name) ?? []), value]);
    else if (parsed.values.has(name)) return `${written} is given twice.`;
    else parsed.values.set(name, value);
  }
  return parsed;
}

/** `KEY=VALUE` (or, with `colon`, `Name: value`) pairs; a variable given alone is passed from pi's environment. */
function pairs(option: string, items: readonly string[], errors: string[]): Record<string, string> {
  const record: Record<string, string> = {};
  for (const item of items) {
    const at = option === "header" ? item.search(/[:=]/) : item.indexOf("=");
    const key = (at < 0 ? item : item.slice(0, at)).trim();
    if (option === "env" && !isVariableName(key)) errors.push(`--env ${key}: not a variable name`);
    else if (option === "header" && (at < 0 || !HEADER_NAME.test(key)))
      // Not the header as typed: it may be a token given without its name.
      errors.push("each --header needs 'Name: value' (or Name=value)");
    else record[key] = at < 0 ? `\${${key}}` : item.slice(at + 1).trim();
  }
  return record;
}

/** The entry, file and name the words of `/mcp add …` say, or what is wrong with them. */
export function parseAddLine(words: readonly string[]): { line: AddLine } | { error: string } {
  const parsed = parseWords(words);
  if (typeof parsed === "string") return { error: parsed };
  const { positional, values, lists } = parsed;
  const value = (option: string) => {
    const found = values.get(option);
    return typeof found === "string" ? found : undefined;
  };
  const [name, ...command] = positional;
  // `/mcp add https://host/mcp` gave a URL and no name (not "no URL").
  if (!name || isUrl(name)) return { error: "Name the server first." };
  let url = value("url");
  if (url === undefined && isUrl(command[0])) {
    if (command.length > 1) return { error: "Only options may follow a URL." };
    url = command.pop();
  }
  if (url !== undefined && command.length > 0) return { error: "Give a command or a URL, not both." };
  if (url === undefined && command.length === 0) return { error: `No command or URL for '${name}'.` };
  const transport = value("transport");
  if (transport !== undefined && !["http", "sse", "stdio"].includes(transport))
    return { error: `--transport is http, sse or stdio, not '${transport}'.` };
  if (transport === "stdio" && url !== undefined) return { error: "--transport stdio runs a command, not a URL." };
  if ((transport === "http" || transport === "sse") && url === undefined)
    return { error: `--transport ${transport} needs a URL.` };
  const misplaced = (url === undefined ? REMOTE_ONLY : LOCAL_ONLY).find((o) => values.has(o) || lists.has(o));
  if (misplaced) return { error: `--${misplaced} is for ${url === undefined ? "a URL" : "a local command"}.` };
  const scopeWord = value("scope");
  if (scopeWord !== undefined && scopeWord !== "project" && scopeWord !== "user")
    return { error: `--scope is project or user, not '${scopeWord}'.` };
  if (scopeWord === "user" && values.has("local")) return { error: "--local and --scope user say different files." };

  const errors: string[] = [];
  const entry: Record<string, unknown> = {};
  if (url === undefined) {
    const env = pairs("env", lists.get("env") ?? [], errors);
    const [executable, ...args] = command;
    Object.assign(entry, { command: executable }, args.length > 0 && { args });
    if (Object.keys(env).length > 0) entry.env = env;
    if (value("cwd") !== undefined) entry.cwd = value("cwd");
  } else {
    entry.url = url;
    if (transport === "sse") entry.type = "sse";
    const headers = pairs("header", lists.get("header") ?? [], errors);
    const bearer = value("bearer-token-env-var");
    if (bearer !== undefined) {
      if (!isVariableName(bearer)) errors.push(`--bearer-token-env-var ${bearer}: not a variable name`);
      else if (Object.keys(headers).some((h) => h.toLowerCase() === "authorization"))
        errors.push("--bearer-token-env-var and an Authorization header both set the same header");
      else headers.Authorization = `Bearer \${${bearer}}`;
    }
    if (Object.keys(headers).length > 0) entry.headers = headers;
    const oauth: Record<string, unknown> = {};
    for (const [option, field] of OAUTH_OPTIONS) if (value(option) !== undefined) oauth[field] = value(option);
    const port = value("oauth-callback-port");
    if (port !== undefined) oauth.callbackPort = /^\d+$/.test(port) ? Number(port) : port;
    if (Object.keys(oauth).length > 0) entry.auth = oauth;
    else if (values.has("oauth")) entry.auth = "oauth";
  }
  if (value("exposure") !== undefined) entry.exposure = value("exposure");
  if (value("description") !== undefined) entry.description = value("description");
  if (errors.length > 0) return { error: `${errors.join("; ")}.` };
  const scope = values.has("local") || scopeWord === "project" ? "project" : "user";
  return { line: { name, entry, scope, replace: values.has("replace") } };
}
