/**
 * Is the per-call path of this working tree slower than at another revision? Both versions are loaded into one
 * process (the other from a temporary git worktree), each with its own bridge and its own stdio server, and their
 * tool calls are interleaved call by call (the order swapped every time), so a machine that speeds up or slows down
 * affects both sides alike. Reported: each side's median per-call latency, and the ratio of each pair of calls
 * (this tree / the revision) as its median and middle half over all pairs, for several rounds.
 *
 * Everything runs on one processor (the script restarts itself under `taskset -c 0` where that exists): with the two
 * servers free to land on either of two cores, which side's server shares the client's core changed the ratio by up
 * to 30% between rounds; on one core the rounds agree within a few percent.
 *
 * With BENCH_CONCURRENT=n each side's turn is a burst of n calls at once, timed as one (set BENCH_CALLS lower). With
 * BENCH_TRANSPORT=http both sides call one Streamable HTTP server process (./http-hello-server.mjs) instead.
 *
 * Run: npm run bench:vs -- <revision>        (e.g. `npm run bench:vs -- HEAD~3`)
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { createJiti } from "jiti";
import { httpServer } from "./figures/calls.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SERVER = path.join(ROOT, "examples", "hello-server.mjs");
const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 1);
const WARMUP = CONCURRENT > 1 ? 10 : 200;
const HTTP = process.env.BENCH_TRANSPORT === "http";

/** Where a module lived over the project's history, newest first. */
const MODULES = {
  bridge: ["src/bridge/mcp-bridge.ts", "src/bridge.ts"],
  registry: ["src/pi/tool-registry.ts", "src/tool-registry.ts"],
};

type Call = () => Promise<unknown>;

