/**
 * Servers slower than pi's startup, in real pi in-process (both pi lines): a session without a UI (print mode, JSON
 * mode, an embedding) starts once every server has connected or failed, so its first prompt has their tools; a session
 * with a UI starts at once, its footer counts the servers still starting, and a late server's tools reach the next
 * prompt.
 */
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import type { Context } from "@mariozechner/pi-ai";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { type InProcessPi, requestTools, startInProcessPi } from "./pi-harness.ts";
import { PI_LINE } from "./pi-line.ts";
import { RecordingUI } from "./recording-ui.ts";
import { EXTENSION_DIR, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";

const SLOW_START = path.join(REPO_ROOT, "test", "fixtures", "slow-start.mjs");

interface ToolResultMessage {
  role: "toolResult";
  toolName: string;
  isError: boolean;
  content: Array<{ type: string; text?: string }>;
}

describe("servers slower than pi's startup", { timeout: 120_000 }, () => {
  const project = tempDir("mcp-bridge-wait-project-");
  const agentDir = tempDir("mcp-bridge-wait-agent-");
  const gate = path.join(project.dir, "ready");
  const laterGate = path.join(project.dir, "later-ready");
  const originalCwd = process.cwd();
  const originalBudget = process.env.PI_MCP_STARTUP_BUDGET_MS;
  let pi: InProcessPi | undefined;

  before(() => {
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    // Startup gives up on servers at once: only the session's own wait (or the footer) can make them count.
    process.env.PI_MCP_STARTUP_BUDGET_MS = "0";
    process.chdir(project.dir);
    writeFileSync(
      path.join(agentDir.dir, "mcp.json"),
      JSON.stringify({
        approval: "never",
        // The model calls the tools by name, so they are declared to it on both pi lines (pi 1.x defers them otherwise).
        exposure: "direct",
        mcpServers: {
          // Deaf until the test creates the gate file: ready exactly when the test says.
          late: { command: process.execPath, args: [SLOW_START, "--until", gate] },
          later: { command: process.execPath, args: [SLOW_START, "--until", laterGate] },
          mute: {
            command: process.execPath,
            args: [SLOW_START, "--delay", "600000"],
            initTimeout: 1500,
            maxRestarts: 0,
          },
        },
      }),
    );
  });
  afterEach(async () => {
    await pi?.close();
    pi = undefined;
  });
  after(() => {
    process.chdir(originalCwd);
    if (originalBudget === undefined) delete process.env.PI_MCP_STARTUP_BUDGET_MS;
    else process.env.PI_MCP_STARTUP_BUDGET_MS = originalBudget;
    project.cleanup();
    agentDir.cleanup();
  });

  test("without a UI the session starts once every server has settled: the first prompt has the late server's tool, the mute one failed", async () => {
    writeFileSync(gate, "");
    writeFileSync(laterGate, "");
    pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
    await pi.session.bindExtensions({});
    const names = pi.session.getAllTools().map((t) => t.name);
    assert.ok(
      names.includes("mcp_late_hello"),
      `the late server's tool is there when the session starts: ${names.join(", ")}`,
    );
    const { offered, result } = await callLateHello(pi);
    assert.ok(offered.includes("mcp_late_hello"), "the first request to the model declares it");
    assert.equal(result.isError, false);
    assert.match(result.content[0]?.text ?? "", /^hello after/);
    // The mute server ran out of its own time before the session started, and is reported as failed, not as starting.
    const listed = await listing(pi);
    assert.match(listed, /mute +🔴/);
    assert.match(listed, /no answer to the MCP handshake after [\d.]+ s, when its `initTimeout` of 1\.5 s ran out/);
  });

  test("with a UI the session starts at once; the footer counts the server still starting, and its tools reach the next prompt", async () => {
    // The server stays deaf until the test creates the gate.
    rmSync(gate, { force: true });
    rmSync(laterGate, { force: true });
    pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
    const ui = new RecordingUI();
    await pi.session.bindExtensions({ uiContext: ui.context() });
    assert.equal(
      pi.session.getAllTools().some((t) => t.name === "mcp_late_hello"),
      false,
      "the session did not wait for it",
    );
    // The mute server fails within its 1.5 s (in the warning colour); the late one is still starting.
    await waitFor(
      () => ui.statuses.get("mcp") === "[warn]MCP 0/3, 2 starting",
      "the footer to count the servers still starting",
      30_000,
    );
    writeFileSync(gate, "");
    await waitFor(
      () => pi!.session.getAllTools().some((t) => t.name === "mcp_late_hello"),
      "the late server's tool",
      30_000,
    );
    await waitFor(
      () => ui.notices.some((n) => n === "MCP server 'late' is ready: 1 tool"),
      "the notice that it is ready",
      10_000,
    );
    // pi's TUI writes a notice over the one before it: the next one names both.
    writeFileSync(laterGate, "");
    await waitFor(
      () => ui.notices.includes("MCP servers ready: 'late' (1 tool), 'later' (1 tool)"),
      "one notice for both ready servers",
      30_000,
    );
    const { offered, result } = await callLateHello(pi);
    assert.ok(offered.includes("mcp_late_hello"), "the next request to the model declares the late server's tool");
    assert.equal(result.isError, false, JSON.stringify(result.content));
    await waitFor(
      () => /^(\[warn\])?MCP 2\/3$/.test(ui.statuses.get("mcp") ?? ""),
      "the footer to count it as up",
      30_000,
    );
  });

  /** A server deaf until the test creates `until`. */
  const deaf = (until: string) => ({ command: process.execPath, args: [SLOW_START, "--until", until] });

  /** pi with a UI on `config`, both gates closed: its servers are still starting when the session has started. */
  async function startWithUi(config: Record<string, unknown>): Promise<RecordingUI> {
    rmSync(gate, { force: true });
    rmSync(laterGate, { force: true });
    writeFileSync(path.join(agentDir.dir, "mcp.json"), JSON.stringify(config));
    pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
    const ui = new RecordingUI();
    await pi.session.bindExtensions({ uiContext: ui.context() });
    return ui;
  }

  test("with a UI the first prompt waits for a server still starting whose tools are direct, so its first request has them; on pi 1.x not for a deferred one", async () => {
    const ui = await startWithUi({
      approval: "never",
      exposure: "direct",
      mcpServers: { late: deaf(gate), later: { ...deaf(laterGate), exposure: "deferred" } },
    });
    // The prompt is typed while both are still starting; the server gets ready while the prompt waits.
    const called = callLateHello(pi!);
    const waits = () => ui.notices.filter((n) => n.startsWith("Waiting up to 10 s for MCP servers still starting"));
    await waitFor(() => waits().length > 0, "the first prompt to wait", 30_000);
    // pi 0.73 gives a run only the tools it began with, so there the deferred one is waited for too (tool_search would
    // find its tools too late for this run); pi 1.x leaves it to tool_search's own wait.
    const waiting = `Waiting up to 10 s for MCP servers still starting: ${PI_LINE === "0.73" ? "late, later" : "late"} (Escape: go on without them)`;
    assert.deepEqual(waits(), [waiting]);
    writeFileSync(gate, "");
    if (PI_LINE === "0.73") writeFileSync(laterGate, "");
    const { offered, result } = await called;
    assert.ok(offered.includes("mcp_late_hello"), `the first request declares its tool: ${offered.join(", ")}`);
    assert.equal(result.isError, false, JSON.stringify(result.content));
    assert.deepEqual(waits(), [waiting], "said once");
    assert.ok(!ui.notices.some((n) => n.startsWith("MCP servers still starting")), "none was still starting after");
  });

  test("with a UI, Escape ends the first prompt's wait at once: the run goes on without the tools of the server still starting", async () => {
    const originalWait = process.env.PI_MCP_FIRST_PROMPT_WAIT_MS;
    // Waits that end by themselves only long after the test would have failed: only Escape can end this one.
    process.env.PI_MCP_FIRST_PROMPT_WAIT_MS = "600000";
    try {
      const ui = await startWithUi({
        approval: "never",
        exposure: "direct",
        mcpServers: { late: { ...deaf(gate), initTimeout: 600_000 } },
      });
      let offered: string[] | undefined;
      pi!.faux.setResponses([
        (context: Context) => {
          offered = requestTools(context).map((t) => t.name);
          return fauxAssistantMessage("done");
        },
      ]);
      let settled = false;
      const prompted = pi!.session.prompt("say hello").finally(() => (settled = true));
      await waitFor(
        () => ui.notices.some((n) => n.startsWith("Waiting up to 600 s")),
        "the first prompt to wait",
        30_000,
      );
      assert.equal(ui.inputListeners.size, 1, "Escape is listened for while the prompt waits");
      assert.equal(ui.press("x"), false, "another key is left to pi's editor");
      assert.equal(ui.press("\x1b"), true, "Escape is not");
      await waitFor(() => settled, "the prompt to go on after Escape", 30_000);
      await prompted;
      assert.ok(offered && !offered.includes("mcp_late_hello"), `the run went on without it: ${offered?.join(", ")}`);
      assert.equal(ui.inputListeners.size, 0, "nor after the wait");
      assert.ok(ui.notices.includes("MCP servers still starting: late; their tools come once each is ready."));
    } finally {
      if (originalWait === undefined) delete process.env.PI_MCP_FIRST_PROMPT_WAIT_MS;
      else process.env.PI_MCP_FIRST_PROMPT_WAIT_MS = originalWait;
    }
  });

  test("with a UI, a server switched off while it starts, or after it failed, leaves the footer's count at once", async () => {
    const ui = await startWithUi({ mcpServers: { late: deaf(gate), gone: { command: "mcp-bridge-no-such-command" } } });
    const footer = () => ui.statuses.get("mcp");
    await waitFor(() => footer() === "[warn]MCP 0/2, 1 starting", "the footer to count both", 30_000);
    await pi!.session.prompt("/mcp off gone");
    assert.equal(footer(), "MCP 0/1, 1 starting", "the failed server switched off");
    await pi!.session.prompt("/mcp off late");
    assert.equal(footer(), undefined, "the starting one switched off too");
  });

  test("with a UI, a lazy server learning its tools that fails after the session started says so, as any server does", async () => {
    const mute = {
      command: process.execPath,
      args: [SLOW_START, "--delay", "600000"],
      initTimeout: 1500,
      maxRestarts: 0,
    };
    const ui = await startWithUi({ mcpServers: { mute: { ...mute, lazy: true } } });
    await waitFor(
      () => ui.notices.some((n) => n.startsWith("MCP server 'mute' failed to start: ")),
      "the notice that it failed",
      30_000,
    );
  });

  test("with a UI, a first-prompt wait longer than a timer holds (PI_MCP_FIRST_PROMPT_WAIT_MS) still waits", async () => {
    const originalWait = process.env.PI_MCP_FIRST_PROMPT_WAIT_MS;
    process.env.PI_MCP_FIRST_PROMPT_WAIT_MS = "3000000000";
    try {
      const ui = await startWithUi({ approval: "never", exposure: "direct", mcpServers: { late: deaf(gate) } });
      const called = callLateHello(pi!);
      await waitFor(() => ui.notices.some((n) => n.startsWith("Waiting up to 3000000 s")), "the wait", 30_000);
      writeFileSync(gate, "");
      const { offered } = await called;
      assert.ok(offered.includes("mcp_late_hello"), `the first request declares its tool: ${offered.join(", ")}`);
    } finally {
      if (originalWait === undefined) delete process.env.PI_MCP_FIRST_PROMPT_WAIT_MS;
      else process.env.PI_MCP_FIRST_PROMPT_WAIT_MS = originalWait;
    }
  });

  // `auto` is decided when the session starts; a slow npx server (or one added later) has no tools known by then.
  test("auto with a UI: a server that connects after the session started is direct while it fits in what the limit leaves, deferred past it", async () => {
    // A server's one tool costs about 37 tokens: the first to connect fits in 50, the second would go over.
    const ui = await startWithUi({
      exposure: "auto",
      exposureThreshold: 50,
      mcpServers: { late: deaf(gate), later: deaf(laterGate) },
    });
    const has = (name: string) => pi!.session.getAllTools().some((t) => t.name === name);
    writeFileSync(gate, "");
    await waitFor(() => has("mcp_late_hello"), "the first server's tool", 30_000);
    writeFileSync(laterGate, "");
    await waitFor(() => has("mcp_later_hello"), "the second server's tool", 30_000);
    await pi!.session.prompt("/mcp list");
    const listed = ui.notices.at(-1) ?? "";
    assert.match(listed, /- mcp_late_hello {2}\(hello\) {2}· direct \(auto\)/);
    assert.match(listed, /- mcp_later_hello {2}\(hello\) {2}· deferred \(auto\)/);
    assert.match(
      listed,
      /is direct this session: .* Deferred as they connected later and would have gone over it: later\./,
    );
  });
});

/** The model calls the late server's tool once; the tools its request declared, and the call's result. */
async function callLateHello(pi: InProcessPi): Promise<{ offered: string[]; result: ToolResultMessage }> {
  let offered: string[] = [];
  pi.faux.setResponses([
    (context: Context) => {
      offered = requestTools(context).map((t) => t.name);
      return fauxAssistantMessage([fauxToolCall("mcp_late_hello", {})], { stopReason: "toolUse" });
    },
    fauxAssistantMessage("done"),
  ]);
  await pi.session.prompt("say hello");
  const result = pi.session.messages.find(
    (m) => (m as unknown as ToolResultMessage).role === "toolResult",
  ) as unknown as ToolResultMessage;
  return { offered, result };
}

/** `/mcp list` as pi shows it without a UI (print mode writes it to stdout; here it is captured). */
async function listing(pi: InProcessPi): Promise<string> {
  const written: string[] = [];
  const original = console.log;
  console.log = (text: unknown) => void written.push(String(text));
  try {
    await pi.session.prompt("/mcp list");
  } finally {
    console.log = original;
  }
  return written.join("\n");
}
