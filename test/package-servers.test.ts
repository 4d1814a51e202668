/**
 * MCP servers a pi package declares in its manifest (`pi.mcp.mcpServers` in its package.json), in real pi: a local
 * package listed in the agent dir's settings.json brings its server (started in the package's folder, so its
 * `./server.mjs` is found), in-process and on the command line; the same package listed in the project's
 * `.pi/settings.json` waits for project trust.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { callOnceInPi } from "./pi-harness.ts";
import { PI_LINE } from "./pi-line.ts";
import { piCliIn } from "./pi-print.ts";
import { loadLayeredConfig } from "../src/config/files.ts";
import { bundledFixture } from "./fixture-bundle.ts";
import { EXTENSION_DIR, readLog, STDIO_FIXTURE, tempDir } from "./helpers.ts";

const PACKAGE_NAME = "demo-mcp-package";

/** A pi package with no extensions whose manifest declares one server, run from the package's own file. */
function writePackage(dir: string, log: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "server.mjs"), `import ${JSON.stringify(bundledFixture(STDIO_FIXTURE))};\n`);
  const entry = {
    command: process.execPath,
    args: ["./server.mjs"],
    env: { FIXTURE_LOG: log },
    autoApprove: ["cwd"],
    exposure: "direct",
  };
  // No extensions: pi 1.x loads a local package's folder as one unless its manifest lists its extensions.
  const pi = { extensions: [], mcp: { mcpServers: { bundled: entry } } };
  const manifest = { name: PACKAGE_NAME, version: "1.0.0", pi };
  writeFileSync(path.join(dir, "package.json"), JSON.stringify(manifest));
}

/** pi's settings.json in `dir` (the agent dir, or a project's `.pi`), listing `packages`. */
function listPackages(dir: string, packages: string[]): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "settings.json"), JSON.stringify({ packages }));
}

const starts = (log: string) => readLog(log).filter((e) => e.event === "start").length;

describe(`servers of pi packages (pi ${PI_LINE})`, { timeout: 300_000 }, () => {
  const root = tempDir("mcp-bridge-packages-");
  const pkg = path.join(root.dir, "demo-package");
  const log = path.join(root.dir, "events.jsonl");
  const originalCwd = process.cwd();

  before(() => writePackage(pkg, log));
  after(() => {
    process.chdir(originalCwd);
    root.cleanup();
  });

  test("a package the user installed: its server starts in the package's folder and its tool runs in pi", async () => {
    const agentDir = path.join(root.dir, "in-process-agent");
    const project = path.join(root.dir, "in-process-project");
    mkdirSync(project, { recursive: true });
    listPackages(agentDir, [pkg]);
    process.env.PI_CODING_AGENT_DIR = agentDir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project);
    try {
      const result = await callOnceInPi({
        cwd: project,
        agentDir,
        extensionPaths: [EXTENSION_DIR],
        tool: "mcp_bundled_cwd",
        args: {},
      });
      assert.equal(result.offered, true, "the package's server brought its tools");
      assert.equal(result.isError, false, result.text);
      assert.equal(realpathSync(result.text.trim()), realpathSync(pkg));
    } finally {
      process.chdir(originalCwd);
    }
  });

  test("`pi -p /mcp`: the package's server is connected, its source reads `package <name>`", async () => {
    const home = path.join(root.dir, "cli-user-home");
    const project = path.join(root.dir, "cli-user-project");
    mkdirSync(project, { recursive: true });
    listPackages(path.join(home, "agent"), [pkg]);
    rmSync(log, { force: true });
    const { code, output } = await piCliIn(home).run(["-e", EXTENSION_DIR, "-p", "/mcp"], 90_000, project);
    assert.equal(code, 0, output);
    assert.match(output, /bundled +🟢 .* package demo-mcp-package/, output);
    assert.match(output, /bundled {2}connected {2}stdio .*\(package demo-mcp-package\)/, output);
    assert.equal(starts(log), 1, "the server started once");
  });

  test("`/mcp remove` leaves the package's manifest alone; `/mcp disable` switches its server off in the project's file", async () => {
    const home = path.join(root.dir, "cli-user-home");
    const project = path.join(root.dir, "cli-edit-project");
    mkdirSync(project, { recursive: true });
    listPackages(path.join(home, "agent"), [pkg]);
    const manifest = readFileSync(path.join(pkg, "package.json"), "utf8");
    const { run } = piCliIn(home);
    const removed = await run(["-e", EXTENSION_DIR, "-p", "/mcp remove bundled"], 90_000, project);
    assert.equal(removed.code, 1, removed.output); // refused: a script is told by the exit status
    assert.match(removed.output, /comes with the pi package demo-mcp-package .* cannot be removed/, removed.output);
    const disabled = await run(["-e", EXTENSION_DIR, "-p", "/mcp disable bundled"], 90_000, project);
    assert.equal(disabled.code, 0, disabled.output);
    assert.equal(
      readFileSync(path.join(pkg, "package.json"), "utf8"),
      manifest,
      "the manifest is as the package has it",
    );
    const override = JSON.parse(readFileSync(path.join(project, ".pi", "mcp.json"), "utf8"));
    assert.deepEqual(override, { mcpServers: { bundled: { enabled: false } } });
  });

  test("a package installed in the project waits for project trust: not started until `/mcp trust`", async () => {
    const home = path.join(root.dir, "cli-project-home");
    const project = path.join(root.dir, "cli-project");
    mkdirSync(path.join(home, "agent"), { recursive: true });
    listPackages(path.join(project, ".pi"), [pkg]);
    rmSync(log, { force: true });
    const { run } = piCliIn(home);
    const listed = await run(["-e", EXTENSION_DIR, "-p", "/mcp list"], 90_000, project);
    assert.equal(listed.code, 0, listed.output);
    assert.match(listed.output, /not trusted, not started .*: bundled\./, listed.output);
    assert.equal(starts(log), 0, "no server process was started");

    const trusted = await run(["-e", EXTENSION_DIR, "-p", "/mcp trust bundled"], 90_000, project);
    assert.equal(trusted.code, 0, trusted.output);
    assert.match(trusted.output, /bundled: trusted, connected, \d+ tools/, trusted.output);
    assert.equal(starts(log), 1, "the trusted server started");
  });
});

