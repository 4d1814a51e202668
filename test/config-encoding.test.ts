/**
 * A config file that is not UTF-8 is an error naming the file and the offset of its first bad byte, and its servers
 * are skipped, instead of a value silently holding U+FFFD; the other config files still load. Real pi in-process with
 * the faux model and the stdio fixture server as a child process; `/mcp import` and the config writer read the same
 * way (a writer that rewrote such a file would lose its bytes).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { firstNonUtf8Byte } from "../src/common/utf8-file.ts";
import { loadLayeredConfig } from "../src/config/files.ts";
import { discoverImports } from "../src/config/import/discover.ts";
import { updateConfigFile } from "../src/config/write/update-file.ts";
import { EXTENSION_DIR, fixtureEntry, tempDir, trustProjectServers } from "./helpers.ts";
import { startInProcessPi } from "./pi-harness.ts";

/** A user config whose one value has a Latin-1 `é` (0xE9, not UTF-8), after a real `€` (three bytes of UTF-8). */
function latin1Config(): { bytes: Buffer; offset: number } {
  const before = Buffer.from('{"mcpServers": {"latin": {"command": "€ caf', "utf8");
  const bytes = Buffer.concat([before, Buffer.from([0xe9]), Buffer.from('"}}}\n', "utf8")]);
  return { bytes, offset: before.length };
}

describe("config files that are not UTF-8", { timeout: 120_000 }, () => {
  test("the first bad byte's offset, past a real U+FFFD and multibyte text", () => {
    assert.equal(firstNonUtf8Byte(Buffer.from("plain € \uFFFD text", "utf8")), undefined);
    const { bytes, offset } = latin1Config();
    assert.equal(firstNonUtf8Byte(bytes), offset);
    const withReplacement = Buffer.concat([Buffer.from("a\uFFFDb", "utf8"), Buffer.from([0xc3, 0x28])]);
    assert.equal(firstNonUtf8Byte(withReplacement), 5);
    assert.equal(firstNonUtf8Byte(Buffer.from([0x61, 0xe2, 0x82])), 1, "a sequence cut short at the end");
  });

  test("in pi: the user config is reported with its path and offset and skipped; the project's server still runs", async () => {
    const project = tempDir("mcp-bridge-utf8-project-");
    const agentDir = tempDir("mcp-bridge-utf8-agent-");
    const { bytes, offset } = latin1Config();
    const userConfig = path.join(agentDir.dir, "mcp.json");
    writeFileSync(userConfig, bytes);
    mkdirSync(path.join(project.dir, ".pi"));
    writeFileSync(path.join(project.dir, ".pi", "mcp.json"), JSON.stringify({ mcpServers: { good: fixtureEntry() } }));
    const originalCwd = process.cwd();
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    await trustProjectServers(project.dir, agentDir.dir);
    const pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
    // Without a UI the startup notice is printed.
    const printed: string[] = [];
    const originalLog = console.log;
    try {
      console.log = (...args: unknown[]) => printed.push(args.join(" "));
      try {
        await pi.session.bindExtensions({});
      } finally {
        console.log = originalLog;
      }
      const notice = printed.join("\n");
      assert.ok(
        notice.includes(`${userConfig}: cannot read the file: not valid UTF-8 at byte ${offset}; save it as UTF-8`),
        notice,
      );
      const tools = pi.session.getAllTools().map((t) => t.name);
      assert.ok(!tools.some((t) => t.startsWith("mcp_latin_")), "the file's server is skipped");
      assert.ok(tools.includes("mcp_good_echo"), `the project's server runs: ${tools.join(", ")}`);
    } finally {
      await pi.close();
      process.chdir(originalCwd);
      project.cleanup();
      agentDir.cleanup();
    }
  });

  test("/mcp import names such a file and offset; the config writer leaves it as it is", async () => {
    const home = tempDir("mcp-bridge-utf8-import-");
    try {
      const { bytes, offset } = latin1Config();
      const claude = path.join(home.dir, ".claude.json");
      writeFileSync(claude, bytes);
      const found = await discoverImports({ home: home.dir, projectRoot: home.dir, platform: "linux", env: {} });
      assert.equal(found.servers.length, 0);
      assert.ok(
        found.errors.some((e) => e.includes(`not valid UTF-8 at byte ${offset}; save it as UTF-8`)),
        JSON.stringify(found.errors),
      );
      await assert.rejects(
        updateConfigFile(claude, () => "{}"),
        new RegExp(`not valid UTF-8 at byte ${offset}`),
      );
      assert.deepEqual(readFileSync(claude), bytes, "not rewritten");
    } finally {
      home.cleanup();
    }
  });
});

describe("a config file that is a link to nothing", () => {
  test("is reported, naming where it points, not taken for a file never written", async () => {
    const root = tempDir("mcp-bridge-dangling-");
    try {
      const target = path.join(root.dir, "dotfiles", "mcp.json");
      symlinkSync(target, path.join(root.dir, "mcp.json"));
      const config = await loadLayeredConfig({ projectRoot: root.dir, agentDir: root.dir, bundledPath: "/none.json" });
      assert.deepEqual(
        config.problems.map((p) => p.message),
        [`cannot read the file: it links to ${target}, which does not exist`],
      );
    } finally {
      root.cleanup();
    }
  });
});

describe("a config file that is a pipe", () => {
  test("is reported and skipped, not waited on: the user's servers still load", async () => {
    const root = tempDir("mcp-bridge-fifo-");
    const fifo = path.join(root.dir, ".pi", "mcp.json");
    mkdirSync(path.dirname(fifo));
    execFileSync("mkfifo", [fifo]);
    writeFileSync(path.join(root.dir, "mcp.json"), JSON.stringify({ mcpServers: { mine: { command: "x" } } }));
    let timer: NodeJS.Timeout | undefined;
    try {
      const load = loadLayeredConfig({ projectRoot: root.dir, agentDir: root.dir, bundledPath: "/none.json" });
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("still waiting on the pipe after 10 s")), 10_000);
      });
      const config = await Promise.race([load, late]);
      assert.deepEqual(
        config.problems.map((p) => `${p.source.path}: ${p.message}`),
        [`${fifo}: cannot read the file: not a regular file (a pipe, a socket or a device); nothing is read from it`],
      );
      assert.deepEqual(
        config.servers.map((s) => s.name),
        ["mine"],
      );
      // A link to /dev/null, though, reads as an empty file, as it always did.
      rmSync(fifo);
      symlinkSync("/dev/null", fifo);
      const empty = await loadLayeredConfig({ projectRoot: root.dir, agentDir: root.dir, bundledPath: "/none.json" });
      assert.deepEqual(empty.problems, []);
    } finally {
      clearTimeout(timer);
      // A writer that comes and goes ends a read still waiting, so a failed run does not keep the process alive.
      if (statSync(fifo).isFIFO()) closeSync(openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK));
      root.cleanup();
    }
  });
});
