/**
 * The MCP tools pi has: each server's tools registered under provider-safe unique names (one pi tool each, built in
 * ./tool-definition.ts), kept in line with the lists servers send, and pi's active set kept in line with them.
 */
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import type { Tool, ToolAnnotations } from "@modelcontextprotocol/client";
import type { EventSink } from "../common/events.ts";
import type { Logger } from "../common/log-file.ts";
import type { ServerConnection } from "../connection/server-connection.ts";
import { toolDescription } from "../exposure/definition-cost.ts";
import { TOOL_SEARCH_NAME } from "../exposure/tool-search-text.ts";
import { allocateToolName, PI_BUILTIN_TOOL_NAMES, toolNameFor } from "../translate/naming.ts";
import { type McpProvenance, mcpProvenance } from "../translate/provenance.ts";
import { signature, uniqueByName } from "../translate/server-tool-list.ts";
import { type McpToolDefinition, toolDefinition, unavailableDefinition } from "./tool-definition.ts";
import * as toolNotes from "./tool-notes.ts";
import { LIST_RESOURCES, LIST_TEMPLATES, READ_RESOURCE } from "./resource-tools.ts";

const BRIDGE_TOOL_NAMES = [TOOL_SEARCH_NAME, LIST_RESOURCES, LIST_TEMPLATES, READ_RESOURCE];

export interface RegisteredTool {
  /** The name the model sees. */
  name: string;
  server: string;
  /** The tool's name on its MCP server. */
  originalName: string;
  description: string;
  /** Where the tool comes from: `{source: "mcp", serverId, originalName}`, also in the bus events. */
  provenance: McpProvenance;
  /** The server's display name for the tool. */
  title?: string;
  /** The server's hints about the tool (read-only, destructive, …), as it listed them. */
  annotations?: ToolAnnotations;
  /** The shape of the tool's `structuredContent`, as the server declared it (the SDK checks results against it). */
  outputSchema?: Tool["outputSchema"];
  /** The tool's parameters as the server declared them (tool search reads their names and descriptions). */
  inputSchema: Tool["inputSchema"];
}

type RegisterTool = ExtensionAPI["registerTool"];

/** What pi's `getAllTools()` reports of a tool: enough to tell whose it is. */
export interface PiToolInfo {
  name: string;
  parameters: unknown;
  sourceInfo: { path: string };
}

/** How the registry changes what the model sees; available once pi's session runs (not inside the factory). */
export interface ToolActivation {
  getActiveTools(): string[];
  setActiveTools(names: string[]): void;
}

export interface ToolRegistryOptions {
  events?: EventSink;
  /** The configured servers in config order (highest priority first): who keeps a contested name. */
  serverOrder?: () => readonly string[];
  /** Tools the model must never reach: they get a name and a definition, but pi never has them. */
  isHidden?: (server: string, tool: string) => boolean;
  /** Where each name clash between servers and each tool whose schema the model cannot fully see is written. */
  logger?: Logger;
  /** Whether this pi hands scripts a tool's structured result (./tool-definition.ts, `scriptResults`). */
  scriptResults?: boolean;
}

/**
 * Which tool gets a name two servers want: the rule is config order (the server from the higher-priority file, or
 * earlier in its file, keeps the plain name; the other gets `_2`), and it must hold whichever server connects first.
 * Until pi's session runs, no model has seen any name, so whenever a server's list arrives every name is dealt again
 * in config order and a tool that loses its name moves. Once the session runs (`bindActivation`), a name stays with
 * its tool: the model may have seen it, and a call it makes later must still reach the same tool. A server that
 * connects after that (one slower than the startup budget) therefore takes the next free name, not a name in use.
 */
