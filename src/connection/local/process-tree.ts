/**
 * The processes a local server started, so that shutdown ends all of them.
 *
 * A local server runs in a process group of its own (./stdio-transport.ts), but a process it starts may leave the group
 * (a daemonising wrapper, `setsid`), and a wrapper such as `npx` or a shell script would leave its real server behind
 * if only the direct child were ended. So the tree below the child is read after it starts and again at shutdown, and
 * whatever of it is still alive afterwards is ended; on Linux so is every process that carries the server's mark in its
 * environment (a double fork re-parented to pid 1 is in neither the group nor the tree). On Linux each process is remembered with its start time, so a
 * recycled pid is never signalled; elsewhere only that the pid is still alive is checked. Everything here that reads
 * the process table lives in this file.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";

export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** Opaque start marker (Linux: clock ticks since boot; elsewhere `ps` start time). */
  start: string;
}

interface ProcStat {
  ppid: number;
  /** The process group. */
  pgrp: number;
  start: string;
  /** One letter: R running, S sleeping, Z zombie (exited, not yet reaped), … */
  state: string;
}

function parseProcStat(text: string): ProcStat | undefined {
  // The command name is in parentheses and may itself contain spaces or parentheses.
  const close = text.lastIndexOf(")");
  if (close < 0) return undefined;
  const fields = text.slice(close + 2).split(" ");
  // fields[0] is the state (field 3 of stat); ppid is field 4, pgrp field 5, starttime field 22.
  const ppid = Number(fields[1]);
  const start = fields[19];
  if (!Number.isFinite(ppid) || start === undefined) return undefined;
  return { ppid, pgrp: Number(fields[2]), start, state: fields[0] ?? "" };
}

function readProcStat(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}

/** The pids listed in /proc (Linux); undefined where it cannot be read. */
function procPids(): number[] | undefined {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return undefined;
  }
  return entries.filter((entry) => /^\d+$/.test(entry)).map(Number);
}

/** Every local server is started with this variable, which whatever it starts inherits, however it starts it. */
export const OWNER_ENV = "MCP_BRIDGE_OWNER";
/** This pi process's part of the value: random, so that no other pi's processes match and none can be named ahead. */
export const OWNER_TOKEN = randomBytes(16).toString("hex");
let marksGiven = 0;

/** A value of {@link OWNER_ENV} for one server process: `<OWNER_TOKEN>-<n>`. */
export function newOwnerMark(): string {
  return `${OWNER_TOKEN}-${++marksGiven}`;
}

/**
 * The processes of this user whose environment has `OWNER_ENV=mark` (Linux; none elsewhere): a server's descendants
 * however they were made (double forks, `setsid`), unless one cleared its environment. The start time is read before
 * and after the environment, so a pid reused meanwhile is not taken.
 */
export function markedProcesses(mark: string): ProcessInfo[] {
  if (process.platform !== "linux") return [];
  const needle = `\0${OWNER_ENV}=${mark}\0`;
  const out: ProcessInfo[] = [];
  for (const pid of procPids() ?? []) {
    const before = pid === process.pid ? undefined : readProcStat(pid);
    try {
      if (!before || statSync(`/proc/${pid}`).uid !== process.getuid?.()) continue;
      if (!`\0${readFileSync(`/proc/${pid}/environ`, "latin1")}`.includes(needle)) continue;
    } catch {
      continue;
    }
    if (readProcStat(pid)?.start === before.start) out.push({ pid, ppid: before.ppid, start: before.start });
  }
  return out;
}

/** A snapshot of the process table (pid, parent, start). Empty where it cannot be read. */
export function listProcesses(): ProcessInfo[] {
  if (process.platform === "linux") {
    return (procPids() ?? []).flatMap((pid) => {
      const stat = readProcStat(pid);
      return stat ? [{ pid, ppid: stat.ppid, start: stat.start }] : [];
    });
  }
  if (process.platform === "win32") return [];
  try {
    const text = execFileSync("ps", ["-A", "-o", "pid=,ppid=,lstart="], {
      encoding: "utf8",
      timeout: 5000,
      stdio: ["ignore", "pipe", "ignore"],
    });
    return text
      .split("\n")
      .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), start: m[3]!.trim() }));
  } catch {
    return [];
  }
}

