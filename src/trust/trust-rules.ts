/**
 * Project trust, the pure part: which servers need it, what of a server's definition the user agrees to (its
 * fingerprint), where each server stands against the user's earlier answers, and how a server is shown when the user
 * is asked. A cloned repository's `.pi/mcp.json` can name any command, so none of its servers runs before this says so.
 */
import { canonicalHash } from "../common/canonical-json.ts";
import { errorMessage } from "../common/errors.ts";
import { redact } from "../common/redact.ts";
import { shown, SHOWN } from "../common/terminal-text.ts";
import { shellWord } from "../common/text.ts";
import { commandText, isCommandValue } from "../config/command-value.ts";
import { argSecrets, configVarRefs, findVarRefs, inlineEnvSecrets } from "../config/substitute.ts";
import { pathSecrets } from "../config/import/secrets.ts";
import type { ServerConfig } from "../config/types.ts";
import { commandArgument } from "../config/validate/name.ts";
import type { SandboxSetting } from "../config/sandbox-setting.ts";

/** The user's answer about one server, for the definition with this fingerprint. */
export interface TrustAnswer {
  hash: string;
  trusted: boolean;
  /** Trusted to run in a sandbox only (at least the defaults of `"sandbox": true`). */
  sandboxed?: boolean;
}

/** A project's answers, by server name. */
export type TrustRecord = ReadonlyMap<string, TrustAnswer>;

/**
 * `trusted`/`declined`: answered for this very definition. `new`: never asked about. `changed`: answered, but what it
 * runs or where it connects has changed since.
 */
export type TrustState = "trusted" | "declined" | "new" | "changed";

/**
 * Only what comes with the repository needs trust: the project's own file, and the manifests of pi packages installed
 * in the project (its `.pi/settings.json` names them). A file given with `--mcp-config`, the user's file, packages the
 * user installed and the bundled file are the user's own choice. An entry in the project file that only switches a
 * user's server on or off keeps the user's source, so it needs none either.
 */
export function needsTrust(config: ServerConfig): boolean {
  const { scope, package: pkg } = config.source;
  return scope === "project" || pkg?.installed === "project";
}

/**
 * What the user agrees to: everything that decides what runs and where data goes — command, arguments, working
 * directory, environment, transport, URL, headers, OAuth endpoints and client, which of its tools run without asking
 * (`autoApprove`, `autoApproveReadOnly`) or are sent again after a dropped connection (`resendAfterDrop`), the
 * sandbox it asks for (`sandbox`), whether it is offered the project root (`roots`), and what the model is told it is
 * for (`description`) — as written, with `${VAR}` names and never their values (so a changed variable does not ask
 * again, and no secret is hashed into a file).
 * Timeouts, `lazy`, `prefix` and `enabled` change none of that.
 */
export function trustFingerprint(config: ServerConfig): string {
  // A config is never changed in place (a reload makes new ones), and this is asked before every call of a project
  // server's tool: hashed once per config.
  let hash = fingerprints.get(config);
  if (hash === undefined) fingerprints.set(config, (hash = fingerprintOf(config)));
  return hash;
}

const fingerprints = new WeakMap<ServerConfig, string>();

/** Hashed as written; `roots` too: without them a server works where its arguments say (the filesystem server does). */
const HASHED = "transport command args env cwd url headers oauth autoApprove autoApproveReadOnly description roots";