export class ToolRegistry {
  private readonly byName = new Map<string, RegisteredTool>();
  private readonly definitions = new Map<string, McpToolDefinition>();
  /** `server\0tool` → name, so the same tool keeps its name when its server's list is registered again. */
  private readonly assigned = new Map<string, string>();
  private readonly signatures = new Map<string, string>();
  /** Names of tools their server stopped listing; their definitions only explain that. */
  private readonly withdrawn = new Set<string>();
  /** Each server's connection and the tools it lists now; servers in the order their lists first arrived. */
  private readonly listed = new Map<string, { connection: ServerConnection; tools: Tool[] }>();
  /** True once pi's session runs: from then on names never move (see the class comment). */
  private settled = false;
  /** Activation changes asked for before pi's session could take them. */
  private pending: { add: Set<string>; remove: Set<string> } = { add: new Set(), remove: new Set() };
  private activation?: ToolActivation;
  /** pi's built-in tools' names and the bridge's own, which no MCP tool may take (pi keeps one tool of a name). */
  private readonly reserved = new Map([
    ...PI_BUILTIN_TOOL_NAMES.map((name) => [name, `pi's built-in tool '${name}'`] as const),
    ...BRIDGE_TOOL_NAMES.map((name) => [name, `the MCP bridge's own tool '${name}'`] as const),
  ]);
  /** Why a tool did not get the name it wanted, by `server\0tool`; dealt again with the names. */
  private readonly collisions = new Map<string, toolNotes.Collision>();
  /** Clashes already in the log: names are dealt again as lists arrive, and a clash is written once. */
  private readonly loggedClashes = new Set<string>();
  /** Rule keywords of a tool's schema the model's copy leaves out, by `server\0tool`. */
  private readonly uncarried = new Map<string, string[]>();
  private readonly notes: string[] = [];

  constructor(
    private readonly registerTool: RegisterTool,
    private readonly connectionFor: (server: string) => ServerConnection | undefined,
    private readonly options: ToolRegistryOptions = {},
  ) {}

  /** What the user should hear about: names pi or a server's own tools took, schemas that could not be used. */
  get warnings(): string[] {
    return [
      ...[...this.collisions.values()].filter((c) => !toolNotes.isClash(c)).map(toolNotes.takenWarning),
      ...this.notes,
    ];
  }

  /** What the user should hear about a server's tools: a line per server it shares names with, one on schemas. */
  notesFor(server: string): { clashes: string[]; schema: string[] } {
    const uncarried = this.toolsOf(server).map((t) => this.uncarried.get(`${server}\0${t.originalName}`));
    const clashes = toolNotes.clashNotes(server, this.collisions.values());
    const shown = (this.listed.get(server)?.tools ?? []).filter((t) => !this.options.isHidden?.(server, t.name));
    return { clashes, schema: [...toolNotes.uncarriedNote(uncarried), ...toolNotes.typelessNote(shown)] };
  }

  /** Clashes between servers into the log, each once: names are final only once the session runs. */
  private logClashes(): void {
    for (const [key, c] of this.collisions) {
      if (!toolNotes.isClash(c) || this.loggedClashes.has(`${key}\0${c.name}`)) continue;
      this.loggedClashes.add(`${key}\0${c.name}`);
      this.options.logger?.log(toolNotes.clashRecord(c));
    }
  }

  get tools(): RegisteredTool[] {
    return [...this.byName.values()];
  }

  /** What the model is sent of a tool (name, description, parameters), if it is one of ours. */
  definition(name: string): McpToolDefinition | undefined {
    return this.definitions.get(name);
  }

  /** The MCP tool a pi tool name stands for, if it is one of ours and its server still lists it. */
  find(name: string): RegisteredTool | undefined {
    return this.byName.get(name);
  }

  toolsOf(server: string): RegisteredTool[] {
    return this.tools.filter((t) => t.server === server);
  }

  private ownerOf(name: string): string | undefined {
    const reserved = this.reserved.get(name);
    if (reserved) return reserved;
    const tool = this.byName.get(name);
    return tool ? `tool '${tool.originalName}' of MCP server '${tool.server}'` : undefined;
  }

  /** Registers every tool of a connected server with pi. */
  registerServer(connection: ServerConnection): RegisteredTool[] {
    this.syncServer(connection, connection.tools);
    return this.toolsOf(connection.name);
  }

