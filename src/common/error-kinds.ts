/**
 * Error kinds: what went wrong decides what the bridge does next (auth: tell the user; transport: reconnect once).
 * The SDK's error types and status codes are checked first; message patterns are only a fallback for errors that
 * reach us without a type (wrapped or stringified by a transport). This loads the MCP SDK, so only code that runs
 * once a server connects imports it.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  SseError,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import {
  BridgeError,
  causeChain,
  codeOf,
  ConnectTimeout,
  type ErrorKind,
  errorMessage,
  NEVER_CONNECTED_CODES,
} from "./errors.ts";

/** Node/undici error codes that mean the connection itself is gone, or was never there. */
const TRANSPORT_CODES = new Set([
  ...NEVER_CONNECTED_CODES,
  ...["ECONNRESET", "ECONNABORTED", "EPIPE", "ERR_STREAM_DESTROYED", "ERR_STREAM_WRITE_AFTER_END"],
  ...["UND_ERR_SOCKET", "UND_ERR_CLOSED"],
]);

/** HTTP statuses after which a fresh connection can help: an expired session (404) or a server restarting behind a proxy. */
const TRANSPORT_STATUSES = new Set([404, 502, 503, 504]);

const AUTH_PATTERN =
  /\b(HTTP|status|code)[ :]*40[13]\b|unauthori[sz]ed|forbidden|invalid[_ ]token|authentication (failed|required)/i;
const TRANSPORT_PATTERN =
  /not connected|connection closed|ECONNREFUSED|ECONNRESET|EPIPE|socket hang up|fetch failed|other side closed|terminated|stream (was )?destroyed|write after end/i;

/** The HTTP status an SDK transport error carries, if any. */
export function httpStatusOf(error: unknown): number | undefined {
  if (error instanceof SdkHttpError) return error.status >= 100 ? error.status : undefined;
  if (error instanceof SseError) return typeof error.code === "number" && error.code >= 100 ? error.code : undefined;
  // SSEClientTransport reports POST failures only in its message.
  const match = error instanceof Error ? /\(HTTP (\d{3})\)/.exec(error.message) : null;
  return match ? Number(match[1]) : undefined;
}

/**
 * Whether a refused request says its session is unknown (a server forgot it, as on a restart): 404, as the spec says,
 * or a 400 that names the session, as server-everything and the SDK's example servers answer ("No valid session ID").
 */
export function sessionUnknown(error: unknown): boolean {
  const status = httpStatusOf(error);
  return status === 404 || (status === 400 && /session/i.test(errorMessage(error)));
}

/** Statuses that say who may call or when, not which transport: 401, 403 and 407 (sign-in), 408 and 429 (later). */
const NOT_ABOUT_TRANSPORT = new Set([401, 403, 407, 408, 429]);

/**
 * Whether a refused Streamable HTTP POST may come from a server that speaks only the 2024-11-05 HTTP+SSE transport,
 * so that transport is worth a try (as the spec's backwards compatibility says: a 4xx). Most answer 404 or 405; some
 * route a POST to their message handler, which asks for its session (Playwright's: 400 "Missing sessionId").
 */
export function mayBeLegacySse(status: number | undefined): boolean {
  return status !== undefined && status >= 400 && status < 500 && !NOT_ABOUT_TRANSPORT.has(status);
}

/**
 * Whether an error calls for a new connection (`transport`), for new credentials (`auth`), or neither (`other`; a
 * bridge error keeps its own kind). Timeouts and cancellation are told apart by {@link kindOf}.
 */
