/**
 * One tool call as the connection sends it: a plain `tools/call`, or, where the server runs the tool as a task
 * (./tasks/tool-tasks.ts), the task followed to its result. A task outlives the connection it was made on: when the
 * connection is lost while it runs, the request is run again on the next live session (`withSession` in ./server-connection.ts),
 * and that second run follows the same task by its id instead of starting the work over: that is why a call whose task
 * exists may always be run again, where a plain call the server may have received may not (./request-recovery.ts).
 */
import type { CallToolResult, Client, Progress, RequestOptions, Tool } from "@modelcontextprotocol/client";
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/core";
import type { ClientFeatures } from "./mcp-client.ts";
import type { Run } from "./live-session.ts";
import {
  callToolAsTask,
  resumeToolTask,
  TaskInterruptedError,
  type TaskState,
  type ToolTaskOptions,
  toolTaskDialect,
} from "./tasks/tool-tasks.ts";

/**
 * How long a task may run before the call gives up on it (and cancels it). A task is the server's way of saying the
 * work is long; pi's own abort (Escape) cancels it at any time.
 */
const TASK_DEADLINE_MS = 60 * 60_000;

/** The client features a task's own questions are answered with (2026-07-28 tasks ask through `input_required`). */
type Answers = Pick<ClientFeatures, "elicitation" | "sampling" | "roots">;

/** One tool call as a request the connection can run more than once. */
export interface ToolCallRun {
  run: Run<CallToolResult>;
  /** The server made a task of the call: running it again follows that task by its id, it does not start the work again. */
  followsTask(): boolean;
}

/** The request that calls `name` with `args`; each run of it (after a reconnect) goes on with the same task, if any. */
export function toolCallRun(
  name: string,
  args: Record<string, unknown>,
  definition: Tool | undefined,
  answers: Answers,
): ToolCallRun {
  const task: { id?: string } = {};
  return {
    // A plain call is the SDK's own promise: no async frame of the bridge's stays open while it runs. The options are
    // this run's own, so they take the definition: on Node 20 a copy with it added got a hidden class every call.
    run: (client, sdk: SdkOptions) => {
      if (definition) sdk.toolDefinition = definition;
      if (task.id !== undefined || toolTaskDialect(client, definition))
        return runTask(client, sdk, { name, args, answers, task });
      return client.callTool({ name, arguments: args }, sdk);
    },
    followsTask: () => task.id !== undefined,
  };
}

type TaskRun = { name: string; args: Record<string, unknown>; answers: Answers; task: { id?: string } };

type SdkOptions = RequestOptions & { toolDefinition?: Tool };

async function runTask(client: Client, sdk: SdkOptions, run: TaskRun): Promise<CallToolResult> {
  const { name, args, answers, task } = run;
  const options: ToolTaskOptions = {
    timeoutMs: TASK_DEADLINE_MS,
    toolDefinition: sdk.toolDefinition,
    signal: sdk.signal,
    requestTimeoutMs: sdk.timeout,
    onresumptiontoken: sdk.onresumptiontoken,
    onprogress: sdk.onprogress,
    onTaskCreated: (id) => (task.id = id),
    onProgress: taskProgress(sdk.onprogress),
    onInputRequired: (requests, signal) => answerInputRequests(requests, answers, signal),
  };
  try {
    if (task.id !== undefined) return await resumeToolTask(client, task.id, options);
    return await callToolAsTask(client, { name, arguments: args }, options);
  } catch (error) {
    // The connection was lost, not the task: what lost it decides the recovery, which then resumes the task.
    throw error instanceof TaskInterruptedError ? error.cause : error;
  }
}

/** A task's changes as progress: a count that goes up with each, and its status message. */
function taskProgress(onProgress: ((progress: Progress) => void) | undefined): ((task: TaskState) => void) | undefined {
  if (!onProgress) return undefined;
  let seen = 0;
  return (task) => onProgress({ progress: ++seen, message: task.statusMessage ?? task.status });
}

/** Answers a task's keyed questions with the client's own handlers, as outside tasks; `signal`: the call stopped. */
async function answerInputRequests(
  requests: Record<string, unknown>,
  answers: Answers,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const handler = (method: string | undefined) =>
    method === "elicitation/create"
      ? answers.elicitation
      : method === "sampling/createMessage"
        ? answers.sampling
        : method === "roots/list" && answers.roots
          ? () => ({ roots: answers.roots!() })
          : undefined;
  // Every question is checked first: a form the user filled in for a task whose other question fails would be lost.
  const asked = Object.entries(requests).map(([key, request]) => {
    const { method, params } = (request ?? {}) as { method?: string; params?: never };
    const answer = handler(method);
    if (!answer) throw new Error(`the task asked for ${method ?? "something"}, which this client does not answer`);
    // Checked as the SDK checks a request outside tasks: a handler given no `params`, or no `maxTokens`, breaks.
    const schema = { "elicitation/create": ElicitRequestSchema, "sampling/createMessage": CreateMessageRequestSchema };
    const issues = schema[method as keyof typeof schema]?.safeParse({ method, params }).error?.issues ?? [];
    const wrong = issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ");
    if (wrong) throw new Error(`the task's ${method} request (key '${key}') is not valid: ${wrong}`);
    return [key, answer, params] as const;
  });
  // Gathered as entries: a key the server chose may be `__proto__`, which an assignment would not keep.
  const responses: Array<[string, unknown]> = [];
  for (const [key, answer, params] of asked) responses.push([key, await answer(params!, signal)]);
  return Object.fromEntries(responses);
}