  /**
   * Brings pi's tools for a server in line with the list it now serves: new tools are registered, changed ones
   * replaced, and ones it dropped withdrawn (pi cannot unregister: they leave the active set and a call explains).
   */
  syncServer(
    connection: ServerConnection,
    tools: readonly Tool[],
  ): { added: string[]; updated: string[]; removed: string[] } {
    const server = connection.name;
    const list = uniqueByName(tools);
    const listedNames = new Set(list.map((t) => t.name));
    // Tools it stopped listing go first, so their names are free when names are dealt again below.
    const removed = this.toolsOf(server).filter((t) => !listedNames.has(t.originalName));
    for (const tool of removed) this.withdraw(tool);
    this.listed.set(server, { connection, tools: list });
    const { moved, vacated } = this.settled
      ? { moved: new Map<string, RegisteredTool[]>(), vacated: [] }
      : this.dealNamesInConfigOrder();
    const added: RegisteredTool[] = [];
    const updated: RegisteredTool[] = [];
    for (const tool of list) {
      const key = `${server}\0${tool.name}`;
      const name = this.assigned.get(key);
      const current = name === undefined ? undefined : this.byName.get(name);
      const known = current !== undefined && current.server === server && current.originalName === tool.name;
      if (known && this.signatures.get(key) === signature(tool)) continue;
      const registered = this.registerOne(connection, tool);
      this.signatures.set(key, signature(tool));
      (known ? updated : added).push(registered);
      if (this.withdrawn.delete(registered.name)) this.activate(registered.name, true);
    }
    for (const { name, tool, definition } of vacated) if (!this.byName.has(name)) this.retire(name, tool, definition);
    for (const tool of moved.get(server) ?? []) if (!updated.some((t) => t.name === tool.name)) updated.push(tool);
    const describe = (list: RegisteredTool[]) =>
      list.map((t) => ({ name: t.name, originalName: t.originalName, provenance: t.provenance }));
    if (added.length) this.options.events?.("tools.registered", { serverId: server, tools: describe(added) });
    if (updated.length) this.options.events?.("tools.updated", { serverId: server, tools: describe(updated) });
    if (removed.length) this.options.events?.("tools.deregistered", { serverId: server, tools: describe(removed) });
    for (const [other, renamed] of moved)
      if (other !== server) this.options.events?.("tools.updated", { serverId: other, tools: describe(renamed) });
    const names = (list: RegisteredTool[]) => list.map((t) => t.name);
    return { added: names(added), updated: names(updated), removed: names(removed) };
  }

  /** The servers whose lists arrived, in config order; a server the order does not name comes last, as it arrived. */
  private inConfigOrder(): Array<{ connection: ServerConnection; tools: Tool[] }> {
    const order = this.options.serverOrder?.() ?? [];
    const rank = (server: string) => (order.includes(server) ? order.indexOf(server) : order.length);
    return [...this.listed.values()]
      .map((entry, arrival) => ({ entry, arrival, rank: rank(entry.connection.name) }))
      .sort((a, b) => a.rank - b.rank || a.arrival - b.arrival)
      .map(({ entry }) => entry);
  }

  /**
   * Before the session runs: gives every listed tool its name afresh, servers in config order and each server's tools
   * in its own order, and moves the registered tools whose name changed. Returns them by server, and the names they
   * left (which the caller retires unless a new tool takes them).
   */
  private dealNamesInConfigOrder(): {
    moved: Map<string, RegisteredTool[]>;
    vacated: Array<{ name: string; tool: RegisteredTool; definition: McpToolDefinition }>;
  } {
    const owners = new Map<string, { owner: string; ownerServer?: string }>(
      [...this.reserved].map(([name, owner]) => [name, { owner }]),
    );
    const names = new Map<string, string>();
    this.collisions.clear();
    const hidden = (server: string, tool: Tool) => Number(this.options.isHidden?.(server, tool.name) ?? false);
    // A hidden tool never reaches the model: it is named after every visible one (taking no name one wants), unsaid.
    const dealt = this.inConfigOrder()
      .flatMap(({ connection, tools }) => tools.map((tool) => ({ connection, tool })))
      .sort((a, b) => hidden(a.connection.name, a.tool) - hidden(b.connection.name, b.tool));
    for (const { connection, tool } of dealt) {
      const server = connection.name;
      const key = `${server}\0${tool.name}`;
      const wanted = toolNameFor(server, tool.name, connection.config.prefix);
      // pi still has a withdrawn name (its tool explains it is gone): a hidden tool, never registered, cannot take it.
      const name = allocateToolName(wanted, (c) => owners.has(c) || (!!hidden(server, tool) && this.withdrawn.has(c)));
      if (name !== wanted && !hidden(server, tool))
        this.collisions.set(key, { server, tool: tool.name, wanted, name, ...owners.get(wanted)! });
      owners.set(name, { owner: `tool '${tool.name}' of MCP server '${server}'`, ownerServer: server });
      names.set(key, name);
    }
    // A withdrawn tool whose name went to a listed one loses it: should it come back, it gets a name like any other.
    for (const [key, name] of this.assigned) if (!names.has(key) && owners.has(name)) this.assigned.delete(key);
    const moves: Array<{ tool: RegisteredTool; definition: McpToolDefinition; to: string }> = [];
    for (const [key, name] of names) {
      const from = this.assigned.get(key);
      this.assigned.set(key, name);
      if (from === undefined || from === name) continue;
      const tool = this.byName.get(from);
      const definition = this.definitions.get(from);
      if (tool && definition && `${tool.server}\0${tool.originalName}` === key)
        moves.push({ tool, definition, to: name });
    }
    // All out of their old names before any takes a new one: two tools may swap.
    for (const { tool } of moves) {
      this.byName.delete(tool.name);
      this.definitions.delete(tool.name);
    }
    const moved = new Map<string, RegisteredTool[]>();
    for (const { tool, definition, to } of moves) {
      const renamed: RegisteredTool = { ...tool, name: to };
      this.byName.set(to, renamed);
      this.install({ ...definition, name: to });
      if (this.withdrawn.delete(to)) this.activate(to, true);
      moved.set(tool.server, [...(moved.get(tool.server) ?? []), renamed]);
    }
    return { moved, vacated: moves.map(({ tool, definition }) => ({ name: tool.name, tool, definition })) };
  }

