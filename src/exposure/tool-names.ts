/**
 * Which deferred tools the model means when it names them to `tool_search`: the pi name (`mcp_github_create_issue`),
 * `server/tool`, or the tool's own name as the system prompt's catalog lists it (or in another code style), where only
 * one deferred server has a tool of that name. A query made of such names alone is read as names; in a longer one,
 * the names written as code. Pure.
 */
import { editDistance } from "../common/text.ts";
import type { SearchableTool } from "./tool-search-index.ts";
import { MAX_NAMED_TOOLS } from "./tool-search-text.ts";

export interface NamedTools {
  found: SearchableTool[];
  /** Names that fit tools of several servers, with the `server/tool` form of each. */
  ambiguous: Array<{ name: string; choices: string[] }>;
  unknown: string[];
}

/** How answers write a tool so that naming it again is unambiguous. */
export function qualifiedName(tool: SearchableTool): string {
  return tool.server ? `${tool.server}/${tool.originalName}` : tool.originalName;
}

/** The names a tool answers to: its pi name, `server/tool`, and its own name. */
const forms = (tool: SearchableTool) => [tool.name, qualifiedName(tool), tool.originalName];

/** A name in whatever style code writes it: `createIssue`, `create-issue` and `Create_Issue` are `create_issue`. */
function styleless(name: string): string {
  return identifierWords(name).trim().toLowerCase().replace(/\s+/g, "_");
}

/** The tools a name fits: exactly, else ignoring case, else (no server in it) in another code style (`createIssue`). */
function matches(name: string, tools: readonly SearchableTool[]): SearchableTool[] {
  const exact = tools.filter((tool) => forms(tool).includes(name));
  if (exact.length) return exact;
  const lower = name.toLowerCase();
  const caseless = tools.filter((tool) => forms(tool).some((form) => form.toLowerCase() === lower));
  if (caseless.length) return caseless;
  // `github/createIssue`: the server as written, the tool in another code style.
  if (name.includes("/"))
    return tools.filter(
      (tool) =>
        tool.server &&
        lower.startsWith(`${tool.server.toLowerCase()}/`) &&
        styleless(name.slice(tool.server.length + 1)) === stylelessNames(tool)[0],
    );
  const wanted = styleless(name);
  return tools.filter((tool) => stylelessNames(tool).includes(wanted));
}

const stylelessCache = new WeakMap<SearchableTool, string[]>();

/** A tool's names in no code style, worked out once: a search tries each word of its request on every deferred tool. */
function stylelessNames(tool: SearchableTool): string[] {
  let names = stylelessCache.get(tool);
  if (!names) stylelessCache.set(tool, (names = [styleless(tool.originalName), styleless(tool.name)]));
  return names;
}

/** Names as a model writes them: quotes and backticks around them are not part of them. */
const cleaned = (name: string) => name.trim().replace(/^[`'"]+|[`'"]+$/g, "");

/**
 * How much of a request, and how many names, are read: a call loads at most MAX_NAMED_TOOLS by name, and a pasted log
 * or list read whole held pi's main thread for seconds.
 */
const MAX_REQUEST_CHARS = 2_000;
const MAX_NAMES_READ = 5 * MAX_NAMED_TOOLS;

/** Resolves each name (duplicates once) against the deferred tools. */
export function resolveNames(names: readonly string[], tools: readonly SearchableTool[]): NamedTools {
  const out: NamedTools = { found: [], ambiguous: [], unknown: [] };
  // Several names in one string ("a, b"), as models write them in a list too; a name with a space in it is one name.
  const split = (name: string) => (matches(cleaned(name), tools).length ? [name] : name.split(/[\s,]+/));
  const each = names.slice(0, MAX_NAMES_READ).flatMap(split).slice(0, MAX_NAMES_READ);
  for (const name of new Set(each.map(cleaned).filter(Boolean))) {
    const fits = matches(name, tools);
    const pi = fits.find((tool) => tool.name === name);
    if (fits.length === 1 || pi) {
      const tool = pi ?? fits[0]!;
      if (!out.found.includes(tool)) out.found.push(tool);
    } else if (fits.length > 1) out.ambiguous.push({ name, choices: fits.map(qualifiedName).sort() });
    else out.unknown.push(name);
  }
  return out;
}

/** A word written as code (`kubectl_get`, `list-pods`, `getUser`), which a request's plain words never are. */
const IDENTIFIER = /[_.-]|[a-z][A-Z]/;

/**
 * The tool names in a query, and the rest to search: all its words when each names a deferred tool, else the words
 * that are a tool's pi name, `server/tool`, or its own name as the catalog writes it (`kubectl_get pods`) where that
 * is written as code: forms that name a tool, never a plain word (`search`, `echo`).
 */
export function namesInQuery(request: string, tools: readonly SearchableTool[]): { names: string[]; rest: string } {
  const query = request.slice(0, MAX_REQUEST_CHARS);
  const words = query
    .split(/[\s,]+/)
    .map(cleaned)
    .filter(Boolean);
  if (words.length > 0 && words.length <= MAX_NAMED_TOOLS && words.every((word) => matches(word, tools).length > 0))
    return { names: words, rest: "" };
  const names = words.filter(
    (word) =>
      tools.some((tool) => tool.name === word || qualifiedName(tool) === word) ||
      (IDENTIFIER.test(word) && !word.includes("/") && matches(word, tools).length > 0),
  );
  return { names, rest: names.reduce((text, name) => text.replace(name, " "), query) };
}

/** The tools whose names are within a few edits of an unknown name, nearest first. */
export function nearestByName(name: string, tools: readonly SearchableTool[], count: number): SearchableTool[] {
  if (name.length > 64) return [];
  const lower = name.toLowerCase();
  const most = Math.max(2, Math.floor(name.length / 3));
  return tools
    .map((tool) => ({
      tool,
      distance: Math.min(...forms(tool).map((form) => editDistance(lower, form.toLowerCase()))),
    }))
    .filter(({ distance }) => distance <= most)
    .sort((a, b) => a.distance - b.distance)
    .slice(0, count)
    .map(({ tool }) => tool);
}

/** The words of names written as code: `git_history` → `git history`, `listPods` → `list Pods`. */
export function identifierWords(text: string): string {
  return text.replace(/[_\-/.]+/g, " ").replace(/(\p{Ll})(\p{Lu})/gu, "$1 $2");
}