/** Every process below `rootPid` in `table` (children, grandchildren, …), not including the root. */
export function descendantsOf(rootPid: number, table: readonly ProcessInfo[]): ProcessInfo[] {
  const byParent = new Map<number, ProcessInfo[]>();
  for (const info of table) {
    const siblings = byParent.get(info.ppid);
    if (siblings) siblings.push(info);
    else byParent.set(info.ppid, [info]);
  }
  const out: ProcessInfo[] = [];
  const queue = [rootPid];
  const seen = new Set<number>([rootPid]);
  while (queue.length > 0) {
    const pid = queue.shift()!;
    for (const child of byParent.get(pid) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      out.push(child);
      queue.push(child.pid);
    }
  }
  return out;
}

/** Children of a process from `/proc/<pid>/task/<tid>/children`; `undefined` where the kernel does not provide it. */
function procChildren(pid: number): number[] | undefined {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const children: number[] = [];
  for (const tid of tasks) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT" && tid === String(pid)) return undefined;
      continue;
    }
    for (const child of text.split(" ")) if (child.trim()) children.push(Number(child));
  }
  return children;
}

/**
 * The process and everything below it, as they are now. On Linux only the subtree is read (a few files), not the
 * whole process table, which on a busy machine costs tens of milliseconds per call.
 */
export function processTree(rootPid: number): ProcessInfo[] {
  if (process.platform === "linux") {
    const out: ProcessInfo[] = [];
    const queue = [rootPid];
    const seen = new Set<number>();
    while (queue.length > 0) {
      const pid = queue.shift()!;
      if (seen.has(pid)) continue;
      seen.add(pid);
      const stat = readProcStat(pid);
      if (!stat) continue;
      out.push({ pid, ppid: stat.ppid, start: stat.start });
      const children = procChildren(pid);
      if (children === undefined) return fullScanTree(rootPid);
      queue.push(...children);
    }
    return out;
  }
  return fullScanTree(rootPid);
}

/** How long npm stopped during an install may take to roll it back: killed sooner, it leaves npx's copy broken. */
export const NPM_ROLLBACK_MS = 30_000;
/** npx's install of the package it runs: under way, or over since its program started (epoch ms). */
export type NpxInstall = { underWay: true } | { underWay: false; endedAt: number };

/**
 * npx's install below `rootPid` (Linux; undefined elsewhere, and where npx runs no install): npm names its process
 * `npm exec <package>` and starts the package's program below it with `npm_lifecycle_event=npx` in its environment
 * (install scripts get another event), once the install is over. The tree comes parents first; a process whose files
 * cannot be read is neither.
 */
export function npxInstall(rootPid: number | undefined): NpxInstall | undefined {
  if (process.platform !== "linux" || rootPid === undefined) return undefined;
  const belowNpm = new Set<number>();
  let npm = false;
  for (const { pid, ppid, start } of processTree(rootPid)) {
    try {
      if (belowNpm.has(ppid)) {
        if (`\0${readFileSync(`/proc/${pid}/environ`, "latin1")}`.includes("\0npm_lifecycle_event=npx\0"))
          return { underWay: false, endedAt: bootTime() + (Number(start) * 1000) / TICKS_PER_SECOND };
        belowNpm.add(pid);
      } else if (/^npm exec(?: |\0|$)/.test(readFileSync(`/proc/${pid}/cmdline`, "latin1"))) {
        npm = true;
        belowNpm.add(pid);
      }
    } catch {
      continue;
    }
  }
  return npm ? { underWay: true } : undefined;
}

/** Whether `npx` below `rootPid` is still installing the package it runs (see `npxInstall`). */
export function npxInstalling(rootPid: number | undefined): boolean {
  return npxInstall(rootPid)?.underWay === true;
}

