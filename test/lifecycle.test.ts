/**
 * Connection lifecycle against real servers: a remote server that goes away and comes back on the same port, one that
 * stays down, local servers that crash, hang or go quiet, and the events, metrics and log lines all of that produces.
 */
import assert from "node:assert/strict";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { backoffSchedule } from "../src/connection/health.ts";
import { LogFile } from "../src/common/log-file.ts";
import type { EventSink } from "../src/common/events.ts";
import { BridgeError, ShutDownError } from "../src/common/errors.ts";
import { inSchedule } from "../src/connection/connection-state.ts";
import { stillReconnectingError, waitingNote } from "../src/connection/call-errors.ts";
import { startStreamableHttp } from "./fixtures/http-servers.ts";
import {
  connectionFor,
  fixtureEntry,
  isAlive,
  muteServer,
  readLog,
  REPO_ROOT,
  tempDir,
  TEST_SOURCE,
} from "./helpers.ts";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import { runTool, toolsOf } from "./pi-tools.ts";
import { waitFor } from "./helpers.ts";

/**
 * Node's timers count whole milliseconds, so a timer may fire up to 1 ms before its delay has passed as
 * `performance.now()` measures it. Waits are checked against this lower bound, never against an upper one.
 */
const TIMER_GRANULARITY_MS = 1;

/** Records events as the bridge publishes them on pi's bus, with when each came (`performance.now()`). */
function recorder() {
  const events: Array<{ channel: string; payload: Record<string, unknown>; at: number }> = [];
  const sink: EventSink = (channel, payload) => events.push({ channel, payload, at: performance.now() });
  return {
    events,
    sink,
    channels: () => events.map((e) => e.channel),
    of: (channel: string) => events.filter((e) => e.channel === channel).map((e) => e.payload),
  };
}

