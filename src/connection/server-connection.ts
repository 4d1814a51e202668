/**
 * Keeps one MCP server connected over the whole pi session. It opens a live session (./live-session.ts) at startup
 * or on first use, notices when the session is lost (process exit, a broken stream, no answer to a health check),
 * reconnects a remote server or restarts a local one on a backoff schedule, holds requests while it does, and
 * retries once a request whose connection was lost under it (`withSession`, the one way to the server). It signs in
 * (OAuth) when a server asks for it. What it is doing is one value (./connection-state.ts) that only `apply` changes,
 * recorded by ./lifecycle-report.ts; messages for the user are worded in ./error-messages.ts.
 */
import {
  type CallToolResult,
  type ServerCapabilities,
  type Tool,
  UrlElicitationRequiredError,
} from "@modelcontextprotocol/client";
import { BridgeError, describeError } from "../common/errors.ts";
import type { EventSink } from "../common/events.ts";
import { Redactor } from "../common/redact.ts";
import { within } from "../common/wait.ts";
import type { ServerConfig, TransportKind } from "../config/types.ts";
import { commandArgument } from "../config/validate/name.ts";
import type { SignInHandler } from "../oauth/provider.ts";
import { ServerAuth } from "../oauth/server-auth.ts";
import type { AuthStore } from "../oauth/storage.ts";
import { ServerToolList } from "../translate/server-tool-list.ts";
import {
  cancelledError,
  connectError,
  disabledError,
  lostAgainError,
  noOAuthError,
  notConnectedError,
  reconnectFailedError,
  shutDownError,
  stillReconnectingError,
  untrustedError,
} from "./error-messages.ts";
import { HealthChecks } from "./health-checks.ts";
import { type ConnectionEvent, type ConnectionState, errorOf, inSchedule, liveSession } from "./connection-state.ts";
import { ownsAttempt, statusOf, transition } from "./connection-state.ts";
import type { HealthStatus, HealthTracker } from "./health.ts";
import { LifecycleReport } from "./lifecycle-report.ts";
import { LiveSession, type RequestOptions, type Run } from "./live-session.ts";
import type { ClientFeatures, ServerChange } from "./mcp-client.ts";
import { type CallOptions, lostCause, redactedRequest } from "./request-recovery.ts";
import { RetrySchedule, worthRetrying } from "./retry-schedule.ts";
import { SessionOpener, type SessionOpenerOptions, STDERR_LINES_QUOTED } from "./session-opener.ts";
import { toolCallRun } from "./tool-call.ts";

export interface ConnectionOptions extends Pick<
  SessionOpenerOptions,
  "recallProtocol" | "projectRoot" | "env" | "clientInfo" | "logger" | "serverLog"
