/**
 * Replacing a config file on disk with an edited version of its text. The new text goes to a temp file that is
 * renamed over the old one, so a reader never sees half a file; a symlink is written through, the file keeps its
 * mode (a new one gets 0600), and two updates of one file in this process never interleave. A file that does not
 * parse is never written.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, realpath, rename, stat, unlink, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { errorMessage } from "../../common/errors.ts";
import { parseConfigText } from "../parse.ts";
import { ConfigWriteError } from "./error.ts";

/** Per-path queues, so that two updates of one file in this process never interleave their read-change-write. */
const queues = new Map<string, Promise<unknown>>();

/**
 * Reads `file` (missing: `undefined`), applies `change` and replaces the file atomically; returns the new text.
 * A file that does not parse is left untouched (`ConfigWriteError("unparsable")`); nothing is written when the text
 * does not change. An existing file keeps its mode; a new one gets 0600, and its directory is created.
 */
export function updateConfigFile(file: string, change: (text: string | undefined) => string): Promise<string> {
  const key = path.resolve(file);
  const previous = queues.get(key) ?? Promise.resolve();
  const run = previous.then(() => update(key, change));
  const settled = run.then(
    () => {},
    () => {},
  );
  queues.set(key, settled);
  void settled.then(() => {
    if (queues.get(key) === settled) queues.delete(key);
  });
  return run;
}

function ioError(action: string, file: string, error: unknown): ConfigWriteError {
  const code = (error as NodeJS.ErrnoException).code;
  const reason = code === "EACCES" || code === "EPERM" ? "permission denied" : code === "EISDIR" ? "is a directory" : errorMessage(error);
  return new ConfigWriteError("io", `cannot ${action} ${file}: ${reason}`);
}

async function update(file: string, change: (text: string | undefined) => string): Promise<string> {
  // Write through a symlink to the file it points at, rather than replacing the link with a plain file.
  let target = file;
  try {
    target = await realpath(file);
  } catch {
    // Missing (or a dangling link): written at the path as given.
  }
  let text: string | undefined;
  let mode = 0o600;
  try {
    text = await readFile(target, "utf8");
    mode = (await stat(target)).mode & 0o7777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw ioError("read", file, error);
    text = undefined;
  }
  if (text !== undefined) {
    const parsed = parseConfigText(text);
    if (parsed.error !== undefined) throw new ConfigWriteError("unparsable", `${file} is ${parsed.error}; fix it by hand first`);
  }
  const next = change(text);
  if (next === text) return next;
  const dir = path.dirname(target);
  const temp = path.join(dir, `.${path.basename(target)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(temp, next, { mode });
    // writeFile's mode is masked by the umask; the file must end up with exactly the old (or the private) mode.
    await chmod(temp, mode);
    await rename(temp, target);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw ioError("write", file, error);
  }
  return next;
}
