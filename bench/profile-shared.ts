/**
 * Where a call through the shared-server hub spends CPU: N calls one after another on a shared connection (through a
 * hub this script starts under `node --cpu-prof`, its profile in PROFILE_DIR) and N on a direct one to the same server,
 * with the CPU time of this process and of the hub per call, read from /proc.
 *
 * Run: node --import tsx bench/profile-shared.ts [calls]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { waitFor } from "../test/helpers.ts";
import { bridgeSide, type Side } from "./figures/calls.ts";
import { endProcesses, hubPid } from "./shared-processes.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SERVER = path.join(ROOT, "examples", "hello-server.mjs");
const HUB = path.join(ROOT, "src", "connection", "hub", "hub.mjs");
const calls = Number(process.argv[2] ?? 5000);
const profileDir = process.env.PROFILE_DIR ?? "/tmp";

/** utime + stime of a process, in clock ticks (1/100 s on Linux). */
function ticks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

const dir = mkdtempSync(path.join(tmpdir(), "mcp-bridge-profile-shared-"));
const hubDir = path.join(dir, "mcp-hub");
// Detached as pi starts it (a scheduling group of its own on Linux).
const hub = spawn(process.execPath, ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, HUB, hubDir], {
  stdio: "ignore",
  detached: true,
});
const sides: Side[] = [];
try {
  await waitFor(() => hubPid(hubDir) === hub.pid, "the hub to start");
  const shared = await bridgeSide({ command: process.execPath, args: [SERVER], shared: { idleSeconds: 1 } }, hubDir);
  sides.push(shared);
  const direct = await bridgeSide({ command: process.execPath, args: [SERVER] });
  sides.push(direct);
  for (const [name, side] of [
    ["shared", shared],
    ["direct", direct],
    ["shared", shared],
    ["direct", direct],
  ] as const) {
    for (let i = 0; i < 500; i++) await side.call();
    const cpu = process.cpuUsage();
    const hubBefore = ticks(hub.pid!);
    const started = performance.now();
    for (let i = 0; i < calls; i++) await side.call();
    const wall = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const hubUs = (ticks(hub.pid!) - hubBefore) * 10_000;
    console.log(
      `${name}: ${((wall * 1000) / calls).toFixed(0)} µs a call; this process ${((used.user + used.system) / calls).toFixed(0)} µs CPU a call; the hub ${(hubUs / calls).toFixed(0)} µs`,
    );
  }
} finally {
  await Promise.all(sides.map((side) => side.close()));
  await endProcesses([hub.pid!]);
  rmSync(dir, { recursive: true, force: true });
}
