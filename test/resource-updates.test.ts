/**
 * A server may tell the client that a resource changed, but only of a resource the client subscribed to. One that
 * sends updates nobody asked for (a hundred of them, with a terminal clipboard write and a bidi override in the URI)
 * gets no notice on the user's screen and no event on pi's bus. Real pi in-process with the faux model, a real local
 * server process; the subscribed case is in resources.test.ts (server-everything's own updates).
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { busRecorder, EXTENSION_DIR, REPO_ROOT, restoreEnv, tempDir } from "./helpers.ts";
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
