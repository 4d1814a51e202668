/**
 * The bridge's own counts per server (the same as pi's `mcp.metrics` event and `/mcp` show) as OpenTelemetry
 * counters, read when the metrics are collected: a local server's restarts and a remote one's reconnections,
 * notifications left out of a flood, tool calls, and calls refused for want of the user's approval.
 */
import { telemetry } from "./telemetry-setup.ts";

/** Where the counts come from: the bridge's metrics per server, and the approvals refused per server. */
export interface CounterSource {
  /** The bridge's metrics (its `metrics()`), of which these are read. */
  metrics(): Array<{ serverId: string; reconnections: number; notificationsDropped: number; toolCalls: number }>;
  isLocal(server: string): boolean;
  refused(server: string): number;
}

const COUNTERS = [
  ["mcp_bridge.server.restarts", "restarts", "Times the bridge started the local server again"],
  ["mcp_bridge.server.reconnections", "reconnections", "Times the bridge connected to the remote server again"],
  ["mcp_bridge.server.notifications_dropped", "notificationsDropped", "Log and progress notifications left out"],
  ["mcp_bridge.server.tool_calls", "toolCalls", "Tool calls sent to the server"],
  ["mcp_bridge.server.approvals_refused", "approvalsRefused", "Tool calls refused for want of approval"],
] as const;

/** What the counters read of one server. */
function countsOf(source: CounterSource): Array<Record<(typeof COUNTERS)[number][1], number> & { serverId: string }> {
  return source.metrics().map((m) => {
    const local = source.isLocal(m.serverId);
    return {
      ...m,
      restarts: local ? m.reconnections : 0,
      reconnections: local ? 0 : m.reconnections,
      approvalsRefused: source.refused(m.serverId),
    };
  });
}

/** Reports `counts()` as counters, while telemetry is on. */
export function observeServerCounters(source: CounterSource): void {
  const t = telemetry();
  if (!t) return;
  for (const [name, key, description] of COUNTERS) {
    const counter = t.meter.createObservableCounter(name, { description, valueType: t.api.ValueType.INT });
    const observe: Parameters<typeof counter.addCallback>[0] = (result) => {
      // A host's meter outlives the bridge (a /reload, another session): an ended bridge reports nothing, and goes
      // (after this collection: removed while the meter goes through its callbacks, the next one would be skipped).
      if (telemetry() !== t) return queueMicrotask(() => counter.removeCallback(observe));
      for (const server of countsOf(source)) result.observe(server[key], { "mcp_bridge.server": server.serverId });
    };
    counter.addCallback(observe);
  }
}
