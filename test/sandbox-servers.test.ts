/**
 * Servers users run, sandboxed (`"sandbox": true`), started by real pi: the MCP project's filesystem server, writing
 * inside its working directory and outside it; the memory server through `npx -y` with a cold npm cache (HOME is a
 * fresh temp dir), so npx downloads the package from registry.npmjs.org through the sandbox's proxy; and a server that
 * double-forks daemons, whose daemons end with it when pi shuts down cleanly or is killed. Each has its unsandboxed
 * counterpart or a check that the thing refused was there, so the test fails where the sandbox does not hold.
 * Needs bubblewrap, socat and ripgrep (.ci/run installs them), and, for npx, the npm registry.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { within } from "../src/common/wait.ts";
import { EXIT_PATHS, startDoubleForkPi } from "./double-fork-pi.ts";
import { forwardProxy } from "./forward-proxy.ts";
import {
  commandLine,
  EXTENSION_DIR,
  FILESYSTEM_SERVER,
  isAlive,
  killIfAlive,
  restoreEnv,
  tempDir,
  waitFor,
} from "./helpers.ts";
import { callOnceInPi } from "./pi-harness.ts";
import { PI_LINE } from "./pi-line.ts";
import { processTree, sandboxTempDirs } from "./tmux.ts";

describe(`sandboxed reference servers in pi ${PI_LINE}`, { timeout: 300_000 }, () => {
  const home = tempDir("mcp-bridge-sandbox-servers-home-");
  // pi's project root holds both directories; the filesystem server is given both, and the roots the bridge offers
  // (the project root, which this server takes in place of its arguments) cover both too: the server allows writing
  // in either. The sandbox allows only its working directory.
  const root = tempDir("mcp-bridge-sandbox-servers-root-");
  const rootDir = realpathSync(root.dir);
  const project = path.join(rootDir, "project");
  const outside = path.join(rootDir, "outside");
  const agentDir = path.join(home.dir, ".pi", "agent");
  const saved = { cwd: process.cwd(), env: { ...process.env } };

  before(() => {
    for (const dir of [project, outside, agentDir]) mkdirSync(dir, { recursive: true });
    process.env.HOME = home.dir;
    process.env.PI_CODING_AGENT_DIR = agentDir;
    // A cold npx downloads its package before it answers.
    process.env.PI_MCP_STARTUP_BUDGET_MS = "120000";
    process.chdir(rootDir);
  });

  after(() => {
    process.chdir(saved.cwd);
    restoreEnv(saved.env);
    home.cleanup();
    root.cleanup();
  });

  async function callIn(server: string, entry: Record<string, unknown>, tool: string, args: Record<string, unknown>) {
    writeFileSync(
      path.join(agentDir, "mcp.json"),
      JSON.stringify({ exposure: "direct", approval: "never", mcpServers: { [server]: entry } }),
    );
    const result = await callOnceInPi({
      cwd: rootDir,
      agentDir,
      extensionPaths: [EXTENSION_DIR],
      tool: `mcp_${server}_${tool}`,
      args,
    });
    assert.equal(result.offered, true, `${server} connected and listed ${tool}: ${result.text}`);
    return result;
  }

  const filesystem = (sandbox: boolean) => ({
    command: process.execPath,
    args: [FILESYSTEM_SERVER, project, outside],
    cwd: project,
    sandbox,
  });

  test("the filesystem server, sandboxed: a write in its working directory works; one outside it is refused", async () => {
    const inside = path.join(project, "inside.txt");
    const written = await callIn("fs", filesystem(true), "write_file", { path: inside, content: "in" });
    assert.equal(written.isError, false, written.text);
    assert.equal(readFileSync(inside, "utf8"), "in");
    const escaped = path.join(outside, "boxed.txt");
    const refused = await callIn("fs", filesystem(true), "write_file", { path: escaped, content: "out" });
    assert.equal(refused.isError, true, refused.text);
    assert.match(refused.text, /EROFS|read-only/i, refused.text);
    assert.equal(existsSync(escaped), false);
  });

  test("the filesystem server, unsandboxed: the same write outside works (so the test above can fail)", async () => {
    const escaped = path.join(outside, "open.txt");
    const written = await callIn("fs", filesystem(false), "write_file", { path: escaped, content: "out" });
    assert.equal(written.isError, false, written.text);
    assert.equal(readFileSync(escaped, "utf8"), "out");
  });

  test("npx -y server-memory, sandboxed, cold npm cache: downloads through the proxy, lists tools, a call writes", async () => {
    assert.equal(existsSync(path.join(home.dir, ".npm")), false, "the npm cache starts empty");
    const memoryFile = path.join(project, "memory.jsonl");
    const entry = {
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-memory"],
      env: { MEMORY_FILE_PATH: memoryFile },
      cwd: project,
      sandbox: true,
    };
    const entities = [{ name: "sandboxed-npx", entityType: "test", observations: ["written inside the sandbox"] }];
    const result = await callIn("memory", entry, "create_entities", { entities });
    assert.equal(result.isError, false, result.text);
    assert.match(readFileSync(memoryFile, "utf8"), /sandboxed-npx/);
    assert.ok(existsSync(path.join(home.dir, ".npm", "_cacache")), "npx filled its cache in the home directory");
  });

  test("behind a company proxy (pi's HTTPS_PROXY), the sandbox's proxy reaches the registry through it", async () => {
    const proxy = await forwardProxy();
    const saved = { ...process.env };
    for (const name of ["HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"]) delete process.env[name];
    process.env.HTTPS_PROXY = process.env.https_proxy = proxy.url;
    try {
      const entry = {
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-memory"],
        cwd: project,
        sandbox: true,
      };
      const result = await callIn("memory", entry, "read_graph", {});
      assert.equal(result.isError, false, result.text);
      // npx asks the registry for the package's latest version, cache or not.
      assert.ok(proxy.asked.includes("registry.npmjs.org:443"), `the proxy was asked for: ${proxy.asked.join(" ")}`);
    } finally {
      restoreEnv(saved);
      await proxy.close();
    }
  });
});

/** Whether a process runs in a PID namespace below this one (its NSpid line in /proc lists more than one pid). */
function inPidNamespace(pid: number): boolean {
  try {
    const line = /^NSpid:(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "";
    return line.trim().split(/\s+/).length > 1;
  } catch {
    return false;
  }
}

/** What the double-forking server's project holds of its own: its config and the log of its sleepers. */
const PROJECT_FILES = ["mcp.json", "sleepers.jsonl"];

describe(
  `a sandboxed server's double-forked daemons end with pi ${PI_LINE}`,
  { concurrency: true, timeout: 240_000 },
  () => {
    const home = tempDir("mcp-bridge-sandbox-double-fork-");
    after(() => home.cleanup());

    for (const exit of EXIT_PATHS.filter((e) => e.name.startsWith("a clean") || e.name === "SIGKILL")) {
      test(`after ${exit.name}, nothing of the sandboxed server is left: no process, daemon or mount point`, async () => {
        const run = await startDoubleForkPi(home.dir, true);
        let relays: number[] = [];
        try {
          assert.equal(run.sleepers().length, 2, "one sleeper from the start, one from the call");
          // A sleeper's pid is logged once its shell has started it, which may be before `setsid` has become `sleep`.
          const sleeping = () => run.left().filter((pid) => commandLine(pid).startsWith("sleep 300"));
          await waitFor(() => sleeping().length === 2, "both daemons to run, found by their variable", 10_000, 50);
          const daemons = sleeping();
          for (const pid of daemons)
            assert.ok(inPidNamespace(pid), `daemon ${pid} runs in the sandbox's PID namespace`);
          // The sandbox library's relays (socat, pi's children) from its proxies to the sockets the sandbox reaches.
          relays = processTree(run.pi.pid!).filter((pid) => commandLine(pid).startsWith("socat UNIX-LISTEN:"));
          assert.ok(relays.length > 0, "the sandbox library relays its proxies");
          // The empty files and directories bubblewrap made in pi's project for the denied paths it lacks.
          const mountPoints = readdirSync(run.project).filter((name) => !PROJECT_FILES.includes(name));
          assert.ok(mountPoints.includes(".bashrc") && mountPoints.includes(".vscode"), mountPoints.join(" "));
          const temps = sandboxTempDirs(run.pi.pid!);
          assert.equal(temps.length, 2, temps.join(" "));
          exit.end(run.pi);
          await within(run.exited, { ms: 30_000, timedOut: () => new Error("pi did not exit within 30 s") });
          await waitFor(() => run.left().length === 0, "every process of the server to be gone", 10_000, 100).catch(
            (error: Error) => {
              throw new Error(`${error.message}; left: ${run.left().map(commandLine).join(" | ")}`);
            },
          );
          await waitFor(() => !relays.some(isAlive), "the sandbox library's relays to be gone", 10_000, 100);
          const left = () => readdirSync(run.project).filter((name) => !PROJECT_FILES.includes(name));
          await waitFor(() => left().length === 0, "the mount points to be gone", 10_000, 100).catch((error: Error) => {
            throw new Error(`${error.message}; left: ${left().join(" ")}`);
          });
          await waitFor(() => !temps.some(existsSync), `${temps.join(" and ")} to be gone`, 10_000, 100);
        } finally {
          run.stop();
          relays.forEach(killIfAlive);
        }
      });
    }
  },
);