/** A free port that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = await startStreamableHttp();
  const port = server.port;
  await server.close();
  return port;
}

test("a call waiting for a reconnect is told where it stands, without an attempt before the first one", () => {
  const config = validateServerEntry("web", { url: "http://127.0.0.1:9/mcp" }, TEST_SOURCE).config!;
  const ctx = { config, redact: (text: string) => text, stderr: () => "", nonJsonLines: 0, oauth: false };
  const dropped = { kind: "retrying", attempt: 0, error: "connection closed", dropped: true, wasUp: true } as const;
  assert.equal(
    waitingNote(ctx, dropped, 10, "echo"),
    "MCP server 'web' is reconnecting (last error: connection closed); 'echo' runs once it is back, or fails after 60 s",
  );
  const again = { kind: "connecting", attempt: 0, id: Symbol(), wasUp: true } as const;
  assert.match(
    stillReconnectingError(ctx, again, 10, "echo").message,
    /still reconnecting after 60 s; 'echo' was not run$/,
  );
  const third = {
    ...dropped,
    attempt: 3,
    error: "MCP server 'web' at http://127.0.0.1:9/mcp failed to connect: fetch failed",
  };
  assert.match(
    waitingNote(ctx, third, 10, "echo")!,
    /^MCP server 'web' is reconnecting \(attempt 3\/10; last error: failed to connect: fetch failed\)/,
    "the server is named once",
  );
});

describe("remote server lifecycle", { timeout: 120_000 }, () => {
  test("stopped and restarted on the same port: it comes back by itself, a call made during the outage succeeds, events in order, one reconnection", async () => {
    let server = await startStreamableHttp();
    const port = server.port;
    const rec = recorder();
    const connection = connectionFor(
      "web",
      { url: server.url, reconnect: { initialDelay: 100, maxDelay: 400 } },
      { events: rec.sink },
    );
    try {
      await connection.connect();
      assert.equal((await runTool(toolsOf(connection).get("mcp_web_echo"), { text: "before" })).text, "before");
      await server.close();
      // Nobody calls: the broken stream alone shows the connection is gone.
      await waitFor(() => rec.of("mcp.disconnected").length > 0, "the drop to be noticed", 15_000);
      assert.equal(connection.status === "connected", false);
      const during = runTool(toolsOf(connection).get("mcp_web_echo"), { text: "during" });
      await waitFor(
        () => rec.of("mcp.error").length > 0,
        "a failed reconnect attempt while the server is down",
        15_000,
      );
      server = await startStreamableHttp({ port });
      const { text, updates } = await during;
      assert.equal(text, "during");
      assert.equal(updates.length, 1, "the wait is told once");
      assert.match(
        updates[0]!,
        /^MCP server 'web' is reconnecting \(attempt \d+\/10; last error: .+\); 'echo' runs once it is back, or fails after 60 s$/,
      );
      assert.equal(connection.status, "connected");

      const order = rec.channels().filter((c) => c !== "mcp.error" && c !== "mcp.connecting");
      assert.deepEqual(order, ["mcp.connected", "mcp.disconnected", "mcp.connected", "mcp.health.recovered"]);
      const connecting = rec.of("mcp.connecting");
      assert.deepEqual(connecting[0], { serverId: "web", attempt: 0, maxAttempts: 10 });
      assert.deepEqual(
        connecting.slice(1).map((e) => e.attempt),
        connecting.slice(1).map((_, i) => i + 1),
        "retries are numbered 1, 2, 3 …",
      );
      const dropped = rec.of("mcp.disconnected")[0]!;
      assert.equal(dropped.wasClean, false);
      assert.equal(typeof dropped.reason, "string");
      const error = rec.of("mcp.error")[0]!;
      assert.match(String(error.error), /ECONNREFUSED|connection refused|fetch failed/);
      assert.equal(error.attempt, 1);
      assert.equal(error.retryIn, 200, "the second attempt waits twice the first delay");
      const connected = rec.of("mcp.connected").at(-1)!;
      assert.equal(connected.toolCount, connection.tools.length);
      assert.equal(typeof connected.connectTime, "number");
      assert.equal(typeof rec.of("mcp.health.recovered")[0]!.downtime, "number");

      const metrics = connection.health.metrics(Date.now());
      assert.equal(metrics.reconnections, 1);
      assert.ok(metrics.downtimeMs > 0);
      assert.equal(metrics.toolCalls, 2);
      assert.equal(metrics.successRate, 1);
      assert.equal(connection.state.kind, "live", "a successful reconnect ends the schedule");
      assert.equal(connection.lastError, undefined);
    } finally {
      await connection.close();
      await server.close();
    }
  });

  /** A remote server connected, then gone (the drop noticed), whose first reconnect is due a minute after the drop. */
  async function droppedWithLongBackoff() {
    const first = await startStreamableHttp();
    let server = first;
    const rec = recorder();
    // Past the call's own 30 s: only a call that hurries the first attempt gets it.
    const reconnect = { initialDelay: 60_000, maxDelay: 60_000 };
    const connection = connectionFor(
      "web",
      { url: first.url, reconnect, requestTimeout: 30_000 },
      { events: rec.sink },
    );
    const close = async () => {
      await connection.close();
      await server.close();
    };
    try {
      await connection.connect();
      await server.close();
      await waitFor(() => rec.of("mcp.disconnected").length > 0, "the drop to be noticed", 15_000);
    } catch (error) {
      await close();
      throw error;
    }
    const restart = async () => void (server = await startStreamableHttp({ port: first.port }));
    return { connection, rec, restart, close };
  }

  test("restarted while pi was idle, with a long backoff before the next attempt: a call does not wait it out", async () => {
    const { connection, rec, restart, close } = await droppedWithLongBackoff();
    try {
      await restart();
      const { text } = await runTool(toolsOf(connection).get("mcp_web_echo"), { text: "after" });
      assert.equal(text, "after");
      assert.deepEqual(
        rec.of("mcp.connecting").map((e) => e.attempt),
        [0, 1],
        "the scheduled first attempt, made at once",
      );
    } finally {
      await close();
    }
  });

  test("a call waiting for a reconnect when /mcp reconnect starts afresh runs on the new session", async () => {
    const { connection, restart, close } = await droppedWithLongBackoff();
    try {
      // The call hurries attempt 1, which fails (the server is down), and waits through the next backoff.
      const call = runTool(toolsOf(connection).get("mcp_web_echo"), { text: "after" });
      await waitFor(() => connection.state.kind === "retrying" && connection.state.attempt === 2, "attempt 1 to fail");
      await restart();
      await connection.reconnect();
      assert.equal((await call).text, "after");
    } finally {
      await close();
    }
  });

  test("a server that stays down: attempts back off as specified and end after 10 with the spec's message", async () => {
    const server = await startStreamableHttp();
    const policy = { initialDelay: 5, maxDelay: 40 };
    const rec = recorder();
    const connection = connectionFor(
      "jira",
      // `resendAfterDrop`: the call may go out on a socket the closing server has just ended (it may have arrived).
      { url: server.url, reconnect: policy, requestTimeout: 30_000, resendAfterDrop: ["echo"] },
      { events: rec.sink },
    );
    let restarted: Awaited<ReturnType<typeof startStreamableHttp>> | undefined;
    try {
      await connection.connect();
      await server.close();
      // A call during the outage waits for the whole schedule, then fails with the reason.
      await assert.rejects(runTool(toolsOf(connection).get("mcp_jira_echo"), { text: "x" }), (error: unknown) => {
        assert.ok(error instanceof BridgeError);
        assert.match(
          error.message,
          /MCP server 'jira' is disconnected after 10 retry attempts\. Last error: .*(ECONNREFUSED|connection refused)/,
        );
        return true;
      });
      const errors = rec.of("mcp.error");
      assert.equal(errors.length, 10);
      assert.deepEqual(
        errors.map((e) => e.attempt),
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      );
      const schedule = backoffSchedule({
        maxAttempts: 10,
        initialDelayMs: policy.initialDelay,
        maxDelayMs: policy.maxDelay,
      });
      assert.deepEqual(schedule, [5, 10, 20, 40, 40, 40, 40, 40, 40, 40]);
      assert.deepEqual(
        errors.map((e) => e.retryIn),
        [...schedule.slice(1), null],
        "each failure announces the next delay; the last announces none",
      );
      // … and waits it: attempt n starts no earlier than its delay after the failure before it (attempt 1: after the
      // drop was noticed); but for the one wait the call cut short when it came, as a call wants the server now.
      const at = (channel: string, attempt: number) =>
        rec.events.find((e) => e.channel === channel && e.payload.attempt === attempt)!.at;
      const dropNoticed = rec.events.find((e) => e.channel === "mcp.disconnected")!.at;
      const early = schedule.flatMap((delay, i) => {
        const attempt = i + 1;
        const waited = at("mcp.connecting", attempt) - (attempt === 1 ? dropNoticed : at("mcp.error", attempt - 1));
        return waited >= delay - TIMER_GRANULARITY_MS
          ? []
          : [`attempt ${attempt}: ${waited.toFixed(1)} ms, not ${delay}`];
      });
      assert.ok(early.length <= 1, `waits cut short: ${early.join("; ")}`);
      assert.equal(connection.status, "disconnected");
      assert.deepEqual(connection.state.kind === "gaveUp" && [connection.state.attempts, connection.state.exhausted], [
        10,
        true,
      ]);
      const last = rec.events.at(-1)!;
      assert.equal(last.channel, "mcp.disconnected");
      assert.match(String(last.payload.reason), /gave up after 10 attempts/);
      // A later call tries one connect (the server may be back by now), not another round of attempts.
      const before = rec.events.length;
      const waits: string[] = [];
      await assert.rejects(
        toolsOf(connection)
          .get("mcp_jira_echo")!
          .execute(
            "call-id",
            { text: "x" } as never,
            undefined,
            (u) => waits.push((u.content[0] as { text: string }).text),
            undefined as never,
          ),
        /is disconnected after 10 retry attempts\. Last error: .*(ECONNREFUSED|connection refused)/,
      );
      assert.deepEqual(waits, ["MCP server 'jira' is disconnected; connecting once more for 'echo'"]);
      assert.equal(rec.events.slice(before).filter((e) => e.channel === "mcp.connecting").length, 1);
      assert.equal(connection.state.kind, "gaveUp");
      assert.equal(rec.of("mcp.error").length, 11, "one more failure, and no schedule after it");
      // Once it is back, the next call connects and runs: no `/mcp reconnect` needed.
      restarted = await startStreamableHttp({ port: server.port });
      assert.equal((await runTool(toolsOf(connection).get("mcp_jira_echo"), { text: "back" })).text, "back");
      assert.equal(connection.state.kind, "live");
    } finally {
      await connection.close();
      await restarted?.close();
    }
  });

  test("a server down at startup keeps being retried in the background and its tools arrive when it is up", async () => {
    const port = await closedPort();
    const rec = recorder();
    let toolsSeen = 0;
    const connection = connectionFor(
      "late",
      { url: `http://127.0.0.1:${port}/mcp`, reconnect: { initialDelay: 50, maxDelay: 100 } },
      { events: rec.sink, onTools: (_c, tools) => (toolsSeen = tools.length) },
    );
    const server = { current: undefined as Awaited<ReturnType<typeof startStreamableHttp>> | undefined };
    try {
      await assert.rejects(connection.connect(), /ECONNREFUSED|connection refused/);
      await waitFor(() => rec.of("mcp.error").length > 0, "a retry");
      server.current = await startStreamableHttp({ port });
      await waitFor(() => connection.status === "connected", "the late server to connect", 15_000);
      assert.ok(toolsSeen > 0);
      assert.equal(rec.of("mcp.health.recovered").length, 0, "never up before, so nothing recovered");
    } finally {
      await connection.close();
      await server.current?.close();
    }
  });

  test("with reconnect: false a drop is final and says so", async () => {
    const server = await startStreamableHttp();
    const connection = connectionFor("once", { url: server.url, reconnect: false });
    try {
      await connection.connect();
      await server.close();
      await assert.rejects(runTool(toolsOf(connection).get("mcp_once_echo"), { text: "x" }), /MCP server 'once'/);
      assert.equal(connection.status, "disconnected");
    } finally {
      await connection.close();
    }
  });
});

