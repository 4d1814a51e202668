/**
 * MCP for other extensions, on pi's event bus (`mcp.api.*`, documented in docs/api.md): list the servers and tools,
 * call a tool (correlated by the caller's id, abortable), and add or remove a server for this session only. A call
 * takes the model's path: the same approval rules (./../trust/tool-approval.ts), argument check, redaction and limits
 * (the tool's pi definition). Every failure is a value in the reply; nothing is thrown into the caller.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { errorMessage } from "../common/errors.ts";
import { abortWith } from "../common/follow-signal.ts";
import { lazy } from "../common/lazy.ts";
import { isObject } from "../common/values.ts";
import { within } from "../common/wait.ts";
import { scopeLabel } from "../config/types.ts";
import type { SessionServers } from "../bridge/session-servers.ts";
import type { ServerConnection } from "../connection/server-connection.ts";
import type { RegisteredTool } from "./tool-registry.ts";
import { type McpToolDefinition, ToolReportedError } from "./tool-definition.ts";

/** The bus channels: each request channel is answered on the channel without `.request`. */
const API_CHANNELS = {
  list: "mcp.api.list.request",
  call: "mcp.api.call.request",
  abort: "mcp.api.call.abort",
  register: "mcp.api.register.request",
  unregister: "mcp.api.unregister.request",
} as const;

/** What went wrong, in a word a caller can branch on; the message says it to a person. */
type ApiErrorKind =
  | "bad-request"
  | "duplicate-id"
  | "unknown-server"
  | "unknown-tool"
  | "not-connected"
  | "denied"
  | "tool-error"
  | "timeout"
  | "aborted"
  | "failed"
  | "invalid-entry"
  | "name-taken"
  | "start-failed"
  | "not-session";

type Reply = Record<string, unknown> & { id: unknown; ok: boolean };

export interface ExtensionApiDeps {
  /** pi's bus, as extensions use it. */
  events: {
    on(channel: string, handler: (data: unknown) => void): unknown;
    emit(channel: string, data: unknown): void;
    /** Aborts when the session ends (`ownedBus`'s `off()`). */
    ended?: AbortSignal;
  };
  connections(): Iterable<ServerConnection>;
  /** The MCP tools pi has that the model may reach (hidden ones are left out). */
  tools(): RegisteredTool[];
  definition(piName: string): McpToolDefinition | undefined;
  /** The approval check of the model's calls; `{block, reason}` refuses. */
  approve(
    call: { toolName: string; input: Record<string, unknown> },
    ctx: Pick<ExtensionContext, "hasUI" | "ui" | "signal">,
  ): Promise<{ block?: boolean; reason?: string } | undefined>;
  /** Resolves with the session's context once the session has started (calls wait for it). */
  session(): Promise<ExtensionContext>;
  sessionServers: SessionServers;
  /** Each server's metrics, for `mcp.metrics.request` (docs/events-and-logs.md). */
  metrics(): unknown[];
}

/** `events`, whose listeners added through it all end with `off()`. */
export function ownedBus(events: ExtensionApiDeps["events"]): ExtensionApiDeps["events"] & { off(): void } {
  const offs: unknown[] = [];
  const end = new AbortController();
  const on = (channel: string, handler: (data: unknown) => void) => offs.push(events.on(channel, handler));
  const off = () => (end.abort(), offs.splice(0).forEach((stop) => typeof stop === "function" && stop()));
  const emit = (channel: string, data: unknown) => {
    try {
      events.emit(channel, data);
    } catch {
      // pi 1.x refuses it once the session ended (a reload, /new): nobody of that session is left to hear a late reply.
    }
  };
  return { emit, on, off, ended: end.signal };
}

/** A request's answer when it failed, said as a value. */
function refused(kind: ApiErrorKind, message: string): { ok: false; error: { kind: ApiErrorKind; message: string } } {
  return { ok: false, error: { kind, message } };
}

/** A server as a listing shows it. */
function serverInfo(connection: ServerConnection, toolCount: number): Record<string, unknown> {
  const { name, status, lastError: error } = connection;
  return { name, status, source: scopeLabel(connection.config.source), toolCount, ...(error ? { error } : {}) };
}

