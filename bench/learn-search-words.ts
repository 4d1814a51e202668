/**
 * Learns, from the `tune` set of ./fixtures/tool-search-work-requests.json (never its `heldout` or `unseen` sets, nor
 * the later relevance set), what the tool search reads besides a request's own words, and writes both tables to
 * src/exposure/search-learned.json (read by ../src/exposure/search-learned.ts): people say "hours" where the API says
 * "worklog", "prod" where it says "kubernetes", and with 2,300 requests labelled by hand such pairs can be counted
 * rather than guessed.
 *
 * - Related words: a pair counts when a request says the word (as one of its concepts,
 *   ../src/exposure/search-query.ts) and one of its answers has the other in its name or its description's first
 *   sentence. It is kept when it is seen often (`MIN_COUNT`), when most requests with the word have it (`MIN_SHARE`),
 *   and when it is far likelier with the word than without (`MIN_LIFT`); words of the tools that many tools share, and
 *   numbers, are never learnt. Each word keeps its `PER_WORD` most frequent pairs.
 * - Pair weights, learnt with the related words in place: a perceptron over pairs of a request's word and a word of
 *   a tool's name. For each request whose first hit, reordered by the weights so far, is wrong while a right tool is
 *   among the first REORDERED, each pair the right tool has and the wrong one lacks gains a unit and each the wrong one
 *   has and the right one lacks loses one; `PASSES` passes over the set, in its order; a word said in fewer than
 *   `MIN_SEEN` requests gets no weights.
 *
 * The settings were chosen on batches measured before they were read (each with tables learnt from the batches before
 * it), not on the held-out set: bench/results/2026-12-06-search-learned.md. `npm run search:learn` writes both tables
 * again (after the tune set or the search's reading of words changes); test/search-learned.test.ts fails while the
 * shipped tables are not what this learns.
 */
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { firstSentence } from "../src/common/text.ts";
import { type LearnedRelated, requestConcepts, saidWords } from "../src/exposure/search-query.ts";
import { termsOf } from "../src/exposure/search-terms.ts";
import type { PairWeights } from "../src/exposure/search-learned.ts";
import {
  nameTerms,
  REORDERED,
  reorder,
  searchableTool,
  type SearchableTool,
  ToolSearchIndex,
} from "../src/exposure/tool-search-index.ts";
import { toolNameFor } from "../src/translate/naming.ts";
import { publicSavedServers, WORK_HUB } from "./search-through-pi.ts";
import { answerToolName, workRequests, type RelevanceQuery } from "./tool-search-recall.ts";

/** Requests with the word and the other word both, at least. */
const MIN_COUNT = 2;
/** The least share of the requests with the word that have the other word in an answer. */
const MIN_SHARE = 0.3;
/** How much likelier the other word is in an answer when the request says the word than in any answer, at least. */
const MIN_LIFT = 8;
/** Words of more than this share of the tools say little of any one (`list`, `get`, `specified`). */
const MAX_TOOL_SHARE = 0.05;
/** Related words kept for one word. */
const PER_WORD = 5;
/** Passes of the perceptron over the tune set, and the fewest requests a word must be said in to get weights. */
const PASSES = 5;
const MIN_SEEN = 2;

/** Where both tables are written. */
export const LEARNED_FILE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "..",
  "src",
  "exposure",
  "search-learned.json",
);

/** One labelled request, as the words the search reads in it and the words of the tools that answer it. */
export interface LabelledWords {
  request: ReadonlySet<string>;
  answers: ReadonlySet<string>;
}

/**
 * The related words of each request word: pure, and the same for the same examples in any order (ties go by the
 * alphabet).
 */
export function learnRelatedWords(examples: readonly LabelledWords[]): Map<string, string[]> {
  const withWord = new Map<string, number>();
  const inAnswers = new Map<string, number>();
  const together = new Map<string, Map<string, number>>();
  const add = <K>(map: Map<K, number>, key: K) => map.set(key, (map.get(key) ?? 0) + 1);
  for (const { request, answers } of examples) {
    for (const other of answers) add(inAnswers, other);
    for (const word of request) {
      add(withWord, word);
      const counts = together.get(word) ?? new Map<string, number>();
      together.set(word, counts);
      // A word the request says itself is met already.
      for (const other of answers) if (!request.has(other)) add(counts, other);
    }
  }
  const learned = new Map<string, string[]>();
  for (const word of [...together.keys()].sort()) {
    const said = withWord.get(word)!;
    const kept = [...together.get(word)!]
      .filter(([other, count]) => {
        const share = count / said;
        const base = inAnswers.get(other)! / examples.length;
        return count >= MIN_COUNT && share >= MIN_SHARE && share / base >= MIN_LIFT;
      })
      .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
      .slice(0, PER_WORD)
      .map(([other]) => other);
    if (kept.length > 0) learned.set(word, kept);
  }
  return learned;
}

/** Every tool of the saved public servers and the work hub, by its pi name. */
function savedTools(): Map<string, SearchableTool> {
  const tools = new Map<string, SearchableTool>();
  for (const { server, file } of [...publicSavedServers(), WORK_HUB]) {
    const { tools: listed } = JSON.parse(readFileSync(file, "utf8")) as {
      tools: Parameters<typeof searchableTool>[0][];
    };
    for (const tool of listed) {
      const name = toolNameFor(server, tool.name);
      tools.set(name, searchableTool(tool, server, name));
    }
  }
  return tools;
}

