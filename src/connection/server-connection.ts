/**
 * One MCP server as the rest of the bridge sees it, over the whole pi session: its tools and what its newest session
 * offers, and `withSession`, the one way a request reaches it: sent on the live session (after a lazy start or a
 * reconnect under way) and sent once more on the next session when the connection was lost under it (a tool call the
 * server may have received only when it is safe to run twice: ./request-recovery.ts, `sendAgain`). Keeping it
 * connected (the first connect, drops, the reconnect or restart schedule, ending on purpose) is its lifecycle's job
 * (./connection-lifecycle.ts); it signs in (OAuth) when a server asks for it; messages for the user are worded in
 * ./error-messages.ts.
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
import type { ServerConfig, TransportKind } from "../config/types.ts";
import { commandArgument } from "../config/validate/name.ts";
import type { SignInHandler } from "../oauth/provider.ts";
import { ServerAuth } from "../oauth/server-auth.ts";
import type { AuthStore } from "../oauth/storage.ts";
import { ServerToolList } from "../translate/server-tool-list.ts";
import { ConnectionLifecycle } from "./connection-lifecycle.ts";
import { type ConnectionState, errorOf, statusOf } from "./connection-state.ts";
import type { Delivery } from "./delivery.ts";
import { noOAuthError, refusedAfterRereadError } from "./error-messages.ts";
import { lostAgainError, mayHaveRunError, reconnectFailedError, stoppedDuringCallError } from "./call-errors.ts";
import { credentialsRefused, type FreshHeaders } from "./fresh-headers.ts";
import type { HealthStatus, HealthTracker } from "./health.ts";
import { LifecycleReport } from "./lifecycle-report.ts";
import type { LiveSession, RequestOptions, Run } from "./live-session.ts";
import { type ClientFeatures, connectionFeatures, type ServerChange, type ServerList } from "./mcp-client.ts";
import { ListRefresh } from "./list-refresh.ts";
import { type CallOptions, lostCause, requestOptions, safeToRepeat, sendAgain } from "./request-recovery.ts";
import { SessionOpener, type SessionOpenerOptions } from "./session-opener.ts";
import type { RefusalRecord } from "../sandbox/refusal-record.ts";
import { toolCallRun } from "./tool-call.ts";
import type { SharedState } from "./hub/hub-transport.ts";

export interface ConnectionOptions extends Pick<
  SessionOpenerOptions,
  "recallProtocol" | "projectRoot" | "env" | "clientInfo" | "logger" | "serverLog" | "sandbox" | "hubDir"
> {
  events?: EventSink;
  /** Where OAuth tokens and client registrations are kept; without it remote servers get no OAuth. */
  authStore?: AuthStore;
  /** Who can send the user to a sign-in page right now, if anyone. */
  signIn?: () => SignInHandler | undefined;
  signInTimeoutMs?: number;
  tokenTimeoutMs?: number;
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

