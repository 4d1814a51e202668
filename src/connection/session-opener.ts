/**
 * Makes the live sessions of one configured server. Each attempt runs the config's `!command` values and resolves its
 * `${VAR}`s afresh (a variable changed since the last attempt is picked up), sets up OAuth for a remote server, and
 * opens a session within the deadline; when the server asks for a sign-in, it waits for that and opens once more. It
 * remembers the newest session, open or not, and adds the secrets of each resolution (what the commands printed
 * included) to the server's redactor. A session's log lines (stderr, the server's own log messages) go to the logs
 * from here, redacted.
 */
import { statSync } from "node:fs";
import { shown, SHOWN } from "../common/terminal-text.ts";
import { BridgeError } from "../common/errors.ts";
import { closedDuringProbe, probeInconclusive } from "../common/error-kinds.ts";
import { LEVEL_OF_MCP_LEVEL, type Logger, NULL_LOGGER } from "../common/log-file.ts";
import { describeSource, type ServerConfig } from "../config/types.ts";
import type { Redactor } from "../common/redact.ts";
import {
  type Environment,
  type ResolvedEndpoint,
  type ResolvedStdio,
  resolveServerConfig,
  substituteVars,
} from "../config/substitute.ts";
import { watchSandboxRelays } from "../sandbox/sandbox-leftovers.ts";
import { sandboxManager, sandboxProblems, unavailable } from "../sandbox/sandbox-runtime.mjs";
import { RefusalRecord } from "../sandbox/refusal-record.ts";
import type { StdioSandbox } from "../sandbox/server-sandbox.ts";
import type { SandboxPolicy } from "../sandbox/sandbox-policy.ts";
import { runCommandValues } from "../config/command-runner.ts";
import { clientSecretField } from "../config/command-value.ts";
import { needsTrust } from "../trust/trust-rules.ts";
import type { ServerAuth } from "../oauth/server-auth.ts";
import { type ErrorContext, permanentFailure, sandboxUnavailableError, unsendableHeader } from "./error-messages.ts";
import type { LifecycleReport } from "./lifecycle-report.ts";
import { LiveSession, type LiveSessionOptions, type SessionEvents } from "./live-session.ts";
import { floodMessage } from "./notification-bound.ts";
import type { ClientFeatures, ClientInfo } from "./mcp-client.ts";
import { ClosedBeforeAnswer } from "./local/server-started.ts";
import { FreshHeaders, rereadableHeaders } from "./fresh-headers.ts";
import { unreachableHost } from "./local/unreachable-host.ts";
import { servesHttp } from "./local/serves-http.ts";
import { commandFault, missingScript } from "./local/missing-script.ts";
import { startFailureKey } from "./local/repeated-failure.ts";
import type { OpenTime } from "./connect-deadline.ts";
import {
  type AsksFor,
  deprecationIn,
  missingVariables,
  ownVariables,
  requestIn,
  terminalWanted,
  mcpStartIn,
  variablesAskedFor,
  withoutSourceExcerpts,
} from "./local/missing-variable.ts";
import { keptNpmLogs, npxLaunch } from "./local/npx-failure.ts";
import { networkEnvironment, withoutProxies } from "./local/network-environment.ts";
import { offlineNote, offlineRegistry, offlineSettings } from "./local/npx-offline.ts";
import { npmSettings } from "./local/npm-settings.ts";

/** How many stderr lines an error message quotes. */
const STDERR_LINES_QUOTED = 12;

/** Sign-ins one open may wait for: the first, and one more when the authorization server changed meanwhile. */
const MAX_SIGN_INS_PER_OPEN = 2;

export interface SessionOpenerOptions {
  projectRoot: string;
  env: Environment;
  clientInfo: ClientInfo;
  /** What the client answers. */
  features: ClientFeatures;
  auth: ServerAuth;
  report: LifecycleReport;
  /** The server's secrets: each resolution of the config adds to them. */
  redactor: Redactor;
  /** The server's own log, for its stderr; without it stderr goes to `logger`. */
  serverLog?: Logger;
  /** Whether a project server is trusted; a project server's `!command` values run only when this says so. */
  trusted?: () => boolean;
  logger?: Logger;
  /** What the owner decides on: a session lost, a stream error, a changed list or resource. */
  events: Pick<SessionEvents, "dropped" | "streamError" | "listChanged" | "resourceUpdated">;
  /** The revision the server spoke when it last connected (kept with its tools), for `protocolVersion: "auto"`. */
  recallProtocol?: () => string | undefined;
  /** The sandbox a local server runs in, if its setting asks for one (asked at each start). */
  sandbox?: (endpoint: ResolvedStdio) => StdioSandbox | undefined;
  /** The shared-server hub's directory (./hub/hub-launch.ts): a `shared` server runs under that hub. */
  hubDir?: string;
}

