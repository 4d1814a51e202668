/**
 * A file the user wrote (a config file) read as UTF-8, strictly: a byte that is not UTF-8 is an error naming its
 * offset, not a U+FFFD that changes a value (a path, a token) unseen.
 */
import { isUtf8 } from "node:buffer";
import { readFile, stat } from "node:fs/promises";
import { devNull } from "node:os";

/** A file whose text is not read: said in its message. */
export class UnreadableTextError extends Error {}

class NotUtf8Error extends UnreadableTextError {
  constructor(readonly offset: number) {
    super(`not valid UTF-8 at byte ${offset}; save it as UTF-8`);
  }
}

/** The offset of the first byte that is not UTF-8, or undefined when all are. */
export function firstNonUtf8Byte(bytes: Buffer): number | undefined {
  if (isUtf8(bytes)) return undefined;
  // What comes before the first U+FFFD decoded as it is, so its UTF-8 length is the offset; a real U+FFFD is passed.
  const loose = bytes.toString("utf8");
  let offset = 0;
  for (let at = loose.indexOf("\uFFFD"), from = 0; at >= 0; from = at + 1, at = loose.indexOf("\uFFFD", from)) {
    offset += Buffer.byteLength(loose.slice(from, at));
    if (bytes[offset] !== 0xef || bytes[offset + 1] !== 0xbf || bytes[offset + 2] !== 0xbd) return offset;
    offset += 3;
  }
  return bytes.length;
}

/** The file's text, or a {@link NotUtf8Error}; a byte-order mark stays, as `readFile` keeps it. */
export async function readUtf8File(file: string): Promise<string> {
  // A FIFO blocks the open (and pi's exit) until something writes to it, and /dev/zero (a cloned project's
  // `.pi/mcp.json` may link to it) never ends; a directory still fails as EISDIR.
  const info = await stat(file);
  // A link to /dev/null is a way to say "no servers": empty, as it always read.
  if (info.isCharacterDevice() && info.rdev === (await stat(devNull)).rdev) return "";
  if (!info.isFile() && !info.isDirectory())
    throw new UnreadableTextError("not a regular file (a pipe, a socket or a device); nothing is read from it");
  const bytes = await readFile(file);
  const invalidAt = firstNonUtf8Byte(bytes);
  if (invalidAt !== undefined) throw new NotUtf8Error(invalidAt);
  return bytes.toString("utf8");
}
