/**
 * The words of a server's errors: what failed, why, and what to change. Every message passes through the server's
 * redaction, since a stderr tail or a URL can carry a secret.
 */
import { BridgeError, causeChain, codeOf, describeError, errorMessage, type ErrorKind } from "../common/errors.ts";
import { isSandboxed } from "../config/sandbox-setting.ts";
import { httpStatusOf, kindOf, serverAnswered } from "../common/error-kinds.ts";
import { describeSource, type ServerConfig } from "../config/types.ts";
import { measured, seconds, shellWord } from "../common/text.ts";
import { shown, SHOWN } from "../common/terminal-text.ts";
import { displayUrl, findVarRefs } from "../config/substitute.ts";
import { commandArgument } from "../config/validate/name.ts";
import { handshakeTimeoutField, requestTimeoutField } from "../config/validate/timeout.ts";
import { needsSignInMessage } from "../oauth/session.ts";
import type { OpenStage } from "./live-session.ts";
import { rereadableHeaders } from "./fresh-headers.ts";
import { INSTALL_LIMIT_MS } from "./connect-deadline.ts";
import { connectHint } from "./connect-hints.ts";
import { type LaunchFailure, launcherSource, permanentLaunchFailure } from "./local/launch-failure.ts";
import { proxyHint, signInWaitIn } from "./local/mcp-remote-entry.ts";
import { type NpxFailure, npxLaunch } from "./local/npx-failure.ts";
import { unreachableAdvice, type UnreachableHost } from "./local/unreachable-host.ts";
import type { ServesHttp } from "./local/serves-http.ts";
import { askedFailure, type AsksFor, missingVariables } from "./local/missing-variable.ts";
import { type MissingScript, missingScriptAdvice } from "./local/missing-script.ts";

/**
 * A message as it leaves here, for the model, a notice or /mcp: redacted first (a cut could leave half a secret), then
 * made harmless and bounded, since it can quote the server's own error, stderr, command or URL.
 */
export function told(ctx: ErrorContext, message: string): string {
  return shown(ctx.redact(message), SHOWN.body);
}

/** What a message needs to know about its server. */
export interface ErrorContext {
  config: ServerConfig;
  /** A remote server's `url` with its variables put in (`config.url` may hold `${VAR}`s). */
  url?: string;
  redact(text: string): string;
  /** The last stderr lines, and stdout lines that are not JSON-RPC, formatted for a message ("" if none). */
  stderr(): string;
  /** How the server's process ended, if it did: `exited with code 1`. */
  exitDescription?: string;
  /** Its exit code, if it exited by itself. */
  exitCode?: number | null;
  /** It ran in a sandbox. */
  sandboxed?: boolean;
  /** Why an `npx` start failed, from what npm left behind (./local/npx-failure.ts). */
  npxFailure?: NpxFailure;
  /** How long after its spawn it ended, in ms, and how long of that npx spent installing its package. */
  exitedAfterMs?: number;
  npxInstallMs?: number;
  /** How far the newest open got. */
  stage?: OpenStage;
  /** Whether npm is installing the package for npx while the newest session opens. */
  installing?: boolean;
  /** What a local server's output asks for (./local/missing-variable.ts). */
  asksFor?: AsksFor;
  /** A host a local server's stderr says it could not reach. */
  unreachable?: UnreachableHost;
  /** Where a local server's output says it serves MCP over HTTP (not over stdio, where it was started). */
  servesHttp?: ServesHttp;
  /** The script a local server's entry names, which its runtime says is not there. */
  missingScript?: MissingScript;
  /** A shared server's hub's log, when the hub had not attached the newest session to the server. */
  hubLog?: string;
  /** Whether a local server wrote anything to stdout in its newest start. */
  wroteToStdout?: boolean;
  /** A local server's working directory, as resolved, where it is no folder (its spawn then fails with ENOENT, ENOTDIR). */
  missingCwd?: string;
  /** A local server's command is a path to a folder (its spawn fails with EACCES), or a script without a `#!` line. */
  commandFault?: "folder" | "shebangless";
  /** Why the bridge stopped the server, if it did: something it sent was over a limit. */
  violation?: string;
  /** Lines the server wrote to stdout that were not JSON-RPC. */
  nonJsonLines: number;
  /** What a remote server said when it last refused the credentials: "Invalid or missing API key". */
  refusal?: string;
  /** The server uses OAuth: the fix for an auth error is a sign-in, not a header. */
  oauth: boolean;
  /** What to say when a server with OAuth refuses its token (a sign-in, or for a machine client, its access). */
  oauthRefused?: string;
}

