/**
 * The real `pi --mode rpc` with the extension: no orphaned server after SIGTERM, whether the servers are connected or
 * still connecting, and a server slower than the startup budget announced when it is ready.
 */
import assert from "node:assert/strict";
import { execSync, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { fixtureEntry, isAlive, readLog, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";
import { PI_LINE } from "./pi-line.ts";
import { piCliIn } from "./pi-print.ts";
import { PI_CLI } from "./tmux.ts";

const home = tempDir("mcp-bridge-home-");
const { env: piEnv } = piCliIn(home.dir);

describe(`pi --mode rpc (pi ${PI_LINE})`, { timeout: 300_000 }, () => {
  after(() => home.cleanup());

  /** Starts `pi --mode rpc` on a config with two servers that each start a child process (one behind a shell wrapper). */
  function startRpcPi(extraServers: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}) {
    const tmp = tempDir();
    const log = path.join(tmp.dir, "events.jsonl");
    const direct = fixtureEntry("grandchild");
    const quoted = [direct.command, ...direct.args].map((a) => `'${a}'`).join(" ");
    const config = path.join(tmp.dir, "mcp.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          direct: { ...direct, env: { FIXTURE_LOG: log } },
          // `; exit $?` keeps the shell alive as the server's parent, as npx stays the parent of a package's server.
          wrapped: { command: "sh", args: ["-c", `${quoted}; exit $?`], env: { FIXTURE_LOG: log } },
          ...extraServers,
        },
      }),
    );
    const pi = spawn(process.execPath, [PI_CLI, "--mode", "rpc", "-e", REPO_ROOT, "--mcp-config", config], {
      cwd: tmp.dir,
      env: { ...piEnv(), ...env },
      stdio: ["pipe", "pipe", "ignore"],
    });
    let stdout = "";
    pi.stdout.on("data", (d) => (stdout += d));
    const exited = new Promise<void>((resolve) => pi.once("exit", () => resolve()));
    const pids = () =>
      readLog(log).flatMap((e) =>
        e.event === "start" ? [e.pid] : e.event === "grandchild" ? [e.childPid as number] : [],
      );
    return { tmp, log, pi, exited, pids, stdout: () => stdout };
  }

  async function expectAllGone(pids: number[]): Promise<void> {
    await waitFor(() => pids.every((pid) => !isAlive(pid)), "every server process to be gone", 10_000).catch(
      (error) => {
        console.error(execSync(`ps -o pid,ppid,stat,args -p ${pids.join(",")}`).toString());
        throw error;
      },
    );
  }

  test("SIGTERM to a running pi ends every server process, including what a wrapper and a server started", async () => {
    const run = startRpcPi();
    try {
      // Ready: pi answers RPC commands only after startup, with its own signal handlers in place.
      run.pi.stdin.write(`${JSON.stringify({ id: "1", type: "get_state" })}\n`);
      await waitFor(() => run.stdout().includes('"id":"1"'), "pi to answer over RPC", 60_000);
      const pids = run.pids();
      assert.equal(pids.length, 4);
      for (const pid of pids) assert.ok(isAlive(pid), `${pid} runs before SIGTERM`);
      run.pi.kill("SIGTERM");
      await run.exited;
      await expectAllGone(pids);
    } finally {
      if (run.pi.exitCode === null) run.pi.kill("SIGKILL");
      run.tmp.cleanup();
    }
  });

  test("SIGTERM while servers are still connecting ends them too", async () => {
    const run = startRpcPi({ mute: { ...fixtureEntry("never-init"), timeout: 60_000 } });
    try {
      // Both grandchild servers are up, the mute one holds pi's startup: pi's own handlers are not installed yet.
      await waitFor(
        () => readLog(run.log).filter((e) => e.event === "grandchild").length === 2,
        "the servers to start",
        60_000,
      );
      assert.equal(run.stdout(), "", "pi is still starting");
      const pids = run.pids();
      run.pi.kill("SIGTERM");
      await run.exited;
      assert.equal(run.pi.signalCode, "SIGTERM", "pi still ends by the signal");
      await expectAllGone(pids);
    } finally {
      if (run.pi.exitCode === null) run.pi.kill("SIGKILL");
      run.tmp.cleanup();
    }
  });

  test("a server that connects after the startup budget is announced when it is ready, and the footer counts it", async () => {
    // It answers `initialize` once the test says so: on a busy machine pi's own start can outlast any fixed delay.
    const gateDir = tempDir();
    const gate = path.join(gateDir.dir, "ready");
    const slow = {
      command: process.execPath,
      args: [path.join(REPO_ROOT, "bench", "slow-start-server.mjs")],
      env: { START_GATE: gate },
    };
    const run = startRpcPi({ slow }, { PI_MCP_STARTUP_BUDGET_MS: "1000" });
    try {
      await waitFor(
        () => run.stdout().includes("slow: still connecting; its tools appear when it is ready"),
        "the startup notice",
        60_000,
      );
      writeFileSync(gate, "");
      // Alone, or named with the others that were late too (on a busy machine they all are).
      await waitFor(
        () => /MCP server 'slow' is ready: 1 tool|MCP servers ready: [^"]*'slow' \(1 tool\)/.test(run.stdout()),
        "the notice that it is ready",
        60_000,
      );
      await waitFor(() => run.stdout().includes('"statusText":"MCP 3/3"'), "the footer to count it", 10_000);
      run.pi.kill("SIGTERM");
      await run.exited;
    } finally {
      if (run.pi.exitCode === null) run.pi.kill("SIGKILL");
      run.tmp.cleanup();
      gateDir.cleanup();
    }
  });
});
