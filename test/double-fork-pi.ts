/**
 * Real `pi --mode rpc` with test/fixtures/double-fork-server.mjs, once the server has double-forked a sleeper as it
 * started and another during a tool call the faux model made; and the ways pi can end. Shared by the tests that check
 * no such daemon outlives pi, with the server sandboxed or not.
 */
import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { WATCHDOG_SCRIPT } from "../src/connection/local/orphan-watchdog.ts";
import { bundledFixture } from "./fixture-bundle.ts";
import { commandLine, isAlive, killIfAlive, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";
import { spawnRpcPi } from "./rpc-pi.ts";
import { processesWithEnv, processTree } from "./tmux.ts";

const SERVER = bundledFixture(path.join(REPO_ROOT, "test", "fixtures", "double-fork-server.mjs"));
/** Every process of the server carries this variable, with a value unique to the run. */
const MARK = "MCP_BRIDGE_DOUBLE_FORK_TEST";

/** The session a process leads or belongs to (field 6 of /proc/<pid>/stat). */
export function sessionOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]);
  } catch {
    return undefined;
  }
}

export type DoubleForkPi = Awaited<ReturnType<typeof startDoubleForkPi>>;

/**
 * pi in RPC mode (HOME `home`) with the double-forking server, once the tool call's sleeper runs too. `sandbox` is the
 * server's setting; a sandboxed server logs its sleepers' pids as its own PID namespace numbers them, which mean
 * nothing outside it, so then only the variable finds what is left of the server.
 */
export async function startDoubleForkPi(home: string, sandbox = false) {
  const tmp = tempDir();
  const mark = randomUUID();
  const log = path.join(tmp.dir, "sleepers.jsonl");
  const config = path.join(tmp.dir, "mcp.json");
  const server = { command: process.execPath, args: [SERVER], env: { [MARK]: mark, FIXTURE_LOG: log }, sandbox };
  writeFileSync(
    config,
    JSON.stringify({ mcpServers: { df: { ...server, exposure: "direct", autoApprove: ["daemonize"] } } }),
  );
  const { child: pi, exited, output } = spawnRpcPi(home, config, tmp.dir);
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
  const left = () => [...new Set([...processesWithEnv(MARK, mark), ...(sandbox ? [] : sleepers())])].filter(isAlive);
  const stop = () => {
    if (pi.exitCode === null && pi.signalCode === null) pi.kill("SIGKILL");
    for (const pid of left()) killIfAlive(pid);
    tmp.cleanup();
  };
  try {
    pi.stdin.write(`${JSON.stringify({ id: "ready", type: "get_state" })}\n`);
    await waitFor(() => output().includes('"id":"ready"'), "pi to answer over RPC", 60_000, 100);
    pi.stdin.write(`${JSON.stringify({ type: "prompt", message: "call mcp_df_daemonize {}" })}\n`);
    await waitFor(() => /daemon \d+ started/.test(output()), "the tool call's result", 60_000, 100);
  } catch (error) {
    stop();
    throw error;
  }
  const watchdogs = processTree(pi.pid!).filter((pid) => commandLine(pid).includes(WATCHDOG_SCRIPT));
  return { pi, exited, stop, sleepers, left, watchdogs, project: tmp.dir };
}

export interface ExitPath {
  name: string;
  end(pi: ChildProcess): void;
}

export const EXIT_PATHS: ExitPath[] = [
  { name: "a clean shutdown (pi's input ends)", end: (pi) => pi.stdin!.end() },
  { name: "SIGTERM", end: (pi) => pi.kill("SIGTERM") },
  { name: "SIGINT", end: (pi) => pi.kill("SIGINT") },
  { name: "SIGKILL", end: (pi) => pi.kill("SIGKILL") },
];
