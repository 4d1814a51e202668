/**
 * The bench runner's own logic: sections run in order and a throwing one does not stop the rest, the table's verdicts,
 * the JSON shape bench/README.md documents, the statistics and the round loop. (The figures themselves are measured by
 * `npm run bench`, not here: no timing is asserted.)
 */
import assert from "node:assert/strict";
import * as path from "node:path";
import { describe, test } from "node:test";
import type { Figure, FigureSection } from "../bench/figures/figure.ts";
import { packageOf } from "../bench/figures/install.ts";
import { formatTable, type Machine, reportOf, runSections, verdict } from "../bench/report.ts";
import { median, quantile, repeatRounds, settled } from "../bench/stats.ts";

const MACHINE: Machine = {
  cpus: 2,
  cpuModel: "test",
  memoryGB: 1,
  node: "v20",
  platform: "linux",
  arch: "x64",
  date: "2026-01-01T00:00:00.000Z",
};

const figure = (over: Partial<Figure>): Figure => ({ id: "x.ratio", label: "a ratio", value: 1, unit: "×", ...over });
const section = (title: string, figures: Figure[] | Error): FigureSection => ({
  title,
  measure: async () => {
    if (figures instanceof Error) throw figures;
    return figures;
  },
});

describe("bench runner", () => {
  test("a section that throws is reported as failed and the sections after it still run", async () => {
    const seen: string[] = [];
    const results = await runSections(
      [
        section("first", [figure({ id: "first.a" })]),
        section("broken", new Error("server would not start\nstack line")),
        section("last", [figure({ id: "last.a" })]),
      ],
      (r) => seen.push(r.title),
    );
    assert.deepEqual(seen, ["first", "broken", "last"]);
    assert.deepEqual(
      results.map((r) => [r.title, r.error, r.figures.map((f) => f.id)]),
      [
        ["first", undefined, ["first.a"]],
        ["broken", "server would not start\nstack line", []],
        ["last", undefined, ["last.a"]],
      ],
    );
    const table = formatTable(results);
    assert.match(table, /broken\s+\(section failed\)\s+FAILED: server would not start$/m);
    assert.doesNotMatch(table, /stack line/);
    const report = reportOf(MACHINE, results);
    assert.deepEqual(
      report.sections.map((s) => [s.title, s.ok, s.error]),
      [
        ["first", true, undefined],
        ["broken", false, "server would not start\nstack line"],
        ["last", true, undefined],
      ],
    );
  });

  test("verdicts: met, missed by how much in the figure's unit and in percent, nothing without a target", () => {
    assert.equal(verdict(figure({ value: 1.62, target: { op: "<=", value: 1.5 } })), "missed by 0.12× (8%)");
    assert.equal(verdict(figure({ value: 1.5, target: { op: "<=", value: 1.5 } })), "met");
    assert.equal(
      verdict(figure({ value: 0.9, unit: "calls/s", target: { op: ">=", value: 0.95 } })),
      "missed by 0.05 calls/s (5%)",
    );
    assert.equal(
      verdict(figure({ value: 40, unit: "MB", target: { op: "<=", value: 35 } })),
      "missed by 5.00 MB (14%)",
    );
    assert.equal(verdict(figure({ value: 3 })), "");
  });

  test("the table shows value with unit and the target; the JSON marks met as true, false or null", async () => {
    const results = await runSections([
      section("calls", [
        figure({ id: "c.met", label: "met one", value: 1.02, target: { op: "<=", value: 1.05 } }),
        figure({ id: "c.missed", label: "missed one", value: 1.2, target: { op: "<=", value: 1.05 } }),
        figure({ id: "c.none", label: "plain", value: 412.7, unit: "ms", detail: { rounds: 5 } }),
      ]),
    ]);
    const table = formatTable(results).split("\n");
    assert.equal(table.length, 5);
    assert.match(table[2]!, /^calls\s+met one\s+1\.02×\s+<= 1\.05×\s+met$/);
    assert.match(table[3]!, /^calls\s+missed one\s+1\.20×\s+<= 1\.05×\s+missed by 0\.15× \(14%\)$/);
    assert.match(table[4]!, /^calls\s+plain\s+413 ms$/);
    const json = JSON.parse(JSON.stringify(reportOf(MACHINE, results)));
    assert.deepEqual(json.machine, MACHINE);
    assert.deepEqual(
      json.sections[0].figures.map((f: { id: string; met: boolean | null }) => [f.id, f.met]),
      [
        ["c.met", true],
        ["c.missed", false],
        ["c.none", null],
      ],
    );
    assert.deepEqual(json.sections[0].figures[2], {
      id: "c.none",
      label: "plain",
      value: 412.7,
      unit: "ms",
      detail: { rounds: 5 },
      met: null,
    });
  });
});

describe("bench statistics", () => {
  test("median and quartiles interpolate between neighbours", () => {
    assert.equal(median([5, 1, 3]), 3);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.equal(quantile([1, 2, 3, 4, 5], 0.25), 2);
    assert.throws(() => median([]), /no values/);
  });

  test("settled: a small spread, or a middle half wholly on one side of the target", () => {
    assert.equal(settled([1, 1.02, 0.99, 1.01], { spread: 0.1 }), true);
    assert.equal(settled([1, 2, 3, 4], { spread: 0.1 }), false);
    assert.equal(settled([2, 2.5, 3, 3.5], { spread: 0.1, target: 1.5 }), true);
    assert.equal(settled([1, 1.4, 1.7, 2], { spread: 0.1, target: 1.5 }), false);
  });

  test("rounds stop at the minimum once settled, and at the maximum when they never settle", async () => {
    const steady = await repeatRounds(
      { min: 3, max: 10, spread: 0.1 },
      async () => 5,
      (v) => v,
    );
    assert.equal(steady.length, 3);
    const wild = await repeatRounds(
      { min: 3, max: 6, spread: 0.1 },
      async (i) => (i % 2 ? 1 : 100),
      (v) => v,
    );
    assert.equal(wild.length, 6);
  });

  test("install sizes are counted by the package a file sits in, nested and scoped ones included", () => {
    assert.equal(packageOf(path.join("node_modules", "zod", "v4", "core.js")), "zod");
    assert.equal(
      packageOf(path.join("node_modules", "@modelcontextprotocol", "sdk", "dist", "a.js")),
      "@modelcontextprotocol/sdk",
    );
    assert.equal(packageOf(path.join("node_modules", "express", "node_modules", "qs", "lib", "x.js")), "qs");
  });
});
