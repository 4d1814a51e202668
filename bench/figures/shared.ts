/**
 * What a shared local server (`"shared": true`, one process under the per-user hub for every pi session) saves and
 * costs, against the same server unshared (a process per session):
 *
 * - Memory: four real `pi --mode rpc` processes (pi 0.73's CLI, the faux model, this extension) with the memory
 *   reference server started as its README says (`npx -y @modelcontextprotocol/server-memory`, from the local
 *   install, offline), each pi having run one of its tools; then the server's processes (npx, its shell, the server:
 *   everything with the bench's mark in its environment) are counted and their RSS summed from /proc, the hub's added
 *   on the shared side; pi's own RSS beside it. The two sides alternate round by round (which goes first swapped).
 * - Per call: the pi tool's `execute` (as ./calls.ts calls it) on a shared connection, through the hub, and on a
 *   direct one to another process of the same server (examples/hello-server.mjs), alternating call by call; and
 *   1,000 concurrent calls, alternating run by run. And the shared connection against one through a bare byte relay
 *   (../byte-relay.mjs, which parses nothing): what the hub's own code adds to the extra process between session and
 *   server.
 *
 * Every pi, hub and server it starts is ended before it returns, also when it fails; each pi gets a temporary HOME and
 * agent dir, so the user's own hub is never reached. Linux only (/proc).
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import * as path from "node:path";
import { hubDir } from "../../src/connection/hub/hub-launch.ts";
import { REPO_ROOT, waitFor } from "../../test/helpers.ts";
import { processesWithEnv } from "../../test/tmux.ts";
import { endProcesses, hubPid, memoryKb, type RpcPi, startRpcPi } from "../shared-processes.ts";
import { envCount, median, repeatRounds, summary } from "../stats.ts";
import { bridgeSide, interleavedRounds, type Side } from "./calls.ts";
import type { Figure, FigureSection } from "./figure.ts";

const MARK = "MCP_BRIDGE_BENCH_SHARED";
const HELLO_SERVER = path.join(REPO_ROOT, "examples", "hello-server.mjs");
const RELAY = path.join(REPO_ROOT, "bench", "byte-relay.mjs");
const PIS = envCount("BENCH_SHARED_PIS", 4);
const MEMORY_ROUNDS = {
  min: envCount("BENCH_SHARED_MEMORY_ROUNDS", 3),
  max: envCount("BENCH_SHARED_MEMORY_MAX_ROUNDS", 7),
  spread: 0.1,
};
const CALL_ROUNDS = {
  min: envCount("BENCH_SHARED_CALL_ROUNDS", 5),
  max: envCount("BENCH_SHARED_CALL_MAX_ROUNDS", 21),
  spread: 0.05,
};
const CALLS = envCount("BENCH_SHARED_CALLS", 1000);
const BURSTS = envCount("BENCH_SHARED_BURSTS", 5);
const CONCURRENT = envCount("BENCH_CONCURRENT", 1000);
const CALL_TARGET = 1.2;
/** Short, so that a server left by an interrupted run stops by itself soon, and its hub after it. */
const SHARED = { idleSeconds: 1 };
/** /proc gives kB. */
const KB_PER_MB = 1024;

const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(" ");

interface MemorySample {
  /** Every process carrying the mark: npx, its shell, the server itself. */
  processes: number;
  /** Of them, the server's own node processes. */
  servers: number;
  /** Their RSS and PSS summed, the hub's included on the shared side (kB). */
  rss: number;
  pss: number;
  hubRss: number;
  /** The pis' own RSS, summed (kB). */
  piRss: number;
}

function isServer(pid: number): boolean {
  try {
    return /^[^\0]*node\0[^\0]*mcp-server-memory/.test(readFileSync(`/proc/${pid}/cmdline`, "utf8"));
  } catch {
    return false;
  }
}

