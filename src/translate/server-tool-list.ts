/**
 * One server's tools as pi may have them: within the server's limits (./tool-list-limits.ts), with names and text safe
 * to show (./server-text.ts). It remembers what the limits left out, as one warning, and the server's own name of a
 * tool whose name had to change, so calls still reach it. Pure.
 */
import type { Tool } from "@modelcontextprotocol/client";
import type { ServerLimits } from "../config/types.ts";
import { limitTools } from "./tool-list-limits.ts";
import { safeTool } from "./server-text.ts";

export class ServerToolList {
  /** The tools as pi registers them. */
  tools: Tool[] = [];
  /** What the last list had that the limits left out, if anything. */
  warning?: string;
  /** A tool's name as shown → its name on the server, where the two differ. */
  private readonly serverNames = new Map<string, string>();
  /** A tool's name as shown → its definition as the server sent it (the SDK reads what it needs for a call there). */
  private readonly definitions = new Map<string, Tool>();

  constructor(private readonly limits: ServerLimits) {}

  /** Takes a list the server sent (or the cache kept). Returns the warning if it differs from the last list's, to log once. */
  accept(listed: Tool[]): string | undefined {
    const { tools, warning } = limitTools(listed, this.limits);
    const changed = warning !== this.warning ? warning : undefined;
    this.warning = warning;
    this.definitions.clear();
    this.tools = tools.map((tool) => {
      const safe = safeTool(tool);
      if (safe.name !== tool.name) this.serverNames.set(safe.name, tool.name);
      this.definitions.set(safe.name, tool);
      return safe;
    });
    return changed;
  }

  /**
   * A tool as its server defined it: the SDK copies parameters a schema marks (`x-mcp-header`) into request headers,
   * and checks a result against the output schema, from this.
   */
  definition(shown: string): Tool | undefined {
    return this.definitions.get(shown);
  }

  /** The name to call a tool by on its server. */
  serverName(shown: string): string {
    return this.serverNames.get(shown) ?? shown;
  }
}
