/**
 * What the tool search learnt from about 2,300 requests people wrote without reading the tools, each labelled with the
 * tools that answer it; the data is ./search-learned.json, written by bench/learn-search-words.ts (`npm run
 * search:learn`, which says how), never edited by hand. Words as the index stores them (./search-terms.ts: stems, and
 * a synonym group's token after "~").
 *
 * - Related words: where a request says a word, an answer's name or first sentence often says these ("spent" and the
 *   worklog). The search reads them as it reads the hand-written groups of ./search-related.ts, at the same lower weight.
 * - Pair weights of a request's word and a word of a tool's name, learnt from the search's own mistakes: where it put a
 *   wrong tool first and a right one among its first ten, each pair the right one has and the wrong one lacks gained a
 *   unit, each the wrong one has and the right one lacks lost one (a perceptron, five passes). The search reorders its
 *   first ten hits by them (./tool-search-index.ts): they tell apart tools a request's words meet alike.
 */
import LEARNED from "./search-learned.json" with { type: "json" };

/** Each request word's pairs: a word of a tool's name, and its learnt weight. */
export type PairWeights = ReadonlyMap<string, ReadonlyMap<string, number>>;

/**
 * A line of text for each word: `word:other,other` (related words), `word:term=2,term=-1` (pair weights). Lines, not
 * JSON objects, as a module of some 10,000 keys takes pi 5-25 ms more to load; lines are read on the first search.
 */
const TABLES: { related: string[]; pairs: string[] } = LEARNED;

let related: ReadonlyMap<string, readonly string[]> | undefined;
let pairs: PairWeights | undefined;

/** A line's word and its items. */
function entry(line: string): [string, string[]] {
  const colon = line.indexOf(":");
  return [line.slice(0, colon), line.slice(colon + 1).split(",")];
}

/** Each request word's learnt related words, read on first use. */
export function learnedRelated(): ReadonlyMap<string, readonly string[]> {
  return (related ??= new Map(TABLES.related.map(entry)));
}

/** The learnt pair weights, read on first use. */
export function learnedPairs(): PairWeights {
  const weighed = (item: string) => {
    const at = item.lastIndexOf("=");
    return [item.slice(0, at), Number(item.slice(at + 1))] as const;
  };
  return (pairs ??= new Map(TABLES.pairs.map(entry).map(([word, items]) => [word, new Map(items.map(weighed))])));
}
