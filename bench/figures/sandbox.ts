/**
 * What `"sandbox": true` costs a local server (examples/hello-server.mjs), against the same server unsandboxed:
 *
 * - Start-up: `McpBridge.start()` with the one server, from the spawn to its first tool list, the two sides
 *   alternating start by start (which goes first swapped each round). Another sandboxed server runs meanwhile, so the
 *   sandbox library is set up already, as for every sandboxed server after a pi session's first; that first set-up
 *   (the library's proxies) is timed once and kept in `detail`.
 * - Per call: the pi tool's `execute`, as ./calls.ts calls it, on the two servers alternately, call by call.
 *
 * Each round's ratio is sandboxed / unsandboxed; the rounds go on until their middle half lies wholly on one side of
 * 1 (the spread is smaller than the effect) or their maximum has run.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { McpBridge } from "../../src/bridge/mcp-bridge.ts";
import { envCount, median, repeatRounds, summary } from "../stats.ts";
import { bridgeSide, interleavedRounds } from "./calls.ts";
import type { Figure, FigureSection } from "./figure.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const SERVER = path.join(ROOT, "examples", "hello-server.mjs");
const ROUNDS = {
  min: envCount("BENCH_SANDBOX_ROUNDS", 5),
  max: envCount("BENCH_SANDBOX_MAX_ROUNDS", 21),
  spread: 0.02,
};
const CALLS = envCount("BENCH_SANDBOX_CALLS", 500);

const entry = (sandbox: boolean) => ({ command: process.execPath, args: [SERVER], sandbox });

/** A bridge with the one server; `ms` from `start()` until it is connected with its tools listed. */
async function startBridge(sandbox: boolean): Promise<{ ms: number; close(): Promise<void> }> {
  const dir = mkdtempSync(path.join(tmpdir(), "mcp-bridge-bench-sandbox-"));
  const config = path.join(dir, "mcp.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { s: entry(sandbox) } }));
  const bridge = new McpBridge({
    projectRoot: dir,
    agentDir: path.join(dir, "agent"),
    bundledPath: path.join(dir, "none.json"),
    extraPath: config,
    env: process.env,
    clientInfo: { name: "bench", version: "0" },
    startupBudgetMs: 60_000,
  });
  const close = async () => {
    await bridge.shutdown();
    rmSync(dir, { recursive: true, force: true });
  };
  const started = performance.now();
  await bridge.start();
  const ms = performance.now() - started;
  const connection = bridge.connection("s");
  if (connection?.status !== "connected" || connection.tools.length === 0) {
    await close();
    throw new Error(`the ${sandbox ? "sandboxed" : "unsandboxed"} server did not connect: ${connection?.lastError}`);
  }
  return { ms, close };
}

async function timeStart(sandbox: boolean): Promise<number> {
  const run = await startBridge(sandbox);
  await run.close();
  return run.ms;
}

function ratioFigure(id: string, label: string, ratios: number[], detail: Record<string, number>): Figure {
  return {
    id,
    label,
    value: Number(median(ratios).toFixed(3)),
    unit: "×",
    detail: { rounds: ratios.length, ...summary("ratio", ratios), ...detail },
  };
}

async function measureStart(): Promise<Figure[]> {
  const held = await startBridge(true);
  try {
    const rounds = await repeatRounds(
      { ...ROUNDS, target: 1 },
      async (index) => {
        const ms = { boxed: 0, open: 0 };
        for (const boxed of index % 2 === 0 ? [true, false] : [false, true])
          ms[boxed ? "boxed" : "open"] = await timeStart(boxed);
        return ms;
      },
      (ms) => ms.boxed / ms.open,
    );
    const boxed = rounds.map((r) => r.boxed);
    const open = rounds.map((r) => r.open);
    return [
      ratioFigure(
        "sandbox.start.ratio",
        "start-up to the first tool list, sandboxed / unsandboxed",
        rounds.map((r) => r.boxed / r.open),
        {
          ...summary("sandboxed.ms", boxed, 1),
          ...summary("unsandboxed.ms", open, 1),
          extraMs: Number((median(boxed) - median(open)).toFixed(1)),
          firstSetupMs: Number(held.ms.toFixed(1)),
        },
      ),
    ];
  } finally {
    await held.close();
  }
}

async function measureCalls(): Promise<Figure[]> {
  const boxed = await bridgeSide(entry(true));
  try {
    const open = await bridgeSide(entry(false));
    try {
      for (let i = 0; i < 100; i++) await Promise.all([boxed.call(), open.call()]);
      const rounds = await interleavedRounds(boxed.call, open.call, CALLS, 1, (a, b) => a / b, ROUNDS);
      const µs = (ms: number) => Math.round(ms * 1000);
      return [
        ratioFigure(
          "sandbox.call.ratio",
          "per-call latency, sandboxed / unsandboxed",
          rounds.map((r) => r.ratio),
          {
            sandboxedMedianUs: µs(median(rounds.map((r) => r.bridge))),
            unsandboxedMedianUs: µs(median(rounds.map((r) => r.sdk))),
            callsPerRound: CALLS,
          },
        ),
      ];
    } finally {
      await open.close();
    }
  } finally {
    await boxed.close();
  }
}

export const sandboxSection: FigureSection = {
  title: "sandbox: a sandboxed local server vs the same unsandboxed",
  measure: async () => [...(await measureStart()), ...(await measureCalls())],
};
