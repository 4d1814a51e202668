/**
 * What the model reads of tool search: the `tool_search` tool's definition (constant, so it never changes as servers
 * connect or tools change, and provider prompt caches stay valid), its answer, and the one system-prompt line that
 * names the servers whose tools wait behind it where the catalog (./tool-catalog.ts) is off. Pure.
 */
import { shown } from "../common/terminal-text.ts";
import { commandArgument } from "../config/validate/name.ts";
import { checkedAsGiven } from "../translate/schema.ts";

export const TOOL_SEARCH_NAME = "tool_search";
export const DEFAULT_SEARCH_LIMIT = 5;
export const MAX_SEARCH_LIMIT = 10;
/** The most tools one call loads by name: a model listing a whole catalog would fill its context with definitions. */
export const MAX_NAMED_TOOLS = 20;

export const TOOL_SEARCH_DESCRIPTION =
  "Load tools of connected MCP servers that are not in your tool list yet: by exact names (as the system prompt lists " +
  'them) or by what you need done, in a few words (e.g. "create a GitHub issue"). Call them by the names returned.';

/** A null, which some models send for what they leave out: as if absent (pi 0.73 made a null limit 0, one tool). */
const NULL = { type: "null" } as const;

/** Names in an array, or one or more in a string, as models send them: pi fails a call whose arguments do not fit. */
const NAME_LISTS = [{ type: "array", items: { type: "string" } }, { type: "string" }, NULL] as const;

/** Plain JSON Schema, as pi sends tool parameters. */
export const TOOL_SEARCH_PARAMETERS = checkedAsGiven({
  type: "object",
  properties: {
    query: { anyOf: [{ type: "string" }, NULL], description: "What the tool should do, in a few words" },
    names: { anyOf: NAME_LISTS, description: "Exact tool names to load" },
    limit: {
      anyOf: [{ type: "integer" }, NULL],
      description: `How many tools to load by query (default ${DEFAULT_SEARCH_LIMIT}, at most ${MAX_SEARCH_LIMIT})`,
    },
  },
} as const);

/** The longest description a result line quotes, and a server's description in the prompt line. */
const RESULT_DESCRIPTION_CHARS = 160;
const SERVER_DESCRIPTION_CHARS = 80;

export interface SearchResultLine {
  name: string;
  /** Its MCP server; none for a tool of the bridge's own that reaches several (a resource tool). */
  server?: string;
  description: string;
  /** Registered after this run began, on a pi whose runs keep the tools they began with: callable from the next on. */
  nextRun?: boolean;
}

/** What a call named that is not loaded: names of no deferred tool (with the nearest), of several, and past the bound. */
export interface NameProblems {
  unknown: Array<{ name: string; nearest: string[] }>;
  ambiguous: Array<{ name: string; choices: string[] }>;
  /** Named tools left out for the bound on one call. */
  over: string[];
}

/** Tools named for the model to name them again: whole, as `server/tool` with MCP's longest tool name (128). */
const listed = (names: readonly string[]) => names.map((name) => shown(name, 200, "prompt")).join(", ");

/** Why named tools were not loaded, a line each. */
function nameLines({ unknown, ambiguous, over }: NameProblems): string[] {
  return [
    ...unknown.map(({ name, nearest }) => {
      const near = nearest.length ? ` The nearest: ${listed(nearest)}.` : "";
      return `No MCP tool waiting to be loaded is named "${shown(name, 80, "prompt")}".${near}`;
    }),
    ...ambiguous.map(
      ({ name, choices }) =>
        `"${shown(name, 80, "prompt")}" names tools of several servers; name one: ${listed(choices)}.`,
    ),
    ...(over.length
      ? [`Not loaded, as one call loads at most ${MAX_NAMED_TOOLS} tools by name: ${listed(over)}.`]
      : []),
  ];
}

/** The tool's answer: the loaded tools with a line each, or why there are none; and why named tools were not loaded. */
export function formatSearchResult(
  query: string,
  hits: readonly SearchResultLine[],
  searchable: number,
  problems: NameProblems = { unknown: [], ambiguous: [], over: [] },
): string {
  if (searchable === 0)
    return "No MCP tools are waiting to be loaded: every MCP tool you can use is already in your tool list.";
  const notes = nameLines(problems);
  if (hits.length === 0) {
    if (!query.trim() && notes.length) return notes.join("\n");
    return [
      `No tool matched "${shown(query, 80, "prompt")}" among ${searchable} MCP tools not in your list. Try other words: what the tool acts on, or the service's name.`,
      ...notes,
    ].join("\n");
  }
  const from = (hit: SearchResultLine) =>
    hit.server === undefined ? "MCP resources" : `MCP server ${shown(hit.server, 40, "prompt")}`;
  const lines = hits.map((hit) => {
    const when = hit.nextRun ? " (it arrived during this turn: callable from the user's next message on)" : "";
    return `- ${hit.name} (${from(hit)})${when}: ${shown(hit.description, RESULT_DESCRIPTION_CHARS, "prompt")}`;
  });
  return [
    `Loaded ${hits.length === 1 ? "1 tool" : `${hits.length} tools`}; call ${hits.length === 1 ? "it" : "them"} by name:`,
    ...lines,
    ...notes,
  ].join("\n");
}

export interface DeferredServer {
  server: string;
  description?: string;
  /** Still making its first connect: its tools are not known yet. */
  starting?: boolean;
}

/** A server whose tools are not known yet because its sign-in page waits for the user: the model can tell them. */
export function signInWaitLine(server: string): string {
  return `MCP server ${shown(server, 40, "prompt")} waits for the user to finish signing in on the page that opened (or to run /mcp auth ${shown(commandArgument(server), 40, "prompt")}); its tools come after that.`;
}

/** The one system-prompt line naming the servers whose tools are behind `tool_search`; undefined when none is. */
export function deferredServersLine(servers: readonly DeferredServer[]): string | undefined {
  if (servers.length === 0) return undefined;
  const named = servers.map(({ server, description, starting }) => {
    const name = `${shown(server, 40, "prompt")}${starting ? " (starting)" : ""}`;
    return description ? `${name} (${shown(description, SERVER_DESCRIPTION_CHARS, "prompt")})` : name;
  });
  return `More MCP tools are available but not loaded; find them with ${TOOL_SEARCH_NAME}. Their servers: ${named.join("; ")}.`;
}
