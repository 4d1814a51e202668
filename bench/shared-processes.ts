/**
 * Processes the shared-servers bench starts and must end: `pi --mode rpc` processes (pi 0.73's CLI, the faux model),
 * the hub they start detached, and the servers, found by a mark in their environment. Memory read from /proc (Linux).
 */
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { isAlive, waitFor } from "../test/helpers.ts";
import { spawnRpcPi } from "../test/rpc-pi.ts";

/** Resident and proportional set size of a process in kB (PSS splits pages shared with others among them); 0 once gone. */
export function memoryKb(pid: number): { rss: number; pss: number } {
  const field = (text: string, name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? 0);
  try {
    return { rss: field(readFileSync(`/proc/${pid}/status`, "utf8"), "VmRSS"), pss: pssKb(pid) };
  } catch {
    return { rss: 0, pss: 0 };
  }
}

function pssKb(pid: number): number {
  try {
    return Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** The pid in the hub's lock file in `dir`, while there is one. */
export function hubPid(dir: string): number | undefined {
  try {
    return Number(readFileSync(path.join(dir, "hub.lock"), "utf8")) || undefined;
  } catch {
    return undefined;
  }
}

/** SIGTERM to each, then SIGKILL to what is still there after `graceMs`; resolves once all are gone (bounded). */
export async function endProcesses(pids: readonly number[], graceMs = 6000): Promise<void> {
  const signal = (pid: number, name: NodeJS.Signals) => {
    try {
      process.kill(pid, name);
    } catch {
      // Gone already.
    }
  };
  const alive = () => pids.filter(isAlive);
  for (const pid of alive()) signal(pid, "SIGTERM");
  try {
    await waitFor(() => alive().length === 0, "the bench's processes to exit", graceMs, 50);
  } catch {
    for (const pid of alive()) signal(pid, "SIGKILL");
    await waitFor(() => alive().length === 0, "the bench's processes to exit after SIGKILL", 5000, 50);
  }
}

export interface RpcPi {
  child: ChildProcess;
  /** Sends `call <tool> {}` to the faux model; resolves once pi has run the tool. */
  call(tool: string): Promise<void>;
  /** Closes pi's stdin (pi exits as after a session ends) and waits for it, SIGKILL after `ms`. */
  end(ms?: number): Promise<void>;
}

/** One `pi --mode rpc` with this repo's extension and the faux model, HOME and agent dir in `home`. */
export function startRpcPi(home: string, config: string): RpcPi {
  const { child, exited, output } = spawnRpcPi(home, config);
  return {
    child,
    async call(tool) {
      const from = output().length;
      child.stdin!.write(`${JSON.stringify({ type: "prompt", message: `call ${tool} {}` })}\n`);
      const done = () => output().slice(from).includes('"tool_execution_end"');
      const gone = () => child.exitCode !== null || child.signalCode !== null;
      await waitFor(() => done() || gone(), `pi to run ${tool}`, 120_000, 50);
      if (!done()) throw new Error(`pi exited (${child.exitCode ?? child.signalCode}) before it ran ${tool}`);
    },
    async end(ms = 15_000) {
      child.stdin!.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), ms);
      await exited;
      clearTimeout(timer);
    },
  };
}