export class SessionOpener {
  /** Warnings from the last resolution of the config (a variable a local server's `env` needs is not set). */
  warnings: string[] = [];
  /** The newest session, open or not (being opened, failed, lost). */
  newest?: LiveSession;
  /** What the sandbox refused this server, and the rules of its last sandboxed start. */
  readonly refusals: RefusalRecord;
  private readonly events: SessionEvents;
  /** What was remembered of the server's revision (see `recallProtocol`); null once an open starting from it failed. */
  private recalled?: string | null;
  /**
   * Set when the revision probe cost a connect (a local server died of it; a remote one gave no usable answer to it):
   * from then on the server is asked with `initialize` alone.
   */
  private initializeOnly = false;
  /** How this open's first start failed, when it asked with the revision probe and `initialize` alone came next. */
  probeStartFailure?: string;
  /** What the last resolution starts for a local server (its `env` lacks a key whose variable is unset). */
  private resolvedLocal?: ResolvedStdio;
  /** A remote server's `url` as the last resolution put its variables in. */
  private resolvedUrl?: string;
  /** Each open remote session's `!command` header values, when it has any and no OAuth. */
  private readonly fresh = new WeakMap<LiveSession, FreshHeaders>();

  constructor(
    private readonly config: ServerConfig,
    private readonly options: SessionOpenerOptions,
  ) {
    const { report, redactor } = options;
    // The config's secrets are known before anything is started, so even the first message about it is redacted.
    redactor.add(resolveServerConfig(config, options.env, options.projectRoot).secrets);
    const stderrLog = options.serverLog ?? options.logger ?? NULL_LOGGER;
    this.refusals = new RefusalRecord((refusal, message) => {
      const fields = { kind: refusal.kind, detail: refusal.detail, message };
      report.log("warn", "sandbox.refused", fields);
      options.serverLog?.log({ level: "warn", event: "sandbox.refused", server: config.name, ...fields });
    });
    this.events = {
      ...options.events,
      heard: () => report.health.heard(Date.now()),
      stderrLine: (line) => {
        const text = this.redact(line);
        stderrLog.log({ level: "debug", event: "stderr", server: config.name, line: text });
        this.refusals.stderrLine(text);
      },
      logMessage: ({ level, logger, data }) => {
        // An object's strings first: a secret with a `"` or `\` in it is escaped in its JSON, and not known there.
        const text = this.redact(typeof data === "string" ? data : JSON.stringify(redactor.value(data)));
        report.log(LEVEL_OF_MCP_LEVEL[level] ?? "info", "server.log", { logger, data: text });
      },
      notificationDropped: (kind, first) => {
        report.health.notificationDropped();
        if (first) report.log("warn", "notifications.dropped", { kind, message: floodMessage(kind) });
      },
    };
  }

  /** Hides the server's secrets (inline or resolved values, tokens, keys) in `text`, and strips control sequences. */
  redact(text: string): string {
    return this.options.redactor.text(text);
  }

  /** The last lines the newest local server process wrote to stderr, redacted, to show (stacks shortened). */
  stderrTail(n = STDERR_LINES_QUOTED): string[] {
    return (this.newest?.process.shownStderr(n) ?? []).map((line) => this.redact(line));
  }

  /** The resolved endpoint of the config as it is now; undefined when a variable its URL needs is not set. */
  endpoint(): ResolvedEndpoint | undefined {
    return resolveServerConfig(this.config, this.options.env, this.options.projectRoot).endpoint;
  }

