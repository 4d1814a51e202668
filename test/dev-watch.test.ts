/**
 * A local server restarted when its watched files change (`dev.watch`, src/connection/local/dev-watch.ts and
 * src/bridge/dev-restarts.ts): which paths a glob takes, the entry's field, and a real server behind a real bridge
 * restarted by a real file written under the project.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import type { DevWatchStatus } from "../src/bridge/dev-restarts.ts";
import { LogFile } from "../src/common/log-file.ts";
import { within } from "../src/common/wait.ts";
import { globBase, globTest, watchFiles } from "../src/connection/local/dev-watch.ts";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import { fixtureEntry, tempDir, TEST_SOURCE, testBridge, waitFor } from "./helpers.ts";
import { registeredTools, runTool } from "./pi-tools.ts";

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

  test("globs with VS Code's {a,b} groups: each choice taken, and the folder before a group is the base", () => {
    const files = ["src/a.ts", "src/a.js", "src/a.py", "lib/b.ts", "test/c.ts"];
    assert.deepEqual(files.filter(globTest("src/*.{ts,js}")), ["src/a.ts", "src/a.js"]);
    assert.deepEqual(files.filter(globTest("{src,lib}/*.ts")), ["src/a.ts", "lib/b.ts"]);
    assert.deepEqual(["{src,lib}/*.ts", "src/*.{ts,js}"].map(globBase), [".", "src"]);
  });

  test("the field: VS Code's dev.watch, a glob or several; left out with a warning for a remote or shared server; dev.debug ignored", () => {
    const entry = (fields: Record<string, unknown>) => validateServerEntry("s", fields, TEST_SOURCE);
    assert.deepEqual(entry({ command: "node", dev: { watch: "src/**/*.ts" } }).config?.watch, ["src/**/*.ts"]);
    assert.deepEqual(entry({ command: "node", dev: { watch: ["a/*", "b/*"] } }).config?.watch, ["a/*", "b/*"]);
    const debugOnly = entry({ command: "node", dev: { debug: { type: "node" } } });
    assert.deepEqual([debugOnly.config?.watch, debugOnly.warnings], [undefined, []]);
    // Warnings, and the server kept without the watch: it runs all the same.
    const wrong = entry({ command: "node", dev: { watch: 3 } });
    assert.deepEqual([wrong.errors, wrong.config?.watch], [[], undefined]);
    assert.match(wrong.warnings.join(), /`dev\.watch` must be a glob or an array.*; ignored/);
    const remote = entry({ url: "http://h/mcp", dev: { watch: "x" } });
    assert.ok(remote.config);
    assert.match(remote.warnings.join(), /local servers of one session only.*; ignored/);
    const shared = entry({ command: "node", shared: true, dev: { watch: "x" } });
    assert.deepEqual([shared.errors, shared.config?.watch], [[], undefined]);
    assert.match(shared.warnings.join(), /not remote or `shared`/);
  });

  test("a file written under the watched folder restarts the running server; the log says which", async () => {
    await withDevServer(
      // As VS Code users write it: the project root by its variable.
      ["${workspaceFolder}/src/**/*.ts"],
      (root) => mkdirSync(path.join(root, "src", "tools"), { recursive: true }),
      async (bed) => {
        const before = await bed.pid();
        writeFileSync(path.join(bed.projectRoot, "src", "tools", "search.ts"), "export const changed = 1;\n");
        await bed.restarted(before);
        assert.match(await bed.log(), /"event":"dev\.restart","server":"dev","file":"src\/tools\/search\.ts"/);
        // What /mcp shows of it.
        assert.deepEqual(bed.status(), {
          globs: ["${workspaceFolder}/src/**/*.ts"],
          folders: 2,
          restarts: 1,
          lastFile: "src/tools/search.ts",
        });
      },
    );
  });

  test("a folder not there yet is watched for from the nearest one that is (build/ before the first build)", async () => {
    const tmp = tempDir();
    const seen: string[] = [];
    let ready!: () => void;
    let changed!: () => void;
    const [walked, restarted] = [new Promise<void>((r) => (ready = r)), new Promise<void>((r) => (changed = r))];
    const stop = watchFiles(["build/**/*.js"], tmp.dir, {
      changed: (file) => {
        seen.push(file);
        changed();
      },
      ready: () => ready(),
      failed: (error) => assert.fail(error),
    });
    try {
      await walked;
      mkdirSync(path.join(tmp.dir, "build", "sub"), { recursive: true });
      writeFileSync(path.join(tmp.dir, "build", "sub", "index.js"), "1\n");
      await within(restarted, { ms: 30_000, timedOut: () => new Error("no change seen under the new folder") });
      assert.deepEqual(seen, ["build/sub/index.js"]);
    } finally {
      stop();
      tmp.cleanup();
    }
  });

  test("a watched folder deleted and made again (a clean build) is watched again: its new files are seen", async () => {
    const tmp = tempDir();
    mkdirSync(path.join(tmp.dir, "build"));
    const seen: string[] = [];
    let ready!: () => void;
    const walked = new Promise<void>((r) => (ready = r));
    const stop = watchFiles(["build/**/*.js"], tmp.dir, {
      changed: (file) => seen.push(file),
      ready: () => ready(),
      failed: (error) => assert.fail(error),
    });
    try {
      await walked;
      writeFileSync(path.join(tmp.dir, "build", "index.js"), "1\n");
      await waitFor(() => seen.length === 1, "the first build's file", 30_000);
      rmSync(path.join(tmp.dir, "build"), { recursive: true });
      await waitFor(() => seen.length === 2, "the clean", 30_000);
      mkdirSync(path.join(tmp.dir, "build"));
      writeFileSync(path.join(tmp.dir, "build", "index.js"), "2\n");
      await waitFor(() => seen.length === 3, "the new build's file", 30_000);
      assert.deepEqual(seen, ["build/index.js", "build/index.js", "build/index.js"]);
    } finally {
      stop();
      tmp.cleanup();
    }
  });

  test("a glob from the project root watches neither node_modules nor .git: their folders are not walked, their changes restart nothing", async () => {
    const layout = (root: string) => {
      mkdirSync(path.join(root, "tools"), { recursive: true });
      for (let i = 0; i < 200; i++) mkdirSync(path.join(root, "node_modules", `pkg${i}`, "lib"), { recursive: true });
      mkdirSync(path.join(root, ".git", "objects", "ab"), { recursive: true });
    };
    await withDevServer(["**/*.py"], layout, async (bed) => {
      // The project root, .pi and tools: Node's own recursive watch walked and watched every folder and file below.
      assert.match(await bed.log(), /"event":"dev\.watch","server":"dev","folders":3,/);
      const before = await bed.pid();
      writeFileSync(path.join(bed.projectRoot, "node_modules", "pkg7", "lib", "setup.py"), "x = 1\n");
      writeFileSync(path.join(bed.projectRoot, ".git", "objects", "ab", "hook.py"), "x = 1\n");
      writeFileSync(path.join(bed.projectRoot, "tools", "server.py"), "x = 1\n");
      await bed.restarted(before);
      const restarts = (await bed.log()).split("\n").filter((line) => line.includes('"event":"dev.restart"'));
      assert.equal(restarts.length, 1);
      assert.match(restarts[0]!, /"file":"tools\/server\.py"/);
    });
  });
});

