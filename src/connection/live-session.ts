/**
 * One live connection to an MCP server, from opening it to letting go of it: the SDK `Client`, its transport, a remote
 * server's own HTTP connection pool, a local server's process tree and the last lines of its stderr.
 *
 * It opens (spawn or connect, the MCP handshake, the tool list, all within a deadline), answers requests and closes.
 * It decides nothing about retrying: what happens to it (the server went away, a stream broke, the tool list changed,
 * a log line) goes through its events to whoever keeps the server connected (./server-connection.ts). Everything it
 * holds is released in one place (./held-transport.ts), a failed open's too, so no process or socket outlives it.
 */
import {
  type Client,
  type FetchLike,
  type LoggingMessageNotification,
  type Progress,
  type RequestOptions as SdkRequestOptions,
  type ServerCapabilities,
  StreamableHTTPClientTransport,
  type Tool,
  type Transport,
} from "@modelcontextprotocol/client";
import { readPages } from "../common/paged-list.ts";
import { ConnectTimeout, type ErrorKind, neverConnected } from "../common/errors.ts";
import { httpStatusOf, kindOf, mayBeLegacySse, sessionUnknown } from "../common/error-kinds.ts";
import type { ProtocolSetting } from "../config/protocol-setting.ts";
import type { ServerLimits, TransportKind } from "../config/types.ts";
import type { ResolvedEndpoint, ResolvedRemote, ResolvedStdio } from "../config/substitute.ts";
import type { TransportAuth } from "../oauth/server-auth.ts";
import { type Delivery, deliveryMarker, markDeliveries } from "./delivery.ts";
import { accepting, type CloseOptions, type Held, killHeldNow, pidOf, releaseHeld } from "./held-transport.ts";
import { awaitingAnswers, failOnStreamEnd, ServerPool } from "./http/http-pool.ts";
import { inRequestScope, requestScopeEnded } from "./http/request-scope.ts";
import {
  type ClientFeatures,
  type ClientInfo,
  createMcpClient,
  newestRevisionEnvelope,
  type ServerList,
} from "./mcp-client.ts";
import { orphanWatchdog } from "./local/orphan-watchdog.ts";
import { npxInstall, npxInstalling, processExists, processTree } from "./local/process-tree.ts";
import { npxLaunch } from "./local/npx-failure.ts";
import type { ProcessEnding, ProcessGroupStdioTransport } from "./local/stdio-transport.ts";
import { MessageTooLargeError } from "./message-limit.ts";
import { guardNesting } from "./local/nesting-guard.ts";
import { repairToolLists } from "./tool-list-repair.ts";
import { invalidTokenAs401 } from "./fresh-headers.ts";
import { boundNotifications, type FloodKind } from "./notification-bound.ts";
import { negotiationFor } from "./protocol-negotiation.ts";
import { type ConnectClock, INSTALL_LIMIT_MS, type OpenTime, untilDeadline } from "./connect-deadline.ts";
import { untilServerAnswers } from "./local/server-started.ts";
import { type RequestTarget, traceRequests } from "../telemetry/request-spans.ts";
import { HubTransport, type HubTransportOptions } from "./hub/hub-transport.ts";
import { ProcessReport } from "./local/process-report.ts";
import { createRemoteTransport, createStdioTransport } from "./transports.ts";
import type { StdioSandbox } from "../sandbox/server-sandbox.ts";

/** What a session reports to its owner. Called synchronously; none of them may throw. */
export interface SessionEvents {
  /** The connection ended without the owner asking (the process exited, the stream closed): `reason` says how. */
  dropped(session: LiveSession, reason: string): void;
  /** A remote stream reported an error: the connection may or may not still work. */
  streamError(session: LiveSession, error: Error): void;
  /** The server says one of its lists (tools, resources) changed. */
  listChanged(session: LiveSession, list: ServerList): void;
  /** A resource the client subscribed to changed. */
  resourceUpdated(session: LiveSession, uri: string): void;
  /** The server answered or sent something: it is alive now. */
  heard(): void;
  /** A line the local server wrote to stderr (not redacted). */
  stderrLine(line: string): void;
  /** A log record the server sent (`notifications/message`). */
  logMessage(params: LoggingMessageNotification["params"]): void;
  /** A log or progress notification left out of a flood (./notification-bound.ts); `first` for its first. */
  notificationDropped(kind: FloodKind, first: boolean): void;
}

