/**
 * What one server's connection is doing, as one value, and the only rule for how it changes. Pure: the connection
 * (./server-connection.ts) feeds it what happened and acts on the state it gets back; what `/mcp`, the footer and
 * the dashboard show is read off the state here too, so it cannot disagree with what the connection does.
 *
 *   idle ─attempt→ connecting ─connected→ live ─dropped→ retrying ─scheduled→ retrying ─attempt→ connecting …
 *   connecting ─failed→ retrying | needsSignIn;   retrying ─gaveUp→ gaveUp;   live ─dropped, no retries→ gaveUp
 *   One attempt at a time: none starts while one is under way, and only that one (its `id`) connects or fails;
 *   an attempt that was stopped or closed under it keeps nothing.
 *   any but idle/disabled/closed ─stopped→ stopped (`/mcp reconnect`, `/mcp logout` ─signedOut→ gaveUp)
 *   stopped | gaveUp | needsSignIn ─attempt→ connecting (`/mcp reconnect`; a call, once someone can sign in)
 *   any ─closed→ closed (final; `/mcp disable` closes it as disabled at once, whatever it was doing)
 *
 * `wasUp`: the server was connected earlier in this session, so a call waits for its reconnect instead of failing.
 */
import { plural } from "../common/text.ts";
import type { HealthStatus } from "./health.ts";

export type ConnectionState<S = unknown> =
  /** A lazy server nothing has needed yet. */
  | { kind: "idle" }
  /** Switched off in its config. */
  | { kind: "disabled" }
  /** An attempt under way: 0 the first of a run (startup, first use, `/mcp reconnect`), then the schedule's. */
  | { kind: "connecting"; attempt: number; id: symbol; error?: string; wasUp: boolean }
  | { kind: "live"; session: S; since: number }
  /** Down, with the schedule on: attempt `attempt` is due at `at` (unset until it is scheduled). */
  | { kind: "retrying"; attempt: number; at?: number; error: string; dropped: boolean; wasUp: boolean }
  /** Waits for an OAuth sign-in nobody could do yet; the next call or `/mcp auth` signs in. */
  | { kind: "needsSignIn"; error: string; wasUp: boolean }
  /** No attempt left: `exhausted` when retries ran out (or none were allowed after a drop) rather than being useless. */
  | { kind: "gaveUp"; error?: string; attempts: number; exhausted: boolean; wasUp: boolean }
  /** Ended on purpose (`/mcp reconnect`, `/mcp logout`) and not started again yet. */
  | { kind: "stopped"; reason: string; wasUp: boolean }
  | { kind: "closed"; started: boolean; disabled: boolean; error?: string };

type Connecting<S> = Extract<ConnectionState<S>, { kind: "connecting" }>;

/** What happened, with what the report says about it (./lifecycle-report.ts); messages are redacted already. */
export type ConnectionEvent<S = unknown> =
  /** `id` names the attempt: its `connected` or `failed` counts only while it is the attempt under way. */
  | { type: "attempt"; attempt: number; id: symbol }
  | { type: "connected"; id: symbol; session: S; at: number; durationMs: number; transport?: string; toolCount: number }
  /** `retryIn`: the wait before the next attempt, null when none follows (the schedule's own rule, asked at the failure). */
  | {
      type: "failed";
      id: symbol;
      error: string;
      kind: string;
      durationMs: number;
      signIn: boolean;
      retryIn: number | null;
    }
  | { type: "scheduled"; attempt: number; at: number }
  /** The live session `session` was lost; `retry`: the schedule starts (false: `reconnect: false`). */
  | { type: "dropped"; session: S; reason: string; retry: boolean }
  /** `exhausted`: retries ran out, rather than stopping because retrying cannot help. */
  | { type: "gaveUp"; reason?: string; attempts: number; exhausted: boolean }
  | { type: "stopped"; reason: string }
  | { type: "signedOut"; message: string }
  /** `disabled`: `/mcp disable`, shown as such from this moment on. */
  | { type: "closed"; disabled?: boolean };