function authMessage(ctx: ErrorContext, error: unknown): string {
  const { config } = ctx;
  // An OAuth error the bridge worded already (a token endpoint's or an identity provider's answer) keeps its words.
  if (ctx.oauth)
    return error instanceof BridgeError ? error.message : (ctx.oauthRefused ?? needsSignInMessage(config.name));
  const status = httpStatusOf(error);
  const where = describeSource(config.source);
  const headerNames = Object.keys(config.headers);
  const vars = Object.values(config.headers).flatMap(findVarRefs);
  let fix =
    headerNames.length === 0
      ? `it sends no credentials; add an \`Authorization\` (or API key) header to '${config.name}' in ${where}`
      : `check ${headerList(headerNames)} of '${config.name}' in ${where}`;
  // Only a header's value names variables, so these come after the headers to check.
  if (vars.length)
    fix += ` and that ${[...new Set(vars)].map((v) => `\${${v}}`).join(", ")} holds a valid, unexpired credential`;
  const commands = rereadableHeaders(config);
  // A value read once (inline, or from pi's environment) is what the server refused, and would be again.
  const advice = commands.length
    ? `; ${headerList(commands)} came from a \`!command\` just run, so check what it prints`
    : headerNames.length
      ? // The example is the value alone: `"X-API-Key": "…"` would be hidden as a credential wherever the message is shown.
        `. To have the bridge read a new value when the server refuses the old one, write the header's value as a \`!command\` (\`"!cat <token file>"\`)`
      : "";
  return told(
    ctx,
    `MCP server '${config.name}' rejected the request with ${statusText(status)}${saying(ctx)}: ${fix}${advice}. Reconnecting would not help, so it was not retried.`,
  );
}

/** `, saying "Invalid or missing API key"`: the server's own words for its refusal, where it gave some. */
const saying = (ctx: ErrorContext) => (ctx.refusal ? `, saying ${JSON.stringify(ctx.redact(ctx.refusal))}` : "");

const STATUS_TEXT: Record<number, string> = { 401: "HTTP 401 (unauthorized)", 403: "HTTP 403 (forbidden)" };
const statusText = (status?: number) => STATUS_TEXT[status ?? 0] ?? "an authentication error";

function headerList(names: string[]): string {
  return `the ${names.map((h) => `\`${h}\``).join(", ")} ${names.length > 1 ? "headers" : "header"}`;
}

/** The server refused the `!command` header values that were read again after it refused the first ones. */
export function refusedAfterRereadError(ctx: ErrorContext, what: string, error: unknown): BridgeError {
  const { name, source } = ctx.config;
  const message =
    `MCP server '${name}' rejected '${what}' with ${statusText(httpStatusOf(error))}${saying(ctx)} again after the bridge re-read its credentials: ` +
    `${headerList(rereadableHeaders(ctx.config))} of '${name}' in ${describeSource(source)} came from a \`!command\`, which was run again, ` +
    "and the server refused the new value too; check what the command prints (its output is not shown).";
  return new BridgeError("auth", name, told(ctx, message), { cause: error });
}

export function callError(
  ctx: ErrorContext,
  kind: Exclude<ErrorKind, "transport">,
  toolName: string,
  error: unknown,
): BridgeError {
  const { config } = ctx;
  switch (kind) {
    case "cancelled":
      return cancelledError(config.name, toolName, error);
    case "timeout":
      return new BridgeError(
        "timeout",
        config.name,
        `MCP server '${config.name}' did not answer '${toolName}' within ${seconds(config.requestTimeout)} without progress; ` +
          `raise ${requestTimeoutField(config.raw)} for '${config.name}' in ${config.source.path} if the tool needs longer`,
        { cause: error },
      );
    case "auth":
      return new BridgeError("auth", config.name, authMessage(ctx, error), { cause: error });
    default: {
      const message = `MCP server '${config.name}' failed '${toolName}': ${describeError(error)}`;
      return new BridgeError("other", config.name, told(ctx, message), { cause: error });
    }
  }
}