export interface LiveSessionOptions {
  endpoint: ResolvedEndpoint;
  clientInfo: ClientInfo;
  features: ClientFeatures;
  /** OAuth for a remote server, when it uses it. */
  auth?: TransportAuth;
  events: SessionEvents;
  /** What the server may send; the defaults without it. */
  limits?: ServerLimits;
  /** Which revision to speak (`"auto"` when absent). */
  protocol?: ProtocolSetting;
  /** The revision the server spoke last time (`"legacy"`: one of the handshake's), for `"auto"` to start from. */
  remembered?: string;
  /** A local server's sandbox, when it runs in one (../sandbox/sandbox-runtime.mjs). */
  sandbox?: StdioSandbox;
  /** A local server shared with other pi sessions (`"shared"`): it runs under the hub, reached through it. */
  hub?: Pick<HubTransportOptions, "dir" | "idleMs">;
  /** The server's secrets, hidden in what telemetry records of its calls. */
  redactor?: RequestTarget["redactor"];
}

export interface RequestOptions {
  timeout: number;
  signal?: AbortSignal;
  onProgress?: OnProgress;
}

/** Where a request's progress goes: the server's, or a line saying why the request waits for its server to be up. */
export type OnProgress = (progress: Progress | string) => void;

/**
 * How far an open got: a local server `starting` (spawned, nothing answered yet), the `handshake` (the revision probe
 * and `initialize`, or `server/discover`), the tool list (`tools`), `open`. A connect that runs out of time says where.
 */
export type OpenStage = "starting" | "installing" | "handshake" | "tools" | "open";

/** Sends one request on the session's client with the options it is given (see `LiveSession.request`). */
export type Run<T> = (client: Client, options: SdkRequestOptions) => Promise<T>;

const MAX_TOOL_PAGES = 100;
// The session's own timer enforces an open's deadline; the SDK's request timeout, a little later, only backs it up:
// fired first, it would send a cancellation to a server that is not answering (over HTTP: one more idle socket).
const SDK_TIMEOUT_SLACK_MS = 1000;

export class LiveSession {
  /** The server's tools as listed when the session opened. */
  tools: Tool[] = [];
  /** True when Streamable HTTP was refused and legacy SSE answered instead. */
  fellBackToSse = false;
  /** What a local server's process said (its stderr) and how it ended. */
  readonly process = new ProcessReport();
  /** How far the newest open got (see {@link OpenStage}). */
  stage?: OpenStage;
  /** The newest open's clock: its deadline moves on when an npx install holds it (./connect-deadline.ts). */
  clock?: ConnectClock;
  /** Why the bridge stopped the server itself, when it did: it sent something over a limit. */
  violation?: string;
  /** What a remote server said when it last refused the credentials (not yet redacted), if it said anything. */
  refusedSaying?: string;
  /** What the server said at initialize about how to use it (`instructions`), as it came: not yet made safe. */
  instructions?: string;
  /** The revision the session speaks, once open: `2026-07-28`, `2025-11-25`, … */
  protocolVersion?: string;
  private held?: Held;
  private closed = false;

  constructor(private readonly options: LiveSessionOptions) {}

  /** The transport in use (or being tried). */
  get kind(): TransportKind | undefined {
    return this.held?.kind;
  }

  /** Its owner closed it (an open under way then fails, and nothing is to be opened in its place). */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Opened, and neither dropped nor closed since. */
  get isOpen(): boolean {
    return this.held?.open === true;
  }

  /** A request awaits its answer (the SDK's table of them): a server busy with it may not answer a ping meanwhile. */
  get awaiting(): boolean {
    return this.held !== undefined && awaitingAnswers(this.held.client).size > 0;
  }

  /** A local server's pid, once spawned. */
  get pid(): number | undefined {
    return this.held && pidOf(this.held.transport);
  }

  /** Whether npm is installing the package for npx while this session opens (Linux; ./connect-deadline.ts). */
  get installing(): boolean {
    return this.stage === "installing" || (!this.isOpen && npxInstalling(this.pid ?? this.hub?.shared.pid));
  }

