/**
 * Every step of a server's life as another extension sees it on pi's bus, in order and with the spec's fields: a
 * first connect that fails and a retry that works, a command that does not exist, a server that wants credentials
 * nobody configured, and how each local server ended when its session ended (`/new`). The recorder is loaded after the bridge, as an
 * extension listed later is: it subscribes only once the bridge's servers have started. Real pi in-process with the
 * faux model; real servers on 127.0.0.1 and real server processes, one of which ignores stdin closing and SIGTERM.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { type RunningServer, startStreamableHttp, startUnauthorized } from "./fixtures/http-servers.ts";
import { type BusEvent, busRecorder, EXTENSION_DIR, fixtureEntry, isAlive, tempDir, waitFor } from "./helpers.ts";
import { type InProcessPi, startInProcessPi, startPiRuntime } from "./pi-harness.ts";

/** Servers whose first connect has its connection cut, unanswered, as a server not up yet would; the next works. */
const LATE = ["late1", "late2", "late3"];
const RETRY_DELAY_MS = 2000;

/** What the recorder extension (loaded after the bridge, see `piWithServers`) saw, in the order the bus delivered it. */
let events = (): BusEvent[] => [];
const only = (channel: string, serverId: string) =>
  events()
    .filter((e) => e.channel === channel && e.payload.serverId === serverId)
    .map((e) => e.payload);

/** pi with the bridge and, loaded after it, an extension recording the bridge's events; its session started. */
async function piWithServers(
  dirs: { project: string; agent: string },
  mcpServers: Record<string, unknown>,
): Promise<InProcessPi> {
  writeFileSync(path.join(dirs.agent, "mcp.json"), JSON.stringify({ mcpServers }));
  const recorder = busRecorder(dirs.project, [
    "mcp.connecting",
    "mcp.connected",
    "mcp.error",
    "mcp.disconnected",
    "mcp.local.spawned",
    "mcp.local.shutdown",
  ]);
  events = recorder.events;
  process.env.PI_CODING_AGENT_DIR = dirs.agent;
  process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
  process.chdir(dirs.project);
  const pi = await startInProcessPi({
    cwd: dirs.project,
    agentDir: dirs.agent,
    extensionPaths: [EXTENSION_DIR, recorder.path],
  });
  await pi.session.bindExtensions({});
  return pi;
}

