/**
 * The words of a server's errors: what failed, why, and what to change. Every message passes through the server's
 * redaction, since a stderr tail or a URL can carry a secret.
 */
import type { ServerConfig } from "../config/types.ts";
import { describeSource } from "../config/types.ts";
import { BridgeError, classifyError, describeError, httpStatusOf, isTimeoutError } from "../common/errors.ts";
import { displayUrl } from "../config/substitute.ts";
import { seconds } from "../common/text.ts";

export type FailureKind = "cancelled" | "timeout" | "auth" | "transport" | "other";

/** What a message needs to know about its server. */
export interface ErrorContext {
  config: ServerConfig;
  redact(text: string): string;
  /** The last stderr lines, formatted for a message ("" if none). */
  stderr(): string;
  /** How the server's process ended, if it did: `exited with code 1`. */
  exitDescription?: string;
  /** Lines the server wrote to stdout that were not JSON-RPC. */
  nonJsonLines: number;
  /** The server uses OAuth: the fix for an auth error is a sign-in, not a header. */
  oauth: boolean;
}

/** The connect deadline passed; `connectError` words the message. */
export class ConnectTimeout extends Error {
  constructor() {
    super("connect timed out");
  }
}

/** Which field bounds a server's handshake: `initTimeout` for a local server, `timeout` for a remote one. */
function timeoutField(config: ServerConfig): string {
  return config.transport === "stdio" ? "initTimeout" : "timeout";
}

export function needsSignInMessage(server: string): string {
  return `MCP server '${server}' needs you to sign in (OAuth). Run /mcp auth ${server} in pi to open the sign-in page.`;
}

export function authMessage(ctx: ErrorContext, error: unknown): string {
  const { config } = ctx;
  if (ctx.oauth) return needsSignInMessage(config.name);
  const status = httpStatusOf(error);
  const where = describeSource(config.source);
  const headerNames = Object.keys(config.headers);
  const vars = Object.values(config.headers).flatMap((v) => [...v.matchAll(/\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]));
  let fix: string;
  if (headerNames.length === 0) {
    fix = `it sends no credentials; add an \`Authorization\` (or API key) header to '${config.name}' in ${where}`;
  } else {
    fix = `check the ${headerNames.map((h) => `\`${h}\``).join(", ")} ${headerNames.length > 1 ? "headers" : "header"} of '${config.name}' in ${where}`;
    if (vars.length) fix += ` and that ${[...new Set(vars)].map((v) => `\${${v}}`).join(", ")} holds a valid, unexpired credential`;
  }
  const statusText = status === 403 ? "HTTP 403 (forbidden)" : status === 401 ? "HTTP 401 (unauthorized)" : "an authentication error";
  return ctx.redact(`MCP server '${config.name}' rejected the request with ${statusText}: ${fix}. Reconnecting would not help, so it was not retried.`);
}

export function callError(ctx: ErrorContext, kind: Exclude<FailureKind, "transport">, toolName: string, error: unknown): BridgeError {
  const { config } = ctx;
  switch (kind) {
    case "cancelled":
      return new BridgeError("cancelled", config.name, `Call to '${toolName}' on MCP server '${config.name}' was cancelled`, { cause: error });
    case "timeout":
      return new BridgeError(
        "timeout",
        config.name,
        `MCP server '${config.name}' did not answer '${toolName}' within ${seconds(config.requestTimeout)} without progress; ` +
          `raise \`requestTimeout\` (ms) for '${config.name}' in ${config.source.path} if the tool needs longer`,
        { cause: error },
      );
    case "auth":
      return new BridgeError("auth", config.name, authMessage(ctx, error), { cause: error });
    default:
      return new BridgeError("other", config.name, ctx.redact(`MCP server '${config.name}' failed '${toolName}': ${describeError(error)}`), {
        cause: error,
      });
  }
}

export function connectError(ctx: ErrorContext, error: unknown): BridgeError {
  const { config } = ctx;
  const kind = error instanceof ConnectTimeout || isTimeoutError(error) ? "timeout" : classifyError(error);
  const where = config.transport === "stdio" ? "" : ` at ${displayUrl(ctx.redact(config.url ?? ""))}`;
  let message: string;
  if (kind === "auth") {
    return new BridgeError("auth", config.name, authMessage(ctx, error), { cause: error });
  } else if (kind === "timeout") {
    message = `MCP server '${config.name}'${where} did not complete the MCP handshake within ${seconds(config.timeout)}`;
    if (config.transport === "stdio") message += " and was stopped";
    if (config.transport === "stdio" && ctx.nonJsonLines > 0) {
      message += `; it wrote ${ctx.nonJsonLines} line(s) to stdout that are not JSON-RPC messages (a server must log to stderr, not stdout)`;
    }
    message += ` (raise \`${timeoutField(config)}\` in ${config.source.path} if it is just slow to start)`;
  } else if (config.transport === "stdio" && (error as { code?: unknown }).code === "ENOENT") {
    const command = config.command ?? "";
    message = `MCP server '${config.name}': command '${command}' was not found (is it installed and on PATH?)`;
    if (/\s/.test(command.trim())) message += `; put its arguments in \`args\` rather than in \`command\``;
  } else if (ctx.exitDescription) {
    message = `MCP server '${config.name}': the process ${ctx.exitDescription} before completing the MCP handshake`;
  } else {
    const detail = describeError(error);
    const refused = /ECONNREFUSED/.test(detail) ? " (connection refused: is the server running?)" : "";
    message = `MCP server '${config.name}'${where} failed to connect: ${detail}${refused}`;
  }
  message += ctx.stderr();
  const bridgeKind = kind === "timeout" ? "timeout" : kind === "transport" ? "transport" : "other";
  return new BridgeError(bridgeKind, config.name, ctx.redact(message), { cause: error });
}