function fingerprintOf(config: ServerConfig): string {
  // `autoApprove` and `autoApproveReadOnly` change no process or address, yet they stay in: they decide which tool calls
  // run without the user being asked, so a project that widened them (a `"*"`, a tool that writes files) would need no
  // new command to do harm. The user's own "Always allow" changes them too; that write records its new definition as
  // trusted itself (`trustAfterWrite`), so only someone else's change asks again.
  const hashed = Object.fromEntries(HASHED.split(" ").map((key) => [key, config[key as keyof ServerConfig]]));
  // Sampling without asking runs the user's model at the server's word, so it is part of what is trusted. An entry
  // without `description` or that `sampling` hashes as it did before those fields existed: undefined members are left out.
  const sampling = config.sampling === "allow" ? config.sampling : undefined;
  // Sending a call again that may have run is a second run the user was not asked about, as `autoApprove` is.
  const resendAfterDrop = config.resendAfterDrop.length ? config.resendAfterDrop : undefined;
  // `false` hashes as no setting: for a project server both run the same (its `false` yields to the user's default and
  // to a sandboxed trust), so an entry trusted before `sandbox` existed keeps its hash. `true` and rules are hashed as
  // written: a project that widens its rules (`allowWrite`, `allowedDomains`) or drops them for `false` changes the
  // definition and is asked about again — also by a user who trusted it sandboxed, since the rules widen that sandbox.
  const sandbox = config.sandbox === false ? undefined : config.sandbox;
  // A shared server outlives the session, and other projects' sessions use it: that is trusted in so many words too.
  const shared = config.shared ? true : undefined;
  return canonicalHash({ ...hashed, sampling, resendAfterDrop, sandbox, shared });
}

export function trustState(config: ServerConfig, record: TrustRecord): TrustState {
  const answer = record.get(config.name);
  if (!answer) return "new";
  if (answer.hash !== trustFingerprint(config)) return "changed";
  return answer.trusted ? "trusted" : "declined";
}

/**
 * Whether trusting `config` "sandboxed" records a sandboxed answer: only a local server has a process to put in a
 * sandbox; a remote one runs nowhere here, so it is trusted as it is.
 */
export function sandboxedAnswer(config: ServerConfig, sandboxed: boolean): boolean {
  return sandboxed && config.transport === "stdio";
}

/** `record` with `trusted` (`sandboxed`: to run in a sandbox only) as the answer for each of `configs`' definitions. */
export function withAnswer(
  record: TrustRecord,
  configs: readonly ServerConfig[],
  trusted: boolean,
  sandboxed = false,
): Map<string, TrustAnswer> {
  const next = new Map(record);
  for (const config of configs) {
    const answer: TrustAnswer = { hash: trustFingerprint(config), trusted };
    if (trusted && sandboxedAnswer(config, sandboxed)) answer.sandboxed = true;
    next.set(config.name, answer);
  }
  return next;
}

/**
 * The answers a change the bridge wrote to the project's file with the user's word adds to `record` (the answers on
 * disk, which the next session goes by). `before` and `after`: the servers the file defined just before the write and
 * as written. A server the user wrote whole (`authored`: `/mcp add`, `/mcp import`) is trusted as written. Any other
 * server the write changed keeps its trust: trusted as written exactly when the record trusts the definition the file
 * held just before. So an untrusted server never becomes trusted by a write, and a change someone else made to the
 * file since the user last answered (an editor, a `git pull`) is not blessed by a write that lands on top of it.
 */
export function trustAfterWrite(
  before: readonly ServerConfig[],
  after: readonly ServerConfig[],
  record: TrustRecord,
  authored: ReadonlySet<string>,
): Map<string, TrustAnswer> {
  const previous = new Map(before.filter(needsTrust).map((config) => [config.name, config]));
  const answers = new Map<string, TrustAnswer>();
  for (const config of after.filter(needsTrust)) {
    const old = previous.get(config.name);
    const changed = old !== undefined && trustFingerprint(old) !== trustFingerprint(config);
    if (authored.has(config.name)) answers.set(config.name, { hash: trustFingerprint(config), trusted: true });
    else if (changed && trustState(old, record) === "trusted") {
      // Trusted sandboxed stays sandboxed: the user's own change ("Always allow") does not take the sandbox away.
      const sandboxed = record.get(config.name)?.sandboxed === true ? { sandboxed: true } : {};
      answers.set(config.name, { hash: trustFingerprint(config), trusted: true, ...sandboxed });
    }
  }
  return answers;
}

