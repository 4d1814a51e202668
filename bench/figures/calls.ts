/**
 * What a tool call through the bridge costs next to the same call made with a bare SDK v2 `Client`
 * (`@modelcontextprotocol/client`, the client the bridge runs on), on the same kind of
 * server (stdio: two processes of examples/hello-server.mjs; Streamable HTTP: one process of ./http-hello-server.mjs
 * on 127.0.0.1, one session each).
 *
 * The bridge's side is the path a pi tool call takes: the registered tool definition's `execute` (argument check,
 * connection, recovery, the SDK client on the bridge's own transport, redaction, result normalisation, log line,
 * metrics), with a log file as pi's session has one and a turn's abort signal, as pi passes it.
 *
 * - Per-call latency: the two sides called alternately, one call at a time (which goes first swapped each pair), each
 *   call timed on its own; a round's ratio is the median of the bridge's calls over the median of the SDK's.
 * - Throughput: 1,000 calls at once, the two sides alternately run by run; a round's ratio is the SDK's median time
 *   for the burst over the bridge's (calls per second, bridge over SDK).
 * - Both again against the same client given what the bridge gives it with every call (`sameOptions`): the turn's
 *   signal, a progress listener that restarts the timeout, the same timeout. The bare call asks for neither, and the SDK
 *   spends time on both (the progress token above all); the difference between the two figures is that cost.
 * Each figure is the median of its rounds, repeated until they settle (../stats.ts), their quartiles in `detail`.
 *
 * Counts: BENCH_CALLS calls per side per round (default 1000), BENCH_BURSTS runs of BENCH_CONCURRENT (1,000)
 * per side per round (default 10), BENCH_CALL_ROUNDS/BENCH_CALL_MAX_ROUNDS rounds (default 5 to 9).
 */
import { spawn } from "node:child_process";
import { setMaxListeners } from "node:events";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import {
  Client,
  type RequestOptions,
  StreamableHTTPClientTransport,
  type Transport,
} from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createJiti } from "jiti";
import { DEFAULT_REQUEST_TIMEOUT_MS } from "../../src/config/defaults.ts";
import { followSignal } from "../../src/common/follow-signal.ts";
import { envCount, median, repeatRounds, type Rounds, summary } from "../stats.ts";
import type { Figure, FigureSection } from "./figure.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const STDIO_SERVER = path.join(ROOT, "examples", "hello-server.mjs");
const HTTP_SERVER = path.join(ROOT, "bench", "http-hello-server.mjs");
const CALLS = envCount("BENCH_CALLS", 1000);
const BURSTS = envCount("BENCH_BURSTS", 10);
const ROUNDS = { min: envCount("BENCH_CALL_ROUNDS", 5), max: envCount("BENCH_CALL_MAX_ROUNDS", 9), spread: 0.05 };
const CONCURRENT = envCount("BENCH_CONCURRENT", 1000);
const WARMUP_CALLS = 300;
/**
 * The bare client's server writes what it warns of to stderr, which is not the bench's output: the SDK's server
 * transport waits for `drain` with a listener per answer once stdout is full, so bursts print a MaxListeners warning
 * each. (The bridge's side writes its server's stderr to a log, as the bridge does.)
 */
const stderr = "ignore";

type Call = () => Promise<unknown>;

export interface Side {
  call: Call;
  close(): Promise<void>;
}

async function timed(call: Call): Promise<number> {
  const started = performance.now();
  await call();
  return performance.now() - started;
}

/**
 * The bridge's modules compiled the way pi compiles an extension (with jiti), not the way this script is run (tsx,
 * which also wraps every named function it makes to keep its name: a cost per closure that pi's users do not pay).
 */