describe("local server lifecycle", { timeout: 120_000 }, () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  test("a server that crashes on its third call is restarted and the next call works", async () => {
    const log = path.join(tmp.dir, "third.jsonl");
    const rec = recorder();
    const connection = connectionFor(
      "db",
      { ...fixtureEntry(), env: { FIXTURE_LOG: log, FIXTURE_CRASH_ON_CALL: "3" }, resendAfterDrop: ["echo"] },
      { events: rec.sink },
    );
    try {
      await connection.connect();
      const echo = toolsOf(connection).get("mcp_db_echo");
      assert.equal((await runTool(echo, { text: "1" })).text, "1");
      assert.equal((await runTool(echo, { text: "2" })).text, "2");
      // The third call kills the process; the bridge restarts it and runs the call once more (`resendAfterDrop`).
      assert.equal((await runTool(echo, { text: "3" })).text, "3");
      assert.equal((await runTool(echo, { text: "4" })).text, "4");
      const starts = readLog(log).filter((e) => e.event === "start");
      assert.equal(starts.length, 2, "one restart");
      assert.equal(isAlive(starts[0]!.pid), false);
      const spawned = rec.of("mcp.local.spawned");
      assert.deepEqual(
        spawned.map((e) => e.pid),
        starts.map((s) => s.pid),
      );
      const crashed = rec.of("mcp.local.crashed");
      assert.equal(crashed.length, 1);
      assert.equal(crashed[0]!.pid, starts[0]!.pid);
      assert.match(String(crashed[0]!.reason), /exited with code 1/);
      assert.equal(connection.health.metrics(Date.now()).reconnections, 1);
    } finally {
      await connection.close();
    }
    const shutdown = rec.of("mcp.local.shutdown");
    assert.equal(shutdown.length, 1, "a clean shutdown is published");
  });

  test("a server that crashes every time stops after maxRestarts, with its last stderr lines in the error", async () => {
    const log = path.join(tmp.dir, "always.jsonl");
    const rec = recorder();
    const connection = connectionFor(
      "doomed",
      {
        ...fixtureEntry("crash-on-start"),
        // A different complaint each time: a server failing the same way twice is not restarted a third time.
        env: { FIXTURE_LOG: log, FIXTURE_CRASH_WORDS: "vary" },
        maxRestarts: 3,
        reconnect: { initialDelay: 10, maxDelay: 40 },
      },
      { events: rec.sink },
    );
    try {
      await assert.rejects(connection.connect(), /exited with code 3/);
      await waitFor(() => connection.state.kind === "gaveUp", "the restarts to run out", 15_000);
      // A server that dies before it answers the revision probe may be one that exits on a method it does not know:
      // its first start is tried once more at once with `initialize` alone. Then the 3 restarts.
      assert.equal(
        readLog(log).filter((e) => e.event === "start").length,
        5,
        "the first start, its retry with initialize alone, 3 restarts",
      );
      // Every failed attempt is published, the first start's too, each with the wait before the next (none after the last).
      assert.deepEqual(
        rec.of("mcp.error").map((e) => [e.attempt, e.retryIn]),
        [
          [0, 10],
          [1, 20],
          [2, 40],
          [3, null],
        ],
      );
      await assert.rejects(
        runTool(toolsOf(connection).get("mcp_doomed_echo") ?? fakeTool(connection), { text: "x" }),
        (error: unknown) => {
          assert.ok(error instanceof Error);
          assert.match(error.message, /MCP server 'doomed' was not restarted again after 3 restart attempts/);
          assert.match(error.message, /exited with code 3/);
          assert.match(error.message, /fatal: the fixture was told to \w+ on start/, "its stderr is in the error");
          return true;
        },
      );
      for (const start of readLog(log)) assert.equal(isAlive(start.pid), false);
    } finally {
      await connection.close();
    }
  });

  test("restartOnCrash: false leaves a crashed server down", async () => {
    const log = path.join(tmp.dir, "norestart.jsonl");
    const connection = connectionFor("once", {
      ...fixtureEntry(),
      env: { FIXTURE_LOG: log, FIXTURE_CRASH_ON_CALL: "1" },
      restartOnCrash: false,
    });
    try {
      await connection.connect();
      await assert.rejects(runTool(toolsOf(connection).get("mcp_once_echo"), { text: "x" }), /exited with code 1/);
      assert.equal(readLog(log).filter((e) => e.event === "start").length, 1);
      assert.equal(connection.status, "disconnected");
    } finally {
      await connection.close();
    }
  });

  test("a server that never answers initialize is killed after initTimeout, and restarted by the schedule", async () => {
    const log = path.join(tmp.dir, "mute.jsonl");
    // A shell, not node: on a busy machine node may not have run a line within the short initTimeout.
    const connection = connectionFor("mute", {
      ...muteServer(log),
      initTimeout: 1000,
      maxRestarts: 1,
    });
    try {
      await assert.rejects(connection.connect(), (error: unknown) => {
        assert.ok(error instanceof BridgeError && error.kind === "timeout");
        assert.match(
          error.message,
          /no answer to the MCP handshake after [\d.]+ s, when its `initTimeout` of 1 s ran out; its process was running but had written nothing to stdout, so it was stopped/,
        );
        assert.match(error.message, /Raise `initTimeout` for 'mute'/);
        return true;
      });
      // A slow start is often faster the second time (an npx download is cached): the schedule tries again.
      await waitFor(() => connection.state.kind === "gaveUp", "the restart schedule to end", 20_000);
      const starts = readLog(log);
      assert.equal(starts.length, 2, "started, then restarted once (maxRestarts: 1)");
      assert.ok(
        starts.every((s) => !isAlive(s.pid)),
        "each start was stopped at its timeout",
      );
      assert.equal(connection.status, "disconnected");
    } finally {
      await connection.close();
    }
  });

  test("a server that stops answering is found stale, pinged, and restarted", async () => {
    const log = path.join(tmp.dir, "stale.jsonl");
    const rec = recorder();
    const connection = connectionFor(
      "frozen",
      { ...fixtureEntry(), env: { FIXTURE_LOG: log }, healthCheckInterval: 150, pingTimeout: 300 },
      { events: rec.sink },
    );
    let frozenPid: number | undefined;
    try {
      await connection.connect();
      frozenPid = connection.pid!;
      // A stopped process is alive but answers nothing: only a ping can tell.
      process.kill(frozenPid, "SIGSTOP");
      await waitFor(
        () => rec.of("mcp.health.recovered").length > 0,
        "a stale check, a failed ping and a restart",
        20_000,
      );
      const stale = rec.of("mcp.health.stale")[0]!;
      assert.equal(typeof stale.lastCommunication, "string");
      assert.match(String(rec.of("mcp.disconnected")[0]!.reason), /no answer to a ping within 0\.3 s/);
      assert.notEqual(connection.pid, frozenPid);
      assert.equal((await runTool(toolsOf(connection).get("mcp_frozen_echo"), { text: "awake" })).text, "awake");
      await waitFor(() => !isAlive(frozenPid!), "the frozen process to be killed");
    } finally {
      if (frozenPid && isAlive(frozenPid)) process.kill(frozenPid, "SIGKILL");
      await connection.close();
    }
  });

  test("a server busy with a long call, answering nothing else meanwhile, is not taken for stale: the call ends with its result", async () => {
    // One message at a time, as a server whose tools block its loop: a call takes 2 s, silent, far past the checks' times.
    const script = `const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n");
    require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
      const { id, method } = JSON.parse(line);
      if (id === undefined) return;
      if (method === "initialize")
        return send({ id, result: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "s", version: "1" } } });
      if (method === "tools/list") return send({ id, result: { tools: [{ name: "build", inputSchema: { type: "object" } }] } });
      if (method === "tools/call") Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2000);
      send({ id, result: method === "tools/call" ? { content: [{ type: "text", text: "built" }] } : {} });
    });`;
    const connection = connectionFor("busy", {
      command: process.execPath,
      args: ["-e", script],
      protocolVersion: "2025-06-18",
      healthCheckInterval: 150,
      pingTimeout: 300,
      requestTimeout: 20_000,
    });
    try {
      await connection.connect();
      assert.equal((await runTool(toolsOf(connection).get("mcp_busy_build"))).text, "built");
    } finally {
      await connection.close();
    }
  });

  test("the log file: lifecycle, request summaries without argument values, stderr and server log messages; no secrets", async () => {
    const file = path.join(tmp.dir, "logs", "mcp.log");
    const logger = new LogFile(file);
    const secret = "sk-live-supersecret-123";
    const connection = connectionFor(
      "logged",
      { ...fixtureEntry("leak-and-crash"), env: { FIXTURE_TOKEN: "${LOG_TEST_TOKEN}" }, maxRestarts: 0 },
      { logger, env: { ...process.env, LOG_TEST_TOKEN: secret } },
    );
    const working = connectionFor("working", fixtureEntry(), { logger });
    try {
      await assert.rejects(connection.connect());
      await working.connect();
      await runTool(toolsOf(working).get("mcp_working_echo"), { text: "private argument value" });
      await runTool(toolsOf(working).get("mcp_working_log_message"), { text: "a warning from the server" });
      await assert.rejects(runTool(toolsOf(working).get("mcp_working_fail"), {}));
      await waitFor(() => {
        logger.flush();
        return readFileSync(file, "utf8").includes("a warning from the server");
      }, "the server's log message to reach the file");
    } finally {
      await connection.close();
      await working.close();
      await logger.close();
    }
    const text = readFileSync(file, "utf8");
    const lines = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const events = lines.map((l) => `${l.server}:${l.event}`);
    for (const expected of [
      "logged:connecting",
      "logged:connect.failed",
      "logged:stderr",
      "working:connecting",
      "working:spawned",
      "working:connected",
      "working:request",
      "working:server.log",
      "working:closed",
    ]) {
      assert.ok(events.includes(expected), `${expected} in the log`);
    }
    const call = lines.find((l) => l.event === "request" && l.tool === "echo")!;
    assert.equal(call.method, "tools/call");
    assert.equal(call.ok, true);
    assert.equal(typeof call.durationMs, "number");
    const failed = lines.find((l) => l.event === "request" && l.tool === "fail")!;
    assert.equal(failed.ok, true, "the server answered; its result says isError");
    assert.equal(failed.isError, true);
    const serverLog = lines.find((l) => l.event === "server.log")!;
    assert.equal(serverLog.level, "warn");
    assert.equal(serverLog.logger, "fixture");
    assert.doesNotMatch(text, /private argument value/, "argument values are not logged");
    assert.doesNotMatch(text, /sk-live-supersecret/, "secrets are not logged");
    assert.match(text, /token=\*\*\*/, "the leaked line is there, redacted");
  });

  test("request headers a server dumps (an HTTP client's error, JSON or as Node prints objects) keep their credentials out of the log file", async () => {
    const file = path.join(tmp.dir, "header-logs", "mcp.log");
    const logger = new LogFile(file);
    const secrets = ["ghp_9f8e7d6c5b4a39281706", "sk-ant-api03-a1b2c3d4e5", "sid=4f3e2d1c0b9a"];
    const dumps = [
      `headers: { Accept: 'application/json', Authorization: 'token ${secrets[0]}', 'X-API-Key': '${secrets[1]}' }`,
      `{"accept":"application/json","cookie":"${secrets[2]}","authorization":"token ${secrets[0]}"}`,
    ];
    const connection = connectionFor("dumps", fixtureEntry(), { logger });
    try {
      await connection.connect();
      const log = toolsOf(connection).get("mcp_dumps_log_message");
      for (const dump of dumps) await runTool(log, { text: `request failed; ${dump}` });
      await waitFor(() => {
        logger.flush();
        return readFileSync(file, "utf8").split("request failed").length > dumps.length;
      }, "the server's log messages to reach the file");
    } finally {
      await connection.close();
      await logger.close();
    }
    const text = readFileSync(file, "utf8");
    for (const secret of secrets) assert.ok(!text.includes(secret), `${secret} is not logged`);
    assert.match(text, /Accept: 'application\/json'/, "the rest of the line is there");
  });

  test("a server's log message that is an object keeps a secret with a quote or backslash in it out of the log file", async () => {
    const file = path.join(tmp.dir, "object-logs", "mcp.log");
    const logger = new LogFile(file);
    const password = 'pa"ss\\w0rd-7f3a';
    const connection = connectionFor("objects", { ...fixtureEntry(), env: { DB_PASSWORD: password } }, { logger });
    try {
      await connection.connect();
      const log = toolsOf(connection).get("mcp_objects_log_message");
      await runTool(log, { text: `connecting with ${password}`, object: true });
      await waitFor(() => {
        logger.flush();
        return readFileSync(file, "utf8").includes("connecting with");
      }, "the server's log message to reach the file");
    } finally {
      await connection.close();
      await logger.close();
    }
    const text = readFileSync(file, "utf8");
    assert.doesNotMatch(text, /w0rd-7f3a/, "the password is not logged");
    assert.match(text, /connecting with \*\*\*/);
  });

  test("a connection string a server logs keeps its whole password out of the log file, an '@' in it too", async () => {
    const file = path.join(tmp.dir, "dsn-logs", "mcp.log");
    const logger = new LogFile(file);
    const connection = connectionFor("dsn", fixtureEntry(), { logger });
    try {
      await connection.connect();
      const text = "cannot reach postgres://app:p@ss-9e1d@db.internal:5432/orders";
      await runTool(toolsOf(connection).get("mcp_dsn_log_message"), { text });
      await waitFor(() => {
        logger.flush();
        return readFileSync(file, "utf8").includes("cannot reach");
      }, "the server's log message to reach the file");
    } finally {
      await connection.close();
      await logger.close();
    }
    const text = readFileSync(file, "utf8");
    assert.doesNotMatch(text, /ss-9e1d/, "no part of the password is logged");
    assert.match(text, /cannot reach postgres:\/\/\*\*\*@db\.internal:5432\/orders/);
  });

  test('a key a server logs in quotes (OPENAI_API_KEY="sk-…", as a .env file has it) is hidden in the log file', async () => {
    const file = path.join(tmp.dir, "dotenv-logs", "mcp.log");
    const logger = new LogFile(file);
    const connection = connectionFor("dotenv", fixtureEntry(), { logger });
    try {
      await connection.connect();
      const log = toolsOf(connection).get("mcp_dotenv_log_message");
      await runTool(log, { text: `loaded .env: OPENAI_API_KEY="sk-proj-4f1e9c" DB_PASSWORD='hunter-77a2'` });
      await waitFor(() => {
        logger.flush();
        return readFileSync(file, "utf8").includes("loaded .env");
      }, "the server's log message to reach the file");
    } finally {
      await connection.close();
      await logger.close();
    }
    const text = readFileSync(file, "utf8");
    assert.doesNotMatch(text, /4f1e9c|hunter-77a2/, "the values are not logged");
    assert.match(text, /OPENAI_API_KEY=\\"\*\*\*\\" DB_PASSWORD='\*\*\*'/);
  });

  test("a request a server traces (curl -v) keeps a token sent as `token …` (GitHub's) or `DPoP …` out of the log file", async () => {
    const file = path.join(tmp.dir, "trace-logs", "mcp.log");
    const logger = new LogFile(file);
    const tokens = ["ghp_16C7e42F292c6912E7710c838347Ae178B4a", "eyJhbGciOiJFUzI1NiJ9.e30.c2lnbmF0dXJl"];
    const connection = connectionFor("traced", fixtureEntry(), { logger });
    try {
      await connection.connect();
      const log = toolsOf(connection).get("mcp_traced_log_message");
      await runTool(log, { text: `> Authorization: token ${tokens[0]}` });
      await runTool(log, { text: `> Authorization: DPoP ${tokens[1]}` });
      await waitFor(() => {
        logger.flush();
        return readFileSync(file, "utf8").split("> Authorization").length > 2;
      }, "the server's log messages to reach the file");
    } finally {
      await connection.close();
      await logger.close();
    }
    const text = readFileSync(file, "utf8");
    for (const token of tokens) assert.ok(!text.includes(token), `${token} is not logged`);
    assert.match(text, /Authorization: token \*\*\*"/);
  });

  test("an AWS secret access key or a service account's private key a server logs is hidden in the log file", async () => {
    const file = path.join(tmp.dir, "cloud-logs", "mcp.log");
    const logger = new LogFile(file);
    const connection = connectionFor("cloud", fixtureEntry(), { logger });
    try {
      await connection.connect();
      const log = toolsOf(connection).get("mcp_cloud_log_message");
      await runTool(log, { text: "env: AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY" });
      await runTool(log, {
        text: 'bad credentials file: {"type":"service_account","private_key":"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADAN"}',
      });
      await waitFor(() => {
        logger.flush();
        const text = readFileSync(file, "utf8");
        return text.includes("env: AWS") && text.includes("bad credentials file");
      }, "the server's log messages to reach the file");
    } finally {
      await connection.close();
      await logger.close();
    }
    const text = readFileSync(file, "utf8");
    assert.doesNotMatch(text, /wJalrXUtnFEMI|MIIEvQIBADAN/, "neither key is logged");
  });

  test("a signed URL a server logs keeps its signature out of the log file", async () => {
    const file = path.join(tmp.dir, "signed-logs", "mcp.log");
    const logger = new LogFile(file);
    const signature = "9e1d6c0f4b2a7d8e3f5a1b6c2d7e8f90a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6";
    const url = `https://bucket.s3.amazonaws.com/report.csv?X-Amz-Expires=3600&X-Amz-Signature=${signature}`;
    const connection = connectionFor("signed", fixtureEntry(), { logger });
    try {
      await connection.connect();
      await runTool(toolsOf(connection).get("mcp_signed_log_message"), { text: `upload failed: ${url}` });
      await waitFor(() => {
        logger.flush();
        return readFileSync(file, "utf8").includes("upload failed");
      }, "the server's log message to reach the file");
    } finally {
      await connection.close();
      await logger.close();
    }
    const text = readFileSync(file, "utf8");
    assert.doesNotMatch(text, new RegExp(signature), "the signature is not logged");
    assert.match(text, /X-Amz-Expires=3600&X-Amz-Signature=\*\*\*/, "the rest of the URL is");
  });
});

