/**
 * Which one-time notices the user has been given, on disk (`<agent dir>/mcp-bridge/notices.json`), so a notice worth
 * giving once is not repeated at every start. Several pi processes may share the file: every write re-reads it, adds
 * its keys and replaces the file atomically. Remembering must never break startup: an unreadable file reads as
 * nothing told (the notice comes again), and a failed write is only recorded in `error`.
 */
import { fileLock, serialised } from "../common/atomic-file.ts";
import { errorMessage } from "../common/errors.ts";
import { readVersioned, writeVersioned } from "../common/versioned-json.ts";

const FILE_VERSION = 1;

export class NoticeMemory {
  private lastError: string | undefined;

  constructor(readonly file: string) {}

  /** The last write failure, for the log; cleared by a later successful write. */
  get error(): string | undefined {
    return this.lastError;
  }

  /** The notices among these not given before, now remembered as given. Never rejects. */
  firstTime<T extends { key: string }>(notices: readonly T[]): Promise<T[]> {
    if (notices.length === 0) return Promise.resolve([]);
    return serialised(this.file, async () => {
      // Another pi's read and write must not come between this one's: it would drop the keys written here.
      const release = await fileLock(`${this.file}.lock`);
      return this.remember(notices).finally(release);
    });
  }

  private async remember<T extends { key: string }>(notices: readonly T[]): Promise<T[]> {
    const stored = (await readVersioned(this.file, FILE_VERSION))?.told;
    const told = new Set(Array.isArray(stored) ? stored.filter((key): key is string => typeof key === "string") : []);
    const fresh = notices.filter((notice) => !told.has(notice.key));
    if (fresh.length === 0) return [];
    for (const notice of fresh) told.add(notice.key);
    try {
      await writeVersioned(this.file, FILE_VERSION, { told: [...told] });
      this.lastError = undefined;
    } catch (error) {
      this.lastError = `cannot write ${this.file}: ${errorMessage(error)}`;
    }
    return fresh;
  }
}
