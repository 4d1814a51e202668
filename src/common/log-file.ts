/**
 * The bridge's own log: one JSON object per line, in a file that rotates by size.
 *
 * Records are queued and written in batches, one append per batch: a batch is written BATCH_MS after its first record
 * (so a tool call's log line costs no file write of its own), or on the next event-loop turn once BATCH_LINES are
 * waiting (so a server that floods its stderr costs one write per turn rather than one per line); the queue is
 * bounded, and what does not fit is counted and reported in the log instead of growing memory. The log may hold
 * whatever servers print (callers redact tokens, but redaction is best effort), so the directory is created 0700 and
 * the file is kept at 0600. A log must never take the bridge down: `log()` does not throw, and the first write failure
 * switches logging off and is kept in `error` for `/mcp` to show. Nothing here writes to stdout or stderr, which belong
 * to pi's UI.
 */
import {
  appendFileSync,
  chmodSync,
  closeSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { dirname } from "node:path";
import { codeOf, errorMessage } from "./errors.ts";
import { stripControls } from "./terminal-text.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";

/** The level of ours that an MCP log level (RFC 5424's eight, as servers send them) is written at. */
export const LEVEL_OF_MCP_LEVEL: Readonly<Record<string, LogLevel>> = {
  debug: "debug",
  info: "info",
  notice: "info",
  warning: "warn",
  error: "error",
  critical: "error",
  alert: "error",
  emergency: "error",
};

export interface LogRecord {
  level: LogLevel;
  event: string;
  server?: string;
  [field: string]: unknown;
}

export interface Logger {
  log(record: LogRecord): void;
  readonly closed?: boolean;
}

/** For callers with no log configured: drops everything. */
export const NULL_LOGGER: Logger = Object.freeze({ log: () => {} });

export const DEFAULT_LOG_MAX_BYTES = 5 * 1024 * 1024;
/** Rotated files kept besides the current one: `mcp.log.1`, `mcp.log.2`. */
export const DEFAULT_LOG_KEEP = 2;
const DEFAULT_MAX_PENDING = 10_000;
/** How long a record may wait for others to be written with it. */
const BATCH_MS = 100;
/** This many waiting are written on the next turn instead. */
const BATCH_LINES = 256;
/** Longer string values (at any depth) are cut here, so one huge stderr chunk cannot fill a file by itself. */
const MAX_STRING_CHARS = 8 * 1024;
const TRUNCATION_MARKER = "…";
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

export interface LogFileOptions {
  /** A batch that would push the file past this rotates it first. */
  maxBytes?: number;
  /** How many rotated files to keep (`.1` newest … `.keep` oldest). 0 keeps none. */
  keep?: number;
  /** Clock for the `time` field (tests). */
  now?: () => Date;
  /** Records queued before a write; more than this are dropped and counted. */
  maxPending?: number;
}

/** A string value as it is written: without terminal control sequences (a log is read in a terminal), and cut short. */
function safeStrings(_key: string, raw: unknown): unknown {
  if (typeof raw !== "string") return raw;
  const value = stripControls(raw);
  if (value.length <= MAX_STRING_CHARS) return value;
  let end = MAX_STRING_CHARS;
  // Do not split a surrogate pair: half of one would be an invalid character in the file.
  const last = value.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return value.slice(0, end) + TRUNCATION_MARKER;
}

function stringify(value: object): string {
  return JSON.stringify(value, safeStrings);
}

/**
 * `stringify` for a record whose values are all primitives, as most are (a tool call's line): its strings are made
 * safe here, so JSON.stringify runs without a replacer, which would cost more than all the rest of the line. Undefined
 * for a record with a nested value, which `stringify` takes.
 */
function stringifyFlat(entry: Record<string, unknown>): string | undefined {
  const entries = Object.entries(entry);
  if (entries.some(([, value]) => typeof value === "object" && value !== null)) return undefined;
  for (const [key, value] of entries) if (typeof value === "string") entry[key] = safeStrings(key, value);
  return JSON.stringify(entry);
}

export class LogFile implements Logger {
  private readonly maxBytes: number;
  private readonly keep: number;
  private readonly now: () => Date;
  private readonly maxPending: number;
  private pending: string[] = [];
  private dropped = 0;
  private scheduled: { kind: "timer"; handle: NodeJS.Timeout } | { kind: "turn"; handle: NodeJS.Immediate } | undefined;
  private prepared = false;
  closed = false;
  private failure: string | undefined;
  private lastTime?: { ms: number; text: string };

  constructor(
    readonly path: string,
    options: LogFileOptions = {},
  ) {
    this.maxBytes = Math.max(1, options.maxBytes ?? DEFAULT_LOG_MAX_BYTES);
    this.keep = Math.max(0, Math.floor(options.keep ?? DEFAULT_LOG_KEEP));
    this.now = options.now ?? (() => new Date());
    this.maxPending = Math.max(1, options.maxPending ?? DEFAULT_MAX_PENDING);
  }

  /** The first write failure; once set, logging is off for good. */
  get error(): string | undefined {
    return this.failure;
  }

  log(record: LogRecord): void {
    if (this.closed || this.failure !== undefined) return;
    if (this.pending.length >= this.maxPending) {
      this.dropped++;
      return;
    }
    // Serialised now, not at write time: the caller may mutate the object afterwards, and the time is the event's.
    const line = this.format(record);
    if (line === undefined) return;
    this.pending.push(line);
    this.schedule();
  }

  /** Writes everything queued, synchronously (for process exit, and tests). */
  flush(): void {
    this.unschedule();
    if (this.failure !== undefined || (this.pending.length === 0 && this.dropped === 0)) return;
    const lines = this.pending;
    this.pending = [];
    if (this.dropped > 0) {
      // After the queued records: the dropped ones came after them.
      lines.push(stringify({ time: this.time(), level: "warn", event: "log.dropped", count: this.dropped }));
      this.dropped = 0;
    }
    try {
      this.write(lines);
    } catch (error) {
      this.failure = errorMessage(error);
      this.pending = [];
      this.dropped = 0;
    }
  }

  /** Flushes and stops; later `log()` calls are dropped. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    this.closed = true;
  }

  private schedule(): void {
    if (this.scheduled?.kind === "turn") return;
    if (this.pending.length >= BATCH_LINES) {
      this.unschedule();
      this.scheduled = { kind: "turn", handle: setImmediate(() => this.flush()) };
      return;
    }
    // Not unref'd: it runs once, and lets the last records of a run reach the file.
    if (!this.scheduled) this.scheduled = { kind: "timer", handle: setTimeout(() => this.flush(), BATCH_MS) };
  }

  private unschedule(): void {
    if (this.scheduled?.kind === "timer") clearTimeout(this.scheduled.handle);
    else if (this.scheduled?.kind === "turn") clearImmediate(this.scheduled.handle);
    this.scheduled = undefined;
  }

  private time(): string {
    try {
      const date = this.now();
      // Many lines share a millisecond (the calls of one turn): the text is made once for it.
      const ms = date.getTime();
      if (ms === this.lastTime?.ms) return this.lastTime.text;
      const text = date.toISOString();
      this.lastTime = { ms, text };
      return text;
    } catch {
      return new Date().toISOString();
    }
  }

  /** One line for the record, or `undefined` when not even a placeholder can be made. */
  private format(record: LogRecord): string | undefined {
    const time = this.time();
    try {
      const { level, event, server } = record;
      const entry: Record<string, unknown> = { time, level, event };
      if (server !== undefined) entry.server = server;
      // The fixed fields come first and cannot be overwritten by a field of the same name.
      for (const key of Object.keys(record)) if (!(key in entry) && key !== "server") entry[key] = record[key];
      return stringifyFlat(entry) ?? stringify(entry);
    } catch {
      // A cycle, a BigInt, a throwing getter or toJSON: keep that the event happened.
    }
    try {
      const { level, event, server } = record;
      return stringify({
        time,
        level: typeof level === "string" ? level : "error",
        event: typeof event === "string" ? event : String(event),
        ...(typeof server === "string" ? { server } : {}),
        unserializable: true,
      });
    } catch {
      return undefined;
    }
  }

  /** Appends the lines, one append per run of lines that fits the current file, rotating between runs. */
  private write(lines: string[]): void {
    if (!this.prepared) {
      mkdirSync(dirname(this.path), { recursive: true, mode: DIR_MODE });
      this.prepared = true;
    }
    let size = this.currentSize();
    let chunk = "";
    let chunkBytes = 0;
    for (let line of lines) {
      let bytes = Buffer.byteLength(line) + 1;
      if (bytes > this.maxBytes) {
        // Many long fields can still add up past a whole file; keep a trace of the record instead.
        const placeholder = this.oversized(line, bytes);
        if (placeholder !== undefined) {
          line = placeholder;
          bytes = Buffer.byteLength(line) + 1;
        }
      }
      if (size + chunkBytes + bytes > this.maxBytes && size + chunkBytes > 0) {
        if (chunkBytes > 0) this.append(chunk);
        this.rotate();
        size = 0;
        chunk = "";
        chunkBytes = 0;
      }
      chunk += line + "\n";
      chunkBytes += bytes;
    }
    if (chunkBytes > 0) this.append(chunk);
  }

  private oversized(line: string, bytes: number): string | undefined {
    try {
      const { time, level, event, server } = JSON.parse(line) as Record<string, unknown>;
      return stringify({ time, level, event, server, oversized: bytes });
    } catch {
      return undefined;
    }
  }

  /** Size of the file as it is now (another pi may share it, or it may have been removed), fixing a loose mode. */
  private currentSize(): number {
    const stat = statSync(this.path, { throwIfNoEntry: false });
    if (!stat) return 0;
    if ((stat.mode & 0o077) !== 0) chmodSync(this.path, FILE_MODE);
    return stat.size;
  }

  private append(data: string): void {
    // `mode` only applies when the file is created; an existing file was checked by currentSize().
    appendFileSync(this.path, data, { mode: FILE_MODE });
  }

  /** mcp.log → mcp.log.1 → mcp.log.2 …; the oldest beyond `keep` is overwritten or removed. */
  private rotate(): void {
    if (this.keep === 0) return rmSync(this.path, { force: true });
    for (let i = this.keep - 1; i >= 1; i--)
      this.ignoreMissing(() => renameSync(`${this.path}.${i}`, `${this.path}.${i + 1}`));
    this.ignoreMissing(() => renameSync(this.path, `${this.path}.1`));
  }

  private ignoreMissing(action: () => void): void {
    try {
      action();
    } catch (error) {
      if (codeOf(error) !== "ENOENT") throw error;
    }
  }
}

/** How much of a log file's end `readLogTail` reads: enough for many lines, never the whole file. */
const TAIL_BYTES = 64 * 1024;

/**
 * The last `count` records of a JSON-lines log (of `server` only, where given), each as its `line` (a server's stderr
 * line) or its event and message, for `/mcp`'s view of a server. Missing or unreadable files give none.
 */
export function readLogTail(path: string, count: number, server?: string, now = new Date()): string[] {
  let text: string;
  let cut = false;
  try {
    const size = statSync(path).size;
    cut = size > TAIL_BYTES;
    const fd = openSync(path, "r");
    try {
      const length = Math.min(size, TAIL_BYTES);
      const buffer = Buffer.alloc(length);
      readSync(fd, buffer, 0, length, size - length);
      text = buffer.toString("utf8");
    } finally {
      closeSync(fd);
    }
  } catch {
    return [];
  }
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  // The first line may be cut in the middle when the file is longer than what was read.
  if (cut) lines.shift();
  const records = lines.map((line) => {
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      return line;
    }
  });
  const kept = server === undefined ? records : records.filter((r) => typeof r !== "string" && r.server === server);
  return kept.slice(-count).map((record) => {
    if (typeof record === "string") return record;
    const { time, level: _level, server: _server, event = "", line, ...fields } = record;
    // An event with its plain fields, each on one line: `connected attempt=0 durationMs=812 toolCount=2`.
    const plain = Object.entries(fields).filter(([, value]) => ["string", "number", "boolean"].includes(typeof value));
    const shown = plain.map(([key, value]) => `${key}=${String(value).split("\n", 1)[0]}`);
    const body = typeof line === "string" ? line : [event, ...shown].join(" ");
    return `${shownTime(time, now)} ${body}`.trim();
  });
}

/** A record's time as the user's clock shows it (the file has UTC), with its date when that is not today's. */
function shownTime(time: unknown, now: Date): string {
  const at = new Date(typeof time === "string" ? time : NaN);
  if (Number.isNaN(at.getTime())) return "";
  const pad = (n: number) => String(n).padStart(2, "0");
  const clock = `${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}`;
  if (at.toDateString() === now.toDateString()) return clock;
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} ${clock}`;
}