  /**
   * A new session, open: within `deadline` (epoch ms), and, when the server wants a sign-in, once more after it
   * (the sign-in bounded by its own timeout and by `signal`). A second sign-in is allowed: a server whose
   * authorization server changed (SEP-2352) refuses the first one's token on its next request, and the SDK sends the
   * user to the new one; a third it asks for is reported as needed, not started. Errors are thrown as they came.
   */
  async open(deadline: number, signal?: AbortSignal): Promise<LiveSession> {
    this.probeStartFailure = undefined;
    const { endpoint, clientSecret } = await this.resolve();
    const { auth } = this.options;
    try {
      for (let signIns = 0; ; signIns++) {
        // The last sign-in this open may wait for is done: a server that asks for yet another is told nobody can.
        auth.signInsHeld = signIns === MAX_SIGN_INS_PER_OPEN;
        try {
          const until = signIns ? Date.now() + this.config.timeout : deadline;
          return await this.openOnce(endpoint, { deadline: until, span: until - Date.now() }, clientSecret);
        } catch (error) {
          if (signIns === MAX_SIGN_INS_PER_OPEN || !auth.canSignInAfter(error, signal)) throw error;
          // The SDK has sent the user to sign in (or found nobody to do it): wait for that, then connect with the tokens.
          await auth.completeSignIn(signal);
        }
      }
    } catch (error) {
      // A sign-in this open started and will not wait for would be joined by the next one, which then opens no page.
      await auth.abandonSignIn();
      throw error;
    } finally {
      auth.signInsHeld = false;
    }
  }

  /** The endpoint for one attempt, and the OAuth client secret when a `!command` printed it. */
  private async resolve(): Promise<{ endpoint: ResolvedEndpoint; clientSecret?: string }> {
    const { env, projectRoot, redactor, trusted } = this.options;
    // Never on the word of a project file alone: its commands need the user's trust, given in so many words.
    const allowed = !needsTrust(this.config) || trusted?.() === true;
    const commands = await runCommandValues(this.config, { allowed, env, cwd: projectRoot });
    redactor.add(commands.secrets);
    if (commands.errors.length) throw new BridgeError("config", this.config.name, commands.errors.join("; "));
    const resolution = resolveServerConfig(this.config, env, projectRoot, { commandOutputs: commands.outputs });
    redactor.add(resolution.secrets);
    this.warnings = resolution.warnings;
    if (!resolution.endpoint)
      throw new BridgeError(
        "config",
        this.config.name,
        `${resolution.errors.join("; ")} (${describeSource(this.config.source)})`,
      );
    const unsendable =
      resolution.endpoint.kind !== "stdio" && unsendableHeader(this.config, resolution.endpoint.headers);
    if (unsendable) throw unsendable;
    const clientSecret = commands.outputs.get(clientSecretField(this.config));
    // A local server reaches the network as pi does: through pi's proxies, CAs and registries; its own env wins.
    const endpoint: ResolvedEndpoint =
      resolution.endpoint.kind === "stdio"
        ? { ...resolution.endpoint, env: { ...networkEnvironment(env), ...resolution.endpoint.env } }
        : resolution.endpoint;
    if (endpoint.kind === "stdio") this.resolvedLocal = endpoint;
    else this.resolvedUrl = endpoint.url;
    if (endpoint.kind !== "stdio" || !npxLaunch(endpoint.command, endpoint.args)) return { endpoint, clientSecret };
    // npm's settings for it, read once for both decisions.
    const setting = npmSettings(endpoint);
    const npm = keptNpmLogs(setting);
    const offline = await offlineRegistry(endpoint.env, setting);
    if (offline) {
      this.warnings = [...this.warnings, offlineNote(offline)];
      this.options.report.log("info", "npx.offline", { host: offline });
      Object.assign(npm, offlineSettings(setting));
    }
    return { endpoint: { ...endpoint, env: { ...endpoint.env, ...npm } }, clientSecret };
  }

