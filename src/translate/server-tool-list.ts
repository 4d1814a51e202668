/**
 * One server's tools as pi may have them: within the server's limits (./tool-list-limits.ts), with names and text safe
 * to show (./server-text.ts). It remembers what the limits left out, as one warning, and the server's own name of a
 * tool whose name had to change, so calls still reach it. Pure.
 */
import type { Tool } from "@modelcontextprotocol/client";
import type { ServerLimits } from "../config/types.ts";
import { limitTools } from "./tool-list-limits.ts";
import { safeTool } from "./server-text.ts";

/** What the registry remembers of a tool so a changed definition can be told from an unchanged one. */
export function signature(tool: Tool): string {
  return JSON.stringify([tool.title, tool.description, tool.inputSchema, tool.annotations, tool.outputSchema]);
}

/** A server's tools, each name once (the first wins, as a server listing a name twice can only run one of them). */
export function uniqueByName(tools: readonly Tool[]): Tool[] {
  const seen = new Set<string>();
  return tools.filter((tool) => !seen.has(tool.name) && seen.add(tool.name));
}

export class ServerToolList {
  /** The tools as pi registers them. */
  tools: Tool[] = [];
  /** What the last list had that the limits left out, if anything. */
  warning?: string;
  /** A tool's name as shown → its name on the server, where the two differ. */
  private readonly serverNames = new Map<string, string>();
  /** A tool's name as shown → its definition as the SDK gets it for a call (the server's, without `outputSchema`). */
  private readonly definitions = new Map<string, Tool>();
  /** What calls found wrong with a tool's results, by its shown name: the first finding, until the list changes. */
  private readonly findings = new Map<string, string>();

  constructor(private readonly limits: ServerLimits) {}

  /**
   * Takes a list the server sent (or the cache kept). Returns the warning if it differs from the last list's, to log
   * once. The model reads a tool's text as it reads a result, so `redact` hides the server's secrets in it (a server
   * may name its own key in a description); the name stays the server's, to call the tool by.
   */
  accept(listed: Tool[], redact = (tool: Tool) => tool): string | undefined {
    const { tools, warning } = limitTools(listed, this.limits);
    const changed = warning !== this.warning ? warning : undefined;
    this.warning = warning;
    this.definitions.clear();
    this.findings.clear();
    this.serverNames.clear();
    this.tools = tools.flatMap((tool) => {
      const safe = safeTool({ ...redact(tool), name: tool.name });
      // A name an earlier tool has once cleaned (`lookup ` after `lookup`): the first keeps it, as in pi's registry.
      if (this.definitions.has(safe.name)) return [];
      if (safe.name !== tool.name) this.serverNames.set(safe.name, tool.name);
      // The SDK would throw away a result whose structured content misses its schema: the pi tool checks it instead.
      const { outputSchema: _checkedByPi, ...forCall } = tool;
      this.definitions.set(safe.name, forCall);
      return [safe];
    });
    return changed;
  }

  /**
   * A tool as its server defined it, less its output schema: the SDK copies parameters a schema marks (`x-mcp-header`)
   * into request headers from this.
   */
  definition(shown: string): Tool | undefined {
    return this.definitions.get(shown);
  }

  /** Records what a call of `tool` found wrong with its result; true the first time for that tool. */
  found(tool: string, text: string): boolean {
    if (this.findings.has(tool)) return false;
    this.findings.set(tool, text);
    return true;
  }

  /** What calls found, one line per tool. */
  get findingLines(): string[] {
    return [...this.findings].map(([tool, text]) => `tool '${tool}': ${text}`);
  }

  /** The name to call a tool by on its server. */
  serverName(shown: string): string {
    return this.serverNames.get(shown) ?? shown;
  }
}
