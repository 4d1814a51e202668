/**
 * Tasks on the wire, in both shapes (pure): whether a tool call should run as a task, and what a server's task
 * answers mean. Revision 2025-11-25 has experimental tasks in the core protocol (the client asks with a `task`
 * param, `CreateTaskResult` is `{task}`, `ttl`/`pollInterval`, the result comes from `tasks/result`); 2026-07-28
 * moves them into the `io.modelcontextprotocol/tasks` extension (the client declares the extension per request, the
 * server decides, `CreateTaskResult` is a flat task with `resultType: "task"`, `ttlMs`/`pollIntervalMs`, the result
 * inlined in `tasks/get`, no `tasks/result`).
 */
import type { CallToolResult, ServerCapabilities } from "@modelcontextprotocol/client";
import { isObject } from "../../common/values.ts";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** How a call asks for a task: the 2026-07-28 extension, or 2025-11-25's task-augmented request. */
export type TaskDialect = "extension" | "core";

const STATUSES = ["working", "input_required", "completed", "failed", "cancelled"] as const;
export type TaskStatus = (typeof STATUSES)[number];

/** A task as this module reports it, whatever the revision. */
export interface TaskState {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  /** The server's suggested polling interval. */
  pollIntervalMs?: number;
  /** How long the server keeps the task (null: no limit). */
  ttlMs?: number | null;
  createdAt?: string;
  lastUpdatedAt?: string;
}

/** A task as `tasks/get` (or a 2026-07-28 `CreateTaskResult`) shows it, with what its status carries. */
export interface DetailedTask extends TaskState {
  /** 2026-07-28, completed: the tool's result. */
  result?: CallToolResult;
  /** 2026-07-28, failed: the JSON-RPC error. */
  error?: { code?: number; message?: string; data?: unknown };
  /** 2026-07-28, input_required: the requests waiting for the client's answers, by key. */
  inputRequests?: Record<string, unknown>;
}

export function isTerminal(status: TaskStatus): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

/** The era a negotiated protocol version belongs to: 2026-07-28 and later speak the extension. */
export function dialectOfVersion(version: string | undefined): TaskDialect {
  return version !== undefined && version >= "2026-07-28" ? "extension" : "core";
}

export interface ToolExecutionHint {
  execution?: { taskSupport?: string };
}

/**
 * Whether a call of `tool` should ask for a task, and in which dialect; undefined for a plain call. On 2026-07-28
 * the server decides per call, so declaring the extension is enough when the server offers it. On 2025-11-25 the
 * client decides: the server must offer task-augmented tool calls and the tool must allow them.
 */
export function taskDialectFor(
  dialect: TaskDialect,
  server: ServerCapabilities | undefined,
  tool: ToolExecutionHint | undefined,
): TaskDialect | undefined {
  if (dialect === "extension") {
    const extensions = (server as { extensions?: Record<string, unknown> } | undefined)?.extensions;
    return extensions?.[TASKS_EXTENSION] !== undefined ? "extension" : undefined;
  }
  const tasks = (server as { tasks?: { requests?: { tools?: { call?: unknown } } } } | undefined)?.tasks;
  if (tasks?.requests?.tools?.call === undefined) return undefined;
  const support = tool?.execution?.taskSupport;
  return support === "optional" || support === "required" ? "core" : undefined;
}

function optionalNumber(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** A task object in either revision's shape; undefined when `value` is not one. */
export function parseTask(value: unknown): DetailedTask | undefined {
  if (!isObject(value) || typeof value.taskId !== "string" || value.taskId === "" || typeof value.status !== "string")
    return undefined;
  if (!(STATUSES as readonly string[]).includes(value.status)) return undefined;
  const ttl = value.ttlMs !== undefined ? value.ttlMs : value.ttl;
  const task: DetailedTask = {
    taskId: value.taskId,
    status: value.status as TaskStatus,
    statusMessage: typeof value.statusMessage === "string" ? value.statusMessage : undefined,
    pollIntervalMs: optionalNumber(value.pollIntervalMs ?? value.pollInterval),
    ttlMs: ttl === null ? null : optionalNumber(ttl),
    createdAt: typeof value.createdAt === "string" ? value.createdAt : undefined,
    lastUpdatedAt: typeof value.lastUpdatedAt === "string" ? value.lastUpdatedAt : undefined,
  };
  if (isObject(value.result)) task.result = value.result as CallToolResult;
  if (isObject(value.error)) task.error = value.error as DetailedTask["error"];
  if (isObject(value.inputRequests)) task.inputRequests = value.inputRequests;
  return task;
}

/**
 * What a task-asking `tools/call` got back: a task (2025-11-25 nests it under `task`, 2026-07-28 is flat), or the
 * plain result of a server that chose to answer at once.
 */
export function parseCreation(result: unknown): { task: DetailedTask } | { result: CallToolResult } | undefined {
  if (!isObject(result)) return undefined;
  const task = parseTask(isObject(result.task) ? result.task : result.resultType === "task" ? result : undefined);
  if (task) return { task };
  return Array.isArray(result.content) ? { result: result as CallToolResult } : undefined;
}

/** Whether the task's visible state moved (what a progress report is for). */
export function changed(before: TaskState | undefined, after: TaskState): boolean {
  return before === undefined || before.status !== after.status || before.statusMessage !== after.statusMessage;
}

export interface PollBounds {
  minMs: number;
  maxMs: number;
}

/** The wait before the next `tasks/get`: the server's suggestion within bounds, and never past the deadline. */
export function pollDelay(task: TaskState, bounds: PollBounds, remainingMs: number): number {
  const suggested = task.pollIntervalMs ?? bounds.minMs;
  return Math.max(0, Math.min(Math.max(suggested, bounds.minMs), bounds.maxMs, remainingMs));
}

/** The `tools/call` params that ask for a 2025-11-25 task. */
export function withTaskParam<P extends Record<string, unknown>>(
  params: P,
  ttlMs: number | undefined,
): P & { task: { ttl?: number } } {
  return { ...params, task: ttlMs === undefined ? {} : { ttl: ttlMs } };
}
