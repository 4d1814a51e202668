/**
 * What loading the extension adds to a whole `pi -p` run (pi 0.73's CLI, a scripted local model, no network): the
 * same command with and without `-e .`, run alternately (which goes first swapped each pair), each pair's difference
 * in wall time and in the pi process's own CPU time (./cpu-at-exit.mjs; servers' processes not counted). Once with a
 * config that has no servers (the extension's own cost), once with examples/demo.json (two local servers that print
 * mode waits for). A round's figure is the median of its pairs; the figure is the median of the rounds.
 *
 * Counts: BENCH_CLI_PAIRS pairs a round (default 4), BENCH_CLI_ROUNDS/BENCH_CLI_MAX_ROUNDS rounds (default 3 to 7).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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

/** One `pi -p` run to the scripted model, timed; `extension` adds `-e .` with that config. */
async function runPi(dir: string, extension: { config: string } | undefined): Promise<Run> {
  const cpuFile = path.join(dir, "cpu");
  rmSync(cpuFile, { force: true });
  const model = ["-e", path.join(ROOT, "examples", "scripted-model.ts"), "--provider", "scripted", "--model", "demo"];
  const bridge = extension ? ["-e", ROOT, "--mcp-config", extension.config] : [];
  const args = ["--import", CPU_HOOK, PI_CLI, ...model, ...bridge, "--no-session", "--offline", "-p", "greet Ada"];
  const agentDir = path.join(dir, "agent");
  const env = { ...process.env, HOME: dir, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", BENCH_CPU_FILE: cpuFile };
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: dir, env, stdio: ["ignore", "ignore", "pipe"] });
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

async function measureConfig(dir: string, name: string, config: string, target: boolean): Promise<Figure[]> {
  const which = name === "empty" ? "no servers" : "demo config (2 servers)";
  await runPi(dir, undefined);
  await runPi(dir, { config });
  const rounds = await repeatRounds<Round>(
    { ...ROUNDS, ...(target ? { target: TARGET_MS } : {}) },
    async () => {
      const wall: number[] = [];
      const cpu: number[] = [];
      const ratios: number[] = [];
      for (let i = 0; i < PAIRS; i++) {
        const first = i % 2 === 0;
        const a = first ? await runPi(dir, { config }) : undefined;
        const b = await runPi(dir, undefined);
        const withExtension = a ?? (await runPi(dir, { config }));
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

export const cliStartSection: FigureSection = {
  title: "CLI start: pi -p with and without the extension",
  async measure() {
    const dir = mkdtempSync(path.join(tmpdir(), "mcp-bridge-bench-cli-"));
    try {
      const empty = path.join(dir, "empty.json");
      writeFileSync(empty, JSON.stringify({ mcpServers: {} }));
      return [
        ...(await measureConfig(dir, "empty", empty, true)),
        ...(await measureConfig(dir, "demo", path.join(ROOT, "examples", "demo.json"), false)),
      ];
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
