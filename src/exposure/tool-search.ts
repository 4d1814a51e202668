/**
 * The `tool_search` tool: finds deferred MCP tools by what the model needs done (../exposure/tool-search-index.ts) or
 * by name (./tool-names.ts), loads them so the following requests declare them, and records the loads in pi's
 * session. Also says which tools each request leaves out: deferred tools not loaded yet, and `tool_search` itself
 * while nothing is deferred. The bridge's own tools that reach several servers (the resource tools) are deferred,
 * found and loaded alike when their exposure, the widest of those servers', is deferred.
 */
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import type { Tool } from "@modelcontextprotocol/client";
import { definitionChars, type ModelFacingTool, type ToolWire } from "./definition-cost.ts";
import { type SearchableTool, searchableTool, ToolSearchIndex } from "./tool-search-index.ts";
import type { CatalogGroup } from "./tool-catalog.ts";
import { identifierWords, namesInQuery, nearestByName, qualifiedName, resolveNames } from "./tool-names.ts";
import {
  DEFAULT_SEARCH_LIMIT,
  type DeferredServer,
  formatSearchResult,
  MAX_NAMED_TOOLS,
  MAX_SEARCH_LIMIT,
  type NameProblems,
  signInWaitLine,
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

/** An MCP tool pi has, as tool search reads it: the index's names and texts, and its input schema. */
interface ListedTool extends Pick<SearchableTool, "name" | "server" | "originalName" | "title" | "description"> {
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
  /** The configured servers in config order: the catalog's order. */
  serverOrder(): string[];
  /** The servers still making their first connect, whose tools are not known yet (the bridge). */
  starting: {
    readonly startingServers: string[];
    /** Those of them waiting for the user to finish a sign-in: not waited for. */
    readonly signingIn: string[];
    /** Waits for the first connects of the servers `reached` picks, or for `signal`; `waits` hears their names first. */
    untilStarted(reached: (s: string) => boolean, signal?: AbortSignal, waits?: (s: string[]) => void): Promise<void>;
  };
}

interface ToolSearchDetails {
  query: string;
  names: string[];
  loaded: ToolRef[];
}

/** A registered tool as the index takes it: the same reading of a tool that the bench's recall figure measures. */
function searchable(tool: ListedTool, serverDescription: string | undefined): SearchableTool {
  const { originalName, title, description, inputSchema } = tool;
  const asServed = { name: originalName, title, description, inputSchema };
  return searchableTool(asServed, tool.server, tool.name, serverDescription);
}

export class ToolSearch {
  private readonly index = new ToolSearchIndex();
  /** How the current model's provider sends tools, once `auto` was decided. */
  private wire?: ToolWire;
  /** On pi 0.73, the tools pi had when the current run began: the run offers the model no other. */
  private runTools?: ReadonlySet<string>;

  constructor(private readonly deps: ToolSearchDeps) {}

  /** Registers `tool_search` with pi; requests leave it out while no tool is deferred. */
  register(): void {
    this.deps.registerTool({
      name: TOOL_SEARCH_NAME,
      label: "MCP tool search",
      description: TOOL_SEARCH_DESCRIPTION,
      parameters: TOOL_SEARCH_PARAMETERS as never,
      execute: async (_id, params: { query?: unknown; names?: unknown; limit?: unknown }, signal, onUpdate) => {
        const query = typeof params.query === "string" ? params.query : "";
        const given = typeof params.names === "string" ? [params.names] : params.names;
        const names = Array.isArray(given) ? given.filter((n): n is string => typeof n === "string") : [];
        const limit =
          typeof params.limit === "number" && Number.isFinite(params.limit)
            ? Math.min(Math.max(1, Math.floor(params.limit)), MAX_SEARCH_LIMIT)
            : DEFAULT_SEARCH_LIMIT;
        // A server still starting whose tools will be deferred may have it (../pi/starting-waits.ts waits alike).
        await this.deps.starting.untilStarted(
          (server) => this.deps.exposure.mayHave(server, "deferred"),
          signal,
          (servers) => {
            const text = `Waiting for MCP servers still starting: ${servers.join(", ")}`;
            onUpdate?.({ content: [{ type: "text", text }], details: { query, names, loaded: [] } });
          },
        );
        const { text, loaded } = this.search(query, limit, names);
        const signing = this.deps.starting.signingIn.map((server) => signInWaitLine(server));
        const content = [{ type: "text" as const, text: [text, ...signing].join("\n") }];
        return { content, details: { query, names, loaded } satisfies ToolSearchDetails };
      },
    });
  }

  /**
   * Brings the index in line with the tools the registry has now (after a server's list arrives, or `auto` is
   * decided), and with which servers the shared tools reach.
   */
  sync(): void {
    const { registry, exposure } = this.deps;
    // A server whose tools came after `auto` was decided gets its place first (direct while they fit).
    if (this.wire && registry.tools.some((tool) => exposure.isUnplaced(tool.server)))
      exposure.placeLate(this.costedTools(this.wire, (server) => exposure.isUnplaced(server)));
    const docs = registry.tools
      .filter((tool) => exposure.exposureOf(tool.server, tool.originalName) === "deferred")
      .map((tool) => searchable(tool, this.deps.serverDescription(tool.server)));
    // A deferred shared tool is found by what it does and by the names of the servers it reaches.
    for (const tool of this.deps.sharedTools())
      if (exposure.sharedExposure(tool.servers) === "deferred")
        docs.push(searchableTool(tool, NO_SERVER, tool.name, `MCP resources of ${tool.servers.join(", ")}`));
    const current = new Set(docs.map((doc) => doc.name));
    for (const doc of docs) {
      const known = this.index.get(doc.name);
      if (!known || JSON.stringify(known) !== JSON.stringify(doc)) this.index.add(doc);
    }
    for (const { name } of this.index.all()) if (!current.has(name)) this.index.remove(name);
  }

  /**
   * Loads the named tools and the best matches for a request (a request made of tool names alone is names), and
   * records them.
   */
  search(query: string, limit: number, names: readonly string[] = []): { text: string; loaded: ToolRef[] } {
    const all = this.index.all();
    const { names: inQuery, rest: words } = namesInQuery(query, all);
    const named = resolveNames([...names, ...inQuery], all);
    const problems: NameProblems = {
      // The nearest names of the first few only: each costs a search, and the catalog in the prompt lists them all.
      unknown: named.unknown.map((name, i) => ({ name, nearest: i < 3 ? this.nearest(name, all) : [] })),
      ambiguous: named.ambiguous,
      over: named.found.slice(MAX_NAMED_TOOLS).map(qualifiedName),
    };
    const tools = named.found.slice(0, MAX_NAMED_TOOLS);
    if (words.trim()) {
      const unloaded = (tool: SearchableTool) => !tools.includes(tool);
      let hits = this.index.find(words, limit, unloaded);
      // A request reads `git_history` or `listPods` as a name, and names say nothing of the tool; but a model may search
      // with a tool name it guessed: where nothing else matched, its words.
      if (!hits.length) hits = this.index.find(identifierWords(words), limit, unloaded);
      for (const hit of hits) tools.push(this.index.get(hit.name)!);
    }
    const refs = tools.map((t) => ({ server: t.server, tool: t.originalName }));
    const waiting = all.filter((t) => !this.deps.exposure.isLoaded(t.server, t.originalName)).length;
    const added = this.deps.exposure.load(refs);
    if (added.length) this.deps.record(added);
    const lines = tools.map((t) => ({
      name: t.name,
      ...(t.server === NO_SERVER ? {} : { server: t.server }),
      description: t.description,
      nextRun: this.runTools !== undefined && !this.runTools.has(t.name),
    }));
    return { text: formatSearchResult(words, lines, waiting, problems), loaded: refs };
  }

  /**
   * A run begins on a pi that keeps the tools a run began with (pi 0.73): a tool registered during it (its server
   * connected meanwhile, a search waited for it) is loaded for the next run, and the search says so.
   */
  runStarted(): void {
    this.runTools = new Set([...this.deps.registry.tools, ...this.deps.sharedTools()].map((tool) => tool.name));
  }

  /** Up to three deferred tools an unknown name may have meant: by spelling, then by the words in it. */
  private nearest(name: string, all: readonly SearchableTool[]): string[] {
    const near = nearestByName(name, all, 3);
    for (const hit of this.index.find(identifierWords(name), 3)) {
      const tool = this.index.get(hit.name)!;
      if (near.length < 3 && !near.includes(tool)) near.push(tool);
    }
    return near.map(qualifiedName);
  }

  /** The deferred tools by server, in config order (the resource tools last), for the system prompt's catalog. */
  catalog(): CatalogGroup[] {
    const groups = new Map<string, CatalogGroup>();
    for (const tool of this.index.all()) {
      let group = groups.get(tool.server);
      if (!group) {
        group = { server: tool.server, tools: [] };
        if (tool.server !== NO_SERVER && tool.serverDescription) group.description = tool.serverDescription;
        groups.set(tool.server, group);
      }
      group.tools.push({ name: tool.originalName, description: tool.description });
    }
    const shared = groups.get(NO_SERVER);
    if (shared) shared.reaches = [...new Set(this.deps.sharedTools().flatMap((tool) => tool.servers))];
    return this.inConfigOrder([...groups.values()]);
  }

  /** Servers in config order (the resource tools last), whichever connected first: the prompt stays the same. */
  private inConfigOrder<T extends { server: string }>(items: T[]): T[] {
    const order = [...this.deps.serverOrder(), NO_SERVER];
    const rank = (server: string) => (order.includes(server) ? order.indexOf(server) : order.length);
    return items.sort((a, b) => rank(a.server) - rank(b.server));
  }

  /** The tools a request to the model leaves out now. */
  undeclared(): Set<string> {
    const { registry, exposure } = this.deps;
    const names = new Set<string>();
    for (const tool of registry.tools) if (!exposure.isDeclared(tool.server, tool.originalName)) names.add(tool.name);
    for (const tool of this.deps.sharedTools())
      if (!exposure.isSharedDeclared(tool.name, tool.servers)) names.add(tool.name);
    // A server still starting may bring deferred tools: the model can search for them (the search waits for it).
    if (this.index.size === 0 && this.startingDeferred().length === 0) names.add(TOOL_SEARCH_NAME);
    return names;
  }

  /** Servers still making their first connect whose tools (some of them) will be deferred. */
  private startingDeferred(): string[] {
    return this.deps.starting.startingServers.filter((server) => this.deps.exposure.mayHave(server, "deferred"));
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

  /**
   * The servers with deferred tools (a deferred shared tool's servers among them, and those still starting whose tools
   * will be), for the system prompt's line about them.
   */
  deferredServers(): DeferredServer[] {
    const servers = new Map<string, DeferredServer>();
    const add = (server: string, description: string | undefined) => {
      if (!servers.has(server)) servers.set(server, { server, description });
    };
    const shared = new Map(this.deps.sharedTools().map((tool) => [tool.name, tool]));
    for (const tool of this.index.all()) {
      if (tool.server !== NO_SERVER) add(tool.server, tool.serverDescription);
      else for (const server of shared.get(tool.name)?.servers ?? []) add(server, this.deps.serverDescription(server));
    }
    for (const server of this.startingDeferred())
      if (!servers.has(server))
        servers.set(server, { server, description: this.deps.serverDescription(server), starting: true });
    return this.inConfigOrder([...servers.values()]);
  }

  /**
   * Decides `auto` once, from the tools known now, against the model's context window, each tool counted as this
   * wire format sends it; servers whose tools come later are placed as they come (`sync`).
   */
  decideAuto(wire: ToolWire, contextWindow: number | undefined): void {
    this.wire = wire;
    this.deps.exposure.decideAuto(this.costedTools(wire), contextWindow);
  }

  /** Every MCP tool (of the servers `of` names) with what its entry in a request in this wire format costs. */
  costedTools(wire: ToolWire, of: (server: string) => boolean = () => true): CostedTool[] {
    const { registry } = this.deps;
    return registry.tools.flatMap((tool) => {
      const definition = of(tool.server) ? registry.definition(tool.name) : undefined;
      if (!definition) return [];
      return [{ server: tool.server, tool: tool.originalName, chars: definitionChars(definition, wire) }];
    });
  }
}
