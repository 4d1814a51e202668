/**
 * The catalog of deferred tools in the system prompt: each deferred server's tool names (no schemas), optionally with
 * the first words of each description, so the model can load a tool by its exact name with `tool_search` instead of
 * guessing search words. Servers in config order, tools by name, so the text changes only when a tool list does
 * (loading a tool does not change it, and provider prompt caches stay valid). Within `maxTokens` (characters / 4) servers are
 * listed in order; one that does not fit is named with its count of tools, to be searched. Pure.
 */
import type { ToolCatalogSetting } from "../config/types.ts";
import { shown } from "../common/terminal-text.ts";
import { firstSentence, plural } from "../common/text.ts";
import { estimatedTokens } from "./definition-cost.ts";
import { type DeferredServer, deferredServersLine, TOOL_SEARCH_NAME } from "./tool-search-text.ts";

export interface CatalogGroup {
  /** Its MCP server; empty for the bridge's resource tools, which reach `reaches`. */
  server: string;
  description?: string;
  reaches?: string[];
  tools: Array<{ name: string; description: string }>;
}

/** The longest a brief description may be, and a server's description here (as in the servers-only line). */
const BRIEF_CHARS = 60;
const SERVER_DESCRIPTION_CHARS = 80;

/** The first sentence of a description, cut at a word within {@link BRIEF_CHARS}. */
function brief(description: string): string {
  const sentence = firstSentence(shown(description, 400, "prompt"));
  if (sentence.length <= BRIEF_CHARS) return sentence;
  const cut = sentence.slice(0, BRIEF_CHARS - 1);
  const space = cut.lastIndexOf(" ");
  return `${space > BRIEF_CHARS / 2 ? cut.slice(0, space) : cut}…`;
}

function heading(group: CatalogGroup): string {
  if (!group.server) {
    const of = (group.reaches ?? []).map((server) => shown(server, 40, "prompt")).join(", ");
    return of ? `MCP resources of ${of}` : "MCP resources";
  }
  const name = shown(group.server, 100, "prompt"); // whole (a config's longest): the model writes server/tool
  return group.description ? `${name} (${shown(group.description, SERVER_DESCRIPTION_CHARS, "prompt")})` : name;
}

function listedLine(group: CatalogGroup, form: "names" | "brief"): string {
  const tools = [...group.tools]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map(({ name, description }) => {
      const shownName = shown(name, 128, "prompt"); // as long as MCP names go: the model loads it by this name
      const words = form === "brief" ? brief(description) : "";
      return words ? `${shownName} (${words})` : shownName;
    });
  return `- ${heading(group)}: ${tools.join(", ")}`;
}

const count = (group: CatalogGroup) => plural(group.tools.length, "tool");

/** The servers whose tools did not fit, named with their count of tools. */
const unlistedLine = (groups: readonly CatalogGroup[]) =>
  groups.length
    ? `Not listed, to be found by what you need done: ${groups.map((g) => `${heading(g)} (${count(g)})`).join("; ")}.`
    : "";

const HEADER =
  `More MCP tools are available but not loaded. Load them with ${TOOL_SEARCH_NAME}: by their exact names ("names"; ` +
  `write server/tool where two servers share a name) or by what you need done ("query"). Their servers and tools:`;

/** Which groups the catalog lists in full (with each one's line), and which it only names. */
function layout(groups: readonly CatalogGroup[], setting: ToolCatalogSetting) {
  const listed: { group: CatalogGroup; line: string }[] = [];
  let unlisted = [...groups];
  let chars = HEADER.length + unlistedLine(unlisted).length;
  for (const group of groups) {
    const line = listedLine(group, setting.form === "brief" ? "brief" : "names");
    const rest = unlisted.filter((g) => g !== group);
    const grown = chars + line.length + 1 - unlistedLine(unlisted).length + unlistedLine(rest).length;
    if (estimatedTokens(grown) > setting.maxTokens) continue;
    listed.push({ group, line });
    unlisted = rest;
    chars = grown;
  }
  return { listed, unlisted };
}

/**
 * The catalog, or the line naming the servers only (`off`); undefined when nothing is deferred. Every server is at
 * least named; servers are listed in order while the whole fits `maxTokens`.
 */
export function catalogPrompt(
  groups: readonly CatalogGroup[],
  servers: readonly DeferredServer[],
  setting: ToolCatalogSetting,
): string | undefined {
  if (setting.form === "off" || groups.length === 0) return deferredServersLine(servers);
  const { listed, unlisted } = layout(groups, setting);
  const starting = deferredServersLine(servers.filter((s) => s.starting && !groups.some((g) => g.server === s.server)));
  return [HEADER, ...listed.map(({ line }) => line), unlistedLine(unlisted), starting].filter(Boolean).join("\n");
}

/**
 * The characters of the system prompt that are each server's: its line of the catalog, or its mention where it is
 * only named (the shared opening sentence is no server's, as `tool_search`'s own definition is none's).
 */
export function catalogShares(groups: readonly CatalogGroup[], setting: ToolCatalogSetting): Map<string, number> {
  const shares = new Map<string, number>();
  const named = (group: CatalogGroup) => `${heading(group)} (${count(group)}); `.length;
  if (setting.form === "off") {
    for (const group of groups) if (group.server) shares.set(group.server, `${heading(group)}; `.length);
    return shares;
  }
  const { listed, unlisted } = layout(groups, setting);
  for (const { group, line } of listed) if (group.server) shares.set(group.server, line.length + 1);
  for (const group of unlisted) if (group.server) shares.set(group.server, named(group));
  return shares;
}
