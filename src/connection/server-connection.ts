/**
 * One MCP server over its whole session: connects (at startup, or on first use for a lazy server), keeps its health
 * state, notices a drop (process exit, transport error, a stale connection that does not answer a ping), reconnects
 * or restarts with backoff, holds tool calls while it does, follows `tools/list_changed`, and shuts down leaving no
 * process behind. Messages for the user are worded in ./connection-errors.ts.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { Agent, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from "undici";
import {
  CallToolResultSchema,
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
  LoggingMessageNotificationSchema,
  type CallToolResult,
  type Progress,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { ServerConfig } from "../config/types.ts";
import { describeSource } from "../config/types.ts";
import {
  callError,
  ConnectTimeout,
  connectError,
  type FailureKind,
} from "./error-messages.ts";
import { seconds } from "../common/text.ts";
import { BridgeError, classifyError, describeError, errorMessage, httpStatusOf, isTimeoutError } from "../common/errors.ts";
import { gaveUpMessage, HealthTracker, type HealthStatus, type ServerMetrics, type ServerState } from "./health.ts";
import { type Logger, type LogLevel, NULL_LOGGER } from "../common/log-file.ts";
import { RetrySchedule } from "./retry-schedule.ts";
import { type ProcessInfo, killProcessesNow, mergeProcesses, processTree, terminateProcesses } from "./process-tree.ts";
import type { ProcessGroupStdioTransport } from "./stdio-transport.ts";
import type { SignInHandler } from "../oauth/provider.ts";
import { isUnauthorized, OAuthSession } from "../oauth/session.ts";
import type { AuthStore } from "../oauth/storage.ts";
import { type Environment, type ResolvedEndpoint, type ResolvedRemote, redact, resolveServerConfig } from "../config/substitute.ts";
import { createSseTransport, createStdioTransport, createStreamableHttpTransport } from "./transports.ts";

export type ActiveTransport = "stdio" | "http" | "sse";

/** Publishes a health event (`mcp.connected`, …) on pi's event bus. */
export type EventSink = (channel: string, payload: Record<string, unknown>) => void;

export interface ConnectionOptions {
  projectRoot: string;
  env: Environment;
  clientInfo: { name: string; version: string };
  events?: EventSink;
  logger?: Logger;
  /** This server's own log, for its stderr; without it stderr goes to `logger`. */
  serverLog?: Logger;
  /** Where OAuth tokens and client registrations are kept; without it remote servers get no OAuth. */
  authStore?: AuthStore;
  /** Who can send the user to a sign-in page right now, if anyone. */
  signIn?: () => SignInHandler | undefined;
  signInTimeoutMs?: number;
  /** Answers a server's `elicitation/create` requests; without it the client does not offer elicitation. */
  elicitation?: (request: ElicitRequest["params"]) => Promise<ElicitResult>;
  /** Called with the server's tool list after every successful fetch: connect, reconnect, `list_changed`. */
  onTools?: (connection: ServerConnection, tools: Tool[]) => void;
}

export interface CallOptions {
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
}

const STDERR_TAIL_LINES = 40;
const STDERR_TAIL_IN_ERRORS = 12;
const MAX_TOOL_PAGES = 100;
const SESSION_TERMINATE_TIMEOUT_MS = 1000;
/** As long as a stdio server gets to exit after its stdin closes, before signals. */
const STDIO_CLOSE_GRACE_MS = 2000;
const SDK_TIMEOUT_SLACK_MS = 1000;
/** `tools/list_changed` often comes in bursts (a server adding several tools); fetch once per burst. */
const LIST_CHANGED_DEBOUNCE_MS = 50;

/** Waits for `promise` at most `ms`; true if it settled (either way) in time. */
async function settleWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]);
  clearTimeout(timer);
  return settled;
}

/** What one successful connect holds open. */
interface LiveConnection {
  client: Client;
  transport: Transport;
  kind: ActiveTransport;
  /** A remote server's own connection pool, so closing it closes its sockets at once. */
  agent?: Agent;
  /** Set once the bridge itself closes this connection, so its `onclose` is not taken for a crash. */
  closing?: boolean;
  /** A local server's process tree as seen after connecting, so processes that left it are still ended. */
  processes: ProcessInfo[];
}

/** `fetch` through a given pool, in the shape the SDK transports take. */
function fetchVia(agent: Agent): FetchLike {
  return (url, init) => undiciFetch(url, { ...(init as UndiciRequestInit), dispatcher: agent }) as unknown as Promise<Response>;
}

