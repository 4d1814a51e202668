/**
 * The `tool_search` tool: finds deferred MCP tools by what the model needs done (../exposure/tool-search-index.ts),
 * loads the best matches so the following requests declare them, and records the loads in pi's session. Also says
 * which tools each request leaves out: deferred tools not loaded yet, and `tool_search` itself while nothing is
 * deferred. The bridge's own tools that reach several servers (the resource tools) are deferred, found and loaded
 * alike when their exposure, the widest of those servers', is deferred.
 */
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import type { Tool } from "@modelcontextprotocol/client";
import { definitionChars, type ModelFacingTool, type ToolWire } from "./definition-cost.ts";
import { type SearchableTool, searchableTool, ToolSearchIndex } from "./tool-search-index.ts";
import {
  DEFAULT_SEARCH_LIMIT,
  type DeferredServer,
  formatSearchResult,
  MAX_SEARCH_LIMIT,
  TOOL_SEARCH_DESCRIPTION,
  TOOL_SEARCH_NAME,
  TOOL_SEARCH_PARAMETERS,
} from "./tool-search-text.ts";
import { type CostedTool, NO_SERVER, type ToolExposure, type ToolRef } from "./tool-exposure.ts";

/** A tool of the bridge's own that reaches several servers (a resource tool), as tool search sees it. */
export interface SharedTool {
  name: string;
  description: string;
  inputSchema: Tool["inputSchema"];
  /** The servers it reaches now; none while no server offers what it is for. */
  servers: string[];
}

/** An MCP tool pi has, as tool search reads it. */
interface ListedTool {
  /** The name the model sees. */
  name: string;
  server: string;
  /** The tool's name on its MCP server. */
  originalName: string;
  title?: string;
  description: string;
  inputSchema: Tool["inputSchema"];
}

export interface ToolSearchDeps {
  registerTool: ExtensionAPI["registerTool"];
  /** The MCP tools pi has, and the definition each was registered with (the tool registry). */
  registry: { readonly tools: readonly ListedTool[]; definition(name: string): ModelFacingTool | undefined };
  exposure: ToolExposure;
  /** The bridge's own tools that reach several servers, once registered. */
  sharedTools(): SharedTool[];
  /** The server's `description` from its config, redacted. */
  serverDescription(server: string): string | undefined;
  /** Records loaded tools in pi's session. */
  record(refs: ToolRef[]): void;
}

interface ToolSearchDetails {
  query: string;
  loaded: ToolRef[];
}

/** A registered tool as the index takes it: the same reading of a tool that the bench's recall figure measures. */
function searchable(tool: ListedTool, serverDescription: string | undefined): SearchableTool {
  const { originalName, title, description, inputSchema } = tool;
  return searchableTool(
    { name: originalName, title, description, inputSchema },
    tool.server,
    tool.name,
    serverDescription,
  );
}

export class ToolSearch {
  private readonly index = new ToolSearchIndex();

  constructor(private readonly deps: ToolSearchDeps) {}

  /** Registers `tool_search` with pi; requests leave it out while no tool is deferred. */
  register(): void {
    this.deps.registerTool({
      name: TOOL_SEARCH_NAME,
      label: "MCP tool search",
      description: TOOL_SEARCH_DESCRIPTION,
      parameters: TOOL_SEARCH_PARAMETERS as never,
      execute: async (_id, params: { query?: unknown; limit?: unknown }) => {
        const query = typeof params.query === "string" ? params.query : "";
        const limit =
          typeof params.limit === "number" && Number.isFinite(params.limit)
            ? Math.min(Math.max(1, Math.floor(params.limit)), MAX_SEARCH_LIMIT)
            : DEFAULT_SEARCH_LIMIT;
        const { text, loaded } = this.search(query, limit);
        return { content: [{ type: "text", text }], details: { query, loaded } satisfies ToolSearchDetails };
      },
    });
  }

