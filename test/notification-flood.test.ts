/**
 * A server that floods the client with notifications while a call of its own runs (the asking fixture's `flood`
 * tool, a real process, through pi in-process): the call's result still arrives, log records past the bound are
 * dropped and progress updates coalesced, each one left out is counted in the server's metrics, and the log says so
 * once per flood.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { EXTENSION_DIR, REPO_ROOT, tempDir } from "./helpers.ts";
import { type InProcessPi, startInProcessPi } from "./pi-harness.ts";
import { bundledFixture } from "./fixture-bundle.ts";

const ASKING_SERVER = bundledFixture(path.join(REPO_ROOT, "test", "fixtures", "asking-server.mjs"));
/** Enough to be far past any bound, few enough for a loaded two-core CI machine. */
const FLOOD = 50_000;

interface Bus {
  emit(channel: string, data: unknown): void;
}
type Metrics = { serverId: string; notificationsDropped: number };

describe("a server that floods its own call with notifications", { timeout: 300_000 }, () => {
  const project = tempDir("mcp-bridge-flood-project-");
  const agentDir = tempDir("mcp-bridge-flood-agent-");
  const originalCwd = process.cwd();
  let pi: InProcessPi;

  before(async () => {
    const entry = {
      command: process.execPath,
      args: [ASKING_SERVER],
      autoApprove: ["*"],
      exposure: "direct",
      // Generous: the test is about the result arriving, not about how fast a loaded machine reads.
      requestTimeout: 240_000,
    };
    writeFileSync(path.join(agentDir.dir, "mcp.json"), JSON.stringify({ mcpServers: { asking: entry } }));
    // Another extension's view of pi's bus, where the bridge answers for its metrics.
    const busExtension = path.join(project.dir, "bus-extension.ts");
    writeFileSync(busExtension, "export default function (pi) { globalThis.__floodTestBus = pi.events; }\n");
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    pi = await startInProcessPi({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [busExtension, EXTENSION_DIR],
    });
    await pi.session.bindExtensions({});
  });
  after(async () => {
    await pi?.close();
    process.chdir(originalCwd);
    project.cleanup();
    agentDir.cleanup();
  });

  function dropped(): number {
    const bus = (globalThis as { __floodTestBus?: Bus }).__floodTestBus!;
    let servers: Metrics[] | undefined;
    bus.emit("mcp.metrics.request", { reply: (snapshot: { servers: Metrics[] }) => (servers = snapshot.servers) });
    const asking = servers?.find((s) => s.serverId === "asking");
    assert.ok(asking, "the bridge answered with the server's metrics");
    return asking.notificationsDropped;
  }

  /** The model calls `flood`; its result's text and whether it is an error, and the call's progress updates. */
  async function flood(kind: "log" | "progress"): Promise<{ text: string; isError: boolean; updates: string[] }> {
    const updates: string[] = [];
    const unsubscribe = pi.session.subscribe((event) => {
      if (event.type === "tool_execution_update" && event.toolName === "mcp_asking_flood") {
        const partial = event.partialResult as { content: Array<{ text?: string }> };
        updates.push(partial.content[0]?.text ?? "");
      }
    });
    pi.faux.setResponses([
      fauxAssistantMessage([fauxToolCall("mcp_asking_flood", { count: FLOOD, kind })], { stopReason: "toolUse" }),
      fauxAssistantMessage("done"),
    ]);
    try {
      await pi.session.prompt(`flood ${kind}`);
    } finally {
      unsubscribe();
    }
    const result = pi.session.messages
      .filter((m) => (m as { role: string }).role === "toolResult")
      .at(-1) as unknown as { content: Array<{ text?: string }>; isError: boolean };
    return { text: result.content.map((c) => c.text ?? "").join("\n"), isError: result.isError, updates };
  }

  test("log records past the bound are dropped and counted, and the call's result arrives", async () => {
    const before = dropped();
    const { text, isError } = await flood("log");
    assert.equal(isError, false, text);
    assert.equal(text, "flood done");
    const left = dropped() - before;
    assert.ok(left > 0 && left < FLOOD, `log records dropped: ${left}`);
  });

  test("progress past the bound is coalesced: each update is delivered or counted, and the last one arrives", async () => {
    const before = dropped();
    const { text, isError, updates } = await flood("progress");
    assert.equal(isError, false, text);
    assert.equal(text, "flood done");
    const left = dropped() - before;
    assert.ok(left > 0, "progress updates were coalesced");
    assert.equal(updates.at(-1), `progress ${FLOOD}/${FLOOD}: step ${FLOOD}`, "the latest is never lost");
    assert.equal(updates.length + left, FLOOD, "every update is either delivered or counted");
  });

  test("the log says once per flood what was left out and where it is counted", async () => {
    await pi.close();
    const lines = readFileSync(path.join(agentDir.dir, "mcp-bridge", "mcp.log"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { event: string; kind?: string; message?: string });
    const floods = lines.filter((l) => l.event === "notifications.dropped");
    assert.deepEqual(
      floods.map((l) => l.kind),
      ["log", "progress"],
    );
    assert.match(floods[0]!.message!, /more than 100 log records a second; .*counted in its metrics/);
  });
});
