/**
 * A tool call the server runs as a task, on a connected v2 `Client`: ask for the task (in the dialect of the
 * negotiated revision, see task-wire.ts), tell the caller its id at once, follow it with `tasks/get` at the server's
 * suggested pace (each change of status or message reported as progress), fetch its result, and cancel it when the
 * caller's signal fires. `resumeToolTask` follows a task made earlier, on another connection, to its result: how a
 * call survives a reconnect or a server restart. Everything is bounded by the caller's timeout.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { ProtocolError, SdkError, SdkErrorCode, type CallToolResult, type Client } from "@modelcontextprotocol/client";
import type { Progress, Tool } from "@modelcontextprotocol/client";
import { errorMessage } from "../../common/errors.ts";
import { declareTasks, markTaskCall } from "./task-intercept.ts";
import {
  changed,
  dialectOfVersion,
  isTerminal,
  parseCreation,
  parseTask,
  pollDelay,
  taskDialectFor,
  withTaskParam,
  type DetailedTask,
  type TaskDialect,
  type TaskState,
  type ToolExecutionHint,
} from "./task-wire.ts";

export { type TaskDialect, type TaskState } from "./task-wire.ts";

/** Any task error: which task it was, so the caller can tell the user or resume it. */
class ToolTaskError extends Error {
  constructor(
    message: string,
    readonly taskId: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The server ran the call and it failed with a protocol error (not a tool result with `isError`). */
export class TaskFailedError extends ToolTaskError {
  constructor(
    taskId: string,
    message: string,
    readonly code?: number,
  ) {
    super(`task ${taskId} failed: ${message}`, taskId);
  }
}

/** The task was cancelled: at the caller's request (`requested`), or by the server. */
export class TaskCancelledError extends ToolTaskError {
  constructor(
    taskId: string,
    readonly requested: boolean,
  ) {
    super(requested ? `task ${taskId} cancelled` : `task ${taskId} was cancelled by the server`, taskId);
  }
}

/** The server does not know the task: it expired, or never was. */
export class TaskUnknownError extends ToolTaskError {
  constructor(taskId: string, detail: string) {
    super(`the server no longer knows task ${taskId} (expired or unknown): ${detail}`, taskId);
  }
}

/** The caller's time ran out before the task ended (the task is cancelled). */
export class TaskTimeoutError extends ToolTaskError {
  constructor(taskId: string, ms: number) {
    super(`task ${taskId} did not finish within ${ms} ms`, taskId);
  }
}

/** The task waits for answers (2026-07-28 `input_required`) and the caller gave no way to answer. */
export class TaskInputRequiredError extends ToolTaskError {
  constructor(taskId: string) {
    super(`task ${taskId} needs input the client cannot give`, taskId);
  }
}

/** The connection failed while following the task; it may still run: `resumeToolTask` on a new connection. */
export class TaskInterruptedError extends ToolTaskError {
  constructor(taskId: string, cause: unknown) {
    super(`lost the connection while following task ${taskId}: ${errorMessage(cause)}`, taskId, { cause });
  }
}

export interface ToolTaskOptions {
  /** The whole call, task included, ends within this (the task is cancelled when it runs out). */
  timeoutMs: number;
  /** Aborting cancels the task on the server (`tasks/cancel`) and rejects with TaskCancelledError. */
  signal?: AbortSignal;
  /** Called once the server has made the task, before it is followed: keep the id to resume it later. */
  onTaskCreated?(taskId: string, dialect: TaskDialect): void;
  /** Called with the task each time its status or message changes. */
  onProgress?(task: TaskState): void;
  /**
   * Answers a 2026-07-28 task's `inputRequests` (keyed requests: elicitation, sampling, roots) with responses by
   * the same keys; without it such a task is cancelled and the call fails with TaskInputRequiredError.
   */
  onInputRequired?(requests: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>>;
  /** The tool as the server listed it: on 2026-07-28 its `x-mcp-header` parameters are mirrored into headers. */
  toolDefinition?: Tool;
  /** Overrides the dialect the negotiated revision implies. */
  dialect?: TaskDialect;
  /** 2025-11-25: how long the server should keep the task (the server may choose otherwise). */
  ttlMs?: number;
  /** The shortest wait between polls, whatever the server suggests: default 100 ms (and the longest is 5 s). */
  minPollMs?: number;
  /** The longest any one request may take. Default 30 s (and never past the call's time). */
  requestTimeoutMs?: number;
  /** Given with every request of the call, as the SDK's option of that name (the bridge marks delivery with it). */
  onresumptiontoken?: (token: string) => void;
  /** Progress on the call itself (answered at once, no task): each restarts the request's time, as a plain call's. */
  onprogress?: (progress: Progress) => void;
}

const DEFAULT_MIN_POLL_MS = 100;
const DEFAULT_MAX_POLL_MS = 5_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Cancelling is a courtesy to the server: it gets this long, whatever time the call had left. */
const CANCEL_TIMEOUT_MS = 5_000;

/** Results are checked here, not by the SDK (which has no runtime for task results). */
const ANY_RESULT = {
  "~standard": { version: 1 as const, vendor: "mcp-bridge", validate: (value: unknown) => ({ value }) },
};

/** The dialect a call of `tool` should ask for a task in on `client`, or undefined for a plain call. */
export function toolTaskDialect(client: Client, tool: ToolExecutionHint | undefined): TaskDialect | undefined {
  return taskDialectFor(dialectOfVersion(client.getNegotiatedProtocolVersion()), client.getServerCapabilities(), tool);
}

interface Run {
  client: Client;
  dialect: TaskDialect;
  options: ToolTaskOptions;
  deadline: number;
}

/** A `tasks/*` request, declaring the extension when the dialect wants it. */
function taskRequest(
  run: Run,
  method: string,
  params: Record<string, unknown>,
  options: { timeout: number; signal?: AbortSignal },
): Promise<unknown> {
  const withMeta = run.dialect === "extension" ? { ...params, _meta: declareTasks(run.client) } : params;
  return run.client.request({ method, params: withMeta }, ANY_RESULT, options);
}

function remaining(run: Run): number {
  return run.deadline - Date.now();
}

function requestOptions(run: Run) {
  const timeout = Math.max(1, Math.min(run.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, remaining(run)));
  return { timeout, signal: run.options.signal, onresumptiontoken: run.options.onresumptiontoken };
}

/**
 * Calls a tool asking for a task and follows it to its result. A server may answer at once instead (2026-07-28
 * lets it decide): that result is returned as it is.
 */
export async function callToolAsTask(
  client: Client,
  params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
  options: ToolTaskOptions,
): Promise<CallToolResult> {
  const run = startRun(client, options);
  const call = run.dialect === "extension" ? markTaskCall(client, params._meta) : undefined;
  const sent = call ? { ...params, _meta: call.meta } : withTaskParam(params, options.ttlMs);
  let answer: unknown;
  try {
    const sdk = { ...requestOptions(run), onprogress: options.onprogress, resetTimeoutOnProgress: true };
    // callTool mirrors the tool's `x-mcp-header` parameters (2026-07-28).
    answer = call
      ? await client.callTool(sent, { ...sdk, toolDefinition: options.toolDefinition })
      : await client.request({ method: "tools/call", params: sent }, ANY_RESULT, sdk);
  } finally {
    answer = call?.takeTask() ?? answer;
  }
  const creation = parseCreation(answer);
  if (!creation) throw new Error(`the server answered tools/call ${params.name} with neither a task nor a tool result`);
  if ("result" in creation) return creation.result;
  options.onTaskCreated?.(creation.task.taskId, run.dialect);
  return follow(run, creation.task.taskId, creation.task);
}

/** Follows a task made earlier (possibly by another connection, before a restart) to its result. */
export function resumeToolTask(client: Client, taskId: string, options: ToolTaskOptions): Promise<CallToolResult> {
  return follow(startRun(client, options), taskId, undefined);
}

/** A call's run: in the dialect of the negotiated revision unless told, within its own deadline from now. */
function startRun(client: Client, options: ToolTaskOptions): Run {
  const dialect = options.dialect ?? dialectOfVersion(client.getNegotiatedProtocolVersion());
  return { client, dialect, options, deadline: Date.now() + options.timeoutMs };
}

async function follow(run: Run, taskId: string, first: DetailedTask | undefined): Promise<CallToolResult> {
  const { options } = run;
  const bounds = { minMs: options.minPollMs ?? DEFAULT_MIN_POLL_MS, maxMs: DEFAULT_MAX_POLL_MS };
  // Each poll waits at least minMs, so this many cover the whole time; the count bounds the loop on its own too.
  const maxPolls = Math.ceil(options.timeoutMs / Math.max(1, bounds.minMs)) + 2;
  const answered = new Set<string>();
  let last: TaskState | undefined;
  let task = first;
  for (let poll = 0; poll < maxPolls; poll++) {
    if (options.signal?.aborted) return cancelled(run, taskId);
    if (remaining(run) <= 0) break;
    if (!task) {
      try {
        task = await getTask(run, taskId);
      } catch (error) {
        if (options.signal?.aborted) return cancelled(run, taskId);
        // A request cut short by the call's own deadline is the call timing out, not the connection failing.
        if (remaining(run) <= 0) break;
        throw error;
      }
    }
    if (changed(last, task)) options.onProgress?.(stateOf(task));
    last = task;
    if (isTerminal(task.status) || (run.dialect === "core" && task.status === "input_required"))
      return finish(run, task);
    if (task.status === "input_required")
      await answerInput(run, task, answered).catch(async (error: unknown) => {
        if (options.signal?.aborted) return cancelled(run, taskId);
        // Questions left unanswered would keep the task waiting on the server for nothing (a lost connection aside).
        if (!(error instanceof TaskInterruptedError)) await cancelQuietly(run, taskId);
        throw error;
      });
    const delay = pollDelay(task, bounds, remaining(run));
    task = undefined;
    if (!(await pause(delay, options.signal))) return cancelled(run, taskId);
  }
  return timedOut(run, taskId);
}

async function timedOut(run: Run, taskId: string): Promise<never> {
  await cancelQuietly(run, taskId);
  throw new TaskTimeoutError(taskId, run.options.timeoutMs);
}

function stateOf(task: DetailedTask): TaskState {
  const { result: _result, error: _error, inputRequests: _input, ...state } = task;
  return state;
}

async function getTask(run: Run, taskId: string): Promise<DetailedTask> {
  let answer: unknown;
  try {
    answer = await taskRequest(run, "tasks/get", { taskId }, requestOptions(run));
  } catch (error) {
    throw asTaskError(error, taskId);
  }
  const task = parseTask(answer);
  if (!task || task.taskId !== taskId)
    throw new Error(`the server answered tasks/get for ${taskId} with something that is not that task`);
  return task;
}

/**
 * A lost connection as TaskInterruptedError; on the requests that read a task (`tasks/get`, `tasks/result`),
 * invalid params (-32602) is how both revisions say the task is unknown or expired.
 */
function asTaskError(error: unknown, taskId: string, readsTask = true): Error {
  if (!(error instanceof ProtocolError)) return new TaskInterruptedError(taskId, error);
  return readsTask && error.code === -32602 ? new TaskUnknownError(taskId, error.message) : error;
}

async function finish(run: Run, task: DetailedTask): Promise<CallToolResult> {
  if (task.status === "cancelled") throw new TaskCancelledError(task.taskId, false);
  if (run.dialect === "extension") {
    if (task.status === "failed")
      throw new TaskFailedError(
        task.taskId,
        task.error?.message ?? task.statusMessage ?? "no reason given",
        task.error?.code,
      );
    if (!task.result || !Array.isArray(task.result.content))
      throw new Error(`the server reported task ${task.taskId} completed without its result`);
    return task.result;
  }
  // 2025-11-25: `tasks/result` waits for the end (answering any input the task asks for on the way) and returns it.
  let answer: unknown;
  try {
    answer = await taskRequest(run, "tasks/result", { taskId: task.taskId }, requestOptions(run));
  } catch (error) {
    if (run.options.signal?.aborted) return cancelled(run, task.taskId);
    if (remaining(run) <= 0) return timedOut(run, task.taskId);
    // A task not over yet may wait (for input) longer than one request may take: its tasks/result is asked again.
    if (!isTerminal(task.status) && error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout)
      return follow(run, task.taskId, undefined);
    // A task seen failed is known: its -32602 is the call's own error (invalid params), not an unknown task.
    if (error instanceof ProtocolError && (error.code !== -32602 || task.status === "failed"))
      throw new TaskFailedError(task.taskId, error.message, error.code);
    throw asTaskError(error, task.taskId);
  }
  const creation = parseCreation(answer);
  if (!creation || !("result" in creation))
    throw new Error(`the server answered tasks/result for ${task.taskId} with something that is not a tool result`);
  return task.status === "failed" ? { ...creation.result, isError: true } : creation.result;
}

/** Answers the requests not answered yet, through the caller; without a way to answer, the task cannot go on. */
async function answerInput(run: Run, task: DetailedTask, answered: Set<string>): Promise<void> {
  const pending = Object.fromEntries(Object.entries(task.inputRequests ?? {}).filter(([key]) => !answered.has(key)));
  if (Object.keys(pending).length === 0) return;
  const answer = run.options.onInputRequired;
  if (!answer) throw new TaskInputRequiredError(task.taskId);
  const signal = run.options.signal ?? new AbortController().signal;
  const responses = await answer(pending, signal);
  for (const key of Object.keys(pending)) answered.add(key);
  try {
    await taskRequest(run, "tasks/update", { taskId: task.taskId, inputResponses: responses }, requestOptions(run));
  } catch (error) {
    throw asTaskError(error, task.taskId, false);
  }
}

async function cancelled(run: Run, taskId: string): Promise<never> {
  await cancelQuietly(run, taskId);
  throw new TaskCancelledError(taskId, true);
}

/** Tells the server to stop the task; the caller is leaving either way, so a failure here is not reported. */
async function cancelQuietly(run: Run, taskId: string): Promise<void> {
  try {
    await taskRequest(run, "tasks/cancel", { taskId }, { timeout: CANCEL_TIMEOUT_MS });
  } catch {
    // The task ends with its TTL anyway.
  }
}

/** Waits `ms`; false if `signal` fired first. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return sleep(ms, true, { signal }).catch(() => false);
}
