/**
 * Tool calls run as tasks (src/connection/tasks/tool-tasks.ts) on the v2 client, against real servers over HTTP on
 * 127.0.0.1: a v2-SDK server speaking 2026-07-28 (the tasks extension) and, through the SDK's fallback, 2025-11-25;
 * and a 1.x-SDK server with the SDK's own experimental tasks (2025-11-25). Each: the task completes with progress,
 * aborting cancels it on the server, a task outlives a killed server and is resumed on a new client, and a plain tool
 * still works.
 */
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { Client, type ElicitResult, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  callToolAsTask,
  resumeToolTask,
  TaskCancelledError,
  TaskFailedError,
  TaskInputRequiredError,
  TaskInterruptedError,
  TaskTimeoutError,
  TaskUnknownError,
  toolTaskDialect,
  type TaskDialect,
  type TaskState,
  type ToolTaskOptions,
} from "../src/connection/tasks/tool-tasks.ts";
import { spawnServer } from "./fixtures/child-server.ts";
import { startLegacyTaskServer, type RunningLegacyTaskServer } from "./fixtures/legacy-task-server.ts";
import { startModernServer, type RunningModernServer } from "./fixtures/modern-server.ts";
import type { JobStore } from "./fixtures/task-jobs.ts";
import {
  dialectOfVersion,
  parseCreation,
  parseTask,
  pollDelay,
  taskDialectFor,
} from "../src/connection/tasks/task-wire.ts";
import { toolCallRun } from "../src/connection/tool-call.ts";
import { REPO_ROOT, tempDir } from "./helpers.ts";

const MODERN_FIXTURE = path.join(REPO_ROOT, "test", "fixtures", "modern-server.ts");
const LEGACY_FIXTURE = path.join(REPO_ROOT, "test", "fixtures", "legacy-task-server.ts");

type Mode = "auto" | "legacy";

describe("task wire shapes (pure)", () => {
  const base = {
    taskId: "t1",
    status: "working",
    createdAt: "2026-01-01T00:00:00Z",
    lastUpdatedAt: "2026-01-01T00:00:00Z",
  };

  it("reads a task in either revision's shape, and nothing else", () => {
    assert.deepEqual(parseTask({ ...base, ttl: 1000, pollInterval: 50 }), {
      ...base,
      statusMessage: undefined,
      ttlMs: 1000,
      pollIntervalMs: 50,
    });
    assert.equal(parseTask({ ...base, ttlMs: null, pollIntervalMs: 20 })?.ttlMs, null);
    assert.equal(parseTask({ ...base, status: "sleeping" }), undefined);
    assert.equal(parseTask({ ...base, taskId: "" }), undefined);
    assert.equal(parseTask([base]), undefined);
    assert.deepEqual(parseTask({ ...base, status: "completed", result: { content: [] } })?.result, { content: [] });
  });

  it("tells a created task (nested or flat) from a plain result", () => {
    assert.equal((parseCreation({ task: base }) as { task: { taskId: string } }).task.taskId, "t1");
    assert.equal((parseCreation({ resultType: "task", ...base }) as { task: { taskId: string } }).task.taskId, "t1");
    assert.deepEqual(parseCreation({ content: [{ type: "text", text: "x" }] }), {
      result: { content: [{ type: "text", text: "x" }] },
    });
    assert.equal(parseCreation({ resultType: "task" }), undefined);
    assert.equal(parseCreation("nope"), undefined);
  });

  it("waits as the server suggests, within bounds and never past the deadline", () => {
    const bounds = { minMs: 100, maxMs: 5000 };
    assert.equal(pollDelay({ taskId: "t", status: "working", pollIntervalMs: 250 }, bounds, 10_000), 250);
    assert.equal(pollDelay({ taskId: "t", status: "working", pollIntervalMs: 1 }, bounds, 10_000), 100);
    assert.equal(pollDelay({ taskId: "t", status: "working", pollIntervalMs: 60_000 }, bounds, 10_000), 5000);
    assert.equal(pollDelay({ taskId: "t", status: "working" }, bounds, 10_000), 100);
    assert.equal(pollDelay({ taskId: "t", status: "working", pollIntervalMs: 250 }, bounds, 30), 30);
  });

  it("asks for a task only where the server (and on 2025-11-25 the tool) allows it", () => {
    assert.equal(dialectOfVersion("2026-07-28"), "extension");
    assert.equal(dialectOfVersion("2025-11-25"), "core");
    assert.equal(dialectOfVersion(undefined), "core");
    const core = { tasks: { requests: { tools: { call: {} } } } };
    assert.equal(taskDialectFor("core", core, { execution: { taskSupport: "required" } }), "core");
    assert.equal(taskDialectFor("core", core, {}), undefined);
    assert.equal(taskDialectFor("core", {}, { execution: { taskSupport: "optional" } }), undefined);
    assert.equal(
      taskDialectFor("extension", { extensions: { "io.modelcontextprotocol/tasks": {} } }, undefined),
      "extension",
    );
    assert.equal(taskDialectFor("extension", core, { execution: { taskSupport: "optional" } }), undefined);
  });
});

