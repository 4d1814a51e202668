/**
 * What the SDK v2 client's own request options cost a burst of calls, without the bridge: four bare clients, each on
 * a process of its own of examples/hello-server.mjs, calling `greet` in bursts of BENCH_CONCURRENT (1,000), the four
 * alternating burst by burst (the order turned round each round) for BENCH_ROUNDS (80) rounds after 5 unmeasured:
 * a bare call, one with a progress listener, one with a turn's signal (followed as the bridge follows pi's), and one
 * with what the bridge gives with every call (`sameOptions` in ./figures/calls.ts). Prints each side's median wall
 * time and client CPU per call, and its wall time over the bare call's. The four share this process's heap, so what
 * one leaves to the garbage collector can be paid by another: read the figures of a few runs together.
 *
 * Run: node --import tsx bench/sdk-request-options.ts
 */
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import type { RequestOptions } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { followSignal } from "../src/common/follow-signal.ts";
import { sameOptions, type Side, sdkSide } from "./figures/calls.ts";
import { envCount, median } from "./stats.ts";

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "examples", "hello-server.mjs");
const CONCURRENT = envCount("BENCH_CONCURRENT", 1000);
// 40 rounds were too few to tell the options apart in two runs of three (bench/results/2026-12-03-same-options.md).
const ROUNDS = envCount("BENCH_ROUNDS", 80);
const WARMUP = 5;

const turn = new AbortController().signal;
const onprogress = () => undefined;
const options: Record<string, (() => RequestOptions) | undefined> = {
  bare: undefined,
  progress: () => ({ onprogress }),
  signal: () => ({ signal: followSignal(turn) }),
  "as the bridge": sameOptions(turn),
};

const sides: Array<[string, Side]> = [];
try {
  for (const [name, make] of Object.entries(options)) {
    const transport = new StdioClientTransport({ command: process.execPath, args: [SERVER], stderr: "ignore" });
    sides.push([name, await sdkSide(transport, make)]);
  }
  const wall = new Map<string, number[]>();
  const cpu = new Map<string, number[]>();
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    for (const [name, side] of round % 2 === 0 ? sides : [...sides].reverse()) {
      const startedCpu = process.cpuUsage();
      const started = performance.now();
      await Promise.all(Array.from({ length: CONCURRENT }, () => side.call()));
      const usage = process.cpuUsage(startedCpu);
      if (round < WARMUP) continue;
      wall.set(name, [...(wall.get(name) ?? []), ((performance.now() - started) * 1000) / CONCURRENT]);
      cpu.set(name, [...(cpu.get(name) ?? []), (usage.user + usage.system) / CONCURRENT]);
    }
  }
  const bare = median(wall.get("bare")!);
  console.log(`bursts of ${CONCURRENT}, ${ROUNDS} rounds: wall µs a call, client CPU µs a call, wall / bare`);
  for (const [name] of sides) {
    const w = median(wall.get(name)!);
    console.log(
      `${name.padEnd(14)} ${w.toFixed(1).padStart(7)} ${median(cpu.get(name)!).toFixed(1).padStart(7)} ${(w / bare).toFixed(3).padStart(7)}`,
    );
  }
} finally {
  await Promise.all(sides.map(([, side]) => side.close()));
}