/** Why a local server's start failed for good, from its exit, its output and npm's files; undefined if nothing says. */
export function permanentFailure(ctx: ErrorContext): LaunchFailure | undefined {
  if (ctx.exitDescription && ctx.commandFault === "shebangless")
    return {
      reason: "its command is a script without a `#!` line, so a shell ran it (the system's fallback), not its runtime",
      fix: `name its runtime in \`command\` and the script in \`args\` ("command": "node", "args": [${JSON.stringify(ctx.config.command)}]), or begin the script with a \`#!\` line`,
    };
  const launch = permanentLaunchFailure(ctx.exitCode, ctx.stderr(), ctx.npxFailure, ctx.sandboxed);
  if (launch || !ctx.exitDescription) return launch;
  // npm takes `owner/name` for a GitHub repository; npm 11 exits with git's 128 when git cannot fetch it, saying nothing.
  const spec = ctx.exitCode === 128 ? npxLaunch(ctx.config.command ?? "", ctx.config.args)?.spec : undefined;
  if (spec && /^\w[\w.-]*\/[\w.-]+$/.test(spec))
    return {
      reason: `npx took its package '${spec}' for the GitHub repository github.com/${spec}, which git could not fetch (the process ${ctx.exitDescription}${exitedAfter(ctx)})`,
      fix: `an npm package of a scope begins with @: write "@${spec}" in \`args\` of '${ctx.config.name}' in ${ctx.config.source.path}`,
    };
  // Each of these reads the server's output afresh: once here.
  const { asksFor: asks, missingScript: script } = ctx;
  if (!asks) return undefined;
  const ended = `${ctx.exitDescription}${exitedAfter(ctx)}`;
  if (script) {
    const { reason, fix } = missingScriptAdvice(script, ctx.config);
    return { reason: `${reason} (the process ${ended})`, fix };
  }
  return askedFailure(ctx.config, ended, asks, ctx.stderr().includes(asks.asking ?? ""));
}

/**
 * A local server asking for a variable its start did not give that answered the handshake with an error (@21st-dev/magic:
 * "No API key found", then "Not authenticated") or hung (@gannonh/firebase-mcp): no restart gives it.
 */
function wantingVariable(ctx: ErrorContext, error: unknown, timedOut: boolean): LaunchFailure | undefined {
  // Not while npx installs it: that is why it has not answered.
  const asks = ctx.config.transport === "stdio" && !(timedOut && ctx.stage === "installing") ? ctx.asksFor : undefined;
  if (!asks?.names.length) return undefined;
  const did = timedOut
    ? `gave no answer to the MCP handshake within its \`${handshakeTimeoutField(ctx.config.raw, true)}\` of ${seconds(ctx.config.timeout)}`
    : `answered ${ctx.stage === "tools" ? "the request for its tools" : "the MCP handshake"} with ${JSON.stringify(ctx.redact(describeError(error)))}`;
  return missingVariables(ctx.config, did, asks, ctx.stderr().includes(asks.asking ?? ""));
}

