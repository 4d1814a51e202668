/**
 * `timeout`, read the way both kinds of config mean it. The bridge's own configs write it in milliseconds, as the
 * handshake deadline; pi 1.x's write it in seconds, as the deadline of each request (its handshake included). One
 * rule tells them apart: a value below {@link SECONDS_BELOW} is seconds, with pi 1.x's meaning; from there up it is
 * milliseconds, as before. Nobody means a 999 ms handshake, nor a request that may take 17 minutes. Where the
 * seconds reading needs saying, and how often, is decided here too ({@link secondsNotices}). Pure.
 */
import { quoteValue } from "../../common/text.ts";
import type { JsonObject } from "../../common/values.ts";
import type { ConfigProblem, ServerConfig } from "../types.ts";
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
export function timeoutSetting(entry: JsonObject, local: boolean, errors: string[]): TimeoutSetting {
  const fallback = local ? DEFAULT_INIT_TIMEOUT_MS : DEFAULT_CONNECT_TIMEOUT_MS;
  const value = entry.timeout;
  const seconds = inSeconds(value);
  // A local server's handshake deadline is `initTimeout`; `timeout` is accepted as its older name.
  const field = local && isSet(entry.initTimeout) ? "initTimeout" : "timeout";
  const timeout = seconds && field === "timeout" ? value * 1000 : positiveMs(entry[field], field, fallback, errors);
  if (field === "initTimeout" && !seconds) positiveMs(value, "timeout", fallback, errors);
  return { timeout, ...(seconds && !isSet(entry.requestTimeout) && { requestTimeout: value * 1000 }) };
}

/** The field that bounds a server's handshake as the entry writes it: `initTimeout` (local) or `timeout`, else the default's. */
export function handshakeTimeoutField(entry: JsonObject, local: boolean): "initTimeout" | "timeout" {
  if (local && isSet(entry.initTimeout)) return "initTimeout";
  if (isSet(entry.timeout)) return "timeout";
  return local ? "initTimeout" : "timeout";
}

function inSeconds(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 && value < SECONDS_BELOW;
}

/** Written in the entry: present and not null. */
function isSet(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** The field a user raises for longer requests, as they would write it: pi 1.x's `timeout` in seconds, or `requestTimeout`. */
export function requestTimeoutField(entry: JsonObject): string {
  return inSeconds(entry.timeout) && !isSet(entry.requestTimeout) ? "`timeout` (seconds)" : "`requestTimeout` (ms)";
}

/** The deadlines written in milliseconds only (not `timeout`, whose small values are seconds). */
const MS_DEADLINES = ["initTimeout", "requestTimeout"] as const;

/**
 * A deadline in milliseconds below {@link SECONDS_BELOW} is surely seconds meant (`"initTimeout": 15`, as pi 1.x's
 * `timeout` is written): no server starts, and no call answers, in 15 ms. Said, not changed: the field is documented in
 * milliseconds.
 */
export function millisecondWarnings(entry: JsonObject, local: boolean): string[] {
  // A remote entry's `initTimeout` is refused as local-only: one word about it is enough.
  const fields = MS_DEADLINES.filter((field) => (local || field !== "initTimeout") && inSeconds(entry[field]));
  return fields.map((field) => {
    const value = entry[field] as number;
    return `\`${field}\` ${value} is milliseconds (${value / 1000} s), too short for what it bounds; for ${value} seconds write ${value * 1000}`;
  });
}

/** A notice to give once, and the key it is remembered by once given. */
export interface OnceNotice {
  key: string;
  problem: ConfigProblem;
}

/**
 * The notices about `timeout`s read as seconds that are worth giving, each to be given once, not at every start.
 *
 * Whether the reading needs saying depends on the pi that runs. Where pi's own docs say `timeout` is seconds (pi 1.x,
 * whose built-in MCP reads it so: `piMeansSeconds`), the seconds reading is simply what the user wrote, and nothing is
 * said. On pi 0.73 the value is ambiguous: the bridge's docs there long said `timeout` is the connect timeout in
 * milliseconds, so a value below 1000 may be an older config's milliseconds as well as a pi 1.x config's seconds; the
 * user hears once which reading applies and how to write the other. Each such value is said once per file and server
 * (the key holds all three): a value changed later is a new question. 1000 and more is milliseconds on both lines
 * and needs no notice.
 */
export function secondsNotices(servers: readonly ServerConfig[], piMeansSeconds: boolean): OnceNotice[] {
  if (piMeansSeconds) return [];
  return servers.flatMap((server) => {
    const value = server.raw.timeout;
    if (!inSeconds(value)) return [];
    const message = secondsNote(value, isSet(server.raw.requestTimeout));
    const problem: ConfigProblem = { level: "warning", source: server.source, server: server.name, message };
    return [{ key: JSON.stringify(["timeout-seconds", server.source.path, server.name, value]), problem }];
  });
}

/** The notice that the seconds reading applied, and how to get the other one. */
function secondsNote(value: number, explicitRequest: boolean): string {
  const applies = explicitRequest ? "the handshake may take" : "each request may take";
  const also = explicitRequest
    ? " (`requestTimeout` sets the requests')"
    : ", progress resetting it, and so may the handshake";
  return (
    `\`timeout\` ${quoteValue(value)} is below ${SECONDS_BELOW}, so it is read as seconds, as pi 1.x means it: ${applies} ${value} s${also}; ` +
    `for milliseconds write ${SECONDS_BELOW} or more`
  );
}
