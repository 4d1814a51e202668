/**
 * Memory: the bridge's share of pi's memory per connected server. Each sample is a fresh process running pi 0.73.1
 * in-process with the bridge and N servers connected (bench/memory-child.ts), against the same with no servers, the
 * two run alternately; the servers' own processes are not counted. Per server = (with N − with 0) / N, the median of
 * the rounds.
 *
 * RSS is what the operating system sees, but V8 keeps heap pages it no longer needs, so two identical processes differ
 * by a few MB even with a small young generation: RSS per server is the noisier figure. The live JS heap after a full
 * collection is the steady measure of what the bridge's objects take per server; both are reported.
 */
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { childJson } from "../child-json.ts";
import { envCount, median, repeatRounds, summary } from "../stats.ts";
import type { Figure, FigureSection } from "./figure.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const CHILD = path.join(ROOT, "bench", "memory-child.ts");
const SERVERS = envCount("BENCH_MEMORY_SERVERS", 20);
// RSS per server wanders by a third between identical rounds; a quarter is as settled as it gets in a few rounds.
const ROUNDS = { min: envCount("BENCH_MEMORY_ROUNDS", 5), max: envCount("BENCH_MEMORY_MAX_ROUNDS", 7), spread: 0.25 };
const MB = 1024 * 1024;

interface Sample {
  rss: number;
  heapUsed: number;
  tools: number;
}

function sample(servers: number): Promise<Sample> {
  // A young generation of 1 MB: otherwise how much of it stays committed after the last collection varies by up to
  // ~15 MB from one process to the next and buries the servers' share. What the bridge keeps is in the old generation.
  const args = ["--import", "tsx", "--expose-gc", "--max-semi-space-size=1", CHILD, String(servers)];
  return childJson<Sample>({ args, cwd: ROOT, timeoutMs: 90_000 });
}

interface Round {
  none: Sample;
  some: Sample;
}

const perServer = (round: Round, key: "rss" | "heapUsed") => (round.some[key] - round.none[key]) / SERVERS / MB;

async function measure(): Promise<Figure[]> {
  const rounds = await repeatRounds<Round>(
    ROUNDS,
    async (index) => {
      // Alternate which side goes first, so a drift in the machine's load does not favour one.
      if (index % 2 === 0) {
        const none = await sample(0);
        return { none, some: await sample(SERVERS) };
      }
      const some = await sample(SERVERS);
      return { none: await sample(0), some };
    },
    (round) => perServer(round, "rss"),
  );
  const rss = rounds.map((r) => perServer(r, "rss"));
  const heap = rounds.map((r) => perServer(r, "heapUsed"));
  const common = { rounds: rounds.length, servers: SERVERS, toolsPerServer: rounds[0]!.some.tools / SERVERS };
  return [
    {
      id: "memory.rssPerServer",
      label: "pi's RSS per connected server (bridge's share)",
      value: Number(median(rss).toFixed(3)),
      unit: "MB",
      detail: {
        ...common,
        ...summary("MBPerServer", rss),
        ...summary(
          "rss0.MB",
          rounds.map((r) => r.none.rss / MB),
          1,
        ),
        ...summary(
          `rss${SERVERS}.MB`,
          rounds.map((r) => r.some.rss / MB),
          1,
        ),
      },
    },
    {
      id: "memory.heapPerServer",
      label: "pi's JS heap per connected server (bridge's share)",
      value: Number(median(heap).toFixed(3)),
      unit: "MB",
      detail: { ...common, ...summary("MBPerServer", heap) },
    },
  ];
}

export const memorySection: FigureSection = { title: "memory", measure };
