/**
 * A request to a server that outlives a lost connection. It runs on the live session; when the connection was lost
 * under it, that session is let go (which starts the reconnect) and the request runs once more on the next live
 * session; when the server wants a new sign-in, it waits for that and runs again; when it first needs the user on a
 * web page (URL elicitation, error -32042), it runs again once the user has been there. Any other failure is the
 * request's own and is thrown at once, worded for the user. Tool calls go through here; so can any other request to a server.
 */
import { type Progress, UrlElicitationRequiredError } from "@modelcontextprotocol/client";
import { describeError } from "../common/errors.ts";
import { followSignal } from "../common/follow-signal.ts";
import type { ClientFeatures } from "./mcp-client.ts";
import type { ServerAuth } from "../oauth/server-auth.ts";
import { callError, type ErrorContext, lostAgainError, reconnectFailedError } from "./error-messages.ts";
import type { Redactor } from "../common/redact.ts";
import type { LiveSession, RequestOptions, Run } from "./live-session.ts";

/** What the caller of a request may add: its own signal, and where progress goes. */
export interface CallOptions {
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
}

/** What a request needs from the connection that keeps its server up. */
export interface RecoveryHost {
  /** The live session, once the server is up (starting it or waiting for a reconnect as needed); throws if none comes. */
  ready(what: string, signal: AbortSignal | undefined): Promise<LiveSession>;
  /** The open session right now, if any. */
  current(): LiveSession | undefined;
  /** `session` was lost under a request (`cause` says how): let it go and start reconnecting. */
  lost(session: LiveSession, cause: string): void;
  auth: ServerAuth;
  errorContext(): ErrorContext;
  /** Sends the user to the pages a server needs first; true to run the request again. */
  urlElicitationRequired?: ClientFeatures["urlElicitationRequired"];
}

/** Runs `run` on the server's live session, recovering once from a lost connection or an expired sign-in. */
export async function withRecovery<T>(
  host: RecoveryHost,
  what: string,
  signal: AbortSignal | undefined,
  run: (session: LiveSession) => Promise<T>,
): Promise<T> {
  let session = await host.ready(what, signal);
  try {
    return await run(session);
  } catch (error) {
    if (error instanceof UrlElicitationRequiredError && !signal?.aborted && (await host.urlElicitationRequired?.(error.elicitations))) {
      // Once: a server that asks again after the user was there gets its error through.
      session = host.current() ?? (await host.ready(what, signal));
      try {
        return await run(session);
      } catch (retryError) {
        throw lostAgainError(host.errorContext(), what, lostOrThrow(host, session, what, retryError, signal), retryError);
      }
    }
    if (host.auth.canSignInAfter(error, signal)) {
      // The tokens stopped working and refreshing them did not help: sign in again (if someone can), then retry.
      await host.auth.completeSignIn(signal);
      return await run(host.current() ?? (await host.ready(what, signal)));
    }
    const cause = lostOrThrow(host, session, what, error, signal);
    try {
      session = await host.ready(what, signal);
    } catch (reconnectError) {
      throw reconnectFailedError(host.errorContext(), what, cause, reconnectError);
    }
    try {
      return await run(session);
    } catch (retryError) {
      throw lostAgainError(host.errorContext(), what, lostOrThrow(host, session, what, retryError, signal), retryError);
    }
  }
}

/**
 * A request on `session` failed: throws its error (worded) unless the connection was lost; if it was, lets the
 * session go and returns why it was lost.
 */
function lostOrThrow(host: RecoveryHost, session: LiveSession, what: string, error: unknown, signal: AbortSignal | undefined): string {
  const kind = signal?.aborted ? "cancelled" : session.classify(error);
  if (kind !== "transport") throw callError(host.errorContext(), kind, what, error);
  const cause = session.endReason ?? describeError(error);
  host.lost(session, cause);
  return cause;
}

/**
 * Any request to a server (`what` names it in errors), as a tool call goes: on the live session (after a lazy start or
 * a reconnect under way), within `timeout` (reset by progress), recovered as {@link withRecovery} does; its progress,
 * result and error redacted.
 */
export async function serverRequest<T>(
  host: RecoveryHost,
  redactor: Redactor,
  timeout: number,
  what: string,
  run: Run<T>,
  options: CallOptions,
): Promise<T> {
  // pi gives the parallel tool calls of one turn one signal, and the SDK adds an abort listener to a request's signal
  // (and never takes it off): a signal of the call's own, which follows the caller's, keeps hundreds of calls from
  // piling listeners onto the one signal (MaxListenersExceededWarning).
  const own = options.signal && followSignal(options.signal);
  const signal = own?.signal;
  const { onProgress } = options;
  const request: RequestOptions = { timeout, signal, onProgress: onProgress && ((progress) => onProgress(redactor.result(progress))) };
  try {
    const result = await withRecovery(host, what, signal, (session) => session.request(run, request));
    // The model sees no secret of this server's config and no terminal control sequence.
    return redactor.result(result);
  } catch (error) {
    // Most messages were worded with the redaction already; one that came through as it was gets it here.
    if (error instanceof Error) error.message = redactor.text(error.message);
    throw error;
  } finally {
    own?.release();
  }
}