> {
  events?: EventSink;
  /** Where OAuth tokens and client registrations are kept; without it remote servers get no OAuth. */
  authStore?: AuthStore;
  /** Who can send the user to a sign-in page right now, if anyone. */
  signIn?: () => SignInHandler | undefined;
  signInTimeoutMs?: number;
  /** False while a project server is not trusted: nothing starts or connects it (startup, call, reconnect, sign-in). */
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
  /** As the newest open session has them, kept while it reconnects: transport, legacy SSE fallback, MCP revision, `instructions` (redacted). */
  transport?: TransportKind;
  fellBackToSse = false;
  protocolVersion?: string;
  instructions?: string;
  /** What the server offers (tools, resources, …) as its newest session said; kept while it reconnects, not once closed. */
  capabilities?: ServerCapabilities;

  private readonly report: LifecycleReport;
  /** This server's secrets, applied to all that leaves about it: log lines, events, messages, tool results. */
  private readonly redactor = new Redactor();
  private readonly toolList: ServerToolList;
  private readonly auth: ServerAuth;
  private readonly opener: SessionOpener;
  /** The reconnect (remote) or restart (local) schedule. */
  private readonly schedule: RetrySchedule;
  private readonly checks: HealthChecks;
  /** What the connection is doing; only `apply` changes it. */
  private current: ConnectionState<LiveSession>;
  /** The first connect of a run (startup, first use, `/mcp reconnect`), shared by everyone who needs the server up. */
  private starting?: Promise<void>;

  constructor(
    readonly config: ServerConfig,
    private readonly options: ConnectionOptions,
  ) {
    this.current = config.enabled ? { kind: "idle" } : { kind: "disabled" };
    this.report = new LifecycleReport(config, { ...options, redactor: this.redactor }, () => this.status);
    this.toolList = new ServerToolList(config.limits);
    const { authStore: store, env, signIn, signInTimeoutMs } = options;
    const onSecrets = (values: string[]) => this.redactor.add(values);
    this.auth = new ServerAuth({
      server: config.name,
      settings: config.oauth,
      env,
      store,
      signIn,
      signInTimeoutMs,
      report: this.report,
      onSecrets,
    });
    this.opener = new SessionOpener(config, {
      ...options,
      features: options.features ?? {},
      auth: this.auth,
      report: this.report,
      redactor: this.redactor,
      events: {
        dropped: (session, reason) => this.dropped(session, reason),
        streamError: (session, error) => this.checks.streamError(session, error),
        listChanged: (session, list) =>
          list === "tools" ? void this.refreshTools(session) : this.changed(session, { kind: "list", list }),
        resourceUpdated: (session, uri) => this.changed(session, { kind: "updated", uri }),
      },
    });
    this.schedule = new RetrySchedule(
      config.retry,
      {
        attempt: (n) => this.connectOnce(n),
        retryable: (error) => worthRetrying(error, config.transport === "stdio"),
        scheduled: (attempt, at) => this.apply({ type: "scheduled", attempt, at }),
        failed: (n, error, retryIn) => this.report.retryFailed(n, error, retryIn),
        gaveUp: (error) => this.giveUp(error),
      },
      options.stableAfterMs,
    );
    this.checks = new HealthChecks({
      interval: config.healthCheckInterval,
      pingTimeout: config.pingTimeout,
      report: this.report,
      redact: (text) => this.redact(text),
      lost: (session, detail) => this.dropped(session, detail),
    });
  }

  get name(): string {
    return this.config.name;
  }

  get health(): HealthTracker {
    return this.report.health;
  }

  get state(): ConnectionState<LiveSession> {
    return this.current;
  }

  get status(): HealthStatus {
    return statusOf(this.current);
  }

  get lastError(): string | undefined {
    return errorOf(this.current);
  }

  /** True while the server waits for an OAuth sign-in that nobody could do yet. */
  get needsSignIn(): boolean {
    return this.current.kind === "needsSignIn";
  }

  /** When the live session opened: a new value means a new session (what the old one held is gone). */
  get connectedAt(): number | undefined {
    return this.current.kind === "live" ? this.current.since : undefined;
  }

  private get closed(): boolean {
    return this.current.kind === "closed";
  }

  /** The open session, if any. */
  private get live(): LiveSession | undefined {
    return liveSession(this.current);
  }

  /** The one writer of the state: the report records the change with it. False when `event` changed nothing. */
  private apply(event: ConnectionEvent<LiveSession>): boolean {
    const before = this.current;
    this.current = transition(before, event);
    if (this.current === before) return false;
    this.report.record(event, before);
    return true;
  }

  /** The pid of a local server's process while it runs. */
  get pid(): number | undefined {
    return this.live?.pid;
  }

  get trusted(): boolean {
    return this.options.trusted?.() ?? true;
  }

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
    if (!this.live) this.acceptTools(tools);
  }

  /** Tells the live session, if any, that the roots changed (the server asks for them again). Never throws. */
  async rootsChanged(): Promise<void> {
    await this.live
      ?.rootsChanged()
      .catch((error: unknown) =>
        this.report.log("warn", "roots.notify.failed", { error: this.redact(describeError(error)) }),
      );
  }

  /** The server's tools, as pi has them: within its limits, names and text safe to show. */
  get tools(): Tool[] {
    return this.toolList.tools;
  }

  /** Takes a tool list the server sent (or the cache kept); what the limits leave out is logged once. */
  private acceptTools(listed: Tool[]): void {
    const warning = this.toolList.accept(listed);
    if (warning) this.report.log("warn", "tools.limited", { listed: listed.length, kept: this.tools.length, warning });
  }

  redact(text: string): string {
    return this.opener.redact(text);
  }

  /** Starts the server if nobody has, and waits for that connect; a failure retrying may fix starts the schedule. */
  async connect(): Promise<void> {
    if (this.closed) throw shutDownError(this.name);
    this.checkTrusted();
    this.starting ??= this.connectOnce(0).catch((error: unknown) => {
      // Unless it was closed or stopped meanwhile: then this failure decides nothing.
      if (this.current.kind !== "retrying" && this.current.kind !== "needsSignIn") throw error;
      // Said on the bus as every later failed attempt is, with when the next one comes (if one does).
      const retryIn = this.schedule.retryIn(error);
      this.report.retryFailed(0, error, retryIn);
      if (retryIn !== null) void this.schedule.start();
      else this.giveUp(error);
      throw error;
    });
    await this.starting;
  }

  /** One connect attempt: a new live session, open within the server's deadline (signing in on the way if asked). */
  private async connectOnce(attempt: number): Promise<void> {
    this.checkTrusted();
    const id = Symbol(this.name);
    // Refused once closed, and while another attempt is under way (never, as `endOnPurpose` ends that one first).
    if (!this.apply({ type: "attempt", attempt, id })) throw shutDownError(this.name);
    const started = Date.now();
    let session: LiveSession;
    try {
      session = await this.opener.open(started + this.config.timeout, this.schedule.signal);
      // Closed, or stopped on purpose (`/mcp reconnect`, `/mcp logout`), while it opened: what it opened is not kept.
      if (!ownsAttempt(this.current, id)) {
        await session.close({ graceful: false });
        throw shutDownError(this.name, { whileConnecting: true });
      }
    } catch (error) {
      const durationMs = Date.now() - started;
      const wrapped =
        error instanceof BridgeError
          ? error
          : ownsAttempt(this.current, id)
            ? connectError(this.opener.errorContext(), error, durationMs)
            : shutDownError(this.name, { whileConnecting: true, cause: error });
      const { kind, message } = wrapped;
      const signIn = kind === "auth" && this.auth.signInRequired;
      this.apply({ type: "failed", id, error: this.redactor.text(message), kind, durationMs, signIn });
      throw wrapped;
    }
    this.capabilities = session.capabilities;
    this.schedule.connected();
    this.transport = session.kind;
    this.fellBackToSse = session.fellBackToSse;
    this.protocolVersion = session.protocolVersion;
    this.instructions = session.instructions && this.redact(session.instructions);
    this.acceptTools(session.tools);
    if (session.pid !== undefined) this.report.spawned(session.pid, this.config.command);
    const at = Date.now();
    const toolCount = this.tools.length;
    this.apply({ type: "connected", id, session, at, durationMs: at - started, transport: this.transport, toolCount });
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

  /** The live session was lost: release what is left of it and start the schedule. Nothing for a stale session. */
  private dropped(session: LiveSession, reason: string): void {
    const retry = this.config.retry.maxAttempts > 0;
    if (!this.apply({ type: "dropped", session, reason: this.redactor.text(reason), retry })) return;
    this.checks.stop();
    if (session.pid !== undefined) this.report.crashed(session.pid, reason, this.stderrTail(STDERR_LINES_QUOTED));
    // A wrapper that exited may have left its real server running; a remote session's sockets must go too.
    void session.close({ graceful: false });
    this.schedule.dropped();
    // With no attempt left since the server was last stable, the schedule gives up at once with this cause.
    if (retry) void this.schedule.start(new Error(reason));
  }

  /** No more attempts: calls now fail at once with the reason. */
  private giveUp(error: unknown): void {
    const attempts = this.schedule.attemptsMade;
    const exhausted = worthRetrying(error, this.config.transport === "stdio") && attempts > 0;
    this.apply({
      type: "gaveUp",
      reason: error instanceof Error ? error.message : this.lastError,
      attempts,
      exhausted,
    });
  }

  /** Calls a tool by its MCP name, through `withSession`. */
  callTool(toolName: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<CallToolResult> {
    const run = toolCallRun(
      this.toolList.serverName(toolName),
      args,
      this.toolList.definition(toolName),
      this.options.features ?? {},
    );
    return this.report.timed(toolName, Date.now(), this.withSession(toolName, run, options));
  }

  /**
   * Every request to the server (`what` names it in errors: a tool, `prompts/list`, …): `run` is sent on the live
   * session (after a lazy start or a reconnect under way), bounded and redacted by `redactedRequest`, and sent once
   * more on the next session when the connection was lost under it, after a new sign-in the server wanted, or once
   * the user has been on the web page it asked for (URL elicitation, -32042). Other failures are thrown at once.
   */
  withSession<T>(what: string, run: Run<T>, options: CallOptions = {}): Promise<T> {
    return redactedRequest(this.redactor, this.config.requestTimeout, options, (r) => this.firstTry(what, run, r));
  }

  /** On a live session (the usual case) a request waits for nothing and makes nothing for the retry it may need. */
  private async firstTry<T>(what: string, run: Run<T>, request: RequestOptions): Promise<T> {
    const state = this.current;
    const session = state.kind === "live" && this.trusted ? state.session : await this.ready(what, request.signal);
    try {
      return await session.request(run, request);
    } catch (error) {
      return this.retry(what, run, request, session, error);
    }
  }

  private async retry<T>(what: string, run: Run<T>, sent: RequestOptions, on: LiveSession, error: unknown): Promise<T> {
    const { signal } = sent;
    const ctx = () => this.opener.errorContext();
    // The connection was lost under `session` (else the error is thrown as the request's): let it go, say how.
    const lost = (session: LiveSession, error: unknown) => {
      const cause = lostCause(ctx(), session, what, error, signal);
      this.dropped(session, cause);
      return cause;
    };
    // Once more: a second failure is final.
    const again = (session: LiveSession) =>
      session.request(run, sent).catch((error: unknown) => {
        throw lostAgainError(ctx(), what, lost(session, error), error);
      });
    const elicited = error instanceof UrlElicitationRequiredError && !signal?.aborted;
    if (elicited && (await this.options.features?.urlElicitationRequired?.(error.elicitations)))
      return again(this.live ?? (await this.ready(what, signal)));
    if (this.auth.canSignInAfter(error, signal)) {
      // The tokens stopped working and refreshing them did not help: sign in again (if someone can), then retry.
      await this.auth.completeSignIn(signal);
      return (this.live ?? (await this.ready(what, signal))).request(run, sent);
    }
    const cause = lost(on, error);
    const next = await this.ready(what, signal).catch((reconnectError: unknown) => {
      throw reconnectFailedError(ctx(), what, cause, reconnectError);
    });
    return again(next);
  }

  /** A change the live session's server announced, besides its tools, for whoever handles it. */
  private changed = (session: LiveSession, change: ServerChange) =>
    this.live === session && this.options.onServerChange?.(this, change);

  /** The live session for a request: starts an idle server, waits for a reconnect under way, fails for one that gave up. */
  private async ready(toolName: string, signal: AbortSignal | undefined): Promise<LiveSession> {
    const state = this.current;
    if (state.kind === "closed") throw shutDownError(this.name);
    this.checkTrusted();
    if (state.kind === "live") return state.session;
    if (state.kind === "disabled") throw disabledError(this.config);
    if (state.kind === "idle") await this.connect();
    else if (inSchedule(state) && "wasUp" in state && state.wasUp) {
      // A reconnect is under way: wait for it, as long as the call itself could have taken. (A server that never
      // came up this session is not waited for: each call would wait its whole timeout for what may never come.)
      await within(this.schedule.running ?? Promise.resolve(), {
        ms: this.config.requestTimeout,
        timedOut: () =>
          stillReconnectingError(this.opener.errorContext(), this.current, this.config.retry.maxAttempts, toolName),
        signal,
        aborted: () => cancelledError(this.name, toolName),
      });
    } else if (!inSchedule(state)) {
      await this.starting?.catch(() => undefined);
      // A server that waited for a sign-in nobody could do (at startup, say) signs in now if someone can.
      if (this.current.kind === "needsSignIn" && this.options.signIn?.()) await this.reconnect();
    }
    if (this.live) return this.live;
    throw notConnectedError(this.opener.errorContext(), this.current, this.config.retry.maxAttempts);
  }

  /** Starts afresh (`/mcp reconnect`, a reload): ends the session and schedule, connects with a new set of attempts. */
  async reconnect(): Promise<void> {
    if (this.closed) throw shutDownError(this.name);
    this.checkTrusted();
    await this.endOnPurpose("reconnect requested");
    this.schedule.reset();
    this.starting = undefined;
    await this.connect();
  }

  /** Ends session, schedule and an attempt under way (waited for, so none runs beside the next) as the user asked. */
  private async endOnPurpose(reason: string): Promise<void> {
    const session = this.live;
    this.apply({ type: "stopped", reason });
    this.checks.stop();
    const ending = [session?.close({ graceful: false, terminateSession: true }), this.opener.abandon(session)];
    await Promise.all([this.schedule.stop(), this.starting?.catch(() => undefined), ...ending]);
  }

  /** `/mcp auth`: signs in (again) with `handler` sending the user to the page, drops the old tokens, connects afresh. */
  async signIn(handler: SignInHandler): Promise<void> {
    if (!this.auth.configured) throw noOAuthError(this.config);
    this.checkTrusted();
    await this.auth.signInWith(handler, () => this.reconnect());
  }

  /** `/mcp logout`: forgets tokens and registration, disconnects. Names pi 1.x's file if it holds a sign-in (it is pi's). */
  async logout(): Promise<{ removed: boolean; piFileKept?: string }> {
    if (!this.auth.configured) return { removed: false };
    await this.endOnPurpose("signed out");
    const endpoint = this.opener.endpoint();
    const removed = await this.auth.forget(endpoint?.kind === "stdio" ? undefined : endpoint?.url);
    this.apply({
      type: "signedOut",
      message: `Signed out of MCP server '${this.name}'. Run /mcp auth ${commandArgument(this.name)} to sign in again.`,
    });
    return { removed, piFileKept: this.auth.piSignInKept };
  }

  /** Stops the server for the rest of the session (`/mcp disable`): shown as disabled at once, whatever it did. */
  disable = (): Promise<void> => this.close(true);

  async close(disabled = false): Promise<void> {
    const live = this.live;
    // Closed at once, so nothing starts while the processes end; an attempt under way keeps nothing.
    if (!this.apply({ type: "closed", pid: live?.pid, disabled })) return;
    this.capabilities = undefined;
    this.schedule.close();
    this.checks.stop();
    await Promise.all([this.opener.abandon(live), live?.close({ graceful: true, terminateSession: true })]);
    this.options.onServerChange?.(this, { kind: "closed" });
  }

  /** Synchronous last resort when pi exits without a shutdown event. */
  killNow = (): void => this.opener.killNow(this.live);
}
