/**
 * The span of one pi tool call to an MCP tool (`execute_tool {tool}`, INTERNAL): the requests it leads to (the call,
 * the same call again after a reconnect, a task's polling) are its children, so one trace shows them together.
 */
import { failSpan, telemetry } from "./telemetry-setup.ts";

/** Runs `call` inside the tool call's span; as it is when telemetry is off (no promise of its own around it). */
export function inToolSpan<T extends { isError?: boolean }>(
  server: string,
  tool: string,
  call: () => Promise<T>,
): Promise<T> {
  const t = telemetry();
  if (!t) return call();
  const attributes = { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool, "mcp_bridge.server": server };
  return t.tracer.startActiveSpan(`execute_tool ${tool}`, { attributes }, async (span) => {
    try {
      const result = await call();
      if (result.isError === true) failSpan(t, span, "tool_error");
      return result;
    } catch (error) {
      failSpan(t, span, error instanceof Error ? error.name : "error");
      throw error;
    } finally {
      span.end();
    }
  });
}
