/**
 * A local server restarted when its watched files change (`dev.watch`, src/connection/local/dev-watch.ts and
 * src/bridge/dev-restarts.ts): which paths a glob takes, the entry's field, and a real server behind a real bridge
 * restarted by a real file written under the project.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import { McpBridge } from "../src/bridge/mcp-bridge.ts";
import { LogFile } from "../src/common/log-file.ts";
import { globBase, globTest } from "../src/connection/local/dev-watch.ts";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import { ToolRegistry } from "../src/pi/tool-registry.ts";
import { fixtureEntry, tempDir, TEST_SOURCE, waitFor } from "./helpers.ts";
import { runTool } from "./pi-tools.ts";

describe("dev.watch", { timeout: 60_000 }, () => {
  test("globs: ** for any folders, * and ? within one; watched from the folder before the first wildcard", () => {
    const matches = (glob: string, files: string[]) => files.filter(globTest(glob));
    const files = ["src/a.ts", "src/x/y/b.ts", "src/a.js", "lib/a.ts", "a.ts", "src/a.tsx"];
    assert.deepEqual(matches("src/**/*.ts", files), ["src/a.ts", "src/x/y/b.ts"]);
    assert.deepEqual(matches("./src/*.ts", files), ["src/a.ts"]);
    assert.deepEqual(matches("**/*.ts", files), ["src/a.ts", "src/x/y/b.ts", "lib/a.ts", "a.ts"]);
    assert.deepEqual(matches("src/a.ts?", files), ["src/a.tsx"]);
    assert.deepEqual(matches("src/**", files), ["src/a.ts", "src/x/y/b.ts", "src/a.js", "src/a.tsx"]);
    assert.deepEqual(["src/**/*.ts", "**/*.py", "build/index.js", "index.js", "a/b/*/c.js"].map(globBase), [
      "src",
      ".",
      "build",
      ".",
      "a/b",
    ]);
  });

  test("the field: VS Code's dev.watch, a glob or several; refused for a remote or shared server; dev.debug ignored", () => {
    const entry = (fields: Record<string, unknown>) => validateServerEntry("s", fields, TEST_SOURCE);
    assert.deepEqual(entry({ command: "node", dev: { watch: "src/**/*.ts" } }).config?.watch, ["src/**/*.ts"]);
    assert.deepEqual(entry({ command: "node", dev: { watch: ["a/*", "b/*"] } }).config?.watch, ["a/*", "b/*"]);
    const debugOnly = entry({ command: "node", dev: { debug: { type: "node" } } });
    assert.deepEqual([debugOnly.config?.watch, debugOnly.warnings], [undefined, []]);
    assert.match(
      entry({ command: "node", dev: { watch: 3 } }).errors.join(),
      /`dev\.watch` must be a glob or an array/,
    );
    assert.match(
      entry({ url: "http://h/mcp", dev: { watch: "x" } }).errors.join(),
      /local servers of one session only/,
    );
    assert.match(entry({ command: "node", shared: true, dev: { watch: "x" } }).errors.join(), /not remote or `shared`/);
  });

  test("a file written under the watched folder restarts the running server; the log says which", async () => {
    const tmp = tempDir();
    const projectRoot = path.join(tmp.dir, "project");
    mkdirSync(path.join(projectRoot, ".pi"), { recursive: true });
    mkdirSync(path.join(projectRoot, "src", "tools"), { recursive: true });
    const server = { ...fixtureEntry(), dev: { watch: "src/**/*.ts" } };
    writeFileSync(path.join(projectRoot, ".pi", "mcp.json"), JSON.stringify({ mcpServers: { dev: server } }));
    const logPath = path.join(tmp.dir, "mcp.log");
    const logger = new LogFile(logPath, { maxBytes: 256 * 1024 });
    const bridge = new McpBridge({
      projectRoot,
      agentDir: path.join(tmp.dir, "agent"),
      bundledPath: path.join(tmp.dir, "bundled.json"),
      env: process.env,
      clientInfo: { name: "test", version: "0" },
      logger,
      startupBudgetMs: 60_000,
    });
    const tools = new Map<string, ToolDefinition>();
    const registry = new ToolRegistry(
      (def) => tools.set(def.name, def as ToolDefinition),
      (name) => bridge.connection(name),
    );
    bridge.onTools((connection, list) => registry.syncServer(connection, list));
    const pid = async () => (await runTool(tools.get("mcp_dev_pid"), {})).text;
    try {
      await bridge.start();
      const before = await pid();
      writeFileSync(path.join(projectRoot, "src", "tools", "search.ts"), "export const changed = 1;\n");
      await waitFor(
        async () => bridge.connection("dev")!.state.kind === "live" && (await pid()) !== before,
        "a restart",
        30_000,
      );
      await logger.close();
      assert.match(
        readFileSync(logPath, "utf8"),
        /"event":"dev\.restart","server":"dev","file":"src\/tools\/search\.ts"/,
      );
    } finally {
      await bridge.shutdown();
      tmp.cleanup();
    }
  });
});