describe("a package's manifest read as a config layer", () => {
  test("only its server maps; a local server's cwd from the package folder; a broken manifest is named", async () => {
    const root = tempDir("mcp-bridge-manifests-");
    try {
      const good = path.join(root.dir, "good");
      const broken = path.join(root.dir, "broken");
      mkdirSync(good);
      mkdirSync(broken);
      const mcp = {
        approval: "never",
        mcpServers: {
          plain: { command: "node", args: ["./server.js"] },
          sub: { command: "node", cwd: "bin" },
          unset: { command: "node", cwd: null },
          home: { command: "node", cwd: "~/tools" },
          web: { url: "http://127.0.0.1:1/mcp" },
        },
        mcp: { array: { type: "local", command: ["node", "./server.js"] } },
      };
      writeFileSync(path.join(good, "package.json"), JSON.stringify({ name: "good\u001b[31mpkg", pi: { mcp } }));
      writeFileSync(path.join(broken, "package.json"), "{ not json");
      const packages = async () => [
        { dir: good, installed: "user" as const },
        { dir: broken, installed: "project" as const },
      ];
      const config = await loadLayeredConfig({
        projectRoot: root.dir,
        agentDir: path.join(root.dir, "agent"),
        bundledPath: path.join(root.dir, "none.json"),
        packages,
      });
      const byName = new Map(config.servers.map((s) => [s.name, s]));
      assert.deepEqual([...byName.keys()].sort(), ["array", "home", "plain", "sub", "unset", "web"]);
      assert.equal(byName.get("plain")?.cwd, good);
      assert.equal(byName.get("unset")?.cwd, good, "a null `cwd` is an absent one");
      assert.equal(byName.get("sub")?.cwd, path.join(good, "bin"));
      assert.equal(byName.get("home")?.cwd, "~/tools");
      assert.equal(byName.get("web")?.cwd, undefined);
      assert.equal(byName.get("array")?.cwd, good, "opencode's shape: `command` as an array runs there too");
      assert.deepEqual(byName.get("plain")?.source.package, { name: "goodpkg", installed: "user" });
      assert.equal(config.approval, "ask", "a package's top-level approval is not read");
      // One problem, the broken manifest's: the good one loads without any.
      assert.deepEqual(
        config.problems.map((p) => [p.level, p.source.path]),
        [["error", path.join(broken, "package.json")]],
      );
      assert.match(config.problems[0]!.message, /the package's MCP servers are skipped$/);
    } finally {
      root.cleanup();
    }
  });
});
