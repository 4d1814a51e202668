/**
 * The health model of one server: its state, the retry schedule, and session metrics. Pure: the clock is
 * passed in, so the connection that owns a `HealthTracker` decides when things happen.
 */
import { plural } from "../common/text.ts";
import type { RetryPolicy } from "../config/types.ts";

/**
 * `not started`: a lazy server nothing has needed yet. `disabled`: switched off in config. `needs sign-in`: an OAuth
 * server that wants the user to sign in, which nobody could do yet (no UI at startup, print mode).
 */
export type HealthStatus = "disabled" | "not started" | "connecting" | "connected" | "disconnected" | "error" | "needs sign-in";

export interface ServerState {
  serverId: string;
  status: HealthStatus;
  /** Epoch ms of the last answer or notification from the server. */
  lastSuccessfulCommunication?: number;
  lastError?: string;
  /** Failures over the whole session. */
  errorCount: number;
  /** Failures since the last success; reset on connect. */
  consecutiveFailures: number;
  toolCount: number;
  /** How long the last successful connect took, in ms. */
  connectTime?: number;
  /** Epoch ms of the last successful connect: a new value means a new session (what the old one held is gone). */
  connectedAt?: number;
  /** Epoch ms of the next reconnect or restart attempt, while one is scheduled. */
  nextRetryTime?: number;
  /** The attempt under way or scheduled (1-based); 0 when none is. */
  retryAttempt: number;
  /** Attempts the current retry policy allows. */
  maxAttempts: number;
  /** True once retries ran out (or the failure cannot be fixed by retrying): calls fail at once. */
  gaveUp: boolean;
}

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
}

/** Tracks one server's state transitions and what they add up to over the session. */
export class HealthTracker {
  readonly state: ServerState;
  private upSince?: number;
  private downSince?: number;
  private uptime = 0;
  private downtime = 0;
  private reconnectTimes: number[] = [];
  private calls = 0;
  private callsOk = 0;

  constructor(serverId: string, status: HealthStatus, maxAttempts: number) {
    this.state = { serverId, status, errorCount: 0, consecutiveFailures: 0, toolCount: 0, retryAttempt: 0, maxAttempts, gaveUp: false };
  }

  get status(): HealthStatus {
    return this.state.status;
  }

  connecting(attempt: number): void {
    this.state.status = "connecting";
    this.state.retryAttempt = attempt;
    this.state.nextRetryTime = undefined;
  }

  /** A connect succeeded. Returns the downtime it ended, if the server had been up before (a recovery). */
  connected(now: number, connectTime: number, toolCount: number): number | undefined {
    const recoveredFrom = this.downSince;
    if (recoveredFrom !== undefined) {
      this.downtime += now - recoveredFrom;
      this.reconnectTimes.push(now - recoveredFrom);
    }
    this.downSince = undefined;
    this.upSince = now;
    Object.assign(this.state, {
      status: "connected",
      lastSuccessfulCommunication: now,
      lastError: undefined,
      consecutiveFailures: 0,
      toolCount,
      connectTime,
      connectedAt: now,
      nextRetryTime: undefined,
      retryAttempt: 0,
      gaveUp: false,
    } satisfies Partial<ServerState>);
    return recoveredFrom === undefined ? undefined : now - recoveredFrom;
  }

  /** The connection was lost (or closed). Downtime counts from here until the next `connected`. */
  disconnected(now: number, reason?: string): void {
    if (this.upSince !== undefined) this.uptime += now - this.upSince;
    this.upSince = undefined;
    this.downSince ??= now;
    this.state.status = "disconnected";
    if (reason !== undefined) this.state.lastError = reason;
  }

  /** An attempt failed; `retryAt` is when the next one runs, if one will. */
  failed(error: string, retryAt?: number): void {
    this.state.status = "error";
    this.state.lastError = error;
    this.state.errorCount++;
    this.state.consecutiveFailures++;
    this.state.nextRetryTime = retryAt;
  }

  /** An attempt failed because the server wants a sign-in nobody could do yet; the next connect may sign in. */
  needsSignIn(message: string): void {
    this.failed(message);
    this.state.status = "needs sign-in";
  }

  /** No more attempts: the server stays down until something (a reload, `/mcp reconnect`) starts it again. */
  gaveUp(status: "disconnected" | "error" | "needs sign-in", attempts?: number): void {
    this.state.status = status;
    if (attempts !== undefined) this.state.retryAttempt = attempts;
    this.state.gaveUp = true;
    this.state.nextRetryTime = undefined;
  }

  scheduled(attempt: number, at: number): void {
    this.state.retryAttempt = attempt;
    this.state.nextRetryTime = at;
  }

  /** The server answered something: it is alive as of `now`. */
  heard(now: number): void {
    this.state.lastSuccessfulCommunication = now;
  }

  toolCount(count: number): void {
    this.state.toolCount = count;
  }

  call(ok: boolean): void {
    this.calls++;
    if (ok) this.callsOk++;
  }

  /** Shutdown: the accounting stops, and a server that was started is now disconnected. */
  closed(now: number): void {
    if (this.upSince !== undefined) this.uptime += now - this.upSince;
    if (this.downSince !== undefined) this.downtime += now - this.downSince;
    this.upSince = undefined;
    this.downSince = undefined;
    if (this.state.status !== "disabled" && this.state.status !== "not started") this.state.status = "disconnected";
    this.state.nextRetryTime = undefined;
  }

  metrics(now: number): ServerMetrics {
    const uptime = this.uptime + (this.upSince !== undefined ? now - this.upSince : 0);
    const downtime = this.downtime + (this.downSince !== undefined ? now - this.downSince : 0);
    const n = this.reconnectTimes.length;
    return {
      serverId: this.state.serverId,
      status: this.state.status,
      uptimeMs: uptime,
      downtimeMs: downtime,
      reconnections: n,
      averageReconnectMs: n ? Math.round(this.reconnectTimes.reduce((a, b) => a + b, 0) / n) : null,
      toolCalls: this.calls,
      toolCallsSucceeded: this.callsOk,
      successRate: this.calls ? this.callsOk / this.calls : null,
    };
  }
}

/** What a call to a server that stopped retrying is told. */
export function gaveUpMessage(serverId: string, attempts: number, lastError: string | undefined, local: boolean): string {
  const what = local ? `was not restarted again after ${plural(attempts, "restart attempt")}` : `is disconnected after ${attempts} retry attempts`;
  return `MCP server '${serverId}' ${what}. Last error: ${lastError ?? "unknown"}.`;
}

/** "retry 5/10 in 8s" for the dashboard and errors. */
export function retryDetail(state: ServerState, now: number): string | undefined {
  if (state.nextRetryTime === undefined) return undefined;
  const inSeconds = Math.max(0, Math.ceil((state.nextRetryTime - now) / 1000));
  return `retry ${state.retryAttempt}/${state.maxAttempts} in ${inSeconds}s`;
}