/** The first try of a request: the session it went to, and whether it reached the transport. */
type FirstTry = { on: LiveSession; delivery: Delivery; fresh?: Refreshable };
/** One request as the connection runs it (see `withSession`); a tool call's is logged and counted from `started`. */
type Pending<T> = { what: string; run: Run<T>; request: RequestOptions; repeatable?: () => boolean; started?: number };
/** The session's `!command` header values, and the count of their re-reads the request was sent with. */
type Refreshable = { headers: FreshHeaders; seen: number };

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
  readonly toolList: ServerToolList;
  private readonly auth: ServerAuth;
  private readonly opener: SessionOpener;
  private readonly lifecycle: ConnectionLifecycle;
  /** What the client answers the server, at the handshake and in a task's questions alike. */
  private readonly features: ClientFeatures;
  /** What each list's `list_changed` starts, at most once a second. */
  private readonly listRefreshes: Record<ServerList, ListRefresh<LiveSession>> = {
    tools: new ListRefresh((session) => this.refreshTools(session)),
    prompts: new ListRefresh((session) => void this.changed(session, { kind: "list", list: "prompts" })),
    resources: new ListRefresh((session) => void this.changed(session, { kind: "list", list: "resources" })),
  };

  constructor(
    readonly config: ServerConfig,
    private readonly options: ConnectionOptions,
  ) {
    this.features = connectionFeatures(options.features, config.roots !== false, options.projectRoot, this.redactor);
    this.report = new LifecycleReport(config, { ...options, redactor: this.redactor }, () => this.status);
    this.toolList = new ServerToolList(config.limits);
    const onSecrets = (values: string[]) => this.redactor.add(values);
    const report = this.report;
    this.auth = new ServerAuth({
      ...{ ...options, server: config.name, settings: config.oauth, store: options.authStore },
      ...{ report, onSecrets },
    });
    this.opener = new SessionOpener(config, {
      ...options,
      features: this.features,
      auth: this.auth,
      report,
      redactor: this.redactor,
      events: {
        dropped: (session, reason) => this.lifecycle.dropped(session, reason),
        streamError: (session, error) => this.lifecycle.streamError(session, error),
        listChanged: (session, list) => this.listRefreshes[list].request(session),
        resourceUpdated: (session, uri) => this.changed(session, { kind: "updated", uri }),
      },
    });
    this.lifecycle = new ConnectionLifecycle({
      ...{ config, opener: this.opener, report, redactor: this.redactor, auth: this.auth },
      ...{ trusted: () => this.trusted, signIn: options.signIn, stableAfterMs: options.stableAfterMs },
      adopt: (session) => this.adopt(session),
      connected: () => this.options.onTools?.(this, this.tools),
    });
  }

  get name(): string {
    return this.config.name;
  }

  get health(): HealthTracker {
    return this.report.health;
  }

  get state(): ConnectionState<LiveSession> {
    return this.lifecycle.state;
  }

  get status(): HealthStatus {
    return statusOf(this.state);
  }

  get lastError(): string | undefined {
    return errorOf(this.state);
  }

  /** True while the server waits for an OAuth sign-in that nobody could do yet. */
  get needsSignIn(): boolean {
    return this.state.kind === "needsSignIn";
  }

  /** When the live session opened: a new value means a new session (what the old one held is gone). */
  get connectedAt(): number | undefined {
    return this.state.kind === "live" ? this.state.since : undefined;
  }

  /** The pid of a local server's process while it runs. */
  get pid(): number | undefined {
    return this.lifecycle.live?.pid;
  }

  /** A `shared` server while connected: its pid and how many pi sessions use it, as the hub says. */
  get shared(): SharedState | undefined {
    return this.lifecycle.live?.hub?.shared;
  }

  get trusted(): boolean {
    return this.options.trusted?.() ?? true;
  }

  /**
   * Warnings about this server: from resolving the config (a variable its `env` needs is not set), tools its limits left
   * out, and what calls found wrong with its tools' results.
   */
  get warnings(): string[] {
    const { warning, findingLines } = this.toolList;
    return [...this.opener.warnings, ...this.auth.warnings, ...(warning ? [warning] : []), ...findingLines];
  }

  /** What a call of `tool` found wrong with its result: under the server in /mcp and in the log, once per tool. */
  resultFinding(tool: string, text: string): void {
    if (this.toolList.found(tool, text)) this.report.log("warn", "tool.result.unfit", { tool, problem: text });
  }

  /** What the sandbox refused this server, and the rules of its last sandboxed start. */
  get sandboxRefusals(): RefusalRecord {
    return this.opener.refusals;
  }

  /**
   * Whether npm is installing its package for npx while it connects (Linux): the connect waits for the install
   * (./connect-deadline.ts), and stopping it gives npm time to roll the install back.
   */
  get installing(): boolean {
    return this.state.kind === "connecting" && this.opener.newest?.installing === true;
  }

  /** The last lines the newest local server process wrote to stderr, redacted. */
  stderrTail(n?: number): string[] {
    return this.opener.stderrTail(n);
  }

  /**
   * What identifies this server's tool list across sessions: its resolved endpoint (undefined while it cannot be
   * resolved). A server added for this session only has none: it leaves nothing behind in a file, its tools included.
   */
  identity(): unknown {
    if (this.config.source.scope === "session") return undefined;
    const endpoint = this.opener.endpoint();
    return endpoint ? { name: this.name, endpoint } : undefined;
  }

  /** Tools known from an earlier session, for a lazy server that has not started. */
  primeTools(tools: Tool[]): void {
    if (!this.lifecycle.live) this.acceptTools(tools);
  }

  /** Tells the live session, if any, that the roots changed (the server asks for them again). Never throws. */
  async rootsChanged(): Promise<void> {
    if (!this.features.roots) return;
    await this.lifecycle.live
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
    const warning = this.toolList.accept(listed, (tool) => this.redactor.result(tool));
    if (warning) this.report.log("warn", "tools.limited", { listed: listed.length, kept: this.tools.length, warning });
  }

  /** A new session opened: what it offers is the server's now. Returns how many tools it has. */
  private adopt(session: LiveSession): number {
    this.capabilities = session.capabilities;
    this.transport = session.kind;
    this.fellBackToSse = session.fellBackToSse;
    this.protocolVersion = session.protocolVersion;
    this.instructions = session.instructions && this.redact(session.instructions);
    this.acceptTools(session.tools);
    return this.tools.length;
  }

  redact(text: string): string {
    return this.opener.redact(text);
  }

  /** Starts the server if nobody has, and waits for that connect; a failure retrying may fix starts the schedule. */
  connect(): Promise<void> {
    return this.lifecycle.connect();
  }

  /** `tools/list_changed`: fetch the list again and hand it on, if `session` is still the live one by then. */
  private async refreshTools(session: LiveSession): Promise<void> {
    const started = Date.now();
    try {
      const tools = await session.listTools(this.config.requestTimeout);
      if (this.lifecycle.live !== session) return;
      this.acceptTools(tools);
      this.report.log("info", "tools.changed", { toolCount: this.tools.length, durationMs: Date.now() - started });
      this.options.onTools?.(this, this.tools);
    } catch (error) {
      this.report.log("warn", "tools.refresh.failed", { error: this.redact(describeError(error)) });
    }
  }

  /** What to add to a tool's error that asks for a key this server was not given, if it does. */
  toolErrorAdvice(text: string): string | undefined {
    return this.opener.toolErrorAdvice(text);
  }

  /** Calls a tool by its MCP name, through `withSession`; its outcome is logged and counted. */
  callTool(toolName: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<CallToolResult> {
    const definition = this.toolList.definition(toolName);
    const call = toolCallRun(this.toolList.serverName(toolName), args, definition, this.features);
    const safe = safeToRepeat(toolName, definition?.annotations, this.config.resendAfterDrop);
    // A call that follows a task by its id goes on with the work when it runs again: it does not repeat it.
    const repeatable = () => safe || call.followsTask();
    const request = requestOptions(this.redactor, this.config.requestTimeout, options);
    return this.send({ what: toolName, run: call.run, request, repeatable, started: Date.now() });
  }

  /**
   * Every request to the server (`what` names it in errors: a tool, `prompts/list`, …): `run` is sent on the live
   * session (after a lazy start or a reconnect under way), bounded and redacted (./request-recovery.ts), and sent once
   * more on the next session when the connection was lost under it, after a new sign-in the server wanted, or once
   * the user has been on the web page it asked for (URL elicitation, -32042). Other failures are thrown at once.
   * A tool call (`repeatable` given) the server may have received is sent again only as `sendAgain` allows.
   */
  withSession<T>(what: string, run: Run<T>, options: CallOptions = {}, repeatable?: () => boolean): Promise<T> {
    const request = requestOptions(this.redactor, this.config.requestTimeout, options);
    return this.send({ what, run, request, repeatable });
  }

  /** On a live session (the usual case) a request keeps no async frame: one step follows its answer, or its failure. */
  private send<T>(pending: Pending<T>): Promise<T> {
    const state = this.lifecycle.state;
    const live = state.kind === "live" && this.trusted ? state.session : undefined;
    // Values older than `headersTtl` are read again before they are sent.
    if (live && !this.opener.freshHeaders(live)?.expired(Date.now())) return this.sendOn(live, pending);
    return this.readySession(pending).then(
      (session) => this.sendOn(session, pending),
      (error: unknown) => this.failed(pending, error),
    );
  }

  private async readySession(pending: Pending<unknown>): Promise<LiveSession> {
    const session = await this.lifecycle.ready(pending.what, pending.request.signal, pending.request.onProgress);
    const headers = this.opener.freshHeaders(session);
    if (headers?.expired(Date.now())) await headers.refresh(headers.generation);
    return session;
  }

  private sendOn<T>(on: LiveSession, pending: Pending<T>): Promise<T> {
    const headers = this.opener.freshHeaders(on);
    const fresh = headers && { headers, seen: headers.generation };
    const delivery: Delivery = { sent: false };
    return on.request(pending.run, pending.request, delivery).then(
      (result) => this.answered(pending, result),
      (error: unknown) =>
        this.retry(pending, { on, delivery, fresh }, error).then(
          (result) => this.answered(pending, result),
          (error: unknown) => this.failed(pending, error),
        ),
    );
  }

  /** What comes back is redacted: the model sees no secret of this server's config and no terminal control sequence. */
  private answered<T>(pending: Pending<T>, result: T): T {
    const redacted = this.redactor.result(result);
    if (pending.started !== undefined)
      this.report.called(pending.what, pending.started, { result: redacted as CallToolResult });
    return redacted;
  }

  private failed(pending: Pending<unknown>, error: unknown): never {
    // Most messages were worded with the redaction already; one that came through as it was gets it here, causes too.
    this.redactor.error(error);
    if (pending.started !== undefined) this.report.called(pending.what, pending.started, { error });
    throw error;
  }

  private async retry<T>(pending: Pending<T>, first: FirstTry, error: unknown): Promise<T> {
    const { what, run, request: sent, repeatable } = pending;
    const { signal } = sent;
    const { on, delivery, fresh } = first;
    const ctx = () => this.opener.errorContext();
    // The connection was lost under `session` (else the error is thrown as the request's): let it go, say how.
    const lost = (session: LiveSession, error: unknown) => {
      const cause = lostCause(ctx(), session, what, error, signal);
      this.lifecycle.dropped(session, cause);
      return cause;
    };
    // Once more: a second failure is final.
    const again = (session: LiveSession) =>
      session.request(run, sent).catch((error: unknown) => {
        throw lostAgainError(ctx(), what, lost(session, error), error);
      });
    if (fresh && credentialsRefused(error) && !signal?.aborted) {
      // Refused values from `!command`s are read again (once for every request refused with them) and sent once more.
      await fresh.headers.refresh(fresh.seen);
      return on.request(run, sent).catch((again: unknown) => {
        if (credentialsRefused(again)) throw refusedAfterRereadError(ctx(), what, again);
        return this.retry(pending, { on, delivery: { sent: true } }, again);
      });
    }
    const elicited = error instanceof UrlElicitationRequiredError && !signal?.aborted;
    if (elicited && (await this.features.urlElicitationRequired?.(error.elicitations)))
      return again(this.lifecycle.live ?? (await this.lifecycle.ready(what, signal)));
    if (this.auth.canSignInAfter(error, signal)) {
      // The tokens stopped working and refreshing them did not help: sign in again (if someone can), then retry.
      await this.auth.completeSignIn(signal);
      return (this.lifecycle.live ?? (await this.lifecycle.ready(what, signal))).request(run, sent);
    }
    const cause = lost(on, error);
    if (this.state.kind === "closed") throw stoppedDuringCallError(ctx(), what, error);
    if (!sendAgain(delivery, on, error, repeatable))
      throw mayHaveRunError(ctx(), what, cause, error, on.violation !== undefined);
    const next = await this.lifecycle.ready(what, signal, sent.onProgress).catch((reconnectError: unknown) => {
      throw reconnectFailedError(ctx(), what, cause, reconnectError);
    });
    return again(next);
  }

  /** A change the live session's server announced, besides its tools, for whoever handles it. */
  private changed = (session: LiveSession, change: ServerChange) =>
    this.lifecycle.live === session && this.options.onServerChange?.(this, change);

  /** Starts afresh (`/mcp reconnect`, a reload): ends the session and schedule, connects with a new set of attempts. */
  reconnect(): Promise<void> {
    return this.lifecycle.reconnect();
  }

  /** Has the hub restart a shared server for every session that uses it; false when it is not shared and connected. */
  restartShared(): boolean {
    const hub = this.lifecycle.live?.hub;
    hub?.restartForAll();
    return hub !== undefined;
  }

  /** `/mcp auth`: signs in (again) with `handler` sending the user to the page, drops the old tokens, connects afresh. */
  async signIn(handler: SignInHandler): Promise<void> {
    if (!this.auth.configured) throw noOAuthError(this.config);
    this.lifecycle.checkTrusted();
    await this.auth.signInWith(handler, () => this.reconnect());
    // Connected with no token stored: the server took the requests without asking for a sign-in, and none was made.
    const none = `MCP server '${this.name}' did not ask for a sign-in: it connected without one`;
    if (!this.auth.hasTokens) throw new BridgeError("other", this.name, none);
  }

  /** `/mcp logout`: forgets tokens and registration, disconnects. Names pi 1.x's file if it holds a sign-in (it is pi's). */
  async logout(): Promise<{ removed: boolean; piFileKept?: string }> {
    if (!this.auth.configured) return { removed: false };
    // A server up, or waiting for a sign-in, with no tokens stored: nothing to sign out of, so it stays as it is.
    const signedIn = !["live", "needsSignIn"].includes(this.state.kind) || this.auth.hasTokens;
    if (signedIn) await this.lifecycle.endOnPurpose("signed out");
    const endpoint = this.opener.endpoint();
    const removed = await this.auth.forget(endpoint?.kind === "stdio" ? undefined : endpoint?.url);
    if (signedIn)
      this.lifecycle.signedOut(
        `Signed out of MCP server '${this.name}'. Run /mcp auth ${commandArgument(this.name)} to sign in again.`,
      );
    return { removed, piFileKept: this.auth.piSignInKept };
  }

  /** Stops the server for the rest of the session (`/mcp disable`): shown as disabled at once, whatever it did. */
  disable = (): Promise<void> => this.close(true);
  /** The close under way: another (the session's end meeting `/mcp off`) waits for it, so none outlasts the session. */
  private closing?: Promise<void>;

  async close(disabled = false): Promise<void> {
    const ending = this.lifecycle.close(disabled);
    if (!ending) return this.closing;
    this.capabilities = undefined;
    return (this.closing = ending.then(() => void this.options.onServerChange?.(this, { kind: "closed" })));
  }

  /** Synchronous last resort when pi exits without a shutdown event. */
  killNow = (): void => this.opener.killNow(this.lifecycle.live);
}
