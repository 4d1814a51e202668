/**
 * A request to a server that outlives a lost connection. It runs on the live session; when the connection was lost
 * under it, that session is let go (which starts the reconnect) and the request runs once more on the next live
 * session; when the server wants a new sign-in, it waits for that and runs again; when it first needs the user on a
 * web page (URL elicitation, error -32042), it runs again once the user has been there. Any other failure is the
 * request's own and is thrown at once, worded for the user. Tool calls go through here; so can any other request to a server.
 */
import { UrlElicitationRequiredError } from "@modelcontextprotocol/sdk/types.js";
import { describeError } from "../common/errors.ts";
import type { ClientFeatures } from "./mcp-client.ts";
import type { ServerAuth } from "../oauth/server-auth.ts";
import { callError, type ErrorContext, lostAgainError, reconnectFailedError } from "./error-messages.ts";
import type { LiveSession } from "./live-session.ts";

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
