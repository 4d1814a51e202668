/**
 * One MCP server: its client and transport, bounded connect with full clean-up, tool calls with one shared
 * reconnect-and-retry on transport errors, and shutdown that leaves no process behind.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { Agent, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from "undici";
import { CallToolResultSchema, type CallToolResult, type Progress, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ServerConfig } from "./config.ts";
import { describeSource } from "./config.ts";
import { BridgeError, classifyError, describeError, httpStatusOf, isTimeoutError } from "./errors.ts";
import {
  type ProcessInfo,
  killProcessesNow,
  mergeProcesses,
  processTree,
  terminateProcesses,
} from "./process-tree.ts";
import { type Environment, type ResolvedEndpoint, type ResolvedRemote, displayUrl, redact, resolveServerConfig } from "./substitute.ts";
import { createSseTransport, createStdioTransport, createStreamableHttpTransport } from "./transports.ts";

export type ServerStatus = "disabled" | "idle" | "connecting" | "connected" | "disconnected" | "failed" | "closed";
export type ActiveTransport = "stdio" | "http" | "sse";

export interface ConnectionOptions {
  projectRoot: string;
  env: Environment;
  clientInfo: { name: string; version: string };
}

export interface CallOptions {
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
}

const STDERR_TAIL_LINES = 40;
const STDERR_TAIL_IN_ERRORS = 12;
const MAX_TOOL_PAGES = 100;
const SESSION_TERMINATE_TIMEOUT_MS = 1000;
/** As long as the SDK waits for a stdio server to exit after closing its stdin. */
const STDIO_CLOSE_GRACE_MS = 2000;
const SDK_TIMEOUT_SLACK_MS = 1000;

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
  /** A remote server's own connection pool, so closing it closes its sockets at once. */
  agent?: Agent;
}

/** `fetch` through a given pool, in the shape the SDK transports take. */
function fetchVia(agent: Agent): FetchLike {
  return (url, init) => undiciFetch(url, { ...(init as UndiciRequestInit), dispatcher: agent }) as unknown as Promise<Response>;
}

