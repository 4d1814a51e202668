/**
 * The extension inside real pi 0.73.1, in-process: `createAgentSession` with a faux model that calls MCP tools.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { fauxAssistantMessage, fauxToolCall, type FauxProviderRegistration } from "@mariozechner/pi-ai";
import type { AgentSession } from "@mariozechner/pi-coding-agent";
import { type InProcessPi, requestTools, startInProcessPi } from "./pi-harness.ts";
import { type RunningServer, startStreamableHttp } from "./fixtures/http-servers.ts";
import { EXTENSION_DIR, fixtureEntry, isAlive, readLog, tempDir, trustProjectServers, waitFor } from "./helpers.ts";

interface ToolResultMessage {
  role: "toolResult";
  toolName: string;
  isError: boolean;
  content: Array<{ type: string; text?: string; data?: string }>;
}

describe("mcp-bridge in pi (in-process, faux model)", { timeout: 120_000 }, () => {
  const project = tempDir("mcp-bridge-project-");
  const agentDir = tempDir("mcp-bridge-agent-");
  const log = path.join(project.dir, "events.jsonl");
  const originalCwd = process.cwd();
  let remote: RunningServer;
  let faux: FauxProviderRegistration;
  let pi: InProcessPi;
  let session: AgentSession;
  const extensionErrors: string[] = [];
  const startupOutput: string[] = [];

  before(async () => {
    remote = await startStreamableHttp();
    mkdirSync(path.join(project.dir, ".pi"));
    writeFileSync(
      path.join(project.dir, ".pi", "mcp.json"),
      JSON.stringify({
        mcpServers: {
          local: { ...fixtureEntry(), env: { FIXTURE_LOG: log } },
          remote: { url: remote.url, prefix: "web" },
          broken: { command: "mcp-bridge-no-such-command" },
        },
      }),
    );
    // A user-level entry with a bad field: reported, not fatal. Approval prompts are off, as a user may set them: the
    // model here calls tools with no UI to ask in (approval has its own tests), and directly (so does exposure).
    writeFileSync(
      path.join(agentDir.dir, "mcp.json"),
      JSON.stringify({ approval: "never", exposure: "direct", mcpServers: { bad: { url: "http://x", timeout: -1 } } }),
    );
    // Another extension, loaded first, that already has a tool by one of our names.
    writeFileSync(
      path.join(project.dir, "other-extension.ts"),
      `export default function (pi) {
        // Everything the bridge publishes on pi's shared bus, as another extension sees it.
        const seen = (globalThis.__mcpBridgeEvents = []);
        for (const channel of ["mcp.connecting", "mcp.connected", "mcp.disconnected", "mcp.error", "mcp.local.spawned",
          "mcp.local.shutdown", "tools.registered", "tools.updated", "tools.deregistered", "mcp.metrics"]) {
          pi.events.on(channel, (payload) => seen.push({ channel, payload }));
        }
        globalThis.__mcpBridgeBus = pi.events;
        pi.registerTool({
          name: "mcp_local_add", label: "other", description: "another extension's tool", parameters: { type: "object", properties: {} },
          async execute() { return { content: [{ type: "text", text: "from the other extension" }], details: {} }; },
        });
      }`,
    );
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    // The tests read what was registered at startup; on a loaded machine the fixture can take longer than the default budget.
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    // pi gives extension factories no working directory, so the bridge takes the process's own, as pi's CLI has it.
    process.chdir(project.dir);
    // The project's servers are the test's own: trusted, as "trust all" would record it.
    await trustProjectServers(project.dir, agentDir.dir);

    pi = await startInProcessPi({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [path.join(project.dir, "other-extension.ts"), EXTENSION_DIR],
    });
    ({ session, faux } = pi);
    // pi reports the clash of tool names as a diagnostic and keeps both extensions loaded.
    assert.deepEqual(
      pi.loader.getExtensions().errors.map((e) => e.error),
      [`Tool "mcp_local_add" conflicts with ${path.join(project.dir, "other-extension.ts")}`],
    );
    const originalLog = console.log;
    console.log = (...args: unknown[]) => startupOutput.push(args.join(" "));
    try {
      await session.bindExtensions({ onError: (e) => extensionErrors.push(`${e.extensionPath}: ${e.error}`) });
    } finally {
      console.log = originalLog;
    }
  });

  after(async () => {
    await pi?.close();
    process.chdir(originalCwd);
    await remote?.close();
    project.cleanup();
    agentDir.cleanup();
  });

  function busEvents(): Array<{ channel: string; payload: Record<string, unknown> }> {
    return (
      (globalThis as { __mcpBridgeEvents?: Array<{ channel: string; payload: Record<string, unknown> }> })
        .__mcpBridgeEvents ?? []
    );
  }

  function toolResults(): ToolResultMessage[] {
    return session.messages.filter(
      (m) => (m as { role: string }).role === "toolResult",
    ) as unknown as ToolResultMessage[];
  }

  test("the tools of both working servers are registered as pi tools", () => {
    assert.deepEqual(extensionErrors, []);
    const names = session.getAllTools().map((t) => t.name);
    assert.ok(names.includes("mcp_local_echo"), "stdio server tool");
    assert.ok(names.includes("web_add"), "remote server tool with its prefix");
    assert.ok(names.includes("read") && names.includes("bash"), "pi's own tools are still there");
    assert.equal(names.filter((n) => n.startsWith("mcp_broken_")).length, 0);
  });

  test("one startup notice (printed, as there is no UI) lists what failed and why", () => {
    assert.equal(startupOutput.length, 1);
    const notice = startupOutput[0]!;
    assert.match(notice, /MCP: 2 of 3 servers connected/);
    assert.match(notice, /✕ broken: MCP server 'broken': command 'mcp-bridge-no-such-command' was not found/);
    assert.match(notice, /server 'bad' in user config .*mcp\.json: `timeout` must be a positive number/);
    assert.match(
      notice,
      /Tool name 'mcp_local_add' of MCP server 'local' .* is already used by another extension .*other-extension\.ts.*; registered as 'mcp_local_add_2'/,
    );
  });

  test("a tool name another extension already has: ours moves to a free name and both work", async () => {
    faux.setResponses([
      fauxAssistantMessage([fauxToolCall("mcp_local_add", {}), fauxToolCall("mcp_local_add_2", { a: 20, b: 22 })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("ok"),
    ]);
    await session.prompt("add");
    const results = toolResults();
    assert.deepEqual(results.find((r) => r.toolName === "mcp_local_add")!.content, [
      { type: "text", text: "from the other extension" },
    ]);
    assert.deepEqual(results.find((r) => r.toolName === "mcp_local_add_2")!.content, [{ type: "text", text: "42" }]);
  });

  test("the model calls one tool of each server and receives their results", async () => {
    faux.setResponses([
      fauxAssistantMessage(
        [fauxToolCall("mcp_local_echo", { text: "from pi" }), fauxToolCall("web_add", { a: 2, b: 3 })],
        { stopReason: "toolUse" },
      ),
      (context) => {
        const results = context.messages.filter((m) => m.role === "toolResult");
        return fauxAssistantMessage(`saw ${results.length} results`);
      },
    ]);
    await session.prompt("use the tools");
    const results = toolResults();
    const echo = results.find((r) => r.toolName === "mcp_local_echo");
    const add = results.find((r) => r.toolName === "web_add");
    assert.ok(echo && add);
    assert.equal(echo.isError, false);
    assert.deepEqual(echo.content, [{ type: "text", text: "from pi" }]);
    assert.equal(add.isError, false);
    assert.deepEqual(add.content, [{ type: "text", text: "5" }]);
    assert.deepEqual(remote.calls.at(-1), { name: "add", args: { a: 2, b: 3 } });
    assert.ok(readLog(log).some((e) => e.event === "call" && e.name === "echo"));
  });

  test("arguments that do not fit the schema are rejected by pi, naming the field, before the server sees them", async () => {
    const callsBefore = readLog(log).filter((e) => e.event === "call").length;
    faux.setResponses([
      fauxAssistantMessage([fauxToolCall("mcp_local_strict", { count: "many", mode: "fast" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("ok"),
    ]);
    await session.prompt("call strict badly");
    const result = toolResults().at(-1)!;
    assert.equal(result.toolName, "mcp_local_strict");
    assert.equal(result.isError, true);
    assert.match(result.content[0]!.text!, /count/);
    assert.equal(readLog(log).filter((e) => e.event === "call").length, callsBefore, "nothing reached the server");
  });

  test("an isError result reaches the model as a tool error with the server's text; images as images", async () => {
    faux.setResponses([
      fauxAssistantMessage([fauxToolCall("mcp_local_fail", {}), fauxToolCall("mcp_local_image", {})], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("ok"),
    ]);
    await session.prompt("fail and draw");
    const fail = toolResults().find((r) => r.toolName === "mcp_local_fail")!;
    assert.equal(fail.isError, true);
    assert.match(fail.content[0]!.text!, /it failed on purpose/);
    const image = toolResults().find((r) => r.toolName === "mcp_local_image")!;
    assert.equal(image.isError, false);
    assert.ok(image.content.some((c) => c.type === "image"));
  });

  test("health and tool events reach other extensions on pi's bus", () => {
    const events = busEvents();
    const connected = events.filter((e) => e.channel === "mcp.connected").map((e) => e.payload.serverId);
    assert.deepEqual(connected.sort(), ["local", "remote"]);
    const spawned = events.find((e) => e.channel === "mcp.local.spawned")!;
    assert.equal(spawned.payload.serverId, "local");
    assert.equal(spawned.payload.pid, readLog(log).find((e) => e.event === "start")!.pid);
    const registered = events.filter((e) => e.channel === "tools.registered");
    assert.deepEqual(registered.map((e) => e.payload.serverId).sort(), ["local", "remote"]);
    const webAdd = (
      registered.find((e) => e.payload.serverId === "remote")!.payload.tools as Array<{
        name: string;
        originalName: string;
      }>
    ).find((t) => t.originalName === "add");
    assert.equal(webAdd?.name, "web_add");
    assert.deepEqual((webAdd as { provenance?: unknown }).provenance, {
      source: "mcp",
      serverId: "remote",
      originalName: "add",
    });
  });

  test("a server that adds a tool and removes another at run time: the model can call the new one in the same session; the removed one is gone", async () => {
    const activeBefore = session.getActiveToolNames();
    assert.ok(activeBefore.includes("mcp_local_cwd"));
    assert.equal(activeBefore.includes("mcp_local_deploy_preview"), false);
    faux.setResponses([
      fauxAssistantMessage([fauxToolCall("mcp_local_mutate_tools", { add: "deploy_preview", remove: "cwd" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("changed"),
    ]);
    await session.prompt("change your tools");
    await waitFor(
      () => session.getActiveToolNames().includes("mcp_local_deploy_preview"),
      "the new tool to become active",
    );
    await waitFor(
      () => !session.getActiveToolNames().includes("mcp_local_cwd"),
      "the removed tool to leave the active set",
    );
    const deregistered = busEvents().filter((e) => e.channel === "tools.deregistered");
    assert.deepEqual(deregistered.at(-1)!.payload, {
      serverId: "local",
      tools: [
        {
          name: "mcp_local_cwd",
          originalName: "cwd",
          provenance: { source: "mcp", serverId: "local", originalName: "cwd" },
        },
      ],
    });
    assert.ok(
      busEvents().some((e) => e.channel === "tools.registered" && JSON.stringify(e.payload).includes("deploy_preview")),
    );

    let offered: string[] = [];
    faux.setResponses([
      (context) => {
        offered = requestTools(context).map((t) => t.name);
        return fauxAssistantMessage([fauxToolCall("mcp_local_deploy_preview", {}), fauxToolCall("mcp_local_cwd", {})], {
          stopReason: "toolUse",
        });
      },
      fauxAssistantMessage("done"),
    ]);
    await session.prompt("use the new tool");
    assert.ok(offered.includes("mcp_local_deploy_preview"), "the model is offered the new tool");
    assert.equal(offered.includes("mcp_local_cwd"), false, "… and not the removed one");
    const results = toolResults();
    const deploy = results.findLast((r) => r.toolName === "mcp_local_deploy_preview")!;
    assert.equal(deploy.isError, false);
    assert.deepEqual(deploy.content, [{ type: "text", text: "called deploy_preview" }]);
    const removed = results.findLast((r) => r.toolName === "mcp_local_cwd")!;
    assert.equal(removed.isError, true, "a call to the removed tool fails");
    assert.equal(
      readLog(log).filter((e) => e.event === "call" && e.name === "cwd").length,
      0,
      "and never reaches the server",
    );

    // It comes back under the same name when the server lists it again.
    faux.setResponses([
      fauxAssistantMessage([fauxToolCall("mcp_local_mutate_tools", { add: "cwd" })], { stopReason: "toolUse" }),
      fauxAssistantMessage("restored"),
    ]);
    await session.prompt("restore");
    await waitFor(() => session.getActiveToolNames().includes("mcp_local_cwd"), "the restored tool to be active again");
  });

  /** The model calls these tools (in one turn) and then ends its answer. */
  async function modelCalls(...calls: Array<[tool: string, args: Record<string, unknown>]>): Promise<void> {
    faux.setResponses([
      fauxAssistantMessage(
        calls.map(([tool, args]) => fauxToolCall(tool, args)),
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("ok"),
    ]);
    await session.prompt(`call ${calls.map(([tool]) => tool).join(" and ")}`);
  }

  test("metrics are answered on the bus and shown by /mcp", async () => {
    type Snapshot = {
      servers: Array<{ serverId: string; toolCalls: number; successRate: number | null; status: string }>;
    };
    const bus = (globalThis as { __mcpBridgeBus?: { emit(channel: string, data: unknown): void } }).__mcpBridgeBus!;
    const request = (): Snapshot["servers"][number] => {
      let snapshot: Snapshot | undefined;
      bus.emit("mcp.metrics.request", { reply: (s: Snapshot) => (snapshot = s) });
      assert.ok(snapshot, "the bridge replied");
      return snapshot.servers.find((s) => s.serverId === "local")!;
    };
    const before = request();
    // One call that works and one whose result is an error, whatever ran before this test.
    await modelCalls(["mcp_local_echo", { text: "counted" }], ["mcp_local_fail", {}]);
    const local = request();
    assert.equal(local.status, "connected");
    assert.equal(local.toolCalls, before.toolCalls + 2);
    assert.ok(local.successRate! > 0 && local.successRate! < 1, `one call failed on purpose: ${local.successRate}`);
    assert.ok(
      busEvents().some((e) => e.channel === "mcp.metrics"),
      "also published for listeners",
    );
  });

  test("/mcp lists the servers, and shutdown stops the local server", async () => {
    // A call, so that the local server has metrics to show.
    await modelCalls(["mcp_local_echo", { text: "for the metrics" }]);
    const printed: string[] = [];
    const originalLog = console.log;
    console.log = (...args: unknown[]) => printed.push(args.join(" "));
    try {
      await session.prompt("/mcp");
    } finally {
      console.log = originalLog;
    }
    const text = printed.join("\n");
    assert.match(text, /local {2}connected {2}stdio/);
    assert.match(text, /remote {2}connected {2}http/);
    assert.match(text, /broken +🔴/);
    assert.match(text, /\d+ calls?, \d+% ok/, "metrics per server");
    assert.match(text, /command 'mcp-bridge-no-such-command' was not found/);
    assert.match(text, /server 'bad' in user config .*`timeout` must be a positive number/);

    const pid = readLog(log).find((e) => e.event === "start")!.pid;
    assert.ok(isAlive(pid));
    await session.extensionRunner.emit({ type: "session_shutdown", reason: "quit" });
    await waitFor(() => !isAlive(pid), "the local server to stop");
  });
});

