/**
 * The bridge's own errors and what any error says: its message, its causes, whether its connection was never made.
 * Telling the MCP SDK's errors apart is ./error-kinds.ts's job, which loads the SDK: this file must not, since most of
 * the bridge uses it and pi's start should not pay for the SDK while no server runs.
 */

/**
 * What went wrong, as far as deciding what to do next goes: `auth` (credentials: tell the user, never reconnect),
 * `transport` (the connection is gone: reconnect), `timeout` (no answer in time), `config` (the entry cannot work as
 * written), `cancelled` (the caller gave up), `other` (the server answered with an error).
 */
export type ErrorKind = "auth" | "transport" | "timeout" | "config" | "cancelled" | "other";

/** An error and its causes, the first five links. */
export function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = error;
  while (current !== undefined && current !== null && chain.length < 5) {
    chain.push(current);
    current = current instanceof Error ? current.cause : undefined;
  }
  return chain;
}

/** A Node or undici error code (`ECONNRESET`), if the error carries one. */
export function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** Node/undici error codes of a connection that was never made: nothing of a request sent on it reached anyone. */
export const NEVER_CONNECTED_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** The request failed because no connection could be made (refused, unresolved, unreachable): it was never sent. */
export function neverConnected(error: unknown): boolean {
  return causeChain(error).some((link) => NEVER_CONNECTED_CODES.has(codeOf(link) ?? ""));
}

/** The message of a thrown value, whatever was thrown. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A thrown value as an Error, for the places that only take one. */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** A connect's own deadline passed (the SDK's request timeout only backs it up); the message is worded later. */
export class ConnectTimeout extends Error {
  constructor() {
    super("connect timed out");
  }
}

/**
 * A schema validation error (the SDK checks what servers send with zod, whose message is a JSON dump) as
 * `field: problem; …`, or undefined for any other error.
 */
function schemaIssues(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  let head = "";
  let issues = (error as { issues?: unknown }).issues;
  // The SDK's own wrapper puts them in its message: `Invalid result for tools/list: [ { "code": … } ]`.
  const at = error.message.indexOf(": [");
  if (!Array.isArray(issues) && at > 0) {
    try {
      issues = JSON.parse(error.message.slice(at + 2));
      head = `${error.message.slice(0, at)}: `;
    } catch {
      return undefined;
    }
  }
  if (!Array.isArray(issues) || issues.length === 0) return undefined;
  const shown = issues.slice(0, SHOWN_ISSUES).map((issue: { path?: unknown; message?: unknown }) => {
    const where = Array.isArray(issue.path) ? issue.path.join(".") : "";
    return `${where ? `${where}: ` : ""}${String(issue.message)}`;
  });
  const more = issues.length - shown.length;
  return `${head}${shown.join("; ")}${more > 0 ? `; and ${more} more` : ""}`;
}

/** A list's first issues say what is wrong; a server's fault repeated in each of its 300 tools says no more. */
const SHOWN_ISSUES = 3;

/** An OpenSSL error by its reason: its message adds OpenSSL's internal codes and source file (`wrong version number`). */
function sslReason(link: unknown): string | undefined {
  const { library, reason, code } = link as { library?: unknown; reason?: unknown; code?: unknown };
  return typeof library === "string" && typeof reason === "string" ? `${reason} (${String(code)})` : undefined;
}

/** A short description of an error and its causes (`fetch failed: connect ECONNREFUSED 127.0.0.1:4000`). */
export function describeError(error: unknown): string {
  const parts: string[] = [];
  for (const link of causeChain(error)) {
    let text =
      schemaIssues(link) ??
      sslReason(link) ??
      (link instanceof Error ? link.message : typeof link === "string" ? link : JSON.stringify(link));
    // Prefixes that mean nothing to a reader: a server error's "MCP error <code>", the SDK's probe a refusal failed.
    text = text.replace(/^MCP error -?\d+: |^Version negotiation probe failed: (?=fetch failed)/, "");
    // An HTTP refusal with an empty body (a proxy's 503), or a page of HTML (a gateway's 502): the status says it.
    const status = (link as { status?: unknown } | null)?.status;
    if (typeof status === "number") text = text.replace(/: ?(\s*<(!doctype|html)\b[^]*)?$/i, `: HTTP ${status}`);
    if (text && !parts.some((p) => p.includes(text))) parts.push(text);
  }
  return parts.join(": ") || "unknown error";
}

/** An error the bridge raises itself, already worded for the user. */
export class BridgeError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly server: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "BridgeError";
  }
}

/** Something was asked of a server the bridge had shut down (or shut down while it connected): nobody's failure. */
export class ShutDownError extends BridgeError {
  constructor(server: string, message: string, options?: { cause?: unknown }) {
    super("other", server, message, options);
    this.name = "ShutDownError";
  }
}
