/**
 * Keeps one MCP server connected over the whole pi session. It opens a live session (./live-session.ts) at startup
 * or on first use, notices when the session is lost (process exit, a broken stream, no answer to a health check),
 * reconnects a remote server or restarts a local one on a backoff schedule, holds tool calls while it does, and
 * retries once a call whose connection was lost under it. It signs in (OAuth) when a server asks for it.
 * What happens is recorded by ./lifecycle-report.ts; messages for the user are worded in ./error-messages.ts.
 */
import { type CallToolResult, type ServerCapabilities, type Tool } from "@modelcontextprotocol/client";
import { BridgeError, describeError } from "../common/errors.ts";
import type { EventSink } from "../common/events.ts";
import type { Logger } from "../common/log-file.ts";
import { Redactor } from "../common/redact.ts";
import { within } from "../common/wait.ts";
import type { ServerConfig, TransportKind } from "../config/types.ts";
import type { Environment } from "../config/substitute.ts";
import { commandArgument } from "../config/validate/name.ts";
import type { SignInHandler } from "../oauth/provider.ts";
import { ServerAuth } from "../oauth/server-auth.ts";
import type { AuthStore } from "../oauth/storage.ts";
import { ServerToolList } from "../translate/server-tool-list.ts";
import { cancelledError, connectError, disabledError, noOAuthError, notConnectedError, shutDownError, stillReconnectingError, untrustedError } from "./error-messages.ts";
import { HealthChecks } from "./health-checks.ts";
import type { HealthStatus, HealthTracker, ServerState } from "./health.ts";
import { LifecycleReport } from "./lifecycle-report.ts";
import { LiveSession, type Run } from "./live-session.ts";
import type { ClientFeatures, ClientInfo, ServerChange } from "./mcp-client.ts";
import { type CallOptions, type RecoveryHost, serverRequest } from "./request-recovery.ts";
import { RetrySchedule, worthRetrying } from "./retry-schedule.ts";
import { SessionOpener, type SessionOpenerOptions, STDERR_LINES_QUOTED } from "./session-opener.ts";
import { toolCallRun } from "./tool-call.ts";

export interface ConnectionOptions extends Pick<SessionOpenerOptions, "recallProtocol"> {
  projectRoot: string;
  env: Environment;
  clientInfo: ClientInfo;
  events?: EventSink;
  logger?: Logger;
  /** This server's own log, for its stderr; without it stderr goes to `logger`. */
  serverLog?: Logger;
  /** Where OAuth tokens and client registrations are kept; without it remote servers get no OAuth. */
  authStore?: AuthStore;
  /** Who can send the user to a sign-in page right now, if anyone. */
  signIn?: () => SignInHandler | undefined;
  signInTimeoutMs?: number;
  /**
   * False while this server may not run: a project server the user has not trusted. Nothing then starts its process
   * or connects to it (startup, a call, a reconnect or a sign-in); each says so instead.
   */
  trusted?: () => boolean;
  /** Answers to the requests a server sends the client (elicitation, …); roots default to the project root. */
  features?: ClientFeatures;
  /** Called with the server's tool list after every successful fetch: connect, reconnect, `list_changed`. */
  onTools?: (connection: ServerConnection, tools: Tool[]) => void;
  /** The server changed something besides its tools: another list, or a resource the client subscribed to. */
  onServerChange?: (connection: ServerConnection, change: ServerChange) => void;
  /** How long a connection must stay up before a later drop gets a fresh set of attempts. Default 60 s. */
  stableAfterMs?: number;
}

export class ServerConnection {
  /** The transport of the newest open session. */
  transport?: TransportKind;
  /** True when Streamable HTTP was refused and legacy SSE answered instead. */
  fellBackToSse = false;
  /** The MCP revision the newest open session speaks (`2026-07-28`, `2025-11-25`, …); kept while it reconnects. */
  protocolVersion?: string;
  /** The server's `instructions` from its newest initialize, redacted; kept while it reconnects. */
  instructions?: string;
  /** What the server offers (tools, resources, …) as its newest session said; kept while it reconnects, not once closed. */
  capabilities?: ServerCapabilities;

