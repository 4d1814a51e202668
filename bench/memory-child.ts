/**
 * One memory sample for bench/figures/memory.ts: pi 0.73.1 in-process with the bridge loaded as pi loads it and
 * `<servers>` copies of examples/hello-server.mjs configured, every server's tools registered; then the process's RSS.
 * Prints `{"rss": bytes, "heapUsed": bytes, "tools": n}`.
 *
 *   node --import tsx --expose-gc bench/memory-child.ts <servers>
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { toolNameFor } from "../src/translate/naming.ts";
import { startInProcessPi } from "../test/pi-harness.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SERVER = path.join(ROOT, "examples", "hello-server.mjs");
const HELLO_TOOLS = ["greet", "word_count"];

const servers = Number(process.argv[2]);
if (!Number.isInteger(servers) || servers < 0)
  throw new Error(`usage: memory-child.ts <servers>, got ${process.argv[2]}`);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --expose-gc, so each sample is taken after a full collection");

const dir = mkdtempSync(path.join(tmpdir(), "mcp-bridge-bench-memory-"));
const project = path.join(dir, "project");
const agentDir = path.join(dir, "agent");
mkdirSync(project);
mkdirSync(agentDir);
// User-level servers (the agent dir's mcp.json) need no project trust; the bench's pi has no UI to ask approval in.
const mcpServers = Object.fromEntries(
  Array.from({ length: servers }, (_, i) => [`s${i}`, { command: process.execPath, args: [SERVER] }]),
);
writeFileSync(path.join(agentDir, "mcp.json"), JSON.stringify({ approval: "never", mcpServers }));
process.env.PI_CODING_AGENT_DIR = agentDir;
process.env.HOME = dir;
process.chdir(project);

const pi = await startInProcessPi({ cwd: project, agentDir, extensionPaths: [ROOT] });
try {
  await pi.session.bindExtensions({});
  const expected = Array.from({ length: servers }, (_, i) => HELLO_TOOLS.map((t) => toolNameFor(`s${i}`, t))).flat();
  // Servers that missed pi's startup budget register their tools when they connect: wait for them, within reason.
  const deadline = Date.now() + 30_000;
  const missing = () => {
    const names = new Set(pi.session.getAllTools().map((t) => t.name));
    return expected.filter((name) => !names.has(name));
  };
  while (missing().length && Date.now() < deadline) await sleep(50);
  if (missing().length) throw new Error(`tools never registered: ${missing().slice(0, 5).join(", ")}`);
  // Let start-up garbage go and timers settle, so the sample is what the session keeps.
  for (let i = 0; i < 3; i++) {
    gc();
    await sleep(100);
  }
  const { rss, heapUsed } = process.memoryUsage();
  console.log(JSON.stringify({ rss, heapUsed, tools: expected.length }));
} finally {
  await pi.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
