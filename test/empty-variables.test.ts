/**
 * A `${VAR}` set to "" in pi's environment is set, as in a shell: a local server's `env` entry gets it empty, and `/mcp`
 * says "empty"; in a local server's arguments it stops the server, as a missing one does, before any process starts.
 * Real pi in-process with the faux model, real server processes.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { EXTENSION_DIR, fixtureEntry, tempDir } from "./helpers.ts";
import { startInProcessPi } from "./pi-harness.ts";
import { RecordingUI } from "./recording-ui.ts";

const VAR = "MCP_BRIDGE_TEST_EMPTY_VALUE";

describe("an environment variable set to an empty string", { timeout: 120_000 }, () => {
  test("reaches the server empty, /mcp shows it as empty, and in args it stops that server", async () => {
    const project = tempDir("mcp-bridge-empty-project-");
    const agentDir = tempDir("mcp-bridge-empty-agent-");
    const startLog = path.join(project.dir, "started.jsonl");
    const fixture = fixtureEntry();
    writeFileSync(
      path.join(agentDir.dir, "mcp.json"),
      JSON.stringify({
        exposure: "direct",
        mcpServers: {
          envs: { ...fixture, env: { SEEN: `\${${VAR}}` }, autoApprove: ["*"] },
          // The fixture writes a line to FIXTURE_LOG as its first act: no file means no process.
          rooted: { ...fixture, args: [...fixture.args, "--root", `\${${VAR}}`], env: { FIXTURE_LOG: startLog } },
        },
      }),
    );
    const saved = { cwd: process.cwd(), env: { ...process.env } };
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.env[VAR] = "";
    process.chdir(project.dir);
    const ui = new RecordingUI();
    const pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
    try {
      await pi.session.bindExtensions({ uiContext: ui.context() });
      pi.faux.setResponses([
        fauxAssistantMessage([fauxToolCall("mcp_envs_env", { name: "SEEN", digest: true })], { stopReason: "toolUse" }),
        fauxAssistantMessage("done"),
      ]);
      await pi.session.prompt("what does the server see?");
      const result = pi.session.messages
        .filter((m) => (m as { role: string }).role === "toolResult")
        .at(-1) as unknown as { content: Array<{ text?: string }>; isError: boolean } | undefined;
      // The digest of "" (an unset variable would read "(unset)").
      assert.equal(result?.isError, false, JSON.stringify(result));
      assert.equal(result?.content[0]?.text, createHash("sha256").update("").digest("hex"));

      await pi.session.prompt("/mcp list");
      const listing = ui.notices.at(-1) ?? "";
      assert.match(listing, new RegExp(`variables: ${VAR} empty`), listing);
      assert.doesNotMatch(listing, /NOT SET/, listing);
      assert.match(
        listing,
        new RegExp(`environment variable \\$\\{${VAR}\\} in \`args\\[\\d+\\]\` is empty; set it in the environment`),
        listing,
      );
      assert.equal(existsSync(startLog), false, "the server with the empty argument was started");
    } finally {
      await pi.close();
      process.chdir(saved.cwd);
      for (const key of Object.keys(process.env)) if (!(key in saved.env)) delete process.env[key];
      Object.assign(process.env, saved.env);
      project.cleanup();
      agentDir.cleanup();
    }
  });
});
