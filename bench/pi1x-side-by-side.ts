/**
 * `npm run bench:pi1x`: pi 1.x's built-in MCP and this bridge side by side, on the same config and the same machine
 * (docs/pi1x-builtin.md). Both run in pi 1.6 on Node 22 from test/pi1x (installed by `npm run test:pi1x`):
 *   built-in  `pi mcp list`            (the built-in's own status command; it connects every server, then exits)
 *   bridge    `pi -e <repo> -p /mcp`   (the bridge replaces the built-in for the session and prints its table)
 * The config holds the repo's hello server, the MCP reference server `server-everything`, a legacy HTTP+SSE server
 * (a plain `url`, as a user would paste it) and a server that crashes on start. Prints what each side connects and
 * offers, then the time to list: rounds interleaved (the order alternates), medians and quartiles, with the same run
 * on an empty config as the baseline.
 *
 *   BENCH_PI1X_ROUNDS=7 npm run bench:pi1x     more rounds (default 5)
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { startSse } from "../test/fixtures/http-servers.ts";
import { ensureInstalled, node22, PI1X_DIR } from "../scripts/node22.mjs";
import { envCount, median, quantile } from "./stats.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const PI_CLI = path.join(PI1X_DIR, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js");
const RUN_TIMEOUT_MS = 120_000;

type Side = "built-in" | "bridge";

interface ServerSeen {
  status: string;
  tools: string[];
  detail: string;
}

interface Run {
  /** From start to the last byte of output: the list is complete. */
  listed: number;
  /** From start to exit: the list, then shutting the servers down. */
  seconds: number;
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

function run(side: Side, agentDir: string): Promise<Run> {
  const args = side === "built-in" ? [PI_CLI, "mcp", "list"] : [PI_CLI, "-e", ROOT, "-p", "/mcp"];
  // HOME and the agent dir are a scratch folder: no user config, sign-in or settings of this machine take part.
  const env = { ...process.env, HOME: agentDir, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1" };
  const started = performance.now();
  const child = spawn(NODE22, args, { cwd: agentDir, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  let listedAt = started;
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    listedAt = performance.now();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill("SIGKILL"), RUN_TIMEOUT_MS);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({
        listed: (listedAt - started) / 1000,
        seconds: (performance.now() - started) / 1000,
        exitCode: code,
        stdout,
        stderr,
      });
    });
  });
}

/** `pi mcp list`: `name: connected, 2 tools (…)`, then indented lines: the command or URL, `tools: a, b`, errors. */
function parseBuiltIn(output: string): Map<string, ServerSeen> {
  const servers = new Map<string, ServerSeen>();
  let current: ServerSeen | undefined;
  for (const line of output.split("\n")) {
    const head = /^(\S+): (\w[\w ]*?)(?:, (\d+) tools?)? \(/.exec(line);
    if (head) {
      current = { status: head[2]!, tools: [], detail: "" };
      servers.set(head[1]!, current);
    } else if (current && line.startsWith("  tools: ")) {
      current.tools = line
        .slice("  tools: ".length)
        .split(", ")
        .map((t) => t.trim());
    } else if (
      current &&
      line.startsWith("  ") &&
      !current.detail &&
      current.status !== "connected" &&
      !/^ {2}(node|https?:)/.test(line)
    ) {
      current.detail = line.trim();
    }
  }
  return servers;
}

/** The bridge's `/mcp`: `name  connected  stdio  2 tools …`, then `    - mcp_x_y  (y)  · …` per tool, or the error. */
function parseBridge(output: string): Map<string, ServerSeen> {
  const servers = new Map<string, ServerSeen>();
  let current: ServerSeen | undefined;
  for (const line of output.split("\n")) {
    const head = /^(\S+) {2}(\w[\w -]*?) {2}(.+?) {2}(\d+) tools?/.exec(line);
    if (head) {
      current = { status: `${head[2]!} (${head[3]!})`, tools: [], detail: "" };
      servers.set(head[1]!, current);
      continue;
    }
    const tool = /^ {4}- \S+ {2}\((.+?)\)/.exec(line);
    if (current && tool) current.tools.push(tool[1]!);
    else if (current && line.startsWith("    ") && !current.detail) current.detail = line.trim();
  }
  return servers;
}

/** A scratch agent dir (also HOME and the working directory) holding this `mcp.json`. */
function agentDirWith(parent: string, name: string, servers: Record<string, unknown>): string {
  const dir = path.join(parent, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "mcp.json"), JSON.stringify({ mcpServers: servers }, null, 2));
  return dir;
}

function figure(values: readonly number[]): string {
  const f = (n: number) => n.toFixed(2);
  return `${f(median(values))} s  (quartiles ${f(quantile(values, 0.25))}–${f(quantile(values, 0.75))}, ${values.length} runs)`;
}

function countStarts(logFile: string): number {
  return existsSync(logFile)
    ? readFileSync(logFile, "utf8")
        .split("\n")
        .filter((l) => l.includes('"start"')).length
    : 0;
}

/** The Node 22 pi 1.x runs on, with pi 1.x installed beside it; exits saying why when there is none. */
function piNode(): string {
  ensureInstalled(PI1X_DIR, "pi 1.x and Node 22");
  const node = node22();
  if (node && existsSync(PI_CLI)) return node;
  console.error(`bench:pi1x needs Node >= 22.19, and none is installed for ${process.platform}-${process.arch}`);
  return process.exit(2);
}
const NODE22 = piNode();

