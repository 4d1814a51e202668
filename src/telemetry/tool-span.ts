/**
 * The span of one pi tool call to an MCP tool (`execute_tool {tool}`, INTERNAL): the requests it leads to (the call,
 * the same call again after a reconnect, a task's polling) are its children, so one trace shows them together.
 */
import { telemetry } from "./telemetry-setup.ts";

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
      if (result.isError === true) {
        span.setAttribute("error.type", "tool_error");
        span.setStatus({ code: t.api.SpanStatusCode.ERROR });
      }
      return result;
    } catch (error) {
      span.setAttribute("error.type", error instanceof Error ? error.name : "error");
      span.setStatus({ code: t.api.SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}
