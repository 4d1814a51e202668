/**
 * `${VAR}` substitution and `~/` expansion in server configs, and what a resolved config looks like. Pure: the
 * environment, the home directory and what `!command` values printed are passed in (the home directory defaults to
 * the user's).
 */
import * as os from "node:os";
import * as path from "node:path";
import { isPlainValue, MIN_SECRET_LENGTH } from "../common/redact.ts";
import { clientSecretField, isCommandValue, outputSecrets } from "./command-value.ts";
import type { ServerConfig, TransportKind } from "./types.ts";
import { pathSecrets } from "./import/secrets.ts";

/** A variable's name: a letter or underscore, then letters, digits and underscores. */
const VAR_NAME = "[A-Za-z_][A-Za-z0-9_]*";
/**
 * What stands between `${` and `}`: `NAME`, `NAME:-default`, VS Code's `env:NAME`, or VS Code's `input:id` (a prompt
 * there, read here from the variable {@link inputVarName} names); the name, the input id and the default captured.
 */
const VAR_BODY = `(?:(?:env:)?(${VAR_NAME})|input:([\\w.-]+))(?::-((?:[^}$]|\\$(?!\\{)|\\$\\{[^}]*\\})*))?`;
/** `${NAME}`, `${NAME:-default}`, VS Code's `${env:NAME}` and `${input:id}`. */
const VAR_PATTERN = new RegExp(`\\$\\{${VAR_BODY}\\}`, "g");
const WHOLE_VAR_NAME = new RegExp(`^${VAR_NAME}$`);
const WHOLE_VAR_BODY = new RegExp(`^${VAR_BODY}$`);

/** Names of the project root: ours, and VS Code's and Cursor's (entries are copied from their configs as they are). */
const PROJECT_ROOT_VARS = new Set(["PROJECT_ROOT", "workspaceFolder"]);

/** A shell's `$HOME` and Windows' `%APPDATA%`; names in capitals only (not `$1`, `$ref`, nor a URL's `%C3%A9`). */
const SHELL_VARIABLE = /\$([A-Z_][A-Z0-9_]*)\b|%(?![0-9A-F]{2}%)([A-Z_][A-Z0-9_]*)%/g;

/**
 * The shell and Windows variables in a value, which nothing here replaces (only `${HOME}`), as written (`$HOME`), and
 * the value as meant (`${HOME}/mcp`); undefined where it has none.
 */
export function shellVariables(text: string): { written: string[]; meant: string } | undefined {
  const written = [...text.matchAll(SHELL_VARIABLE)].map((m) => m[0]);
  if (!written.length) return undefined;
  return {
    written,
    meant: text.replace(SHELL_VARIABLE, (_m, shell?: string, windows?: string) => `\${${shell ?? windows}}`),
  };
}

export type Environment = Readonly<Record<string, string | undefined>>;

export interface Substitution {
  value: string;
  /** Variables that were unset and had no default. */
  missing: string[];
  /** Variables set to "" that had no default: set, so passed on as empty, but no good as a path or a command. */
  empty: string[];
  /** Values that came from the environment: secrets to keep out of messages. */
  secrets: string[];
  /** A missing or empty variable read for a VS Code input → the input as written (`API_KEY` → `${input:api-key}`). */
  inputs: Record<string, string>;
}

/**
 * Replaces variable references. `${VAR:-default}` uses the default when VAR is unset or empty (as in a shell);
 * `${PROJECT_ROOT}` (or `${workspaceFolder}`) is the session's project root. A missing or empty variable becomes an
 * empty string and is reported. `field`: the `env` key it is set under, which may say the value is secret.
 */