function pidOf(transport: Transport | undefined): number | undefined {
  return (transport as Partial<ProcessGroupStdioTransport> | undefined)?.pid ?? undefined;
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, it is just not ours to signal.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Keeps the last lines a server wrote to stderr. */
class LineTail {
  private lines: string[] = [];
  constructor(private readonly max: number) {}
  push(line: string): void {
    this.lines.push(line);
    if (this.lines.length > this.max) this.lines.splice(0, this.lines.length - this.max);
  }
  tail(n: number): string[] {
    return this.lines.slice(-n);
  }
}

const MCP_LOG_LEVELS: Record<string, LogLevel> = {
  debug: "debug",
  info: "info",
  notice: "info",
  warning: "warn",
  error: "error",
  critical: "error",
  alert: "error",
  emergency: "error",
};

export class ServerConnection {
  transport?: ActiveTransport;
  /** True when Streamable HTTP was refused and legacy SSE answered instead. */
  fellBackToSse = false;
  tools: Tool[] = [];
  warnings: string[] = [];
  readonly health: HealthTracker;

  /** The open connection, if any. */
  private live?: LiveConnection;
  /** A connection still being set up, so shutdown can end it too. */
  private connecting?: LiveConnection;
  private secrets: string[] = [];
  /** The first connect (startup or lazy start), shared by everyone who needs the server up. */
  private starting?: Promise<void>;
  /** The reconnect (remote) or restart (local) schedule. */
  private readonly schedule: RetrySchedule;
  private everConnected = false;
  private readonly stderr = new LineTail(STDERR_TAIL_LINES);
  private exitDescription?: string;
  private nonJsonLines = 0;
  private closed = false;
  private healthTimer?: NodeJS.Timeout;
  private probing?: Promise<void>;
  private oauth?: OAuthSession;
  /** A sign-in handler given for one explicit sign-in (`/mcp auth`), used before the session's own. */
  private signInOverride?: SignInHandler;

  constructor(
    readonly config: ServerConfig,
    private readonly options: ConnectionOptions,
  ) {
    this.health = new HealthTracker(config.name, config.enabled ? "not started" : "disabled", config.retry.maxAttempts);
    this.schedule = new RetrySchedule(config.retry, {
      attempt: (n) => this.connectOnce(n),
      retryable: (error) => this.retryable(error),
      scheduled: (n, at) => this.health.scheduled(n, at),
      failed: (n, error, retryIn) => this.emit("mcp.error", { error: errorMessage(error), retryIn, attempt: n }),
      gaveUp: (error) => this.giveUp(error),
    });
  }

  get name(): string {
    return this.config.name;
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

  get local(): boolean {
    return this.config.transport === "stdio";
  }

  /** True while the server waits for an OAuth sign-in that nobody could do yet. */
  get needsSignIn(): boolean {
    return !this.live && this.oauth?.provider.signInRequired === true;
  }

  /** The pid of a local server's process while it runs. */
  get pid(): number | undefined {
    return pidOf(this.live?.transport);
  }

  metrics(now = Date.now()): ServerMetrics {
    return this.health.metrics(now);
  }

  stderrTail(n = STDERR_TAIL_LINES): string[] {
    return this.stderr.tail(n).map((line) => this.redact(line));
  }

  /**
   * What identifies this server's tool list across sessions: its resolved endpoint. Undefined when the config cannot
   * be resolved (a missing variable in a URL).
   */
  identity(): unknown {
    const resolution = resolveServerConfig(this.config, this.options.env, this.options.projectRoot);
    return resolution.endpoint ? { name: this.name, endpoint: resolution.endpoint } : undefined;
  }

  /** Tools known from an earlier session, for a lazy server that has not started. */
  primeTools(tools: Tool[]): void {
    if (this.live) return;
    this.tools = tools;
    this.health.toolCount(tools.length);
  }

  private emit(channel: string, payload: Record<string, unknown>): void {
    try {
      this.options.events?.(channel, { serverId: this.name, ...payload });
    } catch {
      // A listener's failure is the listener's problem: it must not break the connection.
    }
  }

  private log(level: LogLevel, event: string, fields: Record<string, unknown> = {}): void {
    (this.options.logger ?? NULL_LOGGER).log({ level, event, server: this.name, ...fields });
  }

  /**
   * Starts the server if nobody has yet, and waits for that first connect. A failure that retrying may fix starts
   * the reconnect (remote) or restart (local) schedule in the background; the error is thrown either way.
   */
  async connect(): Promise<void> {
    if (this.closed) throw new BridgeError("other", this.name, `MCP server '${this.name}' is shut down`);
    if (!this.starting) {
      this.starting = this.connectOnce(0).catch((error: unknown) => {
        if (this.retryable(error)) void this.recover();
        else this.giveUp(error);
        throw error;
      });
    }
    await this.starting;
  }

  /** One connect attempt: handshake and tool list within the server's deadline, full clean-up on failure. */
  private async connectOnce(attempt: number): Promise<void> {
    if (this.closed) throw new BridgeError("other", this.name, `MCP server '${this.name}' is shut down`);
    this.emit("mcp.connecting", { attempt, maxAttempts: this.config.retry.maxAttempts });
    this.health.connecting(attempt);
    this.log("info", "connecting", { attempt });
    const started = Date.now();
    try {
      const resolution = resolveServerConfig(this.config, this.options.env, this.options.projectRoot);
      this.secrets = resolution.secrets;
      this.warnings = resolution.warnings;
      if (!resolution.endpoint) {
        throw new BridgeError("config", this.name, `${resolution.errors.join("; ")} (${describeSource(this.config.source)})`);
      }
      const endpoint = resolution.endpoint;
      if (endpoint.kind !== "stdio") this.prepareOAuth(endpoint.url);
      // A client secret from the auth block is redacted like any other resolved value.
      if (this.oauth) this.secrets = [...this.secrets, ...this.oauth.secrets];
      try {
        await this.connectEndpoint(endpoint, started + this.config.timeout);
      } catch (error) {
        if (!this.oauth || !isUnauthorized(error)) throw error;
        // The SDK has sent the user to sign in (or found nobody to do it): wait for that, then connect with the tokens.
        await this.oauth.completeSignIn((channel, payload) => this.emit(channel, payload), this.schedule.signal);
        await this.connectEndpoint(endpoint, Date.now() + this.config.timeout);
      }
      if (this.closed) {
        // Shut down while this attempt was under way: do not keep what it opened.
        await this.disposeCurrent({ graceful: false });
        throw new BridgeError("other", this.name, `MCP server '${this.name}' was shut down while connecting`);
      }
    } catch (error) {
      const wrapped =
        error instanceof BridgeError
          ? error
          : this.closed
            ? new BridgeError("other", this.name, `MCP server '${this.name}' was shut down while connecting`, { cause: error })
            : this.connectError(error);
      this.health.failed(wrapped.message);
      this.log("warn", "connect.failed", { attempt, durationMs: Date.now() - started, kind: wrapped.kind, error: wrapped.message });
      throw wrapped;
    }
    const now = Date.now();
    this.everConnected = true;
    const downtime = this.health.connected(now, now - started, this.tools.length);
    this.log("info", "connected", { attempt, transport: this.transport, durationMs: now - started, toolCount: this.tools.length });
    this.emit("mcp.connected", { toolCount: this.tools.length, connectTime: now - started });
    if (downtime !== undefined) this.emit("mcp.health.recovered", { downtime });
    this.startHealthChecks();
    this.options.onTools?.(this, this.tools);
  }

  private async connectEndpoint(endpoint: ResolvedEndpoint, deadline: number): Promise<void> {
    if (endpoint.kind === "stdio") {
      await this.attempt("stdio", () => this.stdioTransport(endpoint), deadline);
      return;
    }
    const authProvider = this.oauth?.provider;
    if (endpoint.kind === "sse") {
      await this.attempt("sse", (fetch) => createSseTransport(endpoint, fetch, authProvider), deadline);
      return;
    }
    try {
      await this.attempt("http", (fetch) => createStreamableHttpTransport(endpoint, fetch, authProvider), deadline);
      this.fellBackToSse = false;
    } catch (error) {
      // A server that only speaks the 2024-11-05 HTTP+SSE transport answers the Streamable HTTP POST with 404 or 405.
      const status = httpStatusOf(error);
      if (status !== 404 && status !== 405) throw error;
      await this.attempt("sse", (fetch) => createSseTransport(endpoint as ResolvedRemote, fetch, authProvider), deadline);
      this.fellBackToSse = true;
    }
  }

  /** The OAuth session for this server's URL (a new one if the URL changed), when OAuth is on for it. */
  private prepareOAuth(serverUrl: string): void {
    const { authStore } = this.options;
    const settings = this.config.oauth;
    if (!settings || !authStore) return;
    if (this.oauth?.serverUrl === serverUrl) return;
    this.oauth = new OAuthSession({
      server: this.name,
      serverUrl,
      settings,
      env: this.options.env,
      store: authStore,
      signIn: () => this.signInOverride ?? this.options.signIn?.(),
      signInTimeoutMs: this.options.signInTimeoutMs,
      fetch: undiciFetch as unknown as FetchLike,
    });
  }

  /**
   * Signs in (again) with `handler` sending the user to the page: the stored tokens are dropped, and the server is
   * connected afresh. For `/mcp auth`.
   */
  async signIn(handler: SignInHandler): Promise<void> {
    if (!this.config.oauth || !this.options.authStore) {
      throw new BridgeError("config", this.name, `MCP server '${this.name}' does not use OAuth (${this.local ? "it is a local server" : "its config turns it off or sets an Authorization header"})`);
    }
    await this.options.authStore.deleteTokens(this.name);
    this.signInOverride = handler;
    try {
      await this.reconnect();
    } finally {
      this.signInOverride = undefined;
    }
  }

  /** Ends the retry schedule and the connection because the user asked for it (not a failure). */
  private async endOnPurpose(reason: string): Promise<void> {
    await this.schedule.stop();
    const live = this.live;
    this.live = undefined;
    if (!live) return;
    this.stopHealthChecks();
    this.health.disconnected(Date.now(), reason);
    this.emit("mcp.disconnected", { reason, wasClean: true });
    await this.dispose(live, { graceful: false, terminateSession: true });
  }

  /** Stops the server for the rest of the session (`/mcp disable`): closed, and shown as disabled. */
  async disable(): Promise<void> {
    await this.close();
    this.health.state.status = "disabled";
  }

  /** Forgets this server's tokens and client registration and disconnects it. For `/mcp logout`. */
  async logout(): Promise<boolean> {
    const store = this.options.authStore;
    if (!this.config.oauth || !store) return false;
    await this.endOnPurpose("signed out");
    const removed = await store.logout(this.name);
    this.oauth = undefined;
    this.health.failed(`Signed out of MCP server '${this.name}'. Run /mcp auth ${this.name} to sign in again.`);
    this.health.gaveUp("error");
    return removed;
  }

  private stdioTransport(endpoint: Extract<ResolvedEndpoint, { kind: "stdio" }>): ProcessGroupStdioTransport {
    this.exitDescription = undefined;
    return createStdioTransport(endpoint, {
      onStderrLine: (line) => {
        this.stderr.push(line);
        (this.options.serverLog ?? this.options.logger ?? NULL_LOGGER).log({ level: "debug", event: "stderr", server: this.name, line: this.redact(line) });
      },
      onExit: (description) => {
        this.exitDescription = description;
      },
    });
  }

  private async attempt(kind: ActiveTransport, makeTransport: (fetch?: FetchLike) => Transport, deadline: number): Promise<void> {
    const remaining = () => Math.max(1, deadline - Date.now());
    // Our own timer enforces the deadline. The SDK's request timeout only backs it up: when it fires first, the SDK
    // sends a cancellation to a server that is not answering, which over HTTP opens one more idle socket.
    const sdkTimeout = () => remaining() + SDK_TIMEOUT_SLACK_MS;
    const agent = kind === "stdio" ? undefined : new Agent();
    const fetch = agent && fetchVia(agent);
    const transport = makeTransport(fetch && this.oauth ? this.oauth.wrapFetch(fetch) : fetch);
    let live: LiveConnection | undefined;
    const elicitation = this.options.elicitation;
    const client = new Client(this.options.clientInfo, {
      // applyDefaults: the SDK fills in the defaults of the server's schema that an answer leaves out.
      capabilities: elicitation ? { elicitation: { form: { applyDefaults: true } } } : {},
      listChanged: {
        tools: {
          autoRefresh: false,
          debounceMs: LIST_CHANGED_DEBOUNCE_MS,
          onChanged: () => {
            if (live) void this.refreshTools(live);
          },
        },
      },
    });
    live = { client, transport, kind, agent, processes: [] };
    if (elicitation) client.setRequestHandler(ElicitRequestSchema, (request) => elicitation(request.params));
    this.connecting = live;
    this.nonJsonLines = 0;
    client.onerror = (error) => {
      // The SDK reports unparsable stdout lines here and carries on; count them for a better error message.
      if (error instanceof SyntaxError || /JSON|parse/i.test(error.message)) {
        this.nonJsonLines++;
        return;
      }
      // A remote stream that broke says nothing else: check whether the server still answers.
      // (Not for wanting credentials: the request that met that signs in, and a ping would only start another sign-in.)
      if (kind !== "stdio" && this.live === live && !isUnauthorized(error) && classifyError(error) !== "auth") {
        void this.probe(live, `transport error: ${describeError(error)}`);
      }
    };
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      this.health.heard(Date.now());
      const { level, logger, data } = notification.params;
      this.log(MCP_LOG_LEVELS[level] ?? "info", "server.log", { logger, data: this.redact(typeof data === "string" ? data : JSON.stringify(data)) });
    });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ConnectTimeout()), remaining());
    });
    try {
      await Promise.race([
        (async () => {
          await client.connect(transport, { timeout: sdkTimeout() });
          const pid = pidOf(transport);
          if (pid) {
            live!.processes = processTree(pid);
            this.emit("mcp.local.spawned", { pid, command: this.config.command });
            this.log("info", "spawned", { pid });
          }
          this.tools = await this.fetchTools(client, sdkTimeout);
        })(),
        timedOut,
      ]);
    } catch (error) {
      await this.dispose(live, { graceful: false });
      throw error;
    } finally {
      clearTimeout(timer);
      if (this.connecting === live) this.connecting = undefined;
    }
    this.live = live;
    this.transport = kind;
    const connected = live;
    client.onclose = () => {
      if (connected.closing) return;
      const reason = this.exitDescription ? `the server process ${this.exitDescription}` : "the connection closed";
      this.dropped(connected, reason);
    };
  }

  private async fetchTools(client: Client, timeout: () => number): Promise<Tool[]> {
    if (!client.getServerCapabilities()?.tools) return [];
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const result = await client.listTools(cursor ? { cursor } : undefined, { timeout: timeout() });
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    this.health.heard(Date.now());
    return tools;
  }

  /** `tools/list_changed`: fetch the list again and hand it on. */
  private async refreshTools(live: LiveConnection): Promise<void> {
    const started = Date.now();
    try {
      const tools = await this.fetchTools(live.client, () => this.config.requestTimeout);
      if (this.live !== live) return;
      this.tools = tools;
      this.health.toolCount(tools.length);
      this.log("info", "tools.changed", { toolCount: tools.length, durationMs: Date.now() - started });
      this.options.onTools?.(this, tools);
    } catch (error) {
      this.log("warn", "tools.refresh.failed", { error: this.redact(describeError(error)) });
    }
  }

  /**
   * A live connection was lost: record it, publish it, clean up what is left, and start the reconnect or restart
   * schedule. Safe to call more than once for the same connection.
   */
  private dropped(live: LiveConnection, reason: string): void {
    if (this.live !== live || this.closed) return;
    this.live = undefined;
    this.stopHealthChecks();
    const now = Date.now();
    this.health.disconnected(now, reason);
    this.log("warn", "disconnected", { reason });
    this.emit("mcp.disconnected", { reason, wasClean: false });
    const pid = pidOf(live.transport);
    if (pid !== undefined) {
      this.emit("mcp.local.crashed", { pid, reason, stderr: this.stderrTail(STDERR_TAIL_IN_ERRORS) });
    }
    // A wrapper that exited may have left its real server running; a remote session's sockets must go too.
    void this.dispose(live, { graceful: false });
    if (this.config.retry.maxAttempts > 0) void this.recover();
    else this.health.gaveUp("disconnected");
  }

  /** Runs the reconnect/restart schedule unless it already runs; resolves when it ends (connected or given up). */
  private recover(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return this.schedule.start();
  }

  /** No more attempts: calls now fail at once with the reason. */
  private giveUp(error: unknown): void {
    if (this.closed) return;
    const retried = this.health.state.retryAttempt;
    const reason = error instanceof Error ? error.message : this.health.state.lastError;
    const exhausted = this.retryable(error) && retried > 0;
    this.health.gaveUp(exhausted ? "disconnected" : "error");
    this.log("error", "gave.up", { attempts: retried, error: reason });
    if (exhausted) this.emit("mcp.disconnected", { reason: `gave up after ${retried} attempts: ${reason}`, wasClean: false });
  }

  /** Failures a new attempt may fix. A bad config, rejected credentials, a missing command or a hung local server are not. */
  private retryable(error: unknown): boolean {
    if (error instanceof BridgeError && (error.kind === "config" || error.kind === "auth")) return false;
    if (!this.local) return true;
    if (error instanceof BridgeError && error.kind === "timeout") return false;
    const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
    return code !== "ENOENT" && code !== "EACCES";
  }

  private startHealthChecks(): void {
    this.stopHealthChecks();
    const interval = this.config.healthCheckInterval;
    if (interval <= 0) return;
    this.healthTimer = setInterval(() => {
      const live = this.live;
      const last = this.health.state.lastSuccessfulCommunication ?? 0;
      if (!live || this.probing || Date.now() - last < interval) return;
      this.emit("mcp.health.stale", { lastCommunication: new Date(last).toISOString() });
      this.log("info", "stale", { idleMs: Date.now() - last });
      void this.probe(live, "stale");
    }, interval);
    this.healthTimer.unref();
  }

  private stopHealthChecks(): void {
    clearInterval(this.healthTimer);
    this.healthTimer = undefined;
  }

  /** Pings the server; no answer within `pingTimeout` (or a dead process) counts as a dropped connection. */
  private probe(live: LiveConnection, why: string): Promise<void> {
    this.probing ??= (async () => {
      const pid = pidOf(live.transport);
      const started = Date.now();
      if (pid !== undefined && !processExists(pid)) {
        this.dropped(live, "the server process is gone");
        return;
      }
      try {
        await live.client.ping({ timeout: this.config.pingTimeout });
        this.health.heard(Date.now());
        this.log("debug", "request", { method: "ping", durationMs: Date.now() - started, ok: true, why });
      } catch (error) {
        const kind = isTimeoutError(error) ? "timeout" : classifyError(error);
        if (kind !== "timeout" && kind !== "transport") {
          // It answered, if only to refuse (no ping support, or it wants credentials: the next call signs in).
          this.health.heard(Date.now());
          this.log("debug", "request", { method: "ping", durationMs: Date.now() - started, ok: false, why, kind });
          return;
        }
        const detail = kind === "timeout" ? `no answer to a ping within ${seconds(this.config.pingTimeout)}` : describeError(error);
        this.log("warn", "request", { method: "ping", durationMs: Date.now() - started, ok: false, why, error: this.redact(detail) });
        this.dropped(live, detail);
      }
    })().finally(() => {
      this.probing = undefined;
    });
    return this.probing;
  }

  /**
   * Closes a client and makes sure its server's process tree is gone. `graceful` runs the transport's close sequence
   * (stdin closed, then signals to the process group) and, if that has not ended it within the grace period, signals
   * every recorded process, since a wrapper's child may have left the group.
   */
  private async dispose(live: LiveConnection, options: { graceful: boolean; terminateSession?: boolean }): Promise<void> {
    live.closing = true;
    const { client, transport, agent } = live;
    const pid = pidOf(transport);
    const processes = pid ? mergeProcesses(live.processes, processTree(pid)) : live.processes;
    if (options.terminateSession && transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
      await settleWithin(transport.terminateSession(), SESSION_TERMINATE_TIMEOUT_MS);
    }
    if (!options.graceful) {
      (transport as Partial<ProcessGroupStdioTransport>).killNow?.();
      await terminateProcesses(processes);
    }
    const closing = client.close().then(() => transport.close());
    if (!(await settleWithin(closing, STDIO_CLOSE_GRACE_MS * 2 + 500))) await terminateProcesses(processes);
    await closing.catch(() => undefined);
    await agent?.destroy().catch(() => undefined);
    await terminateProcesses(processes);
    if (pid !== undefined && options.graceful) this.emit("mcp.local.shutdown", { pid, graceful: true });
  }

  /**
   * Calls a tool by its MCP name. Waits for a lazy start or a reconnect under way (within the call's timeout); a
   * connection lost during the call is retried once after the reconnect.
   */
  async callTool(toolName: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<CallToolResult> {
    const started = Date.now();
    try {
      const result = await this.callWithRecovery(toolName, args, options);
      // A result the tool marks as an error counts against the success rate, though the server itself is fine.
      this.health.call(result.isError !== true);
      this.log("info", "request", { method: "tools/call", tool: toolName, durationMs: Date.now() - started, ok: true, isError: result.isError === true });
      return result;
    } catch (error) {
      this.health.call(false);
      const kind = error instanceof BridgeError ? error.kind : "other";
      this.log("warn", "request", { method: "tools/call", tool: toolName, durationMs: Date.now() - started, ok: false, kind, error: (error as Error).message });
      throw error;
    }
  }

  private async callWithRecovery(toolName: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    let live = await this.ready(toolName, options);
    try {
      return await this.callOn(live, toolName, args, options);
    } catch (error) {
      if (this.oauth && isUnauthorized(error) && !options.signal?.aborted) {
        // The tokens stopped working and refreshing them did not help: sign in again (if someone can), then retry.
        await this.oauth.completeSignIn((channel, payload) => this.emit(channel, payload), options.signal);
        return await this.callOn(this.live ?? (await this.ready(toolName, options)), toolName, args, options);
      }
      const kind = this.failureKind(live, error, options);
      if (kind !== "transport") throw this.callError(kind, toolName, error);
      const cause = this.lostDetail(describeError(error));
      this.dropped(live, cause);
      try {
        live = await this.ready(toolName, options);
      } catch (reconnectError) {
        throw new BridgeError(
          "transport",
          this.name,
          this.redact(
            `MCP server '${this.name}' lost its connection during '${toolName}' (${cause}) and reconnecting failed: ${
              errorMessage(reconnectError)
            }`,
          ),
          { cause: reconnectError },
        );
      }
      try {
        return await this.callOn(live, toolName, args, options);
      } catch (retryError) {
        const retryKind = this.failureKind(live, retryError, options);
        if (retryKind !== "transport") throw this.callError(retryKind, toolName, retryError);
        this.dropped(live, this.lostDetail(describeError(retryError)));
        throw new BridgeError(
          "transport",
          this.name,
          this.redact(
            `MCP server '${this.name}' lost its connection during '${toolName}' again after reconnecting (${this.lostDetail(
              describeError(retryError),
            )}); not retrying.${this.stderrForMessage()}`,
          ),
          { cause: retryError },
        );
      }
    }
  }

  /**
   * The live connection a call can use: starts a server nothing has started, waits for a reconnect under way (bounded
   * by the call's own timeout and signal), and fails at once for a server that gave up.
   */
  private async ready(toolName: string, options: CallOptions): Promise<LiveConnection> {
    if (this.closed) throw new BridgeError("other", this.name, `MCP server '${this.name}' is shut down`);
    if (this.live) return this.live;
    if (!this.config.enabled) throw new BridgeError("config", this.name, `MCP server '${this.name}' is disabled in ${describeSource(this.config.enabledSource ?? this.config.source)}`);
    if (!this.starting) {
      await this.connect();
      return this.requireLive();
    }
    if (this.schedule.running && this.everConnected) {
      await this.waitForRecovery(toolName, options);
      return this.requireLive();
    }
    if (!this.schedule.running) await this.starting.catch(() => undefined);
    // A server that waited for a sign-in nobody could do (at startup, say) signs in now if someone can.
    if (this.needsSignIn && !this.schedule.running && this.options.signIn?.()) {
      await this.reconnect();
    }
    return this.requireLive();
  }

  private requireLive(): LiveConnection {
    if (this.live) return this.live;
    const state = this.health.state;
    if (state.gaveUp && state.status === "disconnected") {
      throw new BridgeError("transport", this.name, this.redact(gaveUpMessage(this.name, state.retryAttempt, state.lastError, this.local)));
    }
    const retrying = this.schedule.running ? ` (retrying in the background: attempt ${state.retryAttempt}/${state.maxAttempts})` : "";
    throw new BridgeError("transport", this.name, this.redact(`${state.lastError ?? `MCP server '${this.name}' is not connected`}${retrying}`));
  }

  private async waitForRecovery(toolName: string, options: CallOptions): Promise<void> {
    const recovering = this.schedule.running;
    if (!recovering) return;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const limit = this.config.requestTimeout;
    try {
      await Promise.race([
        recovering,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new BridgeError(
                  "timeout",
                  this.name,
                  this.redact(
                    `MCP server '${this.name}' is still reconnecting after ${seconds(limit)} (attempt ${this.health.state.retryAttempt}/${this.health.state.maxAttempts}; last error: ${this.health.state.lastError ?? "none"}); '${toolName}' was not run`,
                  ),
                ),
              ),
            limit,
          );
        }),
        new Promise<never>((_, reject) => {
          const signal = options.signal;
          if (!signal) return;
          onAbort = () => reject(new BridgeError("cancelled", this.name, `Call to '${toolName}' on MCP server '${this.name}' was cancelled`));
          if (signal.aborted) onAbort();
          else signal.addEventListener("abort", onAbort, { once: true });
        }),
      ]);
    } finally {
      clearTimeout(timer);
      if (onAbort) options.signal?.removeEventListener("abort", onAbort);
    }
  }

  private async callOn(live: LiveConnection, toolName: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    const result = await live.client.callTool({ name: toolName, arguments: args }, CallToolResultSchema, {
      signal: options.signal,
      timeout: this.config.requestTimeout,
      resetTimeoutOnProgress: true,
      onprogress: (progress) => {
        this.health.heard(Date.now());
        options.onProgress?.(progress);
      },
    });
    this.health.heard(Date.now());
    return result as CallToolResult;
  }

  private failureKind(live: LiveConnection, error: unknown, options: CallOptions): FailureKind {
    if (options.signal?.aborted) return "cancelled";
    if (isTimeoutError(error)) return "timeout";
    // Streamable HTTP: a 404 for a request that carried a session id means the server forgot the session (it
    // restarted); the spec has the client start a new one.
    if (httpStatusOf(error) === 404 && live.transport instanceof StreamableHTTPClientTransport && live.transport.sessionId) return "transport";
    return classifyError(error);
  }

  private callError(kind: Exclude<FailureKind, "transport">, toolName: string, error: unknown): BridgeError {
    return callError(this.errorContext(), kind, toolName, error);
  }

  private lostDetail(cause: string): string {
    return this.exitDescription ? `the server process ${this.exitDescription}` : cause;
  }

  /**
   * Starts afresh now (`/mcp reconnect`, a reload of the server): ends the connection and any retry schedule, then
   * connects again. A server that gave up gets a new set of attempts.
   */
  async reconnect(): Promise<void> {
    if (this.closed) throw new BridgeError("other", this.name, `MCP server '${this.name}' is shut down`);
    await this.endOnPurpose("reconnect requested");
    this.starting = undefined;
    await this.connect();
  }

  private async disposeCurrent(options: { graceful: boolean; terminateSession?: boolean }): Promise<void> {
    const live = this.live;
    this.live = undefined;
    if (live) await this.dispose(live, options);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.schedule.close();
    this.stopHealthChecks();
    // A connect still under way is abandoned: its attempt fails and cleans up after itself as well.
    const connecting = this.connecting;
    this.connecting = undefined;
    const wasLive = this.live !== undefined;
    await Promise.all([
      connecting ? this.dispose(connecting, { graceful: false }) : undefined,
      this.disposeCurrent({ graceful: true, terminateSession: true }),
    ]);
    if (wasLive) this.emit("mcp.disconnected", { reason: "shutdown", wasClean: true });
    this.health.closed(Date.now());
    this.log("info", "closed");
  }

  /** Synchronous last resort when pi exits without a shutdown event. */
  killNow(): void {
    for (const c of [this.live, this.connecting]) {
      if (!c) continue;
      (c.transport as Partial<ProcessGroupStdioTransport>).killNow?.();
      const pid = pidOf(c.transport);
      killProcessesNow(pid ? mergeProcesses(c.processes, processTree(pid)) : c.processes);
    }
  }

  redact(text: string): string {
    return redact(text, this.secrets);
  }

  private stderrForMessage(): string {
    const tail = this.stderrTail(STDERR_TAIL_IN_ERRORS).filter((line) => line.trim() !== "");
    return tail.length ? `\nLast stderr lines:\n${tail.map((l) => `  ${l}`).join("\n")}` : "";
  }

  private errorContext() {
    return {
      config: this.config,
      redact: (text: string) => this.redact(text),
      stderr: () => this.stderrForMessage(),
      exitDescription: this.exitDescription,
      nonJsonLines: this.nonJsonLines,
      oauth: this.oauth !== undefined,
    };
  }

  private connectError(error: unknown): BridgeError {
    return connectError(this.errorContext(), error);
  }

}
