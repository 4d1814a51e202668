/**
 * Two protocol revisions in one pi session: a server on the SDK's v2 server speaking 2026-07-28 (no handshake, no
 * session; `server/discover`, `subscriptions/listen`, `input_required` results, tasks) and a 1.x server speaking
 * 2025-11-25, both with `protocolVersion` left at "auto". Real pi in-process with the faux model; the v2 server runs
 * in a child process, so it can be killed mid-task and started again on the same port and task directory.
 */
import assert from "node:assert/strict";
import { readdirSync, realpathSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { type InProcessPi, startInProcessPi } from "./pi-harness.ts";
import { RecordingUI } from "./recording-ui.ts";
import { type ChildServer, spawnServer } from "./fixtures/child-server.ts";
import { EXTENSION_DIR, fixtureEntry, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";

const MODERN_SERVER = path.join(REPO_ROOT, "test", "fixtures", "modern-server.ts");

interface ToolResult {
  role: "toolResult";
  toolName: string;
  isError: boolean;
  content: Array<{ type: string; text?: string }>;
}

describe("a 2026-07-28 server and a 2025-11-25 server in one pi session", { timeout: 180_000 }, () => {
  const project = tempDir("mcp-bridge-revisions-project-");
  const agentDir = tempDir("mcp-bridge-revisions-agent-");
  const state = tempDir("mcp-bridge-revisions-tasks-");
  const originalCwd = process.cwd();
  const ui = new RecordingUI();
  let modern: ChildServer;
  let pi: InProcessPi;

  before(async () => {
    modern = await spawnServer(MODERN_SERVER, ["--state", state.dir, "--poll-ms", "50"]);
    const servers = { modern: { url: modern.url }, legacy: fixtureEntry() };
    // User-level, so no project trust; approval prompts off, as a user may set them (approval has its own tests); the
    // model calls the tools directly.
    writeFileSync(
      path.join(agentDir.dir, "mcp.json"),
      JSON.stringify({ approval: "never", exposure: "direct", mcpServers: servers }),
    );
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
    await pi.session.bindExtensions({ uiContext: ui.context() });
  });

  after(async () => {
    await pi?.close();
    await modern?.kill();
    process.chdir(originalCwd);
    for (const dir of [project, agentDir, state]) dir.cleanup();
  });

  /** The model calls each tool given, then ends its turn; the results of that turn. */
  async function modelCalls(...calls: Array<[string, Record<string, unknown>]>): Promise<ToolResult[]> {
    const before = pi.session.messages.length;
    pi.faux.setResponses([
      fauxAssistantMessage(
        calls.map(([name, args]) => fauxToolCall(name, args)),
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("done"),
    ]);
    await pi.session.prompt("go");
    return pi.session.messages
      .slice(before)
      .filter((m) => (m as { role: string }).role === "toolResult") as unknown as ToolResult[];
  }

  const text = (result: ToolResult | undefined) => result?.content.map((c) => c.text ?? "").join("\n") ?? "";
  const toolNames = () => pi.session.getAllTools().map((t) => t.name);

  async function mcpListing(): Promise<string> {
    const printed: string[] = [];
    const originalLog = console.log;
    console.log = (...args: unknown[]) => printed.push(args.join(" "));
    try {
      await pi.session.prompt("/mcp list");
    } finally {
      console.log = originalLog;
    }
    return [...printed, ...ui.notices, ...ui.screens.flat()].join("\n");
  }

  test("each server's tools, called by the model, over the revision each speaks; /mcp shows it", async () => {
    const results = await modelCalls(["mcp_modern_add", { a: 2, b: 3 }], ["mcp_legacy_echo", { text: "from pi" }]);
    assert.equal(text(results.find((r) => r.toolName === "mcp_modern_add")), "5");
    assert.equal(text(results.find((r) => r.toolName === "mcp_legacy_echo")), "from pi");
    const listing = await mcpListing();
    assert.match(listing, /modern {2}connected {2}http {2}MCP 2026-07-28/);
    assert.match(listing, /legacy {2}connected {2}stdio {2}MCP 2025-11-25/);
  });

  test("list changes: each server's new tool is registered in the running session", async () => {
    await modelCalls(
      ["mcp_modern_add_tool", { name: "late_modern" }],
      ["mcp_legacy_mutate_tools", { add: "late_legacy" }],
    );
    // 2026-07-28 says so on its `subscriptions/listen` stream, 2025-11-25 with `notifications/tools/list_changed`.
    await waitFor(
      () => toolNames().includes("mcp_modern_late_modern") && toolNames().includes("mcp_legacy_late_legacy"),
      "both new tools",
      30_000,
    );
  });

  test("elicitation: a 2026-07-28 `input_required` result asks the user in pi's UI, and the call goes on with the answer", async () => {
    ui.answers = ["Fill in", "Ada", "Send"];
    const [result] = await modelCalls(["mcp_modern_ask_name", {}]);
    assert.equal(result!.isError, false, text(result));
    assert.match(text(result), /Ada/);
    assert.deepEqual(ui.answers, [], "every question was asked");
  });

  test("a task-based call survives its server's restart: the bridge reconnects and fetches the task's result", async () => {
    const gate = path.join(state.dir, "gate");
    // The task's status, reported as the call's progress, means the bridge has the task's id (from the server's answer
    // to the call) and has followed it: only then may the server go away. A record on disk alone is not enough on a
    // busy machine: the answer carrying the id may not have left the server yet, and a call never answered is sent again.
    let statusSeen = false;
    const unsubscribe = pi.session.subscribe((event) => {
      if (event.type === "tool_execution_update" && event.toolName === "mcp_modern_long_job") statusSeen = true;
    });
    const calling = modelCalls(["mcp_modern_long_job", { steps: 2, stepMs: 20, gate }]);
    await waitFor(() => statusSeen, "the task's first status to reach the call", 30_000);
    unsubscribe();
    assert.equal(readdirSync(state.dir).filter((f) => f.endsWith(".json")).length, 1, "the task exists on the server");
    const firstPid = modern.pid;
    await modern.kill();
    modern = await spawnServer(MODERN_SERVER, ["--state", state.dir, "--port", String(modern.port), "--poll-ms", "50"]);
    assert.notEqual(modern.pid, firstPid);
    writeFileSync(gate, "");
    const [result] = await calling;
    assert.equal(result!.isError, false, text(result));
    assert.match(
      text(result),
      new RegExp(`done after 2 steps \\(pid ${modern.pid}\\)`),
      "finished by the restarted server, not run again",
    );
    assert.equal(
      readdirSync(state.dir).filter((f) => f.endsWith(".json")).length,
      1,
      "one task: followed by its id, not started over",
    );
  });

  test("a call a tasks server answers at once (no task) shows the server's progress, as a plain call does", async () => {
    const updates: string[] = [];
    const unsubscribe = pi.session.subscribe((event) => {
      if (event.type === "tool_execution_update") updates.push(JSON.stringify(event));
    });
    const [result] = await modelCalls(["mcp_modern_long_job", { steps: 3, stepMs: 50, inline: true }]);
    unsubscribe();
    assert.equal(result!.isError, false, text(result));
    assert.match(text(result), /done after 3 steps \(no task\)/);
    assert.ok(
      updates.some((update) => update.includes("step 2 of 3")),
      `progress shown: ${updates.join("\n")}`,
    );
  });

  test("a task-based call sends the headers its tool's `x-mcp-header` parameters want, as a plain call does", async () => {
    const [result] = await modelCalls(["mcp_modern_long_job", { steps: 1, stepMs: 10, label: "nightly" }]);
    assert.equal(result!.isError, false, text(result));
    assert.match(text(result), /done after 1 steps/);
  });

  test("a task that asks for the roots (`input_required`) gets the project root, as every server is offered it", async () => {
    const [result] = await modelCalls(["mcp_modern_long_job", { steps: 1, stepMs: 10, ask: "roots" }]);
    assert.equal(result!.isError, false, text(result));
    assert.match(text(result), new RegExp(`roots: ${pathToFileURL(realpathSync(project.dir)).href}$`));
  });
});
