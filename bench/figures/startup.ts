/**
 * Startup: how long `McpBridge.start` takes until every server is connected, with 1, 5 and 20 local servers that each
 * take START_DELAY_MS (300 ms) to answer `initialize` and almost no CPU (bench/slow-start-server.mjs). Connecting one
 * at a time would make 20 servers take ~20× as long as 1; connecting all at once, ~1× plus the cost of starting 20 node
 * processes. Then lazy servers whose tools are in the tool cache vs the same servers started eagerly: a lazy server
 * starts no process, so pi's startup should not grow with them.
 *
 * The same servers spawned and asked over bare JSON-RPC, no client at all, give the floor: what starting that many
 * node processes and waiting for them costs on this machine, whatever the client does.
 *
 * Each round runs every count once (1, 5, 20, then 20, 5, 1 the next round, so neither side always goes first), and
 * the ratios are medians of the rounds' own ratios.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { McpBridge } from "../../src/bridge/mcp-bridge.ts";
import { ToolCache } from "../../src/bridge/tool-cache.ts";
import { envCount, median, repeatRounds, summary } from "../stats.ts";
import type { Figure, FigureSection } from "./figure.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SLOW_START_SERVER = path.join(ROOT, "bench", "slow-start-server.mjs");
const COUNTS = [1, 5, 20] as const;
const MANY = 20;
const ROUNDS = { min: envCount("BENCH_STARTUP_ROUNDS", 5), max: envCount("BENCH_STARTUP_MAX_ROUNDS", 11), spread: 0.1 };

interface StartOptions {
  lazy?: boolean;
  /** A tool cache shared between runs, so lazy servers find their tools. */
  cacheFile?: string;
}

interface StartedBridge {
  bridge: McpBridge;
  ms: number;
  close(): Promise<void>;
}

/** A bridge with `servers` slow-start servers in its config, started and timed; throws if one did not come up. */
async function startBridge(servers: number, options: StartOptions = {}): Promise<StartedBridge> {
  const dir = mkdtempSync(path.join(tmpdir(), "mcp-bridge-bench-"));
  mkdirSync(path.join(dir, ".pi"));
  const entry = { command: process.execPath, args: [SLOW_START_SERVER], lazy: options.lazy ?? false };
  const mcpServers = Object.fromEntries(Array.from({ length: servers }, (_, i) => [`s${i}`, entry]));
  writeFileSync(path.join(dir, ".pi", "mcp.json"), JSON.stringify({ mcpServers }));
  const bridge = new McpBridge({
    // The same project root every time, so the cache keys (which include resolved paths) match across runs.
    projectRoot: ROOT,
    agentDir: path.join(dir, "agent"),
    bundledPath: path.join(dir, "none.json"),
    extraPath: path.join(dir, ".pi", "mcp.json"),
    env: process.env,
    clientInfo: { name: "bench", version: "0" },
    toolCache: options.cacheFile ? new ToolCache(options.cacheFile) : undefined,
    startupBudgetMs: 60_000,
  });
  const close = async () => {
    await bridge.shutdown();
    rmSync(dir, { recursive: true, force: true });
  };
  const started = performance.now();
  await bridge.start();
  const ms = performance.now() - started;
  const expected = options.lazy ? ["not started"] : ["connected"];
  const wrong = [...bridge.connections.values()].filter((c) => !expected.includes(c.status));
  if (wrong.length) {
    await close();
    const why = wrong.map((c) => `${c.name}: ${c.status}${c.lastError ? ` (${c.lastError})` : ""}`).join("; ");
    throw new Error(`${options.lazy ? "lazy servers started (tool cache miss)" : "servers did not connect"}: ${why}`);
  }
  return { bridge, ms, close };
}

async function timeStart(servers: number, options?: StartOptions): Promise<number> {
  const run = await startBridge(servers, options);
  await run.close();
  return run.ms;
}

/**
 * The floor: `servers` slow-start servers spawned at once and each asked `initialize` and `tools/list` over bare
 * JSON-RPC lines, no client library: what starting that many node processes costs on this machine. They get the
 * environment the bridge gives a server (the SDK's default one): a variable such as NODE_EXTRA_CA_CERTS, which
 * the bridge does not pass on, makes every node process start slower.
 */
