/**
 * What the tool search learns from labelled requests: the related words and the pair weights
 * (src/exposure/search-learned.json, read by search-learned.ts). The shipped tables are what bench/learn-search-words.ts learns from
 * the tune set; a related word is learnt only when seen often and far likelier than by chance, and finds a tool whose
 * own words the request does not say; the pair weights are learnt from the search's mistakes, and reorder its first
 * hits, a bounded amount.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import type { Tool } from "@modelcontextprotocol/client";
import {
  type LabelledWords,
  learnPairWeights,
  learnRelatedWords,
  LEARNED_FILE,
  learnedJson,
  learnTables,
} from "../bench/learn-search-words.ts";
import { learnedPairs, learnedRelated } from "../src/exposure/search-learned.ts";
import { requestConcepts } from "../src/exposure/search-query.ts";
import { REORDERED, reorder, searchableTool, ToolSearchIndex } from "../src/exposure/tool-search-index.ts";
import { toolNameFor } from "../src/translate/naming.ts";
import { termsOf } from "../src/exposure/search-terms.ts";
import { REPO_ROOT } from "./helpers.ts";

const labelled = (request: string, answers: string): LabelledWords => ({
  request: new Set(request.split(" ")),
  answers: new Set(answers.split(" ")),
});

describe("learnt related words", () => {
  test("the shipped tables are what bench/learn-search-words.ts learns from the tune set", () => {
    const { related, pairs } = learnTables();
    const stale = "is not what the tune set teaches: npm run search:learn";
    assert.ok(
      learnedJson(related, pairs) === readFileSync(LEARNED_FILE, "utf8"),
      `src/exposure/search-learned.json ${stale}`,
    );
    assert.ok(learnedJson(learnedRelated(), learnedPairs()) === readFileSync(LEARNED_FILE, "utf8"), "read as written");
    assert.ok(learnedRelated().size > 100, `${learnedRelated().size} words`);
    assert.ok(learnedPairs().size > 100, `${learnedPairs().size} words`);
  });

  test("a pair is learnt when seen often, with most requests that say the word, and far likelier than by chance", () => {
    const examples = [
      // "spent" goes with the worklog three times in four; "hour" every time.
      ...Array.from({ length: 3 }, () => labelled("spent hour", "worklog add")),
      labelled("spent", "cost"),
      // Seen once: no pair.
      labelled("bounce", "reboot"),
      // "add" is in most answers, so no request word makes it likelier; a word the request says is met already.
      ...Array.from({ length: 40 }, (_, i) => labelled(`channel w${i}`, "add channel post")),
    ];
    const learned = learnRelatedWords(examples);
    assert.deepEqual(learned.get("spent"), ["worklog"]);
    assert.deepEqual(learned.get("hour"), ["worklog"]);
    assert.equal(learned.has("bounce"), false);
    assert.equal(learned.has("channel"), false);
    assert.deepEqual(learnRelatedWords(examples.toReversed()), learned, "the same in any order");
  });

  test("the tables' file is one word to a line, in the alphabet's order, and a token with a space stays one", () => {
    const related = new Map([
      ["merg", ["~pull request", "branch"]],
      ["close", ["~resolve"]],
    ]);
    const pairs = new Map([
      [
        "shelv",
        new Map([
          ["open", -2],
          ["close", 3],
        ]),
      ],
    ]);
    const text = learnedJson(related, pairs);
    assert.equal(
      text,
      '{\n "related": [\n  "close:~resolve",\n  "merg:~pull request,branch"\n ],\n' +
        ' "pairs": [\n  "shelv:close=3,open=-2"\n ]\n}\n',
    );
  });

  test("a learnt word finds the tool a request's own words do not name: a flaky job given another go is rerun", () => {
    const { tools } = JSON.parse(
      readFileSync(path.join(REPO_ROOT, "test", "fixtures", "work-hub", "tools.json"), "utf8"),
    ) as { tools: Tool[] };
    const index = new ToolSearchIndex();
    for (const tool of tools) index.add(searchableTool(tool, "hub", toolNameFor("hub", tool.name)));
    const request = "the nightly job is flaky, give it another go";
    assert.ok(
      requestConcepts(request).some((concept) => concept.related.includes("rerun")),
      "a learnt word of the request",
    );
    assert.equal(index.find(request, 3)[0]?.name, toolNameFor("hub", "github_rerun_workflow"));
  });

  test("pair weights are learnt from the search's mistakes: the right tool's name words gain, the wrong one's lose", () => {
    const tools: Tool[] = [
      { name: "gadget_open", description: "Opens a gadget, any gadget.", inputSchema: { type: "object" } },
      { name: "gadget_close", description: "Closes a gadget.", inputSchema: { type: "object" } },
    ];
    const index = new ToolSearchIndex({ related: new Map(), pairs: new Map() });
    for (const tool of tools) index.add(searchableTool(tool, "box", toolNameFor("box", tool.name)));
    const open = toolNameFor("box", "gadget_open");
    const close = toolNameFor("box", "gadget_close");
    const request = "shelve the gadget for the night";
    assert.equal(index.find(request, 2)[0]?.name, open, "the search's own first hit");
    const requests = [
      { query: request, answers: [close] },
      { query: "shelve this gadget", answers: [close] },
      // Said once: no weights.
      { query: "retire the gadget", answers: [close] },
    ];
    const pairs = learnPairWeights(index, requests, new Map());
    const [shelve] = termsOf("shelve");
    const [retire] = termsOf("retire");
    assert.ok((pairs.get(shelve!)?.get(termsOf("close")[0]!) ?? 0) > 0, learnedJson(new Map(), pairs));
    assert.ok((pairs.get(shelve!)?.get(termsOf("open")[0]!) ?? 0) < 0, learnedJson(new Map(), pairs));
    assert.equal(pairs.has(retire!), false, "a word said once");
    const learnt = new ToolSearchIndex({ related: new Map(), pairs });
    for (const tool of tools) learnt.add(searchableTool(tool, "box", toolNameFor("box", tool.name)));
    assert.equal(learnt.find("shelve it, the gadget", 2)[0]?.name, close);
  });

  test("the pair weights reorder only the first hits, and by at most a tenth of the best score", () => {
    const hits = Array.from({ length: REORDERED + 2 }, (_, i) => ({ name: `t${i}`, score: 10 - i * 0.5 }));
    const named = (name: string) => [name];
    // Every tool but the second and the last gains: the second (9.5) may pass the first (10) by its weight alone.
    const pairs = new Map([
      [
        "w",
        new Map([
          ["t1", 5],
          [`t${REORDERED + 1}`, 5],
        ]),
      ],
    ]);
    const order = reorder(hits, ["w"], named, pairs).map((hit) => hit.name);
    assert.equal(order[0], "t1", "the second gains up to a tenth of the best score: 9.5 + 1 > 10");
    assert.equal(order.at(-1), `t${REORDERED + 1}`, "past the first REORDERED, nothing moves");
    const far = reorder([hits[0]!, { name: "t1", score: 8.9 }], ["w"], named, pairs).map((hit) => hit.name);
    assert.deepEqual(far, ["t0", "t1"], "capped: 8.9 + 1 < 10");
    assert.deepEqual(reorder(hits, ["w"], named, new Map()), hits, "no weights, no change");
  });
});
