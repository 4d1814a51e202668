/**
 * Tools loaded by `tool_search` belong to the session they were loaded in: pi's `/new` starts a session without them,
 * and `/resume` of the first brings them back. Real pi in-process through its session runtime (as its CLI switches
 * sessions, in one process), a fake OpenAI-compatible model on 127.0.0.1 (what is checked is the request body pi-ai
 * sends), and the catalog fixture server as a child process.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { TOOL_SEARCH_NAME } from "../src/exposure/tool-search-text.ts";
import { EXTENSION_DIR, REPO_ROOT, tempDir } from "./helpers.ts";
import { startFakeOpenAi } from "./fixtures/fake-openai.ts";
import { startPiRuntime } from "./pi-harness.ts";
import { bundledFixture } from "./fixture-bundle.ts";

const CATALOG = path.join(REPO_ROOT, "test", "fixtures", "catalog-server.ts");

describe("tool loads across sessions in one pi process", { timeout: 180_000 }, () => {
  test("/new: the tools loaded in the session before are not loaded; /resume of it: they are again", async () => {
    const project = tempDir("mcp-bridge-switch-project-");
    const agentDir = tempDir("mcp-bridge-switch-agent-");
    const sessions = tempDir("mcp-bridge-switch-sessions-");
    writeFileSync(
      path.join(agentDir.dir, "mcp.json"),
      JSON.stringify({
        approval: "never",
        mcpServers: {
          catalog: {
            command: process.execPath,
            args: [bundledFixture(CATALOG)],
            exposure: "deferred",
          },
        },
      }),
    );
    const originalCwd = process.cwd();
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    const model = await startFakeOpenAi();
    const pi = await startPiRuntime({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [EXTENSION_DIR],
      model: model.model,
      sessionManager: SessionManager.create(project.dir, sessions.dir),
    });
    /** The catalog tools declared in the last request the model got. */
    const declared = () =>
      (model.requests.at(-1)?.tools ?? []).filter((name) => name.startsWith("mcp_catalog_")).sort();
    const ask = async (text: string) => {
      model.script([{ text: "ok" }]);
      await pi.runtime.session.prompt(text);
      return declared();
    };
    try {
      await pi.runtime.session.bindExtensions({});
      model.script([
        { toolCalls: [{ name: TOOL_SEARCH_NAME, args: { query: "search the code", limit: 1 } }] },
        { text: "found" },
      ]);
      await pi.runtime.session.prompt("where is main defined?");
      assert.deepEqual(declared(), ["mcp_catalog_search_code"], "loaded in the first session");
      const first = pi.runtime.session.sessionManager.getSessionFile();
      assert.ok(first, "the first session is saved to a file");

      await pi.runtime.newSession();
      await pi.runtime.session.bindExtensions({});
      assert.notEqual(pi.runtime.session.sessionManager.getSessionFile(), first);
      assert.deepEqual(await ask("anything here?"), [], "a new session has no tool loaded");

      await pi.runtime.switchSession(first);
      await pi.runtime.session.bindExtensions({});
      assert.deepEqual(await ask("and back?"), ["mcp_catalog_search_code"], "the first session's load is back");
    } finally {
      await pi.close();
      await model.close();
      process.chdir(originalCwd);
      project.cleanup();
      agentDir.cleanup();
      sessions.cleanup();
    }
  });
});
