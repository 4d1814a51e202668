/**
 * `npm run bench`: measures every section below, prints a table and writes the figures as JSON (bench/README.md).
 *
 *   npm run bench                          all sections, JSON to bench/results/<today's date>.json (kept in git)
 *   npm run bench -- --out /tmp/b.json     (or BENCH_OUT=/tmp/b.json) the JSON elsewhere
 *   npm run bench -- --only startup,install (or BENCH_ONLY=…) only the sections whose title contains one of the words
 *
 * Exits non-zero when a section fails (the others still run); a missed target is reported, not an error.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { callsSection } from "./figures/calls.ts";
import { catalogSection } from "./figures/catalog.ts";
import { cliStartSection } from "./figures/cli-start.ts";
import { contextSection } from "./figures/context.ts";
import type { FigureSection } from "./figures/figure.ts";
import { installSection } from "./figures/install.ts";
import { memorySection } from "./figures/memory.ts";
import { sandboxSection } from "./figures/sandbox.ts";
import { searchSection } from "./figures/search.ts";
import { sharedSection } from "./figures/shared.ts";
import { startupSection } from "./figures/startup.ts";
import { formatTable, type Machine, reportOf, runSections } from "./report.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const SECTIONS: FigureSection[] = [
  callsSection,
  cliStartSection,
  startupSection,
  memorySection,
  installSection,
  contextSection,
  searchSection,
  catalogSection,
  sandboxSection,
  sharedSection,
];

function option(name: string): string | undefined {
  const args = process.argv.slice(2);
  const at = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (at < 0) return undefined;
  const arg = args[at]!;
  return arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : args[at + 1];
}

function machine(): Machine {
  const cpus = os.cpus();
  return {
    cpus: os.availableParallelism?.() ?? cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? "unknown",
    memoryGB: Number((os.totalmem() / 1024 ** 3).toFixed(1)),
    node: process.version,
    platform: process.platform,
    arch: process.arch,
    date: new Date().toISOString(),
  };
}

const dated = path.join(ROOT, "bench", "results", `${new Date().toISOString().slice(0, 10)}.json`);
const out = path.resolve(option("out") ?? process.env.BENCH_OUT ?? dated);
const only = (option("only") ?? process.env.BENCH_ONLY)
  ?.split(",")
  .map((w) => w.trim().toLowerCase())
  .filter(Boolean);
const sections = only?.length ? SECTIONS.filter((s) => only.some((w) => s.title.toLowerCase().includes(w))) : SECTIONS;
if (sections.length === 0) {
  console.error(
    `No section matches ${JSON.stringify(only)}; the sections are: ${SECTIONS.map((s) => s.title).join(", ")}`,
  );
  process.exit(2);
}

const host = machine();
console.error(`bench: ${sections.map((s) => s.title).join(", ")} on ${host.cpus} CPUs, node ${host.node}`);
const results = await runSections(sections, (r) =>
  console.error(
    `bench: ${r.title} ${r.error === undefined ? `done in ${r.seconds} s` : `FAILED after ${r.seconds} s: ${r.error}`}`,
  ),
);
console.log(formatTable(results));
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(reportOf(host, results), null, 2)}\n`);
const shown = path.relative(process.cwd(), out);
console.log(`\nJSON: ${shown.startsWith("..") ? out : shown}`);
// Exit now: a section that left a handle open must not hold the run (stdout to a file or pipe is written synchronously).
process.exit(results.some((r) => r.error !== undefined) ? 1 : 0);