async function bridgeModules() {
  const jiti = createJiti(import.meta.url, { moduleCache: false });
  const load = <T>(file: string) => jiti.import<T>(path.join(ROOT, file));
  const [{ McpBridge }, { LogFile }, { ToolRegistry }] = await Promise.all([
    load<typeof import("../../src/bridge/mcp-bridge.ts")>("src/bridge/mcp-bridge.ts"),
    load<typeof import("../../src/common/log-file.ts")>("src/common/log-file.ts"),
    load<typeof import("../../src/pi/tool-registry.ts")>("src/pi/tool-registry.ts"),
  ]);
  return { McpBridge, LogFile, ToolRegistry };
}

/**
 * A bridge with one server (`entry` as mcp.json has it), wired as pi's session wires it, and its `greet` as pi calls it.
 * `hubDir` is where a `"shared"` entry's hub runs (pi puts it in its agent dir).
 */
export async function bridgeSide(entry: Record<string, unknown>, hubDir?: string): Promise<Side> {
  const { McpBridge, LogFile, ToolRegistry } = await bridgeModules();
  const dir = mkdtempSync(path.join(tmpdir(), "mcp-bridge-bench-calls-"));
  mkdirSync(path.join(dir, "servers"));
  const config = path.join(dir, "mcp.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { s: entry } }));
  const logs = [new LogFile(path.join(dir, "mcp.log"))];
  const bridge = new McpBridge({
    projectRoot: dir,
    agentDir: path.join(dir, "agent"),
    bundledPath: path.join(dir, "none.json"),
    extraPath: config,
    env: process.env,
    clientInfo: { name: "bench", version: "0" },
    events: () => {},
    logger: logs[0],
    serverLogFor: (server) => {
      const log = new LogFile(path.join(dir, "servers", `${server}.log`));
      logs.push(log);
      return log;
    },
    startupBudgetMs: 60_000,
    hubDir,
  });
  await bridge.start();
  const connection = bridge.connection("s");
  if (connection?.status !== "connected") throw new Error(`the bench server did not connect: ${connection?.lastError}`);
  // One turn's signal for every call, as pi gives the tool calls of a turn.
  const turn = new AbortController();
  let call: Call | undefined;
  new ToolRegistry(
    (def) => {
      if (def.name === "mcp_s_greet")
        call = () => def.execute("bench", { name: "bench" } as never, turn.signal, () => {}, undefined as never);
    },
    () => connection,
  ).registerServer(connection);
  if (!call) throw new Error("the bridge registered no mcp_s_greet tool");
  return {
    call,
    close: async () => {
      await bridge.shutdown();
      for (const log of logs) await log.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * What the bridge gives the SDK with each call, for a bare client to be given the same: the turn's signal (followed
 * as the bridge follows it, the cheapest way the SDK can be handed one signal for many calls), a progress listener,
 * and the timeout that progress restarts.
 */
export function sameOptions(turn: AbortSignal): () => RequestOptions {
  const onprogress = () => undefined;
  return () => ({
    signal: followSignal(turn),
    onprogress,
    resetTimeoutOnProgress: true,
    timeout: DEFAULT_REQUEST_TIMEOUT_MS,
  });
}

/**
 * A bare SDK v2 client on `transport` (connected as it connects by default), and its `greet`: a bare call, or with
 * the request options `options` makes for each call.
 */
export async function sdkSide(transport: Transport, options?: () => RequestOptions): Promise<Side> {
  const client = new Client({ name: "bench-sdk", version: "0" });
  await client.connect(transport);
  // The SDK's Streamable HTTP transport gives every fetch the one signal it keeps for its whole life, and fetch hangs
  // a listener on it per request until the request is collected: hundreds of concurrent calls print a flood of
  // MaxListenersExceededWarning. Only the warning is switched off; the listeners stay, as they do for its users.
  const signal = (transport as { _abortController?: AbortController })._abortController?.signal;
  if (signal) setMaxListeners(0, signal);
  // Its stdio transport waits for `drain` with a listener per send once the server's stdin is full: the same flood.
  (transport as { _process?: { stdin?: { setMaxListeners(n: number): void } } })._process?.stdin?.setMaxListeners(0);
  const greet = (): Promise<unknown> => client.callTool({ name: "greet", arguments: { name: "bench" } }, options?.());
  return { call: greet, close: () => client.close() };
}

/** The HTTP bench server as a child process, and its URL once it listens. */
export async function httpServer(): Promise<{ url: string; close(): void }> {
  const child = spawn(process.execPath, [HTTP_SERVER], { stdio: ["pipe", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (text: string) => {
      out += text;
      const match = /port (\d+)\n/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`the HTTP bench server exited (${code}) before it listened`)));
    child.once("error", reject);
  });
  return { url: `http://127.0.0.1:${port}/mcp`, close: () => child.stdin.end() };
}

interface Round {
  /** The bridge's median, the SDK's median (ms), and the figure's ratio for the round. */
  bridge: number;
  sdk: number;
  ratio: number;
}

/**
 * Rounds of `count` runs of each side, alternating (which goes first swapped each pair), repeated until their ratios
 * settle or are clearly on one side of `target`. `ratio` makes a round's figure of the two medians.
 */
export function interleavedRounds(
  bridge: Call,
  sdk: Call,
  count: number,
  target: number,
  ratio: (bridge: number, sdk: number) => number,
  rounds: Pick<Rounds, "min" | "max" | "spread"> = ROUNDS,
): Promise<Round[]> {
  return repeatRounds(
    { ...rounds, target },
    async () => {
      const a: number[] = [];
      const b: number[] = [];
      for (let i = 0; i < count; i++) {
        if (i % 2 === 0) {
          a.push(await timed(bridge));
          b.push(await timed(sdk));
        } else {
          b.push(await timed(sdk));
          a.push(await timed(bridge));
        }
      }
      return { bridge: median(a), sdk: median(b), ratio: ratio(median(a), median(b)) };
    },
    (round) => round.ratio,
  );
}

const µs = (ms: number) => Math.round(ms * 1000);

/**
 * The per-call and throughput figures of the bridge against `sdk`: ids `call.<kind>.<id>` and `throughput.<kind>.<id>`,
 * with the targets when `targets` (the figures the issue set them for).
 */
async function pairFigures(
  kind: "stdio" | "http",
  bridge: Side,
  sdk: Side,
  id: string,
  vs: string,
  targets: boolean,
): Promise<Figure[]> {
  // Per-call latency: bridge over SDK. Throughput of a burst: the SDK's time over the bridge's.
  const calls = await interleavedRounds(bridge.call, sdk.call, CALLS, 1.1, (a, b) => a / b);
  const burst = (side: Side) => () => Promise.all(Array.from({ length: CONCURRENT }, () => side.call()));
  const bursts = await interleavedRounds(burst(bridge), burst(sdk), BURSTS, 0.9, (a, b) => b / a);
  const name = kind === "stdio" ? "stdio" : "Streamable HTTP";
  const ratios = (rounds: Round[]) => rounds.map((r) => r.ratio);
  const bridgeMs = median(calls.map((r) => r.bridge));
  const sdkMs = median(calls.map((r) => r.sdk));
  return [
    {
      id: `call.${kind}.${id}`,
      label: `Per-call latency over ${name}, bridge / ${vs}`,
      value: Number(median(ratios(calls)).toFixed(3)),
      unit: "×",
      ...(targets && { target: { op: "<=", value: 1.1 } as const }),
      detail: {
        bridgeMedianUs: µs(bridgeMs),
        sdkMedianUs: µs(sdkMs),
        extraUs: µs(bridgeMs - sdkMs),
        callsPerRound: CALLS,
        rounds: calls.length,
        ...summary("ratio", ratios(calls)),
      },
    },
    {
      id: `throughput.${kind}.${id}`,
      label: `Throughput of ${CONCURRENT} concurrent calls over ${name}, bridge / ${vs}`,
      value: Number(median(ratios(bursts)).toFixed(3)),
      unit: "×",
      ...(targets && { target: { op: ">=", value: 0.9 } as const }),
      detail: {
        bridgeCallsPerSecond: Math.round(CONCURRENT / (median(bursts.map((r) => r.bridge)) / 1000)),
        sdkCallsPerSecond: Math.round(CONCURRENT / (median(bursts.map((r) => r.sdk)) / 1000)),
        runsPerRound: BURSTS,
        rounds: bursts.length,
        ...summary("ratio", ratios(bursts)),
      },
    },
  ];
}

/** The bridge against a bare call (`sdk`), then against the same client given the bridge's options (`same`). */
async function measureTransport(kind: "stdio" | "http", bridge: Side, sdk: Side, same: Side): Promise<Figure[]> {
  for (let i = 0; i < WARMUP_CALLS; i++) {
    await bridge.call();
    await sdk.call();
    await same.call();
  }
  return [
    ...(await pairFigures(kind, bridge, sdk, "ratio", "bare SDK", true)),
    ...(await pairFigures(kind, bridge, same, "ratioSameOptions", "SDK given the same options", false)),
  ];
}

/**
 * The bridge starts a local server as the leader of its own session (so that its whole process group can be ended);
 * on Linux that also puts it in a scheduling group of its own (autogroup), which under load changes how soon it runs
 * after a request is written. The same bare client with its server started by `setsid` shows how much of the
 * difference is that, and how much is the bridge's code.
 */
async function sameLayoutFigure(bridge: Side): Promise<Figure[]> {
  if (process.platform !== "linux") return [];
  const transport = new StdioClientTransport({ command: "setsid", args: [process.execPath, STDIO_SERVER], stderr });
  const sdk = await sdkSide(transport).catch(() => undefined);
  if (!sdk) return [];
  try {
    for (let i = 0; i < WARMUP_CALLS; i++) await Promise.all([bridge.call(), sdk.call()]);
    const calls = await interleavedRounds(bridge.call, sdk.call, CALLS, 1.1, (a, b) => a / b);
    const ratios = calls.map((r) => r.ratio);
    return [
      {
        id: "call.stdio.ratioOwnSession",
        label: "Per-call latency over stdio, bridge / bare SDK whose server leads its own session too",
        value: Number(median(ratios).toFixed(3)),
        unit: "×",
        detail: {
          bridgeMedianUs: µs(median(calls.map((r) => r.bridge))),
          sdkMedianUs: µs(median(calls.map((r) => r.sdk))),
          rounds: calls.length,
          ...summary("ratio", ratios),
        },
      },
    ];
  } finally {
    await sdk.close();
  }
}

async function measureStdio(): Promise<Figure[]> {
  const bridge = await bridgeSide({ command: process.execPath, args: [STDIO_SERVER] });
  const transport = () => new StdioClientTransport({ command: process.execPath, args: [STDIO_SERVER], stderr });
  const opened: Side[] = [bridge];
  try {
    const sdk = await sdkSide(transport());
    opened.push(sdk);
    const same = await sdkSide(transport(), sameOptions(new AbortController().signal));
    opened.push(same);
    return [...(await measureTransport("stdio", bridge, sdk, same)), ...(await sameLayoutFigure(bridge))];
  } finally {
    await Promise.all(opened.map((side) => side.close()));
  }
}

async function measureHttp(): Promise<Figure[]> {
  const server = await httpServer();
  try {
    const opened: Side[] = [await bridgeSide({ url: server.url })];
    try {
      const transport = () => new StreamableHTTPClientTransport(new URL(server.url));
      opened.push(await sdkSide(transport()));
      opened.push(await sdkSide(transport(), sameOptions(new AbortController().signal)));
      const [bridge, sdk, same] = opened as [Side, Side, Side];
      return await measureTransport("http", bridge, sdk, same);
    } finally {
      await Promise.all(opened.map((side) => side.close()));
    }
  } finally {
    server.close();
  }
}

export const callsSection: FigureSection = {
  title: "Tool calls: the bridge's path vs a bare SDK client",
  async measure() {
    return [...(await measureStdio()), ...(await measureHttp())];
  },
};
