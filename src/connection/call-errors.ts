/**
 * What a tool call is told when its server's connection fails it: lost during the call, still reconnecting, not
 * connected, cancelled; and the note a call gets while it waits for its server. Pure, as ./error-messages.ts is.
 */
import { BridgeError, errorMessage } from "../common/errors.ts";
import { seconds, withoutServerName } from "../common/text.ts";
import { describeSource } from "../config/types.ts";
import { type ConnectionState, errorOf, inSchedule } from "./connection-state.ts";
import { type ErrorContext, told } from "./error-messages.ts";
import { gaveUpMessage } from "./health.ts";

/** A call lost its connection, and the reconnect it waited for failed. */
export function reconnectFailedError(ctx: ErrorContext, toolName: string, cause: string, error: unknown): BridgeError {
  const { name } = ctx.config;
  const message = `MCP server '${name}' lost its connection during '${toolName}' (${cause}) and reconnecting failed: ${errorMessage(error)}`;
  return new BridgeError("transport", name, told(ctx, message), { cause: error });
}

/** A call lost its connection, was retried once after the reconnect, and lost it again. */
export function lostAgainError(ctx: ErrorContext, toolName: string, cause: string, error: unknown): BridgeError {
  const { name } = ctx.config;
  const message = `MCP server '${name}' lost its connection during '${toolName}' again after reconnecting (${cause}); not retrying.${ctx.stderr()}`;
  return new BridgeError("transport", name, told(ctx, message), { cause: error });
}

/**
 * A tool call the server may have received lost its connection, and was not sent again (see `sendAgain` in
 * ./request-recovery.ts): it may have run, so the model must not take it as failed, nor as done.
 */
export function mayHaveRunError(
  ctx: ErrorContext,
  toolName: string,
  cause: string,
  error: unknown,
  overLimit: boolean,
): BridgeError {
  const { name, source } = ctx.config;
  const why = overLimit
    ? ", since the message over the limit was likely its answer and would come again"
    : `, so that it cannot run twice. To have calls of '${toolName}' sent again after a dropped connection (only for a tool that is safe to run twice), add "${toolName}" to "resendAfterDrop" of server "${name}" in ${describeSource(source)}`;
  const message = `The connection to MCP server '${name}' dropped during the call of tool '${toolName}' (${cause}). The call may or may not have run on the server: check before calling it again. The bridge did not send it again${why}.`;
  return new BridgeError("transport", name, ctx.redact(message), { cause: error });
}

/** A tool call whose server the bridge itself stopped under it: nothing dropped, and sending it again is not for the user. */
export function stoppedDuringCallError(ctx: ErrorContext, toolName: string, error: unknown): BridgeError {
  const { name } = ctx.config;
  const message = `MCP server '${name}' was stopped during the call of tool '${toolName}' (pi's session ended, or the server was switched off or disabled). The call may or may not have run on the server: check before calling it again.`;
  return new BridgeError("transport", name, ctx.redact(message), { cause: error });
}

/** Where a reconnect under way stands: ` (attempt 3/10; last error: …)`; before its first retry, only the error. */
function attemptsSoFar(state: ConnectionState, maxAttempts: number): string {
  const attempt = "attempt" in state && state.attempt > 0 ? `attempt ${state.attempt}/${maxAttempts}` : undefined;
  const error = errorOf(state);
  const parts = [attempt, error === undefined ? undefined : `last error: ${withoutServerName(error)}`].filter(Boolean);
  return parts.length > 0 ? ` (${parts.join("; ")})` : "";
}

/** A call waited as long as its own timeout for a reconnect that is still under way. */
export function stillReconnectingError(
  ctx: ErrorContext,
  state: ConnectionState,
  maxAttempts: number,
  toolName: string,
): BridgeError {
  const { name, requestTimeout } = ctx.config;
  const message = `MCP server '${name}' is still reconnecting after ${seconds(requestTimeout)}${attemptsSoFar(state, maxAttempts)}; '${toolName}' was not run`;
  return new BridgeError("timeout", name, told(ctx, message));
}

/** What a request says while it waits for its server to start or come back (`npx` takes seconds); else nothing. */
export function waitingNote(ctx: ErrorContext, state: ConnectionState, maxAttempts: number, toolName: string) {
  const { name, requestTimeout } = ctx.config;
  const doing = ctx.installing ? "waiting for npx to install it" : "connecting";
  if (state.kind === "idle" || (state.kind === "connecting" && !inSchedule(state)))
    return told(ctx, `MCP server '${name}' is ${doing}; '${toolName}' runs once it is ready`);
  if (state.kind === "gaveUp" && state.exhausted && ctx.config.transport !== "stdio")
    return told(ctx, `MCP server '${name}' is disconnected; connecting once more for '${toolName}'`);
  if (!inSchedule(state) || !("wasUp" in state && state.wasUp)) return undefined;
  const message = `MCP server '${name}' is reconnecting${attemptsSoFar(state, maxAttempts)}; '${toolName}' runs once it is back, or fails after ${seconds(requestTimeout)}`;
  return told(ctx, message);
}

/** A call found no connection: the server gave up, or its last attempt failed (and more may be scheduled). */
export function notConnectedError(ctx: ErrorContext, state: ConnectionState, maxAttempts: number): BridgeError {
  const { name, transport } = ctx.config;
  const lastError = errorOf(state);
  const suffix =
    inSchedule(state) && "attempt" in state
      ? ` (retrying in the background: attempt ${state.attempt}/${maxAttempts})`
      : "";
  const message =
    state.kind === "gaveUp" && state.exhausted
      ? gaveUpMessage(name, state.attempts, lastError, transport === "stdio")
      : `${lastError ?? `MCP server '${name}' is not connected`}${suffix}`;
  return new BridgeError("transport", name, told(ctx, message));
}
