/**
 * The bridge's own state files (the tool cache, the trust answers, the notices given): a JSON object with a `version`,
 * read leniently, since a state file must never stop pi (missing, unreadable, not JSON or of another version: read as
 * nothing), and written whole, atomically, readable by the user only.
 */
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { replaceFile } from "./atomic-file.ts";
import { isObject } from "./values.ts";

type Stored = Record<string, unknown>;

function ofVersion(text: string, version: number): Stored | undefined {
  const data: unknown = JSON.parse(text);
  return isObject(data) && data.version === version ? data : undefined;
}

/** What `file` holds if it is of `version`; undefined otherwise. Never throws. */
export async function readVersioned(file: string, version: number): Promise<Stored | undefined> {
  try {
    return ofVersion(await readFile(file, "utf8"), version);
  } catch {
    return undefined;
  }
}

/** `readVersioned`, for a read that cannot wait. */
export function readVersionedSync(file: string, version: number): Stored | undefined {
  try {
    return ofVersion(readFileSync(file, "utf8"), version);
  } catch {
    return undefined;
  }
}

/** Replaces `file` with `{"version": version, …body}` (mode 0600; `indent` 0 writes one line). */
export function writeVersioned(file: string, version: number, body: Stored, indent = 2): Promise<void> {
  return replaceFile(file, `${JSON.stringify({ version, ...body }, null, indent)}\n`, { mode: 0o600 });
}
