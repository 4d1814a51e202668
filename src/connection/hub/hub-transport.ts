/**
 * A Transport to a shared local server through the hub (./hub.mjs): the session speaks MCP to the hub's socket as it
 * would to the server's stdin and stdout, and the hub forwards it. What the hub says of its own (how many sessions use
 * the server, the server's stderr, its exit) arrives on the same socket in lines without `jsonrpc`, and is read here.
 *
 * Closing it lets go of this session only: the server runs on for the other sessions, and the hub stops it once the
 * last one has left and its idle time has passed. So nothing here may look like a process of this pi's own
 * (`pid` is undefined): the bridge's process-tree cleanup must never reach a shared server.
 */
import { createHash } from "node:crypto";
import type * as net from "node:net";
import * as path from "node:path";
import { getDefaultEnvironment } from "@modelcontextprotocol/client/stdio";
import {
  type JSONRPCMessage,
  deserializeMessage,
  type MessageExtraInfo,
  serializeMessage,
  type Transport,
} from "@modelcontextprotocol/client";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../../config/defaults.ts";
import { MessageTooLargeError } from "../message-limit.ts";
import { asError } from "../../common/errors.ts";
import { isObject } from "../../common/values.ts";
import { platformCommand } from "../local/platform-command.ts";
import { InOrderDelivery, LineFraming } from "../local/stdio-framing.ts";
import type { ResolvedStdio } from "../../config/substitute.ts";
import type { StdioHooks } from "../transports.ts";
import type { StdioSandbox } from "../../sandbox/server-sandbox.ts";
import { connectHub } from "./hub-launch.ts";

const HUB_LINE = '{"hub":';

/** What the hub says of a shared server, besides its messages. */
export interface SharedState {
  /** The server's pid, as the hub started it. */
  pid?: number;
  /** How many pi sessions use it now, this one included. */
  sessions: number;
}

export interface HubTransportOptions {
  /** The hub's directory (./hub-launch.ts `hubDir`). */
  dir: string;
  /** How long the hub keeps the server after its last session has left. */
  idleMs: number;
  endpoint: ResolvedStdio;
  hooks: StdioHooks;
  maxMessageBytes?: number;
  /** When connecting (the hub started if need be, the server spawned) must be done by. */
  deadline: number;
  /** The server's sandbox, when it runs in one: its rules go to the hub, which sets the sandbox up (../../sandbox/sandbox-runtime.mjs). */
  sandbox?: StdioSandbox;
  /** The server's `protocolVersion` setting: sessions pinned to another revision get a process of their own. */
  protocol?: string;
}

/**
 * A shared sandboxed server's private temp dir: named after its definition, so every session's rules for it are the
 * same rules (and so the same server); the hub makes it at each start and removes it at the end. It lies in the hub's
 * own directory, which is this user's alone (0700, owner checked): a fixed name in the system's temp dir could be made
 * first by another user, who could then read and plant the server's temp files.
 */
function sharedTempDir(hubDir: string, spec: ReturnType<typeof spawnSpec>): string {
  const id = createHash("sha256").update(JSON.stringify(spec)).digest("hex").slice(0, 16);
  return path.join(hubDir, "tmp", id);
}

/** The command, arguments, environment and directory the server is started with: what makes two definitions one. */
function spawnSpec(endpoint: ResolvedStdio) {
  const { command, args } = platformCommand(endpoint.command, endpoint.args, process.platform);
  // Under the hub a server has no terminal, and sessions in two kinds of terminal must share it: no TERM at all.
  const { TERM: _terminal, ...defaults } = getDefaultEnvironment();
  // In one order, whatever order the entry and pi's environment give: the sandbox's temp dir is named after this.
  const env = Object.fromEntries(Object.entries({ ...defaults, ...endpoint.env }).sort());
  return { command, args, env, cwd: endpoint.cwd };
}

