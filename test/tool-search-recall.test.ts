/**
 * How well `tool_search` finds the tool a request needs, through real pi: every saved server runs as a real process
 * behind `"exposure": "deferred"`, a scripted model sends each request of a set as a `tool_search` call, and a request
 * counts as found when one of its answers is among the first 3 tools the call loaded. The floors are where the ranking
 * stands now (bench/figures/search.ts reports the figures): a change that loses requests fails here, with the requests
 * it lost.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type PiRecall, publicSavedServers, recallThroughPi, WORK_HUB } from "../bench/search-through-pi.ts";
import { laterQueries, relevanceQueries, workRequests } from "../bench/tool-search-recall.ts";
import { PI_LINE } from "./pi-line.ts";

function assertRecall(name: string, recall: PiRecall | undefined, floor: number): void {
  assert.ok(recall, name);
  const misses = recall.misses.map((miss) => `${miss.query} → ${miss.got.join(", ")}`).join("\n");
  assert.ok(
    recall.recall[3]! >= floor,
    `${name}: recall@3 ${recall.recall[3]!.toFixed(3)} < ${floor}; missed:\n${misses}`,
  );
}

describe(`tool_search recall through pi (pi ${PI_LINE})`, { timeout: 300_000 }, () => {
  test("the first sets, over the 16 public servers", async () => {
    const recall = await recallThroughPi(publicSavedServers(), {
      relevance: relevanceQueries(),
      later: laterQueries(),
    });
    assertRecall("relevance", recall.relevance, 0.9);
    assertRecall("later", recall.later, 0.9);
  });

  // The ranking is the bridge's, the same on both pi lines; what each pi does with a search is checked above. So the
  // large sets (about 20 s of CPU) run on pi 1.x only, the line most users run.
  const onPi1x = { skip: PI_LINE === "1.x" ? false : "the same ranking as on pi 1.x, where these sets run" };
  test("the blind sets, over the public servers and the 246-tool work hub", onPi1x, async () => {
    const recall = await recallThroughPi([...publicSavedServers(), WORK_HUB], workRequests());
    assertRecall("tune", recall.tune, 0.9);
    assertRecall("heldout", recall.heldout, 0.9);
  });
});
