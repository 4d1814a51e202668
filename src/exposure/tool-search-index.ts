/**
 * The ranked search behind `tool_search`: BM25 (MiniSearch's BM25+) over each deferred tool's name, description,
 * parameter names and its server's name and description, read as ./search-terms.ts reads text. A request is read as
 * concepts (./search-query.ts): each counts once, by its own words or, for less, the words near them, and a tool's
 * score grows with how many concepts it meets; a tool that reads where the request changes something (or the other way
 * round), or is named for a verb the request does not say, ranks lower. Last, the learnt weights of word pairs
 * (./search-learned.ts) reorder the first hits. Pure, in memory.
 */
import type { Tool } from "@modelcontextprotocol/client";
import MiniSearch from "minisearch";
import {
  type Action,
  type LearnedRelated,
  markedVerb,
  nameVerbs,
  requestAction,
  requestConcepts,
  saidWords,
  toolAction,
} from "./search-query.ts";
import { learnedPairs, learnedRelated, type PairWeights } from "./search-learned.ts";
import { indexTerm, termsOf, wordsWithSynonyms } from "./search-terms.ts";
import { GROUP_MARK } from "./search-synonyms.ts";
import { firstSentence } from "../common/text.ts";

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
    // As pi has it: a description that starts with a blank line would have no first sentence.
    description: (tool.description ?? "").trim(),
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
  /** The description's first sentence: what the tool does, before how and when. */
  lead: string;
  description: string;
  parameters: string;
  server: string;
}

/** How much a word related to a request's word counts, against the request's own words (1). */
const RELATED_WEIGHT = 0.3;

/** How much a concept met only through related words counts towards how many a tool meets. */
const RELATED_MET = 0.5;
/** What a tool that does the other kind of thing than the request asks keeps of its score. */
const MISFIT = 0.6;

/**
 * The least share of the best hit's score a hit must have to be loaded: far weaker ones met only a loose word of the
 * request, and each loaded tool costs tokens in every later request.
 */
const WEAKEST = 0.2;

/**
 * What a tool named for a verb the request does not say (nor a word near it), or for acting on many things at once
 * (`bulk_…`) when the request asks for one, keeps of its score (and what a `bulk_…` tool gains, the other way round,
 * when the request asks for many).
 */
const UNSAID = 0.9;

/** Words of a tool's name that say it acts on many things at once (`bulk_transition_issues`, `batch_get`). */
const BULK = new Set(termsOf("bulk batch"));

/** Words of a request that ask for many things at once. */
const MANY = /\b(?:bulk|batch|all|every|multiple|several|many|these|those|each)\b/i;

/**
 * How many of the best hits the learnt weights of word pairs may reorder (./search-learned.ts), what one unit of
 * weight counts against the best hit's score, and the most their sum may count either way, in units.
 */
export const REORDERED = 10;
const PAIR_WEIGHT = 0.05;
const PAIR_CAP = 2;

/** The words of a tool's name (and title), each once: what the learnt pair weights read of it. */
export function nameTerms(tool: Pick<SearchableTool, "originalName" | "title">): string[] {
  return [...new Set(termsOf([tool.originalName, tool.title ?? ""].join(" ")))];
}

/**
 * `hits`, best first, with the first REORDERED reordered by the learnt weights of pairs of a request's `words` and the
 * words of their names: each gains (or loses) PAIR_WEIGHT of the best score for each unit of their sum, at most
 * PAIR_CAP units either way.
 */
export function reorder(
  hits: readonly SearchHit[],
  words: readonly string[],
  named: (name: string) => readonly string[],
  pairs: PairWeights,
): SearchHit[] {
  const best = hits[0]?.score;
  if (best === undefined || pairs.size === 0) return [...hits];
  const head = hits.slice(0, REORDERED).map((hit) => {
    let units = 0;
    const terms = named(hit.name);
    for (const word of words) {
      const weights = pairs.get(word);
      if (weights) for (const term of terms) if (term !== word) units += weights.get(term) ?? 0;
    }
    return { name: hit.name, score: hit.score + best * PAIR_WEIGHT * Math.max(-PAIR_CAP, Math.min(PAIR_CAP, units)) };
  });
  return [...head.sort((a, b) => b.score - a.score), ...hits.slice(REORDERED)];
}

/** What an index reads requests with: the learnt tables, the shipped ones unless others are being learnt. */
export interface ToolSearchOptions {
  related?: LearnedRelated;
  pairs?: PairWeights;
}

/** Field weights: a word of the tool's name says most about what it does, its server's description least. */
const BOOST = { names: 3, lead: 1, description: 1.2, parameters: 0.8, server: 0.6 };