export class HubTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  /** Kept at 0: the hub, not this session, reads the server's stdout. */
  readonly linesRead = 0;
  readonly nonJsonLines = 0;
  readonly shared: SharedState = { sessions: 0 };
  private socket?: net.Socket;
  private readonly framing: LineFraming;
  private readonly delivery = new InOrderDelivery({
    next: () => this.nextMessage(),
    deliver: (message) => this.onmessage?.(message),
    onError: (error) => this.onerror?.(asError(error)),
  });
  private attached = false;
  private closed = false;
  private closeFired = false;
  /** The attach under way: the hub's answer settles it. */
  private settleAttach?: { resolve(): void; reject(error: Error): void };

  constructor(private readonly options: HubTransportOptions) {
    this.framing = new LineFraming(options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES);
  }

  /** Never this pi's process: see the header. The SDK reads `pid` and `stderr` being there as "stdio". */
  get pid(): undefined {
    return undefined;
  }

  get stderr(): null {
    return null;
  }

  /** The hub's log, while the hub has not attached this session to the server: a timeout then is the hub's. */
  get unattachedLog(): string | undefined {
    return this.attached ? undefined : path.join(this.options.dir, "hub.log");
  }

  /** A message sent now reaches the hub. */
  get accepting(): boolean {
    const socket = this.socket;
    return this.attached && !this.closed && !!socket && !socket.destroyed && socket.writable;
  }

  /** Connects to the hub (starting it if need be) and has it attach this session to the server, started if need be. */
  async start(): Promise<void> {
    const { dir, idleMs, endpoint, deadline, maxMessageBytes, sandbox, protocol } = this.options;
    const socket = await connectHub(dir, deadline);
    this.socket = socket;
    if (this.closed) {
      socket.destroy();
      throw new Error("the session was closed");
    }
    const attached = new Promise<void>((resolve, reject) => (this.settleAttach = { resolve, reject }));
    socket.on("data", (chunk: Buffer) => this.read(chunk));
    socket.on("error", (error) => this.onerror?.(error));
    socket.on("close", () => {
      this.settleAttach?.reject(new Error("the shared-server hub closed the connection before the server started"));
      this.fireClose();
    });
    const spec = spawnSpec(endpoint);
    const policy = sandbox?.policy(sharedTempDir(dir, spec));
    if (policy) sandbox?.onStart?.(policy);
    const attach = { hub: "attach", spec, idleMs, maxLineBytes: maxMessageBytes, sandbox: policy, protocol };
    socket.write(`${JSON.stringify(attach)}\n`);
    await attached;
  }

  private read(chunk: Buffer): void {
    try {
      this.framing.append(chunk);
    } catch (error) {
      // A line over the limit: nothing after it can be trusted to be framed right.
      this.onerror?.(asError(error));
      this.socket?.destroy();
      return;
    }
    this.delivery.drain();
  }

  /**
   * The next line to hand on; a line that is not JSON, or JSON but no JSON-RPC message (a JSON logger's line on the
   * server's stdout), is reported and skipped, as an unshared server's is; anything else wrong ends the session.
   */
  private nextMessage(): JSONRPCMessage | null | undefined {
    if (this.closeFired) return null;
    try {
      return this.nextLine();
    } catch (error) {
      this.onerror?.(asError(error));
      if (error instanceof SyntaxError || asError(error).name === "ZodError") return undefined;
      this.socket?.destroy();
      return null;
    }
  }

  /** The next MCP message; undefined for a line of the hub's own (handled here); null when no whole line waits. */
  private nextLine(): JSONRPCMessage | null | undefined {
    const line = this.framing.readLine();
    if (line === null) return null;
    // The hub writes its own lines with `hub` as their first key; a server's message never starts so.
    if (!line.startsWith(HUB_LINE)) return deserializeMessage(line);
    const value = JSON.parse(line) as unknown;
    if (isObject(value)) this.hubLine(value);
    return undefined;
  }

  private hubLine(line: Record<string, unknown>): void {
    const { hooks } = this.options;
    switch (line.hub) {
      case "attached":
        this.attached = true;
        this.shared.pid = typeof line.pid === "number" ? line.pid : undefined;
        this.shared.sessions = Number(line.sessions) || 1;
        this.settleAttach?.resolve();
        this.settleAttach = undefined;
        return;
      case "error": {
        // With the spawn's own code (ENOENT, EACCES), so the message about it is the one an unshared start gets.
        const error = new Error(`the shared-server hub could not start it: ${String(line.message)}`);
        if (typeof line.code === "string") Object.assign(error, { code: line.code });
        this.settleAttach?.reject(error);
        this.settleAttach = undefined;
        return;
      }
      case "violation":
        if (typeof line.line === "string") this.options.sandbox?.onViolation?.(line.line);
        return;
      case "sessions":
        this.shared.sessions = Number(line.count) || 0;
        return;
      case "too_long": {
        // The server wrote a line over the limit, and the hub stops it: said as an unshared server's transport says it.
        const error = new MessageTooLargeError(this.options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES);
        hooks.onRefused(error);
        this.onerror?.(error);
        return;
      }
      case "stderr":
        if (typeof line.line === "string") hooks.onStderrLine(line.line);
        return;
      case "exit":
        hooks.onExit(String(line.description), typeof line.code === "number" ? line.code : null);
        return;
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const socket = this.socket;
    if (!socket || !this.accepting) return Promise.reject(new Error("Not connected"));
    return new Promise((resolve, reject) =>
      socket.write(serializeMessage(message), (error) => (error ? reject(error) : resolve())),
    );
  }

  /** Asks the hub to restart the server for every session that uses it (each sees its connection close). */
  restartForAll(): void {
    if (this.accepting) this.socket?.write(`${JSON.stringify({ hub: "restart" })}\n`);
  }

  /** Leaves the server to the other sessions: only this connection ends. */
  async close(): Promise<void> {
    this.closed = true;
    const socket = this.socket;
    if (!socket || socket.destroyed) return this.fireClose();
    await new Promise<void>((resolve) => {
      socket.once("close", () => resolve());
      socket.end();
      // A hub that does not close its side in time is not waited for.
      setTimeout(() => socket.destroy(), 1000).unref();
    });
  }

  killNow(): void {
    this.closed = true;
    this.socket?.destroy();
  }

  private fireClose(): void {
    if (this.closeFired) return;
    this.closeFired = true;
    this.closed = true;
    this.onclose?.();
  }
}
