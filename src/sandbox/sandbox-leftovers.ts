/**
 * What the sandbox library leaves behind a pi that is killed (SIGKILL, a crash), handed to the orphan watchdog, which
 * outlives pi. On Linux: its relays (`socat`, pi's children, from its proxies to the sockets sandboxes reach them by),
 * and the empty files and directories bubblewrap makes in the project as mount points for a denied path that is not
 * there (`.bashrc`, `.vscode/`, …). The library ends the one and removes the other at its reset or pi's exit.
 */
import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import type { SandboxManager } from "@anthropic-ai/sandbox-runtime";
import { orphanWatchdog, type Watch } from "../connection/local/orphan-watchdog.ts";
import { listProcesses } from "../connection/local/process-tree.ts";
import type { SandboxPolicy } from "./sandbox-policy.ts";

let relays: Watch[] | undefined;
let mountPoints: Watch[] = [];

/** Hands the relays of the library, as it is set up now, to the watchdog; once per setup. */
export function watchSandboxRelays(library: typeof SandboxManager): void {
  if (relays || process.platform !== "linux") return;
  const listens = [library.getLinuxHttpSocketPath(), library.getLinuxSocksSocketPath()].map((s) => `UNIX-LISTEN:${s},`);
  const found = listProcesses().filter((p) => p.ppid === process.pid && listens.some((l) => readsAs(p.pid, l)));
  relays = found.map((p) => orphanWatchdog.watch("process", p.pid, p.start));
}

/**
 * Where bubblewrap will make a mount point for a start under `policy`: the first missing part of each denied path that
 * is not there, where the server may write (elsewhere nothing can be made, and nothing is needed). Asked before the
 * start, as the library asks: only a path absent then is one it made.
 */
export function absentMountPoints(policy: SandboxPolicy): string[] {
  if (process.platform !== "linux") return [];
  const { allowWrite, denyRead, denyWrite } = policy.filesystem;
  const below = (p: string) => allowWrite.some((dir) => p.startsWith(`${dir}/`));
  const points = [...denyWrite, ...denyRead].filter(below).map(firstMissing);
  return [...new Set(points.filter((p): p is string => p !== undefined && below(p)))];
}

/** Hands the mount points of a start that has been set up to the watchdog: removed if pi is killed, when empty. */
export function watchMountPoints(points: readonly string[]): void {
  mountPoints.push(...points.map((p) => orphanWatchdog.watchPath(p)));
}

/** The library was reset: its relays have ended, its mount points are gone. */
export function forgetSandboxLeftovers(): void {
  for (const watch of [...(relays ?? []), ...mountPoints]) watch.forget();
  relays = undefined;
  mountPoints = [];
}

/** The outermost part of `p` that is not there (`p` itself, or a directory above it); undefined if `p` is. */
const firstMissing = (p: string): string | undefined =>
  existsSync(p) ? undefined : existsSync(path.dirname(p)) ? p : firstMissing(path.dirname(p));

/** Whether one of `pid`'s arguments begins with `start`. */
function readsAs(pid: number, start: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "latin1").includes(`\0${start}`);
  } catch {
    return false;
  }
}
