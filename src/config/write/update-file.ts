/**
 * Replacing a config file on disk with an edited version of its text. The new text goes to a temp file that is
 * renamed over the old one, so a reader never sees half a file; a symlink is written through, the file keeps its
 * mode (a new one gets 0600), and two updates of one file in this process never interleave. A file that does not
 * parse, or is not UTF-8, is never written.
 */
import { realpath, stat } from "node:fs/promises";
import * as path from "node:path";
import { replaceFile, serialised } from "../../common/atomic-file.ts";
import { errorMessage } from "../../common/errors.ts";
import { readUtf8File, UnreadableTextError } from "../../common/utf8-file.ts";
import { parseConfigText } from "../parse.ts";
import { ConfigWriteError } from "./error.ts";

/**
 * Reads `file` (missing: `undefined`), applies `change` and replaces the file atomically; returns the new text.
 * A file that does not parse is left untouched (`ConfigWriteError("unparsable")`); nothing is written when the text
 * does not change. An existing file keeps its mode; a new one gets 0600, and its directory is created.
 */
export function updateConfigFile(file: string, change: (text: string | undefined) => string): Promise<string> {
  const key = path.resolve(file);
  // Queued, so that two updates of one file in this process never interleave their read-change-write.
  return serialised(key, () => update(key, change));
}

function ioError(action: string, file: string, error: unknown): ConfigWriteError {
  const code = (error as NodeJS.ErrnoException).code;
  const denied = code === "EACCES" || code === "EPERM";
  const reason = denied ? "permission denied" : code === "EISDIR" ? "is a directory" : errorMessage(error);
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
    text = await readUtf8File(target);
    mode = (await stat(target)).mode & 0o7777;
  } catch (error) {
    // Rewritten, its bytes that are not UTF-8 would be lost.
    if (error instanceof UnreadableTextError) throw new ConfigWriteError("unparsable", `${file} is ${error.message}`);
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw ioError("read", file, error);
    text = undefined;
  }
  if (text !== undefined) {
    const parsed = parseConfigText(text);
    if (parsed.error !== undefined)
      throw new ConfigWriteError("unparsable", `${file} is ${parsed.error}; fix it by hand first`);
  }
  const next = change(text);
  if (next === text) return next;
  // The rename would replace a file the user made read-only (and root may write any): it is left as it is.
  if (text !== undefined && (mode & 0o222) === 0)
    throw new ConfigWriteError("io", `cannot write ${file}: it is read-only`);
  try {
    await replaceFile(target, next, { mode });
  } catch (error) {
    throw ioError("write", file, error);
  }
  return next;
}
