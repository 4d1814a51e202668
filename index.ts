/**
 * mcp-bridge: MCP servers' tools as native pi tools. Wiring only; the parts live in ./src.
 */
import { fileURLToPath } from "node:url";
import { type ExtensionAPI, getAgentDir } from "@mariozechner/pi-coding-agent";
import { McpBridge } from "./src/bridge.ts";
import { registerMcpCommand, serverRows, show } from "./src/command.ts";
import { CONFIG_FLAG, configFlagFromArgv, isInfoOnlyInvocation } from "./src/config.ts";
import { formatStartupSummary, projectRootWarning } from "./src/status-format.ts";
import { ToolRegistry } from "./src/tool-registry.ts";

const CLIENT_INFO = { name: "pi-mcp-bridge", version: "0.1.0" };
const STARTUP_SIGNALS: NodeJS.Signals[] = process.platform === "win32" ? ["SIGTERM"] : ["SIGTERM", "SIGHUP"];

export default async function mcpBridge(pi: ExtensionAPI): Promise<void> {
  pi.registerFlag(CONFIG_FLAG, {
    type: "string",
    description: "Also load MCP servers from this JSON file (highest priority)",
  });
  if (isInfoOnlyInvocation(process.argv)) return;
  const env = process.env;
  const bridge = new McpBridge({
    // pi gives a factory no working directory; in its CLI that is the process's own.
    projectRoot: process.cwd(),
    agentDir: getAgentDir(),
    bundledPath: fileURLToPath(new URL("./mcp.json", import.meta.url)),
    extraPath: configFlagFromArgv(process.argv),
    env,
    clientInfo: CLIENT_INFO,
  });
  // If pi exits without a session_shutdown, take the server processes along.
  const killOnExit = () => bridge.killNow();
  process.once("exit", killOnExit);
  // pi installs its SIGTERM/SIGHUP handlers (which run session_shutdown) only once the session has started; a signal
  // that comes while servers are still connecting would end pi at once and orphan them. Until then, end the servers
  // and let the signal take its course.
  const stopGuardingStartup = () => {
    for (const s of STARTUP_SIGNALS) process.off(s, onStartupSignal);
  };
  const onStartupSignal = (signal: NodeJS.Signals) => {
    bridge.killNow();
    stopGuardingStartup();
    process.kill(process.pid, signal);
  };
  for (const signal of STARTUP_SIGNALS) process.on(signal, onStartupSignal);

  await bridge.start();

  const registry = new ToolRegistry(
    (tool) => pi.registerTool(tool),
    (server) => bridge.connection(server),
  );
  for (const connection of bridge.connections.values()) {
    if (connection.status === "connected") registry.registerServer(connection);
  }
  registerMcpCommand(pi, bridge, registry, env);

  pi.on("session_start", (_event, ctx) => {
    stopGuardingStartup();
    registry.resolveShadowed(pi.getAllTools());
    const rootWarning = projectRootWarning(bridge.projectRoot, ctx.cwd);
    const warnings = rootWarning ? [...registry.warnings, rootWarning] : registry.warnings;
    const summary = formatStartupSummary(serverRows(bridge, registry, env), bridge.problems, warnings);
    if (summary) show(ctx, summary, "warning");
  });
  pi.on("session_shutdown", async () => {
    process.off("exit", killOnExit);
    stopGuardingStartup();
    await bridge.shutdown();
  });
}
