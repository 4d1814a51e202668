/**
 * The errors of a server that may not run now: the bridge shut it down, or the user has not trusted it. Apart from
 * ./error-messages.ts, since the bridge raises them before any connection code (and the MCP SDK under it) is loaded.
 */
import { BridgeError, ShutDownError } from "../common/errors.ts";
import { describeSource, type ServerConfig } from "../config/types.ts";
import { commandArgument } from "../config/validate/name.ts";

/** For anything asked of a server after the bridge shut it down (`whileConnecting`: the shutdown came mid-connect). */
export function shutDownError(
  server: string,
  options: { whileConnecting?: boolean; cause?: unknown } = {},
): ShutDownError {
  const what = options.whileConnecting ? "was shut down while connecting" : "is shut down";
  return new ShutDownError(server, `MCP server '${server}' ${what}`, { cause: options.cause });
}

/** Anything that would start or connect a project server the user has not trusted. */
export function untrustedError(config: ServerConfig): BridgeError {
  const name = commandArgument(config.name);
  // Only a local server runs in a sandbox: `--sandboxed` trusts a remote one fully.
  const sandboxed = config.transport === "stdio" ? `, or /mcp trust ${name} --sandboxed to run it in a sandbox` : "";
  return new BridgeError(
    "config",
    config.name,
    `MCP server '${config.name}' from ${describeSource(config.source)} is not trusted, so it was not started. Run /mcp trust ${name} to trust and start it${sandboxed} (/mcp list shows what it runs).`,
  );
}
