/**
 * No server outlives pi, even when pi is killed: one small watchdog process per pi process (./watchdog.sh) holds a
 * pipe from pi, and when the pipe closes (pi's process ended, however it ended) it ends the server process groups and
 * processes pi told it about, and on Linux every process that carries pi's mark (./process-tree.ts, `OWNER_ENV`). Node has no parent-death signal, and a SIGKILL, or a SIGINT in print or RPC mode, ends
 * pi without running any of its own handlers, so this has to work without pi's help.
 *
 * The watchdog is a POSIX shell script: it starts in a millisecond or two, uses under 2 MB, and waits in a blocking
 * read while pi lives. It is started with the first local server and asked to exit (its input ended, with
 * nothing watched) when the last one has been shut down, so pi without local servers has none. It runs in a session
 * of its own, so Ctrl+C or a hang-up at pi's terminal, which reach pi's process group, do not reach it. On Windows
 * there are no process groups to hand over, and no watchdog.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import * as path from "node:path";
import type { Writable } from "node:stream";
import { packageFile } from "../../common/package-files.ts";
import { NPM_ROLLBACK_MS, OWNER_TOKEN, processStartTime } from "./process-tree.ts";

/** A process group (a local server and what it started) or a single process (one that left the group). */
export type WatchKind = "group" | "process";

export interface WatchdogOptions {
  /** How long the watchdog lets what it SIGTERMed exit before SIGKILL, in whole seconds. */
  graceSeconds?: number;
}

/** The watchdog's script: a plain file, so it runs without anything of pi's. */
export const WATCHDOG_SCRIPT = packageFile("src/connection/local/watchdog.sh");
const DEFAULT_GRACE_SECONDS = 2;
/** How many times a watchdog that died while pi lives is replaced (killed by someone, or unable to start). */
const MAX_REPLACEMENTS = 3;
const KIND_LETTER: Record<WatchKind, string> = { group: "g", process: "p" };
const WATCHDOG_RUNS = process.platform !== "win32";

type WatchdogProcess = ChildProcessByStdio<Writable, null, null>;

export interface Watch {
  /** It was shut down: the watchdog lets go of it, and exits once it watches nothing. Idempotent. */
  forget(): void;
}

const NOT_WATCHED: Watch = { forget: () => undefined };

export class OrphanWatchdog {
  /**
   * What is watched, by `<letter> <pid>`, each with the line that told the watchdog. A new target under the same key
   * (the pid used again) replaces the old one, whose `forget` then does nothing.
   */
  private readonly targets = new Map<string, { line: string }>();
  private child?: WatchdogProcess;
  private readonly graceSeconds: number;
  private replacements = 0;
  /** pi is quitting: what has not exited when its process ends is left to the watchdog (see `handOver`). */
  private handedOver = false;
  /** The sessions (their bridges) running in this process. */
  private readonly sessions = new Set<object>();

  constructor(options: WatchdogOptions = {}) {
    this.graceSeconds = Math.max(0, Math.round(options.graceSeconds ?? DEFAULT_GRACE_SECONDS));
  }

  /** The watchdog process's pid while one runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * Hands a target to the watchdog; it is ended if pi dies before `forget`. Call right after spawning, in the same
   * tick: the line is in the pipe before pi can do anything else. A target is identified by its pid and its start
   * time (Linux), so a pid the system has since given to another process is left alone; where the start time cannot
   * be read, only groups are watched.
   */
  watch(kind: WatchKind, pid: number, start = processStartTime(pid)): Watch {
    if (!WATCHDOG_RUNS || !Number.isSafeInteger(pid) || pid <= 1) return NOT_WATCHED;
    const known = start !== undefined && /^\d+$/.test(start);
    // A group's id is not handed out again while the group has members; a lone process's pid can be, at any time.
    if (!known && kind === "process") return NOT_WATCHED;
    const key = `${KIND_LETTER[kind]} ${pid}`;
    return this.add(key, `+ ${key} ${known ? start : "-"}\n`);
  }