export function substituteVars(input: string, env: Environment, projectRoot?: string, field = ""): Substitution {
  const missing: string[] = [];
  const empty: string[] = [];
  const secrets: string[] = [];
  const inputs: Record<string, string> = {};
  // A default may itself hold a reference (`${A:-${B}}`), as in a shell.
  const replace = (text: string): string => text.replace(VAR_PATTERN, replacer);
  const replacer = (match: string, named?: string, id?: string, fallback?: string): string => {
    const name = named ?? inputVarName(id ?? "");
    if (PROJECT_ROOT_VARS.has(name) && projectRoot !== undefined) return projectRoot;
    const found = Object.hasOwn(env, name) ? env[name] : undefined;
    if (found !== undefined && found !== "") {
      // And the secret parts of a URL it holds (a password, a webhook's key) on their own, as where written inline:
      // tool results hide those, not a URL that looks plain, nor one written otherwise.
      secrets.push(...urlPartSecrets(found));
      // Not a port or a setting's word (`${PORT}`, `${LOG_LEVEL}`) where no name says secret: every 8080 or debug about
      // the server would read ***.
      const plain = /^\d{1,6}$/.test(found) || PLAIN_WORD.test(found) || SETTING.test(found);
      if (!plain || SECRET_KEY.test(name) || SECRET_KEY.test(field)) secrets.push(found);
      return found;
    }
    if (fallback !== undefined) return replace(fallback);
    const list = found === "" ? empty : missing;
    if (!list.includes(name)) list.push(name);
    if (id !== undefined) inputs[name] = match;
    return "";
  };
  return { value: replace(input), missing, empty, secrets, inputs };
}

/**
 * The variable a VS Code input is read from: `github-token` → `GITHUB_TOKEN`, `apiKey` → `API_KEY`. VS Code prompts
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

/** A valid environment variable name. */
export function isVariableName(text: string): boolean {
  return WHOLE_VAR_NAME.test(text);
}

/** True when `${inner}` is a reference `substituteVars` resolves (the text between the braces is passed). */
export function isVarReference(inner: string): boolean {
  return WHOLE_VAR_BODY.test(inner);
}

/** The variable names a string refers to (without the project root's). */
export function findVarRefs(input: string): string[] {
  const names = [...input.matchAll(VAR_PATTERN)].flatMap((m) => [
    m[1] ?? inputVarName(m[2] ?? ""),
    ...findVarRefs(m[3] ?? ""),
  ]);
  return [...new Set(names.filter((name) => !PROJECT_ROOT_VARS.has(name)))];
}

/** Every variable a server's config refers to, for status displays (never their values). */
export function configVarRefs(config: ServerConfig): string[] {
  const { oauth } = config;
  // A `!command` value's `${…}` is the shell's to expand, when it runs.
  const plain = (value: string | undefined) => (value !== undefined && isCommandValue(value) ? undefined : value);
  const texts = [
    ...[config.command, ...config.args, config.cwd, config.url],
    ...[...Object.values(config.env), ...Object.values(config.headers)].map(plain),
    ...[oauth?.clientId, plain(oauth?.clientSecret), oauth?.authorizationUrl, oauth?.tokenUrl, oauth?.privateKeyFile],
    ...[oauth?.assertion, oauth?.assertionFile, oauth?.idpUrl, oauth?.idpTokenUrl, oauth?.idpClientId],
    ...[oauth?.idpClientSecret, oauth?.idToken, oauth?.idTokenFile, oauth?.keyId],
    ...[oauth?.clientMetadataUrl, oauth?.authServerMetadataUrl],
  ];
  return [...new Set(texts.flatMap((text) => findVarRefs(text ?? "")))];
}

export interface ResolvedStdio {
  kind: "stdio";
  command: string;
  args: string[];
  /** Only the configured variables; the transport adds the SDK's safe defaults. */
  env: Record<string, string>;
  cwd: string;
}

export interface ResolvedRemote {
  kind: Exclude<TransportKind, "stdio">;
  url: string;
  headers: Record<string, string>;
}

export type ResolvedEndpoint = ResolvedStdio | ResolvedRemote;

export interface Resolution {
  endpoint?: ResolvedEndpoint;
  /** Reasons not to connect at all. */
  errors: string[];
  warnings: string[];
  /** Strings to redact from anything shown or logged. */
  secrets: string[];
}

/** `~` or a leading `~/` (`~\\` on Windows) names the home directory, as in a shell and in pi 1.x's configs. */
export function expandHome(text: string, home: string, platform: NodeJS.Platform = process.platform): string {
  if (text === "~") return home;
  if (text.startsWith("~/") || (platform === "win32" && text.startsWith("~\\"))) return path.join(home, text.slice(2));
  return text;
}