export function classifyError(error: unknown): ErrorKind {
  if (error instanceof BridgeError) return error.kind;
  if (error instanceof UnauthorizedError) return "auth";
  const status = httpStatusOf(error);
  if (status === 401 || status === 403) return "auth";
  if (status !== undefined) return TRANSPORT_STATUSES.has(status) ? "transport" : "other";
  if (closedDuringProbe(error)) return "transport";
  if (error instanceof SdkError) {
    if (
      error.code === SdkErrorCode.ConnectionClosed ||
      error.code === SdkErrorCode.NotConnected ||
      error.code === SdkErrorCode.SendFailed
    )
      return "transport";
    // A failed revision probe wraps what went wrong (the connection refused, an HTTP status): that decides.
    if (error.code === SdkErrorCode.EraNegotiationFailed && error.cause !== undefined)
      return classifyError(error.cause);
    // Anything else is the SDK's own verdict on what a live server sent (or our own timeout).
    return "other";
  }
  // An error response from a live server: a new connection would not change it.
  if (error instanceof ProtocolError) return "other";
  if (causeChain(error).some((link) => TRANSPORT_CODES.has(codeOf(link) ?? ""))) return "transport";
  const message = errorMessage(error);
  if (AUTH_PATTERN.test(message)) return "auth";
  if (error instanceof TypeError && /fetch failed/i.test(message)) return "transport";
  if (TRANSPORT_PATTERN.test(message)) return "transport";
  return "other";
}

/**
 * The connection closed while the SDK asked which revision the server speaks (`server/discover`): the server is gone,
 * or it is one that exits on a method it does not know. The SDK says which only in its message.
 */
export function closedDuringProbe(error: unknown): boolean {
  return (
    error instanceof SdkError &&
    error.code === SdkErrorCode.EraNegotiationFailed &&
    /connection closed/i.test(error.message)
  );
}

/**
 * The error is about what a live server answered (an error response, or a result the SDK found invalid): it was there
 * to answer, so a local server's process that ended afterwards was ended by the bridge, and says nothing of the cause.
 */
export function serverAnswered(error: unknown): boolean {
  return causeChain(error).some(
    (link) =>
      link instanceof ProtocolError ||
      (link instanceof SdkError && link.code === SdkErrorCode.InvalidResult) ||
      // The SDK's verdict on the revision the server answered with (or did not offer), said only in its words.
      /^(Server's protocol version is not supported|Version negotiation failed: the server did not offer)/.test(
        (link as Error)?.message ?? "",
      ),
  );
}

/** The server answered that it does not know the method (-32601): it does not offer what was asked for. */
export function isMethodNotFound(error: unknown): boolean {
  return causeChain(error).some(
    (link) => link instanceof ProtocolError && link.code === ProtocolErrorCode.MethodNotFound,
  );
}

/**
 * The revision probe got no usable answer from a remote server that is there to ask: silence within the time it was
 * given, a reply that is no answer (an empty or non-JSON body, a stream closed without one), or a server error. Such a
 * server may still answer `initialize`. An outage (refused, reset), a refused credential, or the SDK's own verdict on
 * what the server said (a pinned revision it does not offer) is an answer, not this.
 */
export function probeInconclusive(error: unknown): boolean {
  if (!(error instanceof SdkError)) return false;
  if (error.code === SdkErrorCode.RequestTimeout) return /negotiation probe/i.test(error.message);
  if (error.code !== SdkErrorCode.EraNegotiationFailed) return false;
  if (error instanceof SdkHttpError) return error.status !== 401 && error.status !== 403;
  const cause = error.cause;
  if (cause === undefined) return false;
  if (cause instanceof Error && /closed during the version negotiation probe/i.test(cause.message)) return true;
  const kind = classifyError(cause);
  return kind !== "transport" && kind !== "auth";
}

export function isTimeoutError(error: unknown): boolean {
  return (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) || error instanceof ConnectTimeout;
}

/** The kind of a failed request: cancelled (its signal fired), timed out, or as {@link classifyError} says. */
export function kindOf(error: unknown, signal?: AbortSignal): ErrorKind {
  if (signal?.aborted) return "cancelled";
  if (isTimeoutError(error)) return "timeout";
  return classifyError(error);
}