/** PIS pis with the memory server, shared or not, each having called it once; their processes measured, then ended. */
async function fourPis(shared: boolean): Promise<MemorySample> {
  const home = mkdtempSync(path.join(tmpdir(), "mcp-bridge-bench-shared-"));
  mkdirSync(path.join(home, "agent"));
  const hub = hubDir(path.join(home, "agent"));
  const mark = randomUUID();
  const config = path.join(home, "mcp.json");
  const memory = {
    command: "npx",
    args: ["-y", "@modelcontextprotocol/server-memory"],
    env: {
      MEMORY_FILE_PATH: path.join(home, "memory.jsonl"),
      [MARK]: mark,
      PATH: `${path.join(REPO_ROOT, "node_modules", ".bin")}:${process.env.PATH}`,
    },
    cwd: REPO_ROOT,
    exposure: "direct",
    autoApprove: ["*"],
    initTimeout: 120_000,
    ...(shared ? { shared: SHARED } : {}),
  };
  writeFileSync(config, JSON.stringify({ mcpServers: { memory } }));
  const pis: RpcPi[] = [];
  try {
    for (let i = 0; i < PIS; i++) pis.push(startRpcPi(home, config));
    await Promise.all(pis.map((pi) => pi.call("mcp_memory_read_graph")));
    const marked = processesWithEnv(MARK, mark);
    const hubProcess = shared ? hubPid(hub) : undefined;
    if (shared && hubProcess === undefined) throw new Error("the shared side runs no hub");
    const sum = (pids: readonly number[], key: "rss" | "pss") => pids.reduce((n, pid) => n + memoryKb(pid)[key], 0);
    const counted = [...marked, ...(hubProcess ? [hubProcess] : [])];
    return {
      processes: marked.length,
      servers: marked.filter(isServer).length,
      rss: sum(counted, "rss"),
      pss: sum(counted, "pss"),
      hubRss: hubProcess ? memoryKb(hubProcess).rss : 0,
      piRss: sum(
        pis.map((pi) => pi.child.pid!),
        "rss",
      ),
    };
  } finally {
    await Promise.all(pis.map((pi) => pi.end()));
    const hubProcess = hubPid(hub);
    await endProcesses([...(hubProcess ? [hubProcess] : []), ...processesWithEnv(MARK, mark)]);
    rmSync(home, { recursive: true, force: true });
  }
}

interface MemoryRound {
  shared: MemorySample;
  unshared: MemorySample;
}

async function measureMemory(): Promise<Figure[]> {
  const loadBefore = load();
  const rounds = await repeatRounds<MemoryRound>(
    MEMORY_ROUNDS,
    async (index) => {
      if (index % 2 === 0) {
        const shared = await fourPis(true);
        return { shared, unshared: await fourPis(false) };
      }
      const unshared = await fourPis(false);
      return { unshared, shared: await fourPis(true) };
    },
    (round) => round.shared.rss / round.unshared.rss,
  );
  const of = (side: keyof MemoryRound, key: keyof MemorySample) => rounds.map((r) => r[side][key] / KB_PER_MB);
  const ratios = rounds.map((r) => r.shared.rss / r.unshared.rss);
  const saved = rounds.map((r) => (r.unshared.rss - r.shared.rss) / KB_PER_MB);
  const common = { rounds: rounds.length, pis: PIS, loadBefore, loadAfter: load() };
  const count = (side: keyof MemoryRound, key: "processes" | "servers") => median(rounds.map((r) => r[side][key]));
  return [
    {
      id: "shared.memory.serverProcesses",
      label: `memory server processes for ${PIS} pis, shared (unshared in detail)`,
      value: count("shared", "servers"),
      unit: "processes",
      detail: {
        ...common,
        unsharedServers: count("unshared", "servers"),
        sharedAllProcesses: count("shared", "processes"),
        unsharedAllProcesses: count("unshared", "processes"),
      },
    },
    {
      id: "shared.memory.rssRatio",
      label: `RSS of the memory server's processes for ${PIS} pis, shared (with the hub) / unshared`,
      value: Number(median(ratios).toFixed(3)),
      unit: "×",
      detail: {
        ...common,
        ...summary("ratio", ratios),
        ...summary("sharedMB", of("shared", "rss"), 1),
        ...summary("unsharedMB", of("unshared", "rss"), 1),
        ...summary("hubMB", of("shared", "hubRss"), 1),
        ...summary("sharedPssMB", of("shared", "pss"), 1),
        ...summary("unsharedPssMB", of("unshared", "pss"), 1),
      },
    },
    {
      id: "shared.memory.savedMB",
      label: `RSS saved for ${PIS} pis by sharing the memory server (hub counted)`,
      value: Number(median(saved).toFixed(1)),
      unit: "MB",
      detail: { ...common, ...summary("savedMB", saved, 1) },
    },
    {
      id: "shared.memory.piRssMB",
      label: `pi's own RSS, summed over the ${PIS} pis, shared side (unshared in detail)`,
      value: Number(median(of("shared", "piRss")).toFixed(1)),
      unit: "MB",
      detail: {
        ...common,
        ...summary("sharedMB", of("shared", "piRss"), 1),
        ...summary("unsharedMB", of("unshared", "piRss"), 1),
      },
    },
  ];
}

const µs = (ms: number) => Math.round(ms * 1000);