  /**
   * Brings the index in line with the tools the registry has now (after a server's list arrives, or `auto` is
   * decided), and with which servers the shared tools reach.
   */
  sync(): void {
    const { registry, exposure } = this.deps;
    const docs: SearchableTool[] = [];
    for (const tool of registry.tools) {
      if (exposure.exposureOf(tool.server, tool.originalName) === "deferred")
        docs.push(searchable(tool, this.deps.serverDescription(tool.server)));
    }
    for (const tool of this.deps.sharedTools()) {
      if (exposure.sharedExposure(tool.servers) !== "deferred") continue;
      // Found by what it does and by the names of the servers it reaches.
      const { name, description, inputSchema } = tool;
      docs.push(
        searchableTool(
          { name, description, inputSchema },
          NO_SERVER,
          name,
          `MCP resources of ${tool.servers.join(", ")}`,
        ),
      );
    }
    const current = new Set(docs.map((doc) => doc.name));
    for (const doc of docs) {
      const known = this.index.get(doc.name);
      if (!known || JSON.stringify(known) !== JSON.stringify(doc)) this.index.add(doc);
    }
    for (const name of this.index.names()) if (!current.has(name)) this.index.remove(name);
  }

  /** Ranks the deferred tools for a request, loads the best and records them. */
  search(query: string, limit: number): { text: string; loaded: ToolRef[] } {
    const hits = this.index.find(query, limit);
    const tools = hits.map((hit) => this.index.get(hit.name)!);
    const refs = tools.map((t) => ({ server: t.server, tool: t.originalName }));
    const added = this.deps.exposure.load(refs);
    if (added.length) this.deps.record(added);
    const lines = tools.map((t) => ({
      name: t.name,
      ...(t.server === NO_SERVER ? {} : { server: t.server }),
      description: t.description,
    }));
    return { text: formatSearchResult(query, lines, this.index.size), loaded: refs };
  }

  /** The tools a request to the model leaves out now. */
  undeclared(): Set<string> {
    const { registry, exposure } = this.deps;
    const names = new Set<string>();
    for (const tool of registry.tools) if (!exposure.isDeclared(tool.server, tool.originalName)) names.add(tool.name);
    for (const tool of this.deps.sharedTools())
      if (!exposure.isSharedDeclared(tool.name, tool.servers)) names.add(tool.name);
    if (this.index.size === 0) names.add(TOOL_SEARCH_NAME);
    return names;
  }

  /**
   * Every tool this search decides the declaration of (the MCP tools, the shared tools and `tool_search`), and whether
   * it is declared now.
   */
  declarations(): Map<string, boolean> {
    const undeclared = this.undeclared();
    const names = [
      ...this.deps.registry.tools.map((t) => t.name),
      ...this.deps.sharedTools().map((t) => t.name),
      TOOL_SEARCH_NAME,
    ];
    return new Map(names.map((name) => [name, !undeclared.has(name)]));
  }

  /** The servers with deferred tools (a deferred shared tool's servers among them), for the system prompt's line about them. */
  deferredServers(): DeferredServer[] {
    const servers = new Map<string, DeferredServer>();
    const add = (server: string, description: string | undefined) => {
      if (!servers.has(server)) servers.set(server, { server, description });
    };
    const shared = new Map(this.deps.sharedTools().map((tool) => [tool.name, tool]));
    for (const name of this.index.names()) {
      const tool = this.index.get(name)!;
      if (tool.server !== NO_SERVER) add(tool.server, tool.serverDescription);
      else for (const server of shared.get(name)?.servers ?? []) add(server, this.deps.serverDescription(server));
    }
    return [...servers.values()];
  }

  /** Every MCP tool with what its entry in a request in this wire format costs, for the `auto` decision. */
  costedTools(wire: ToolWire): CostedTool[] {
    const { registry } = this.deps;
    return registry.tools.flatMap((tool) => {
      const definition = registry.definition(tool.name);
      if (!definition) return [];
      return [{ server: tool.server, tool: tool.originalName, chars: definitionChars(definition, wire) }];
    });
  }
}
