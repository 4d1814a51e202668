/**
 * The bridge as a whole: config files on disk in every layer, parallel connects, what is reported, and shutdown.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { McpBridge } from "../src/bridge.ts";
import { serverRows } from "../src/command.ts";
import { formatStartupSummary } from "../src/status-format.ts";
import { ToolRegistry } from "../src/tool-registry.ts";
import { startHanging } from "./fixtures/http-servers.ts";
import { fixtureEntry, isAlive, readLog, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

function makeBridge(root: string, extraPath?: string): McpBridge {
  return new McpBridge({
    projectRoot: path.join(root, "project"),
    agentDir: path.join(root, "agent"),
    bundledPath: path.join(root, "bundled", "mcp.json"),
    extraPath,
    env: process.env,
    clientInfo: { name: "test", version: "0" },
  });
}

describe("McpBridge", { timeout: 120_000 }, () => {
  test("layers real files, starts enabled servers only, reports each problem once, and shuts everything down", async () => {
    const tmp = tempDir();
    const log = path.join(tmp.dir, "events.jsonl");
    const server = (extra: Record<string, unknown> = {}) => ({ ...fixtureEntry(), env: { FIXTURE_LOG: log }, ...extra });
    // Bundled: one server the user file overrides and one it does not.
    write(path.join(tmp.dir, "bundled", "mcp.json"), JSON.stringify({ mcpServers: { shared: { command: "bundled-only" }, fromBundle: server() } }));
    // User: comments and a BOM; a server the project switches off; a broken entry.
    write(
      path.join(tmp.dir, "agent", "mcp.json"),
      `\uFEFF{\n  // user servers\n  "servers": {\n    "shared": ${JSON.stringify(server())},\n    "switchedOff": ${JSON.stringify(server())},\n    "broken": { "url": "not a url" },\n  },\n}`,
    );
    // Project: opencode's shape, switching the user server off.
    write(path.join(tmp.dir, "project", ".pi", "mcp.json"), JSON.stringify({ mcp: { switchedOff: { enabled: false }, local: { type: "local", ...server() } } }));
    // --mcp-config file, relative to the project root.
    write(path.join(tmp.dir, "project", "extra.json"), JSON.stringify({ mcpServers: { fromFlag: server() } }));

    const bridge = makeBridge(tmp.dir, "extra.json");
    try {
      await bridge.start();
      const byName = Object.fromEntries([...bridge.connections.values()].map((c) => [c.name, c]));
      // Highest-priority file first, each in its own order.
      assert.deepEqual(Object.keys(byName), ["fromFlag", "switchedOff", "local", "shared", "fromBundle"]);
      assert.equal(byName.fromFlag!.config.source.scope, "flag");
      assert.equal(byName.local!.config.source.scope, "project");
      assert.equal(byName.shared!.config.source.scope, "user");
      assert.equal(byName.fromBundle!.config.source.scope, "bundled");
      for (const name of ["fromFlag", "local", "shared", "fromBundle"]) assert.equal(byName[name]!.status, "connected", name);
      assert.equal(byName.switchedOff!.status, "disabled");
      assert.equal(readLog(log).filter((e) => e.event === "start").length, 4, "the disabled server was never started");

      assert.equal(bridge.problems.length, 1);
      assert.equal(bridge.problems[0]!.server, "broken");
      assert.match(bridge.problems[0]!.source.path, /agent\/mcp\.json$/);

      const registry = new ToolRegistry(() => {}, (name) => bridge.connection(name));
      for (const c of bridge.connections.values()) if (c.status === "connected") registry.registerServer(c);
      const summary = formatStartupSummary(serverRows(bridge, registry, process.env), bridge.problems, registry.warnings);
      assert.match(summary!, /MCP: 4 of 4 servers connected/);
      assert.match(summary!, /server 'broken' in user config .*: `url` is not a valid URL/);
    } finally {
      await bridge.shutdown();
      tmp.cleanup();
    }
    const pids = readLog(log).map((e) => e.pid);
    await waitFor(() => pids.every((pid) => !isAlive(pid)), "every server to stop");
  });

  test("servers connect in parallel: a hung server does not hold up the others", async () => {
    const tmp = tempDir();
    // When the second hung server receives its request, the first must still be waiting: connects overlap.
    const first = await startHanging();
    let firstStillWaiting: boolean | undefined;
    const second = await startHanging(() => {
      firstStillWaiting ??= first.openSockets() > 0 && first.requests.length === 1;
    });
    const log = path.join(tmp.dir, "events.jsonl");
    write(
      path.join(tmp.dir, "project", ".pi", "mcp.json"),
      JSON.stringify({
        mcpServers: {
          hung1: { url: first.url, timeout: 1500 },
          hung2: { url: second.url, timeout: 1500 },
          crashes: { ...fixtureEntry("crash-on-start"), env: { FIXTURE_LOG: log } },
          works: { ...fixtureEntry(), env: { FIXTURE_LOG: log } },
        },
      }),
    );
    const bridge = makeBridge(tmp.dir);
    try {
      await bridge.start();
      assert.equal(firstStillWaiting, true);
      assert.equal(bridge.connection("works")!.status, "connected");
      for (const name of ["hung1", "hung2", "crashes"]) assert.equal(bridge.connection(name)!.status, "error", name);
      assert.match(bridge.connection("hung1")!.lastError!, /did not complete the MCP handshake within 1\.5 s/);
      assert.match(bridge.connection("crashes")!.lastError!, /exited with code 3/);
      await waitFor(() => first.openSockets() === 0 && second.openSockets() === 0, "no socket left to the hung servers", 2000);
    } finally {
      await bridge.shutdown();
      await first.close();
      await second.close();
      tmp.cleanup();
    }
  });

  test("a missing --mcp-config file, a directory in place of a file, and invalid JSON are reported, not fatal", async () => {
    const tmp = tempDir();
    mkdirSync(path.join(tmp.dir, "agent", "mcp.json"), { recursive: true });
    write(path.join(tmp.dir, "project", ".pi", "mcp.json"), "{ not json");
    const bridge = makeBridge(tmp.dir, "missing.json");
    try {
      await bridge.start();
      assert.equal(bridge.connections.size, 0);
      const messages = bridge.problems.map((p) => `${p.source.scope}: ${p.message}`);
      assert.equal(messages.length, 3, messages.join("\n"));
      assert.match(messages.join("\n"), /flag: cannot read the file: file not found/);
      assert.match(messages.join("\n"), /user: cannot read the file: is a directory/);
      assert.match(messages.join("\n"), /project: not valid JSON/);
    } finally {
      await bridge.shutdown();
      tmp.cleanup();
    }
  });

  test("the bundled mcp.json ships with no servers", async () => {
    const bridge = new McpBridge({
      projectRoot: tempDir().dir,
      agentDir: tempDir().dir,
      bundledPath: path.join(REPO_ROOT, "mcp.json"),
      env: process.env,
      clientInfo: { name: "test", version: "0" },
    });
    await bridge.start();
    assert.equal(bridge.connections.size, 0);
    assert.deepEqual(bridge.problems, []);
  });
});
