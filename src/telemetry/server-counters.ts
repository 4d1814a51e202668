/**
 * The bridge's own counts per server (the same as pi's `mcp.metrics` event and `/mcp` show) as OpenTelemetry
 * counters, read when the metrics are collected: reconnections, notifications left out of a flood, tool calls.
 */
import { telemetry } from "./telemetry-setup.ts";

/** What the counters are read from: one entry per server, its counts since pi started. */
interface ServerCounts {
  serverId: string;
  reconnections: number;
  notificationsDropped: number;
  toolCalls: number;
}

const COUNTERS = [
  ["mcp_bridge.server.reconnections", "reconnections", "Times the bridge connected to the server again"],
  ["mcp_bridge.server.notifications_dropped", "notificationsDropped", "Log and progress notifications left out"],
  ["mcp_bridge.server.tool_calls", "toolCalls", "Tool calls sent to the server"],
] as const;

/** Reports `counts()` as counters, while telemetry is on. */
export function observeServerCounters(counts: () => ServerCounts[]): void {
  const t = telemetry();
  if (!t) return;
  for (const [name, key, description] of COUNTERS) {
    t.meter.createObservableCounter(name, { description, valueType: t.api.ValueType.INT }).addCallback((result) => {
      for (const server of counts()) result.observe(server[key], { "mcp_bridge.server": server.serverId });
    });
  }
}
