/**
 * The v2-SDK fixture server (test/fixtures/modern-server.ts) offers what tests of the 2026-07-28 revision need: it
 * negotiates 2026-07-28, announces tool list changes on `subscriptions/listen`, asks for input through
 * `input_required` results, and runs tasks over stdio as well as HTTP.
 */
import assert from "node:assert/strict";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { Client, StreamableHTTPClientTransport, type Tool } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { callToolAsTask } from "../src/connection/tasks/tool-tasks.ts";
import { startModernServer, type RunningModernServer } from "./fixtures/modern-server.ts";
import { REPO_ROOT, tempDir } from "./helpers.ts";
import { bundledFixture } from "./fixture-bundle.ts";

const MODERN_FIXTURE = path.join(REPO_ROOT, "test", "fixtures", "modern-server.ts");

/** Resolves with the first value `register` hands its callback; rejects after `ms`. */
function firstEvent<T>(ms: number, what: string, register: (deliver: (value: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
    register((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}

describe("modern fixture server over HTTP", () => {
  const tmp = tempDir("mcp-bridge-modern-");
  let server: RunningModernServer;
  before(async () => {
    server = await startModernServer({ stateDir: path.join(tmp.dir, "state") });
  });
  after(async () => {
    await server.close();
    tmp.cleanup();
  });

  it("speaks 2026-07-28 and announces a changed tool list on subscriptions/listen", async () => {
    let deliver: ((tools: Tool[]) => void) | undefined;
    const changed = firstEvent<Tool[]>(15_000, "tools/list_changed", (d) => (deliver = d));
    const client = new Client(
      { name: "modern-test", version: "0.0.0" },
      {
        versionNegotiation: { mode: "auto" },
        listChanged: { tools: { onChanged: (error, tools) => (error ? undefined : deliver?.(tools ?? [])) } },
      },
    );
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28");
      const before = await client.listTools();
      assert.ok(!before.tools.some((t) => t.name === "late_tool"));
      await client.callTool({ name: "add_tool", arguments: { name: "late_tool" } });
      const tools = await changed;
      assert.ok(
        tools.some((t) => t.name === "late_tool"),
        `the new list has the tool: ${tools.map((t) => t.name).join(", ")}`,
      );
    } finally {
      await client.close();
    }
  });

  it("asks for input with an input_required result, answered by the client's elicitation handler", async () => {
    const client = new Client(
      { name: "modern-test", version: "0.0.0" },
      { versionNegotiation: { mode: "auto" }, capabilities: { elicitation: {} } },
    );
    const asked: string[] = [];
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(String(request.params.message));
      return { action: "accept", content: { name: "Ada" } };
    });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      const calls = server.calls.length;
      const result = await client.callTool({ name: "ask_name", arguments: {} });
      assert.deepEqual(result.content, [{ type: "text", text: "hello Ada" }]);
      assert.deepEqual(asked, ["Your name?"]);
      assert.equal(
        server.calls.slice(calls).filter((c) => c.name === "ask_name").length,
        2,
        "two rounds: the question, then the answer",
      );
    } finally {
      await client.close();
    }
  });
});

describe("modern fixture server over stdio", () => {
  const tmp = tempDir("mcp-bridge-modern-stdio-");
  after(() => tmp.cleanup());

  it("negotiates 2026-07-28 and runs a task", async () => {
    const client = new Client({ name: "modern-test", version: "0.0.0" }, { versionNegotiation: { mode: "auto" } });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bundledFixture(MODERN_FIXTURE), "--stdio", "--state", path.join(tmp.dir, "state")],
      stderr: "pipe",
    });
    try {
      await client.connect(transport);
      assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28");
      let created: string | undefined;
      const result = await callToolAsTask(
        client,
        { name: "long_job", arguments: { steps: 2, stepMs: 10 } },
        { timeoutMs: 30_000, minPollMs: 10, onTaskCreated: (id) => (created = id) },
      );
      assert.ok(created);
      assert.match(String((result.content[0] as { text?: string }).text), /^done after 2 steps/);
    } finally {
      await client.close();
    }
  });
});
