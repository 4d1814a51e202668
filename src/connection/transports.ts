/**
 * Transports for a resolved endpoint: the SDK's for remote servers, ./local/stdio-transport.ts (the SDK's framing, our
 * own process handling) for local ones, sandboxed where the server's setting says so.
 */
import {
  type FetchLike,
  type OAuthClientProvider,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type Transport,
} from "@modelcontextprotocol/client";
import { noteForeignMessages } from "./local/foreign-messages.ts";
import { orphanWatchdog } from "./local/orphan-watchdog.ts";
import { platformCommand } from "./local/platform-command.ts";
import { ProcessGroupStdioTransport } from "./local/stdio-transport.ts";
import type { ResolvedRemote, ResolvedStdio } from "../config/substitute.ts";
import { privateTempDir, sandboxedStart } from "../sandbox/sandbox-runtime.mjs";
import { watchStartLeftovers } from "../sandbox/sandbox-leftovers.ts";
import type { StdioSandbox } from "../sandbox/server-sandbox.ts";

export interface StdioHooks {
  onStderrLine(line: string): void;
  /** How the process ended: `exited with code 1`, `killed by SIGKILL`; its exit code, if it exited. */
  onExit(description: string, code: number | null): void;
  /** It wrote a line over the limit, and is being stopped for it. */
  onRefused(error: Error): void;
  /** It wrote a stdout line that is not a JSON-RPC message. */
  onStrayLine?(line: string): void;
  /** It sent a request or notification of a method MCP does not have (./local/foreign-messages.ts). */
  onForeignMessage?(method: string, params: unknown): void;
}

/**
 * A local server in its own process group, so it and everything it starts can be signalled together; the group is
 * handed to this pi process's watchdog, which ends it if pi is killed.
 */
export function createStdioTransport(
  endpoint: ResolvedStdio,
  hooks: StdioHooks,
  maxMessageBytes?: number,
  sandbox?: StdioSandbox,
): ProcessGroupStdioTransport {
  const { command, args } = platformCommand(endpoint.command, endpoint.args, process.platform);
  const prepare = sandbox
    ? () => {
        const policy = sandbox.policy(privateTempDir(sandbox.server));
        sandbox.onStart?.(policy);
        const spec = { command, args, env: endpoint.env, cwd: endpoint.cwd };
        return sandboxedStart(spec, policy, sandbox.onViolation).then((start) => watchStartLeftovers(start));
      }
    : undefined;
  const transport = new ProcessGroupStdioTransport({
    command,
    args,
    // The SDK's safe defaults (HOME, PATH, SHELL, TERM, USER, LOGNAME) plus this, not the whole host environment.
    env: endpoint.env,
    cwd: endpoint.cwd,
    onStderrLine: hooks.onStderrLine,
    onExit: (info) => hooks.onExit(info.description, info.code),
    onRefused: hooks.onRefused,
    onStrayLine: hooks.onStrayLine,
    watchdog: orphanWatchdog,
    maxMessageBytes,
    prepare,
  });
  return hooks.onForeignMessage ? noteForeignMessages(transport, hooks.onForeignMessage) : transport;
}

/** The SDK's transport for a remote server: Streamable HTTP, or the legacy HTTP+SSE one. */
export function createRemoteTransport(
  kind: "http" | "sse",
  endpoint: ResolvedRemote,
  fetch?: FetchLike,
  authProvider?: OAuthClientProvider,
): Transport {
  const Remote = kind === "sse" ? SSEClientTransport : StreamableHTTPClientTransport;
  return new Remote(new URL(endpoint.url), { requestInit: { headers: endpoint.headers }, fetch, authProvider });
}