async function connect(url: string, mode: Mode, fetch?: typeof globalThis.fetch): Promise<Client> {
  const client = new Client(
    { name: "tool-tasks-test", version: "0.0.0" },
    { versionNegotiation: { mode }, capabilities: { elicitation: {} } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch }));
  return client;
}

/** Resolves when `check` holds for a reported task state; rejects after `ms` (bounded: a test never hangs on it). */
function progressWatch(ms = 15_000) {
  const seen: TaskState[] = [];
  let wake: (() => void) | undefined;
  let check: ((s: TaskState) => boolean) | undefined;
  const onProgress = (state: TaskState) => {
    seen.push(state);
    if (check?.(state)) wake?.();
  };
  const until = (want: (s: TaskState) => boolean, what: string) =>
    new Promise<void>((resolve, reject) => {
      if (seen.some(want)) return resolve();
      const timer = setTimeout(
        () => reject(new Error(`no progress report ${what} within ${ms} ms; saw ${JSON.stringify(seen)}`)),
        ms,
      );
      check = want;
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  return { seen, onProgress, until };
}

const atStep = (n: number) => (s: TaskState) => (s.statusMessage ?? "").startsWith(`step ${n} `);
const textOf = (result: { content: unknown[] }) =>
  (result.content as Array<{ text?: string }>).map((c) => c.text ?? "").join("");

interface Bed {
  name: string;
  mode: Mode;
  dialect: TaskDialect;
  fixture: string;
  start(stateDir: string): Promise<{ url: string; store: JobStore; close(): Promise<void> }>;
}

const BEDS: Bed[] = [
  {
    name: "v2 server, 2026-07-28 (tasks extension)",
    mode: "auto",
    dialect: "extension",
    fixture: MODERN_FIXTURE,
    start: (stateDir) => startModernServer({ stateDir }),
  },
  {
    name: "v2 server, 2025-11-25 (its stateless fallback)",
    mode: "legacy",
    dialect: "core",
    fixture: MODERN_FIXTURE,
    start: (stateDir) => startModernServer({ stateDir }),
  },
  {
    name: "1.x server, 2025-11-25 (the SDK's experimental tasks)",
    mode: "auto",
    dialect: "core",
    fixture: LEGACY_FIXTURE,
    start: (stateDir) => startLegacyTaskServer({ stateDir }),
  },
];

for (const bed of BEDS) {
  describe(`tool tasks: ${bed.name}`, () => {
    const tmp = tempDir("mcp-bridge-tasks-");
    let server: RunningModernServer | RunningLegacyTaskServer | Awaited<ReturnType<Bed["start"]>>;
    let client: Client;
    const base = (extra: Partial<ToolTaskOptions> = {}): ToolTaskOptions => ({
      timeoutMs: 30_000,
      minPollMs: 10,
      ...extra,
    });

    before(async () => {
      server = await bed.start(path.join(tmp.dir, "state"));
      client = await connect(server.url, bed.mode);
    });
    after(async () => {
      await client?.close();
      await server?.close();
      tmp.cleanup();
    });

    it("asks for a task in the dialect of the revision the client speaks", () => {
      assert.equal(toolTaskDialect(client, { execution: { taskSupport: "optional" } }), bed.dialect);
      // 2025-11-25 leaves the choice to the client, by tool; 2026-07-28 to the server, whatever the tool.
      assert.equal(
        toolTaskDialect(client, { execution: { taskSupport: "forbidden" } }),
        bed.dialect === "extension" ? "extension" : undefined,
      );
    });

    it("a task completes, reporting its progress, with its id given at once", async () => {
      const watch = progressWatch();
      let created: string | undefined;
      // The last step waits for the gate, so the poller sees step 2 however late it runs on a busy machine.
      const gate = path.join(tmp.dir, `done-${bed.dialect}-${bed.mode}`);
      const call = callToolAsTask(
        client,
        { name: "long_job", arguments: { steps: 3, stepMs: 10, gate } },
        base({
          onProgress: watch.onProgress,
          onTaskCreated: (id, dialect) => ((created = id), assert.equal(dialect, bed.dialect)),
        }),
      );
      await watch.until(atStep(2), "of step 2");
      writeFileSync(gate, "");
      const result = await call;
      assert.match(
        textOf(result),
        /^done after 3 steps \(pid \d+\)$/,
        "the result came from the task, not a plain call",
      );
      assert.ok(created, "the task id was given");
      assert.equal(server.store.get(created!)?.status, "completed");
      assert.equal(watch.seen.at(-1)?.status, "completed");
    });

    it("aborting the call cancels the task on the server", async () => {
      const watch = progressWatch();
      const abort = new AbortController();
      let created: string | undefined;
      const gate = path.join(tmp.dir, `never-${bed.dialect}-${bed.mode}`);
      const call = callToolAsTask(
        client,
        { name: "long_job", arguments: { steps: 2, stepMs: 10, gate } },
        base({ signal: abort.signal, onProgress: watch.onProgress, onTaskCreated: (id) => (created = id) }),
      );
      const outcome = call.then(
        () => undefined,
        (error: unknown) => error,
      );
      await watch.until(atStep(1), "of step 1");
      abort.abort();
      const error = await outcome;
      assert.ok(error instanceof TaskCancelledError && error.requested, `cancelled at our request: ${String(error)}`);
      assert.equal(error.taskId, created);
      assert.ok(server.store.cancelled.includes(created!), "the server saw the cancel");
      assert.equal(server.store.get(created!)?.status, "cancelled");
      assert.ok(!existsSync(gate));
    });

    it("a task that fails, a task the server does not know, and a task past its time end in typed errors", async () => {
      const failed = await callToolAsTask(
        client,
        { name: "long_job", arguments: { steps: 1, stepMs: 10, fail: true } },
        base(),
      ).then(
        (result) => result,
        (error: unknown) => error,
      );
      // The 1.x SDK's tasks/result hands back what its store kept for a failed task: a tool result marked as an error.
      if (bed.fixture === LEGACY_FIXTURE) assert.equal((failed as { isError?: boolean }).isError, true, String(failed));
      else assert.ok(failed instanceof TaskFailedError && /failed on purpose/.test(failed.message), String(failed));
      // Failed with invalid params (-32602): the task failed, the server did not forget it.
      const invalid = await callToolAsTask(
        client,
        { name: "long_job", arguments: { steps: 1, stepMs: 10, fail: -32602 } },
        base(),
      ).catch((error: unknown) => error);
      if (bed.fixture !== LEGACY_FIXTURE)
        assert.ok(invalid instanceof TaskFailedError && /failed on purpose/.test(invalid.message), String(invalid));

      const unknown = "00000000-0000-4000-8000-000000000000";
      await assert.rejects(
        resumeToolTask(client, unknown, base()),
        (error: unknown) => error instanceof TaskUnknownError && error.taskId === unknown,
      );

      let created: string | undefined;
      const gate = path.join(tmp.dir, `late-${bed.dialect}-${bed.mode}`);
      await assert.rejects(
        callToolAsTask(
          client,
          { name: "long_job", arguments: { steps: 1, gate } },
          base({ timeoutMs: 1500, onTaskCreated: (id) => (created = id) }),
        ),
        (error: unknown) => error instanceof TaskTimeoutError && error.taskId === created,
      );
      assert.equal(
        server.store.get(created!)?.status,
        "cancelled",
        "a task past its time is cancelled, not left running",
      );
    });

    it(
      "a task that asks for input is answered through the caller (2026-07-28), or cancelled when it cannot be",
      { skip: bed.dialect !== "extension" },
      async () => {
        const asked: Array<Record<string, unknown>> = [];
        const watch = progressWatch();
        const result = await callToolAsTask(
          client,
          { name: "long_job", arguments: { steps: 2, stepMs: 10, ask: true } },
          base({
            onProgress: watch.onProgress,
            onInputRequired: async (requests) => {
              asked.push(requests);
              return Object.fromEntries(
                Object.keys(requests).map((key) => [key, { action: "accept", content: { go: true } }]),
              );
            },
          }),
        );
        assert.match(textOf(result), /^done after 2 steps \(pid \d+\), answer: accept \{"go":true\}$/);
        assert.equal(asked.length, 1, "asked once, however many polls saw the question");
        assert.equal((Object.values(asked[0]!)[0] as { method?: string }).method, "elicitation/create");
        assert.ok(watch.seen.some((s) => s.status === "input_required"));

        let created: string | undefined;
        await assert.rejects(
          callToolAsTask(
            client,
            { name: "long_job", arguments: { steps: 1, stepMs: 10, ask: true } },
            base({ onTaskCreated: (id) => (created = id) }),
          ),
          (error: unknown) => error instanceof TaskInputRequiredError && error.taskId === created,
        );
        assert.equal(server.store.get(created!)?.status, "cancelled");

        // A question the caller could not answer (a method it does not handle): cancelled as well, not left waiting.
        await assert.rejects(
          callToolAsTask(
            client,
            { name: "long_job", arguments: { steps: 1, stepMs: 10, ask: true } },
            base({
              onTaskCreated: (id) => (created = id),
              onInputRequired: () =>
                Promise.reject(new Error("the task asked for something this client does not answer")),
            }),
          ),
          /does not answer/,
        );
        assert.equal(server.store.get(created!)?.status, "cancelled");

        // Escape while the question was being answered: the task is cancelled, as an abort at any other time cancels it.
        const abort = new AbortController();
        await assert.rejects(
          callToolAsTask(
            client,
            { name: "long_job", arguments: { steps: 1, stepMs: 10, ask: true } },
            base({
              signal: abort.signal,
              onTaskCreated: (id) => (created = id),
              onInputRequired: async () => (abort.abort(), {}),
            }),
          ),
          (error: unknown) => error instanceof TaskCancelledError && error.requested && error.taskId === created,
        );
        assert.equal(server.store.get(created!)?.status, "cancelled");
      },
    );

    it(
      "a task's question asked while the call is stopped: its dialog is dismissed, and the call ends",
      { skip: bed.dialect !== "extension", timeout: 15_000 },
      async () => {
        const abort = new AbortController();
        const dialogs: string[] = [];
        // The user does not answer; the call is stopped (the agent aborted) while the dialog is open.
        const elicitation = (_params: unknown, cancelled?: AbortSignal) =>
          new Promise<ElicitResult>((resolve) => {
            dialogs.push("open");
            cancelled?.addEventListener("abort", () => {
              dialogs.push("dismissed");
              resolve({ action: "cancel" });
            });
            abort.abort();
          });
        const call = toolCallRun("long_job", { steps: 1, stepMs: 10, ask: true }, undefined, { elicitation });
        await assert.rejects(
          call.run(client, { signal: abort.signal }),
          (error) => error instanceof TaskCancelledError,
        );
        assert.deepEqual(dialogs, ["open", "dismissed"]);
      },
    );

    it(
      "a task's question under a key every object has (`__proto__`) is answered under that key",
      { skip: bed.dialect !== "extension", timeout: 15_000 },
      async () => {
        // What pi sends; the v2 SDK's server then drops that key itself, so the task goes on without the answer.
        const sent: unknown[] = [];
        const watching = await connect(server.url, bed.mode, async (url, init) => {
          const body = typeof init?.body === "string" ? (JSON.parse(init.body) as { method?: string }) : {};
          if (body.method === "tasks/update") sent.push(body);
          return fetch(url, init);
        });
        const elicitation = async (): Promise<ElicitResult> => ({ action: "accept", content: { go: true } });
        const args = { steps: 1, stepMs: 10, ask: true, askKey: "__proto__", gateMs: 1000 };
        await toolCallRun("long_job", args, undefined, { elicitation })
          .run(watching, {})
          .catch(() => undefined)
          .finally(() => watching.close());
        const responses = (sent[0] as { params: { inputResponses: object } }).params.inputResponses;
        assert.deepEqual(Object.getOwnPropertyDescriptor(responses, "__proto__")?.value, {
          action: "accept",
          content: { go: true },
        });
      },
    );

    it(
      "a task that asks for a form and for something pi does not answer: the call fails before the form is shown",
      { skip: bed.dialect !== "extension", timeout: 15_000 },
      async () => {
        const forms: unknown[] = [];
        const elicitation = async (form: unknown): Promise<ElicitResult> => (forms.push(form), { action: "accept" });
        const args = { steps: 1, stepMs: 10, ask: true, askAlso: "tasks/unknown" };
        await assert.rejects(
          toolCallRun("long_job", args, undefined, { elicitation }).run(client, {}),
          /asked for tasks\/unknown, which this client does not answer/,
        );
        assert.deepEqual(forms, [], "the user is not asked for what cannot be sent");
      },
    );

    it(
      "a task's sampling request without the fields the spec requires (maxTokens, messages) fails the call, unasked",
      { skip: bed.dialect !== "extension", timeout: 15_000 },
      async () => {
        const asked: unknown[] = [];
        const sampling = async (params: unknown) => (asked.push(params), {}) as never;
        const elicitation = async (): Promise<ElicitResult> => ({ action: "accept", content: { go: true } });
        const args = { steps: 1, stepMs: 10, ask: true, askAlso: "sampling/createMessage" };
        await assert.rejects(
          toolCallRun("long_job", args, undefined, { elicitation, sampling }).run(client, {}),
          /the task's sampling\/createMessage request \(key 'also'\) is not valid: .*maxTokens/,
        );
        assert.deepEqual(asked, [], "nobody is asked what the server did not ask in full");
      },
    );

    it(
      "a call the server answers at once (no task) shows its progress, which keeps it alive past one request's time",
      { skip: bed.dialect !== "extension" },
      async () => {
        const progress: Array<{ message?: string }> = [];
        // Five steps of 300 ms: 1.5 s in all, past the 1 s a request may take without a word from the server.
        const result = await callToolAsTask(
          client,
          { name: "long_job", arguments: { steps: 5, stepMs: 300, inline: true } },
          base({ requestTimeoutMs: 1000, onprogress: (p) => progress.push(p) }),
        );
        assert.equal(textOf(result), "done after 5 steps (no task)");
        assert.deepEqual(
          progress.map((p) => p.message),
          ["step 1 of 5", "step 2 of 5", "step 3 of 5", "step 4 of 5"],
        );
      },
    );

    it(
      "a 2026-07-28 task call mirrors the tool's `x-mcp-header` parameters into headers, as a plain call does",
      { skip: bed.dialect !== "extension" },
      async () => {
        const definition = (await client.listTools()).tools.find((tool) => tool.name === "long_job");
        const result = await callToolAsTask(
          client,
          { name: "long_job", arguments: { steps: 1, stepMs: 10, label: "nightly" } },
          base({ toolDefinition: definition }),
        );
        assert.match(textOf(result), /^done after 1 steps \(pid \d+\)$/, "the server had the header it wants");
      },
    );

    it(
      "a 2025-11-25 task in input_required longer than one request may take: tasks/result is asked again, to its end",
      { skip: bed.dialect !== "core" || bed.fixture !== MODERN_FIXTURE },
      async () => {
        // The job waits 4 s for an answer that never comes, then fails; each tasks/result may take 1 s (the task's
        // other requests too, which a loaded machine can take a few hundred ms to answer).
        const outcome = await callToolAsTask(
          client,
          { name: "long_job", arguments: { steps: 1, stepMs: 10, ask: true, gateMs: 4000 } },
          base({ requestTimeoutMs: 1000 }),
        ).catch((error: unknown) => error);
        assert.ok(outcome instanceof TaskFailedError && /no answer came/.test(outcome.message), String(outcome));
      },
    );

    it("a plain tool still works, on the connection the task calls went through", async () => {
      const result = await client.callTool({ name: "echo", arguments: { text: "plain" } });
      assert.equal(textOf(result as { content: unknown[] }), "plain");
      const inline = await client.callTool({ name: "long_job", arguments: { steps: 1, stepMs: 0 } });
      assert.equal(
        textOf(inline as { content: unknown[] }),
        "done after 1 steps (no task)",
        "a call that asks for no task gets none",
      );
    });
  });

  describe(`tool tasks across a server restart: ${bed.name}`, () => {
    const tmp = tempDir("mcp-bridge-tasks-restart-");
    const stateDir = path.join(tmp.dir, "state");
    after(() => tmp.cleanup());

    it("a task outlives its server: a new server on the same port finishes it, a new client resumes it", async () => {
      const first = await spawnServer(bed.fixture, ["--state", stateDir, "--port", "0"]);
      const gate = path.join(tmp.dir, "gate");
      let second: Awaited<ReturnType<typeof spawnServer>> | undefined;
      const clients: Client[] = [];
      try {
        const client = await connect(first.url, bed.mode);
        clients.push(client);
        const watch = progressWatch();
        let taskId: string | undefined;
        const call = callToolAsTask(
          client,
          { name: "long_job", arguments: { steps: 2, stepMs: 10, gate } },
          {
            timeoutMs: 30_000,
            minPollMs: 10,
            onProgress: watch.onProgress,
            onTaskCreated: (id) => (taskId = id),
          },
        ).then(
          () => undefined,
          (error: unknown) => error,
        );
        await watch.until(atStep(1), "of step 1");
        await first.kill();
        const lost = await call;
        assert.ok(lost instanceof TaskInterruptedError, `the first call reports the lost connection: ${String(lost)}`);
        assert.equal(lost.taskId, taskId);

        second = await spawnServer(bed.fixture, ["--state", stateDir, "--port", String(first.port)]);
        assert.equal(second.port, first.port);
        writeFileSync(gate, "go");
        const fresh = await connect(second.url, bed.mode);
        clients.push(fresh);
        const after = progressWatch();
        const result = await resumeToolTask(fresh, taskId!, {
          timeoutMs: 30_000,
          minPollMs: 10,
          onProgress: after.onProgress,
        });
        assert.equal(textOf(result), `done after 2 steps (pid ${second.pid})`, "the new server finished the task");
        assert.equal(after.seen.at(-1)?.status, "completed");
      } finally {
        for (const c of clients) await c.close().catch(() => {});
        await first.kill();
        await second?.kill();
      }
    });
  });
}
