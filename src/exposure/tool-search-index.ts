/**
 * The ranked search behind `tool_search`: BM25 (MiniSearch's BM25+) over each deferred tool's name, description,
 * parameter names and its server's name and description, with words split the way tool names are written (`_`, `-`,
 * camelCase) and reduced to their stems (Porter's stemmer), so "listing files" finds `list_files`; a word of a common
 * synonym group stands for its group ("folder" finds `create_directory`). Pure, in memory.
 */
import type { Tool } from "@modelcontextprotocol/client";
import MiniSearch from "minisearch";
import { stemmer } from "stemmer";
import { canonicalWords, GROUP_MARK } from "./search-synonyms.ts";

/** What the index knows of one tool. */
export interface SearchableTool {
  /** The pi tool name (the model calls it by this); the index's key. */
  name: string;
  server: string;
  /** The tool's name on its server. */
  originalName: string;
  title?: string;
  description: string;
  /** Its parameters' names, and their descriptions where the schema has them. */
  parameters: string[];
  /** The server's `description` from the config, if any. */
  serverDescription?: string;
}

/**
 * What the index takes of an MCP tool: its names, title, description, and each parameter's name, description and
 * allowed values (the top-level properties of its input schema), with its server's name and description.
 */
export function searchableTool(tool: Tool, server: string, name: string, serverDescription?: string): SearchableTool {
  const parameters: string[] = [];
  const properties = tool.inputSchema?.properties;
  if (properties && typeof properties === "object") {
    for (const [key, schema] of Object.entries(properties)) {
      parameters.push(key);
      const { description, enum: values } = (schema ?? {}) as { description?: unknown; enum?: unknown };
      if (typeof description === "string" && description.trim() !== "") parameters.push(description);
      // The values a parameter takes often name what the tool does ("APPROVE", "closed", "dark").
      if (Array.isArray(values))
        parameters.push(...values.filter((value): value is string => typeof value === "string"));
    }
  }
  const title = tool.title ?? tool.annotations?.title;
  return {
    name,
    server,
    originalName: tool.name,
    ...(title ? { title } : {}),
    description: tool.description ?? "",
    parameters,
    ...(serverDescription ? { serverDescription } : {}),
  };
}

export interface SearchHit {
  name: string;
  score: number;
}

interface IndexedDocument {
  id: string;
  names: string;
  description: string;
  parameters: string;
  server: string;
}

/** Words too common in requests and descriptions to tell tools apart. */
const STOP_WORDS = new Set(
  (
    "a an and any are as at be by can could do does for from get has have how i if in into is it its me my of on or " +
    "please should some that the their them then there these this to tool tools use using want was we what when which " +
    "will with would you your " +
    // words of a request that say nothing of the tool it wants
    "about all also anything else every everything just let need now our own right see someone something so us very why"
  ).split(" "),
);

/**
 * Splits text into lower-case words at `_`, `-`, spaces and punctuation; a word written in camelCase also gives its
 * parts (`getHTTPStatus` → gethttpstatus get http status), so both "GitHub" and "github" find it.
 */
function splitWords(text: string): string[] {
  const words: string[] = [];
  for (const chunk of text.split(/[^\p{L}\p{N}]+/u)) {
    if (chunk.length === 0) continue;
    words.push(chunk.toLowerCase());
    const parts = chunk
      .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, "$1 $2")
      .replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, "$1 $2")
      .toLowerCase()
      .split(" ");
    if (parts.length > 1) words.push(...parts);
  }
  return words;
}

/** A text's words, each word or phrase of a synonym group as its group's token (./search-synonyms.ts). */
function wordsWithSynonyms(text: string): string[] {
  return canonicalWords(splitWords(text));
}

/** A word as the index stores it, or null for a word that does not count. */
function indexTerm(word: string): string | null {
  if (word.startsWith(GROUP_MARK)) return word;
  if (STOP_WORDS.has(word) || /^\p{L}$/u.test(word)) return null;
  return /^\p{L}+$/u.test(word) ? stemmer(word) : word;
}

/** Field weights: a word of the tool's name says most about what it does, its server's description least. */
const BOOST = { names: 3, description: 1.2, parameters: 0.8, server: 0.6 };

export class ToolSearchIndex {
  private readonly search = new MiniSearch<IndexedDocument>({
    fields: ["names", "description", "parameters", "server"],
    tokenize: wordsWithSynonyms,
    processTerm: indexTerm,
    searchOptions: {
      boost: BOOST,
      combineWith: "OR",
      // Length counts more than MiniSearch's default (b 0.7, d 0.5): else a tool whose description is a long usage
      // guide outranks the short one named for the request (measured on bench/fixtures/tool-search-relevance.json).
      bm25: { k: 1.2, b: 0.9, d: 0.1 },
      // A word typed longer or shorter than the tool's own ("config" / "configuration") still meets it.
      prefix: (term) => term.length >= 4 && !term.startsWith(GROUP_MARK),
      fuzzy: (term) => (term.length >= 6 && !term.startsWith(GROUP_MARK) ? 0.2 : false),
      weights: { prefix: 0.4, fuzzy: 0.3 },
    },
  });
  private readonly tools = new Map<string, SearchableTool>();

  get size(): number {
    return this.tools.size;
  }

  has(name: string): boolean {
    return this.tools.has(name);
  }

  get(name: string): SearchableTool | undefined {
    return this.tools.get(name);
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /** Adds a tool, or replaces the one of the same name. */
  add(tool: SearchableTool): void {
    if (this.tools.has(tool.name)) this.search.discard(tool.name);
    this.tools.set(tool.name, tool);
    this.search.add({
      id: tool.name,
      names: [tool.originalName, tool.title ?? ""].join(" "),
      description: tool.description,
      parameters: tool.parameters.join(" "),
      server: [tool.server, tool.serverDescription ?? ""].join(" "),
    });
  }

  remove(name: string): void {
    if (!this.tools.delete(name)) return;
    this.search.discard(name);
  }

  /** The best matches for a request, best first; `accept` narrows which tools may be returned. */
  find(query: string, limit: number, accept: (tool: SearchableTool) => boolean = () => true): SearchHit[] {
    const hits: SearchHit[] = [];
    for (const result of this.search.search(query)) {
      const tool = this.tools.get(String(result.id));
      if (!tool || !accept(tool)) continue;
      hits.push({ name: tool.name, score: result.score });
      if (hits.length >= limit) break;
    }
    return hits;
  }
}
