/**
 * `timeout`, read the way both kinds of config mean it. The bridge's own configs write it in milliseconds, as the
 * handshake deadline; pi 1.x's write it in seconds, as the deadline of each request (its handshake included). One
 * rule tells them apart: a value below {@link SECONDS_BELOW} is seconds, with pi 1.x's meaning; from there up it is
 * milliseconds, as before. Nobody means a 999 ms handshake, nor a request that may take 17 minutes. Pure.
 */
import { quoteValue } from "../../common/text.ts";
import type { JsonObject } from "../../common/values.ts";
import { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_INIT_TIMEOUT_MS } from "../defaults.ts";
import { positiveMs } from "./fields.ts";

/** A `timeout` below this is seconds (pi 1.x's per-request timeout); this and more is milliseconds. */
export const SECONDS_BELOW = 1000;

export interface TimeoutSetting {
  /** The handshake deadline in ms. */
  timeout: number;
  /** Set when `timeout` was read as seconds and no `requestTimeout` is written: each request's deadline in ms. */
  requestTimeout?: number;
}

/**
 * The handshake deadline (and, for a `timeout` in seconds, the request deadline). A local server's `initTimeout`
 * (ms) wins for its handshake; an explicit `requestTimeout` (ms) wins for its requests.
 */
export function timeoutSetting(entry: JsonObject, local: boolean, errors: string[], warnings: string[]): TimeoutSetting {
  const fallback = local ? DEFAULT_INIT_TIMEOUT_MS : DEFAULT_CONNECT_TIMEOUT_MS;
  const value = entry.timeout;
  const inSeconds = typeof value === "number" && Number.isFinite(value) && value > 0 && value < SECONDS_BELOW;
  const initTimeout = local && entry.initTimeout !== undefined && entry.initTimeout !== null;
  if (!inSeconds) {
    // A local server's handshake deadline is `initTimeout`; `timeout` is accepted as its older name.
    if (initTimeout) return { timeout: positiveMs(entry.initTimeout, "initTimeout", fallback, errors) };
    return { timeout: positiveMs(value, "timeout", fallback, errors) };
  }
  const ms = value * 1000;
  const explicitRequest = entry.requestTimeout !== undefined && entry.requestTimeout !== null;
  warnings.push(secondsNote(value, explicitRequest));
  return {
    timeout: initTimeout ? positiveMs(entry.initTimeout, "initTimeout", fallback, errors) : ms,
    ...(explicitRequest ? {} : { requestTimeout: ms }),
  };
}

/** The field that bounds a server's handshake as the entry writes it: `initTimeout` (local) or `timeout`, else the default's. */
export function handshakeTimeoutField(entry: JsonObject, local: boolean): "initTimeout" | "timeout" {
  if (local && entry.initTimeout !== undefined && entry.initTimeout !== null) return "initTimeout";
  if (entry.timeout !== undefined && entry.timeout !== null) return "timeout";
  return local ? "initTimeout" : "timeout";
}

/** The field a user raises for longer requests, as they would write it: pi 1.x's `timeout` in seconds, or `requestTimeout`. */
export function requestTimeoutField(entry: JsonObject): string {
  const value = entry.timeout;
  const fromSeconds = typeof value === "number" && value > 0 && value < SECONDS_BELOW && (entry.requestTimeout === undefined || entry.requestTimeout === null);
  return fromSeconds ? "`timeout` (seconds)" : "`requestTimeout` (ms)";
}

/** The notice that the seconds reading applied, and how to get the other one. */
function secondsNote(value: number, explicitRequest: boolean): string {
  const applies = explicitRequest ? "the handshake may take" : "each request may take";
  const also = explicitRequest ? " (`requestTimeout` sets the requests')" : ", progress resetting it, and so may the handshake";
  return (
    `\`timeout\` ${quoteValue(value)} is below ${SECONDS_BELOW}, so it is read as seconds, as pi 1.x means it: ${applies} ${value} s${also}; ` +
    `for milliseconds write ${SECONDS_BELOW} or more`
  );
}