/**
 * A URL as written, with what must not be shown taken out: a password in it, and query values written inline (a
 * `${VAR}` in a value stays, so the user sees which variable would be sent where).
 */
function urlAsWritten(url: string): string {
  const [base = "", query] = url.split(/\?(.*)/s, 2);
  // The user and password run to the authority's last '@' (as URL parsers read it): either may hold an '@' of its own.
  const withoutPassword = redact(
    base.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/?#:]*):[^/?#]*@/i, "$1:***@"),
    pathSecrets(base),
  );
  if (query === undefined) return withoutPassword;
  const params = query.split("&").map((pair) => {
    const eq = pair.indexOf("=");
    if (eq < 0) return pair;
    const value = pair.slice(eq + 1);
    return `${pair.slice(0, eq)}=${findVarRefs(value).length ? value : "…"}`;
  });
  return `${withoutPassword}?${params.join("&")}`;
}

/**
 * `NAME ← ${VAR}` for values that read variables, `NAME (inline)` for those written out: names, never values. A
 * `!command` value is shown with its command, since trusting the server runs it.
 */
function namedValues(values: Readonly<Record<string, string>>): string {
  return Object.entries(values)
    .map(([name, value]) => {
      if (isCommandValue(value)) return `${name} ← output of: ${commandText(value)}`;
      const refs = findVarRefs(value);
      return refs.length ? `${name} ← ${refs.map((r) => `\${${r}}`).join(" ")}` : `${name} (inline)`;
    })
    .join(", ");
}

/** The sandbox a server's definition asks for, as the user is shown it; none for a server that does not say. */
function sandboxLine(setting: SandboxSetting | undefined): string | undefined {
  if (setting === undefined) return undefined;
  if (setting === false) return "asks to run without a sandbox";
  if (setting === true) return "runs sandboxed: writes only in its working directory, no network";
  const { allowWrite, denyRead } = setting.filesystem;
  const { allowedDomains, allowPackageRegistry } = setting.network;
  const parts = [
    allowWrite.length ? `writes also to: ${allowWrite.join(", ")}` : "writes only in its working directory",
    `network: ${allowedDomains.length ? allowedDomains.join(", ") : "none"}${allowPackageRegistry ? " and its package registry" : ""}`,
  ];
  if (denyRead.length) parts.push(`also unreadable: ${denyRead.join(", ")}`);
  return `runs sandboxed: ${parts.join("; ")}`;
}

/**
 * A server as the user sees it when asked to trust it: the command line it runs (or the URL it connects to), where,
 * which environment entries and headers it gets, and which of the user's variables it reads — as written, with
 * `${VAR}` names and never their values.
 */