function toolInfo(tool: RegisteredTool): Record<string, unknown> {
  const { server, originalName: name, name: piName, description, inputSchema, annotations } = tool;
  return { server, name, piName, description, inputSchema, ...(annotations ? { annotations } : {}) };
}

const errorKinds = lazy(() => import("../common/error-kinds.ts"));

/**
 * A failed call as a reply's error: why it failed, told apart as far as the caller can act on it. The error kinds load
 * the SDK, so they are loaded here when a call fails, not with pi's start.
 */
async function callFailure(error: unknown, signal: AbortSignal): Promise<{ kind: ApiErrorKind; message: string }> {
  if (signal.aborted) return { kind: "aborted", message: "The call was aborted by its caller (mcp.api.call.abort)." };
  const message = errorMessage(error);
  if (error instanceof ToolReportedError) return { kind: "tool-error", message };
  const { kindOf } = await errorKinds();
  const kind = kindOf(error);
  if (kind === "timeout") return { kind: "timeout", message };
  if (kind === "transport" || kind === "auth") return { kind: "not-connected", message };
  return { kind: "failed", message };
}

/** How long a call sent before the session started waits for it. */
const SESSION_WAIT_MS = 60_000;

export class ExtensionApi {
  /** Calls in flight, by the caller's id. */
  private readonly calls = new Map<unknown, AbortController>();

  constructor(private readonly deps: ExtensionApiDeps) {}

  /** Subscribes to the request channels. */
  listen(): void {
    const { events } = this.deps;
    this.answerOn(API_CHANNELS.list, async () => this.list());
    this.answerOn(API_CHANNELS.call, (request) => this.call(request));
    events.on(API_CHANNELS.abort, (data) => {
      if (isObject(data)) this.calls.get(data.id)?.abort();
    });
    this.answerOn(API_CHANNELS.register, (request) => this.register(request));
    this.answerOn(API_CHANNELS.unregister, (request) => this.unregister(request));
    // Older than the rest, and answered its own way: on `mcp.metrics`, and to `reply` if the request has one.
    events.on("mcp.metrics.request", (data) => {
      const snapshot = { servers: this.deps.metrics() };
      const reply = (data as { reply?: unknown } | undefined)?.reply;
      if (typeof reply === "function") reply(snapshot);
      events.emit("mcp.metrics", snapshot);
    });
  }

  /** Answers each request on `channel`: publishes its one reply, and hands it to the request's `reply` if it has one. */
  private answerOn(channel: string, handle: (request: Record<string, unknown>) => Promise<Record<string, unknown>>) {
    this.deps.events.on(channel, (data) => {
      const request = isObject(data) ? data : {};
      const settle = async (): Promise<Reply> => {
        if (!isObject(data)) return { id: undefined, ...refused("bad-request", "A request must be an object.") };
        try {
          return { id: request.id, ...(await handle(request)) } as Reply;
        } catch (error) {
          // A fault of the bridge's own: still an answer, never an exception in the caller's handler.
          return { id: request.id, ...refused("failed", errorMessage(error)) };
        }
      };
      void settle().then((reply) => {
        const callback = request.reply;
        if (typeof callback === "function") {
          try {
            callback(reply);
          } catch {
            // The caller's own callback failed: its reply is still published below.
          }
        }
        this.deps.events.emit(channel.replace(/\.request$/, ""), reply);
      });
    });
  }

  private async list(): Promise<Record<string, unknown>> {
    const tools = this.deps.tools();
    const servers = [...this.deps.connections()].map((c) =>
      serverInfo(c, tools.filter((t) => t.server === c.name).length),
    );
    return { ok: true, servers, tools: tools.map(toolInfo) };
  }