export interface ResolveOptions {
  /** What `~/` stands for; the user's home directory by default. */
  home?: string;
  /**
   * What each `!command` value's command printed, by field (`env.TOKEN`, `headers.Authorization`); see
   * ./command-runner.ts. Without it nothing is run and such a value stays as written (the server's identity, its
   * secrets as far as they are known); with it a field it lacks is an error.
   */
  commandOutputs?: ReadonlyMap<string, string>;
}

/**
 * Resolves a server's `${VAR}` references for one connection attempt. A missing variable is an error in a remote
 * server's `url` or `headers` (sending a request without its credentials helps nobody); a missing or empty one is an
 * error in a local server's `command`, `args` or `cwd` (an empty path can widen what the server reaches). A local
 * server's `env` entry that needs a missing one is left out, with a warning naming it; an empty one is set, so passed
 * on empty, as a shell does.
 */
export function resolveServerConfig(
  config: ServerConfig,
  env: Environment,
  projectRoot: string,
  options: ResolveOptions = {},
): Resolution {
  const errors: string[] = [];
  const warnings: string[] = [];
  const secrets: string[] = [];
  const sub = (text: string, field?: string) => {
    const result = substituteVars(text, env, projectRoot, field);
    secrets.push(...result.secrets);
    return result;
  };
  const home = options.home ?? os.homedir();
  /** A path as written: `~/` expanded, then its variables. */
  const subPath = (text: string) => sub(expandHome(text, home));
  /** A `!command` value's output (a secret), or undefined when it was not run. */
  const commandOutput = (field: string): string | undefined => {
    const output = options.commandOutputs?.get(field);
    if (output !== undefined) secrets.push(...outputSecrets(output));
    else if (options.commandOutputs) errors.push(`\`${field}\`'s command has not run`);
    return output;
  };
  // A VS Code input is named as written beside the variable it is read from.
  const missingText = (names: string[], { inputs }: Substitution) =>
    names.map((n) => `\${${n}}${inputs[n] ? ` (read for \`${inputs[n]}\`)` : ""}`).join(", ");

  if (config.transport === "stdio") {
    const unusable: string[] = [];
    /** A path's value, noting each variable in it that is not set or is empty. */
    const pathValue = (field: string, text: string) => {
      const result = subPath(text);
      for (const n of result.missing) unusable.push(`${missingText([n], result)} in \`${field}\` is not set`);
      for (const n of result.empty) unusable.push(`${missingText([n], result)} in \`${field}\` is empty`);
      return result.value;
    };
    const command = pathValue("command", config.command ?? "");
    const args = config.args.map((arg, i) => pathValue(`args[${i}]`, arg));
    // And the secret parts of a URL argument: a key in its path (mcp-remote's to Zapier's `/api/mcp/s/<key>/sse`), the
    // password of a database's.
    secrets.push(...argSecrets(args), ...args.flatMap(urlPartSecrets));
    const childEnv: Record<string, string> = {};
    for (const [key, value] of Object.entries(config.env)) {
      if (isCommandValue(value)) {
        childEnv[key] = commandOutput(`env.${key}`) ?? value;
        continue;
      }
      const result = sub(value, key);
      if (result.missing.length) {
        warnings.push(
          `environment variable ${missingText(result.missing, result)} is not set, so \`env.${key}\` is not passed to the server`,
        );
        continue;
      }
      childEnv[key] = result.value;
      secrets.push(...inlineEnvSecrets(key, value));
    }
    const cwd = config.cwd === undefined ? projectRoot : path.resolve(projectRoot, pathValue("cwd", config.cwd));
    // An empty argument or directory changes what the server does (a filesystem server given "" serves the project
    // root): a missing or empty variable there stops the server instead; `${VAR:-}` says an empty value is meant.
    if (unusable.length) {
      errors.push(
        `environment variable ${unusable.join(", ")}; set it in the environment pi starts from, or give a default with \${VAR:-value}`,
      );
      return { errors, warnings, secrets: usable(secrets) };
    }
    if (command.trim() === "") errors.push("`command` is empty after variable substitution");
    const endpoint: ResolvedStdio = { kind: "stdio", command, args, env: childEnv, cwd };
    return { endpoint: errors.length ? undefined : endpoint, errors, warnings, secrets: usable(secrets) };
  }

  const url = sub(config.url ?? "");
  const missing: string[] = [...url.missing.map((n) => `${missingText([n], url)} in \`url\``)];
  const empty = url.empty.map((n) => `${missingText([n], url)} in \`url\``);
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(config.headers)) {
    if (isCommandValue(value)) {
      headers[key] = commandOutput(`headers.${key}`) ?? value;
      continue;
    }
    const result = sub(value);
    for (const n of result.missing) missing.push(`${missingText([n], result)} in header \`${key}\``);
    // `Bearer ` with the token left out helps nobody either; `${VAR:-}` says an empty value is meant.
    for (const n of result.empty) empty.push(`${missingText([n], result)} in header \`${key}\``);
    headers[key] = result.value;
    // A header value is a credential more often than not, even when written inline.
    secrets.push(...outputSecrets(result.value));
  }
  // OAuth settings are read when the session signs in (../oauth/session.ts): unset or empty, a client id or secret
  // would go empty (the SDK then says only that a secret is required).
  const group = clientSecretField(config).split(".")[0];
  for (const [key, value] of Object.entries(config.oauth ?? {})) {
    if (typeof value !== "string" || isCommandValue(value)) continue;
    const result = sub(value);
    for (const n of result.missing) missing.push(`${missingText([n], result)} in \`${group}.${key}\``);
    for (const n of result.empty) empty.push(`${missingText([n], result)} in \`${group}.${key}\``);
  }
  if (missing.length) {
    errors.push(
      `environment variable ${missing.join(", ")} is not set; set it in the environment pi starts from, or give a default with \${VAR:-value}`,
    );
  } else if (empty.length) {
    // `https://${HOST}/mcp` with HOST="" would reach the host `mcp`.
    errors.push(
      `environment variable ${empty.join(", ")} is empty; set it in the environment pi starts from, or give a default with \${VAR:-value}`,
    );
  } else if (!URL.canParse(url.value)) {
    errors.push("`url` is not a valid URL after variable substitution");
  } else {
    const { protocol, username, password } = new URL(url.value);
    if (protocol !== "http:" && protocol !== "https:") errors.push("`url` must use http or https");
    // fetch refuses such a URL outright, so every attempt would fail with its words, which say nothing of a fix.
    else if (username || password)
      errors.push(
        "`url` holds a user name and password (`user:pass@`), which are never sent: remove them from `url`, and send them in an `Authorization` header instead (Basic authentication: the base64 of user:pass)",
      );
    secrets.push(...urlSecrets(url.value));
  }
  return {
    endpoint: errors.length ? undefined : { kind: config.transport, url: url.value, headers },
    errors,
    warnings,
    secrets: usable(secrets),
  };
}

