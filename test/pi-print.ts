/**
 * The real `pi` command line run to its end (print mode, `install`, `--help`, …), out of the user's home: a temp HOME
 * and agent dir, `PI_OFFLINE=1`. For the TUI see ./tmux.ts.
 */
import { spawn } from "node:child_process";
import * as path from "node:path";
import { REPO_ROOT } from "./helpers.ts";
import { PI_CLI } from "./tmux.ts";

/** pi writes its settings and sessions under the agent dir even for --help: both go below `home`. */
export function piCliEnv(home: string, env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, HOME: home, PI_CODING_AGENT_DIR: path.join(home, "agent"), PI_OFFLINE: "1", ...env };
}

export interface PiCliRun {
  home: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

/** Runs pi with `args` (this process's Node, the pi line under test) until it exits; its stdout and stderr together. */
export function runPiCli(args: string[], run: PiCliRun): Promise<{ code: number | null; output: string }> {
  const timeoutMs = run.timeoutMs ?? 60_000;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PI_CLI, ...args], {
      cwd: run.cwd ?? REPO_ROOT,
      env: piCliEnv(run.home, run.env),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`pi did not finish within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/**
 * A startup budget long enough for a loaded machine: tests that read what connected at startup need the servers
 * connected by then. The budget has its own tests.
 */
export const GENEROUS_BUDGET = { PI_MCP_STARTUP_BUDGET_MS: "60000" };

/** pi's environment and `runPiCli` for one test file's `home`, with GENEROUS_BUDGET unless `env` says otherwise. */
export function piCliIn(home: string) {
  return {
    env: (): NodeJS.ProcessEnv => piCliEnv(home, GENEROUS_BUDGET),
    run: (args: string[], timeoutMs = 60_000, cwd = REPO_ROOT, env: NodeJS.ProcessEnv = {}) =>
      runPiCli(args, { home, cwd, env: { ...GENEROUS_BUDGET, ...env }, timeoutMs }),
  };
}
