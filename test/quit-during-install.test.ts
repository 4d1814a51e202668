/**
 * Quitting pi while npx installs a server's package, through real pi in-process: npm gets the time it needs to roll the
 * install back (stopped partway, it would break npx's copy of the package), and pi says why its exit waits. After a
 * quit pi's screen is gone, so the line goes to stderr.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { startInProcessPi } from "./pi-harness.ts";
import { RecordingUI } from "./recording-ui.ts";
import { commandLine, EXTENSION_DIR, REPO_ROOT, tempDir, trustProjectServers, waitFor } from "./helpers.ts";
import { processesWithEnv } from "./tmux.ts";

describe("quitting pi while npx installs a server", { timeout: 120_000 }, () => {
  test("pi says it waits for npm to roll the install back, and npm finishes it", async () => {
    const project = tempDir("mcp-bridge-project-");
    const agentDir = tempDir("mcp-bridge-agent-");
    const originalCwd = process.cwd();
    const rolledBack = path.join(project.dir, "rolled-back");
    const mark = randomUUID();
    const npx = path.join(REPO_ROOT, "test", "fixtures", "fake-npx.sh");
    const kube = {
      command: npx,
      args: [path.join(project.dir, "never-installed"), process.execPath, "-e", ""],
      env: { FAKE_NPX_ROLLED_BACK: rolledBack, FAKE_NPX_MARK: mark },
    };
    mkdirSync(path.join(project.dir, ".pi"));
    writeFileSync(path.join(project.dir, ".pi", "mcp.json"), JSON.stringify({ mcpServers: { kube } }));
    writeFileSync(path.join(agentDir.dir, "mcp.json"), JSON.stringify({ approval: "never" }));
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    // Startup does not wait for the server: the install never ends.
    process.env.PI_MCP_STARTUP_BUDGET_MS = "0";
    process.chdir(project.dir);
    const written: string[] = [];
    const write = process.stderr.write;
    try {
      await trustProjectServers(project.dir, agentDir.dir);
      const pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
      // With a UI, as in pi's TUI: startup does not wait for the server (print mode waits for every server).
      await pi.session.bindExtensions({ uiContext: new RecordingUI().context() });
      const npm = () =>
        processesWithEnv("FAKE_NPX_MARK", mark).filter((pid) => commandLine(pid).startsWith("npm exec"));
      await waitFor(() => npm().length === 1 && existsSync(`${rolledBack}.ready`), "npx to start installing");
      process.stderr.write = ((chunk: string | Uint8Array) => written.push(String(chunk)) > 0) as typeof write;
      await pi.close();
      process.stderr.write = write;
      assert.ok(
        written.includes(
          "MCP: waiting up to 30 s for npm to roll back the unfinished npx install of 'kube' (stopped partway, it would " +
            "leave npx's copy of the package broken)\n",
        ),
        written.join(""),
      );
      assert.ok(existsSync(rolledBack), "npm finished its rollback before pi's session ended");
    } finally {
      process.stderr.write = write;
      process.chdir(originalCwd);
      delete process.env.PI_MCP_STARTUP_BUDGET_MS;
      project.cleanup();
      agentDir.cleanup();
    }
  });
});