/** A tool definition for a server whose tools were never listed (it never started). */
function fakeTool(connection: { callTool: (name: string, args: Record<string, unknown>) => Promise<unknown> }) {
  return {
    name: "x",
    execute: async () => {
      await connection.callTool("echo", { text: "x" });
      return { content: [], details: {} };
    },
  } as never;
}

describe("one attempt at a time, and what ends it", { timeout: 120_000 }, () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());
  const SLOW_START = path.join(REPO_ROOT, "test", "fixtures", "slow-start.mjs");
  /** A local server that reads nothing until `gate` exists: a test holds a connect attempt open as long as it likes. */
  const held = (gate: string, log: string) => ({
    command: process.execPath,
    args: [SLOW_START, "--until", gate],
    env: { FIXTURE_LOG: log },
  });
  const starts = (log: string) => readLog(log).filter((e) => e.event === "start");

  test("/mcp disable during a restart: disabled at once, the attempt under way keeps nothing, no retry", async () => {
    const gate = path.join(tmp.dir, "restart.gate");
    const log = path.join(tmp.dir, "restart.jsonl");
    writeFileSync(gate, "");
    const connection = connectionFor("held", held(gate, log));
    try {
      await connection.connect();
      // The restart's process stays deaf: the attempt is under way when the server is disabled.
      rmSync(gate);
      process.kill(connection.pid!, "SIGKILL");
      await waitFor(() => starts(log).length === 2, "the restart's process to start");
      assert.deepEqual([connection.state.kind, inSchedule(connection.state)], ["connecting", true]);
      const disabling = connection.disable();
      assert.equal(connection.status, "disabled", "shown as disabled from the moment it is disabled, not as down");
      await disabling;
      assert.equal(connection.status, "disabled");
      const restart = starts(log)[1]!.pid;
      await waitFor(() => !isAlive(restart), "the abandoned attempt's process to end");
      // The server would answer now, to an attempt the schedule made.
      writeFileSync(gate, "");
      // Nothing to await when nothing may happen: a wait well past the schedule's next delays (20 ms, then 40 ms).
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(starts(log).length, 2, "no retry after the disable");
      assert.deepEqual([connection.status, connection.pid, connection.state.kind], ["disabled", undefined, "closed"]);
    } finally {
      await connection.close();
    }
  });

  test("a call made while /mcp reconnect ends the old session waits for the new one, not failing with 'reconnect requested'", async () => {
    const connection = connectionFor("again", fixtureEntry());
    try {
      await connection.connect();
      const before = connection.pid;
      const reconnecting = connection.reconnect();
      const call = runTool(toolsOf(connection).get("mcp_again_echo"), { text: "after" });
      assert.equal((await call).text, "after");
      await reconnecting;
      assert.notEqual(connection.pid, before);
      // A call waiting for a connect that /mcp reconnect then ends waits for the reconnect's connect.
      await connection.close();
      const fresh = connectionFor("again", fixtureEntry());
      const first = fresh.connect().catch(() => undefined);
      const waiting = fresh.callTool("echo", { text: "later" });
      try {
        await fresh.reconnect();
        assert.deepEqual((await waiting).content, [{ type: "text", text: "later" }]);
        await first;
      } finally {
        await fresh.close();
      }
    } finally {
      await connection.close();
    }
  });

  test("/mcp reconnect asked twice at once: both succeed, and one server process runs after", async () => {
    const gate = path.join(tmp.dir, "twice-at-once.gate");
    const log = path.join(tmp.dir, "twice-at-once.jsonl");
    writeFileSync(gate, "");
    const connection = connectionFor("twice", held(gate, log));
    try {
      await connection.connect();
      const outcomes = await Promise.allSettled([connection.reconnect(), connection.reconnect()]);
      assert.deepEqual(
        outcomes.map((o) => (o.status === "rejected" ? (o.reason as Error).message : o.status)),
        ["fulfilled", "fulfilled"],
      );
      const alive = starts(log).filter((s) => isAlive(s.pid!));
      assert.deepEqual([connection.state.kind, alive.map((s) => s.pid)], ["live", [connection.pid]]);
    } finally {
      await connection.close();
    }
  });

  test("/mcp reconnect asked again while the first one connects: the first is not reported as failed, both end connected", async () => {
    const gate = path.join(tmp.dir, "again.gate");
    const log = path.join(tmp.dir, "again.jsonl");
    writeFileSync(gate, "");
    const connection = connectionFor("again", held(gate, log));
    try {
      await connection.connect();
      rmSync(gate);
      const first = connection.reconnect().then(
        () => "connected",
        (error: Error) => error.message,
      );
      await waitFor(() => starts(log).length === 2, "the first reconnect's process to start");
      const second = connection.reconnect();
      await waitFor(() => starts(log).length === 3, "the second reconnect's process to start");
      writeFileSync(gate, "");
      await second;
      assert.equal(await first, "connected");
      assert.deepEqual([connection.state.kind, connection.pid], ["live", starts(log)[2]!.pid]);
    } finally {
      await connection.close();
    }
  });

  test("/mcp reconnect in the first connect ends that attempt first: one process at once, one session", async () => {
    const gate = path.join(tmp.dir, "first.gate");
    const log = path.join(tmp.dir, "first.jsonl");
    const connection = connectionFor("twice", held(gate, log));
    try {
      const first = connection.connect().then(
        () => undefined,
        (error: unknown) => error,
      );
      await waitFor(() => starts(log).length === 1, "the first connect's process to start");
      const reconnecting = connection.reconnect();
      await waitFor(() => starts(log).length === 2, "the reconnect's process to start");
      const [a, b] = starts(log).map((s) => s.pid);
      assert.equal(isAlive(a!), false, "the first attempt's process ended before the reconnect started another");
      writeFileSync(gate, "");
      await reconnecting;
      assert.ok((await first) instanceof ShutDownError, "the superseded connect reports nobody's failure");
      assert.deepEqual([connection.state.kind, connection.pid, starts(log).length], ["live", b, 2]);
      assert.equal(isAlive(b!), true);
    } finally {
      await connection.close();
    }
    const last = starts(log).at(-1)!.pid;
    await waitFor(() => !isAlive(last), "no process left behind");
  });
});