  private readonly report: LifecycleReport;
  /** This server's secrets, applied to all that leaves about it: log lines, events, messages, tool results. */
  private readonly redactor = new Redactor();
  /** The tools as pi has them: within this server's limits, safe to show. */
  private readonly toolList: ServerToolList;
  private readonly auth: ServerAuth;
  private readonly opener: SessionOpener;
  /** The reconnect (remote) or restart (local) schedule. */
  private readonly schedule: RetrySchedule;
  private readonly checks: HealthChecks;
  private readonly recoveryHost: RecoveryHost;
  /** The open session, if any. */
  private live?: LiveSession;
  /** The first connect (startup or lazy start), shared by everyone who needs the server up. */
  private starting?: Promise<void>;
  private everConnected = false;
  private closed = false;

  constructor(
    readonly config: ServerConfig,
    private readonly options: ConnectionOptions,
  ) {
    this.report = new LifecycleReport(config, { ...options, redactor: this.redactor });
    this.toolList = new ServerToolList(config.limits);
    const { authStore: store, env, signIn, signInTimeoutMs } = options;
    const onSecrets = (values: string[]) => this.redactor.add(values);
    this.auth = new ServerAuth({ server: config.name, settings: config.oauth, env, store, signIn, signInTimeoutMs, report: this.report, onSecrets });
    this.opener = new SessionOpener(config, {
      ...options,
      features: options.features ?? {},
      auth: this.auth,
      report: this.report,
      redactor: this.redactor,
      events: {
        dropped: (session, reason) => this.dropped(session, reason),
        streamError: (session, error) => this.checks.streamError(session, error),
        listChanged: (session, list) => (list === "tools" ? void this.refreshTools(session) : this.changed(session, { kind: "list", list })),
        resourceUpdated: (session, uri) => this.changed(session, { kind: "updated", uri }),
      },
    });
    this.schedule = new RetrySchedule(config.retry, {
      attempt: (n) => this.connectOnce(n),
      retryable: (error) => worthRetrying(error, config.transport === "stdio"),
      scheduled: (n, at) => this.health.scheduled(n, at),
      failed: (n, error, retryIn) => this.report.retryFailed(n, error, retryIn),
      gaveUp: (error) => this.giveUp(error),
    }, options.stableAfterMs);
    this.checks = new HealthChecks({
      interval: config.healthCheckInterval,
      pingTimeout: config.pingTimeout,
      report: this.report,
      redact: (text) => this.redact(text),
      lost: (session, detail) => this.dropped(session, detail),
    });
    this.recoveryHost = {
      ready: (what, signal) => this.ready(what, signal),
      current: () => this.live,
      lost: (session, cause) => this.dropped(session, cause),
      auth: this.auth,
      errorContext: () => this.opener.errorContext(),
      urlElicitationRequired: options.features?.urlElicitationRequired,
    };
  }

  get name(): string {
    return this.config.name;
  }

  get health(): HealthTracker {
    return this.report.health;
  }

  get status(): HealthStatus {
    return this.health.status;
  }

  get state(): Readonly<ServerState> {
    return this.health.state;
  }

  get lastError(): string | undefined {
    return this.health.state.lastError;
  }

  /** True while the server waits for an OAuth sign-in that nobody could do yet. */
  get needsSignIn(): boolean {
    return this.health.status === "needs sign-in";
  }

  /** The pid of a local server's process while it runs. */
  get pid(): number | undefined {
    return this.live?.pid;
  }

  /** False for a project server the user has not trusted: it is never started or connected. */
  get trusted(): boolean {
    return this.options.trusted?.() ?? true;
  }