  private install(definition: McpToolDefinition): void {
    this.definitions.set(definition.name, definition);
    const tool = this.byName.get(definition.name);
    if (tool && this.options.isHidden?.(tool.server, tool.originalName)) return;
    this.registerTool(definition);
  }

  /**
   * A name pi still has from before the session, whose tool moved to another name and which nothing took over: pi
   * cannot unregister it, so it leaves the active set and a call to it says where the tool went.
   */
  private retire(name: string, tool: RegisteredTool, definition: McpToolDefinition): void {
    // pi never had a hidden tool's name: there is nothing to retire.
    if (this.options.isHidden?.(tool.server, tool.originalName)) return;
    const which = `tool '${tool.originalName}' of MCP server '${tool.server}'`;
    const message = `Tool '${name}' is no longer available: ${which} has another name now; use that name from your tool list.`;
    this.install(unavailableDefinition(definition, name, `${which} has another name now`, message));
    this.withdrawn.add(name);
    this.activate(name, false);
  }

  /**
   * Takes a tool out of the model's view; its name stays reserved, so it comes back under the same name (before the
   * session runs names are dealt afresh anyway, so there another tool may take it).
   */
  private withdraw(tool: RegisteredTool): void {
    this.byName.delete(tool.name);
    this.signatures.delete(`${tool.server}\0${tool.originalName}`);
    if (this.options.isHidden?.(tool.server, tool.originalName)) {
      // pi never had its name: listed again, it takes a free one, not one a visible tool has since.
      this.assigned.delete(`${tool.server}\0${tool.originalName}`);
      this.definitions.delete(tool.name);
      return;
    }
    this.withdrawn.add(tool.name);
    const definition = this.definitions.get(tool.name);
    const removed = `MCP server '${tool.server}' removed this tool`;
    const message = `Tool '${tool.name}' is no longer available: MCP server '${tool.server}' stopped listing its tool '${tool.originalName}'. Use another tool.`;
    if (definition) this.install(unavailableDefinition(definition, tool.name, removed, message));
    this.activate(tool.name, false);
  }

  /**
   * Hands pi's active-tool controls to the registry, and applies what waited for them. pi's session runs from here on:
   * names no longer move.
   */
  bindActivation(activation: ToolActivation): void {
    this.settled = true;
    this.logClashes();
    this.activation = activation;
    const { add, remove } = this.pending;
    this.pending = { add: new Set(), remove: new Set() };
    if (add.size || remove.size) this.applyActivation(add, remove);
  }

  /** Shows a tool to the model or hides it; before pi's session runs, the change waits for it. */
  activate(name: string, on: boolean): void {
    if (!this.activation) {
      (on ? this.pending.add : this.pending.remove).add(name);
      (on ? this.pending.remove : this.pending.add).delete(name);
      return;
    }
    this.applyActivation(on ? new Set([name]) : new Set(), on ? new Set() : new Set([name]));
  }

  /** Shows these tools to the model and hides those, in one change of pi's active set. */
  activateAll(changes: ReadonlyMap<string, boolean>): void {
    if (!this.activation) {
      for (const [name, on] of changes) this.activate(name, on);
      return;
    }
    const add = new Set<string>();
    const remove = new Set<string>();
    for (const [name, on] of changes) (on ? add : remove).add(name);
    this.applyActivation(add, remove);
  }

