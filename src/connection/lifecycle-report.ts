/**
 * What each step in a server's life tells the rest of pi: the health model (./health.ts) changes, a line goes to the
 * bridge's log, and an event to pi's bus (`mcp.connecting`, `mcp.connected`, …, documented in docs/events-and-logs.md) — all three
 * in one call, so they never disagree. The connection decides what happens; this only records it.
 */
import type { CallToolResult } from "@modelcontextprotocol/client";
import { BridgeError, errorMessage } from "../common/errors.ts";
import type { EventSink } from "../common/events.ts";
import { type Logger, type LogLevel, NULL_LOGGER } from "../common/log-file.ts";
import { Redactor } from "../common/redact.ts";
import type { ServerConfig } from "../config/types.ts";
import { HealthTracker } from "./health.ts";

export interface ReportOptions {
  events?: EventSink;
  logger?: Logger;
  /** The server's secrets: every event payload, log line and state message passes through it on the way out. */
  redactor?: Redactor;
}

export class LifecycleReport {
  readonly health: HealthTracker;
  private readonly server: string;
  private readonly maxAttempts: number;
  private readonly redactor: Redactor;
  /** Tool calls' log lines not written yet (see `called`), in order. */
  private callLines: Array<{ level: LogLevel; fields: Record<string, unknown> }> = [];

  constructor(
    config: Pick<ServerConfig, "name" | "enabled" | "retry">,
    private readonly options: ReportOptions,
  ) {
    this.server = config.name;
    this.maxAttempts = config.retry.maxAttempts;
    this.redactor = options.redactor ?? new Redactor();
    this.health = new HealthTracker(config.name, config.enabled ? "not started" : "disabled", this.maxAttempts);
  }

  /** Publishes an event about this server; a listener that throws cannot break the connection. */
  emit(channel: string, payload: Record<string, unknown> = {}): void {
    try {
      this.options.events?.(channel, { serverId: this.server, ...this.redactor.value(payload) });
    } catch {
      // The listener's problem.
    }
  }

  log(level: LogLevel, event: string, fields: Record<string, unknown> = {}): void {
    // Lines stay in the order things happened.
    if (this.callLines.length > 0) this.writeCallLines();
    this.write(level, event, fields);
  }

  private write(level: LogLevel, event: string, fields: Record<string, unknown>): void {
    (this.options.logger ?? NULL_LOGGER).log({ level, event, server: this.server, ...this.redactor.value(fields) });
  }

  /**
   * A tool call's line is redacted and formatted once the call's result is on its way back: on the next turn of the
   * event loop (one for all the calls that ended in this turn), or before any other line of this server.
   */
  private logCall(level: LogLevel, fields: Record<string, unknown>): void {
    this.callLines.push({ level, fields });
    if (this.callLines.length === 1) setImmediate(() => this.writeCallLines());
  }

  private writeCallLines(): void {
    const lines = this.callLines;
    this.callLines = [];
    for (const { level, fields } of lines) this.write(level, "request", fields);
  }

  connecting(attempt: number): void {
    this.emit("mcp.connecting", { attempt, maxAttempts: this.maxAttempts });
    this.health.connecting(attempt);
    this.log("info", "connecting", { attempt });
  }

  /** A connect attempt failed with `error` (already worded); `signInNeeded`: it waits for a sign-in nobody could do. */
  connectFailed(attempt: number, started: number, error: BridgeError, signInNeeded: boolean): void {
    const message = this.redactor.text(error.message);
    if (signInNeeded) this.health.needsSignIn(message);
    else this.health.failed(message);
    this.log("warn", "connect.failed", { attempt, durationMs: Date.now() - started, kind: error.kind, error: error.message });
  }

  /** A local server's process started (pid) for the session being opened. */
  spawned(pid: number, command: string | undefined): void {
    this.emit("mcp.local.spawned", { pid, command });
    this.log("info", "spawned", { pid });
  }

  connected(attempt: number, started: number, transport: string | undefined, toolCount: number): void {
    const now = Date.now();
    const downtime = this.health.connected(now, now - started, toolCount);
    this.log("info", "connected", { attempt, transport, durationMs: now - started, toolCount });
    this.emit("mcp.connected", { toolCount, connectTime: now - started });
    if (downtime !== undefined) this.emit("mcp.health.recovered", { downtime });
  }

  /** The connection went away: on purpose (`clean`), or it was lost. */
  disconnected(reason: string, clean: boolean): void {
    this.health.disconnected(Date.now(), this.redactor.text(reason));
    if (!clean) this.log("warn", "disconnected", { reason });
    this.emit("mcp.disconnected", { reason, wasClean: clean });
  }

  /** A local server's process ended without being asked to; `stderr` is its last lines, redacted. */
  crashed(pid: number, reason: string, stderr: string[]): void {
    this.emit("mcp.local.crashed", { pid, reason, stderr });
  }

  /** Reconnect attempt `n` failed; the next comes in `retryIn` ms, or none does (null). */
  retryFailed(n: number, error: unknown, retryIn: number | null): void {
    this.emit("mcp.error", { error: errorMessage(error), retryIn, attempt: n });
  }

  /** No more attempts. `exhausted`: retries ran out (rather than a failure retrying cannot fix); `attempts` were made. */
  gaveUp(status: "disconnected" | "error" | "needs sign-in", reason: string | undefined, exhausted: boolean, attempts: number): void {
    this.health.gaveUp(status, attempts);
    this.log("error", "gave.up", { attempts, error: reason });
    if (exhausted) this.emit("mcp.disconnected", { reason: `gave up after ${attempts} attempts: ${reason}`, wasClean: false });
  }

  stale(lastHeard: number): void {
    this.emit("mcp.health.stale", { lastCommunication: new Date(lastHeard).toISOString() });
    this.log("info", "stale", { idleMs: Date.now() - lastHeard });
  }

  /** A tool call ended, with a result (which the tool may mark as an error) or a thrown error. */
  called(tool: string, started: number, outcome: { result: CallToolResult } | { error: unknown }): void {
    const durationMs = Date.now() - started;
    if ("result" in outcome) {
      const isError = outcome.result.isError === true;
      // A result the tool marks as an error counts against the success rate, though the server itself is fine.
      this.health.call(!isError);
      this.logCall("info", { method: "tools/call", tool, durationMs, ok: true, isError });
    } else {
      this.health.call(false);
      const kind = outcome.error instanceof BridgeError ? outcome.error.kind : "other";
      this.logCall("warn", { method: "tools/call", tool, durationMs, ok: false, kind, error: errorMessage(outcome.error) });
    }
  }

  /** Shutdown: `pid` of a local server that was running, `wasLive`: a connection was open. */
  closed(wasLive: boolean, pid: number | undefined): void {
    if (pid !== undefined) this.emit("mcp.local.shutdown", { pid, graceful: true });
    if (wasLive) this.emit("mcp.disconnected", { reason: "shutdown", wasClean: true });
    this.health.closed(Date.now());
    this.log("info", "closed");
  }
}