export function describeForTrust(config: ServerConfig): string[] {
  const lines: string[] = [];
  if (config.transport === "stdio") {
    // A flag's key written inline is hidden as an inline `env` value is; a `${VAR}` in it is shown.
    const secrets = argSecrets(config.args).flatMap((value) => inlineEnvSecrets("token", value));
    // A URL (mcp-remote's) is shown as `url` is, `NAME=value` (docker's `-e`) as an inline `env` value is.
    const hidden = (text: string) => {
      const env = /^([A-Za-z_]\w*)=(.*)$/s.exec(text);
      if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return urlAsWritten(text);
      return redact(text, env ? [...secrets, ...inlineEnvSecrets(env[1]!, env[2]!)] : secrets);
    };
    // Hidden before quoted: quoting changes a key with a `'` in it, which then goes unrecognised.
    const word = (text: string) => (hidden(text) === text ? shellWord(text) : hidden(text));
    lines.push(`runs: ${[config.command ?? "", ...config.args].map(word).join(" ")}`);
    if (config.cwd) lines.push(`in: ${config.cwd}`);
    if (Object.keys(config.env).length) lines.push(`env: ${namedValues(config.env)}`);
  } else {
    lines.push(`connects to: ${urlAsWritten(config.url ?? "")}${config.transport === "sse" ? " (legacy SSE)" : ""}`);
    if (Object.keys(config.headers).length) lines.push(`headers: ${namedValues(config.headers)}`);
    const urls = "authorizationUrl tokenUrl clientMetadataUrl authServerMetadataUrl callbackUrl idpUrl idpTokenUrl";
    const endpoints = urls.split(" ").flatMap((key) => config.oauth?.[key as "tokenUrl"] ?? []);
    const file = config.oauth?.assertionFile ?? config.oauth?.idTokenFile;
    if (endpoints.length) lines.push(`OAuth endpoints: ${endpoints.map(urlAsWritten).join(", ")}`);
    if (file !== undefined) lines.push(`sends the token in this file to sign in: ${file}`);
    const secret = config.oauth?.clientSecret;
    if (secret !== undefined && isCommandValue(secret))
      lines.push(`OAuth client secret ← output of: ${commandText(secret)}`);
    const keyFile = config.oauth?.privateKeyFile;
    if (keyFile !== undefined) lines.push(`signs its OAuth token requests with the key in: ${keyFile}`);
  }
  if (config.autoApprove.length) lines.push(`runs without asking: ${config.autoApprove.join(", ")}`);
  if (config.autoApproveReadOnly) lines.push("runs without asking: the tools it marks read-only");
  if (config.resendAfterDrop.length)
    lines.push(`sent again after a dropped connection, though it may have run: ${config.resendAfterDrop.join(", ")}`);
  if (config.sampling === "allow") lines.push("may have your model answer it without asking (sampling)");
  if (config.description) lines.push(`tells the model: ${config.description}`);
  if (config.roots === false) lines.push("is not offered the project as its root: it works where its arguments say");
  if (config.shared)
    lines.push("shared: one process for every pi session of yours, kept a while after the last has left");
  const sandbox = sandboxLine(config.sandbox);
  if (sandbox) lines.push(sandbox);
  const vars = configVarRefs(config);
  if (vars.length) lines.push(`reads your variables: ${vars.map((v) => `\${${v}}`).join(", ")}`);
  return lines.map((line) => shown(line, SHOWN.body, "visible"));
}

/** A change saved to the project's file without its record of trust (why: `error`), and how to trust the servers again. */
export function trustNotRecorded(servers: readonly string[], error: unknown): string {
  const [them, are] = servers.length === 1 ? ["it", "is"] : ["them", "are"];
  const names = servers.map((name) => `'${shown(name, SHOWN.body, "visible")}'`).join(", ");
  const command = `/mcp trust ${servers.map((name) => commandArgument(shown(name, SHOWN.body, "visible"))).join(" ")}`;
  return `The change is saved, but not that MCP server${servers.length === 1 ? "" : "s"} ${names} ${are} trusted with it (${errorMessage(error)}). If the next session does not trust ${them}, ${command} trusts ${them} again.`;
}

/** The servers the user is asked about, each with why it is asked (new, or changed since the last answer). */
export function trustQuestion(
  projectRoot: string,
  servers: ReadonlyArray<{ config: ServerConfig; state: TrustState }>,
): string {
  const lines = [
    `This project (${shown(projectRoot, SHOWN.body, "visible")}) defines MCP servers that would run on your machine. Nothing of them has run yet.`,
  ];
  for (const { config, state } of servers) {
    lines.push(
      "",
      `${shown(config.name, SHOWN.body, "visible")}  (${state === "changed" ? "changed since you last answered" : "new"})`,
    );
    for (const line of describeForTrust(config)) lines.push(`    ${line}`);
  }
  // Each line is bounded, and so is the whole: a project can define any number of servers.
  return shown(lines.join("\n"), SHOWN.notice);
}
