/**
 * A server may tell the client that a resource changed, but only of a resource the client subscribed to. One that
 * sends updates nobody asked for (a hundred of them, with a terminal clipboard write and a bidi override in the URI)
 * gets no notice on the user's screen and no event on pi's bus. Real pi in-process with the faux model, a real local
 * server process; the subscribed case is in resources.test.ts (server-everything's own updates). A burst of updates of a
 * subscribed resource is one notice until the resource is read again (a server script over stdio, the resource tools).
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import { ResourceTools } from "../src/pi/resource-tools.ts";
import { busRecorder, connectionFor, EXTENSION_DIR, REPO_ROOT, restoreEnv, tempDir, waitFor } from "./helpers.ts";
import { runTool } from "./pi-tools.ts";
import { startInProcessPi } from "./pi-harness.ts";
import { RecordingUI } from "./recording-ui.ts";
import { bundledFixture } from "./fixture-bundle.ts";

const HOSTILE_FIXTURE = bundledFixture(path.join(REPO_ROOT, "test", "fixtures", "hostile-stdio.mjs"));

describe("resource updates a server sends on its own", { timeout: 120_000 }, () => {
  test("updates of a resource nobody subscribed to reach neither the screen nor pi's bus", async () => {
    const project = tempDir("mcp-bridge-updates-project-");
    const agentDir = tempDir("mcp-bridge-updates-agent-");
    writeFileSync(
      path.join(agentDir.dir, "mcp.json"),
      JSON.stringify({
        exposure: "direct",
        mcpServers: {
          noisy: { command: process.execPath, args: [HOSTILE_FIXTURE, "--mode", "healthy"], autoApprove: ["*"] },
        },
      }),
    );
    // An extension loaded beside the bridge records what it publishes about resources on pi's bus.
    const recorder = busRecorder(project.dir, ["mcp.resources.updated"]);
    const saved = { cwd: process.cwd(), env: { ...process.env } };
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    const ui = new RecordingUI();
    const pi = await startInProcessPi({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [EXTENSION_DIR, recorder.path],
    });
    try {
      await pi.session.bindExtensions({ uiContext: ui.context() });
      const before = ui.notices.length;
      // The updates come before the call's answer on the same pipe, so they have all been handled once it is back;
      // the echo after it is a second round trip for good measure.
      pi.faux.setResponses([
        fauxAssistantMessage([fauxToolCall("mcp_noisy_updates", { count: 100 })], { stopReason: "toolUse" }),
        fauxAssistantMessage([fauxToolCall("mcp_noisy_echo", { text: "after" })], { stopReason: "toolUse" }),
        fauxAssistantMessage("done"),
      ]);
      await pi.session.prompt("go");
      const results = pi.session.messages.filter(
        (m) => (m as { role: string }).role === "toolResult",
      ) as unknown as Array<{
        content: Array<{ text?: string }>;
      }>;
      assert.deepEqual(
        results.map((r) => r.content[0]?.text),
        ["sent 100 updates", "after"],
      );
      const said = ui.notices.slice(before);
      assert.deepEqual(
        said.filter((n) => /resource/.test(n)),
        [],
        `no notice of a resource nobody subscribed to: ${said.join("\n").slice(0, 500)}`,
      );
      assert.deepEqual(recorder.events(), [], "no event on the bus");
    } finally {
      await pi.close();
      process.chdir(saved.cwd);
      restoreEnv(saved.env);
      project.cleanup();
      agentDir.cleanup();
    }
  });
});

describe("updates of a resource the bridge subscribed to", { timeout: 60_000 }, () => {
  test("a burst of them is one notice until the resource is read again, each on pi's bus", async () => {
    // Sends 20 updates of a resource once it is subscribed to, and 20 more after each later read of it.
    const script = `const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n");
    let subscribed = false;
    const burst = (uri) => { for (let i = 0; i < 20; i++) send({ method: "notifications/resources/updated", params: { uri } }); };
    require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
      const { id, method, params } = JSON.parse(line);
      if (id === undefined) return;
      if (method === "initialize")
        return send({ id, result: { protocolVersion: "2025-06-18", capabilities: { resources: { subscribe: true } }, serverInfo: { name: "s", version: "1" } } });
      if (method === "resources/read") {
        send({ id, result: { contents: [{ uri: params.uri, text: "now" }] } });
        return subscribed && burst(params.uri);
      }
      if (method === "resources/subscribe") {
        send({ id, result: {} });
        subscribed = true;
        return burst(params.uri);
      }
      send({ id, result: method === "tools/list" ? { tools: [] } : {} });
    });`;
    const connection = connectionFor(
      "live",
      { command: process.execPath, args: ["-e", script], protocolVersion: "2025-06-18" },
      { onServerChange: (c, change) => resourceTools.changed(c, change) },
    );
    const tools = new Map<string, ToolDefinition>();
    const notices: string[] = [];
    let updates = 0;
    const resourceTools = new ResourceTools({
      registerTool: (definition) => tools.set(definition.name, definition as unknown as ToolDefinition),
      activate: () => undefined,
      connections: () => [connection],
      notify: (text) => void notices.push(text),
      events: (channel) => void (channel === "mcp.resources.updated" && updates++),
    });
    try {
      await connection.connect();
      resourceTools.sync(connection);
      await runTool(tools.get("read_mcp_resource"), { server: "live", uri: "live://log" });
      await waitFor(() => updates === 20, "the first burst", 15_000);
      assert.equal(notices.length, 1, notices.join("\n"));
      await runTool(tools.get("read_mcp_resource"), { server: "live", uri: "live://log" });
      await waitFor(() => updates === 40, "the second burst", 15_000);
      assert.equal(notices.length, 2, notices.join("\n"));
    } finally {
      await connection.close();
    }
  });
});
