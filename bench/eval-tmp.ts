import { readFileSync } from "node:fs";
import { publicServers } from "../test/fixtures/public-tools.ts";
import { searchableTool, ToolSearchIndex } from "../src/exposure/tool-search-index.ts";
import { toolNameFor } from "../src/translate/naming.ts";
import { laterQueries, recallAt, relevanceQueries, type RelevanceQuery } from "./tool-search-recall.ts";
const pub = new ToolSearchIndex();
const all = new ToolSearchIndex();
for (const { server, tools } of publicServers()) for (const tool of tools) { pub.add(searchableTool(tool, server, toolNameFor(server, tool.name))); all.add(searchableTool(tool, server, toolNameFor(server, tool.name))); }
const hub = JSON.parse(readFileSync("test/fixtures/work-hub/tools.json", "utf8"));
for (const tool of hub.tools) all.add(searchableTool(tool, "hub", toolNameFor("hub", tool.name)));
const work = JSON.parse(readFileSync("bench/fixtures/tool-search-work-requests.json", "utf8"));
const sets: [string, ToolSearchIndex, RelevanceQuery[]][] = [["tune", pub, relevanceQueries()], ["later", pub, laterQueries()], ["work", all, work.tune.filter((q: RelevanceQuery) => q.answers.length)]];
if (process.env.HELDOUT) sets.push(["HELDOUT", all, work.heldout.filter((q: RelevanceQuery) => q.answers.length)]);
const t0 = performance.now(); let n = 0; const summary: string[] = [];
for (const [name, index, qs] of sets) {
  const r = [1, 3, 5].map((k) => recallAt(index, qs, k));
  n += qs.length * 3;
  summary.push(`${name} ${r[1]!.recall.toFixed(3)}`);
  console.log(`${name.padEnd(8)} n=${qs.length} @1 ${r[0]!.recall.toFixed(3)} @3 ${r[1]!.recall.toFixed(3)} @5 ${r[2]!.recall.toFixed(3)}`);
  if (name !== "HELDOUT" && process.env.MISS?.split(",").includes(name)) for (const m of r[1]!.misses) console.log(`   ✗ ${m.query} → want ${m.answers.join("|")} got ${m.got.join(", ").replace(/mcp_/g, "")}`);
}
console.log(`${((performance.now() - t0) / n).toFixed(2)} ms/search | ${summary.join(" | ")}`);
