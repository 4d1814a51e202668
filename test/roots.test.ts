/**
 * Roots: every server is offered the project root as a `file://` root, and told when the roots change. Checked with
 * the fixture server (which asks for the roots itself) and with the MCP project's reference server, which lists its
 * `get-roots-list` tool only to a client that declares roots.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, test } from "node:test";
import type { Root } from "@modelcontextprotocol/sdk/types.js";
import type { LogRecord } from "../src/common/log-file.ts";
import { McpBridge } from "../src/bridge/mcp-bridge.ts";
import { clientCapabilities, directoryRoot } from "../src/connection/mcp-client.ts";
import { connectionFor, EVERYTHING_SERVER, fixtureEntry, readLog, tempDir, waitFor } from "./helpers.ts";
import { runTool, toolsOf } from "./pi-tools.ts";

function textOf(result: { content: Array<{ type: string; text?: string }> }): string {
  return result.content.map((c) => c.text ?? "").join("");
}

describe("roots", { timeout: 120_000 }, () => {
  test("a directory as a root: its file:// URL, named after it; declared with listChanged only when there is a handler", () => {
    const root = directoryRoot("/work/my project/");
    assert.deepEqual(root, { uri: "file:///work/my%20project", name: "my project" });
    assert.deepEqual(directoryRoot("/"), { uri: "file:///", name: "/" });
    assert.deepEqual(clientCapabilities({ roots: () => [root] }).roots, { listChanged: true });
    assert.equal(clientCapabilities({}).roots, undefined);
  });

  test("a server that asks for the roots gets the project root", async () => {
    const project = tempDir("mcp-bridge-roots-");
    const connection = connectionFor("fixture", fixtureEntry(), { projectRoot: project.dir });
    try {
      await connection.connect();
      const result = await connection.callTool("roots", {});
      assert.deepEqual(JSON.parse(textOf(result)), {
        roots: [{ uri: pathToFileURL(project.dir).href, name: path.basename(project.dir) }],
      });
    } finally {
      await connection.close();
      project.cleanup();
    }
  });

  test("when the roots change, every connected server is told (through the bridge) and gets the new ones when it asks", async () => {
    const tmp = tempDir("mcp-bridge-roots-");
    const log = path.join(tmp.dir, "events.jsonl");
    const project = path.join(tmp.dir, "project");
    mkdirSync(project);
    // A user-level server: it needs no project trust.
    mkdirSync(path.join(tmp.dir, "agent"));
    writeFileSync(
      path.join(tmp.dir, "agent", "mcp.json"),
      JSON.stringify({ mcpServers: { fixture: { ...fixtureEntry(), env: { FIXTURE_LOG: log } } } }),
    );
    // A host that gives its own roots, and moves them.
    let roots: Root[] = [directoryRoot(project)];
    const bridge = new McpBridge({
      projectRoot: project,
      agentDir: path.join(tmp.dir, "agent"),
      bundledPath: path.join(tmp.dir, "bundled.json"),
      env: process.env,
      clientInfo: { name: "test", version: "0" },
      startupBudgetMs: 60_000,
      featuresFor: () => ({ roots: () => roots }),
    });
    try {
      await bridge.start();
      const connection = bridge.connection("fixture")!;
      assert.equal(connection.status, "connected", connection.lastError);
      assert.deepEqual(JSON.parse(textOf(await connection.callTool("roots", {}))).roots, roots);
      const changed = () => readLog(log).filter((e) => e.event === "roots-changed").length;
      assert.equal(changed(), 0);

      roots = [directoryRoot(tmp.dir), directoryRoot(project)];
      await bridge.rootsChanged();
      await waitFor(() => changed() === 1, "the server to hear that the roots changed");
      assert.deepEqual(JSON.parse(textOf(await connection.callTool("roots", {}))).roots, roots);
    } finally {
      await bridge.shutdown();
      tmp.cleanup();
    }
  });

  test("a server with no live session is not told (and nothing throws)", async () => {
    const tmp = tempDir("mcp-bridge-roots-");
    const log = path.join(tmp.dir, "events.jsonl");
    const records: LogRecord[] = [];
    const logger = { log: (r: LogRecord) => records.push(r) };
    const connection = connectionFor("fixture", { ...fixtureEntry(), env: { FIXTURE_LOG: log } }, { logger });
    const heard = () => readLog(log).map((e) => e.event);
    try {
      // Not started yet: the change starts no process to tell it.
      await connection.rootsChanged();
      assert.deepEqual(heard(), []);
      await connection.connect();
      await connection.close();
      // Its session closed: the change reaches no process, and none is started again.
      await connection.rootsChanged();
      assert.deepEqual(heard(), ["start"]);
      const failed = records.filter((r) => r.event === "roots.notify.failed");
      assert.deepEqual(failed, [], "no attempt to tell a closed session");
    } finally {
      await connection.close();
      tmp.cleanup();
    }
  });

  test("server-everything lists get-roots-list, and it returns the project root", async () => {
    const project = tempDir("mcp-bridge-roots-");
    const connection = connectionFor(
      "everything",
      { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] },
      { projectRoot: project.dir },
    );
    try {
      await connection.connect();
      const tools = toolsOf(connection);
      assert.ok(tools.has("mcp_everything_get-roots-list"), [...tools.keys()].join(", "));
      const { text } = await runTool(tools.get("mcp_everything_get-roots-list"));
      assert.match(text, /Current MCP Roots \(1 total\)/);
      assert.ok(text.includes(`URI: ${pathToFileURL(project.dir).href}\n`), text);
      assert.ok(text.includes(`1. ${path.basename(project.dir)}\n`), text);
    } finally {
      await connection.close();
      project.cleanup();
    }
  });
});
