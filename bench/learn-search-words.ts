/**
 * Learns which words of people's requests go with which words of the tools that answer them, from the `tune` set of
 * ./fixtures/tool-search-work-requests.json (never its `heldout` set, nor the later relevance set), and writes them to
 * src/exposure/search-learned.ts, where the tool search reads them as related words (./search-related.ts's hand-written
 * groups are the same kind of thing). People say "hours" where the API says "worklog", "prod" where it says
 * "kubernetes": with 1,700 requests labelled by hand, such pairs can be counted rather than guessed.
 *
 * A pair counts when a request says the word (as one of its concepts, ../src/exposure/search-query.ts) and one of its
 * answers has the other in its name or its description's first sentence. It is kept when it is seen often
 * (`MIN_COUNT`), when most requests with the word have it (`MIN_SHARE`), and when it is far likelier with the word than
 * without (`MIN_LIFT`); words of the tools that many tools share, and numbers, are never learnt. Each word keeps its
 * `PER_WORD` most frequent pairs. The thresholds were chosen on batches measured before they were read (the table
 * learnt from the batches before each), not on the held-out set: bench/results/2026-12-06-search-learned.md.
 *
 * `npm run search:learn` writes the table again (after the tune set or the search's reading of words changes);
 * test/search-learned.test.ts fails while the shipped table is not what this learns.
 */
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { firstSentence } from "../src/common/text.ts";
import { requestConcepts } from "../src/exposure/search-query.ts";
import { termsOf } from "../src/exposure/search-terms.ts";
import { searchableTool, type SearchableTool } from "../src/exposure/tool-search-index.ts";
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

const TABLE_FILE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "..",
  "src",
  "exposure",
  "search-learned.ts",
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

/** What the table is learnt from: the words the search reads in each tune request, and its answers' words. */
export function tuneExamples(requests: readonly RelevanceQuery[] = workRequests().tune): LabelledWords[] {
  const tools = savedTools();
  const toolWords = (tool: SearchableTool) =>
    termsOf([tool.originalName, tool.title ?? "", firstSentence(tool.description)].join(" "));
  const share = new Map<string, number>();
  for (const tool of tools.values())
    for (const word of new Set(toolWords(tool))) share.set(word, (share.get(word) ?? 0) + 1);
  const telling = (word: string) =>
    !/\d/.test(word) && word.length > 1 && share.get(word)! / tools.size <= MAX_TOOL_SHARE;
  return requests.map(({ query, answers }) => ({
    // The request's words, not what its values are taken to mean: those are the search's own rules.
    request: new Set(
      requestConcepts(query)
        .filter((concept) => concept.weight === 1 && concept.own.length === 1)
        .map((concept) => concept.own[0]!),
    ),
    answers: new Set(
      answers.flatMap((answer) => {
        const tool = tools.get(answerToolName(answer));
        return tool ? toolWords(tool).filter(telling) : [];
      }),
    ),
  }));
}

/**
 * The table as src/exposure/search-learned.ts holds it: `word:other,other` entries ended by ";" (a synonym group's token
 * may hold a space: "~pull request"), lines of at most 116 columns.
 */
export function tableText(learned: ReadonlyMap<string, readonly string[]>): string {
  const lines: string[] = [];
  let line = "";
  for (const [word, others] of learned) {
    const entry = `${word}:${others.join(",")};`;
    if (line && line.length + 1 + entry.length > 116) {
      lines.push(line);
      line = "";
    }
    line = line ? `${line} ${entry}` : entry;
  }
  if (line) lines.push(line);
  return lines.join("\n");
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const learned = learnRelatedWords(tuneExamples());
  const file = readFileSync(TABLE_FILE, "utf8");
  // The table is all that lies between the template's backquotes (TABLE = `…`;).
  const start = file.indexOf("`\n") + 2;
  const end = file.indexOf("`;", start);
  writeFileSync(TABLE_FILE, `${file.slice(0, start)}${tableText(learned)}\n${file.slice(end)}`);
  const pairs = [...learned.values()].reduce((sum, others) => sum + others.length, 0);
  console.log(`${path.relative(process.cwd(), TABLE_FILE)}: ${learned.size} words, ${pairs} related words`);
}
