/**
 * What each step in a server's life tells the rest of pi: the metrics (./health.ts) change, a line goes to the bridge's
 * log, and an event to pi's bus (`mcp.connecting`, `mcp.connected`, …, documented in docs/events-and-logs.md) — all
 * three in one call, so they never disagree. The connection's state (./connection-state.ts) decides; this only records it.
 */
import type { CallToolResult } from "@modelcontextprotocol/client";
import { BridgeError, errorMessage } from "../common/errors.ts";
import type { EventSink } from "../common/events.ts";
import { type Logger, type LogLevel, NULL_LOGGER } from "../common/log-file.ts";
import type { Redactor } from "../common/redact.ts";
import type { ServerConfig } from "../config/types.ts";
import { type ConnectionEvent, type ConnectionState, gaveUpDetail } from "./connection-state.ts";
import { type HealthStatus, HealthTracker } from "./health.ts";
import type { ProcessEnding } from "./local/stdio-options.ts";

export interface ReportOptions {
  events?: EventSink;
  logger?: Logger;
  /** The server's secrets: every event payload, log line and state message passes through it on the way out. */
  redactor: Redactor;
}

export class LifecycleReport {
  readonly health: HealthTracker;
  /** Tool calls' log lines not written yet (see `called`), in order. */
  private callLines: Array<{ level: LogLevel; fields: Record<string, unknown> }> = [];

  constructor(
    private readonly config: Pick<ServerConfig, "name" | "retry">,
    private readonly options: ReportOptions,
    status: () => HealthStatus,
  ) {
    this.health = new HealthTracker(config.name, status);
  }

  /** Publishes an event about this server; a listener that throws cannot break the connection. */
  emit(channel: string, payload: Record<string, unknown> = {}): void {
    try {
      this.options.events?.(channel, { serverId: this.config.name, ...this.options.redactor.value(payload) });
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
    const { logger = NULL_LOGGER, redactor } = this.options;
    logger.log({ level, event, server: this.config.name, ...redactor.value(fields) });
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

  /** A local server's process started (pid) for the session being opened. */
  spawned(pid: number, command: string | undefined): void {
    this.emit("mcp.local.spawned", { pid, command });
    this.log("info", "spawned", { pid });
  }

  /** A local server's process was stopped: what ended it (`exited`: it was gone before it was asked), and when. */
  shutdown(pid: number, ending: ProcessEnding | undefined): void {
    const { by, durationMs } = ending ?? { by: "exited", durationMs: 0 };
    const graceful = by === "stdin" || by === "SIGTERM";
    this.emit("mcp.local.shutdown", { pid, graceful, by, durationMs });
    this.log(graceful ? "info" : "warn", "shutdown", { pid, by, durationMs });
  }

  /** A local server's process ended without being asked to; `stderr` is its last lines, redacted. */
  crashed(pid: number, reason: string, stderr: string[]): void {
    this.emit("mcp.local.crashed", { pid, reason, stderr });
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
      return this.logCall("info", { method: "tools/call", tool, durationMs, ok: true, isError });
    }
    this.health.call(false);
    const { error } = outcome;
    const kind = error instanceof BridgeError ? error.kind : "other";
    this.logCall("warn", { method: "tools/call", tool, durationMs, ok: false, kind, error: errorMessage(error) });
  }

  /** What a change of state from `before` tells the log, the bus and the metrics: the connection's one writer of its state calls this. */
  record(event: ConnectionEvent, before: ConnectionState): void {
    const now = Date.now();
    const attempt = before.kind === "connecting" ? before.attempt : undefined;
    switch (event.type) {
      case "attempt":
        this.emit("mcp.connecting", { attempt: event.attempt, maxAttempts: this.config.retry.maxAttempts });
        return this.log("info", "connecting", { attempt: event.attempt });
      case "failed": {
        const { error, durationMs, kind } = event;
        // Published by the failure itself, whichever attempt it was, before anything can happen after it.
        this.emit("mcp.error", { error, retryIn: event.retryIn, attempt });
        return this.log("warn", "connect.failed", { attempt, durationMs, kind, error });
      }
      case "connected": {
        const { durationMs, toolCount, transport } = event;
        const downtime = this.health.connected(now);
        this.log("info", "connected", { attempt, transport, durationMs, toolCount });
        this.emit("mcp.connected", { toolCount, connectTime: durationMs });
        if (downtime !== undefined) this.emit("mcp.health.recovered", { downtime });
        return;
      }
      case "dropped":
      case "stopped": {
        if (before.kind !== "live") return;
        const clean = event.type === "stopped";
        this.health.disconnected(now);
        if (!clean) this.log("warn", "disconnected", { reason: event.reason });
        return this.emit("mcp.disconnected", { reason: event.reason, wasClean: clean });
      }
      case "gaveUp": {
        const { attempts, reason } = event;
        this.log("error", "gave.up", { attempts, error: reason });
        // The spec's error → disconnected: said however it gave up (retries ran out, or retrying cannot help).
        const why = before.kind === "needsSignIn" ? "needs sign-in" : gaveUpDetail(event);
        return this.emit("mcp.disconnected", { reason: `${why}: ${reason}`, wasClean: false });
      }
      case "closed":
        if (before.kind === "live") this.emit("mcp.disconnected", { reason: "shutdown", wasClean: true });
        this.health.closed(now);
        return this.log("info", "closed");
    }
  }
}