/** A key whose value is a credential by its name, however short or plain the value. */
const SECRET_KEY =
  /(key|token|secret|passw(or)?d|(?<![a-z])pass(phrase)?|pwd|auth|credential|private|session|cookie|pat)s?$/i;

/**
 * A setting's word (`stdio`, `error`, `read-only`): n8n's documented `MCP_MODE: "stdio"` and `LOG_LEVEL: "error"`,
 * hidden as secrets, turned every "stdio" and "error" about that server into `***`. No credential is lowercase letters
 * alone.
 */
const PLAIN_WORD = /^[a-z]+(?:[-_][a-z]+)*$/;
/**
 * A setting in capitals (awslabs' documented `FASTMCP_LOG_LEVEL: "ERROR"`, `MODE: "READ_ONLY"`) or a cloud region
 * (`AWS_REGION: "us-east-1"`): hidden, every ERROR in the server's log and us-east-1 in its results read ***.
 */
const SETTING = /^(?:[A-Z]+(?:_[A-Z]+)*|[a-z]{2}(?:-[a-z]+)+-\d)$/;

/**
 * What of an `env` value written inline (not through a `${VAR}`) is secret. Such values are treated as secrets like
 * variable values are, except what plainly is not one under a key that does not say so: a number, a boolean, a path,
 * a plain word; of a URL, only its password and query values are.
 */
