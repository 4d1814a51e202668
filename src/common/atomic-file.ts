/**
 * Replacing a file so that no reader ever sees half of it, and queueing what this process does to one file so that
 * two changes never interleave. Config files, OAuth tokens and the tool cache are all written this way.
 */
import { randomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync, statSync, unlinkSync } from "node:fs";
import { chmod, mkdir, open, rename, unlink } from "node:fs/promises";
import * as path from "node:path";

/** Per key (a file path), the tail of the tasks queued for it. */
const queues = new Map<string, Promise<unknown>>();

/** Runs `task` once every task queued before it under `key` has finished, however that ended. */
export function serialised<T>(key: string, task: () => Promise<T>): Promise<T> {
  const previous = queues.get(key) ?? Promise.resolve();
  const run = previous.then(task, task);
  const tail = run.catch(() => {});
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return run;
}

/**
 * Every queue of writes not yet finished: what a process about to end waits for, so what the user just answered (trust
 * in a project's servers, a sign-in's tokens, a notice given) is not lost to a quit right after it.
 */
export function pendingWrites(): Promise<unknown>[] {
  return [...queues.values()];
}

export interface ReplaceOptions {
  /** The file's mode, exactly (the umask does not apply). */
  mode: number;
  /** Flush the new content to disk before the rename (for what must survive a crash: credentials). */
  sync?: boolean;
}

/**
 * Writes `text` to a new temp file beside `file` and renames it over `file`, creating the directory (0700) if it is
 * missing. The temp file is in the same directory, so the rename is atomic, and named with the pid and random bytes,
 * so concurrent writers never share one. On failure the temp file is removed and the error thrown as it came.
 */
export async function replaceFile(file: string, text: string, options: ReplaceOptions): Promise<void> {
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const handle = await open(temp, "wx", options.mode);
    try {
      await handle.writeFile(text, "utf8");
      if (options.sync) await handle.sync();
    } finally {
      await handle.close();
    }
    await chmod(temp, options.mode);
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
}

/** A lock older than this was left by a process that died while holding it. */
const STALE_LOCK_MS = 30_000;
/** How long to wait for another process's lock before going on without it. */
const LOCK_WAIT_MS = 15_000;
const LOCK_POLL_MS = 50;

/** Makes `dir` (0700) where it is missing; whether it made one. */
function madeDirectory(dir: string): boolean {
  try {
    return mkdirSync(dir, { recursive: true, mode: 0o700 }) !== undefined;
  } catch {
    return false;
  }
}

/** Takes the lock file, waiting for another holder (bounded); a stale lock is broken. Returns its release. */
export async function fileLock(file: string): Promise<() => void> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      closeSync(openSync(file, "wx", 0o600));
      return () => {
        try {
          unlinkSync(file);
        } catch {
          // Already gone (broken as stale by another process).
        }
      };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // The first write ever makes the directory: two pi processes doing theirs at once must still take turns.
      if (code === "ENOENT" && madeDirectory(path.dirname(file))) continue;
      if (code !== "EEXIST") return () => {}; // No lock possible here (read-only dir): go on without one.
    }
    try {
      if (Date.now() - statSync(file).mtimeMs > STALE_LOCK_MS) unlinkSync(file);
    } catch {
      // Released meanwhile.
    }
    if (Date.now() > deadline) return () => {};
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
}