  /** Throws unless this server may run. */
  private checkTrusted(): void {
    if (!this.trusted) throw untrustedError(this.config);
  }

  /** Warnings about this server: from resolving the config (a variable its `env` needs is not set), and tools its limits left out. */
  get warnings(): string[] {
    const { warning } = this.toolList;
    return [...this.opener.warnings, ...this.auth.warnings, ...(warning ? [warning] : [])];
  }

  /** The last lines the newest local server process wrote to stderr, redacted. */
  stderrTail(n?: number): string[] {
    return (this.opener.newest?.stderrTail(n) ?? []).map((line) => this.redact(line));
  }

  /** What identifies this server's tool list across sessions: its resolved endpoint (undefined while it cannot be resolved). */
  identity(): unknown {
    const endpoint = this.opener.endpoint();
    return endpoint ? { name: this.name, endpoint } : undefined;
  }

  /** Tools known from an earlier session, for a lazy server that has not started. */
  primeTools(tools: Tool[]): void {
    if (this.live) return;
    this.acceptTools(tools);
  }

  /** Tells the live session, if any, that the roots changed: the server asks for them again. Never throws. */
  async rootsChanged(): Promise<void> {
    await this.live?.rootsChanged().catch((error: unknown) => this.report.log("warn", "roots.notify.failed", { error: this.redact(describeError(error)) }));
  }

  /** The server's tools, as pi has them: within its limits, names and text safe to show. */
  get tools(): Tool[] {
    return this.toolList.tools;
  }

  /** Takes a tool list the server sent (or the cache kept); what the limits leave out is logged once. */
  private acceptTools(listed: Tool[]): void {
    const warning = this.toolList.accept(listed);
    if (warning) this.report.log("warn", "tools.limited", { listed: listed.length, kept: this.tools.length, warning });
    this.health.toolCount(this.tools.length);
  }

  redact(text: string): string {
    return this.opener.redact(text);
  }

  /**
   * Starts the server if nobody has yet, and waits for that first connect. A failure that retrying may fix starts
   * the reconnect (remote) or restart (local) schedule in the background; the error is thrown either way.
   */
  async connect(): Promise<void> {
    if (this.closed) throw shutDownError(this.name);
    this.checkTrusted();
    this.starting ??= this.connectOnce(0).catch((error: unknown) => {
      if (this.closed) throw error;
      // Said on the bus as every later failed attempt is, with when the next one comes (if one does).
      const retryIn = this.schedule.retryIn(error);
      this.report.retryFailed(0, error, retryIn);
      if (retryIn !== null) void this.recover();
      else this.giveUp(error);
      throw error;
    });
    await this.starting;
  }

  /** One connect attempt: a new live session, open within the server's deadline (signing in on the way if asked). */
  private async connectOnce(attempt: number): Promise<void> {
    if (this.closed) throw shutDownError(this.name);
    this.checkTrusted();
    this.report.connecting(attempt);
    const started = Date.now();
    let session: LiveSession;
    try {
      session = await this.opener.open(started + this.config.timeout, this.schedule.signal);
      if (this.closed) {
        await session.close({ graceful: false });
        throw shutDownError(this.name, { whileConnecting: true });
      }
    } catch (error) {
      const wrapped =
        error instanceof BridgeError ? error : this.closed ? shutDownError(this.name, { whileConnecting: true, cause: error }) : connectError(this.opener.errorContext(), error, Date.now() - started);
      this.report.connectFailed(attempt, started, wrapped, wrapped.kind === "auth" && this.auth.signInRequired);
      throw wrapped;
    }
    this.live = session;
    this.capabilities = session.capabilities;
    this.schedule.connected();
    this.transport = session.kind;
    this.fellBackToSse = session.fellBackToSse;
    this.protocolVersion = session.protocolVersion;
    this.instructions = session.instructions && this.redact(session.instructions);
    this.acceptTools(session.tools);
    if (session.pid !== undefined) this.report.spawned(session.pid, this.config.command);
    this.everConnected = true;
    this.report.connected(attempt, started, this.transport, this.tools.length);
    this.checks.start(session);
    this.options.onTools?.(this, this.tools);
  }