  /** One session, open by `time.deadline`; `time.span` is the server's time once an npx install that held it is over. */
  private async openOnce(endpoint: ResolvedEndpoint, time: OpenTime, clientSecret?: string): Promise<LiveSession> {
    const { auth, clientInfo, features } = this.options;
    // OAuth adds its secrets (client secret, tokens, codes) to the redactor itself, as it meets them.
    const sessionAuth = endpoint.kind === "stdio" ? undefined : auth.prepare(endpoint.url, clientSecret);
    const { limits, protocol } = this.config;
    const box = endpoint.kind === "stdio" ? this.options.sandbox?.(endpoint) : undefined;
    // Its stderr is read for refusals against the rules it runs under now, and none where it runs unsandboxed.
    if (!box) this.refusals.policy = undefined;
    const sandbox = box && {
      ...box,
      onStart: (policy: SandboxPolicy) => this.refusals.started(policy),
      onViolation: (line: string) => this.refusals.violation(this.redact(line)),
    };
    const hub = endpoint.kind === "stdio" ? this.sharedHub() : undefined;
    // Never run unsandboxed what asked for a sandbox: where it cannot be set up, the server does not start. (A shared
    // server's sandbox is set up by the hub: here it is only checked that it can be.)
    if (sandbox) {
      const setUp = hub ? sandboxProblems().then(unavailable) : sandboxManager().then(watchSandboxRelays);
      await setUp.catch((error: unknown) => {
        throw sandboxUnavailableError(this.config, error);
      });
    }
    if (this.recalled === undefined) this.recalled = this.options.recallProtocol?.() ?? null;
    const remembered = this.initializeOnly ? "legacy" : (this.recalled ?? undefined);
    const session = new LiveSession({
      endpoint: sandbox && endpoint.kind === "stdio" ? { ...endpoint, env: withoutProxies(endpoint.env) } : endpoint,
      clientInfo,
      features,
      auth: sessionAuth,
      events: this.events,
      limits,
      protocol,
      remembered,
      sandbox,
      hub,
      redactor: this.options.redactor,
    });
    this.newest = session;
    if (endpoint.kind !== "stdio" && !sessionAuth && rereadableHeaders(this.config).length) {
      const reread = async () => {
        const { endpoint: fresh } = await this.resolve();
        return fresh.kind === "stdio" ? {} : fresh.headers;
      };
      this.fresh.set(session, new FreshHeaders(endpoint.headers, this.config.headersTtl, reread));
    }
    try {
      await session.open(time.deadline, time.span);
    } catch (error) {
      // Closed by its owner (pi is shutting down, the server was disabled): nothing is started in its place.
      if (protocol !== "auto" || session.isClosed) throw error;
      // What worked last time no longer does (the server changed): the next attempt starts over from a probe.
      if (remembered !== undefined && !this.initializeOnly) this.recalled = null;
      // The time the open had, moved on if an npx install held it.
      const until = session.clock?.deadline ?? time.deadline;
      const local = endpoint.kind === "stdio";
      if (
        remembered !== undefined ||
        session.violation ||
        (!local && Date.now() >= until) ||
        !this.probeCostTheConnect(endpoint, error)
      )
        throw error;
      // Asked again, at once and from then on, with `initialize` alone. Once only, so a local server that dies whatever
      // it is asked is not started more often than its restarts allow, but for this one time. A remote server is asked
      // in the time left (its probe had half of it); a local one is started anew, and a start gets the server's whole
      // time: what was left could cut a slow start short, or end npx's before npm has named its process (the sign
      // that it installs, ./connect-deadline.ts), through no fault of the server.
      this.initializeOnly = true;
      this.probeStartFailure = startFailureKey(this.errorContext(), error);
      const deadline = local ? Math.max(until, Date.now() + time.span) : until;
      return this.openOnce(endpoint, { deadline, span: time.span }, clientSecret);
    }
    return session;
  }

  /** Where a `shared` server is reached: the hub, which also sets up its sandbox if it runs in one. */
  private sharedHub(): LiveSessionOptions["hub"] {
    const { shared, name, source } = this.config;
    if (!shared) return undefined;
    const where = describeSource(source);
    if (!this.options.hubDir)
      throw new BridgeError("config", name, `it is "shared", and this pi has no agent dir for the hub (${where})`);
    return { dir: this.options.hubDir, idleMs: shared.idleMs };
  }

  /**
   * Whether an open failed because of the revision probe rather than the server: a local server that exits on any
   * request before `initialize` (the first ping, or the probe; a launcher that failed for good, npm E404 or a command
   * not found, or a server that says what it lacks, died of that instead), or a remote one that gave the probe no
   * usable answer (no answer within half its time, an answer that is none, a server error) while it is there to ask.
   */
  private probeCostTheConnect(endpoint: ResolvedEndpoint, error: unknown): boolean {
    if (endpoint.kind !== "stdio") return probeInconclusive(error);
    if (!closedDuringProbe(error) && !(error instanceof ClosedBeforeAnswer)) return false;
    return permanentFailure(this.errorContext()) === undefined;
  }

  /** `session`'s header values that the bridge can read again, if any. */
  freshHeaders(session: LiveSession): FreshHeaders | undefined {
    return this.fresh.get(session);
  }

  /** Ends the session being opened, if any (the newest, unless it is `live`): its open fails and cleans up. */
  abandon(live: LiveSession | undefined): Promise<void> | undefined {
    return this.newest !== live ? this.newest?.close({ graceful: false }) : undefined;
  }

  /** Synchronous last resort when pi exits without a shutdown event: kills `live` and a session being opened. */
  killNow(live: LiveSession | undefined): void {
    live?.killNow();
    if (this.newest !== live) this.newest?.killNow();
  }

