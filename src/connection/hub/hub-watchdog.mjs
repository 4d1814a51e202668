// @ts-check
/**
 * The hub's own orphan watchdog: the same script each pi runs (../local/watchdog.sh), told the process group of each
 * server the hub starts and the hub's mark, so that if the hub dies however it dies (SIGKILL included), its servers and
 * what they started end with it rather than run on adopted by pid 1. A server that ends when its stdin closes needs
 * none of this; one that ignores that does. So do the sandbox library's leftovers: its relays, which carry the hub's
 * mark, and the empty mount points bubblewrap made. POSIX only; on Windows it does nothing.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const SCRIPT = fileURLToPath(new URL("../local/watchdog.sh", import.meta.url));
/** Seconds between SIGTERM and SIGKILL once the hub is gone. */
const GRACE_SECONDS = 2;

export class HubWatchdog {
  /** `token`: the first part of every server's `MCP_BRIDGE_OWNER` value, which what it starts inherits. */
  constructor(token) {
    this.token = token;
    /** @type {import("node:child_process").ChildProcessByStdio<import("node:stream").Writable, null, null> | undefined} */
    this.child = undefined;
    /** @type {Set<string>} */
    this.paths = new Set();
    if (process.platform === "win32") return;
    // A session of its own: a signal to the hub's group does not reach it.
    const child = spawn("/bin/sh", [SCRIPT, String(GRACE_SECONDS)], {
      detached: true,
      stdio: ["pipe", "ignore", "ignore"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    });
    child.on("error", () => undefined);
    child.stdin.on("error", () => undefined);
    child.unref();
    this.child = child;
    this.write(`+ m ${token}\n`);
  }

  /** Watches a server's process group from its start. */
  watch(pgid) {
    this.write(`+ g ${pgid} -\n`);
  }

  forget(pgid) {
    this.write(`- g ${pgid}\n`);
  }

  /** A mount point a server's sandbox made (../../sandbox/sandbox-runtime.mjs): removed at the hub's death if empty. */
  watchPath(file) {
    if (file.includes("\n") || file.trim() !== file) return;
    this.paths.add(file);
    this.write(`+ f ${file}\n`);
  }

  /** The sandbox library was reset: what it removed is forgotten; what is still there is removed at the end. */
  forgetPaths() {
    for (const file of this.paths) if (!existsSync(file) && this.paths.delete(file)) this.write(`- f ${file}\n`);
  }

  /** The hub ends on purpose, its servers stopped: the watchdog exits with nothing to do. */
  release() {
    this.write(`- m ${this.token}\n`);
    this.child?.stdin.end();
  }

  write(line) {
    const stdin = this.child?.stdin;
    if (stdin && !stdin.destroyed && stdin.writable) stdin.write(line);
  }
}