/** A shared connection through ../byte-relay.mjs in `dir` instead of the hub; the relay's pid goes to `started` at once. */
async function relaySide(dir: string, entry: Record<string, unknown>, started: number[]): Promise<Side> {
  // Detached as pi starts the hub: on Linux a session of its own is a scheduling group of its own, which changes how
  // soon it runs after a write under load.
  const relay = spawn(process.execPath, [RELAY, dir], { stdio: "ignore", detached: true });
  if (relay.pid === undefined) throw new Error("the byte relay did not start");
  started.push(relay.pid);
  await waitFor(() => hubPid(dir) === relay.pid, "the byte relay to listen", 20_000);
  return bridgeSide(entry, dir);
}

async function measureCalls(): Promise<Figure[]> {
  const dir = mkdtempSync(path.join(tmpdir(), "mcp-bridge-bench-shared-calls-"));
  const hub = path.join(dir, "mcp-hub");
  const mark = randomUUID();
  const entry = (shared: boolean) => ({
    command: process.execPath,
    args: [HELLO_SERVER],
    env: { [MARK]: mark },
    ...(shared ? { shared: SHARED } : {}),
  });
  const sides: Side[] = [];
  const started: number[] = [];
  try {
    const shared = await bridgeSide(entry(true), hub);
    sides.push(shared);
    const direct = await bridgeSide(entry(false));
    sides.push(direct);
    const loadBefore = load();
    for (let i = 0; i < 300; i++) await Promise.all([shared.call(), direct.call()]);
    const calls = await interleavedRounds(shared.call, direct.call, CALLS, CALL_TARGET, (a, b) => a / b, CALL_ROUNDS);
    const burst = (side: Side) => () => Promise.all(Array.from({ length: CONCURRENT }, () => side.call()));
    const bursts = await interleavedRounds(burst(shared), burst(direct), BURSTS, 1, (a, b) => b / a, CALL_ROUNDS);
    const relayed = await relaySide(path.join(dir, "relay"), entry(true), started);
    sides.push(relayed);
    for (let i = 0; i < 300; i++) await Promise.all([shared.call(), relayed.call()]);
    const vsRelay = await interleavedRounds(shared.call, relayed.call, CALLS, 1, (a, b) => a / b, CALL_ROUNDS);
    const common = { loadBefore, loadAfter: load() };
    const sharedMs = median(calls.map((r) => r.bridge));
    const directMs = median(calls.map((r) => r.sdk));
    return [
      {
        id: "shared.call.ratio",
        label: "per-call latency, shared (through the hub) / unshared",
        value: Number(median(calls.map((r) => r.ratio)).toFixed(3)),
        unit: "×",
        target: { op: "<=", value: CALL_TARGET },
        detail: {
          sharedMedianUs: µs(sharedMs),
          unsharedMedianUs: µs(directMs),
          extraUs: µs(sharedMs - directMs),
          callsPerRound: CALLS,
          rounds: calls.length,
          ...summary(
            "ratio",
            calls.map((r) => r.ratio),
          ),
          ...common,
        },
      },
      {
        id: "shared.throughput.ratio",
        label: `throughput of ${CONCURRENT} concurrent calls, shared / unshared`,
        value: Number(median(bursts.map((r) => r.ratio)).toFixed(3)),
        unit: "×",
        detail: {
          sharedCallsPerSecond: Math.round(CONCURRENT / (median(bursts.map((r) => r.bridge)) / 1000)),
          unsharedCallsPerSecond: Math.round(CONCURRENT / (median(bursts.map((r) => r.sdk)) / 1000)),
          runsPerRound: BURSTS,
          rounds: bursts.length,
          ...summary(
            "ratio",
            bursts.map((r) => r.ratio),
          ),
          ...common,
        },
      },
      {
        id: "shared.call.vsRelay",
        label: "per-call latency, through the hub / through a bare byte relay",
        value: Number(median(vsRelay.map((r) => r.ratio)).toFixed(3)),
        unit: "×",
        detail: {
          hubMedianUs: µs(median(vsRelay.map((r) => r.bridge))),
          relayMedianUs: µs(median(vsRelay.map((r) => r.sdk))),
          callsPerRound: CALLS,
          rounds: vsRelay.length,
          ...summary(
            "ratio",
            vsRelay.map((r) => r.ratio),
          ),
          ...common,
        },
      },
    ];
  } finally {
    await Promise.all(sides.map((side) => side.close()));
    const hubProcess = hubPid(hub);
    await endProcesses([...started, ...(hubProcess ? [hubProcess] : []), ...processesWithEnv(MARK, mark)]);
    rmSync(dir, { recursive: true, force: true });
  }
}

export const sharedSection: FigureSection = {
  title: "shared: a shared local server vs the same unshared",
  measure: async () => {
    if (process.platform !== "linux")
      throw new Error("the shared-servers bench reads processes from /proc (Linux only)");
    return [...(await measureCalls()), ...(await measureMemory())];
  },
};
