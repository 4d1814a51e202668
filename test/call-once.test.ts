/**
 * No call runs twice without consent: a tool call whose server died after it received the call is sent again only
 * when the tool says it is safe to repeat (`readOnlyHint`, `idempotentHint`) or the server's `resendAfterDrop` names
 * it; otherwise the model is told it may or may not have run. Real pi in-process (faux model), a real stdio server
 * (test/fixtures/crash-after-call.ts) that counts every call it receives and exits 20 ms after the first of each tool.
 * A call that never reached the server is sent once it is up: made during an outage (test/lifecycle.test.ts, "stopped
 * and restarted on the same port"), on a lazy server's first call (test/bridge.test.ts, "a lazy server"), after a 404
 * for a forgotten session (test/http.test.ts, "a server that forgot the session"); a task is followed by its id after a
 * restart (test/protocol-revisions.test.ts, "a task-based call survives its server's restart").
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { neverConnected } from "../src/common/errors.ts";
import { kindOf } from "../src/common/error-kinds.ts";
import { ServerPool } from "../src/connection/http/http-pool.ts";
import { type InProcessPi, startInProcessPi } from "./pi-harness.ts";
import { RecordingUI } from "./recording-ui.ts";
import { EXTENSION_DIR, REPO_ROOT, tempDir } from "./helpers.ts";
import { bundledFixture } from "./fixture-bundle.ts";

const FIXTURE = path.join(REPO_ROOT, "test", "fixtures", "crash-after-call.ts");
const LIMIT = 256 * 1024;

interface ToolResult {
  role: "toolResult";
  toolName: string;
  isError: boolean;
  content: Array<{ type: string; text?: string }>;
}

describe("a call whose server dies under it (real pi, real stdio server)", { timeout: 180_000 }, () => {
  const project = tempDir("mcp-bridge-call-once-project-");
  const agentDir = tempDir("mcp-bridge-call-once-agent-");
  const counter = path.join(project.dir, "calls.txt");
  const originalCwd = process.cwd();
  const saved = { ...process.env };
  const ui = new RecordingUI();
  let pi: InProcessPi;

  before(async () => {
    const entry = {
      command: process.execPath,
      args: [bundledFixture(FIXTURE)],
      env: { CALL_COUNTER: counter, FLOOD_BYTES: String(LIMIT * 2) },
      // Every tool runs without a dialog (a destructive one needs its exact name), so nothing but the bridge decides.
      autoApprove: ["wipe", "peek", "bump", "flood", "status"],
      resendAfterDrop: ["bu?p"],
      maxMessageBytes: LIMIT,
      reconnect: { maxAttempts: 10, initialDelay: 50, maxDelay: 200 },
    };
    writeFileSync(
      path.join(agentDir.dir, "mcp.json"),
      JSON.stringify({ exposure: "direct", mcpServers: { once: entry } }),
    );
    Object.assign(process.env, { PI_CODING_AGENT_DIR: agentDir.dir, PI_MCP_STARTUP_BUDGET_MS: "60000" });
    process.chdir(project.dir);
    pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
    await pi.session.bindExtensions({ uiContext: ui.context() });
    assert.ok(
      pi.session.getAllTools().some((t) => t.name === "mcp_once_wipe"),
      "the server's tools are registered",
    );
  });

  after(async () => {
    await pi?.close();
    process.chdir(originalCwd);
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
    project.cleanup();
    agentDir.cleanup();
  });

  /** The faux model calls `tool` once; its result as pi gave it to the model. */
  async function modelCalls(tool: string): Promise<{ text: string; isError: boolean }> {
    pi.faux.setResponses([
      fauxAssistantMessage([fauxToolCall(`mcp_once_${tool}`, {})], { stopReason: "toolUse" }),
      fauxAssistantMessage("done"),
    ]);
    await pi.session.prompt(`call ${tool}`);
    const result = (pi.session.messages as unknown as ToolResult[]).filter((m) => m.role === "toolResult").at(-1)!;
    assert.equal(result.toolName, `mcp_once_${tool}`);
    return { text: result.content.map((c) => c.text ?? "").join("\n"), isError: result.isError };
  }

  /** The processes that received a call of `tool`, one per receipt. */
  const receipts = (tool: string) =>
    existsSync(counter)
      ? readFileSync(counter, "utf8")
          .split("\n")
          .filter((line) => line.startsWith(`${tool} `))
          .map((line) => line.split(" ")[1])
      : [];

  test("a destructive tool runs exactly once: the model is told it may or may not have run; the server comes back", async () => {
    const result = await modelCalls("wipe");
    assert.equal(receipts("wipe").length, 1, "the server received the call once");
    assert.equal(result.isError, true, result.text);
    assert.match(result.text, /connection to MCP server 'once' dropped during the call of tool 'wipe'/);
    assert.match(result.text, /may or may not have run on the server/);
    assert.match(result.text, /did not send it again/);
    assert.match(result.text, /add "wipe" to "resendAfterDrop" of server "once"/);
    const status = await modelCalls("status");
    assert.equal(status.isError, false, status.text);
    assert.match(status.text, /^up \(pid \d+\)$/);
    assert.notEqual(status.text.match(/\d+/)![0], receipts("wipe")[0], "a new process answers");
    assert.equal(receipts("wipe").length, 1, "the reconnect sent nothing more");
  });

  test("the approval covers that one call: the next call of the tool asks again, and runs once", async () => {
    ui.answers = ["Allow once"];
    const asked = ui.asked.length;
    const first = await modelCalls("erase");
    assert.equal(first.isError, true, first.text);
    assert.match(first.text, /may or may not have run/);
    assert.equal(ui.asked.length - asked, 1, "asked once, and not again for a call that was not sent again");
    ui.answers = ["Allow once"];
    const second = await modelCalls("erase");
    assert.equal(ui.asked.length - asked, 2, "the next call is a new call: asked again");
    assert.deepEqual(ui.answers, [], "every answer was used");
    assert.equal(second.isError, false, second.text);
    assert.equal(receipts("erase").length, 2, "one receipt per approved call");
  });

  test("a read-only tool is sent again on the restarted server and its answer reaches the model", async () => {
    const result = await modelCalls("peek");
    assert.equal(result.isError, false, result.text);
    const [first, second] = receipts("peek");
    assert.equal(receipts("peek").length, 2, "received twice: once by the dying process, once by the new one");
    assert.notEqual(first, second);
    assert.equal(result.text, `peek ran (pid ${second})`);
  });

  test("a tool without hints that `resendAfterDrop` names is sent again", async () => {
    const result = await modelCalls("bump");
    assert.equal(result.isError, false, result.text);
    assert.equal(receipts("bump").length, 2);
    assert.equal(result.text, `bump ran (pid ${receipts("bump")[1]})`);
  });

  test("a call whose answer was over `maxMessageBytes` is not sent again, though it is idempotent", async () => {
    const result = await modelCalls("flood");
    assert.equal(receipts("flood").length, 1, "the server received the call once");
    assert.equal(result.isError, true, result.text);
    assert.match(result.text, /may or may not have run/);
    assert.match(result.text, /message over the limit was likely its answer/);
    assert.match((await modelCalls("status")).text, /^up \(pid \d+\)$/);
  });
});

describe("which failed requests never reached the server (real sockets on 127.0.0.1)", () => {
  /** What a request to `port` fails with, through the same fetch the bridge's remote transports use. */
  async function failureOf(port: number): Promise<unknown> {
    const pool = new ServerPool({});
    try {
      await pool.fetch(`http://127.0.0.1:${port}/mcp`, { method: "POST", body: "{}" });
    } catch (error) {
      return error;
    } finally {
      await pool.destroy();
    }
    assert.fail("the request was expected to fail");
  }

  test("a refused connection never carried the request; a connection the server cut under it may have", async () => {
    const cutting = createServer((req) => req.socket.destroy());
    await new Promise<void>((resolve) => cutting.listen(0, "127.0.0.1", resolve));
    const { port } = cutting.address() as AddressInfo;
    try {
      const cut = await failureOf(port);
      assert.equal(kindOf(cut), "transport", String(cut));
      assert.equal(neverConnected(cut), false, "the server had the request when it cut the connection");
    } finally {
      await new Promise((resolve) => cutting.close(resolve));
    }
    const refused = await failureOf(port);
    assert.equal(kindOf(refused), "transport", String(refused));
    assert.equal(neverConnected(refused), true, "nothing listens on the port any more");
  });
});