/** The server's command line for a terminal, and the variables its `env` sets there (names only: values may be secret). */
function rerunHint(ctx: ErrorContext): string {
  const { command = "", args, env } = ctx.config;
  // Each word hidden before it is quoted: quoting changes a secret with a `'` in it, which then goes unrecognised.
  const word = (text: string) => (ctx.redact(text) === text ? shellWord(text) : ctx.redact(text));
  const line = ctx.redact([command, ...args].map(word).join(" "));
  const names = Object.keys(env);
  return `\`${line}\` in a terminal${names.length ? ` with ${names.join(", ")} set as its \`env\` sets them` : ""}`;
}

/** ` after 1.2 s`: how long a local server ran before it exited, where known. */
function exitedAfter(ctx: ErrorContext): string {
  if (ctx.exitedAfterMs === undefined) return "";
  const install = ctx.npxInstallMs;
  return ` after ${measured(ctx.exitedAfterMs)}${install ? `, ${measured(install)} of it npx installing its package` : ""}`;
}

/**
 * A connect that ran out of its time: which timer fired, after how long, how far the server got, and what to change.
 * `elapsedMs` is how long the attempt took.
 */
function handshakeTimeoutMessage(ctx: ErrorContext, elapsedMs: number, where: string): string {
  const { config } = ctx;
  const local = config.transport === "stdio";
  const field = handshakeTimeoutField(config.raw, local);
  const install =
    local && ctx.npxInstallMs
      ? ` (counted from its program's start, after npx installed its package in ${measured(ctx.npxInstallMs)})`
      : "";
  const timer = `when its \`${field}\` of ${seconds(config.timeout)} ran out${install}`;
  // A legacy SSE server names its endpoint on its stream at once; a Streamable HTTP server's GET stream never does.
  const sse = config.transport === "sse";
  let message: string;
  if (ctx.stage === "installing")
    return (
      `MCP server '${config.name}': npx was still installing its package after ${measured(elapsedMs)}, so it was ` +
      `stopped (an install may take ${INSTALL_LIMIT_MS / 60_000} minutes before the server's \`${field}\` counts); npm's ` +
      `own messages are in its stderr, and a slow network or registry is the usual cause`
    );
  if (ctx.stage === "tools") {
    message = `MCP server '${config.name}'${where} completed the MCP handshake, but its tool list had not arrived after ${measured(elapsedMs)}, ${timer}`;
  } else {
    message = `MCP server '${config.name}'${where}: ${sse ? "no endpoint on its SSE stream, or " : ""}no answer to the MCP handshake after ${measured(elapsedMs)}, ${timer}`;
    if (local)
      message += ctx.hubLog
        ? `; the shared-server hub did not start it in time (its log: ${ctx.hubLog})`
        : ctx.wroteToStdout
          ? "; it wrote to stdout but did not complete the handshake"
          : "; its process was running but had written nothing to stdout";
  }
  if (local && !ctx.hubLog) message += ", so it was stopped";
  if (local && ctx.nonJsonLines > 0)
    message += `; it wrote ${ctx.nonJsonLines} line(s) to stdout that are not JSON-RPC messages (a server must log to stderr, not stdout)`;
  if (local && ctx.unreachable) {
    const { what, why } = unreachableAdvice(ctx.unreachable);
    message += `; its output says it ${what}: ${why}`;
  }
  const slow = local
    ? "it is just slow to start (the first `npx` download of a server can take a minute)"
    : `the server is just slow to answer${sse ? '; if it speaks Streamable HTTP, as most servers now do, remove `"type": "sse"` from its entry instead' : ""}`;
  return `${message}. Raise \`${field}\` for '${config.name}' in ${config.source.path} if ${slow}.`;
}