/** The words the search reads in each request, and its answers' words: what the related words are learnt from. */
export function labelledWords(
  requests: readonly RelevanceQuery[],
  tools: ReadonlyMap<string, SearchableTool> = savedTools(),
): LabelledWords[] {
  const toolWords = (tool: SearchableTool) =>
    termsOf([tool.originalName, tool.title ?? "", firstSentence(tool.description)].join(" "));
  const share = new Map<string, number>();
  for (const tool of tools.values())
    for (const word of new Set(toolWords(tool))) share.set(word, (share.get(word) ?? 0) + 1);
  const telling = (word: string) =>
    !/\d/.test(word) && word.length > 1 && share.get(word)! / tools.size <= MAX_TOOL_SHARE;
  return requests.map(({ query, answers }) => ({
    // The request's words, not what its values are taken to mean: those are the search's own rules.
    request: new Set(saidWords(requestConcepts(query, new Map()))),
    answers: new Set(
      answers.flatMap((answer) => {
        const tool = tools.get(answerToolName(answer));
        return tool ? toolWords(tool).filter(telling) : [];
      }),
    ),
  }));
}

/**
 * The pair weights, learnt on `index` (which reads requests with the related words `related` and no pair weights) from
 * `requests`, each with the pi names of the tools that answer it. Zero weights are left out; words and terms in the
 * alphabet's order.
 */
export function learnPairWeights(
  index: ToolSearchIndex,
  requests: readonly { query: string; answers: readonly string[] }[],
  related: LearnedRelated,
): Map<string, Map<string, number>> {
  const weights = new Map<string, Map<string, number>>();
  // A tool's name terms, read once (the passes ask for them thousands of times).
  const terms = new Map<string, string[]>();
  const named = (name: string) => {
    let found = terms.get(name);
    if (!found) terms.set(name, (found = nameTerms(index.get(name)!)));
    return found;
  };
  const add = (word: string, term: string, unit: number) => {
    if (term === word) return;
    const row = weights.get(word) ?? new Map<string, number>();
    weights.set(word, row);
    row.set(term, (row.get(term) ?? 0) + unit);
  };
  const examples = requests.map(({ query, answers }) => ({
    words: saidWords(requestConcepts(query, related)),
    hits: index.find(query, REORDERED),
    answers: new Set(answers),
  }));
  // A word said once tells nothing of the next request: it gets no weights.
  const seen = new Map<string, number>();
  for (const { words } of examples) for (const word of words) seen.set(word, (seen.get(word) ?? 0) + 1);
  for (const example of examples) example.words = example.words.filter((word) => seen.get(word)! >= MIN_SEEN);
  for (let pass = 0; pass < PASSES; pass++) {
    for (const { words, hits, answers } of examples) {
      const ranked = reorder(hits, words, named, weights);
      const first = ranked[0];
      const right = ranked.find((hit) => answers.has(hit.name));
      if (!first || !right || right === first) continue;
      const rightTerms = named(right.name);
      const wrongTerms = named(first.name);
      for (const word of words) {
        for (const term of rightTerms) if (!wrongTerms.includes(term)) add(word, term, 1);
        for (const term of wrongTerms) if (!rightTerms.includes(term)) add(word, term, -1);
      }
    }
  }
  const byName = <V>(entries: Iterable<[string, V]>) => [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return new Map(
    byName(weights)
      .map(([word, row]) => [word, new Map(byName(row).filter(([, weight]) => weight !== 0))] as const)
      .filter(([, row]) => row.size > 0),
  );
}

/** Both tables, learnt from `requests` (the tune set's answered requests, unless told). */
export function learnTables(requests: readonly RelevanceQuery[] = workRequests().tune): {
  related: Map<string, string[]>;
  pairs: Map<string, Map<string, number>>;
} {
  const tools = savedTools();
  const related = learnRelatedWords(labelledWords(requests, tools));
  const index = new ToolSearchIndex({ related, pairs: new Map() });
  for (const tool of tools.values()) index.add(tool);
  const answered = requests.map(({ query, answers }) => ({ query, answers: answers.map(answerToolName) }));
  return { related, pairs: learnPairWeights(index, answered, related) };
}

/**
 * Both tables as src/exposure/search-learned.json holds them: a line for each word, `word:other,other` for the related
 * words (most often seen first), `word:term=2,term=-1` for the pair weights; words and terms in the alphabet's order.
 */
export function learnedJson(related: LearnedRelated, pairs: PairWeights): string {
  const sorted = <V>(entries: Iterable<[string, V]>) => [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const lines = (entries: [string, string[]][]) =>
    entries.map(([word, items]) => `  ${JSON.stringify(`${word}:${items.join(",")}`)}`).join(",\n");
  const relatedLines = lines(sorted(related).map(([word, others]) => [word, [...others]]));
  const pairLines = lines(
    sorted(pairs).map(([word, row]) => [word, sorted(row).map(([term, weight]) => `${term}=${weight}`)]),
  );
  return `{\n "related": [\n${relatedLines}\n ],\n "pairs": [\n${pairLines}\n ]\n}\n`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { related, pairs } = learnTables();
  writeFileSync(LEARNED_FILE, learnedJson(related, pairs));
  const count = (sizes: number[]) => sizes.reduce((sum, size) => sum + size, 0);
  console.log(
    `src/exposure/search-learned.json: ${related.size} words, ${count([...related.values()].map((o) => o.length))} related words; ` +
      `${pairs.size} words, ${count([...pairs.values()].map((r) => r.size))} pairs`,
  );
}
