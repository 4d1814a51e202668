/**
 * Search: how well `tool_search` finds the tool a request needs, measured through real pi (../search-through-pi.ts):
 * recall@1, @3 and @5 on each request set, and the time one search takes in the index.
 *
 * - `relevance` and `later`: the project's first sets, over the 16 public servers (test/fixtures/public-tools).
 * - `tune` and `heldout`: requests written blind to the tool texts over the public servers plus the work hub
 *   (test/fixtures/work-hub, 246 API-style tools); the ranking was tuned on `tune` only.
 *
 * Recall is computed, not timed: one run gives the same figures as any other. The search time is the median of
 * every request of every set, searched in turn, repeated.
 */
import { searchableTool, ToolSearchIndex } from "../../src/exposure/tool-search-index.ts";
import { toolNameFor } from "../../src/translate/naming.ts";
import { median } from "../stats.ts";
import {
  type PiRecall,
  publicSavedServers,
  recallThroughPi,
  type SavedServer,
  WORK_HUB,
} from "../search-through-pi.ts";
import { laterQueries, relevanceQueries, workRequests } from "../tool-search-recall.ts";
import { readFileSync } from "node:fs";
import type { Figure, FigureSection } from "./figure.ts";

const round = (value: number) => Number(value.toFixed(3));

function recallFigures(name: string, label: string, recall: PiRecall, target?: number): Figure[] {
  return [1, 3, 5].map((k) => ({
    id: `search.${name}.recall_at_${k}`,
    label: `tool_search recall@${k}: ${label} (${recall.total} requests)`,
    value: round(recall.recall[k] ?? 0),
    unit: "recall",
    ...(k === 3 && target !== undefined ? { target: { op: ">=" as const, value: target } } : {}),
    ...(k === 3 ? { detail: { missed: recall.misses.map((miss) => miss.query).join(" | ") } } : {}),
  }));
}

/** The index over the given servers, as the bridge builds it. */
function indexOf(servers: readonly SavedServer[]): ToolSearchIndex {
  const index = new ToolSearchIndex();
  for (const { server, file } of servers) {
    const { tools } = JSON.parse(readFileSync(file, "utf8")) as { tools: Parameters<typeof searchableTool>[0][] };
    for (const tool of tools) index.add(searchableTool(tool, server, toolNameFor(server, tool.name)));
  }
  return index;
}

export const searchSection: FigureSection = {
  title: "search",
  async measure(): Promise<Figure[]> {
    const publicServers = publicSavedServers();
    const work = workRequests();
    const first = await recallThroughPi(publicServers, { relevance: relevanceQueries(), later: laterQueries() });
    const second = await recallThroughPi([...publicServers, WORK_HUB], work);
    const index = indexOf([...publicServers, WORK_HUB]);
    const requests = [...relevanceQueries(), ...laterQueries(), ...work.tune, ...work.heldout];
    const times: number[] = [];
    for (let round = 0; round < 5; round++) {
      for (const { query } of requests) {
        const start = performance.now();
        index.find(query, 5);
        times.push(performance.now() - start);
      }
    }
    return [
      ...recallFigures("relevance", "first set, public servers", first.relevance!, 0.9),
      ...recallFigures("later", "later set, public servers", first.later!),
      ...recallFigures("tune", "blind set tuned on, public servers + work hub", second.tune!),
      ...recallFigures("heldout", "blind held-out set, public servers + work hub", second.heldout!, 0.9),
      {
        id: "search.time_ms",
        label: `one search, ${index.size} tools (median)`,
        value: round(median(times)),
        unit: "ms",
        target: { op: "<=", value: 50 },
        detail: { searches: times.length, max: round(Math.max(...times)) },
      },
    ];
  },
};
