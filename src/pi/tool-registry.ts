/**
 * MCP tools → pi tools: provider-safe unique names, schemas pi validates before a call, and an `execute` that goes
 * through the server's connection (looked up at call time, so a reconnect is picked up) and normalises the result.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  type ExtensionAPI,
  formatSize,
  type ToolDefinition,
  truncateHead,
} from "@mariozechner/pi-coding-agent";
import type { Progress, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { TSchema } from "typebox";
import type { EventSink } from "../common/events.ts";
import { Compile } from "typebox/compile";
import { allocateToolName, PI_BUILTIN_TOOL_NAMES, toolNameFor } from "../tools/naming.ts";
import { normalizeToolResult, type PiContent } from "../tools/output.ts";
import { normalizeInputSchema, OPEN_OBJECT_SCHEMA } from "../tools/schema.ts";
import type { ServerConnection } from "../connection/server-connection.ts";

export interface RegisteredTool {
  /** The name the model sees. */
  name: string;
  server: string;
  /** The tool's name on its MCP server. */
  originalName: string;
  description: string;
}

export interface ToolDetails {
  server: string;
  tool: string;
  structuredContent?: unknown;
  truncated?: { fullOutputPath: string; totalBytes: number };
  progress?: Progress;
}

type RegisterTool = ExtensionAPI["registerTool"];

export function progressText(progress: Progress): string {
  const amount = progress.total !== undefined ? `${progress.progress}/${progress.total}` : `${progress.progress}`;
  return progress.message ? `progress ${amount}: ${progress.message}` : `progress ${amount}`;
}

/** Caps text the way pi's own tools do; the whole text goes to a temp file the model is told about. */
async function capText(text: string, server: string, tool: string): Promise<{ text: string; truncated?: ToolDetails["truncated"] }> {
  const result = truncateHead(text, { maxBytes: DEFAULT_MAX_BYTES, maxLines: DEFAULT_MAX_LINES });
  if (!result.truncated) return { text };
  const dir = await mkdtemp(path.join(tmpdir(), "pi-mcp-"));
  const file = path.join(dir, `${`${server}-${tool}`.replace(/[^A-Za-z0-9_.-]/g, "_")}.txt`);
  await writeFile(file, text, { mode: 0o600 });
  const note =
    `\n\n[Output truncated: ${result.outputLines} of ${result.totalLines} lines ` +
    `(${formatSize(result.outputBytes)} of ${formatSize(result.totalBytes)}). Full output saved to: ${file}]`;
  return { text: result.content + note, truncated: { fullOutputPath: file, totalBytes: result.totalBytes } };
}

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

/** What the registry remembers of a tool so a changed definition can be told from an unchanged one. */
function signature(tool: Tool): string {
  return JSON.stringify([tool.title, tool.description, tool.inputSchema, tool.annotations?.title]);
}

export class ToolRegistry {
  private readonly byName = new Map<string, RegisteredTool>();
  private readonly definitions = new Map<string, ToolDefinition<TSchema, ToolDetails>>();
  /** `server\0tool` → name, so the same tool keeps its name when its server's list is registered again. */
  private readonly assigned = new Map<string, string>();
  private readonly signatures = new Map<string, string>();
  /** Names of tools their server stopped listing; their definitions only explain that. */
  private readonly withdrawn = new Set<string>();
  /** Activation changes asked for before pi's session could take them. */
  private pending: { add: Set<string>; remove: Set<string> } = { add: new Set(), remove: new Set() };
  private activation?: ToolActivation;
  private readonly reserved: Map<string, string>;
  readonly warnings: string[] = [];

  constructor(
    private readonly registerTool: RegisterTool,
    private readonly connectionFor: (server: string) => ServerConnection | undefined,
    reservedNames: readonly string[] = PI_BUILTIN_TOOL_NAMES,
    private readonly events?: EventSink,
  ) {
    this.reserved = new Map(reservedNames.map((name) => [name, `pi's built-in tool '${name}'`]));
  }

