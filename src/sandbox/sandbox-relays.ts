/**
 * The sandbox library's relays on Linux (`socat`, pi's children, from its proxies to the sockets sandboxes reach them
 * by) end when the library is reset or pi exits, which a killed pi (SIGKILL, a crash) never gets to: so they are the
 * orphan watchdog's, as a server's processes are.
 */
import { readFileSync } from "node:fs";
import type { SandboxManager } from "@anthropic-ai/sandbox-runtime";
import { orphanWatchdog, type Watch } from "../connection/local/orphan-watchdog.ts";
import { listProcesses } from "../connection/local/process-tree.ts";

let watched: Watch[] | undefined;

/** Hands the relays of the library, as it is set up now, to the watchdog; once per setup. */
export function watchSandboxRelays(library: typeof SandboxManager): void {
  if (watched || process.platform !== "linux") return;
  const listens = [library.getLinuxHttpSocketPath(), library.getLinuxSocksSocketPath()].map((s) => `UNIX-LISTEN:${s},`);
  const relays = listProcesses().filter((p) => p.ppid === process.pid && listens.some((l) => readsAs(p.pid, l)));
  watched = relays.map((p) => orphanWatchdog.watch("process", p.pid, p.start));
}

/** The library was reset: its relays have ended. */
export function forgetSandboxRelays(): void {
  for (const watch of watched ?? []) watch.forget();
  watched = undefined;
}

/** Whether one of `pid`'s arguments begins with `start`. */
function readsAs(pid: number, start: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "latin1").includes(`\0${start}`);
  } catch {
    return false;
  }
}
