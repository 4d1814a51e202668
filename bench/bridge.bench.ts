/**
 * Benchmarks, reported as ratios within one run (the machine is shared and noisy, so absolute times mean little):
 *
 *   1. startup: the bridge connecting N local servers vs one. Each server takes START_DELAY_MS to answer
 *      `initialize` and almost no CPU, so the ratio shows how well connects overlap: ~1 in parallel, ~N in sequence.
 *   2. lazy startup: N lazy servers whose tools are in the cache vs the same N started eagerly; pi's startup should
 *      then cost next to nothing however many servers there are.
 *   3. call overhead: a tool call through the bridge (pi tool → connection → normalised result) vs the same call
 *      made directly with the SDK client on the same kind of server.
 *
 * Run: npm run bench
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpBridge } from "../src/bridge/mcp-bridge.ts";
import { ToolCache } from "../src/bridge/tool-cache.ts";
import { ToolRegistry } from "../src/pi/tool-registry.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SERVER = path.join(ROOT, "examples", "hello-server.mjs");
const SLOW_START_SERVER = path.join(ROOT, "bench", "slow-start-server.mjs");
const SERVERS = Number(process.env.BENCH_SERVERS ?? 8);
const CALLS = Number(process.env.BENCH_CALLS ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

interface StartOptions {
  script?: string;
  lazy?: boolean;
  /** A tool cache shared between runs, so lazy servers find their tools. */
  cacheFile?: string;
}

async function startBridge(servers: number, options: StartOptions = {}): Promise<{ bridge: McpBridge; ms: number; cleanup: () => Promise<void> }> {
  const dir = mkdtempSync(path.join(tmpdir(), "mcp-bridge-bench-"));
  mkdirSync(path.join(dir, ".pi"));
  const entry = { command: process.execPath, args: [options.script ?? SERVER], lazy: options.lazy ?? false };
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
  const started = performance.now();
  await bridge.start();
  const ms = performance.now() - started;
  const expected = options.lazy ? ["not started", "connecting", "connected"] : ["connected"];
  const failed = [...bridge.connections.values()].filter((c) => !expected.includes(c.status));
  if (failed.length) throw new Error(`servers failed: ${failed.map((c) => c.lastError).join("; ")}`);
  return {
    bridge,
    ms,
    cleanup: async () => {
      await bridge.shutdown();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function benchStartup(): Promise<void> {
  const one: number[] = [];
  const many: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const [count, into] of [
      [1, one],
      [SERVERS, many],
    ] as const) {
      const run = await startBridge(count, { script: SLOW_START_SERVER });
      into.push(run.ms);
      await run.cleanup();
    }
  }
  const ratio = median(many) / median(one);
  console.log(`startup: 1 server ${median(one).toFixed(0)} ms, ${SERVERS} servers ${median(many).toFixed(0)} ms (median of ${ROUNDS})`);
  console.log(`  ratio ${ratio.toFixed(2)} (connecting one at a time would give ~${SERVERS})`);
}

async function benchLazyStartup(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "mcp-bridge-bench-cache-"));
  const cacheFile = path.join(dir, "tool-cache.json");
  // Fill the cache: a lazy server the cache does not know starts once in the background.
  const fill = await startBridge(SERVERS, { script: SLOW_START_SERVER, lazy: true, cacheFile });
  const deadline = Date.now() + 30_000;
  while ([...fill.bridge.connections.values()].some((c) => c.status !== "connected") && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await fill.cleanup();
  const eager: number[] = [];
  const lazy: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const a = await startBridge(SERVERS, { script: SLOW_START_SERVER });
    eager.push(a.ms);
    await a.cleanup();
    const b = await startBridge(SERVERS, { script: SLOW_START_SERVER, lazy: true, cacheFile });
    if ([...b.bridge.connections.values()].some((c) => c.status !== "not started")) throw new Error("a lazy server started: cache miss");
    lazy.push(b.ms);
    await b.cleanup();
  }
  rmSync(dir, { recursive: true, force: true });
  const ratio = median(lazy) / median(eager);
  console.log(`lazy startup: ${SERVERS} eager servers ${median(eager).toFixed(0)} ms, ${SERVERS} lazy servers from the cache ${median(lazy).toFixed(1)} ms (median of ${ROUNDS})`);
  console.log(`  ratio ${ratio.toFixed(3)} (lazy / eager)`);
}

async function benchCalls(): Promise<void> {
  const run = await startBridge(1);
  const connection = run.bridge.connection("s0")!;
  let greet: ((params: Record<string, unknown>) => Promise<unknown>) | undefined;
  new ToolRegistry(
    (def) => {
      if (def.name === "mcp_s0_greet") greet = (params) => def.execute("bench", params as never, undefined, undefined, undefined as never);
    },
    () => connection,
  ).registerServer(connection);

  const client = new Client({ name: "bench-direct", version: "0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [SERVER] }));

  const time = async (call: () => Promise<unknown>): Promise<number> => {
    for (let i = 0; i < 20; i++) await call();
    const started = performance.now();
    for (let i = 0; i < CALLS; i++) await call();
    return (performance.now() - started) / CALLS;
  };
  const bridged: number[] = [];
  const direct: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    bridged.push(await time(() => greet!({ name: "bench" })));
    direct.push(await time(() => client.callTool({ name: "greet", arguments: { name: "bench" } })));
  }
  await client.close();
  await run.cleanup();
  const ratio = median(bridged) / median(direct);
  console.log(`call: through the bridge ${(median(bridged) * 1000).toFixed(0)} µs, SDK client directly ${(median(direct) * 1000).toFixed(0)} µs (${CALLS} calls, median of ${ROUNDS})`);
  console.log(`  ratio ${ratio.toFixed(2)} (the bridge's own cost per call is the part above 1)`);
}

await benchStartup();
await benchLazyStartup();
await benchCalls();
