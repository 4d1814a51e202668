/**
 * The files binary resources are saved to last as long as pi's session: the model can read them while it runs, and
 * they are gone once pi shuts down, or once its process exits without a shutdown. Real pi in-process with the faux
 * model, and the reference server `@modelcontextprotocol/server-everything` as a child process.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { gunzipSync } from "node:zlib";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { EVERYTHING_SERVER, EXTENSION_DIR, REPO_ROOT, tempDir } from "./helpers.ts";
import { startInProcessPi } from "./pi-harness.ts";
import { PI_LINE } from "./pi-line.ts";

const ORIGINAL = "resources are read through pi\n".repeat(20);
const GZIP_ARGS = {
  name: "notes.txt.gz",
  data: `data:text/plain;base64,${Buffer.from(ORIGINAL).toString("base64")}`,
  outputType: "resourceLink",
};
const READ_ARGS = { server: "everything", uri: "demo://resource/session/notes.txt.gz" };
const SAVED = /saved to: (.+)$/m;
const EXIT_AFTER_RESOURCE = path.join(REPO_ROOT, "test", "fixtures", "exit-after-resource.ts");

/** A user config with the everything server, approval off (no UI to ask in) and its tools declared directly. */
function writeConfig(agentDir: string): void {
  writeFileSync(
    path.join(agentDir, "mcp.json"),
    JSON.stringify({
      approval: "never",
      exposure: "direct",
      mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] } },
    }),
  );
}

describe("files of binary resources", { timeout: 120_000 }, () => {
  test("a saved binary resource is there during the session, /reload included, and gone after pi's shutdown", async () => {
    const project = tempDir("mcp-bridge-resfiles-project-");
    const agentDir = tempDir("mcp-bridge-resfiles-agent-");
    writeConfig(agentDir.dir);
    const originalCwd = process.cwd();
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    const pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
    let closed = false;
    try {
      // An error listener, as every pi host binds one: pi fires session_start after a reload only to a bound session.
      await pi.session.bindExtensions({ onError: (error) => assert.fail(`extension error: ${JSON.stringify(error)}`) });
      pi.faux.setResponses([
        fauxAssistantMessage([fauxToolCall("mcp_everything_gzip-file-as-resource", GZIP_ARGS)], {
          stopReason: "toolUse",
        }),
        fauxAssistantMessage([fauxToolCall("read_mcp_resource", READ_ARGS)], { stopReason: "toolUse" }),
        fauxAssistantMessage("done"),
      ]);
      await pi.session.prompt("save the notes");
      const read = pi.session.messages
        .filter((m) => (m as { role: string }).role === "toolResult")
        .at(-1) as unknown as { content: Array<{ text?: string }> };
      const file = SAVED.exec(read.content.map((c) => c.text ?? "").join("\n"))?.[1];
      assert.ok(file, JSON.stringify(read.content));
      assert.equal(gunzipSync(readFileSync(file)).toString("utf8"), ORIGINAL, "the model can read the file now");
      // /reload loads the extension afresh, and the session goes on: its files stay for it.
      await pi.session.reload();
      assert.ok(existsSync(file), "the file is still there after /reload");
      await pi.close();
      closed = true;
      assert.ok(!existsSync(file), "the file is gone after the shutdown");
      assert.ok(!existsSync(path.dirname(file)), "and so is its directory");
    } finally {
      if (!closed) await pi.close();
      process.chdir(originalCwd);
      project.cleanup();
      agentDir.cleanup();
    }
  });

  test("two pi sessions in one process (an SDK host): one ending leaves the other's files", async () => {
    const project = tempDir("mcp-bridge-resfiles-two-project-");
    const agentDir = tempDir("mcp-bridge-resfiles-two-agent-");
    writeConfig(agentDir.dir);
    const originalCwd = process.cwd();
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    const options = { cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] };
    const reader = await startInProcessPi(options);
    const other = await startInProcessPi(options);
    const open = new Set([reader, other]);
    try {
      for (const pi of open)
        await pi.session.bindExtensions({ onError: (error) => assert.fail(JSON.stringify(error)) });
      reader.faux.setResponses([
        fauxAssistantMessage([fauxToolCall("mcp_everything_gzip-file-as-resource", GZIP_ARGS)], {
          stopReason: "toolUse",
        }),
        fauxAssistantMessage([fauxToolCall("read_mcp_resource", READ_ARGS)], { stopReason: "toolUse" }),
        fauxAssistantMessage("done"),
      ]);
      await reader.session.prompt("save the notes");
      const read = reader.session.messages
        .filter((m) => (m as { role: string }).role === "toolResult")
        .at(-1) as unknown as { content: Array<{ text?: string }> };
      const file = SAVED.exec(read.content.map((c) => c.text ?? "").join("\n"))?.[1];
      assert.ok(file, JSON.stringify(read.content));
      await other.close();
      open.delete(other);
      assert.ok(existsSync(file), "the file of the session still running is still there");
      await reader.close();
      open.delete(reader);
      assert.ok(!existsSync(file), "and gone once its own session ends");
    } finally {
      for (const pi of open) await pi.close();
      process.chdir(originalCwd);
      project.cleanup();
      agentDir.cleanup();
    }
  });

  test("a process that exits without a shutdown takes the saved files with it", async () => {
    const work = tempDir("mcp-bridge-resfiles-exit-");
    const agentDir = path.join(work.dir, "agent");
    try {
      mkdirSync(agentDir);
      writeConfig(agentDir);
      // The child runs the same pi line as this test: pi 1.x through the same import aliases.
      const aliases = PI_LINE === "1.x" ? ["--import", path.join(REPO_ROOT, "test", "pi1x", "aliases.mjs")] : [];
      const child = spawn(process.execPath, ["--import", import.meta.resolve("tsx"), ...aliases, EXIT_AFTER_RESOURCE], {
        cwd: work.dir,
        env: {
          ...process.env,
          RESOURCE_EXIT_DIR: work.dir,
          PI_CODING_AGENT_DIR: agentDir,
          PI_MCP_STARTUP_BUDGET_MS: "60000",
          PI_OFFLINE: "1",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      let err = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (err += d));
      const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
      const line = out.split("\n").find((l) => l.startsWith("{"));
      assert.ok(line, `the child reported nothing (exit ${code}):\n${err.slice(-2000)}`);
      const report = JSON.parse(line) as { file?: string; there: boolean; text: string };
      assert.ok(report.file, report.text);
      assert.ok(report.there, "the file was there while pi ran");
      assert.ok(!existsSync(report.file), "the file is gone once the process exited");
      assert.ok(!existsSync(path.dirname(report.file)), "and so is its directory");
    } finally {
      work.cleanup();
    }
  });
});