describe("connection events on pi's bus", { timeout: 120_000 }, () => {
  const project = tempDir("mcp-bridge-events-project-");
  const agentDir = tempDir("mcp-bridge-events-agent-");
  const originalCwd = process.cwd();
  const late = new Map<string, RunningServer>();
  let unauthorized: RunningServer;
  let pi: InProcessPi | undefined;

  /** One server's events on the connection's channels, as `[channel, attempt]`. */
  const steps = (serverId: string) =>
    events()
      .filter(
        (e) => e.payload.serverId === serverId && /^mcp\.(connecting|connected|error|disconnected)$/.test(e.channel),
      )
      .map((e) => [e.channel, e.payload.attempt]);

  before(async () => {
    // Each late server cuts the first request it gets (the first connect's), whenever that comes, and serves the rest.
    for (const name of LATE) late.set(name, await startStreamableHttp({ cutFirst: 1 }));
    unauthorized = await startUnauthorized();
    const lateServers = Object.fromEntries(
      LATE.map((name) => [name, { url: late.get(name)!.url, reconnect: { initialDelay: RETRY_DELAY_MS } }]),
    );
    pi = await piWithServers(
      { project: project.dir, agent: agentDir.dir },
      { ...lateServers, missing: { command: "mcp-bridge-no-such-command" }, locked: { url: unauthorized.url } },
    );
  });

  after(async () => {
    await pi?.close();
    process.chdir(originalCwd);
    await Promise.all([...late.values()].map((server) => server.close()));
    await unauthorized?.close();
    project.cleanup();
    agentDir.cleanup();
  });

  test("a first connect that fails, then a retry that works: connecting 0, error 0, connecting 1, connected, for each server", async () => {
    await waitFor(
      () => LATE.every((name) => only("mcp.connected", name).length > 0),
      "every late server to connect on its retry",
      30_000,
    ).catch((error: Error) => assert.fail(`${error.message}; events: ${JSON.stringify(events()).slice(0, 3000)}`));
    for (const name of LATE) {
      assert.deepEqual(
        steps(name),
        [
          ["mcp.connecting", 0],
          ["mcp.error", 0],
          ["mcp.connecting", 1],
          ["mcp.connected", undefined],
        ],
        name,
      );
      assert.deepEqual(only("mcp.connecting", name)[0], { serverId: name, attempt: 0, maxAttempts: 10 });
      const [error] = only("mcp.error", name);
      assert.deepEqual(Object.keys(error!).sort(), ["attempt", "error", "retryIn", "serverId"]);
      assert.match(String(error!.error), /ECONNRESET|socket hang up|other side closed|fetch failed/);
      assert.equal(error!.retryIn, RETRY_DELAY_MS, "the first retry waits the initial delay");
      const [connected] = only("mcp.connected", name);
      assert.equal(typeof connected!.toolCount, "number");
      assert.ok((connected!.toolCount as number) > 0);
      assert.equal(typeof connected!.connectTime, "number");
    }
  });

  test("a command that does not exist: connecting, an error with no retry, then disconnected saying why", () => {
    assert.deepEqual(steps("missing"), [
      ["mcp.connecting", 0],
      ["mcp.error", 0],
      ["mcp.disconnected", undefined],
    ]);
    const [error] = only("mcp.error", "missing");
    assert.equal(error!.retryIn, null, "no attempt follows");
    assert.match(String(error!.error), /mcp-bridge-no-such-command' was not found/);
    const [gone] = only("mcp.disconnected", "missing");
    assert.equal(gone!.wasClean, false);
    assert.match(String(gone!.reason), /^not retried: .*was not found/);
  });

  test("a server that answers 401 with no OAuth configured: an error with no retry, then disconnected saying it needs credentials", () => {
    assert.deepEqual(steps("locked"), [
      ["mcp.connecting", 0],
      ["mcp.error", 0],
      ["mcp.disconnected", undefined],
    ]);
    const [error] = only("mcp.error", "locked");
    assert.equal(error!.retryIn, null);
    const [gone] = only("mcp.disconnected", "locked");
    assert.equal(gone!.wasClean, false);
    assert.match(
      String(gone!.reason),
      /^not retried: .*HTTP 401 \(unauthorized\): it sends no credentials; add an `Authorization`/,
    );
  });
});

describe("local servers at a session's end, on pi's bus", { timeout: 120_000 }, () => {
  const project = tempDir("mcp-bridge-shutdown-project-");
  const agentDir = tempDir("mcp-bridge-shutdown-agent-");
  const originalCwd = process.cwd();
  const log = path.join(project.dir, "fixture.jsonl");
  let pi: Awaited<ReturnType<typeof startPiRuntime>> | undefined;

  before(async () => {
    const mcpServers = {
      stubborn: { ...fixtureEntry("stubborn"), env: { FIXTURE_LOG: log } },
      polite: { ...fixtureEntry(), env: { FIXTURE_LOG: log } },
    };
    writeFileSync(path.join(agentDir.dir, "mcp.json"), JSON.stringify({ mcpServers }));
    const recorder = busRecorder(project.dir, ["mcp.local.spawned", "mcp.local.shutdown"]);
    events = recorder.events;
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    pi = await startPiRuntime({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [EXTENSION_DIR, recorder.path],
    });
    await pi.runtime.session.bindExtensions({});
  });

  after(async () => {
    await pi?.close();
    process.chdir(originalCwd);
    project.cleanup();
    agentDir.cleanup();
  });

  // `/new` ends the session and pi goes on, so it waits for each server to end (a quitting pi leaves a server that
  // outlives its input to its watchdog: test/orphans.test.ts).
  test("at /new each local server's end is told as it was: stdin for a polite one, SIGKILL for one that ignores it and SIGTERM", async () => {
    const pids = new Map(
      events()
        .filter((e) => e.channel === "mcp.local.spawned")
        .map((e) => [e.payload.serverId, e.payload.pid]),
    );
    assert.equal(typeof pids.get("stubborn"), "number");
    assert.equal(typeof pids.get("polite"), "number");
    await pi!.runtime.newSession();
    const stubborn = only("mcp.local.shutdown", "stubborn");
    const polite = only("mcp.local.shutdown", "polite");
    assert.equal(stubborn.length, 1, JSON.stringify(events().slice(-10)));
    assert.equal(polite.length, 1);
    assert.deepEqual(
      { ...stubborn[0], durationMs: 0 },
      {
        serverId: "stubborn",
        pid: pids.get("stubborn"),
        graceful: false,
        by: "SIGKILL",
        durationMs: 0,
      },
    );
    // A lower bound only: it had its 2 s after stdin closed and 2 s after SIGTERM (timers fire at most 1 ms early).
    assert.ok((stubborn[0]!.durationMs as number) >= 2 * 2000 - 2, String(stubborn[0]!.durationMs));
    assert.deepEqual(
      { ...polite[0], durationMs: 0 },
      {
        serverId: "polite",
        pid: pids.get("polite"),
        graceful: true,
        by: "stdin",
        durationMs: 0,
      },
    );
    assert.equal(isAlive(pids.get("stubborn") as number), false);
    assert.equal(isAlive(pids.get("polite") as number), false);
    // The fixture saw the SIGTERM and stayed: the SIGKILL was needed.
    const lines = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string; pid: number });
    assert.ok(lines.some((l) => l.event === "sigterm-ignored" && l.pid === pids.get("stubborn")));
  });
});
