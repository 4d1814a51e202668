/**
 * Recall@k of the tool search on the relevance set (./fixtures/tool-search-relevance.json): the share of requests for
 * which one of the tools that answer it is among the first k hits. Deterministic: the same index gives the same figure.
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { toolNameFor } from "../src/translate/naming.ts";
import type { ToolSearchIndex } from "../src/exposure/tool-search-index.ts";

export interface RelevanceQuery {
  query: string;
  /** `server/tool` of each tool that answers it. */
  answers: string[];
}

export interface Recall {
  k: number;
  found: number;
  total: number;
  recall: number;
  /** The requests not answered within k, with what came first instead. */
  misses: { query: string; answers: string[]; got: string[] }[];
}

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures");
const SET = path.join(FIXTURES, "tool-search-relevance.json");
const WORK_SET = path.join(FIXTURES, "tool-search-work-requests.json");

interface RelevanceSet {
  queries: RelevanceQuery[];
  afterTuning: { queries: RelevanceQuery[] };
}

function relevanceSet(): RelevanceSet {
  return JSON.parse(readFileSync(SET, "utf8")) as RelevanceSet;
}

/** The requests written before the ranking was tuned: the set the recall figure is measured on. */
export function relevanceQueries(): RelevanceQuery[] {
  return relevanceSet().queries;
}

/** Requests written after the tuning and never tuned on: how far it carries to requests it has not seen. */
export function laterQueries(): RelevanceQuery[] {
  return relevanceSet().afterTuning.queries;
}

/**
 * Requests written blind to the tool texts over the public servers and the work hub (test/fixtures/work-hub): `tune`,
 * which the ranking was tuned on, and `heldout`, which it never was. Requests no configured tool does are left out.
 */
export function workRequests(): { tune: RelevanceQuery[]; heldout: RelevanceQuery[] } {
  const set = JSON.parse(readFileSync(WORK_SET, "utf8")) as { tune: RelevanceQuery[]; heldout: RelevanceQuery[] };
  const answered = (queries: RelevanceQuery[]) => queries.filter((query) => query.answers.length > 0);
  return { tune: answered(set.tune), heldout: answered(set.heldout) };
}

/** The pi tool name of a `server/tool` answer. */
export function answerToolName(answer: string): string {
  const slash = answer.indexOf("/");
  return toolNameFor(answer.slice(0, slash), answer.slice(slash + 1));
}

export function recallAt(index: ToolSearchIndex, queries: RelevanceQuery[], k: number): Recall {
  const misses: Recall["misses"] = [];
  for (const { query, answers } of queries) {
    const got = index.find(query, k).map((hit) => hit.name);
    if (!answers.some((answer) => got.includes(answerToolName(answer)))) misses.push({ query, answers, got });
  }
  const found = queries.length - misses.length;
  return { k, found, total: queries.length, recall: queries.length === 0 ? 0 : found / queries.length, misses };
}
