/**
 * Shared test plumbing: the fixture server's command line, temp dirs, connections built from config entries, and
 * bounded waiting.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import type { ConfigSource } from "../src/config/types.ts";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import { loadLayeredConfig } from "../src/config/files.ts";
import { needsTrust, withAnswer } from "../src/trust/trust-rules.ts";
import { TrustStore } from "../src/trust/trust-store.ts";
import { type ConnectionOptions, ServerConnection } from "../src/connection/server-connection.ts";
import { type BridgeOptions, McpBridge } from "../src/bridge/mcp-bridge.ts";
import { bundledFixture } from "./fixture-bundle.ts";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/**
 * Where pi loads the extension from in tests of what it does: the published package's form, built for the pass by the
 * test runner (./extension-package.mjs), or this checkout when a file runs without it.
 */
export const EXTENSION_DIR = process.env.MCP_BRIDGE_TEST_EXTENSION ?? REPO_ROOT;
export const STDIO_FIXTURE = path.join(REPO_ROOT, "test", "fixtures", "stdio-server.ts");
export const EVERYTHING_SERVER = path.join(
  REPO_ROOT,
  "node_modules",
  "@modelcontextprotocol",
  "server-everything",
  "dist",
  "index.js",
);

export const FILESYSTEM_SERVER = path.join(
  REPO_ROOT,
  "node_modules",
  "@modelcontextprotocol",
  "server-filesystem",
  "dist",
  "index.js",
);

export type FixtureMode =
  | "normal"
  | "crash-on-start"
  | "leak-and-crash"
  | "never-init"
  | "garbage"
  | "garbage-only"
  | "grandchild"
  | "hostile-text"
  | "stubborn"
  | "lingering";

const PLAIN_FIXTURE = path.join(REPO_ROOT, "test", "fixtures", "plain-misbehaving.mjs");
const PLAIN_MODES: readonly FixtureMode[] = ["crash-on-start", "leak-and-crash", "never-init", "garbage-only"];

/** `command` + `args` for a config entry that runs the stdio fixture, bundled (./fixture-bundle.ts); the plain-JavaScript one for modes without the SDK. */
export function fixtureEntry(mode: FixtureMode = "normal"): { command: string; args: string[] } {
  if (PLAIN_MODES.includes(mode)) return { command: process.execPath, args: [PLAIN_FIXTURE, "--mode", mode] };
  return { command: process.execPath, args: [bundledFixture(STDIO_FIXTURE), "--mode", mode] };
}

/**
 * A local server that never answers: a shell that logs its start to `log` (its pid, as the fixtures log theirs) and a
 * line to stderr, then sleeps. It has no node to start, so each start counts at any load, however short the timeout
 * under test.
 */
export function muteServer(log: string): { command: string; args: string[]; env: Record<string, string> } {
  const script = [
    `printf '{"pid":%d,"event":"start"}\\n' $$ >> "$FIXTURE_LOG"`,
    "echo 'mute server starting' >&2",
    "exec sleep 600",
  ].join("; ");
  return { command: "sh", args: ["-c", script], env: { FIXTURE_LOG: log } };
}

/**
 * examples/hello-server.mjs bundled with its packages (./fixture-bundle.ts): the same server, at half the CPU of a
 * start (0.20 s against 0.42 s), and the suite starts it some seventy times a pass.
 */
export function helloServer(): string {
  return bundledFixture(path.join(REPO_ROOT, "examples", "hello-server.mjs"));
}