  /** How a stopped local server's process ended (unset: by itself); later where a quitting pi left it to the watchdog. */
  async ended(): Promise<ProcessEnding | undefined> {
    const transport = this.held?.transport as Partial<ProcessGroupStdioTransport> | undefined;
    return transport?.handedOver?.then(() => transport.ending) ?? transport?.ending;
  }

  /** A local server's stdout lines: all, and those that are not JSON-RPC (it should log to stderr); none for a remote one. */
  get stdoutLines(): { read: number; nonJson: number } | undefined {
    if (this.held?.kind !== "stdio") return undefined;
    const transport = this.held.transport as ProcessGroupStdioTransport;
    return { read: transport.linesRead, nonJson: transport.nonJsonLines };
  }

  /** Why the session ended, when the server's side says: it sent something over a limit, or its process ended. */
  get endReason(): string | undefined {
    const ended = this.process.exitDescription;
    return this.violation ?? (ended ? `the server process ${ended}` : undefined);
  }

  /**
   * Connects (a local server: spawns it), completes the MCP handshake and lists the tools, all before `deadline`
   * (epoch ms; `span`, by default what is left of it, is the server's time once an npx install that held it is over).
   * A Streamable HTTP server that refuses with a 4xx is tried again as legacy HTTP+SSE. On failure everything is
   * released and the error thrown as it came (`ConnectTimeout` for the deadline).
   */
  async open(deadline: number, span = deadline - Date.now()): Promise<void> {
    const { endpoint } = this.options;
    if (endpoint.kind === "stdio")
      return this.attempt("stdio", () => this.localTransport(endpoint, deadline), { deadline, span });
    const authProvider = this.options.auth?.provider;
    const remote = (kind: "http" | "sse") =>
      this.attempt(kind, (fetch) => createRemoteTransport(kind, endpoint, fetch, authProvider), { deadline, span });
    if (endpoint.kind === "sse") return remote("sse");
    try {
      await remote("http");
    } catch (error) {
      const status = httpStatusOf(error);
      if (this.closed || !mayBeLegacySse(status)) throw error;
      // The legacy attempt's failure says more, unless the POST's answer was no legacy one (404, 405), or the address
      // serves neither (a 404 or 405 to the GET too: the POST's answer has the server's words).
      const legacy = (sse: unknown) => (status === 404 || status === 405) && ![404, 405].includes(httpStatusOf(sse)!);
      await remote("sse").catch((sse: unknown) => Promise.reject(legacy(sse) ? sse : error));
      this.fellBackToSse = true;
    }
  }

