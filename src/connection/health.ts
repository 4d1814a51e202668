/**
 * One server's health figures: the retry backoff and the session metrics. Pure: the clock is passed in, so the
 * connection that owns a `HealthTracker` decides when things happen. Its state is ./connection-state.ts.
 */
import { plural } from "../common/text.ts";
import type { RetryPolicy } from "../config/types.ts";

/**
 * `not started`: a lazy server nothing has needed yet. `disabled`: switched off in config. `needs sign-in`: an OAuth
 * server that wants the user to sign in, which nobody could do yet (no UI at startup, print mode).
 */
export type HealthStatus =
  "disabled" | "not started" | "connecting" | "connected" | "disconnected" | "error" | "needs sign-in";

/** Delay before retry `attempt` (0-based): `min(2^attempt * initial, max)`. */
export function backoffDelay(attempt: number, policy: Pick<RetryPolicy, "initialDelayMs" | "maxDelayMs">): number {
  // 2^attempt overflows to Infinity long before it matters; min() still yields the cap.
  return Math.min(2 ** Math.max(0, attempt) * policy.initialDelayMs, policy.maxDelayMs);
}

/** The schedule a policy produces, for docs and tests. */
export function backoffSchedule(policy: RetryPolicy): number[] {
  return Array.from({ length: policy.maxAttempts }, (_, i) => backoffDelay(i, policy));
}

export interface ServerMetrics {
  serverId: string;
  status: HealthStatus;
  uptimeMs: number;
  downtimeMs: number;
  reconnections: number;
  averageReconnectMs: number | null;
  toolCalls: number;
  toolCallsSucceeded: number;
  /** Succeeded / total, or null before the first call. */
  successRate: number | null;
  /** Log and progress notifications left out of floods (./notification-bound.ts). */
  notificationsDropped: number;
}

/** What one server's sessions add up to over the pi session; its status is read off the connection's state. */
export class HealthTracker {
  /** Epoch ms of the last answer or notification from the server. */
  lastHeard?: number;
  private upSince?: number;
  private downSince?: number;
  private uptime = 0;
  private downtime = 0;
  private reconnectTimes: number[] = [];
  private calls = 0;
  private callsOk = 0;
  private dropped = 0;

  constructor(
    private readonly serverId: string,
    private readonly status: () => HealthStatus,
  ) {}

  /** A connect succeeded. Returns the downtime it ended, if the server had been up before (a recovery). */
  connected(now: number): number | undefined {
    const recoveredFrom = this.downSince;
    this.downSince = undefined;
    this.upSince = this.lastHeard = now;
    if (recoveredFrom === undefined) return undefined;
    this.downtime += now - recoveredFrom;
    this.reconnectTimes.push(now - recoveredFrom);
    return now - recoveredFrom;
  }

  /** The connection was lost (or closed). Downtime counts from here until the next `connected`. */
  disconnected(now: number): void {
    if (this.upSince !== undefined) this.uptime += now - this.upSince;
    this.upSince = undefined;
    this.downSince ??= now;
  }

  /** The server answered something: it is alive as of `now`. */
  heard(now: number): void {
    this.lastHeard = now;
  }

  call(ok: boolean): void {
    this.calls++;
    if (ok) this.callsOk++;
  }

  notificationDropped(): void {
    this.dropped++;
  }

  /** Shutdown: the accounting stops. */
  closed(now: number): void {
    if (this.upSince !== undefined) this.uptime += now - this.upSince;
    if (this.downSince !== undefined) this.downtime += now - this.downSince;
    this.upSince = this.downSince = undefined;
  }

  metrics(now: number): ServerMetrics {
    const n = this.reconnectTimes.length;
    return {
      serverId: this.serverId,
      status: this.status(),
      uptimeMs: this.uptime + (this.upSince !== undefined ? now - this.upSince : 0),
      downtimeMs: this.downtime + (this.downSince !== undefined ? now - this.downSince : 0),
      reconnections: n,
      averageReconnectMs: n ? Math.round(this.reconnectTimes.reduce((a, b) => a + b, 0) / n) : null,
      toolCalls: this.calls,
      toolCallsSucceeded: this.callsOk,
      successRate: this.calls ? this.callsOk / this.calls : null,
      notificationsDropped: this.dropped,
    };
  }
}

/** What a call to a server that stopped retrying is told. */
export function gaveUpMessage(
  serverId: string,
  attempts: number,
  lastError: string | undefined,
  local: boolean,
): string {
  // No attempt at all: retrying was off for it (`restartOnCrash: false`, a retry budget of 0).
  const what = local
    ? `was not restarted${attempts > 0 ? ` again after ${plural(attempts, "restart attempt")}` : ""}`
    : `is disconnected${attempts > 0 ? ` after ${plural(attempts, "retry attempt")}` : " and was not retried"}`;
  return `MCP server '${serverId}' ${what}. Last error: ${lastError ?? "unknown"}.`;
}
