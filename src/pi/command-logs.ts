/**
 * `/mcp logs <server>`: what a local server wrote to stderr (its own log) and what the bridge logged about it, for a
 * terminal without the dashboard (print mode, a script) or a look further back than the dashboard's last lines.
 */
import { plural } from "../common/text.ts";
import type { ServerConnection } from "../connection/server-connection.ts";
import type { CommandDeps } from "./command-context.ts";

const STDERR_LINES = 40;
const BRIDGE_RECORDS = 15;

export function logsText(deps: CommandDeps, connection: ServerConnection): string {
  const { name } = connection;
  const lines: string[] = [];
  const add = (tail: string[], found: string, none: string) =>
    lines.push(tail.length ? found : none, ...tail.map((line) => `    ${line}`));
  if (connection.config.transport === "stdio") {
    const stderr = deps.logTail(name, STDERR_LINES);
    const file = deps.logFile(name, "stderr");
    add(
      stderr,
      `MCP server '${name}': the last ${plural(stderr.length, "line")} it wrote to stderr (${file}):`,
      `MCP server '${name}' has written nothing to stderr (${file}).`,
    );
  } else lines.push(`MCP server '${name}' is remote: it has no stderr.`);
  const bridge = deps.logTail(name, BRIDGE_RECORDS, "bridge");
  const file = deps.logFile(name, "bridge");
  add(
    bridge,
    `What the bridge logged about it, the last ${plural(bridge.length, "record")} (${file}):`,
    `The bridge's log has nothing recent about it (${file}).`,
  );
  return lines.join("\n");
}