  private async attempt(kind: TransportKind, make: (fetch?: FetchLike) => Transport, time: OpenTime): Promise<void> {
    if (this.closed) throw new Error("the session was closed");
    const { clientInfo, features, auth, events, protocol = "auto", remembered, redactor } = this.options;
    const clock: ConnectClock = (this.clock = { ...time });
    const remaining = () => Math.max(1, clock.deadline - Date.now());
    const sdkTimeout = () => remaining() + SDK_TIMEOUT_SLACK_MS;
    // A message over the limit outside any request (the handshake, a standing stream) ends the session, as a long
    // line ends a local server: before it is open, the open fails with it; after, it is reported as a drop.
    let cutOpen!: (error: Error) => void;
    const cut = new Promise<never>((_, reject) => (cutOpen = reject));
    const tooLarge = (error: MessageTooLargeError) => {
      if (held.releasing) return;
      this.violation = error.message;
      if (!held.open) return cutOpen(error);
      held.open = false;
      events.dropped(this, error.message);
    };
    const pool =
      kind === "stdio"
        ? undefined
        : new ServerPool({
            maxMessageBytes: this.options.limits?.maxMessageBytes,
            tooLarge,
            middleware: auth ? auth.middleware : invalidTokenAs401,
            refused: (words) => (this.refusedSaying = words),
            url: (this.options.endpoint as Partial<ResolvedRemote>).url,
          });
    const made = pool ? failOnStreamEnd(make(pool.fetch), () => held, cutOpen) : make();
    const transport = traceRequests(
      boundNotifications(repairToolLists(guardNesting(made)), {
        dropped: (kind, first) => events.notificationDropped(kind, first),
        received: events.heard,
      }),
      { url: (this.options.endpoint as Partial<ResolvedRemote>).url, redactor },
      () => this.protocolVersion,
    );
    markDeliveries(transport, () => held.open && accepting(transport));
    const negotiation = negotiationFor(protocol, remembered, kind === "stdio", remaining());
    const early = new Set<ServerList>();
    const client = createMcpClient(
      clientInfo,
      features,
      {
        // A change said before the session opens (during its first list) is served once it has.
        listChanged: (list) => (held.open ? events.listChanged(this, list) : early.add(list)),
        resourceUpdated: (uri) => events.resourceUpdated(this, uri),
        logMessage: (params) => events.logMessage(params),
      },
      negotiation,
    );
    const held: Held = { client, transport, kind, pool, processes: [], watched: [], open: false, releasing: false };
    this.held = held;
    this.violation = undefined;
    // npx downloading its package holds the clock (./connect-deadline.ts), a shared server's under the hub as well.
    if (kind === "stdio") {
      let before: OpenStage | undefined;
      clock.install = () => npxInstall(pidOf(transport) ?? this.hub?.shared.pid);
      clock.onHold = (holding) => {
        if (holding) before = this.stage;
        this.stage = holding ? "installing" : before;
      };
    }
    client.onerror = (error) => {
      // The transport stops a server that sends a line over the limit; that, not its exit, is why the session ended.
      // (A remote server's pool reports its own; the SDK's report of a stream cut for that is not passed on below.)
      if (error instanceof MessageTooLargeError) {
        this.violation = error.message;
        return;
      }
      // A response stream the bridge ended because its request was over (timed out, cancelled, answered).
      if (requestScopeEnded()) return;
      // Unparsable stdout lines: the transport counts them (see `stdoutLines`) and carries on.
      if (error instanceof SyntaxError || /JSON|parse/i.test(error.message)) return;
      if (kind !== "stdio" && held.open) events.streamError(this, error);
    };
    const handshake = async () => {
      if (negotiation.awaitStart) {
        this.stage = "starting";
        await untilServerAnswers(transport, newestRevisionEnvelope(clientInfo, features));
      }
      this.stage = "handshake";
      await client.connect(transport, {
        // An install may hold the session's own clock (./connect-deadline.ts); the SDK's must not end it first.
        timeout: sdkTimeout() + (clock.install ? INSTALL_LIMIT_MS : 0),
        ...(negotiation.prior ? { prior: negotiation.prior } : {}),
      });
      this.protocolVersion = client.getNegotiatedProtocolVersion();
      const pid = pidOf(transport);
      if (pid) {
        held.processes = processTree(pid);
        // The transport handed the group to the watchdog; these are the processes under it now, for any that left it.
        for (const p of held.processes)
          if (p.pid !== pid) held.watched.push(orphanWatchdog.watch("process", p.pid, p.start));
      }
      this.instructions = client.getInstructions();
      this.stage = "tools";
      this.tools = await this.fetchTools(client, sdkTimeout);
    };
    try {
      await untilDeadline(Promise.race([handshake(), cut]), clock, () => new ConnectTimeout());
      // Closed while the handshake was under way: what it opened must not be kept.
      if (this.closed) throw new Error("the session was closed while it opened");
    } catch (error) {
      await releaseHeld(held, { graceful: false });
      throw error;
    }
    held.open = true;
    this.stage = "open";
    for (const list of early) events.listChanged(this, list);
    client.onclose = () => {
      if (held.releasing || !held.open) return;
      held.open = false;
      events.dropped(this, this.endReason ?? "the connection closed");
    };
  }

  private localTransport(endpoint: ResolvedStdio, deadline: number): Transport {
    const { events, hub, limits, sandbox, protocol } = this.options;
    const launch = npxLaunch(endpoint.command, endpoint.args);
    const npx = launch && { ...launch, env: endpoint.env, cwd: endpoint.cwd, args: endpoint.args };
    const hooks = this.process.started(events.stderrLine, (error) => (this.violation = error.message), npx);
    const maxMessageBytes = limits?.maxMessageBytes;
    if (hub) return new HubTransport({ ...hub, endpoint, hooks, deadline, maxMessageBytes, sandbox, protocol });
    return createStdioTransport(endpoint, hooks, limits?.maxMessageBytes, sandbox);
  }

  /** A shared server's connection to the hub (its pid, how many sessions use it, a restart for all); else undefined. */
  get hub(): HubTransport | undefined {
    const transport = this.held?.transport;
    return transport instanceof HubTransport ? transport : undefined;
  }