  /** `tools/list_changed`: fetch the list again and hand it on, if `session` is still the live one by then. */
  private async refreshTools(session: LiveSession): Promise<void> {
    const started = Date.now();
    try {
      const tools = await session.listTools(this.config.requestTimeout);
      if (this.live !== session) return;
      this.acceptTools(tools);
      this.report.log("info", "tools.changed", { toolCount: this.tools.length, durationMs: Date.now() - started });
      this.options.onTools?.(this, this.tools);
    } catch (error) {
      this.report.log("warn", "tools.refresh.failed", { error: this.redact(describeError(error)) });
    }
  }

  /**
   * The live session was lost: record it, release what is left of it, and start the reconnect or restart schedule.
   * Does nothing for a session that is not the live one any more, so it is safe to call more than once.
   */
  private dropped(session: LiveSession, reason: string): void {
    if (this.live !== session || this.closed) return;
    this.live = undefined;
    this.checks.stop();
    this.report.disconnected(reason, false);
    if (session.pid !== undefined) this.report.crashed(session.pid, reason, this.stderrTail(STDERR_LINES_QUOTED));
    // A wrapper that exited may have left its real server running; a remote session's sockets must go too.
    void session.close({ graceful: false });
    this.schedule.dropped();
    if (this.config.retry.maxAttempts > 0) void this.recover(new Error(reason));
    else this.health.gaveUp("disconnected");
  }

  /**
   * Runs the reconnect/restart schedule unless it already runs; resolves when it ends (connected or given up). With no
   * attempt left since the server was last stable, it gives up at once with `cause`.
   */
  private recover(cause?: unknown): Promise<void> {
    if (this.closed) return Promise.resolve();
    return this.schedule.start(cause);
  }

  /** No more attempts: calls now fail at once with the reason. */
  private giveUp(error: unknown): void {
    if (this.closed) return;
    const attempts = this.schedule.attemptsMade;
    const exhausted = worthRetrying(error, this.config.transport === "stdio") && attempts > 0;
    const reason = error instanceof Error ? error.message : this.health.state.lastError;
    this.report.gaveUp(this.needsSignIn ? "needs sign-in" : exhausted ? "disconnected" : "error", reason, exhausted, attempts);
  }