/** The connect deadline passed; `connectError` words the message. */
class ConnectTimeout extends Error {
  constructor() {
    super("connect timed out");
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

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

export class ServerConnection {
  status: ServerStatus;
  transport?: ActiveTransport;
  /** True when Streamable HTTP was refused and legacy SSE answered instead. */
  fellBackToSse = false;
  tools: Tool[] = [];
  lastError?: string;
  warnings: string[] = [];

  /** The open connection, if any. */
  private live?: LiveConnection;
  /** A connection still being set up, so shutdown can end it too. */
  private connecting?: LiveConnection;
  private secrets: string[] = [];
  private generation = 0;
  private reconnecting?: Promise<void>;
  private readonly stderr = new LineTail(STDERR_TAIL_LINES);
  private exitDescription?: string;
  private nonJsonLines = 0;
  private processes: ProcessInfo[] = [];
  private closed = false;

  constructor(
    readonly config: ServerConfig,
    private readonly options: ConnectionOptions,
  ) {
    this.status = config.enabled ? "idle" : "disabled";
  }

  get name(): string {
    return this.config.name;
  }

  stderrTail(n = STDERR_TAIL_LINES): string[] {
    return this.stderr.tail(n).map((line) => this.redact(line));
  }

  /** Connects, runs the MCP handshake and lists tools within the server's `timeout`. Cleans up fully on failure. */
  async connect(): Promise<void> {
    if (this.closed) throw new BridgeError("other", this.name, `MCP server '${this.name}' is shut down`);
    this.status = "connecting";
    try {
      const resolution = resolveServerConfig(this.config, this.options.env, this.options.projectRoot);
      this.secrets = resolution.secrets;
      this.warnings = resolution.warnings;
      if (!resolution.endpoint) {
        throw new BridgeError("config", this.name, `${resolution.errors.join("; ")} (${describeSource(this.config.source)})`);
      }
      const deadline = Date.now() + this.config.timeout;
      await this.connectEndpoint(resolution.endpoint, deadline);
      if (this.closed) {
        // Shut down while this attempt was under way: do not keep what it opened.
        await this.disposeCurrent({ graceful: false });
        throw new BridgeError("other", this.name, `MCP server '${this.name}' was shut down while connecting`);
      }
      this.generation++;
      this.status = "connected";
      this.lastError = undefined;
    } catch (error) {
      const wrapped = error instanceof BridgeError ? error : this.connectError(error);
      this.status = "failed";
      this.lastError = wrapped.message;
      throw wrapped;
    }
  }

  private async connectEndpoint(endpoint: ResolvedEndpoint, deadline: number): Promise<void> {
    if (endpoint.kind === "stdio") {
      await this.attempt("stdio", () => this.stdioTransport(endpoint), deadline);
      return;
    }
    if (endpoint.kind === "sse") {
      await this.attempt("sse", (fetch) => createSseTransport(endpoint, fetch), deadline);
      return;
    }
    try {
      await this.attempt("http", (fetch) => createStreamableHttpTransport(endpoint, fetch), deadline);
      this.fellBackToSse = false;
    } catch (error) {
      // A server that only speaks the 2024-11-05 HTTP+SSE transport answers the Streamable HTTP POST with 404 or 405.
      const status = httpStatusOf(error);
      if (status !== 404 && status !== 405) throw error;
      await this.attempt("sse", (fetch) => createSseTransport(endpoint as ResolvedRemote, fetch), deadline);
      this.fellBackToSse = true;
    }
  }

  private stdioTransport(endpoint: Extract<ResolvedEndpoint, { kind: "stdio" }>): StdioClientTransport {
    this.exitDescription = undefined;
    return createStdioTransport(endpoint, {
      onStderrLine: (line) => this.stderr.push(line),
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
    const transport = makeTransport(agent && fetchVia(agent));
    const client = new Client(this.options.clientInfo, { capabilities: {} });
    const live: LiveConnection = { client, transport, agent };
    this.connecting = live;
    this.nonJsonLines = 0;
    client.onerror = (error) => {
      // The SDK reports unparsable stdout lines here and carries on; count them for a better error message.
      if (error instanceof SyntaxError || /JSON|parse/i.test(error.message)) this.nonJsonLines++;
    };
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ConnectTimeout()), remaining());
    });
    try {
      await Promise.race([
        (async () => {
          await client.connect(transport, { timeout: sdkTimeout() });
          if (kind === "stdio") this.rememberProcesses(transport as StdioClientTransport);
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
    client.onclose = () => {
      if (this.live !== live) return;
      this.live = undefined;
      if (this.status === "connected") {
        this.status = "disconnected";
        this.lastError = this.exitDescription ? `the server process ${this.exitDescription}` : "the connection closed";
      }
      // A wrapper that exited may have left its real server running.
      const leftovers = this.processes;
      void terminateProcesses(leftovers);
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
    return tools;
  }

  private rememberProcesses(transport: StdioClientTransport): void {
    const pid = transport.pid;
    if (pid) this.processes = mergeProcesses(this.processes, processTree(pid));
  }

  /**
   * Closes a client and makes sure its server's process tree is gone. `graceful` runs the SDK's close sequence (stdin
   * closed, then signals) and, if the server has not ended within the same grace period the SDK gives it, signals the
   * whole tree at once, since a wrapper like npx would otherwise outlive the SIGTERM sent to it alone.
   */
  private async dispose(live: LiveConnection, options: { graceful: boolean; terminateSession?: boolean }): Promise<void> {
    const { client, transport, agent } = live;
    const pid = (transport as Partial<StdioClientTransport>).pid ?? undefined;
    const processes = pid ? mergeProcesses(this.processes, processTree(pid)) : this.processes;
    this.processes = [];
    if (options.terminateSession && transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
      await settleWithin(transport.terminateSession(), SESSION_TERMINATE_TIMEOUT_MS);
    }
    if (!options.graceful) await terminateProcesses(processes);
    const closing = client.close().then(() => transport.close());
    if (!(await settleWithin(closing, STDIO_CLOSE_GRACE_MS))) await terminateProcesses(processes);
    await closing.catch(() => undefined);
    await agent?.destroy().catch(() => undefined);
    await terminateProcesses(processes);
  }

  /** Calls a tool by its MCP name. A transport failure triggers one reconnect (shared with concurrent calls) and one retry. */
  async callTool(toolName: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<CallToolResult> {
    const generation = this.generation;
    try {
      return await this.callOnce(toolName, args, options);
    } catch (error) {
      const kind = this.failureKind(error, options);
      if (kind !== "transport") throw this.callError(kind, toolName, error);
      const cause = describeError(error);
      try {
        await this.reconnectAfter(generation);
      } catch (reconnectError) {
        throw new BridgeError(
          "transport",
          this.name,
          this.redact(
            `MCP server '${this.name}' lost its connection during '${toolName}' (${this.lostDetail(cause)}) and reconnecting failed: ${
              reconnectError instanceof Error ? reconnectError.message : String(reconnectError)
            }`,
          ),
          { cause: reconnectError },
        );
      }
      try {
        return await this.callOnce(toolName, args, options);
      } catch (retryError) {
        const retryKind = this.failureKind(retryError, options);
        if (retryKind !== "transport") throw this.callError(retryKind, toolName, retryError);
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

  private async callOnce(toolName: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    const client = this.live?.client;
    if (!client) throw new BridgeError("transport", this.name, "not connected");
    const result = await client.callTool({ name: toolName, arguments: args }, CallToolResultSchema, {
      signal: options.signal,
      timeout: this.config.requestTimeout,
      resetTimeoutOnProgress: true,
      onprogress: options.onProgress,
    });
    return result as CallToolResult;
  }

  private failureKind(error: unknown, options: CallOptions): "cancelled" | "timeout" | "auth" | "transport" | "other" {
    if (options.signal?.aborted) return "cancelled";
    if (isTimeoutError(error)) return "timeout";
    return classifyError(error);
  }

  private callError(kind: "cancelled" | "timeout" | "auth" | "other", toolName: string, error: unknown): BridgeError {
    switch (kind) {
      case "cancelled":
        return new BridgeError("cancelled", this.name, `Call to '${toolName}' on MCP server '${this.name}' was cancelled`, { cause: error });
      case "timeout":
        return new BridgeError(
          "timeout",
          this.name,
          `MCP server '${this.name}' did not answer '${toolName}' within ${seconds(this.config.requestTimeout)} without progress; ` +
            `raise \`requestTimeout\` (ms) for '${this.name}' in ${this.config.source.path} if the tool needs longer`,
          { cause: error },
        );
      case "auth":
        return new BridgeError("auth", this.name, this.authMessage(error), { cause: error });
      default:
        return new BridgeError("other", this.name, this.redact(`MCP server '${this.name}' failed '${toolName}': ${describeError(error)}`), {
          cause: error,
        });
    }
  }

  private lostDetail(cause: string): string {
    return this.exitDescription ? `the server process ${this.exitDescription}` : cause;
  }

  /** Waits for a reconnect that replaces the connection a failed call used; starts one unless another call already has. */
  private async reconnectAfter(generation: number): Promise<void> {
    if (this.generation !== generation && this.live) return;
    if (!this.reconnecting) {
      this.reconnecting = this.reconnect().finally(() => {
        this.reconnecting = undefined;
      });
    }
    await this.reconnecting;
  }

  /** Tears down the current connection and connects afresh (re-resolving `${VAR}`s and re-listing tools). */
  async reconnect(): Promise<void> {
    // The old connection is already broken or being replaced: no need to wait politely for it.
    await this.disposeCurrent({ graceful: false });
    await this.connect();
  }

  private async disposeCurrent(options: { graceful: boolean; terminateSession?: boolean }): Promise<void> {
    const live = this.live;
    this.live = undefined;
    if (live) {
      await this.dispose(live, options);
    } else {
      await terminateProcesses(this.processes);
      this.processes = [];
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    // A connect still under way is abandoned: its attempt fails and cleans up after itself as well.
    const connecting = this.connecting;
    this.connecting = undefined;
    await Promise.all([
      connecting ? this.dispose(connecting, { graceful: false }) : undefined,
      this.disposeCurrent({ graceful: true, terminateSession: true }),
    ]);
    if (this.status !== "disabled") this.status = "closed";
  }

  /** Synchronous last resort when pi exits without a shutdown event. */
  killNow(): void {
    const trees = [this.live, this.connecting].map((c) => {
      const pid = (c?.transport as Partial<StdioClientTransport> | undefined)?.pid ?? undefined;
      return pid ? processTree(pid) : [];
    });
    killProcessesNow(mergeProcesses(this.processes, ...trees));
  }

  redact(text: string): string {
    return redact(text, this.secrets);
  }

  private stderrForMessage(): string {
    const tail = this.stderrTail(STDERR_TAIL_IN_ERRORS).filter((line) => line.trim() !== "");
    return tail.length ? `\nLast stderr lines:\n${tail.map((l) => `  ${l}`).join("\n")}` : "";
  }

  private authMessage(error: unknown): string {
    const status = httpStatusOf(error);
    const where = describeSource(this.config.source);
    const headerNames = Object.keys(this.config.headers);
    const vars = Object.values(this.config.headers).flatMap((v) => [...v.matchAll(/\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]));
    let fix: string;
    if (headerNames.length === 0) {
      fix = `it sends no credentials; add an \`Authorization\` (or API key) header to '${this.name}' in ${where}`;
    } else {
      fix = `check the ${headerNames.map((h) => `\`${h}\``).join(", ")} header${headerNames.length > 1 ? "s" : ""} of '${this.name}' in ${where}`;
      if (vars.length) fix += ` and that ${[...new Set(vars)].map((v) => `\${${v}}`).join(", ")} holds a valid, unexpired credential`;
    }
    const statusText = status === 403 ? "HTTP 403 (forbidden)" : status === 401 ? "HTTP 401 (unauthorized)" : "an authentication error";
    return this.redact(`MCP server '${this.name}' rejected the request with ${statusText}: ${fix}. Reconnecting would not help, so it was not retried.`);
  }

  private connectError(error: unknown): BridgeError {
    const kind = error instanceof ConnectTimeout || isTimeoutError(error) ? "timeout" : classifyError(error);
    const where = this.config.transport === "stdio" ? "" : ` at ${displayUrl(this.redact(this.config.url ?? ""))}`;
    let message: string;
    if (kind === "auth") {
      return new BridgeError("auth", this.name, this.authMessage(error), { cause: error });
    } else if (kind === "timeout") {
      message = `MCP server '${this.name}'${where} did not complete the MCP handshake within ${seconds(this.config.timeout)}`;
      if (this.config.transport === "stdio" && this.nonJsonLines > 0) {
        message += `; it wrote ${this.nonJsonLines} line(s) to stdout that are not JSON-RPC messages (a server must log to stderr, not stdout)`;
      }
      message += ` (raise \`timeout\` in ${this.config.source.path} if it is just slow to start)`;
    } else if (this.config.transport === "stdio" && (error as { code?: unknown }).code === "ENOENT") {
      const command = this.config.command ?? "";
      message = `MCP server '${this.name}': command '${command}' was not found (is it installed and on PATH?)`;
      if (/\s/.test(command.trim())) message += `; put its arguments in \`args\` rather than in \`command\``;
    } else if (this.exitDescription) {
      message = `MCP server '${this.name}': the process ${this.exitDescription} before completing the MCP handshake`;
    } else {
      const detail = describeError(error);
      const refused = /ECONNREFUSED/.test(detail) ? " (connection refused: is the server running?)" : "";
      message = `MCP server '${this.name}'${where} failed to connect: ${detail}${refused}`;
    }
    message += this.stderrForMessage();
    const bridgeKind = kind === "timeout" ? "timeout" : kind === "transport" ? "transport" : "other";
    return new BridgeError(bridgeKind, this.name, this.redact(message), { cause: error });
  }
}
