/**
 * `/mcp off` and `/mcp on`: a server switched off, or on again, for this pi session only (./servers-off.ts), and what
 * other subcommands say of a server that is off.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { errorMessage } from "../common/errors.ts";
import { plural } from "../common/text.ts";
import { commandArgument } from "../config/validate/name.ts";
import type { ServerConnection } from "../connection/server-connection.ts";
import { type CommandDeps, failed, show } from "./command-context.ts";
import type { ServersOff } from "./servers-off.ts";
import { isSessionServer } from "../bridge/session-servers.ts";

/**
 * Says so when the server is off for this session, for a command that would start it (which a script is told by the
 * exit status: it did nothing), or `say`s so; true if it is.
 */
export function saysOff(serversOff: ServersOff, connection: ServerConnection, ctx: ExtensionContext, say = failed) {
  if (!serversOff.isOff(connection)) return false;
  const name = commandArgument(connection.name);
  say(ctx, `MCP server '${connection.name}' is off for this session; /mcp on ${name} turns it on.`, "warning");
  return true;
}

/** What a server just started (or set to start) has: its tools, or that it starts on first use. */
export const startedTools = (started: ServerConnection) =>
  started.status === "not started" ? "it starts on first use" : plural(started.tools.length, "tool");

function disabledText(connection: ServerConnection): string {
  return `MCP server '${connection.name}' is disabled in its config`;
}

/** `/mcp off`: the server stops until `/mcp on` or the session's end; its config stays as it is. */
export async function switchOffCommand(deps: CommandDeps, connection: ServerConnection, ctx: ExtensionContext) {
  const name = commandArgument(connection.name);
  if (connection.status === "disabled") return show(ctx, `${disabledText(connection)}; it is not running.`);
  if (saysOff(deps.serversOff, connection, ctx, show)) return;
  await deps.serversOff.switchOff(connection);
  show(
    ctx,
    `Switched off MCP server '${connection.name}' for this session; its tools are gone, its config is unchanged. /mcp on ${name} turns it on.`,
  );
}

/** `/mcp on`: a server switched off for this session starts again, as it would at load. */
export async function switchOnCommand(deps: CommandDeps, connection: ServerConnection, ctx: ExtensionContext) {
  const name = commandArgument(connection.name);
  // One added disabled for this session only has no file for /mcp enable: it is switched on for the session.
  const disabled = connection.status === "disabled";
  if (disabled && !isSessionServer(connection.config))
    return failed(ctx, `${disabledText(connection)}; /mcp enable ${name} turns it on and saves that.`, "warning");
  if (!disabled && !deps.serversOff.isOff(connection))
    return show(ctx, `MCP server '${connection.name}' is on already (${connection.status}).`);
  try {
    const started = disabled
      ? await deps.bridge.replace({ ...connection.config, enabled: true })
      : await deps.serversOff.switchOn(connection);
    show(ctx, `Switched on MCP server '${connection.name}' for this session: ${startedTools(started)}.`);
  } catch (error) {
    failed(ctx, `Switched on MCP server '${connection.name}', but it did not start: ${errorMessage(error)}`);
  }
}