/** The little of a bridge and a registry this uses, in a shape every revision has. */
interface BridgeLike {
  start(): Promise<void>;
  connection(name: string): { status: string; lastError?: string } | undefined;
  shutdown(): Promise<void>;
}
interface ToolDef {
  name: string;
  execute: (...args: unknown[]) => Promise<unknown>;
}
type RegistryClass = new (
  register: (def: ToolDef) => void,
  connectionFor: () => unknown,
) => { registerServer(connection: unknown): unknown };

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function median(values: number[]): number {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

async function importFirst(root: string, candidates: string[]): Promise<Record<string, unknown>> {
  const found = candidates.find((file) => existsSync(path.join(root, file)));
  if (!found) throw new Error(`none of ${candidates.join(", ")} in ${root}`);
  // Compiled as pi compiles an extension (jiti), not as this script runs (tsx, which wraps every named function).
  const jiti = createJiti(import.meta.url, { moduleCache: false });
  return await jiti.import<Record<string, unknown>>(path.join(root, found));
}

/** A bridge of `root`'s version with one local server, and its `greet` tool as pi would call it. */
async function greetOf(
  root: string,
  dir: string,
  entry: Record<string, unknown>,
): Promise<{ call: Call; shutdown: () => Promise<void> }> {
  const { McpBridge } = (await importFirst(root, MODULES.bridge)) as {
    McpBridge: new (options: unknown) => BridgeLike;
  };
  const { ToolRegistry } = (await importFirst(root, MODULES.registry)) as { ToolRegistry: RegistryClass };
  mkdirSync(dir, { recursive: true });
  const config = path.join(dir, "mcp.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { s: entry } }));
  // Wired as pi's session wires it (a log file, a server log, an event sink, a turn's signal), as calls.ts does.
  type LogFileClass = new (file: string) => unknown;
  const { LogFile } = (await importFirst(root, ["src/common/log-file.ts"])) as { LogFile: LogFileClass };
  mkdirSync(path.join(dir, "servers"), { recursive: true });
  const bridge = new McpBridge({
    events: () => {},
    logger: new LogFile(path.join(dir, "mcp.log")),
    serverLogFor: (server: string) => new LogFile(path.join(dir, "servers", `${server}.log`)),
    projectRoot: dir,
    agentDir: path.join(dir, "agent"),
    bundledPath: path.join(dir, "none.json"),
    extraPath: config,
    env: process.env,
    clientInfo: { name: "bench", version: "0" },
    startupBudgetMs: 60_000,
  });
  await bridge.start();
  const connection = bridge.connection("s");
  if (connection?.status !== "connected")
    throw new Error(`${root}: the server did not connect: ${connection?.lastError}`);
  const turn = new AbortController();
  let call: Call | undefined;
  new ToolRegistry(
    (def) => {
      if (def.name !== "mcp_s_greet") return;
      call = () => def.execute("bench", { name: "bench" }, turn.signal, () => {}, undefined);
    },
    () => connection,
  ).registerServer(connection);
  if (!call) throw new Error(`${root}: no mcp_s_greet tool`);
  const one = call;
  if (CONCURRENT > 1) call = () => Promise.all(Array.from({ length: CONCURRENT }, () => one()));
  return { call, shutdown: () => bridge.shutdown() };
}

async function timed(call: Call): Promise<number> {
  const started = performance.now();
  await call();
  return performance.now() - started;
}

const revision = process.argv[2];
if (!revision) {
  console.error("usage: npm run bench:vs -- <revision>");
  process.exit(2);
}
if (
  process.platform === "linux" &&
  !process.env.BENCH_PINNED &&
  spawnSync("taskset", ["-V"], { stdio: "ignore" }).status === 0
) {
  const pinned = spawnSync("taskset", ["-c", "0", process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: "inherit",
    env: { ...process.env, BENCH_PINNED: "1" },
  });
  process.exit(pinned.status ?? 1);
}
const work = mkdtempSync(path.join(tmpdir(), "mcp-bridge-bench-vs-"));
const other = path.join(work, "checkout");
let server: { url: string; close(): void } | undefined;
try {
  execFileSync("git", ["-C", ROOT, "worktree", "add", "--detach", other, revision], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  symlinkSync(path.join(ROOT, "node_modules"), path.join(other, "node_modules"));
  server = HTTP ? await httpServer() : undefined;
  const entry = server ? { url: server.url } : { command: process.execPath, args: [SERVER] };
  const mine = await greetOf(ROOT, path.join(work, "mine"), entry);
  const theirs = await greetOf(other, path.join(work, "theirs"), entry);
  for (let i = 0; i < WARMUP; i++) await Promise.all([mine.call(), theirs.call()]).then(() => undefined);
  const kind = HTTP ? "Streamable HTTP" : "stdio";
  const calls = CONCURRENT > 1 ? `${kind} tool calls (bursts of ${CONCURRENT})` : `${kind} tool calls`;
  console.log(`call path: this tree vs ${revision}, ${CALLS} interleaved pairs of ${calls} a round`);
  const roundRatios: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const a: number[] = [];
    const b: number[] = [];
    const ratios: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const first = i % 2 === 0;
      const x = first ? await timed(mine.call) : 0;
      const y = await timed(theirs.call);
      const z = first ? x : await timed(mine.call);
      a.push(z);
      b.push(y);
      ratios.push(z / y);
    }
    ratios.sort((p, q) => p - q);
    const ratio = quantile(ratios, 0.5);
    roundRatios.push(ratio);
    console.log(
      `  round ${round}: this tree ${(median(a) * 1000).toFixed(0)} µs, ${revision} ${(median(b) * 1000).toFixed(0)} µs; ` +
        `pair ratio median ${ratio.toFixed(3)} (middle half ${quantile(ratios, 0.25).toFixed(3)}–${quantile(ratios, 0.75).toFixed(3)})`,
    );
  }
  const sorted = [...roundRatios].sort((p, q) => p - q);
  console.log(
    `  over ${ROUNDS} rounds: ratio ${median(roundRatios).toFixed(3)} (rounds from ${sorted[0]!.toFixed(3)} to ${sorted.at(-1)!.toFixed(3)}; below 1 is faster)`,
  );
  await Promise.all([mine.shutdown(), theirs.shutdown()]);
} finally {
  server?.close();
  if (existsSync(other)) execFileSync("git", ["-C", ROOT, "worktree", "remove", "--force", other], { stdio: "ignore" });
  rmSync(work, { recursive: true, force: true });
}
