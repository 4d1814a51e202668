/**
 * What loading the extension adds to a whole `pi -p` run (pi 0.73's CLI, a scripted local model, no network): the
 * same command with and without `-e <package>`, run alternately (which goes first swapped each pair), each pair's
 * difference in wall time and in the pi process's own CPU time (./cpu-at-exit.mjs; servers' processes not counted).
 * The package as published (its bundle, dist/, built here by scripts/build-bundle.mjs into a copy) with a config that
 * has no servers (the extension's own cost; the target) and with examples/demo.json (two local servers that print
 * mode waits for); the checkout (the sources) with no servers. A round's figure is the median of its pairs; the
 * figure is the median of the rounds.
 *
 * Counts: BENCH_CLI_PAIRS pairs a round (default 4), BENCH_CLI_ROUNDS/BENCH_CLI_MAX_ROUNDS rounds (default 3 to 7).
 */
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { envCount, median, repeatRounds, summary } from "../stats.ts";
import type { Figure, FigureSection } from "./figure.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const PI_CLI = path.join(ROOT, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
const CPU_HOOK = path.join(ROOT, "bench", "cpu-at-exit.mjs");
const PAIRS = envCount("BENCH_CLI_PAIRS", 4);
const ROUNDS = { min: envCount("BENCH_CLI_ROUNDS", 3), max: envCount("BENCH_CLI_MAX_ROUNDS", 7), spread: 0.15 };
const TARGET_MS = 150;

interface Run {
  wallMs: number;
  cpuMs: number;
}

/** Where the extension is loaded from, and the config it reads. */
interface Extension {
  pkg: string;
  config: string;
  /** pi's working directory, the project (default: the bench's temp dir). */
  cwd?: string;
}

/** One `pi -p` run to the scripted model in `cwd`, timed; `extension` adds `-e <package>` with that config. */
async function runPi(dir: string, extension: Extension | undefined, cwd = extension?.cwd ?? dir): Promise<Run> {
  const cpuFile = path.join(dir, "cpu");
  rmSync(cpuFile, { force: true });
  const model = ["-e", path.join(ROOT, "examples", "scripted-model.ts"), "--provider", "scripted", "--model", "demo"];
  const bridge = extension ? ["-e", extension.pkg, "--mcp-config", extension.config] : [];
  const args = ["--import", CPU_HOOK, PI_CLI, ...model, ...bridge, "--no-session", "--offline", "-p", "greet Ada"];
  const agentDir = path.join(dir, "agent");
  const env = { ...process.env, HOME: dir, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", BENCH_CPU_FILE: cpuFile };
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr = (stderr + text).slice(-2000)));
  const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", resolve);
  }).finally(() => clearTimeout(timer));
  const wallMs = performance.now() - started;
  if (code !== 0) throw new Error(`pi exited with ${code}: ${stderr.trim().split("\n").slice(-3).join(" | ")}`);
  return { wallMs, cpuMs: Number(readFileSync(cpuFile, "utf8").trim()) };
}

interface Round {
  extraWallMs: number;
  extraCpuMs: number;
  ratio: number;
}

const WHICH: Record<string, string> = {
  empty: "the package, no servers",
  demo: "the package, demo config (2 servers)",
  sources: "the checkout's sources, no servers",
};

async function measureConfig(dir: string, name: string, extension: Extension, target: boolean): Promise<Figure[]> {
  const which = WHICH[name];
  await runPi(dir, undefined, extension.cwd);
  await runPi(dir, extension);
  const rounds = await repeatRounds<Round>(
    { ...ROUNDS, ...(target ? { target: TARGET_MS } : {}) },
    async () => {
      const wall: number[] = [];
      const cpu: number[] = [];
      const ratios: number[] = [];
      for (let i = 0; i < PAIRS; i++) {
        const first = i % 2 === 0;
        const a = first ? await runPi(dir, extension) : undefined;
        const b = await runPi(dir, undefined, extension.cwd);
        const withExtension = a ?? (await runPi(dir, extension));
        wall.push(withExtension.wallMs - b.wallMs);
        cpu.push(withExtension.cpuMs - b.cpuMs);
        ratios.push(withExtension.wallMs / b.wallMs);
      }
      return { extraWallMs: median(wall), extraCpuMs: median(cpu), ratio: median(ratios) };
    },
    (round) => round.extraWallMs,
  );
  const wall = rounds.map((r) => r.extraWallMs);
  const cpu = rounds.map((r) => r.extraCpuMs);
  return [
    {
      id: `cli.${name}.extraMs`,
      label: `pi -p with the extension vs without, ${which}: added wall time`,
      value: Math.round(median(wall)),
      unit: "ms",
      ...(target ? { target: { op: "<=", value: TARGET_MS } } : {}),
      detail: {
        pairsPerRound: PAIRS,
        rounds: rounds.length,
        ...summary("wallMs", wall, 1),
        ...summary("cpuMs", cpu, 1),
        ...summary(
          "ratio",
          rounds.map((r) => r.ratio),
        ),
      },
    },
    {
      id: `cli.${name}.extraCpuMs`,
      label: `pi -p with the extension vs without, ${which}: added CPU time of pi's process`,
      value: Math.round(median(cpu)),
      unit: "ms",
      detail: { rounds: rounds.length, ...summary("cpuMs", cpu, 1) },
    },
  ];
}

/** The package as `npm pack` makes it: its files, the sources, and dist/ built by the package's own build. */
function packageCopy(dir: string): string {
  const pkg = path.join(dir, "package");
  mkdirSync(pkg);
  for (const file of ["package.json", "index.ts", "mcp.json", "src"]) {
    cpSync(path.join(ROOT, file), path.join(pkg, file), { recursive: true });
  }
  symlinkSync(path.join(ROOT, "node_modules"), path.join(pkg, "node_modules"));
  const build = spawnSync(process.execPath, ["scripts/build-bundle.mjs", "--outdir", path.join(pkg, "dist")], {
    cwd: ROOT,
    encoding: "utf8",
  });
  if (build.status !== 0) throw new Error(`the bundle did not build: ${build.stderr}`);
  return pkg;
}

export const cliStartSection: FigureSection = {
  title: "CLI start: pi -p with and without the extension",
  async measure() {
    const dir = mkdtempSync(path.join(tmpdir(), "mcp-bridge-bench-cli-"));
    try {
      const empty = path.join(dir, "empty.json");
      writeFileSync(empty, JSON.stringify({ mcpServers: {} }));
      const pkg = packageCopy(dir);
      return [
        ...(await measureConfig(dir, "empty", { pkg, config: empty }, true)),
        ...(await measureConfig(
          dir,
          "demo",
          { pkg, config: path.join(ROOT, "examples", "demo.json"), cwd: ROOT },
          false,
        )),
        ...(await measureConfig(dir, "sources", { pkg: ROOT, config: empty }, false)),
      ];
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
