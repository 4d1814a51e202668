/**
 * No orphans, ever: real `pi --mode rpc` with a wrapped local server (`sh -c "sleep 300 & exec node server"`, plus a
 * child that left the group with `setsid`), killed with SIGKILL or SIGINT, which run none of pi's own handlers. The
 * watchdog ends every server process; then it is gone too.
 */
import assert from "node:assert/strict";
import { execSync, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { isAlive, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";
import { PI_CLI, processesWithEnv, processTree } from "./tmux.ts";

const HELLO_SERVER = path.join(REPO_ROOT, "examples", "hello-server.mjs");
/** Every process of the server carries this variable, with a value unique to the test. */
const MARK = "MCP_BRIDGE_ORPHAN_TEST";
const home = tempDir("mcp-bridge-orphans-");

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  } catch {
    return "";
  }
}

function sessionOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]);
  } catch {
    return undefined;
  }
}

function describeProcesses(pids: number[]): string {
  return pids.length ? execSync(`ps -o pid,ppid,pgid,sid,stat,args -p ${pids.join(",")} || true`).toString() : "(none)";
}

/** Starts `pi --mode rpc` with one wrapped server and waits until pi answers (its servers connected). */
async function startPi() {
  const tmp = tempDir();
  const mark = randomUUID();
  const config = path.join(tmp.dir, "mcp.json");
  // A background child in the server's group, one that left it (setsid), and the server itself, exec'd by the shell.
  const script = `setsid sleep 300 & sleep 300 & exec node '${HELLO_SERVER}' ${mark}`;
  writeFileSync(config, JSON.stringify({ mcpServers: { wrapped: { command: "sh", args: ["-c", script], env: { [MARK]: mark } } } }));
  const pi = spawn(process.execPath, [PI_CLI, "--mode", "rpc", "--no-session", "-e", REPO_ROOT, "--mcp-config", config], {
    cwd: tmp.dir,
    env: { ...process.env, HOME: home.dir, PI_CODING_AGENT_DIR: path.join(home.dir, "agent"), PI_OFFLINE: "1", PI_MCP_STARTUP_BUDGET_MS: "60000" },
    stdio: ["pipe", "pipe", "ignore"],
  });
  let stdout = "";
  pi.stdout.on("data", (d) => (stdout += d));
  const exited = new Promise<void>((resolve) => pi.once("exit", () => resolve()));
  const stop = () => {
    if (pi.exitCode === null && pi.signalCode === null) pi.kill("SIGKILL");
    for (const pid of processesWithEnv(MARK, mark)) process.kill(pid, "SIGKILL");
    tmp.cleanup();
  };
  try {
    pi.stdin.write(`${JSON.stringify({ id: "ready", type: "get_state" })}\n`);
    await waitFor(() => stdout.includes('"id":"ready"'), "pi to answer over RPC", 60_000);
    await waitFor(() => processesWithEnv(MARK, mark).length === 3, "the server, its background child and the setsid child", 10_000);
  } catch (error) {
    stop();
    throw error;
  }
  const watchdogs = processTree(pi.pid!).filter((pid) => commandLine(pid).includes("watchdog.sh"));
  return { pi, exited, stop, servers: () => processesWithEnv(MARK, mark), watchdogs };
}

async function expectNothingLeft(run: Awaited<ReturnType<typeof startPi>>, servers: number[]): Promise<void> {
  await waitFor(() => run.servers().length === 0, "every server process to be gone", 10_000).catch((error) => {
    throw new Error(`${(error as Error).message}\n${describeProcesses(run.servers())}`);
  });
  await waitFor(() => run.watchdogs.every((pid) => !isAlive(pid)), "the watchdog to exit", 10_000);
  for (const pid of servers) assert.equal(isAlive(pid), false, `${pid} is gone`);
}

describe("no orphans when pi is killed", { timeout: 180_000 }, () => {
  after(() => home.cleanup());

  for (const signal of ["SIGKILL", "SIGINT"] as const) {
    test(`${signal} to pi: no server process, grandchild or watchdog is left`, async () => {
      const run = await startPi();
      try {
        assert.equal(run.watchdogs.length, 1, "one watchdog, started by pi");
        const [watchdog] = run.watchdogs;
        assert.notEqual(sessionOf(watchdog!), sessionOf(run.pi.pid!), "the watchdog has a session of its own");
        const servers = run.servers();
        run.pi.kill(signal);
        await run.exited;
        assert.equal(run.pi.signalCode, signal, "pi ended by the signal, without a shutdown of its own");
        await expectNothingLeft(run, servers);
      } finally {
        run.stop();
      }
    });
  }

  test("a clean shutdown (SIGTERM) ends the servers, and the watchdog exits with them", async () => {
    const run = await startPi();
    try {
      assert.equal(run.watchdogs.length, 1);
      const servers = run.servers();
      run.pi.kill("SIGTERM");
      await run.exited;
      await expectNothingLeft(run, servers);
    } finally {
      run.stop();
    }
  });
});
