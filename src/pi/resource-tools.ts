/**
 * MCP resources as three pi tools, named as pi 1.x, Codex and OpenCode name them so models already know them:
 * `list_mcp_resources`, `list_mcp_resource_templates` and `read_mcp_resource`. They belong to the bridge, not to one
 * server: registered when the first connected server offers resources, and taken out of the model's view while none
 * does (pi cannot unregister). Reading is read-only, so they do not ask for approval; a project server still needs the
 * user's trust to be connected at all. How they reach the model follows the servers they reach (the widest of their
 * exposures, see ../exposure/tool-exposure.ts): behind `tool_search` where those servers' tools are. A read's text is
 * bounded like a tool result's, images go to the model as images, and other binary content is saved to a file under
 * the temp dir (named by the bridge, never by the server) whose path the model gets; those files last as long as pi's
 * session (a `/reload` keeps them), and `removeFiles` takes them away when it ends. A resource read from a server that
 * supports it is subscribed to; its updates are shown as notices.
 */
import { rmSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import type { Resource, ResourceTemplateType as ResourceTemplate } from "@modelcontextprotocol/client";
import { type Static, type TSchema, Type } from "typebox";
import { describeError } from "../common/errors.ts";
import type { EventSink } from "../common/events.ts";
import { lazy } from "../common/lazy.ts";
import { shown, SHOWN } from "../common/terminal-text.ts";
import type { ServerChange } from "../connection/mcp-client.ts";
import type { ServerConnection } from "../connection/server-connection.ts";
import {
  canSubscribe,
  listPage,
  offersResources,
  readResource,
  subscribeResource,
} from "../connection/server-resources.ts";
import type { PiContent } from "../translate/output.ts";
import { type McpProvenance, mcpProvenance } from "../translate/provenance.ts";
import { formatListing, resourceOutput, type ServerPage } from "../translate/resource-output.ts";
import { capText } from "./tool-definition.ts";
import type { SharedTool } from "../exposure/tool-search.ts";

/** They load the MCP SDK: not with pi's start, which loads this file. */
const errorKinds = lazy(() => import("../common/error-kinds.ts"));

export const LIST_RESOURCES = "list_mcp_resources";
export const LIST_TEMPLATES = "list_mcp_resource_templates";
export const READ_RESOURCE = "read_mcp_resource";
export const RESOURCE_TOOL_NAMES = [LIST_RESOURCES, LIST_TEMPLATES, READ_RESOURCE] as const;
/** Each listing's tool, and the MCP method it pages through. */
const LISTS = {
  resources: { tool: LIST_RESOURCES, method: "resources/list" },
  resourceTemplates: { tool: LIST_TEMPLATES, method: "resources/templates/list" },
} as const;

interface ResourceToolDetails {
  /** Where the answer came from: the server, and what was asked of it (a listing, or the resource's URI). */
  provenance?: McpProvenance;
  server?: string;
  uri?: string;
  /** Files the binary contents of a read were saved to. */
  files?: string[];
  truncated?: { fullOutputPath: string; totalBytes: number };
}

export interface ResourceToolsDeps {
  registerTool<T extends TSchema>(definition: ToolDefinition<T, ResourceToolDetails>): void;
  /** Shows a tool to the model or hides it (pi's active set). */
  activate(name: string, on: boolean): void;
  /** Every configured server's connection, in config order. */
  connections(): Iterable<ServerConnection>;
  /** Tells the user something a server said on its own (a subscribed resource changed). */
  notify(text: string): void;
  events?: EventSink;
}

/**
 * The directories binary contents were saved to, in this process. pi's `/reload` loads the extension afresh while the
 * session goes on, and its files with it: so the list is the process's, not one load's.
 */
const SAVED_DIRS = Symbol.for("pi-mcp-bridge.resource-dirs");
/** Each directory's pi session (by id): two sessions in one process (an SDK host) each end with only their own. */
function savedDirs(): Map<string, string> {
  const shared = globalThis as { [SAVED_DIRS]?: Map<string, string> };
  return (shared[SAVED_DIRS] ??= new Map());
}

type ListTool = ToolDefinition<ReturnType<typeof listParameters>, ResourceToolDetails>;
type ReadTool = ToolDefinition<typeof READ_PARAMETERS, ResourceToolDetails>;

function listParameters(what: string) {
  return Type.Object(
    {
      server: Type.Optional(
        Type.String({ description: `Only this MCP server's ${what} (default: every server that offers resources)` }),
      ),
      cursor: Type.Optional(
        Type.String({ description: "The cursor a previous listing gave for `server`, for its next page" }),
      ),
    },
    { additionalProperties: false },
  );
}

type ListParams = Static<ReturnType<typeof listParameters>>;

const READ_PARAMETERS = Type.Object(
  {
    server: Type.String({ description: "The MCP server's name, as in mcp.json" }),
    uri: Type.String({
      description: "The resource's URI, from list_mcp_resources, a template, or a resource link in a tool result",
    }),
  },
  { additionalProperties: false },
);

export class ResourceTools {
  private registered = false;
  private active = false;
  /** The URIs subscribed to on each connection, and the session (its `connectedAt`) they were last asked on. */
  private readonly subscribed = new WeakMap<ServerConnection, { session?: number; uris: Set<string> }>();
  /** Each server's subscribed resources the user was told changed since they were last read (`server\nuri`). */
  private readonly told = new Set<string>();

  constructor(private readonly deps: ResourceToolsDeps) {}

  /** The resource tools once registered, each with the servers it reaches now, for tool search and exposure. */
  tools(): SharedTool[] {
    if (!this.registered) return [];
    const servers = this.offering().map((c) => c.name);
    const definitions: ToolDefinition<TSchema, ResourceToolDetails>[] = this.definitions();
    return definitions.map(({ name, description, parameters }) => ({
      name,
      description,
      inputSchema: parameters as SharedTool["inputSchema"],
      servers,
    }));
  }

  /** The servers whose tools the resource tools reach now: connected (or reconnecting) and offering resources. */
  offering(): ServerConnection[] {
    return [...this.deps.connections()].filter((c) => c.status !== "disabled" && offersResources(c));
  }

  /**
   * Brings the tools in line with the servers: registered once the first server offers resources, shown while any
   * does. `connected` is a server whose tools just arrived: when that is a new session (a reconnect), its
   * subscriptions went with the old one and are asked for again.
   */
  sync(connected?: ServerConnection): void {
    if (connected) this.renew(connected);
    const wanted = this.offering().length > 0;
    if (wanted && !this.registered) {
      this.registered = true;
      this.active = true;
      for (const definition of this.definitions()) this.deps.registerTool<TSchema>(definition);
      return;
    }
    if (!this.registered || wanted === this.active) return;
    this.active = wanted;
    for (const name of RESOURCE_TOOL_NAMES) this.deps.activate(name, wanted);
  }

  /** A server changed its resource list or a resource the bridge subscribed to, or closed for good. */
  changed(connection: ServerConnection, change: ServerChange): void {
    if (change.kind === "closed") return this.sync();
    if (change.kind === "list") {
      // Listings are always fetched afresh, so the next one shows the change; others may want to know now.
      if (change.list === "resources") this.deps.events?.("mcp.resources.changed", { serverId: connection.name });
      return this.sync();
    }
    // Only a resource the bridge subscribed to is told of: a server cannot fill the screen or pi's bus with updates of
    // its own making, and the URI it names is one a read already took (still redacted: a read's URI is the model's).
    if (!this.subscribed.get(connection)?.uris.has(change.uri)) return;
    this.deps.events?.("mcp.resources.updated", { serverId: connection.name, uri: connection.redact(change.uri) });
    // One notice until it is read again: a resource that changes often would fill the screen with the same line.
    if (this.told.size === this.told.add(`${connection.name}\n${change.uri}`).size) return;
    this.deps.notify(
      `MCP server '${connection.name}': resource ${shown(connection.redact(change.uri), SHOWN.line, "visible")} changed (read it again with ${READ_RESOURCE} for the new contents)`,
    );
  }

  private definitions(): [ListTool, ListTool, ReadTool] {
    return [
      {
        name: LIST_RESOURCES,
        label: "List MCP resources",
        description:
          "Lists the resources MCP servers offer (files, documents, data), each with its server and URI; read one with read_mcp_resource. " +
          "Give `server` for one server only; a long listing comes in pages (`cursor`).",
        parameters: listParameters("resources"),
        execute: (_id, params, signal) => this.list(params, signal, "resources"),
      },
      {
        name: LIST_TEMPLATES,
        label: "List MCP resource templates",
        description:
          "Lists the resource templates MCP servers offer: URI patterns (RFC 6570) whose variables you fill in to read a resource with read_mcp_resource. " +
          "Give `server` for one server only; a long listing comes in pages (`cursor`).",
        parameters: listParameters("resource templates"),
        execute: (_id, params, signal) => this.list(params, signal, "resourceTemplates"),
      },
      {
        name: READ_RESOURCE,
        label: "Read MCP resource",
        description:
          "Reads one resource of an MCP server by its URI (from list_mcp_resources, a template, or a resource link in a tool result). " +
          "Text comes back as text, images as images; other binary content is saved to a file whose path is given.",
        parameters: READ_PARAMETERS,
        execute: (_id, params, signal, _update, ctx) =>
          this.read(params, signal, ctx?.sessionManager.getSessionId() ?? ""),
      },
    ];
  }

  /** The connection of a server the model named, or an error that says which servers it can use. */
  private target(server: string): ServerConnection {
    const offering = this.offering();
    const connection = offering.find((c) => c.name === server);
    if (connection) return connection;
    const known = offering.map((c) => `'${c.name}'`).join(", ") || "none";
    const status = [...this.deps.connections()].find((c) => c.name === server)?.status;
    const offers = status === "connected" ? "offers no resources" : `is not connected (${status})`;
    throw new Error(
      `${status ? `MCP server '${server}' ${offers}` : `There is no MCP server '${server}'`}. Servers with resources: ${known}.`,
    );
  }

  private async list(params: ListParams, signal: AbortSignal | undefined, key: keyof typeof LISTS) {
    const { tool, method } = LISTS[key];
    if (params.cursor && !params.server) throw new Error("`cursor` needs `server`: each server pages its own listing.");
    const targets = params.server ? [this.target(params.server)] : this.offering();
    const pages: ServerPage<Resource | ResourceTemplate>[] = await Promise.all(
      targets.map(async (c) => {
        try {
          const { items, nextCursor } = await listPage(c, method, params.cursor, signal);
          return { server: c.name, items, nextCursor };
        } catch (error) {
          // Templates are optional, as in /mcp resources: a server that has no `resources/templates/list` has none.
          if (key === "resourceTemplates" && (await errorKinds()).isMethodNotFound(error))
            return { server: c.name, items: [] };
          return { server: c.name, error: describeError(error) };
        }
      }),
    );
    const only = pages[0];
    if (params.server && only && "error" in only) throw new Error(only.error);
    const capped = await capText(formatListing(key, pages), "mcp", tool);
    // One server's listing is that server's; a listing of all of them names each server in its text.
    const details: ResourceToolDetails = params.server
      ? { server: params.server, provenance: mcpProvenance(params.server, method) }
      : {};
    if (capped.truncated) details.truncated = capped.truncated;
    return { content: [{ type: "text" as const, text: capped.text }], details };
  }

  private async read(params: Static<typeof READ_PARAMETERS>, signal: AbortSignal | undefined, session: string) {
    const connection = this.target(params.server);
    this.told.delete(`${connection.name}\n${params.uri}`);
    const result = await readResource(connection, params.uri, signal);
    const { content, binaries } = resourceOutput(result.contents);
    const details: ResourceToolDetails = {
      server: connection.name,
      uri: params.uri,
      provenance: mcpProvenance(connection.name, params.uri),
    };
    if (binaries.length) {
      const dir = await mkdtemp(path.join(tmpdir(), "pi-mcp-resource-"));
      savedDirs().set(dir, session);
      details.files = [];
      for (const binary of binaries) {
        const file = path.join(dir, binary.fileName);
        await writeFile(file, Buffer.from(binary.data, "base64"), { mode: 0o600 });
        details.files.push(file);
        const line = content[binary.at] as { type: "text"; text: string };
        line.text += `, saved to: ${file}`;
      }
    }
    const out: PiContent[] = [];
    const fileLines = new Set(binaries.map((binary) => content[binary.at]));
    for (const part of content) {
      const last = out.at(-1);
      // Text parts one after another are one text, bounded as a whole as a tool result's is, not each on its own; the
      // line of a file saved stays whole, so a cut never takes its path.
      if (part.type === "text" && last?.type === "text" && !fileLines.has(part) && !fileLines.has(last))
        last.text += `\n${part.text}`;
      else out.push(part);
    }
    for (const [i, part] of out.entries()) {
      if (part.type !== "text") continue;
      const capped = await capText(part.text, connection.name, "resource");
      if (capped.truncated) details.truncated = capped.truncated;
      out[i] = { type: "text", text: capped.text };
    }
    this.subscribe(connection, params.uri);
    return { content: out, details };
  }

  /** Removes the files binary contents were saved to in `session` (all, without one); synchronous for process exit. */
  removeFiles(session?: string): void {
    for (const [dir, owner] of savedDirs())
      if (session === undefined || owner === session)
        savedDirs().delete(dir) && rmSync(dir, { recursive: true, force: true });
  }

  /** Asks the server to say when a resource just read changes, once per session, where the server can. */
  private subscribe(connection: ServerConnection, uri: string): void {
    if (!canSubscribe(connection)) return;
    let entry = this.subscribed.get(connection);
    if (!entry) this.subscribed.set(connection, (entry = { session: connection.connectedAt, uris: new Set() }));
    if (entry.uris.has(uri)) return;
    entry.uris.add(uri);
    this.send(connection, entry.uris, uri);
  }

  /** A server on a new session is asked again for every resource subscribed to on the one before. */
  private renew(connection: ServerConnection): void {
    const entry = this.subscribed.get(connection);
    const session = connection.connectedAt;
    if (!entry || entry.session === session || connection.status !== "connected") return;
    entry.session = session;
    if (!canSubscribe(connection)) return entry.uris.clear();
    for (const uri of entry.uris) this.send(connection, entry.uris, uri);
  }

  private send(connection: ServerConnection, uris: Set<string>, uri: string): void {
    subscribeResource(connection, uri).catch((error: unknown) => {
      uris.delete(uri);
      this.deps.events?.("mcp.resources.subscribe.failed", {
        serverId: connection.name,
        uri,
        error: describeError(error),
      });
    });
  }
}
