/**
 * What the orphan watchdog costs while pi runs: real `pi --mode rpc` with local servers, the watchdog's CPU time
 * (utime + stime from /proc/<pid>/stat) over a period, beside pi's own, and its memory. Linux only.
 *
 * Run: node --import tsx bench/watchdog-cost.ts   (BENCH_SECONDS, default 30; BENCH_SERVERS, default 3)
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const PI_CLI = path.join(ROOT, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
const SERVER = path.join(ROOT, "examples", "hello-server.mjs");
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const SERVERS = Number(process.env.BENCH_SERVERS ?? 3);
const TICKS_PER_SECOND = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** CPU time used so far, in clock ticks (utime + stime), or undefined once the process is gone. */
function cpuTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** A size from /proc/<pid>/status, in kB. */
function statusKb(pid: number, name: string): string {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${name}:`));
  return line?.split(/\s+/)[1] ?? "?";
}

function watchdogOf(piPid: number): number | undefined {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === piPid && readFileSync(`/proc/${entry}/cmdline`, "utf8").includes("watchdog.sh"))
        return Number(entry);
    } catch {
      // Gone meanwhile.
    }
  }
  return undefined;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "mcp-bridge-watchdog-bench-"));
  const servers: Record<string, unknown> = {};
  for (let i = 0; i < SERVERS; i++)
    servers[`s${i}`] = { command: "sh", args: ["-c", `sleep 600 & exec node '${SERVER}'`] };
  writeFileSync(path.join(dir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
  const pi = spawn(
    process.execPath,
    [PI_CLI, "--mode", "rpc", "--no-session", "-e", ROOT, "--mcp-config", path.join(dir, "mcp.json")],
    {
      cwd: dir,
      env: {
        ...process.env,
        HOME: dir,
        PI_CODING_AGENT_DIR: path.join(dir, "agent"),
        PI_OFFLINE: "1",
        PI_MCP_STARTUP_BUDGET_MS: "60000",
      },
      stdio: ["pipe", "pipe", "ignore"],
    },
  );
  try {
    let stdout = "";
    pi.stdout.on("data", (d) => (stdout += d));
    pi.stdin.write(`${JSON.stringify({ id: "ready", type: "get_state" })}\n`);
    for (let i = 0; i < 600 && !stdout.includes('"id":"ready"'); i++) await new Promise((r) => setTimeout(r, 100));
    const watchdog = watchdogOf(pi.pid!);
    if (!watchdog) throw new Error("pi started no watchdog");
    const before = { watchdog: cpuTicks(watchdog)!, pi: cpuTicks(pi.pid!)! };
    const started = Date.now();
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const elapsed = (Date.now() - started) / 1000;
    const after = { watchdog: cpuTicks(watchdog)!, pi: cpuTicks(pi.pid!)! };
    const percent = (ticks: number) => ((100 * ticks) / TICKS_PER_SECOND / elapsed).toFixed(3);
    console.log(
      `${SERVERS} local servers, ${elapsed.toFixed(1)} s with pi idle (clock ticks of 1/${TICKS_PER_SECOND} s)`,
    );
    console.log(
      `  watchdog: ${before.watchdog} ticks to start and take the servers; ${after.watchdog - before.watchdog} ticks since = ${percent(after.watchdog - before.watchdog)}% CPU`,
    );
    console.log(`  pi:       ${after.pi - before.pi} ticks in the same time = ${percent(after.pi - before.pi)}% CPU`);
    console.log(
      `  watchdog memory: VmRSS ${statusKb(watchdog, "VmRSS")} kB, of it anonymous ${statusKb(watchdog, "RssAnon")} kB`,
    );
  } finally {
    pi.kill("SIGTERM");
    await new Promise((r) => pi.once("exit", r));
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
