/**
 * No descendant of a local server outlives pi, however it was made. The server double-forks a sleeper (re-parented to
 * pid 1, in a session of its own: in neither the server's process group nor its tree) as it starts, and again during
 * a tool call the faux model makes; then real `pi --mode rpc` ends each way it can: a clean shutdown (its input
 * ends), SIGTERM, SIGINT (no handler of pi's runs in RPC mode) and SIGKILL. Within 10 s of pi's exit nothing of the
 * server is alive. So is a reconnect while pi runs: the old process's daemons go. All five run at once.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { within } from "../src/common/wait.ts";
import { WATCHDOG_SCRIPT } from "../src/connection/local/orphan-watchdog.ts";
import { commandLine, isAlive, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";
import { PI_LINE } from "./pi-line.ts";
import { DEFAULT_PI_ARGS, PI_CLI, processesWithEnv, processTree } from "./tmux.ts";

const SERVER = path.join(REPO_ROOT, "test", "fixtures", "double-fork-server.mjs");
/** Every process of the server carries this variable, with a value unique to the run. */
const MARK = "MCP_BRIDGE_DOUBLE_FORK_TEST";
const home = tempDir("mcp-bridge-double-fork-");

/** The session a process leads or belongs to (field 6 of /proc/<pid>/stat). */
function sessionOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]);
  } catch {
    return undefined;
  }
}

/** pi in RPC mode with the double-forking server, once the tool call's sleeper runs too. */
async function startPi() {
  const tmp = tempDir();
  const mark = randomUUID();
  const log = path.join(tmp.dir, "sleepers.jsonl");
  const config = path.join(tmp.dir, "mcp.json");
  const server = { command: process.execPath, args: [SERVER], env: { [MARK]: mark, FIXTURE_LOG: log } };
  writeFileSync(
    config,
    JSON.stringify({ mcpServers: { df: { ...server, exposure: "direct", autoApprove: ["daemonize"] } } }),
  );
  const pi = spawn(
    process.execPath,
    [PI_CLI, ...DEFAULT_PI_ARGS, "--mode", "rpc", "--no-session", "--mcp-config", config],
    {
      cwd: tmp.dir,
      env: {
        ...process.env,
        HOME: home.dir,
        PI_CODING_AGENT_DIR: path.join(home.dir, "agent"),
        PI_OFFLINE: "1",
        PI_MCP_STARTUP_BUDGET_MS: "60000",
      },
      stdio: ["pipe", "pipe", "ignore"],
    },
  );
  let stdout = "";
  pi.stdout.on("data", (d) => (stdout += d));
  const exited = new Promise<void>((resolve) => pi.once("exit", () => resolve()));
  const sleepers = (): number[] => {
    try {
      return readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .map((line) => (JSON.parse(line) as { pid: number }).pid);
    } catch {
      return [];
    }
  };
  /** What is left of the server: anything with its variable, and the sleepers (in case one dropped it). */
  const left = () => [...new Set([...processesWithEnv(MARK, mark), ...sleepers()])].filter(isAlive);
  const stop = () => {
    if (pi.exitCode === null && pi.signalCode === null) pi.kill("SIGKILL");
    for (const pid of left()) process.kill(pid, "SIGKILL");
    tmp.cleanup();
  };
  try {
    pi.stdin.write(`${JSON.stringify({ id: "ready", type: "get_state" })}\n`);
    await waitFor(() => stdout.includes('"id":"ready"'), "pi to answer over RPC", 60_000, 100);
    pi.stdin.write(`${JSON.stringify({ type: "prompt", message: "call mcp_df_daemonize {}" })}\n`);
    await waitFor(() => /daemon \d+ started/.test(stdout), "the tool call's result", 60_000, 100);
  } catch (error) {
    stop();
    throw error;
  }
  const watchdogs = processTree(pi.pid!).filter((pid) => commandLine(pid).includes(WATCHDOG_SCRIPT));
  return { pi, exited, stop, sleepers, left, watchdogs };
}

type ExitPath = { name: string; end(pi: ReturnType<typeof spawn>): void };

const EXIT_PATHS: ExitPath[] = [
  { name: "a clean shutdown (pi's input ends)", end: (pi) => pi.stdin!.end() },
  { name: "SIGTERM", end: (pi) => pi.kill("SIGTERM") },
  { name: "SIGINT", end: (pi) => pi.kill("SIGINT") },
  { name: "SIGKILL", end: (pi) => pi.kill("SIGKILL") },
];

describe(`double forks do not outlive pi ${PI_LINE}`, { concurrency: true, timeout: 240_000 }, () => {
  after(() => home.cleanup());

  test("while pi runs, `/mcp reconnect` ends the old process's double-forked daemons", async () => {
    const run = await startPi();
    try {
      const old = run.sleepers();
      assert.equal(old.length, 2, "one sleeper from the start, one from the call");
      run.pi.stdin!.write(`${JSON.stringify({ type: "prompt", message: "/mcp reconnect df" })}\n`);
      await waitFor(() => run.sleepers().length === 3, "the new process's sleeper", 60_000, 100);
      await waitFor(() => old.every((pid) => !isAlive(pid)), "the old process's sleepers to be gone", 10_000, 100);
      assert.ok(isAlive(run.sleepers()[2]!), "the new process's sleeper runs");
      assert.equal(run.pi.exitCode, null, "pi still runs");
    } finally {
      run.stop();
    }
  });

  for (const exit of EXIT_PATHS) {
    test(`after ${exit.name}, no double-forked daemon of the server, from its start or a tool call, is left`, async () => {
      const run = await startPi();
      try {
        const sleepers = run.sleepers();
        assert.equal(sleepers.length, 2, "one sleeper from the start, one from the call");
        const tree = processTree(run.pi.pid!);
        for (const pid of sleepers) {
          assert.ok(isAlive(pid), `sleeper ${pid} runs`);
          assert.equal(sessionOf(pid), pid, `sleeper ${pid} leads a session of its own`);
          assert.ok(!tree.includes(pid), `sleeper ${pid} is outside pi's process tree`);
        }
        exit.end(run.pi);
        await within(run.exited, { ms: 30_000, timedOut: () => new Error("pi did not exit within 30 s") });
        await waitFor(() => run.left().length === 0, "every process of the server to be gone", 10_000, 100).catch(
          (error: Error) => {
            throw new Error(`${error.message}; left: ${run.left().map(commandLine).join(" | ")}`);
          },
        );
        await waitFor(() => run.watchdogs.every((pid) => !isAlive(pid)), "the watchdog to exit", 10_000, 100);
      } finally {
        run.stop();
      }
    });
  }
});