interface DevBed {
  projectRoot: string;
  /** The server's process id, through a real tool call. */
  pid(): Promise<string>;
  /** Resolves once the server runs again under another process than `before`. */
  restarted(before: string): Promise<void>;
  /** mcp.log as written so far. */
  log(): Promise<string>;
  /** The watch as /mcp reads it. */
  status(): DevWatchStatus | undefined;
}

/**
 * A real bridge on a project whose one server (the fixture, which tells its pid) watches `globs`; `layout` makes the
 * project's folders first. `run` is called once the watch has walked its folders (mcp.log's `dev.watch`).
 */
async function withDevServer(globs: string[], layout: (root: string) => void, run: (bed: DevBed) => Promise<void>) {
  const tmp = tempDir();
  const projectRoot = path.join(tmp.dir, "project");
  mkdirSync(path.join(projectRoot, ".pi"), { recursive: true });
  layout(projectRoot);
  const server = { ...fixtureEntry(), dev: { watch: globs } };
  writeFileSync(path.join(projectRoot, ".pi", "mcp.json"), JSON.stringify({ mcpServers: { dev: server } }));
  const logPath = path.join(tmp.dir, "mcp.log");
  const logger = new LogFile(logPath, { maxBytes: 256 * 1024 });
  const bridge = testBridge(tmp.dir, { projectRoot, logger });
  const { tools } = registeredTools(bridge);
  const pid = async () => (await runTool(tools.get("mcp_dev_pid"), {})).text;
  const log = async () => {
    logger.flush();
    return existsSync(logPath) ? readFileSync(logPath, "utf8") : "";
  };
  try {
    await bridge.start();
    await waitFor(async () => (await log()).includes('"event":"dev.watch"'), "the watch to walk its folders", 30_000);
    await run({
      projectRoot,
      pid,
      log,
      status: () => bridge.devWatchOf(bridge.connection("dev")!),
      restarted: (before) =>
        waitFor(
          // A call that meets the restart itself fails (its process is stopped under it): asked again.
          async () => bridge.connection("dev")!.state.kind === "live" && (await pid().catch(() => before)) !== before,
          "a restart",
          30_000,
        ),
    });
  } finally {
    await bridge.shutdown();
    await logger.close();
    tmp.cleanup();
  }
}
