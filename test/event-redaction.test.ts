/**
 * Every event the bridge publishes on pi's bus is redacted as it leaves, whatever its wording got on the way: here a
 * remote server whose answers quote the user's API key back (HTTP 503 with the `X-Api-Key` header in the body), until
 * the bridge gives up on it. Real pi in-process with the faux model, the hostile HTTP fixture on 127.0.0.1, and
 * another extension that records what pi's bus carries.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { startHostileHttp } from "./fixtures/hostile-http.ts";
import { busRecorder, EXTENSION_DIR, tempDir, waitFor } from "./helpers.ts";
import { startInProcessPi } from "./pi-harness.ts";

const CHANNELS = [
  "mcp.connecting",
  "mcp.connected",
  "mcp.disconnected",
  "mcp.error",
  "mcp.health.stale",
  "mcp.health.recovered",
  "tools.registered",
  "tools.updated",
  "tools.deregistered",
  "mcp.metrics",
];

describe("events on pi's bus", { timeout: 120_000 }, () => {
  test("a server that quotes the API key back in its errors, until the bridge gives up: no event carries the key", async () => {
    const secret = `KEY-${randomBytes(8).toString("hex")}`;
    const server = await startHostileHttp();
    const project = tempDir("mcp-bridge-evredact-project-");
    const agentDir = tempDir("mcp-bridge-evredact-agent-");
    writeFileSync(
      path.join(agentDir.dir, "mcp.json"),
      JSON.stringify({
        approval: "never",
        exposure: "direct",
        mcpServers: {
          // One reconnect: the second lost connection is the last, and the bridge gives up saying why.
          leaky: {
            url: server.url,
            headers: { "X-Api-Key": secret },
            reconnect: { maxAttempts: 1, initialDelay: 10, maxDelay: 20 },
          },
        },
      }),
    );
    const recorder = busRecorder(project.dir, CHANNELS);
    const { events } = recorder;
    const originalCwd = process.cwd();
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    const pi = await startInProcessPi({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [recorder.path, EXTENSION_DIR],
    });
    try {
      await pi.session.bindExtensions({});
      const gaveUp = () =>
        events().find((e) => e.channel === "mcp.disconnected" && /gave up/.test(String(e.payload.reason)));
      // Each call loses the connection (a 503 is the transport's failure); bounded: the bridge gives up after two.
      for (let turn = 0; turn < 4 && !gaveUp(); turn++) {
        pi.faux.setResponses([
          fauxAssistantMessage([fauxToolCall("mcp_leaky_unavailable", {})], { stopReason: "toolUse" }),
          fauxAssistantMessage("done"),
        ]);
        await pi.session.prompt("call it");
      }
      await waitFor(() => gaveUp() !== undefined, "the bridge to give up on the server");
      assert.match(String(gaveUp()!.payload.reason), /no backend for key \*\*\*/, "the reason is there, redacted");
      const published = JSON.stringify(events());
      assert.ok(!published.includes(secret), `an event carries the key:\n${published.slice(0, 3000)}`);
      // The reason the bridge gave up is also what a later call is told, and what /mcp shows for the server.
      pi.faux.setResponses([
        fauxAssistantMessage([fauxToolCall("mcp_leaky_unavailable", {})], { stopReason: "toolUse" }),
        fauxAssistantMessage("done"),
      ]);
      await pi.session.prompt("once more");
      const told = JSON.stringify(pi.session.messages.filter((m) => (m as { role: string }).role === "toolResult"));
      assert.ok(!told.includes(secret), `the model is told the key:\n${told.slice(0, 3000)}`);
      const printed: string[] = [];
      const { log } = console;
      console.log = (...args: unknown[]) => printed.push(args.join(" "));
      try {
        await pi.session.prompt("/mcp list");
      } finally {
        console.log = log;
      }
      assert.match(printed.join("\n"), /leaky/);
      assert.ok(!printed.join("\n").includes(secret), `/mcp list shows the key:\n${printed.join("\n")}`);
    } finally {
      await pi.close();
      process.chdir(originalCwd);
      await server.close();
      project.cleanup();
      agentDir.cleanup();
    }
  });
});