export function inlineEnvSecrets(key: string, value: string): string[] {
  // The literal parts around the references, and their defaults (a NUL cannot be in an environment value).
  const inline = value
    .replace(VAR_PATTERN, (_m, _name, _id, fallback?: string) => `\0${(fallback ?? "").replace(VAR_PATTERN, "\0")}\0`)
    .split("\0")
    .filter((part) => part !== "");
  // Even a number or a word is hidden under such a name; a boolean (`REQUIRE_AUTH: "true"`) is a setting all the same.
  if (SECRET_KEY.test(key)) return inline.filter((part) => !/^\s*(?:true|false)\s*$/i.test(part));
  return inline.flatMap((part) => {
    if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(part.trim())) return urlSecrets(part.trim());
    if (isPlainValue(part) || PLAIN_WORD.test(part) || SETTING.test(part)) return [];
    return [part];
  });
}

/** A command-line flag whose value is a credential: `--api-key`, `--token`, `-password`, `--key` (Smithery's CLI), … */
const SECRET_FLAG = /^--?[A-Za-z0-9_-]*(token|secret|passw(or)?d|key|credentials?)$/i;
const NAMED_SECRET_FLAG = /(token|secret|passw(or)?d|credentials?|(api|secret|private|access)[_-]?key)$/i;

/**
 * Values given to secret-looking flags on a command line: `--token X`, `--token=X`, and `"--token X"` as one word; of
 * secret-looking variables set there; and of headers (`--header "X-Api-Key: …"`).
 */
export function argSecrets(args: readonly string[]): string[] {
  return args.flatMap((arg, i) => {
    // A variable set on the command line under a secret's name: docker's `-e GITHUB_TOKEN=…`, `env API_KEY=… server`.
    const variable = /^([A-Za-z_]\w*)=(.*)$/s.exec(arg);
    if (variable && SECRET_KEY.test(variable[1]!)) return inlineEnvSecrets(variable[1]!, variable[2]!);
    const joined = /^(-[^\s=]+)(?:=|\s+)(.*)$/s.exec(arg);
    const [flag, value] = joined ? [joined[1]!, joined[2]!] : [args[i - 1] ?? "", arg];
    // A header given on the command line (mcp-remote's `--header "Authorization: Bearer …"`): its value, as `headers`',
    // without its scheme (a trust dialog showing `Bearer ${TOKEN}` would hide `Bearer`).
    const header = /^(?:--header|-H)$/.test(flag) && /^[\w-]+:\s*(\S[^]*)$/.exec(value);
    if (header) return outputSecrets(header[1]!.trim()).slice(-1);
    // A flag that ends in `key` may name a field (`--sort-key name`): a plain word after it is no credential.
    const field = !NAMED_SECRET_FLAG.test(flag) && PLAIN_WORD.test(value);
    return SECRET_FLAG.test(flag) && value !== "" && !field ? [value] : [];
  });
}

/** The secret parts of a URL: its password, query values but settings, and a key in its path (Zapier's `/s/<key>/mcp`). */
function urlSecrets(text: string): string[] {
  if (!URL.canParse(text)) return [text];
  const url = new URL(text);
  // A query value is judged as an inline `env` value is: `read_only=true`, `features=docs` are settings, not keys.
  const query = [...url.searchParams].flatMap(([name, value]) => inlineEnvSecrets(name, value));
  return [...(url.password ? [decoded(url.password)] : []), ...query, ...pathSecrets(text)];
}

/** The secret parts of `text` if it is a URL (`scheme://…`). */
const urlPartSecrets = (text: string) => (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(text) ? urlSecrets(text) : []);

/** A URL's part decoded, or as written where a `%` in it starts no escape (`50%off`). */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function usable(secrets: string[]): string[] {
  return [...new Set(secrets.filter((s) => s.length >= MIN_SECRET_LENGTH))];
}

/** A URL fit for messages: no credentials, query or fragment. */
export function displayUrl(url: string): string {
  if (!URL.canParse(url)) return "(invalid URL)";
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
}
