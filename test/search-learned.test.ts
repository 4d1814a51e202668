/**
 * The related words learnt from labelled requests (src/exposure/search-learned.ts): the shipped table is what
 * bench/learn-search-words.ts learns from the tune set, the learning keeps only pairs seen often and far likelier than
 * by chance, and a learnt word finds a tool whose own words the request does not say.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import type { Tool } from "@modelcontextprotocol/client";
import { type LabelledWords, learnRelatedWords, tableText, tuneExamples } from "../bench/learn-search-words.ts";
import { LEARNED_RELATED } from "../src/exposure/search-learned.ts";
import { requestConcepts } from "../src/exposure/search-query.ts";
import { searchableTool, ToolSearchIndex } from "../src/exposure/tool-search-index.ts";
import { toolNameFor } from "../src/translate/naming.ts";
import { REPO_ROOT } from "./helpers.ts";

const labelled = (request: string, answers: string): LabelledWords => ({
  request: new Set(request.split(" ")),
  answers: new Set(answers.split(" ")),
});

describe("learnt related words", () => {
  test("the shipped table is what bench/learn-search-words.ts learns from the tune set", () => {
    const learned = tableText(learnRelatedWords(tuneExamples()));
    const shipped = tableText(LEARNED_RELATED);
    assert.ok(
      learned === shipped,
      "src/exposure/search-learned.ts is not what the tune set teaches: npm run search:learn",
    );
    assert.ok(LEARNED_RELATED.size > 100, `${LEARNED_RELATED.size} words`);
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

  test("a table line holds words whose names have spaces (a synonym group's token)", () => {
    const table = new Map([["merg", ["~pull request", "branch"]]]);
    assert.equal(tableText(table), "merg:~pull request,branch;");
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
});