/** The next state after `event`; the same object when the event does not apply (a stale session's drop, anything after close). */
export function transition<S>(state: ConnectionState<S>, event: ConnectionEvent<S>): ConnectionState<S> {
  const wasUp = "wasUp" in state ? state.wasUp : state.kind === "live";
  const error = errorOf(state);
  if (state.kind === "closed")
    return event.type === "closed" && event.disabled && !state.disabled ? { ...state, disabled: true } : state;
  switch (event.type) {
    case "attempt":
      if (state.kind === "live" || state.kind === "connecting") return state;
      return { kind: "connecting", attempt: event.attempt, id: event.id, error, wasUp };
    case "connected":
      return ownsAttempt(state, event.id) ? { kind: "live", session: event.session, since: event.at } : state;
    case "failed":
      if (!ownsAttempt(state, event.id)) return state;
      if (event.signIn) return { kind: "needsSignIn", error: event.error, wasUp };
      return { kind: "retrying", attempt: state.attempt, error: event.error, dropped: false, wasUp };
    case "scheduled":
      return state.kind === "retrying" ? { ...state, attempt: event.attempt, at: event.at } : state;
    case "dropped":
      if (state.kind !== "live" || state.session !== event.session) return state;
      if (!event.retry) return { kind: "gaveUp", error: event.reason, attempts: 0, exhausted: true, wasUp: true };
      return { kind: "retrying", attempt: 0, error: event.reason, dropped: true, wasUp: true };
    case "gaveUp":
      // One waiting for a sign-in keeps waiting (as a copy: the giving up is still recorded).
      if (state.kind === "needsSignIn") return { ...state };
      if (state.kind !== "retrying") return state;
      return { kind: "gaveUp", error, attempts: event.attempts, exhausted: event.exhausted, wasUp };
    case "stopped":
      if (state.kind === "idle" || state.kind === "disabled") return state;
      return { kind: "stopped", reason: event.reason, wasUp };
    case "signedOut":
      // A server disabled in its config stays so: a sign-in is not what it waits for.
      if (state.kind === "disabled") return state;
      return { kind: "gaveUp", error: event.message, attempts: 0, exhausted: false, wasUp };
    case "closed": {
      const started = state.kind !== "idle" && state.kind !== "disabled";
      return { kind: "closed", started, disabled: state.kind === "disabled" || event.disabled === true, error };
    }
  }
}

/** Whether attempt `id` is the one under way: one stopped, closed or started afresh under it keeps nothing. */
export function ownsAttempt<S>(state: ConnectionState<S>, id: symbol): state is Connecting<S> {
  return state.kind === "connecting" && state.id === id;
}

/** The session calls can use now, if any. */
export function liveSession<S>(state: ConnectionState<S>): S | undefined {
  return state.kind === "live" ? state.session : undefined;
}

/** The retry schedule owns the connection now: an attempt of its own under way, or the wait before one. */
export function inSchedule(state: ConnectionState): boolean {
  return state.kind === "retrying" || (state.kind === "connecting" && state.attempt > 0);
}

/** The status word `/mcp`, the footer, events and metrics show. */
export function statusOf(state: ConnectionState): HealthStatus {
  if (state.kind === "idle") return "not started";
  if (state.kind === "live") return "connected";
  if (state.kind === "retrying") return state.dropped ? "disconnected" : "error";
  if (state.kind === "needsSignIn") return "needs sign-in";
  if (state.kind === "gaveUp") return state.exhausted ? "disconnected" : "error";
  if (state.kind === "stopped") return "disconnected";
  if (state.kind === "closed") return state.disabled ? "disabled" : state.started ? "disconnected" : "not started";
  return state.kind;
}

/** Why the server is not connected, as last heard: the failure, the drop, or why it was stopped. */
export function errorOf(state: ConnectionState): string | undefined {
  return state.kind === "stopped" ? state.reason : "error" in state ? state.error : undefined;
}

/** How a server was given up: its retries ran out, or (a failure no restart fixes) it was not retried. */
export function gaveUpDetail({ attempts, exhausted }: { attempts: number; exhausted: boolean }): string {
  return exhausted && attempts > 0 ? `gave up after ${plural(attempts, "attempt")}` : "not retried";
}

/** What `/mcp` says a server is doing about being down, or how far a connect has got. */
export function stateDetail(state: ConnectionState, maxAttempts: number, now: number): string | undefined {
  if (state.kind === "connecting")
    return state.attempt > 0 ? `connecting (attempt ${state.attempt}/${maxAttempts})` : "connecting";
  if (state.kind === "needsSignIn") return "needs sign-in";
  if (state.kind === "gaveUp") return gaveUpDetail(state);
  if (state.kind !== "retrying" || state.at === undefined) return undefined;
  return `retry ${state.attempt}/${maxAttempts} in ${Math.max(0, Math.ceil((state.at - now) / 1000))}s`;
}