  private async fetchTools(client: Client, timeout: () => number, signal?: AbortSignal): Promise<Tool[]> {
    if (!client.getServerCapabilities()?.tools) return [];
    const listed = await readPages({ maxPages: MAX_TOOL_PAGES }, async (cursor) => {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: timeout(), signal });
      return { items: page.tools, nextCursor: page.nextCursor };
    });
    return listed.items;
  }

  private get client(): Client {
    if (!this.held?.open) throw new Error("Not connected");
    return this.held.client;
  }

  /** The server's whole tool list now (every page). */
  listTools(timeout: number): Promise<Tool[]> {
    const client = this.client;
    return inRequestScope(this.held?.pool, (cut) => this.fetchTools(client, () => timeout, cut));
  }

  /** What the server said it offers in the handshake (tools, resources, …); undefined before it opened. */
  get capabilities(): ServerCapabilities | undefined {
    return this.held?.client.getServerCapabilities();
  }

  /**
   * One request to the server, whatever it is (call a tool, read a resource, …): `run` sends it with the options given
   * to it — the caller's timeout (reset by progress) and signal, and for a remote server the request's own scope, whose
   * response stream is closed once the request is over (answered, timed out or cancelled). `delivery` is marked
   * once the request was handed to the open transport: from then on the server may have it.
   */
  request<T>(run: Run<T>, options: RequestOptions, delivery?: Delivery): Promise<T> {
    const held = this.held;
    // A session no longer open fails the request as a rejection, as the caller's recovery expects of any failure.
    if (!held?.open) return Promise.reject(new Error("Not connected"));
    const { pool, client } = held;
    const marker = delivery && deliveryMarker(delivery);
    return pool
      ? inRequestScope(pool, (cut) => run(client, sdkOptions(options, marker, cut)), options.signal)
      : run(client, sdkOptions(options, marker));
  }

  /** Tells the server the client's roots changed (`notifications/roots/list_changed`); it asks for them again. */
  async rootsChanged(): Promise<void> {
    await this.client.sendRootsListChanged();
  }

  async ping(timeout: number): Promise<void> {
    const client = this.client;
    await inRequestScope(this.held?.pool, (cut) => client.ping({ timeout, signal: cut }));
  }

  /** False once a local server's process is gone; a remote session has no process to look at. */
  processAlive(): boolean {
    const pid = this.pid;
    return pid === undefined || processExists(pid);
  }

  /** What a failed request means for this connection: `kindOf`, plus what only the session can tell. */
  classify(error: unknown): ErrorKind {
    return this.forgotSession(error) ? "transport" : kindOf(error);
  }

  /** Streamable HTTP: a 404 (or 400 naming it) to a request with a session id: the server forgot it; so start anew. */
  private forgotSession(error: unknown): boolean {
    const transport = this.held?.transport;
    return sessionUnknown(error) && transport instanceof StreamableHTTPClientTransport && !!transport.sessionId;
  }

  /** A request that failed with `error` was not handled: no connection was made, the session forgotten, or a 503. */
  notTaken(error: unknown): boolean {
    return neverConnected(error) || this.forgotSession(error) || httpStatusOf(error) === 503;
  }

  /** Ends the session (an open under way fails) and releases everything it holds. Safe to call more than once. */
  async close(options: CloseOptions): Promise<void> {
    this.closed = true;
    if (this.held) await releaseHeld(this.held, options);
  }

  /** Synchronous last resort when pi exits without a shutdown: SIGKILL to a local server's group and tree. */
  killNow(): void {
    if (this.held) killHeldNow(this.held);
  }
}

/** The SDK's options for one request (the server is heard on each message: see `received`, ./notification-bound.ts). */
function sdkOptions(request: RequestOptions, marker?: (token: string) => void, cut?: AbortSignal): SdkRequestOptions {
  const { signal, timeout, onProgress } = request;
  // A remote request's `cut` also follows the caller's signal (`inRequestScope`); `marker` is how the transport tells
  // that the request reached it (./delivery.ts); progress, which the SDK asks for only with a listener, keeps a long
  // request alive.
  const onprogress = onProgress ?? ignoreProgress;
  return { signal: cut ?? signal, timeout, onresumptiontoken: marker, resetTimeoutOnProgress: true, onprogress };
}

const ignoreProgress = () => undefined;
