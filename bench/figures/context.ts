/**
 * Context: what the MCP tools of a config of real public servers (test/fixtures/public-tools: 16 servers, their
 * `tools/list` answers as captured) cost in every model request, per exposure mode (how well `tool_search` finds the
 * tool a request needs is the `search` section: ./search.ts).
 *
 * - `direct`: every tool as pi sends it, made by the bridge's own registry from the saved lists (the server's limits,
 *   safe text, pi names, the fallback description, parameters as `normalizeInputSchema` makes them), each counted by
 *   `definitionChars` as its entry in an OpenAI Chat Completions request body from pi 0.73 (the format pi uses when no
 *   model is selected, and the most common one): `{"type":"function","function":{name, description, parameters,
 *   "strict":false}}`.
 * - `deferred`: `tool_search`'s own definition plus the one system-prompt line naming the deferred servers (the
 *   fixture config gives the servers no `description`, so the line names them only).
 * - `hidden`: nothing reaches the model.
 *
 * Tokens are characters / 4 (`estimatedTokens`). Every figure here is computed, not timed: one run gives the same
 * numbers as any other, so there is nothing to repeat or take a median of.
 */
import type { Tool } from "@modelcontextprotocol/client";
import { DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_SCHEMA_BYTES, DEFAULT_MAX_TOOLS } from "../../src/config/defaults.ts";
import type { ServerConnection } from "../../src/connection/server-connection.ts";
import { ToolRegistry } from "../../src/pi/tool-registry.ts";
import { definitionChars, estimatedTokens, toolWire } from "../../src/exposure/definition-cost.ts";
import { ServerToolList } from "../../src/translate/server-tool-list.ts";
import {
  deferredServersLine,
  TOOL_SEARCH_DESCRIPTION,
  TOOL_SEARCH_NAME,
  TOOL_SEARCH_PARAMETERS,
} from "../../src/exposure/tool-search-text.ts";
import { publicServers } from "../../test/fixtures/public-tools.ts";
import type { Figure, FigureSection } from "./figure.ts";

/** OpenAI Chat Completions as pi 0.73's pi-ai sends it. */
const WIRE = toolWire(undefined, false);

interface DirectCost {
  tools: number;
  chars: number;
  /** The costliest servers, for the JSON. */
  byServer: Record<string, number>;
}

/** Every fixture tool as the bridge's registry hands it to pi, and the characters of each definition. */
function directCost(): DirectCost {
  const definitions: { name: string; description: string; parameters: unknown }[] = [];
  const registry = new ToolRegistry(
    (definition) => definitions.push(definition),
    () => undefined,
  );
  const limits = {
    maxTools: DEFAULT_MAX_TOOLS,
    maxSchemaBytes: DEFAULT_MAX_SCHEMA_BYTES,
    maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES,
  };
  const byServer: Record<string, number> = {};
  for (const { server, tools } of publicServers()) {
    const list = new ServerToolList(limits);
    list.accept(tools as Tool[]);
    // The registry reads only a connection's name and config (for a tool-name prefix); no server runs here.
    const connection = { name: server, config: {} } as unknown as ServerConnection;
    const before = definitions.length;
    registry.syncServer(connection, list.tools);
    byServer[server] = definitions
      .slice(before)
      .reduce((sum, definition) => sum + definitionChars(definition, WIRE), 0);
  }
  const chars = Object.values(byServer).reduce((a, b) => a + b, 0);
  return { tools: definitions.length, chars, byServer };
}

/** `tool_search`'s definition and the system-prompt line naming the deferred servers. */
function deferredCost(servers: string[]): { searchTool: number; promptLine: number } {
  const searchTool = definitionChars(
    { name: TOOL_SEARCH_NAME, description: TOOL_SEARCH_DESCRIPTION, parameters: TOOL_SEARCH_PARAMETERS },
    WIRE,
  );
  const line = deferredServersLine(servers.map((server) => ({ server }))) ?? "";
  return { searchTool, promptLine: line.length };
}

export const contextSection: FigureSection = {
  title: "context",
  async measure(): Promise<Figure[]> {
    const servers = publicServers();
    const direct = directCost();
    const deferred = deferredCost(servers.map((s) => s.server));
    const deferredChars = deferred.searchTool + deferred.promptLine;
    const costliest = Object.entries(direct.byServer)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([server, chars]) => `${server} ${chars}`)
      .join(", ");
    const config = { servers: servers.length, tools: direct.tools };
    return [
      {
        id: "context.direct.tokens",
        label: `direct: ${direct.tools} tools' definitions`,
        value: estimatedTokens(direct.chars),
        unit: "tokens",
        detail: config,
      },
      {
        id: "context.direct.chars",
        label: "direct: characters",
        value: direct.chars,
        unit: "chars",
        detail: { ...config, costliest },
      },
      {
        id: "context.deferred.tokens",
        label: "deferred: tool_search + prompt line",
        value: estimatedTokens(deferredChars),
        unit: "tokens",
        target: { op: "<=", value: 1000 },
        detail: { ...config, toolSearchChars: deferred.searchTool, promptLineChars: deferred.promptLine },
      },
      {
        id: "context.deferred.chars",
        label: "deferred: characters",
        value: deferredChars,
        unit: "chars",
        detail: config,
      },
      { id: "context.hidden.tokens", label: "hidden", value: 0, unit: "tokens", detail: config },
    ];
  },
};