  get tools(): RegisteredTool[] {
    return [...this.byName.values()];
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
  syncServer(connection: ServerConnection, tools: readonly Tool[]): { added: string[]; updated: string[]; removed: string[] } {
    const server = connection.name;
    const added: RegisteredTool[] = [];
    const updated: RegisteredTool[] = [];
    const seen = new Set<string>();
    for (const tool of tools) {
      const key = `${server}\0${tool.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const name = this.assigned.get(key);
      const known = name !== undefined && this.byName.has(name);
      if (known && this.signatures.get(key) === signature(tool)) continue;
      const registered = this.registerOne(connection, tool);
      this.signatures.set(key, signature(tool));
      (known ? updated : added).push(registered);
      if (this.withdrawn.delete(registered.name)) this.activate(registered.name, true);
    }
    const removed: RegisteredTool[] = [];
    for (const tool of this.toolsOf(server)) {
      if (seen.has(`${server}\0${tool.originalName}`)) continue;
      this.withdraw(tool);
      removed.push(tool);
    }
    const describe = (list: RegisteredTool[]) => list.map((t) => ({ name: t.name, originalName: t.originalName }));
    if (added.length) this.events?.("tools.registered", { serverId: server, tools: describe(added) });
    if (updated.length) this.events?.("tools.updated", { serverId: server, tools: describe(updated) });
    if (removed.length) this.events?.("tools.deregistered", { serverId: server, tools: describe(removed) });
    return { added: added.map((t) => t.name), updated: updated.map((t) => t.name), removed: removed.map((t) => t.name) };
  }

  /** Takes a tool out of the model's view; its name stays reserved, so it comes back under the same name. */
  private withdraw(tool: RegisteredTool): void {
    this.byName.delete(tool.name);
    this.signatures.delete(`${tool.server}\0${tool.originalName}`);
    this.withdrawn.add(tool.name);
    const definition = this.definitions.get(tool.name);
    if (definition) {
      const stub: ToolDefinition<TSchema, ToolDetails> = {
        ...definition,
        description: `(No longer available: MCP server '${tool.server}' removed this tool.) ${tool.description}`,
        execute: async () => {
          throw new Error(
            `Tool '${tool.name}' is no longer available: MCP server '${tool.server}' stopped listing its tool '${tool.originalName}'. Use another tool.`,
          );
        },
      };
      this.definitions.set(tool.name, stub);
      this.registerTool(stub);
    }
    this.activate(tool.name, false);
  }

  /** Hands pi's active-tool controls to the registry, and applies what waited for them. */
  bindActivation(activation: ToolActivation): void {
    this.activation = activation;
    const { add, remove } = this.pending;
    this.pending = { add: new Set(), remove: new Set() };
    if (add.size || remove.size) this.applyActivation(add, remove);
  }

  private activate(name: string, on: boolean): void {
    if (!this.activation) {
      (on ? this.pending.add : this.pending.remove).add(name);
      (on ? this.pending.remove : this.pending.add).delete(name);
      return;
    }
    this.applyActivation(on ? new Set([name]) : new Set(), on ? new Set() : new Set([name]));
  }

  private applyActivation(add: Set<string>, remove: Set<string>): void {
    try {
      const active = this.activation!.getActiveTools();
      const next = active.filter((n) => !remove.has(n));
      for (const name of add) if (!next.includes(name)) next.push(name);
      if (next.length !== active.length || next.some((n, i) => n !== active[i])) this.activation!.setActiveTools(next);
    } catch (error) {
      // The session this registry was bound to is gone (reload); the next session binds again.
      this.warnings.push(`Could not update pi's active tools: ${String(error)}`);
    }
  }

  private registerOne(connection: ServerConnection, tool: Tool): RegisteredTool {
    const server = connection.name;
    const key = `${server}\0${tool.name}`;
    let name = this.assigned.get(key);
    if (name === undefined) {
      const wanted = toolNameFor(server, tool.name, connection.config.prefix);
      name = allocateToolName(wanted, (candidate) => this.ownerOf(candidate) !== undefined || this.withdrawn.has(candidate));
      if (name !== wanted) {
        this.warnings.push(
          `Tool name '${wanted}' of MCP server '${server}' (tool '${tool.name}') is already taken by ${this.ownerOf(wanted) ?? "a tool its server withdrew"}; registered as '${name}'`,
        );
      }
      this.assigned.set(key, name);
    }
    const description = tool.description?.trim() || `Tool '${tool.name}' from MCP server '${server}'`;
    const registered: RegisteredTool = { name, server, originalName: tool.name, description };
    this.byName.set(name, registered);
    const definition = this.definition(registered, tool);
    this.definitions.set(name, definition);
    this.registerTool(definition);
    return registered;
  }

  /**
   * Moves tools of ours that another extension's tool of the same name shadows (pi keeps the first extension's) to
   * free names. Other extensions' tools are only known once the session runs, so this runs at session start.
   */
  resolveShadowed(piTools: readonly PiToolInfo[]): void {
    const piByName = new Map(piTools.map((t) => [t.name, t]));
    const isTaken = (candidate: string) => piByName.has(candidate) || this.ownerOf(candidate) !== undefined || this.withdrawn.has(candidate);
    for (const tool of this.tools) {
      const winner = piByName.get(tool.name);
      const definition = this.definitions.get(tool.name);
      if (!winner || !definition || winner.parameters === definition.parameters) continue;
      const name = allocateToolName(tool.name, isTaken);
      this.warnings.push(
        `Tool name '${tool.name}' of MCP server '${tool.server}' (tool '${tool.originalName}') is already used by another extension (${winner.sourceInfo.path}); registered as '${name}'`,
      );
      this.byName.delete(tool.name);
      this.definitions.delete(tool.name);
      const moved: RegisteredTool = { ...tool, name };
      this.byName.set(name, moved);
      this.assigned.set(`${tool.server}\0${tool.originalName}`, name);
      const renamed = { ...definition, name };
      this.definitions.set(name, renamed);
      this.registerTool(renamed);
    }
  }

  private parameters(server: string, tool: Tool): TSchema {
    const { schema, warnings } = normalizeInputSchema(tool.inputSchema);
    for (const warning of warnings) this.warnings.push(`MCP server '${server}', tool '${tool.name}': ${warning}`);
    try {
      // pi validates arguments with TypeBox before execute; a schema it cannot compile would fail every call.
      Compile(schema as TSchema);
      return schema as TSchema;
    } catch (error) {
      this.warnings.push(`MCP server '${server}', tool '${tool.name}': input schema cannot be used (${String(error)}); arguments are passed through unchecked`);
      return { ...OPEN_OBJECT_SCHEMA, properties: {} } as TSchema;
    }
  }

  private definition(registered: RegisteredTool, tool: Tool): ToolDefinition<TSchema, ToolDetails> {
    const { server, originalName } = registered;
    const title = tool.title ?? tool.annotations?.title ?? originalName;
    return {
      name: registered.name,
      label: `${title} (${server})`,
      description: registered.description,
      parameters: this.parameters(server, tool),
      execute: async (_toolCallId, params, signal, onUpdate) => {
        const connection = this.connectionFor(server);
        if (!connection) throw new Error(`MCP server '${server}' is no longer configured; its tool '${originalName}' cannot run`);
        const result = await connection.callTool(originalName, (params ?? {}) as Record<string, unknown>, {
          signal,
          onProgress: (progress) =>
            onUpdate?.({ content: [{ type: "text", text: progressText(progress) }], details: { server, tool: originalName, progress } }),
        });
        const normalized = normalizeToolResult(result);
        if (normalized.isError) {
          throw new Error(normalized.text || `MCP tool '${originalName}' on server '${server}' reported an error without a message`);
        }
        const details: ToolDetails = { server, tool: originalName };
        if (result.structuredContent !== undefined) details.structuredContent = result.structuredContent;
        const content: PiContent[] = [];
        for (const part of normalized.content) {
          if (part.type !== "text") {
            content.push(part);
            continue;
          }
          const capped = await capText(part.text, server, originalName);
          if (capped.truncated) details.truncated = capped.truncated;
          content.push({ type: "text", text: capped.text });
        }
        return { content, details };
      },
    };
  }
}