/** Linux counts a process's start in clock ticks since boot, a hundred a second (`USER_HZ`) on every architecture. */
const TICKS_PER_SECOND = 100;
let booted: number | undefined;

/**
 * When this machine booted, epoch ms, from this process's own start (its age is known to the millisecond; /proc/stat's
 * `btime` only to the second).
 */
function bootTime(): number {
  booted ??=
    Date.now() - process.uptime() * 1000 - (Number(readProcStat(process.pid)?.start) * 1000) / TICKS_PER_SECOND;
  return booted;
}

function fullScanTree(rootPid: number): ProcessInfo[] {
  const table = listProcesses();
  const root = table.find((p) => p.pid === rootPid);
  return root ? [root, ...descendantsOf(rootPid, table)] : [];
}

/** Whether a process with this pid exists (ours to signal or not). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, it is just not ours to signal.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether a process other than a zombie is in process group `pgid` (Linux). Where orphans are not reaped (a container
 * whose pid 1 is not an init), exited members stay in the group as zombies; they do not count. Where /proc cannot be
 * read, the group is taken to be alive.
 */
export function groupHasLiveMember(pgid: number): boolean {
  const pids = procPids();
  if (pids === undefined) return true;
  for (const pid of pids) {
    const stat = readProcStat(pid);
    if (stat && stat.pgrp === pgid && stat.state !== "Z") return true;
  }
  return false;
}

/** When the process started (Linux: clock ticks since boot, as `ProcessInfo.start`); undefined elsewhere or if it is gone. */
export function processStartTime(pid: number): string | undefined {
  return process.platform === "linux" ? readProcStat(pid)?.start : undefined;
}

/** True while the process is the same one that was recorded (not exited, pid not reused). */
export function isSameProcessAlive(info: ProcessInfo): boolean {
  try {
    process.kill(info.pid, 0);
  } catch {
    // ESRCH: gone. EPERM: alive but not ours, so certainly not our child any more.
    return false;
  }
  if (process.platform !== "linux") return true;
  const stat = readProcStat(info.pid);
  // A zombie has exited already; it only waits for its parent to reap it.
  return stat !== undefined && stat.start === info.start && stat.state !== "Z";
}

function signal(info: ProcessInfo, sig: NodeJS.Signals): void {
  if (process.platform === "win32") {
    spawnSync("taskkill", ["/F", "/T", "/PID", String(info.pid)], { stdio: "ignore", windowsHide: true });
    return;
  }
  try {
    process.kill(info.pid, sig);
  } catch {
    // Already gone.
  }
}

const DEFAULT_TERMINATE_GRACE_MS = 1000;
const POLL_MS = 25;

/** SIGTERM every recorded process still alive, then SIGKILL what remains after `graceMs`. */
export async function terminateProcesses(
  processes: readonly ProcessInfo[],
  graceMs = DEFAULT_TERMINATE_GRACE_MS,
): Promise<void> {
  let alive = processes.filter(isSameProcessAlive);
  for (const p of alive) signal(p, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (alive.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    alive = alive.filter(isSameProcessAlive);
  }
  for (const p of alive) signal(p, "SIGKILL");
}

/** Ends a server's processes that carry its mark (those that left its group and tree, a double fork's daemon). */
export const endMarked = (mark: string): Promise<void> => terminateProcesses(markedProcesses(mark));

/** Synchronous last resort for `process.on("exit")`: SIGKILL whatever is still alive. */
export function killProcessesNow(processes: readonly ProcessInfo[]): void {
  for (const p of processes) if (isSameProcessAlive(p)) signal(p, "SIGKILL");
}

/** Merges snapshots, keeping one entry per (pid, start). */
export function mergeProcesses(...lists: ReadonlyArray<readonly ProcessInfo[]>): ProcessInfo[] {
  const out = new Map<string, ProcessInfo>();
  for (const list of lists) for (const p of list) out.set(`${p.pid}:${p.start}`, p);
  return [...out.values()];
}
