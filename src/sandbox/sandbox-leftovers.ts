/**
 * What a sandbox leaves behind a pi that is killed (SIGKILL, a crash), handed to the orphan watchdog, which outlives pi.
 * On Linux: the library's relays (`socat`, pi's children, from its proxies to the sockets sandboxes reach them by), the
 * empty files and directories made in the project as mount points for a denied path that is not there (`.bashrc`,
 * `.vscode/`, …) and the empty directory bound over such directories, and each server's temp directory. All of it goes
 * when the servers end and the sandboxes idle; this is for a pi that never gets there.
 */
import { existsSync, readFileSync } from "node:fs";
import type { SandboxManager } from "@anthropic-ai/sandbox-runtime";
import { orphanWatchdog, type Watch } from "../connection/local/orphan-watchdog.ts";
import { listProcesses } from "../connection/local/process-tree.ts";
import type { SandboxedStart } from "./sandbox-runtime.mjs";

let relays: Watch[] | undefined;
let mountPoints = new Map<string, Watch>();

/** Hands the relays of the library, as it is set up now, to the watchdog; once per setup. */
export function watchSandboxRelays(library: typeof SandboxManager): void {
  if (relays || process.platform !== "linux") return;
  const listens = [library.getLinuxHttpSocketPath(), library.getLinuxSocksSocketPath()].map((s) => `UNIX-LISTEN:${s},`);
  const found = listProcesses().filter((p) => p.ppid === process.pid && listens.some((l) => readsAs(p.pid, l)));
  relays = found.map((p) => orphanWatchdog.watch("process", p.pid, p.start));
}

/**
 * Hands the mount points of a start to the watchdog (removed if pi is killed, when empty), and its temp directory
 * (removed with what it holds) until the start is released.
 */
export function watchStartLeftovers(start: SandboxedStart): SandboxedStart {
  for (const p of start.mountPoints) if (!mountPoints.has(p)) mountPoints.set(p, orphanWatchdog.watchPath(p));
  const tempDir = orphanWatchdog.watchPath(start.tempDir, true);
  return {
    ...start,
    release() {
      start.release();
      tempDir.forget();
    },
  };
}

/**
 * The library was reset: its relays have ended, and its mount points and the bridge's placeholders are gone, but for
 * those it could not remove (another sandbox's own are inside one) and those another sandbox still mounts on: the
 * watchdog removes these once they are empty and nothing mounts on them.
 */
export function forgetSandboxLeftovers(): void {
  for (const watch of relays ?? []) watch.forget();
  relays = undefined;
  for (const [p, watch] of mountPoints) if (!existsSync(p) && mountPoints.delete(p)) watch.forget();
}

/** Whether one of `pid`'s arguments begins with `start`. */
function readsAs(pid: number, start: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "latin1").includes(`\0${start}`);
  } catch {
    return false;
  }
}