describe("/reload: only the bridge loaded anew answers on pi's bus", { timeout: 120_000 }, () => {
  test("a request after /reload gets one reply, of the servers that run", async () => {
    const project = tempDir("mcp-bridge-reload-project-");
    const agentDir = tempDir("mcp-bridge-reload-agent-");
    const originalCwd = process.cwd();
    writeFileSync(path.join(agentDir.dir, "mcp.json"), JSON.stringify({ mcpServers: { local: fixtureEntry() } }));
    // pi's bus outlives a /reload; another extension keeps a handle on it.
    const other = path.join(project.dir, "bus-extension.ts");
    writeFileSync(other, `export default function (pi) { globalThis.__mcpReloadBus = pi.events; }`);
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    const pi = await startInProcessPi({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [other, EXTENSION_DIR],
    });
    try {
      await pi.session.bindExtensions({ onError: () => {} });
      await pi.session.reload();
      const bus = (globalThis as { __mcpReloadBus?: { emit(channel: string, data: unknown): void } }).__mcpReloadBus!;
      const metrics: Array<{ servers: Array<{ status: string }> }> = [];
      bus.emit("mcp.metrics.request", { reply: (s: (typeof metrics)[number]) => metrics.push(s) });
      assert.deepEqual(
        metrics.map((m) => m.servers.map((s) => s.status)),
        [["connected"]],
      );
      const lists: Array<{ servers: Array<{ status: string }> }> = [];
      bus.emit("mcp.api.list.request", { id: 1, reply: (r: (typeof lists)[number]) => lists.push(r) });
      await waitFor(() => lists.some((l) => l.servers[0]?.status === "connected"), "the reply of the bridge that runs");
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(
        lists.map((l) => l.servers.map((s) => s.status)),
        [["connected"]],
      );
    } finally {
      await pi.close();
      process.chdir(originalCwd);
      project.cleanup();
      agentDir.cleanup();
    }
  });
});
