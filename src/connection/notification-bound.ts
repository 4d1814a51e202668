/**
 * A server that floods its client with log or progress notifications must not starve its own call: each notification
 * the SDK takes costs its schema validation, and each log record a redacted line in the log, so half a million of them
 * kept the answer to the call waiting past its timeout. Here, before the SDK sees them, each session lets through at most
 * a few log records and progress updates a second; past that, log records are dropped and progress updates coalesced
 * (the latest per progress token is kept and delivered at the end of the second, or before the next message that is
 * not a log or progress notification, so the call's result never overtakes its last progress). Every one left out is
 * reported to `dropped`, `first` on the first of a flood.
 */
import type { JSONRPCMessage, MessageExtraInfo, Transport } from "@modelcontextprotocol/client";
import { type IncomingHandler as Handler, wrapIncoming } from "./incoming-messages.ts";

export type FloodKind = "log" | "progress";

/** Log records a server may send in one second before the rest of that second's are dropped. */
const LOGS_PER_SECOND = 100;
/** Progress updates per second passed on as they come (pi redraws the call for each); later ones are coalesced. */
const PROGRESS_PER_SECOND = 20;
const WINDOW_MS = 1000;

const KIND_OF_METHOD: ReadonlyMap<string, FloodKind> = new Map([
  ["notifications/message", "log"],
  ["notifications/progress", "progress"],
]);

/** What the log says when a flood starts. */
export function floodMessage(kind: FloodKind): string {
  return kind === "log"
    ? `The server sends more than ${LOGS_PER_SECOND} log records a second; the rest are dropped while it does, and counted in its metrics (notificationsDropped).`
    : `The server sends more than ${PROGRESS_PER_SECOND} progress updates a second; only the latest of each call is passed on while it does, the rest counted in its metrics (notificationsDropped).`;
}

interface NotificationBoundOptions {
  /** A notification left out (dropped, or replaced by a later progress update); `first` for the first of a flood. */
  dropped(kind: FloodKind, first: boolean): void;
  /** Every message the server sends, as it arrives (before the bound): the server is alive. */
  received?(): void;
  now?: () => number;
}

/** The state of one session's bound; `admit` decides each message, `flush` hands on the coalesced progress. */
class NotificationBound {
  private windowStart = -Infinity;
  private readonly passed: Record<FloodKind, number> = { log: 0, progress: 0 };
  /** Whether a flood of the kind was reported (not just over the bound) and is going on: it is reported once. */
  private readonly flooding: Record<FloodKind, boolean> = { log: false, progress: false };
  private readonly overNow: Record<FloodKind, boolean> = { log: false, progress: false };
  private readonly held = new Map<unknown, JSONRPCMessage>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Messages that came after held progress was handed on, waiting for the SDK to take it (see `admit`). */
  private waiting: Array<() => void> | undefined;

  constructor(private readonly options: NotificationBoundOptions) {}

  /** Hands `message` to `next` now, later (coalesced progress) or never (a log record past the bound). */
  admit(message: JSONRPCMessage, extra: MessageExtraInfo | undefined, next: Handler): void {
    if (this.waiting) return void this.waiting.push(() => this.admit(message, extra, next));
    const kind = "method" in message && !("id" in message) ? KIND_OF_METHOD.get(message.method) : undefined;
    // Most messages pass at once: no function is made for them.
    if (!kind && this.held.size === 0) return next(message, extra);
    const deliver = (m: JSONRPCMessage) => next(m, extra);
    if (!kind) {
      // The SDK takes a notification a microtask after a response: the progress held back goes first, and what
      // comes after it waits for that microtask, in order.
      this.flush(deliver);
      this.waiting = [() => deliver(message)];
      queueMicrotask(() => {
        const waiting = this.waiting ?? [];
        this.waiting = undefined;
        for (const next of waiting) next();
      });
      return;
    }
    this.roll();
    const token = ((message as { params?: unknown }).params as { progressToken?: unknown } | undefined)?.progressToken;
    const within = ++this.passed[kind] <= (kind === "log" ? LOGS_PER_SECOND : PROGRESS_PER_SECOND);
    // Left out: a log record past the bound, or a held update a newer one of its call replaces (held itself, or passed
    // on now: handed on later, the held one would undo it).
    if (kind === "log" ? !within : within ? this.held.delete(token) : this.held.has(token)) {
      this.options.dropped(kind, !this.flooding[kind]);
      this.flooding[kind] = true;
    }
    if (within) return next(message, extra);
    this.overNow[kind] = true;
    if (kind === "log") return;
    this.held.set(token, message);
    this.timer ??= setTimeout(() => this.flush(deliver), WINDOW_MS).unref();
  }

  /** Hands on the latest progress of each token held back. */
  flush(deliver: (message: JSONRPCMessage) => void): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const held = [...this.held.values()];
    this.held.clear();
    for (const message of held) deliver(message);
  }

  /** A new window once the last one is over; a kind that stayed within its bound for a whole window is calm again. */
  private roll(): void {
    const now = (this.options.now ?? Date.now)();
    if (now - this.windowStart < WINDOW_MS) return;
    for (const kind of ["log", "progress"] as const) {
      this.flooding[kind] &&= this.overNow[kind] && now - this.windowStart < 2 * WINDOW_MS;
      this.overNow[kind] = false;
      this.passed[kind] = 0;
    }
    this.windowStart = now;
  }
}

/**
 * Makes `transport` bound the log and progress notifications it hands up (see above). The SDK installs its listener
 * later, in `connect`; a listener wrapper installed before this one (./local/nesting-guard.ts) still runs first.
 */
export function boundNotifications<T extends Transport>(transport: T, options: NotificationBoundOptions): T {
  const bound = new NotificationBound(options);
  return wrapIncoming(
    transport,
    (next) => (message, extra) => (options.received?.(), bound.admit(message, extra, next)),
  );
}
