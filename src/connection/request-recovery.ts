/**
 * The parts of a request to a server that do not depend on which session runs it: the caller's signal followed by
 * one of the request's own, the request timeout, its progress redacted, telling a lost connection from the request's
 * own failure, and whether a request the connection was lost under may be sent again (`sendAgain`). The connection
 * (./server-connection.ts, `withSession`) runs it on the live session, redacts what comes back and acts on the rest.
 */
import type { Progress, ToolAnnotations } from "@modelcontextprotocol/client";
import { describeError } from "../common/errors.ts";
import { followSignal } from "../common/follow-signal.ts";
import type { Redactor } from "../common/redact.ts";
import { matchesToolPattern } from "../common/tool-pattern.ts";
import { callError, type ErrorContext } from "./error-messages.ts";
import type { Delivery } from "./delivery.ts";
import type { LiveSession, OnProgress, RequestOptions } from "./live-session.ts";

/** What the caller of a request may add: its own signal, and where progress goes. */
export interface CallOptions {
  signal?: AbortSignal;
  onProgress?: OnProgress;
}

/** The options a request to a server is sent with: within `timeout` (reset by progress), its progress redacted. */
export function requestOptions(redactor: Redactor, timeout: number, options: CallOptions): RequestOptions {
  const { signal, onProgress } = options;
  const redacted = onProgress && ((progress: Progress | string) => onProgress(redactor.result(progress)));
  return { timeout, signal: signal && followSignal(signal), onProgress: redacted };
}

/** Whether tool `name` may run twice: its server marks it read-only or idempotent, or the server's `resendAfterDrop` names it. */
export function safeToRepeat(name: string, hints: ToolAnnotations | undefined, patterns: readonly string[]): boolean {
  const safe = hints?.readOnlyHint === true || hints?.idempotentHint === true;
  return safe || patterns.some((pattern) => matchesToolPattern(pattern, name));
}

/**
 * The one decision on a request the connection was lost under (`error` said so): is it sent again on the next
 * session? One that never reached the transport is, one that never reached the server (no connection was made, or it
 * forgot the session) is, and so is a read (no `repeatable`, which a tool call gives). A tool call the server may have
 * received is only when it is `repeatable`, and never when the server was stopped for a message over a limit while it
 * ran: that message was likely its answer, and would come again.
 */
export function sendAgain(
  delivery: Delivery,
  session: LiveSession,
  error: unknown,
  repeatable?: () => boolean,
): boolean {
  if (!delivery.sent || !repeatable || session.notTaken(error)) return true;
  return session.violation === undefined && repeatable();
}

/** `what` failed on `session`: throws its error (worded) unless the connection was lost; if it was, returns how. */
export function lostCause(
  ctx: ErrorContext,
  session: LiveSession,
  what: string,
  error: unknown,
  signal: AbortSignal | undefined,
): string {
  const kind = signal?.aborted ? "cancelled" : session.classify(error);
  if (kind !== "transport") throw callError(ctx, kind, what, error);
  return session.endReason ?? describeError(error);
}
