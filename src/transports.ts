/**
 * SDK transports for a resolved endpoint. The SDK classes do the protocol work; this module only configures them and
 * exposes what the SDK keeps to itself about a local server's process (its stderr lines and how it ended).
 */
import type { ChildProcess } from "node:child_process";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { ResolvedRemote, ResolvedStdio } from "./substitute.ts";

export interface StdioHooks {
  onStderrLine(line: string): void;
  /** How the process ended: `exited with code 1`, `killed by SIGKILL`. */
  onExit(description: string): void;
}

/** Longest stderr line kept; a server that writes megabytes without a newline must not grow memory without bound. */
const MAX_STDERR_LINE = 4096;

export function createStdioTransport(endpoint: ResolvedStdio, hooks: StdioHooks): StdioClientTransport {
  const transport = new StdioClientTransport({
    command: endpoint.command,
    args: endpoint.args,
    // The SDK adds its safe defaults (HOME, PATH, SHELL, TERM, USER, LOGNAME) to this, not the whole host environment.
    env: endpoint.env,
    cwd: endpoint.cwd,
    stderr: "pipe",
  });
  let partial = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    const lines = (partial + chunk.toString("utf8")).split(/\r?\n/);
    partial = lines.pop() ?? "";
    if (partial.length > MAX_STDERR_LINE) {
      hooks.onStderrLine(`${partial.slice(0, MAX_STDERR_LINE)}…`);
      partial = "";
    }
    for (const line of lines) hooks.onStderrLine(line.length > MAX_STDERR_LINE ? `${line.slice(0, MAX_STDERR_LINE)}…` : line);
  });
  transport.stderr?.on("end", () => {
    if (partial) hooks.onStderrLine(partial);
    partial = "";
  });
  // The SDK does not report a process's exit status; watch the child it spawned once it exists.
  const start = transport.start.bind(transport);
  transport.start = async () => {
    await start();
    const child = (transport as unknown as { _process?: ChildProcess })._process;
    child?.once("exit", (code, signal) => hooks.onExit(signal ? `killed by ${signal}` : `exited with code ${code}`));
  };
  return transport;
}

export function createStreamableHttpTransport(endpoint: ResolvedRemote, fetch?: FetchLike): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(endpoint.url), { requestInit: { headers: endpoint.headers }, fetch });
}

export function createSseTransport(endpoint: ResolvedRemote, fetch?: FetchLike): SSEClientTransport {
  return new SSEClientTransport(new URL(endpoint.url), { requestInit: { headers: endpoint.headers }, fetch });
}