  /**
   * Calls a tool by its MCP name. Waits for a lazy start or a reconnect under way (within the call's timeout); a
   * connection lost during the call is retried once after the reconnect.
   */
  async callTool(toolName: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<CallToolResult> {
    const started = Date.now();
    const run = toolCallRun(this.toolList.serverName(toolName), args, this.toolList.definition(toolName), this.options.features ?? {});
    try {
      const result = await this.request(toolName, run, options);
      this.report.called(toolName, started, { result });
      return result;
    } catch (error) {
      this.report.called(toolName, started, { error });
      throw error;
    }
  }

  /** Any request to the server (`what` names it in errors), as a tool call goes: see `serverRequest`. */
  request<T>(what: string, run: Run<T>, options: CallOptions = {}): Promise<T> {
    return serverRequest(this.recoveryHost, this.redactor, this.config.requestTimeout, what, run, options);
  }

  /** A change the live session's server announced, besides its tools, for whoever handles it. */
  private changed = (session: LiveSession, change: ServerChange) => this.live === session && this.options.onServerChange?.(this, change);

  /**
   * The live session a call can use: starts a server nothing has started, waits for a reconnect under way (bounded
   * by the call's own timeout and signal), and fails at once for a server that gave up.
   */
  private async ready(toolName: string, signal: AbortSignal | undefined): Promise<LiveSession> {
    if (this.closed) throw shutDownError(this.name);
    this.checkTrusted();
    if (this.live) return this.live;
    if (!this.config.enabled) throw disabledError(this.config);
    if (!this.starting) {
      await this.connect();
    } else if (this.schedule.running && this.everConnected) {
      // A reconnect is under way: wait for it, as long as the call itself could have taken.
      await within(this.schedule.running, {
        ms: this.config.requestTimeout,
        timedOut: () => stillReconnectingError(this.opener.errorContext(), this.health.state, toolName),
        signal,
        aborted: () => cancelledError(this.name, toolName),
      });
    } else {
      if (!this.schedule.running) await this.starting.catch(() => undefined);
      // A server that waited for a sign-in nobody could do (at startup, say) signs in now if someone can.
      if (this.needsSignIn && !this.schedule.running && this.options.signIn?.()) await this.reconnect();
    }
    if (this.live) return this.live;
    throw notConnectedError(this.opener.errorContext(), this.health.state, this.schedule.running !== undefined);
  }

  /**
   * Starts afresh now (`/mcp reconnect`, a reload of the server): ends the session and any retry schedule, then
   * connects again. A server that gave up gets a new set of attempts.
   */
  async reconnect(): Promise<void> {
    if (this.closed) throw shutDownError(this.name);
    this.checkTrusted();
    await this.endOnPurpose("reconnect requested");
    this.schedule.reset();
    this.starting = undefined;
    await this.connect();
  }

  /** Ends the retry schedule and the session because the user asked for it (not a failure). */
  private async endOnPurpose(reason: string): Promise<void> {
    await this.schedule.stop();
    const session = this.live;
    this.live = undefined;
    if (!session) return;
    this.checks.stop();
    this.report.disconnected(reason, true);
    await session.close({ graceful: false, terminateSession: true });
  }

  /** `/mcp auth`: signs in (again) with `handler` sending the user to the page, drops the old tokens, connects afresh. */
  async signIn(handler: SignInHandler): Promise<void> {
    if (!this.auth.configured) throw noOAuthError(this.config);
    this.checkTrusted();
    await this.auth.signInWith(handler, () => this.reconnect());
  }

  /**
   * Forgets this server's tokens and client registration and disconnects it (`/mcp logout`). Says whether anything
   * was stored, and pi 1.x's file when it holds a sign-in for this server, which stays there (it is pi's).
   */
  async logout(): Promise<{ removed: boolean; piFileKept?: string }> {
    if (!this.auth.configured) return { removed: false };
    await this.endOnPurpose("signed out");
    const endpoint = this.opener.endpoint();
    const removed = await this.auth.forget(endpoint?.kind === "stdio" ? undefined : endpoint?.url);
    this.health.failed(`Signed out of MCP server '${this.name}'. Run /mcp auth ${commandArgument(this.name)} to sign in again.`);
    this.health.gaveUp("error");
    return { removed, piFileKept: this.auth.piSignInKept };
  }

  /** Stops the server for the rest of the session (`/mcp disable`): closed, and shown as disabled. */
  async disable(): Promise<void> {
    await this.close();
    this.health.state.status = "disabled";
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.capabilities = undefined;
    this.schedule.close();
    this.checks.stop();
    const { live } = this;
    const { newest } = this.opener;
    this.live = undefined;
    const pid = live?.pid;
    await Promise.all([
      // A session still being opened is abandoned: its open fails and cleans up after itself as well.
      newest !== live ? newest?.close({ graceful: false }) : undefined,
      live?.close({ graceful: true, terminateSession: true }),
    ]);
    this.report.closed(live !== undefined, pid);
    this.options.onServerChange?.(this, { kind: "closed" });
  }

  /** Synchronous last resort when pi exits without a shutdown event. */
  killNow(): void {
    this.live?.killNow();
    if (this.opener.newest !== this.live) this.opener.newest?.killNow();
  }
}