  /** What `lines` (a server's output, redacted) ask for that this server's start did not give. */
  private asksFor(output: string[]): AsksFor {
    const lines = withoutSourceExcerpts(output);
    const { config, resolvedLocal } = this;
    const { env } = this.options;
    const names = variablesAskedFor(lines, resolvedLocal?.env ?? config.env);
    // An entry that passes the variable from one pi's environment lacks: which one to set there.
    const unset = names
      .filter((name) => config.env[name] !== undefined)
      .map((key) => ({ key, variables: substituteVars(config.env[key] ?? "", env).missing }));
    const inPi = names.filter((name) => env[name] !== undefined && config.env[name] === undefined);
    const asking = names.length ? lines.find((line) => line.includes(names[0]!))?.trim() : undefined;
    const deprecated = deprecationIn(lines);
    const terminal = terminalWanted(lines);
    return { names, inPi, unset, request: requestIn(lines), terminal, mcpStart: mcpStartIn(lines), asking, deprecated };
  }

  /**
   * What to tell of a tool's error that asks for a variable named after the server (`EXA_API_KEY` for
   * `exa-mcp-server`) which its local process was not given: such a server starts without its key and fails each call
   * instead, and a key set where pi runs does not reach it unless its `env` names it.
   */
  toolErrorAdvice(text: string): string | undefined {
    const local = this.resolvedLocal;
    const own = local && ownVariables(this.asksFor(text.split("\n").map((line) => this.redact(line))), local);
    if (!own) return undefined;
    const { fix } = missingVariables(this.config, "", own, true);
    return `(MCP server '${this.config.name}' runs without ${own.names.join(" and ")}: ${fix}.)`;
  }

  /** What an error message about this server needs: the config, redaction, and the newest session's last words. */
  errorContext(): ErrorContext {
    const session = this.newest;
    const process = session?.process;
    const redact = (text: string) => this.redact(text);
    const sandboxed = this.refusals.policy !== undefined;
    // What a server says about its failure, wherever it said it, redacted.
    const printed = () => [...(process?.stderrKept() ?? []), ...(process?.strayLines ?? [])].map(redact);
    const { config, resolvedLocal } = this;
    const asksFor = (lines: string[]) => this.asksFor(lines);
    return {
      config,
      url: this.resolvedUrl,
      redact,
      stderr: () => {
        const quoted = (title: string, lines: readonly string[]) => {
          const shownLines = lines.map((line) => shown(redact(line), SHOWN.line, "line")).filter((l) => l.trim());
          return shownLines.length ? `\n${title}:\n${shownLines.map((l) => `  ${l}`).join("\n")}` : "";
        };
        return (
          quoted("Last stderr lines", process?.shownStderr(STDERR_LINES_QUOTED) ?? []) +
          quoted("What it wrote to stdout that is not MCP", process?.strayLines ?? [])
        );
      },
      exitDescription: process?.exitDescription,
      exitCode: process?.exitCode,
      sandboxed,
      // Read from the process table and npm's files, so only by the messages that ask.
      get npxFailure() {
        return process?.npxFailure;
      },
      exitedAfterMs: process?.exitedAfterMs,
      get npxInstallMs() {
        return process?.npxInstallMs;
      },
      stage: session?.stage,
      get installing() {
        return session?.installing;
      },
      get asksFor() {
        return asksFor(printed());
      },
      get missingScript() {
        const found = resolvedLocal && missingScript(printed(), resolvedLocal.args, resolvedLocal.cwd);
        return found && { ...found, sandboxed };
      },
      get servesHttp() {
        return servesHttp(printed());
      },
      get unreachable() {
        const found = unreachableHost(printed());
        return found && { ...found, sandboxed };
      },
      hubLog: session?.hub?.unattachedLog,
      wroteToStdout: session?.stdoutLines && session.stdoutLines.read > 0,
      missingCwd:
        resolvedLocal && !statSync(resolvedLocal.cwd, { throwIfNoEntry: false })?.isDirectory()
          ? resolvedLocal.cwd
          : undefined,
      get commandFault() {
        return resolvedLocal && commandFault(resolvedLocal.command, resolvedLocal.cwd);
      },
      violation: session?.violation,
      nonJsonLines: session?.stdoutLines?.nonJson ?? 0,
      refusal: session?.refusedSaying,
      oauth: this.options.auth.offered,
      oauthRefused: this.options.auth.refusedMessage,
    };
  }
}