  /**
   * Hands the watchdog a file or directory to remove once nothing of pi's runs: if it is empty then (a mount point the
   * sandbox library made, which it removes at pi's exit, which a killed pi never reaches), or with what it holds (a
   * sandboxed server's temp directory, `tree`). A path the watchdog's line could not carry as it is (a line break, a
   * space at either end) is not watched.
   */
  watchPath(file: string, tree = false): Watch {
    if (!WATCHDOG_RUNS || !path.isAbsolute(file) || file.includes("\n") || file.trim() !== file) return NOT_WATCHED;
    const key = `${tree ? "t" : "f"} ${file}`;
    return this.add(key, `+ ${key}\n`);
  }

  private add(key: string, line: string): Watch {
    const target = { line };
    this.targets.set(key, target);
    if (this.child) this.write(line);
    else this.start();
    return { forget: () => this.forget(key, target) };
  }

  /**
   * pi is quitting: the servers still running are the watchdog's once pi's process has ended. It gives them the grace
   * to exit on their own (their input ends with pi) before SIGTERM, as a close would; pi need not wait that long.
   */
  handOver(): void {
    if (!this.child) return;
    this.handedOver = true;
    this.write("+ q\n");
  }

  /** A session's end: one that quit ends the process only if no other session runs in it (an SDK host runs several). */
  sessionEnded(session: object, quitting: boolean): void {
    this.sessions.delete(session);
    if (quitting && this.sessions.size === 0) this.handOver();
  }

  /** A session started after `handOver`: this process lives on (it embeds pi), and closes wait for servers again. */
  takeBack(session?: object): void {
    if (session) this.sessions.add(session);
    if (!this.handedOver) return;
    this.handedOver = false;
    this.write("- q\n");
  }

  /** Whether a close may leave its server to the watchdog: pi is quitting and a watchdog runs. */
  get takesOver(): boolean {
    return this.handedOver && this.child !== undefined;
  }

  private forget(key: string, target: { line: string }): void {
    if (this.targets.get(key) !== target) return;
    this.targets.delete(key);
    this.write(`- ${key}\n`);
    if (this.targets.size === 0) this.stop();
  }

  private start(): void {
    let child: WatchdogProcess;
    try {
      child = spawn("/bin/sh", [WATCHDOG_SCRIPT, String(this.graceSeconds), String(NPM_ROLLBACK_MS / 1000)], {
        // A session of its own: signals for pi's process group or terminal do not reach it.
        detached: true,
        stdio: ["pipe", "ignore", "ignore"],
        // Nothing of pi's: no working directory to hold busy, no environment to see.
        cwd: "/",
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      });
    } catch {
      // No shell to run it: servers still end with pi's shutdown, only not when pi is killed.
      return;
    }
    this.child = child;
    const gone = () => {
      if (this.child !== child) return;
      this.child = undefined;
      // It died while pi lives: another takes over everything watched (a line sent meanwhile may have been lost).
      if (this.targets.size > 0 && this.replacements < MAX_REPLACEMENTS) {
        this.replacements++;
        this.start();
      }
    };
    child.once("error", gone);
    child.once("exit", gone);
    // EPIPE: the watchdog is gone.
    child.stdin.on("error", gone);
    // The watchdog must never keep pi running.
    child.unref();
    (child.stdin as Writable & { unref?(): void }).unref?.();
    // The mark every server's descendants carry: if pi dies, those that left every group and tree are found by it.
    this.write(`+ m ${OWNER_TOKEN}\n`);
    for (const target of this.targets.values()) this.write(target.line);
    if (this.handedOver) this.write("+ q\n");
  }

  private write(line: string): void {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed || stdin.writableEnded) return;
    stdin.write(line);
  }

  private stop(): void {
    const child = this.child;
    // Let go of the mark too: a server started meanwhile (under the next watchdog) carries it, and must be left alone.
    this.write(`- m ${OWNER_TOKEN}\n`);
    this.child = undefined;
    this.handedOver = false;
    child?.stdin.end();
  }
}

/** The watchdog of this pi process, shared by every local server. */
export const orphanWatchdog = new OrphanWatchdog();