/** `repeated`: the start failed as the one before it did, so no restart follows (./local/repeated-failure.ts). */
export function connectError(ctx: ErrorContext, error: unknown, elapsedMs: number, repeated = false): BridgeError {
  const { config } = ctx;
  const kind = kindOf(error);
  if (kind === "auth") return new BridgeError("auth", config.name, authMessage(ctx, error), { cause: error });
  // The server answered, wrongly: its process, if it ended, was ended by the bridge after that.
  const answered = serverAnswered(error);
  const where =
    config.transport === "stdio"
      ? ""
      : ` at ${shown(ctx.redact(displayUrl(ctx.url ?? config.url ?? "")), SHOWN.line, "line")}`;
  let message: string;
  let permanent: LaunchFailure | undefined;
  let signIn: string | undefined;
  if (
    kind === "timeout" &&
    config.transport === "stdio" &&
    (ctx.stage === "starting" || ctx.stage === "handshake") &&
    ctx.servesHttp
  ) {
    const { line, url } = ctx.servesHttp;
    const connect = url ? `, or start it yourself and connect to it by \`"url": ${JSON.stringify(url)}\`` : "";
    message = `MCP server '${config.name}': it serves MCP over HTTP, not over stdio where it was started (it said ${JSON.stringify(ctx.redact(line))}), and had not answered the handshake after ${measured(elapsedMs)}, so it was stopped; give it the option that makes it speak over stdio (its README names it, often \`--stdio\`) in \`args\` of '${config.name}' in ${config.source.path}${connect}. Restarting would not help, so it was not retried`;
    permanent = { reason: message };
  } else if (kind === "timeout" && proxyHint(config) && (signIn = signInWaitIn(ctx.stderr()))) {
    message = `MCP server '${config.name}': mcp-remote had waited ${measured(elapsedMs)} for a sign-in in a browser at ${signIn}, which pi cannot show, so it was stopped; each start would begin another sign-in, so it was not restarted`;
    permanent = { reason: message };
  } else if (kind === "timeout" && !(permanent = wantingVariable(ctx, error, true))) {
    message = handshakeTimeoutMessage(ctx, elapsedMs, where);
  } else if (config.transport === "stdio" && /^ENO(ENT|TDIR)$/.test(codeOf(error) ?? "") && ctx.missingCwd) {
    const wrong = codeOf(error) === "ENOTDIR" ? "is not a folder" : "does not exist";
    message = `MCP server '${config.name}': its working directory ${ctx.missingCwd} ${wrong}: check \`cwd\` of '${config.name}' in ${config.source.path}`;
  } else if (config.transport === "stdio" && codeOf(error) === "ENOENT") {
    const command = config.command ?? "";
    // The entry's own PATH (one that does not take pi's ${PATH}) is where a bare name was looked for.
    const own = !/[\\/]/.test(command) && !/PATH\b/.test(config.env.PATH ?? "PATH");
    message = `MCP server '${config.name}': command '${command}' was not found (${own ? "is it installed, in a folder of the `PATH` its `env` sets?" : "is it installed and on PATH?"})`;
    const source = !own && launcherSource(command);
    if (source) message += `: ${source}`;
    const [first = "", ...words] = command.trim().split(/\s+/);
    // Not a path with a space in it (`/opt/My Tools/server`): what follows the space goes on with the path.
    if (words.length && (!/[\\/]/.test(first) || /^(-|[A-Za-z]:|[\\/~])/.test(words[0]!)))
      message += `; put its arguments in \`args\` rather than in \`command\`: "command": ${JSON.stringify(first)}, "args": ${JSON.stringify([...words, ...config.args])}`;
    // A README's entry for Windows, where npx is started through `cmd /c`, copied to a machine that has no cmd.
    const [flag, program, ...rest] = config.args;
    if (/^cmd(\.exe)?$/i.test(command.trim()) && /^\/c$/i.test(flag ?? "") && program)
      message += `: the entry is written for Windows (\`cmd /c\`); here, start the program itself: "command": ${JSON.stringify(program)}, "args": ${JSON.stringify(rest)} (in ${config.source.path})`;
  } else if (config.transport === "stdio" && codeOf(error) === "EACCES") {
    message =
      ctx.commandFault === "folder"
        ? `MCP server '${config.name}': command '${config.command ?? ""}' is a folder, not a program: write the path of the server's program (or its runtime, with its script in \`args\`) in \`command\` of '${config.name}' in ${config.source.path}`
        : `MCP server '${config.name}': command '${config.command ?? ""}' could not be run (permission denied: is it executable?)`;
  } else if (config.transport === "stdio" && codeOf(error) === "E2BIG") {
    message = `MCP server '${config.name}': its command line and environment are longer than the system allows (E2BIG); shorten \`args\` or \`env\` of '${config.name}' in ${config.source.path}`;
  } else if (ctx.violation) {
    const ended = config.transport === "stdio" ? "it was stopped" : "the connection was closed";
    message = `MCP server '${config.name}': ${ctx.violation}, so ${ended} (raise \`maxMessageBytes\` for '${config.name}' in ${config.source.path} if it really sends messages that large)`;
  } else if (
    config.transport === "stdio" &&
    (permanent ??= answered ? wantingVariable(ctx, error, false) : permanentFailure(ctx))
  ) {
    const fix = permanent.fix ?? `check \`command\` and \`args\` of '${config.name}' in ${config.source.path}`;
    message = `MCP server '${config.name}': ${permanent.reason}; ${fix}. Restarting would not help, so it was not retried`;
  } else if (ctx.exitDescription && !answered) {
    const ended = `the process ${ctx.exitDescription}${exitedAfter(ctx)}, before completing the MCP handshake`;
    // What went wrong comes first, where /mcp's table has room for a few words of it.
    const unreachable = ctx.unreachable && unreachableAdvice(ctx.unreachable);
    const check = `check \`command\`, \`args\` and \`env\` of '${config.name}' in ${config.source.path}`;
    message = unreachable
      ? `MCP server '${config.name}': it ${unreachable.what}, as its output says, and ${ended}: ${unreachable.why}`
      : ctx.stderr()
        ? `MCP server '${config.name}': ${ended}; what it printed (below, and in /mcp) usually says why: ${check}`
        : `MCP server '${config.name}': ${ended}, and printed nothing to say why: ${check}, and run ${rerunHint(ctx)} to see how it fails (some servers write their errors only with their logging turned on: see its documentation)`;
    if (repeated)
      message += `. It failed the same way at its last start, so it was not restarted again: \`/mcp reconnect ${commandArgument(config.name)}\` starts it once the cause is fixed`;
  } else if (config.transport !== "stdio" && causeChain(error).some((e) => (e as Error)?.message === "bad port")) {
    // Node's fetch, as a browser's, refuses the ports of other protocols (mail, X11, IRC…) before connecting.
    const fix = `serve it on another port and change \`url\` of '${config.name}' in ${config.source.path}`;
    message = `MCP server '${config.name}'${where}: Node's fetch refuses to connect to port ${new URL(ctx.url ?? config.url ?? "").port}, as browsers do (https://fetch.spec.whatwg.org/#port-blocking); ${fix}. Reconnecting would not help, so it was not retried`;
    permanent = { reason: message };
  } else {
    const detail = describeError(error);
    const answeredBy = answered ? (config.transport === "stdio" ? "local" : "remote") : undefined;
    const hint = connectHint(detail, answeredBy, httpStatusOf(error), config.transport === "sse");
    message = `MCP server '${config.name}'${where} failed to connect: ${detail}${hint ? ` (${hint})` : ""}`;
  }
  const proxy = proxyHint(config);
  if (proxy) message = `${message.replace(/\.$/, "")}. ${proxy}`;
  message += ctx.stderr();
  // A launcher that failed for good is a mistake in the entry, which no restart fixes.
  const bridgeKind = permanent ? "config" : kind === "timeout" || kind === "transport" ? kind : "other";
  return new BridgeError(bridgeKind, config.name, told(ctx, message), { cause: error });
}