  private async call(request: Record<string, unknown>): Promise<Record<string, unknown>> {
    const { id, server, tool, args = {} } = request;
    if (typeof server !== "string" || typeof tool !== "string" || !isObject(args))
      return refused("bad-request", "A call needs `server` and `tool` (strings) and `args` (an object).");
    if (id === undefined) return refused("bad-request", "A call needs an `id` (a string or a number).");
    if (this.calls.has(id))
      return refused(
        "duplicate-id",
        `A call with the id ${JSON.stringify(id)} is still running: give each call its own id.`,
      );
    const controller = new AbortController();
    const { signal } = controller;
    const unfollow = abortWith(controller, request.signal instanceof AbortSignal ? request.signal : undefined);
    this.calls.set(id, controller);
    try {
      // A copy: what the caller does to its object later cannot change the call that is approved and sent.
      return await this.run(id, server, tool, structuredClone(args), signal);
    } catch (error) {
      return { ok: false, error: await callFailure(error, signal) };
    } finally {
      this.calls.delete(id);
      unfollow();
    }
  }

  private async run(
    id: unknown,
    server: string,
    toolName: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const ctx = await within(this.deps.session(), {
      ms: SESSION_WAIT_MS,
      timedOut: () => new Error("pi's session did not start, and a call needs one (its approval may ask the user)."),
      signal,
    });
    const connection = [...this.deps.connections()].find((c) => c.name === server);
    if (!connection) return refused("unknown-server", `There is no MCP server '${server}' in this session.`);
    const tool = this.deps.tools().find((t) => t.server === server && t.originalName === toolName);
    const definition = tool && this.deps.definition(tool.name);
    if (!tool || !definition) {
      // A server stopped (switched off, disabled) keeps the tool list it had: a tool of that list is down, not unknown.
      const mayHave = connection.tools.length === 0 || connection.tools.some((t) => t.name === toolName);
      const down = connection.status !== "connected" && mayHave;
      return down
        ? refused(
            "not-connected",
            `MCP server '${server}' is ${connection.status}${connection.lastError ? `: ${connection.lastError}` : ""}.`,
          )
        : refused("unknown-tool", `MCP server '${server}' offers no tool '${toolName}' (mcp.api.list lists them).`);
    }
    const verdict = await this.deps.approve(
      { toolName: tool.name, input: args },
      // pi's reload hides an open dialog and settles it only through its signal: the session's end aborts it too.
      { hasUI: ctx.hasUI, ui: ctx.ui, signal: AbortSignal.any([signal, this.deps.events.ended ?? signal]) },
    );
    if (signal.aborted) throw signal.reason;
    if (verdict?.block) await this.deps.session(); // a dialog the session's end closed: the session's end is the answer
    if (verdict?.block) return refused("denied", verdict.reason ?? "The call was not approved.");
    const result = await definition.execute(`mcp-api-${String(id)}`, args, signal, undefined, ctx);
    // The tool's own error (`isError`): thrown on pi 0.73 (see `callFailure`), returned as a result on pi 1.x.
    if ("isError" in result && result.isError)
      return refused("tool-error", result.content.map((part) => (part.type === "text" ? part.text : "")).join(""));
    const { structuredContent, truncated } = result.details;
    return { ok: true, content: result.content, ...definedOnly({ structuredContent, truncated }) };
  }

  private async register(request: Record<string, unknown>): Promise<Record<string, unknown>> {
    const { name, entry, by } = request;
    if (typeof name !== "string")
      return refused("bad-request", "A registration needs `name` (a string) and `entry` (an object).");
    const added = await this.deps.sessionServers.add(name, entry, {
      by: typeof by === "string" && by ? by : "another extension (mcp.api.register)",
    });
    if (!added.ok) return refused(added.kind, added.message);
    const tools = this.deps.tools().filter((t) => t.server === name);
    return {
      ok: true,
      server: serverInfo(added.connection, tools.length),
      tools: tools.map(toolInfo),
      warnings: added.warnings,
    };
  }

  private async unregister(request: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (typeof request.name !== "string") return refused("bad-request", "An unregistration needs `name` (a string).");
    const removed = await this.deps.sessionServers.remove(request.name);
    return removed.ok ? { ok: true } : refused(removed.kind, removed.message);
  }
}

/** The fields that have a value. */
function definedOnly(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}