export function tempDir(prefix = "mcp-bridge-test-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Where the extension keeps its project-trust answers, in an agent dir. */
export function trustFile(agentDir: string): string {
  return path.join(agentDir, "mcp-bridge", "trust.json");
}

/**
 * Records the servers of `projectRoot`'s `.pi/mcp.json`, as they are now, as trusted — as answering "trust all" would —
 * for tests about something else that run the extension in a project.
 */
export async function trustProjectServers(projectRoot: string, agentDir: string): Promise<void> {
  const { servers } = await loadLayeredConfig({ projectRoot, agentDir, bundledPath: path.join(REPO_ROOT, "mcp.json") });
  await new TrustStore(trustFile(agentDir)).save(projectRoot, withAnswer(new Map(), servers.filter(needsTrust), true));
}

export const TEST_SOURCE: ConfigSource = { scope: "project", path: "/test/.pi/mcp.json" };

/** Reconnect delays short enough for tests; the real schedule is unit-tested in lib.test.ts. */
export const FAST_RECONNECT = { initialDelay: 20, maxDelay: 200 };

/** A connection for one config entry, as the bridge would build it (with `FAST_RECONNECT` unless the entry says). */
export function connectionFor(
  name: string,
  entry: Record<string, unknown>,
  options: Partial<Omit<ConnectionOptions, "clientInfo">> = {},
): ServerConnection {
  const result = validateServerEntry(name, { reconnect: FAST_RECONNECT, ...entry }, TEST_SOURCE);
  if (!result.config) throw new Error(`invalid test entry: ${result.errors.join("; ")}`);
  return new ServerConnection(result.config, {
    ...options,
    projectRoot: options.projectRoot ?? REPO_ROOT,
    env: options.env ?? process.env,
    clientInfo: { name: "mcp-bridge-test", version: "0.0.0" },
  });
}

/** The error message of connecting `connection`, which must fail, and the state it failed to; closed after. */
export async function connectFailure(connection: ServerConnection): Promise<{ message: string; state: string }> {
  try {
    const message = await connection.connect().then(
      () => assert.fail("connected"),
      (e: Error) => e.message,
    );
    return { message, state: connection.state.kind };
  } finally {
    await connection.close();
  }
}

export interface LogEvent {
  pid: number;
  event: string;
  [key: string]: unknown;
}

export function readLog(file: string): LogEvent[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as LogEvent);
}

/** SIGKILLs `pid` if it still runs: a cleanup's kill of a process that ended meanwhile (ESRCH) is no failure. */
export function killIfAlive(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie (exited, not yet reaped) counts as gone.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** A process's command line, its arguments joined by spaces; empty once it is gone (Linux). */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  } catch {
    return "";
  }
}

/** Polls `check` until it holds; for states no event announces (a process gone). Bounded in time and count. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
  intervalMs = 25,
): Promise<void> {
  const attempts = Math.ceil(timeoutMs / intervalMs);
  for (let i = 0; i < attempts; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/**
 * Puts the environment back as `saved` (a copy taken before a test changed it), key by key: assigning a new object to
 * `process.env` would leave the process's real environment, which `os.homedir()` and child processes read, as the
 * test left it.
 */
export function restoreEnv(saved: NodeJS.ProcessEnv): void {
  for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
  Object.assign(process.env, saved);
}

/** A port nothing listens on now on 127.0.0.1, with the next five free too (most likely). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** One event another extension saw on pi's bus. */
export interface BusEvent {
  channel: string;
  payload: Record<string, unknown>;
}

let recorders = 0;

/**
 * Another extension for pi (its file written into `dir`, to be listed in `extensionPaths`) that records what is
 * published on pi's bus on `channels`, in the order the bus delivers it; `events()` is what it has seen so far.
 */
export function busRecorder(dir: string, channels: readonly string[]): { path: string; events: () => BusEvent[] } {
  const key = `__busRecorder${++recorders}`;
  const file = path.join(dir, `bus-recorder-${recorders}.ts`);
  writeFileSync(
    file,
    `export default function (pi) {
      const seen = (globalThis[${JSON.stringify(key)}] ??= []);
      for (const channel of ${JSON.stringify(channels)}) pi.events.on(channel, (payload) => seen.push({ channel, payload }));
    }`,
  );
  return { path: file, events: () => ((globalThis as Record<string, unknown>)[key] as BusEvent[] | undefined) ?? [] };
}

/**
 * A bridge as a test builds one: the project in `dir`, its agent dir below it, no bundled config, pi's environment,
 * and a start that waits for every server (the startup budget has tests of its own). `options` adds the config files
 * and what the test looks at.
 */
export function testBridge(dir: string, options: Partial<BridgeOptions> = {}): McpBridge {
  return new McpBridge({
    projectRoot: dir,
    agentDir: path.join(dir, "agent"),
    bundledPath: path.join(dir, "bundled.json"),
    env: process.env,
    clientInfo: { name: "test", version: "0" },
    startupBudgetMs: 60_000,
    ...options,
  });
}