export function cancelledError(server: string, toolName: string, cause?: unknown): BridgeError {
  const message = `Call to '${toolName}' on MCP server '${server}' was cancelled`;
  return new BridgeError("cancelled", server, message, { cause });
}

/**
 * A header whose value (as resolved) holds a character past U+00FF, which no HTTP header can carry (a pasted curly
 * quote): every request would fail with fetch's words, which name no header.
 */
export function unsendableHeader(config: ServerConfig, headers: Record<string, string>): BridgeError | undefined {
  for (const [header, value] of Object.entries(headers)) {
    const char = /[^\0-\xff]/u.exec(value)?.[0].codePointAt(0)?.toString(16).toUpperCase();
    const where = `${describeSource(config.source)} (or the variable it names)`;
    const message = `header \`${header}\` holds U+${char}, a character an HTTP header cannot carry: check its value in ${where}`;
    if (char) return new BridgeError("config", config.name, message);
  }
  return undefined;
}

/**
 * A sandboxed server whose sandbox cannot be set up here: its entry (or its file's default) asks for it, else the
 * user's top-level default or a trust given "sandboxed" does.
 */
export function sandboxUnavailableError(config: ServerConfig, error: unknown): BridgeError {
  const asks = isSandboxed(config.sandbox)
    ? `"sandbox" in ${describeSource(config.source)}`
    : `the top-level "sandbox" of your config, or your "Trust, sandboxed" answer`;
  // A project's own `false` yields to the user's default and to a "Trust, sandboxed" answer: setting it changes nothing.
  const fromProject = config.source.scope === "project" || config.source.package?.installed === "project";
  const instead =
    fromProject && !isSandboxed(config.sandbox)
      ? `A project's "sandbox": false does not take it out of either: for it to run with your full rights, set your top-level "sandbox" to false, or trust it fully (\`/mcp trust ${commandArgument(config.name)}\`) if you trusted it sandboxed.`
      : `Or set "sandbox": false for it to run with your full rights.`;
  const message = `it asks for a sandbox (${asks}), and none can be set up here, so it was not started: ${errorMessage(error)}. ${instead}`;
  return new BridgeError("config", config.name, message);
}

/** A call to a server switched off in its config. */
export function disabledError(config: ServerConfig): BridgeError {
  const message = `MCP server '${config.name}' is disabled in ${describeSource(config.enabledSource ?? config.source)}`;
  return new BridgeError("config", config.name, message);
}

/** `/mcp auth` for a server that does not sign in with OAuth. */
export function noOAuthError(config: ServerConfig): BridgeError {
  const why =
    config.transport === "stdio" ? "it is a local server" : "its config turns it off or sets an Authorization header";
  return new BridgeError("config", config.name, `MCP server '${config.name}' does not use OAuth (${why})`);
}