const rounds = envCount("BENCH_PI1X_ROUNDS", 5);
const scratch = mkdtempSync(path.join(os.tmpdir(), "bench-pi1x-"));
const sse = await startSse();
const crashLog = path.join(scratch, "crash.log");
const healthy: Record<string, unknown> = {
  hello: { command: "node", args: [path.join(ROOT, "examples", "hello-server.mjs")] },
  everything: {
    command: "node",
    args: [path.join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"), "stdio"],
  },
  // A legacy HTTP+SSE endpoint written as a plain `url`, the way its README would show it.
  legacy: { url: sse.url },
};
const full = {
  ...healthy,
  crashes: {
    command: "node",
    args: [path.join(ROOT, "test", "fixtures", "plain-misbehaving.mjs"), "--mode", "crash-on-start"],
    env: { FIXTURE_LOG: crashLog },
  },
};
const dirs = {
  empty: agentDirWith(scratch, "empty", {}),
  healthy: agentDirWith(scratch, "healthy", healthy),
  full: agentDirWith(scratch, "full", full),
};
const sides: Side[] = ["built-in", "bridge"];
const parse = (side: Side, output: string) => (side === "built-in" ? parseBuiltIn(output) : parseBridge(output));

try {
  console.log(
    `pi 1.x side by side: ${os.availableParallelism?.() ?? os.cpus().length} CPUs, ${os.cpus()[0]?.model.trim() ?? "?"}, ${new Date().toISOString()}`,
  );
  console.log(
    `built-in: pi mcp list   bridge: pi -e ${path.relative(process.cwd(), ROOT) || "."} -p /mcp   (pi 1.6, ${NODE22.replace(ROOT + path.sep, "")})`,
  );

  // What each side connects and offers, on the full config (one run each; they are deterministic).
  const seen = new Map<Side, Map<string, ServerSeen>>();
  const starts = new Map<Side, number>();
  const retries = new Map<Side, string>();
  for (const side of sides) {
    rmSync(crashLog, { force: true });
    const result = await run(side, dirs.full);
    starts.set(side, countStarts(crashLog));
    seen.set(side, parse(side, result.stdout));
    retries.set(side, /\(retry \d+\/\d+ in [^)]+\)/.exec(result.stdout)?.[0] ?? "none shown");
    const warning = result.stderr.split("\n").find((l) => l.includes("registers command `/mcp`"));
    console.log(
      `\n${side}: exit code ${result.exitCode}, ${result.seconds.toFixed(2)} s${warning ? "\n  pi says: " + warning.replace(/^Warning: /, "").slice(0, 160) + "…" : ""}`,
    );
  }
  console.log(`\n${"server".padEnd(12)}${"built-in".padEnd(60)}bridge`);
  for (const name of Object.keys(full)) {
    const cell = (side: Side) => {
      const s = seen.get(side)!.get(name);
      if (!s) return "not listed";
      const tools = s.tools.length > 0 ? `, ${s.tools.length} tools` : "";
      return `${s.status}${tools}${s.detail ? `: ${s.detail.slice(0, 48)}` : ""}`.slice(0, 58);
    };
    console.log(`${name.padEnd(12)}${cell("built-in").padEnd(60)}${cell("bridge")}`);
  }
  for (const name of Object.keys(full)) {
    const [a, b] = sides.map((side) => new Set(seen.get(side)!.get(name)?.tools ?? []));
    const onlyA = [...a!].filter((t) => !b!.has(t));
    const onlyB = [...b!].filter((t) => !a!.has(t));
    if (onlyA.length) console.log(`${name}: tools only the built-in gets: ${onlyA.join(", ")}`);
    if (onlyB.length) console.log(`${name}: tools only the bridge gets: ${onlyB.join(", ")}`);
  }
  console.log(
    `crashes: started ${starts.get("built-in")} time(s) under the built-in, ${starts.get("bridge")} under the bridge before the run ended; ` +
      `restart scheduled: built-in ${retries.get("built-in")}, bridge ${retries.get("bridge")}`,
  );

  // Time to list, interleaved: every round runs each (side, config) pair once, in an order that alternates.
  const configs = ["empty", "healthy", "full"] as const;
  const times = new Map<string, number[]>();
  for (let round = 0; round < rounds; round++) {
    const order = sides.flatMap((side) => configs.map((config) => [side, config] as const));
    if (round % 2 === 1) order.reverse();
    for (const [side, config] of order) {
      const result = await run(side, dirs[config]);
      for (const [measure, value] of [
        ["listed", result.listed],
        ["exit", result.seconds],
      ] as const) {
        const key = `${measure}/${side}/${config}`;
        times.set(key, [...(times.get(key) ?? []), value]);
      }
    }
    console.error(`bench:pi1x round ${round + 1}/${rounds} done`);
  }
  const headings = {
    listed: "time to list (start of the command to its last line of output; pi's own start included)",
    exit: "time to exit (the same, until the process ended: the list, then stopping the servers)",
  };
  for (const measure of ["listed", "exit"] as const) {
    console.log(`\n${headings[measure]}:`);
    for (const side of sides) {
      const of = (config: string) => times.get(`${measure}/${side}/${config}`)!;
      for (const config of configs) {
        const label = {
          empty: "no servers",
          healthy: "hello + everything + legacy SSE",
          full: "the same + the crashing server",
        }[config];
        console.log(`  ${side.padEnd(9)} ${label.padEnd(34)} ${figure(of(config))}`);
      }
      const cost = of("healthy").map((t, i) => t - of("empty")[i]!);
      console.log(`  ${side.padEnd(9)} ${"cost of those 3 servers over none".padEnd(34)} ${figure(cost)}`);
    }
  }
} finally {
  await sse.close();
  rmSync(scratch, { recursive: true, force: true });
}