export class ToolSearchIndex {
  private readonly search = new MiniSearch<IndexedDocument>({
    fields: ["names", "lead", "description", "parameters", "server"],
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
  /**
   * Each tool, with what it does by the first verb of its name (reads or changes), that verb where a request must say
   * it too (delete, update, rerun…), whether its name says it acts on many things at once, and its name's words (what
   * the learnt pair weights read).
   */
  private readonly tools = new Map<
    string,
    { tool: SearchableTool; action?: Action; verb?: string; many: boolean; named: string[] }
  >();
  /** `learnt`: the learnt tables, the shipped ones (read at the first search) unless others are given. */
  constructor(private readonly learnt: ToolSearchOptions = {}) {}

  get size(): number {
    return this.tools.size;
  }

  has(name: string): boolean {
    return this.tools.has(name);
  }

  get(name: string): SearchableTool | undefined {
    return this.tools.get(name)?.tool;
  }

  all(): SearchableTool[] {
    return [...this.tools.values()].map(({ tool }) => tool);
  }

  /** Adds a tool, or replaces the one of the same name. */
  add(tool: SearchableTool): void {
    if (this.tools.has(tool.name)) this.search.discard(tool.name);
    const named = [tool.originalName, tool.title ?? ""].join(" ");
    const acting = nameVerbs(named);
    const terms = nameTerms(tool);
    this.tools.set(tool.name, {
      tool,
      action: toolAction(acting),
      verb: markedVerb(acting),
      many: terms.some((term) => BULK.has(term)),
      named: terms,
    });
    this.search.add({
      id: tool.name,
      names: named,
      lead: firstSentence(tool.description),
      description: tool.description,
      parameters: tool.parameters.join(" "),
      server: [tool.server, tool.serverDescription ?? ""].join(" "),
    });
  }

  remove(name: string): void {
    if (this.tools.delete(name)) this.search.discard(name);
  }

  /** The best matches for a request, best first; `accept` narrows which tools may be returned. */
  find(request: string, limit: number, accept: (tool: SearchableTool) => boolean = () => true): SearchHit[] {
    // A request is a few words: its first 2,000 characters (a pasted log read whole took seconds, a long blob threw).
    const query = request.slice(0, 2_000);
    const hits: SearchHit[] = [];
    // Each concept of the request counts once, as the best of its own words or (at RELATED_WEIGHT) its related
    // words; a tool's score is the sum, times how many concepts it meets, so a tool that meets what the request
    // acts on and what it does outranks one that meets a single word many times.
    const totals = new Map<string, { score: number; met: number }>();
    const concepts = requestConcepts(query, this.learnt.related ?? learnedRelated());
    const said = new Set(concepts.flatMap((concept) => [...concept.own, ...concept.related]));
    for (const concept of concepts) {
      const best = new Map<string, { score: number; met: number }>();
      const meet = (terms: string[], weight: number, met: number, loose: boolean) => {
        if (terms.length === 0) return;
        const options = loose ? {} : { prefix: false, fuzzy: false };
        for (const result of this.search.search(query, { tokenize: () => terms, processTerm: (t) => t, ...options })) {
          const id = String(result.id);
          const score = (weight * result.score) / result.queryTerms.length;
          if (score > (best.get(id)?.score ?? 0)) best.set(id, { score, met });
        }
      };
      meet(concept.own, concept.weight, concept.weight, true);
      meet(concept.related, RELATED_WEIGHT, RELATED_MET, false);
      for (const [id, { score, met }] of best) {
        const total = totals.get(id);
        totals.set(id, { score: (total?.score ?? 0) + score, met: (total?.met ?? 0) + met });
      }
    }
    // A tool that does the other kind of thing than the request asks (creates when asked what there is) ranks lower;
    // so does one named for what the request does not say, and one for many things when the request asks for one.
    const wanted = requestAction(query);
    const one = !MANY.test(query);
    const fit = (id: string) => {
      const { action, verb, many } = this.tools.get(id) ?? {};
      const unsaid = (verb && !said.has(verb)) || (many && one);
      // A tool for many things at once is what a request for many asks for: it gains what it would lose for one.
      const fitsMany = many && !one ? 1 / UNSAID : 1;
      return (wanted && action && action !== wanted ? MISFIT : 1) * (unsaid ? UNSAID : 1) * fitsMany;
    };
    const results = [...totals]
      .map(([id, { score, met }]) => ({ id, score: score * met * fit(id) }))
      .sort((a, b) => b.score - a.score);
    for (const result of results) {
      const tool = this.tools.get(String(result.id))?.tool;
      if (!tool || !accept(tool)) continue;
      if (hits.length > 0 && result.score < hits[0]!.score * WEAKEST) break;
      hits.push({ name: tool.name, score: result.score });
      if (hits.length >= Math.max(limit, REORDERED)) break;
    }
    const named = (name: string) => this.tools.get(name)?.named ?? [];
    return reorder(hits, saidWords(concepts), named, this.learnt.pairs ?? learnedPairs()).slice(0, limit);
  }
}
