/**
 * What each MCP server is for, for the model: one bounded line per server, from the `description` its config entry
 * gives and the `instructions` the server sent at initialize, under a short heading. It goes into the system prompt
 * once, rather than into every tool's description. Server text is folded onto one line, stripped of control
 * characters and cut to a fixed length, so a server cannot take over the prompt with a long or many-line text. Pure.
 */
import { shown, SHOWN } from "../common/terminal-text.ts";

/** The longest line one server gets, heading and ellipsis included. */
export const MAX_SERVER_GUIDE_LINE = 300;
/** How many tool names a line quotes when they share no prefix. */
const NAMES_QUOTED = 3;

export const SERVER_GUIDE_HEADING =
  "MCP servers whose tools you have, and what each is for (as its config and the server itself describe it):";

export interface ServerGuideEntry {
  server: string;
  /** The names the model calls the server's tools by. */
  toolNames: readonly string[];
  /** From the config entry. */
  description?: string;
  /** From the server's initialize result. */
  instructions?: string;
}

/** The heading and one line per server that has tools and something to say; undefined when none has. */
export function formatServerGuide(entries: readonly ServerGuideEntry[]): string | undefined {
  const lines = entries.map(serverGuideLine).filter((line) => line !== undefined);
  return lines.length ? [SERVER_GUIDE_HEADING, ...lines].join("\n") : undefined;
}

/** `- github (tools gh_*): Issues and PRs of our org — Use search_issues before …`, at most MAX_SERVER_GUIDE_LINE characters. */
export function serverGuideLine(entry: ServerGuideEntry): string | undefined {
  if (entry.toolNames.length === 0) return undefined;
  const said = [entry.description, entry.instructions]
    .map((text) => shown(text ?? "", MAX_SERVER_GUIDE_LINE, "prompt"))
    .filter((text) => text !== "");
  if (said.length === 0) return undefined;
  return shown(
    `- ${shown(entry.server, SHOWN.name, "prompt")} (tools ${toolsHint(entry.toolNames)}): ${said.join(" — ")}`,
    MAX_SERVER_GUIDE_LINE,
    "prompt",
  );
}

/** `mcp_github_*` when the names share a prefix ending in `_`; otherwise the first few names. */
export function toolsHint(names: readonly string[]): string {
  const prefix = commonPrefix(names);
  const cutAt = prefix.lastIndexOf("_");
  if (cutAt > 0 && names.length > 1) return `${prefix.slice(0, cutAt + 1)}*`;
  const quoted = names
    .slice(0, NAMES_QUOTED)
    .map((name) => shown(name, SHOWN.name, "prompt"))
    .join(", ");
  return names.length > NAMES_QUOTED ? `${quoted}, …` : quoted;
}

function commonPrefix(names: readonly string[]): string {
  let prefix = names[0] ?? "";
  for (const name of names) while (!name.startsWith(prefix)) prefix = prefix.slice(0, -1);
  return prefix;
}