  private applyActivation(add: Set<string>, remove: Set<string>): void {
    try {
      const active = this.activation!.getActiveTools();
      const next = active.filter((n) => !remove.has(n));
      for (const name of add) if (!next.includes(name)) next.push(name);
      if (next.length !== active.length || next.some((n, i) => n !== active[i])) this.activation!.setActiveTools(next);
    } catch (error) {
      // The session this registry was bound to is gone (reload); the next session binds again.
      this.notes.push(`Could not update pi's active tools: ${String(error)}`);
    }
  }

  private registerOne(connection: ServerConnection, tool: Tool): RegisteredTool {
    const server = connection.name;
    const key = `${server}\0${tool.name}`;
    const hidden = this.options.isHidden?.(server, tool.name);
    let name = this.assigned.get(key);
    if (name === undefined) {
      // Only once the session runs (before, every name was dealt already): the first name nobody has or had.
      const wanted = toolNameFor(server, tool.name, connection.config.prefix);
      const taken = (candidate: string) => this.ownerOf(candidate) !== undefined || this.withdrawn.has(candidate);
      const holder = this.byName.get(wanted);
      // pi never had a hidden tool's name: a visible tool that wants it takes it, the hidden one the next free name.
      if (!hidden && holder && this.options.isHidden?.(holder.server, holder.originalName))
        this.moveTo(holder, this.definitions.get(wanted)!, allocateToolName(wanted, taken));
      name = allocateToolName(wanted, taken);
      if (name !== wanted && !hidden) {
        const owner = this.ownerOf(wanted) ?? "a tool its server withdrew";
        this.collisions.set(key, { server, tool: tool.name, wanted, name, owner, ownerServer: holder?.server });
        this.logClashes();
      }
      this.assigned.set(key, name);
    }
    const description = toolDescription(server, tool);
    this.uncarried.delete(key);
    const uncarried = (keywords: string[]) => {
      // The model never sees a hidden tool: what its copy leaves out is nothing to tell the user.
      if (!hidden) this.uncarried.set(key, keywords);
      this.options.logger?.log(toolNotes.uncarriedRecord(server, tool.name, keywords));
    };
    const registered: RegisteredTool = {
      name,
      server,
      originalName: tool.name,
      description,
      provenance: mcpProvenance(server, tool.name),
      inputSchema: tool.inputSchema,
    };
    const title = tool.title || tool.annotations?.title;
    if (title) registered.title = title;
    if (tool.annotations) registered.annotations = tool.annotations;
    if (tool.outputSchema) registered.outputSchema = tool.outputSchema;
    this.byName.set(name, registered);
    this.install(
      toolDefinition({
        name,
        server,
        tool,
        description,
        connectionFor: this.connectionFor,
        note: (text) => (hidden ? undefined : this.notes.push(text)),
        uncarried,
        scriptResults: this.options.scriptResults,
      }),
    );
    return registered;
  }

  /**
   * Moves tools of ours that another extension's tool of the same name shadows (pi keeps the first extension's) to
   * free names. Other extensions' tools are only known once the session runs, so this runs at session start.
   */
  resolveShadowed(piTools: readonly PiToolInfo[]): void {
    const piByName = new Map(piTools.map((t) => [t.name, t]));
    const isTaken = (candidate: string) =>
      piByName.has(candidate) || this.ownerOf(candidate) !== undefined || this.withdrawn.has(candidate);
    for (const tool of this.tools) {
      const winner = piByName.get(tool.name);
      const definition = this.definitions.get(tool.name);
      if (!winner || !definition || winner.parameters === definition.parameters) continue;
      const name = allocateToolName(tool.name, isTaken);
      (this.options.isHidden?.(tool.server, tool.originalName) ? [] : this.notes).push(
        `Tool name '${tool.name}' of MCP server '${tool.server}' (tool '${tool.originalName}') is already used by another extension (${winner.sourceInfo.path}); registered as '${name}'`,
      );
      this.moveTo(tool, definition, name);
    }
  }

  /** Moves a tool of ours, and what the model is sent of it, to another name. */
  private moveTo(tool: RegisteredTool, definition: McpToolDefinition, name: string): void {
    this.byName.delete(tool.name);
    this.definitions.delete(tool.name);
    this.byName.set(name, { ...tool, name });
    this.assigned.set(`${tool.server}\0${tool.originalName}`, name);
    this.install({ ...definition, name });
  }
}
