/**
 * A persistent cache of each server's tool list, so that a lazily started server's tools can be registered at startup
 * without starting it.
 *
 * The cache is one JSON file, normally in pi's agent dir, which several pi processes may share. Every write re-reads
 * the file and merges into it under a lock file, and replaces it by renaming a temp file over it, so a reader never
 * sees half a file and two processes never lose each other's entries. A cache must never break startup, so nothing
 * here throws: a missing, unreadable or corrupt file reads as empty, and a failed write is only recorded in `error`.
 */
import type { Tool } from "@modelcontextprotocol/client";
import { fileLock, serialised } from "../common/atomic-file.ts";
import { canonicalJson } from "../common/canonical-json.ts";
import { errorMessage } from "../common/errors.ts";
import { isObject } from "../common/values.ts";
import { readVersioned, readVersionedSync, writeVersioned } from "../common/versioned-json.ts";

export interface CachedTools {
  server: string;
  /** ISO timestamp of the write that stored these tools. */
  savedAt: string;
  tools: Tool[];
  /** The MCP revision the server spoke when it listed them, so the next start asks for it without probing. */
  protocolVersion?: string;
}

const DEFAULT_CACHE_MAX_ENTRIES = 200;

const FILE_VERSION = 1;

/** The cache key of a server: the hash of its identity (see `McpBridge`), whatever its key order. */
export { canonicalHash as cacheKey } from "../common/canonical-json.ts";

/** Only what a registration can use: anything else in the file is treated as if it were not there. */
function isValidEntry(value: unknown): value is CachedTools {
  if (!isObject(value)) return false;
  if (typeof value.server !== "string" || typeof value.savedAt !== "string" || !Array.isArray(value.tools))
    return false;
  return value.tools.every((tool) => isObject(tool) && typeof tool.name === "string" && isObject(tool.inputSchema));
}

function parseEntries(data: Record<string, unknown> | undefined): Map<string, CachedTools> {
  const entries = new Map<string, CachedTools>();
  if (!isObject(data?.entries)) return entries;
  for (const [key, entry] of Object.entries(data.entries)) {
    if (!isValidEntry(entry)) continue;
    const { server, savedAt, tools } = entry;
    const protocolVersion = typeof entry.protocolVersion === "string" ? entry.protocolVersion : undefined;
    entries.set(key, { server, savedAt, tools, ...(protocolVersion ? { protocolVersion } : {}) });
  }
  return entries;
}

/** Sort key for eviction; an unparseable timestamp counts as oldest. */
function savedTime(entry: CachedTools): number {
  const t = Date.parse(entry.savedAt);
  return Number.isNaN(t) ? -Infinity : t;
}

export class ToolCache {
  private readonly maxEntries: number;
  private readonly now: () => Date;
  /** The file's entries as last read or written; undefined until first needed. */
  private snapshot: Map<string, CachedTools> | undefined;
  /** Entries `set` has accepted but not yet written, so `get` sees them at once. */
  private readonly pending = new Map<string, CachedTools>();
  private lastError: string | undefined;

  constructor(
    readonly file: string,
    options: { maxEntries?: number; now?: () => Date } = {},
  ) {
    this.maxEntries = Math.max(1, Math.floor(options.maxEntries ?? DEFAULT_CACHE_MAX_ENTRIES));
    this.now = options.now ?? (() => new Date());
  }

  /** The last write failure, for diagnostics; cleared by a later successful write. */
  get error(): string | undefined {
    return this.lastError;
  }

  /** The cached tools for `key`, or undefined. Reads the file on first use; never throws. Do not mutate the result. */
  get(key: string): CachedTools | undefined {
    const pending = this.pending.get(key);
    if (pending) return pending;
    if (!this.snapshot) this.snapshot = parseEntries(readVersionedSync(this.file, FILE_VERSION));
    return this.snapshot.get(key);
  }

  /** Stores `entry` under `key` and persists it. Never rejects; a failure is recorded in `error`. */
  set(key: string, entry: { server: string; tools: Tool[]; protocolVersion?: string }): Promise<void> {
    // A JSON copy: what later `get`s return is then exactly what a reader of the file would see, and the caller
    // mutating its tool objects afterwards cannot change the cache.
    const stored: CachedTools = {
      server: entry.server,
      savedAt: this.now().toISOString(),
      tools: JSON.parse(JSON.stringify(entry.tools)) as Tool[],
      ...(entry.protocolVersion ? { protocolVersion: entry.protocolVersion } : {}),
    };
    this.pending.set(key, stored);
    // One write at a time per file in this process, each reading what the one before it wrote; another pi's read and
    // write must not come between this one's either: it would drop the entry written here.
    return serialised(this.file, async () => {
      const release = await fileLock(`${this.file}.lock`);
      await this.write(key, stored).finally(release);
    });
  }

  private async write(key: string, stored: CachedTools): Promise<void> {
    try {
      // Re-read right before writing: another pi process may have added entries since this one last looked.
      const entries = parseEntries(await readVersioned(this.file, FILE_VERSION));
      const existing = entries.get(key);
      const unchanged =
        existing !== undefined &&
        existing.server === stored.server &&
        existing.protocolVersion === stored.protocolVersion &&
        canonicalJson(existing.tools) === canonicalJson(stored.tools);
      // Same tools (and revision) as on disk: rewriting the file on every connect would only churn it.
      if (!unchanged) {
        entries.set(key, stored);
        this.evict(entries, key);
        await writeVersioned(this.file, FILE_VERSION, { entries: Object.fromEntries(entries) }, 0);
        this.lastError = undefined;
      }
      this.commit(key, stored, entries);
    } catch (error) {
      this.lastError = `cannot write tool cache ${this.file}: ${errorMessage(error)}`;
      // Keep serving the entry from memory for the rest of this process.
      const entries = this.snapshot ?? parseEntries(readVersionedSync(this.file, FILE_VERSION));
      entries.set(key, stored);
      this.commit(key, stored, entries);
    }
  }

  /** Adopts `entries` as the in-memory view and retires `stored` from pending, unless a newer `set` replaced it. */
  private commit(key: string, stored: CachedTools, entries: Map<string, CachedTools>): void {
    this.snapshot = entries;
    if (this.pending.get(key) === stored) this.pending.delete(key);
  }

  /** Drops the oldest entries beyond `maxEntries`; on a tie the entry just written is kept. */
  private evict(entries: Map<string, CachedTools>, keep: string): void {
    if (entries.size <= this.maxEntries) return;
    const byAge = [...entries].sort(
      ([ka, a], [kb, b]) => savedTime(b) - savedTime(a) || Number(kb === keep) - Number(ka === keep),
    );
    for (const [key] of byAge.slice(this.maxEntries)) entries.delete(key);
  }
}
