/**
 * A server that comes back with another tool list, inside real pi (in-process, faux model): a local server that
 * crashes and is restarted, and a remote one that goes away and comes back on its port. The model's next request
 * declares the tools it serves now and not the ones it dropped, and a call to a dropped name fails saying so, without
 * reaching the server.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { type RunningServer, startStreamableHttp } from "./fixtures/http-servers.ts";
import {
  EXTENSION_DIR,
  FAST_RECONNECT,
  fixtureEntry,
  isAlive,
  readLog,
  tempDir,
  trustProjectServers,
  waitFor,
} from "./helpers.ts";
import { type InProcessPi, requestTools, startInProcessPi } from "./pi-harness.ts";

interface ToolResultMessage {
  role: "toolResult";
  toolName: string;
  isError: boolean;
  content: Array<{ type: string; text?: string }>;
}

const release = (n: number) => ({
  name: `release_${n}`,
  description: `Release ${n}`,
  inputSchema: { type: "object" as const },
});

describe("a reconnect that brings back another tool list, in pi", { timeout: 120_000 }, () => {
  const project = tempDir("mcp-bridge-reconnect-tools-");
  const agentDir = tempDir("mcp-bridge-reconnect-agent-");
  const log = path.join(project.dir, "events.jsonl");
  const originalCwd = process.cwd();
  let remote: RunningServer;
  let pi: InProcessPi;

  before(async () => {
    remote = await startStreamableHttp({ extraTools: [release(1)] });
    mkdirSync(path.join(project.dir, ".pi"));
    writeFileSync(
      path.join(project.dir, ".pi", "mcp.json"),
      JSON.stringify({
        mcpServers: {
          local: {
            ...fixtureEntry(),
            env: { FIXTURE_LOG: log, FIXTURE_STARTS: path.join(project.dir, "starts") },
            reconnect: FAST_RECONNECT,
          },
          remote: { url: remote.url, reconnect: FAST_RECONNECT },
        },
      }),
    );
    // The model calls tools with no UI to ask in, and directly: approval and exposure have their own tests.
    writeFileSync(path.join(agentDir.dir, "mcp.json"), JSON.stringify({ approval: "never", exposure: "direct" }));
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    await trustProjectServers(project.dir, agentDir.dir);
    pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
    await pi.session.bindExtensions({});
  });

  after(async () => {
    await pi?.close();
    process.chdir(originalCwd);
    await remote?.close();
    project.cleanup();
    agentDir.cleanup();
  });

  /** The model's next request: the tools it declares, after which the model calls `calls` in one turn. */
  async function nextRequest(...calls: string[]): Promise<{ offered: string[]; results: ToolResultMessage[] }> {
    let offered: string[] = [];
    const before = pi.session.messages.length;
    pi.faux.setResponses([
      (context) => {
        offered = requestTools(context).map((t) => t.name);
        return fauxAssistantMessage(
          calls.map((name) => fauxToolCall(name, {})),
          { stopReason: "toolUse" },
        );
      },
      fauxAssistantMessage("done"),
    ]);
    await pi.session.prompt(`call ${calls.join(" and ")}`);
    const results = pi.session.messages
      .slice(before)
      .filter((m) => (m as { role: string }).role === "toolResult") as unknown as ToolResultMessage[];
    return { offered, results };
  }

  function resultOf(results: ToolResultMessage[], name: string): { isError: boolean; text: string } {
    const result = results.find((r) => r.toolName === name);
    assert.ok(result, `a result for ${name}`);
    return { isError: result.isError, text: result.content.map((c) => c.text ?? "").join("\n") };
  }

  test("a local server that crashes and restarts with another list: the new tool is offered and runs, the old one is withdrawn", async () => {
    const first = await nextRequest("mcp_local_release_1");
    assert.ok(first.offered.includes("mcp_local_release_1"));
    assert.equal(first.offered.includes("mcp_local_release_2"), false);
    assert.deepEqual(resultOf(first.results, "mcp_local_release_1"), { isError: false, text: "called release_1" });

    const starts = () => readLog(log).filter((e) => e.event === "start");
    const crashed = starts().at(-1)!.pid as number;
    process.kill(crashed, "SIGKILL");
    await waitFor(() => !isAlive(crashed), "the local server to die");
    await waitFor(
      () => pi.session.getActiveToolNames().includes("mcp_local_release_2"),
      "the restarted server's tool to be registered",
      30_000,
    );
    assert.equal(starts().length, 2, "restarted once");

    const next = await nextRequest("mcp_local_release_2", "mcp_local_release_1");
    assert.ok(next.offered.includes("mcp_local_release_2"), "the model is offered the new tool");
    assert.equal(next.offered.includes("mcp_local_release_1"), false, "… and not the one the server dropped");
    assert.ok(next.offered.includes("mcp_local_echo"), "the tools it still serves stay");
    assert.deepEqual(resultOf(next.results, "mcp_local_release_2"), { isError: false, text: "called release_2" });
    const withdrawn = resultOf(next.results, "mcp_local_release_1");
    assert.equal(withdrawn.isError, true);
    // pi refuses a tool outside the active set by name; one it still dispatches says the server dropped it.
    assert.match(
      withdrawn.text,
      /Tool '?mcp_local_release_1'? (not found|is no longer available: MCP server 'local' stopped listing)/,
    );
    const calls = readLog(log).filter((e) => e.event === "call" && e.name === "release_1");
    assert.equal(calls.length, 1, "the withdrawn tool's call never reached the server");
  });

  test("a remote server that goes away and comes back with another list: the new tool is offered and runs, the old one is withdrawn", async () => {
    const first = await nextRequest("mcp_remote_release_1");
    assert.ok(first.offered.includes("mcp_remote_release_1"));
    assert.equal(first.offered.includes("mcp_remote_release_2"), false);
    assert.deepEqual(resultOf(first.results, "mcp_remote_release_1"), { isError: false, text: "called release_1" });

    const { port } = remote;
    await remote.close();
    remote = await startStreamableHttp({ port, extraTools: [release(2)] });
    await waitFor(
      () => pi.session.getActiveToolNames().includes("mcp_remote_release_2"),
      "the returned server's tool to be registered",
      30_000,
    );

    const next = await nextRequest("mcp_remote_release_2", "mcp_remote_release_1");
    assert.ok(next.offered.includes("mcp_remote_release_2"), "the model is offered the new tool");
    assert.equal(next.offered.includes("mcp_remote_release_1"), false, "… and not the one the server dropped");
    assert.ok(next.offered.includes("mcp_remote_echo"), "the tools it still serves stay");
    assert.deepEqual(resultOf(next.results, "mcp_remote_release_2"), { isError: false, text: "called release_2" });
    const withdrawn = resultOf(next.results, "mcp_remote_release_1");
    assert.equal(withdrawn.isError, true);
    // pi refuses a tool outside the active set by name; one it still dispatches says the server dropped it.
    assert.match(
      withdrawn.text,
      /Tool '?mcp_remote_release_1'? (not found|is no longer available: MCP server 'remote' stopped listing)/,
    );
    assert.equal(
      remote.calls.filter((c) => c.name === "release_1").length,
      0,
      "the withdrawn tool's call never reached the server",
    );
  });
});