async function timeBareStart(servers: number): Promise<number> {
  const started = performance.now();
  const children = Array.from({ length: servers }, () =>
    spawn(process.execPath, [SLOW_START_SERVER], { env: getDefaultEnvironment(), stdio: ["pipe", "pipe", "ignore"] }),
  );
  try {
    await Promise.all(
      children.map(async (child) => {
        const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
        const send = (message: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
        send({
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: LATEST_PROTOCOL_VERSION,
            capabilities: {},
            clientInfo: { name: "bench-bare", version: "0" },
          },
        });
        await lines.next();
        send({ method: "notifications/initialized" });
        send({ id: 2, method: "tools/list" });
        const listed = await lines.next();
        if (listed.done) throw new Error("a bare slow-start server closed before listing its tools");
      }),
    );
    return performance.now() - started;
  } finally {
    // Gone before the next run starts, as the bridge's shutdown waits for its servers, so neither run pays for the
    // other's exits.
    const exited = children.map((child) =>
      child.exitCode === null && child.signalCode === null ? once(child, "exit") : undefined,
    );
    for (const child of children) child.kill();
    await Promise.all(exited);
  }
}

function ratioFigure(id: string, label: string, ratios: number[], target?: Figure["target"]): Figure {
  return {
    id,
    label,
    value: Number(median(ratios).toFixed(3)),
    unit: "×",
    ...(target ? { target } : {}),
    detail: { rounds: ratios.length, ...summary("ratio", ratios) },
  };
}

async function measureCounts(): Promise<Figure[]> {
  const rounds = await repeatRounds(
    { ...ROUNDS, target: 1.5 },
    async (index) => {
      // Bridge runs keyed by count, bare-process runs by minus the count.
      const sides = [...COUNTS, -1, -MANY];
      const ms = new Map<number, number>();
      for (const side of index % 2 === 0 ? sides : sides.reverse())
        ms.set(side, side > 0 ? await timeStart(side) : await timeBareStart(-side));
      return ms;
    },
    (ms) => ms.get(MANY)! / ms.get(1)!,
  );
  const times = (count: number) => rounds.map((ms) => ms.get(count)!);
  const ratios = (count: number) => rounds.map((ms) => ms.get(count)! / ms.get(1)!);
  return [
    ...COUNTS.map((count): Figure => ({
      id: `startup.servers${count}.ms`,
      label: `start ${count} slow server${count === 1 ? "" : "s"} (300 ms each)`,
      value: Math.round(median(times(count))),
      unit: "ms",
      detail: { rounds: rounds.length, ...summary("ms", times(count), 1) },
    })),
    ratioFigure("startup.ratio5", "5 servers vs 1", ratios(5)),
    ratioFigure(`startup.ratio${MANY}`, `${MANY} servers vs 1`, ratios(MANY), { op: "<=", value: 1.5 }),
    ratioFigure(
      `startup.floorRatio${MANY}`,
      `floor: ${MANY} vs 1 bare processes, no client`,
      times(-MANY).map((t, i) => t / times(-1)[i]!),
    ),
    ratioFigure(
      `startup.vsFloor${MANY}`,
      `${MANY} servers: bridge vs bare processes`,
      times(MANY).map((t, i) => t / times(-MANY)[i]!),
    ),
  ];
}

async function measureLazy(): Promise<Figure[]> {
  const dir = mkdtempSync(path.join(tmpdir(), "mcp-bridge-bench-cache-"));
  const cacheFile = path.join(dir, "tool-cache.json");
  try {
    // Fill the cache: a lazy server the cache does not know starts once in the background and records its tools.
    const fill = await startBridge(MANY, { cacheFile, lazy: false });
    await fill.close();
    const rounds = await repeatRounds(
      { ...ROUNDS, target: 0.1 },
      async (index) => {
        const sides = index % 2 === 0 ? (["eager", "lazy"] as const) : (["lazy", "eager"] as const);
        const ms = { eager: 0, lazy: 0 };
        for (const side of sides) ms[side] = await timeStart(MANY, { cacheFile, lazy: side === "lazy" });
        return ms;
      },
      (ms) => ms.lazy / ms.eager,
    );
    const eager = rounds.map((r) => r.eager);
    const lazy = rounds.map((r) => r.lazy);
    return [
      {
        id: "startup.lazy.ms",
        label: `start ${MANY} lazy servers from the tool cache`,
        value: Number(median(lazy).toFixed(1)),
        unit: "ms",
        detail: { rounds: rounds.length, ...summary("ms", lazy, 1), ...summary("eager.ms", eager, 1) },
      },
      ratioFigure(
        "startup.lazyVsEager",
        `${MANY} lazy (cached) vs ${MANY} eager`,
        rounds.map((r) => r.lazy / r.eager),
        { op: "<=", value: 0.1 },
      ),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const startupSection: FigureSection = {
  title: "startup",
  measure: async () => [...(await measureCounts()), ...(await measureLazy())],
};
