/**
 * One live session on its own, with nothing supervising it: real fixture servers over stdio and over HTTP on
 * 127.0.0.1. It opens, answers, reports what happens to it, and lets go of everything it held — also when opening
 * fails or is cut short — so no process and no socket outlive it.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { ConnectTimeout } from "../src/common/errors.ts";
import { probeInconclusive } from "../src/common/error-kinds.ts";
import type { ResolvedRemote, ResolvedStdio } from "../src/config/substitute.ts";
import { LiveSession, type RequestOptions, type SessionEvents } from "../src/connection/live-session.ts";
import type { ClientFeatures } from "../src/connection/mcp-client.ts";
import { toolCallRun } from "../src/connection/tool-call.ts";
import { startHanging, startSse, startStreamableHttp, type RunningServer } from "./fixtures/http-servers.ts";
import { fixtureEntry, type FixtureMode, isAlive, readLog, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";

const CLIENT_INFO = { name: "live-session-test", version: "0.0.0" };

/** Everything a session reported, in order. */
function recorder() {
  const seen: Array<{ event: keyof SessionEvents; detail?: unknown }> = [];
  const events: SessionEvents = {
    dropped: (_session, reason) => seen.push({ event: "dropped", detail: reason }),
    streamError: (_session, error) => seen.push({ event: "streamError", detail: error.message }),
    listChanged: (_session, list) => seen.push({ event: "listChanged", detail: list }),
    resourceUpdated: (_session, uri) => seen.push({ event: "resourceUpdated", detail: uri }),
    heard: () => seen.push({ event: "heard" }),
    stderrLine: (line) => seen.push({ event: "stderrLine", detail: line }),
    logMessage: (params) => seen.push({ event: "logMessage", detail: params }),
    notificationDropped: (kind) => seen.push({ event: "notificationDropped", detail: kind }),
  };
  return { seen, events, of: (event: keyof SessionEvents) => seen.filter((s) => s.event === event) };
}

const temp = tempDir("mcp-bridge-live-session-");
after(() => temp.cleanup());
let logCount = 0;

/** A stdio endpoint for the fixture in `mode`, and the log file in which the fixture records its pid. */
function stdioEndpoint(mode: FixtureMode, env: Record<string, string> = {}): { endpoint: ResolvedStdio; log: string } {
  const log = path.join(temp.dir, `fixture-${++logCount}.log`);
  const { command, args } = fixtureEntry(mode);
  return { endpoint: { kind: "stdio", command, args, env: { FIXTURE_LOG: log, ...env }, cwd: REPO_ROOT }, log };
}

function remote(url: string, kind: ResolvedRemote["kind"] = "http"): ResolvedRemote {
  return { kind, url, headers: {} };
}

function session(
  endpoint: ResolvedStdio | ResolvedRemote,
  events: SessionEvents,
  features: ClientFeatures = {},
): LiveSession {
  return new LiveSession({ endpoint, clientInfo: CLIENT_INFO, features, events });
}

/** A tool call as the connection sends one: its request, on the session. */
function callTool(s: LiveSession, name: string, args: Record<string, unknown>, options: RequestOptions) {
  return s.request(toolCallRun(name, args, undefined, {}).run, options);
}

/** The pids the stdio fixture logged at its start (one per process it ran as). */
function startedPids(log: string): number[] {
  return readLog(log)
    .filter((e) => e.event === "start")
    .map((e) => e.pid);
}

describe("a live session on its own", { timeout: 120_000 }, () => {
  const servers: RunningServer[] = [];
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  test("stdio: opens, lists tools, calls and pings, then close ends its process and the process it started", async () => {
    const { endpoint, log } = stdioEndpoint("grandchild");
    const rec = recorder();
    const s = session(endpoint, rec.events);
    await s.open(Date.now() + 30_000);
    assert.equal(s.isOpen, true);
    assert.equal(s.kind, "stdio");
    assert.ok(s.tools.some((t) => t.name === "echo"));
    const result = await callTool(s, "echo", { text: "hello" }, { timeout: 10_000 });
    assert.deepEqual(result.content, [{ type: "text", text: "hello" }]);
    await s.ping(10_000);
    assert.ok(rec.of("heard").length >= 3, "the list, the call and the ping were heard");
    assert.ok(rec.of("stderrLine").some((e) => String(e.detail).includes("fixture server starting")));
    const pid = s.pid!;
    const grandchild = readLog(log).find((e) => e.event === "grandchild")!.childPid as number;
    assert.ok(isAlive(pid) && isAlive(grandchild));
    await s.close({ graceful: true });
    assert.equal(s.isOpen, false);
    assert.equal(isAlive(pid), false, "the server process is gone");
    await waitFor(() => !isAlive(grandchild), "the process the server started to end");
    assert.equal(rec.of("dropped").length, 0, "a close asked for is not a drop");
    await assert.rejects(callTool(s, "echo", { text: "x" }, { timeout: 1000 }), /Not connected/);
  });

  test("stdio: a handshake that never completes fails at the deadline and leaves no process", async () => {
    const { endpoint } = stdioEndpoint("never-init");
    const s = session(endpoint, recorder().events);
    await assert.rejects(s.open(Date.now() + 1500), (error) => error instanceof ConnectTimeout);
    // The process the session started, whether or not it got as far as logging its start (on a busy machine the
    // fixture may not have run a line in the 1.5 s).
    const pid = s.pid;
    assert.ok(pid, "the server's process was started");
    assert.equal(isAlive(pid), false, "and is gone once open() has failed");
    assert.equal(s.isOpen, false);
  });

  test("stdio: npx still installing at the deadline holds the open; its program then gets the whole time", async () => {
    const ready = path.join(temp.dir, "npx-installed");
    const npx = path.join(REPO_ROOT, "test", "fixtures", "fake-npx.sh");
    const server = path.join(REPO_ROOT, "test", "fixtures", "slow-start.mjs");
    const s = session(
      { kind: "stdio", command: npx, args: [ready, process.execPath, server], env: {}, cwd: REPO_ROOT },
      recorder().events,
    );
    const opening = s.open(Date.now() + 5000);
    opening.catch(() => undefined);
    // Only a deadline that found npm still installing says so; without the hold the open had failed there.
    await waitFor(() => s.stage === "installing", "the deadline to find npx installing", 30_000);
    writeFileSync(ready, "");
    try {
      await opening;
      assert.deepEqual(
        s.tools.map((t) => t.name),
        ["hello"],
      );
      assert.equal(s.stage, "open");
    } finally {
      await s.close({ graceful: false });
    }
  });

  test("stdio: after an install the program gets the span asked for, not what was left of the deadline", async () => {
    // As the second start after the revision probe killed a server: little of the deadline left, the whole span owed.
    // The program reads nothing for 3 s after it starts; 0.5 s after the install (found within 1 s) would not do.
    const ready = path.join(temp.dir, "npx-installed-late");
    const npx = path.join(REPO_ROOT, "test", "fixtures", "fake-npx.sh");
    const server = path.join(REPO_ROOT, "test", "fixtures", "slow-start.mjs");
    const s = session(
      {
        kind: "stdio",
        command: npx,
        args: [ready, process.execPath, server, "--delay", "3000"],
        env: {},
        cwd: REPO_ROOT,
      },
      recorder().events,
    );
    const opening = s.open(Date.now() + 500, 60_000);
    opening.catch(() => undefined);
    try {
      await waitFor(() => s.stage === "installing", "the deadline to find npx installing", 30_000);
      writeFileSync(ready, "");
      await opening;
      assert.equal(s.stage, "open");
    } finally {
      await s.close({ graceful: false });
    }
  });

  test("stdio: npx failing while its install holds the open: the open fails, and no longer says it is installing", async () => {
    const npx = path.join(REPO_ROOT, "test", "fixtures", "fake-npx.sh");
    const failed = path.join(temp.dir, "npx-failed");
    const s = session(
      { kind: "stdio", command: npx, args: [failed, "false"], env: {}, cwd: REPO_ROOT },
      recorder().events,
    );
    const opening = s.open(Date.now() + 500);
    opening.catch(() => undefined);
    await waitFor(() => s.stage === "installing", "the deadline to find npx installing", 30_000);
    writeFileSync(failed, "");
    await assert.rejects(opening);
    assert.equal(s.process.exitDescription, "exited with code 1");
    assert.notEqual(s.stage, "installing");
  });

  test("stdio: closed while npx installs (pi quits), npm is let roll the install back instead of being killed", async () => {
    const rolledBack = path.join(temp.dir, "rolled-back");
    const npx = path.join(REPO_ROOT, "test", "fixtures", "fake-npx.sh");
    const endpoint: ResolvedStdio = {
      ...{ kind: "stdio", command: npx, args: [path.join(temp.dir, "never-installed"), process.execPath, "-e", ""] },
      ...{ env: { FAKE_NPX_ROLLED_BACK: rolledBack }, cwd: REPO_ROOT },
    };
    const s = session(endpoint, recorder().events);
    const opening = s.open(Date.now() + 60_000);
    opening.catch(() => undefined);
    await waitFor(() => s.pid !== undefined && existsSync(`${rolledBack}.ready`), "npx to start installing");
    const pid = s.pid!;
    await s.close({ graceful: false });
    await assert.rejects(opening);
    assert.ok(existsSync(rolledBack), "npm finished its rollback");
    assert.equal(isAlive(pid), false);
  });

  test("stdio: a server that exits during the handshake: its exit and stderr are kept for the error message", async () => {
    const { endpoint, log } = stdioEndpoint("crash-on-start");
    const s = session(endpoint, recorder().events);
    await assert.rejects(s.open(Date.now() + 30_000));
    assert.equal(s.process.exitDescription, "exited with code 3");
    assert.ok(s.process.stderrTail().some((line) => line.includes("told to crash on start")));
    assert.equal(isAlive(startedPids(log)[0]!), false);
  });

  test("stdio: a command that does not exist fails with ENOENT and holds nothing", async () => {
    const s = session(
      { kind: "stdio", command: "/nonexistent/mcp-server", args: [], env: {}, cwd: REPO_ROOT },
      recorder().events,
    );
    await assert.rejects(s.open(Date.now() + 10_000), (error: NodeJS.ErrnoException) => error.code === "ENOENT");
    assert.equal(s.pid, undefined);
  });

  test("stdio: close() while opening ends the open and the process", async () => {
    const { endpoint, log } = stdioEndpoint("never-init");
    const s = session(endpoint, recorder().events);
    const opening = s.open(Date.now() + 60_000);
    await waitFor(() => startedPids(log).length > 0, "the server to start");
    await s.close({ graceful: false });
    await assert.rejects(opening);
    assert.equal(isAlive(startedPids(log)[0]!), false);
  });

  test("stdio: a process that dies under a call is reported once as dropped, with how it ended", async () => {
    const { endpoint } = stdioEndpoint("normal", { FIXTURE_CRASH_ON_CALL: "1" });
    const rec = recorder();
    const s = session(endpoint, rec.events);
    await s.open(Date.now() + 30_000);
    const pid = s.pid!;
    await assert.rejects(callTool(s, "echo", { text: "boom" }, { timeout: 10_000 }));
    await waitFor(() => rec.of("dropped").length > 0, "the drop to be reported");
    assert.deepEqual(
      rec.of("dropped").map((e) => e.detail),
      ["the server process exited with code 1"],
    );
    assert.equal(s.isOpen, false);
    assert.equal(s.classify(new Error("Not connected")), "transport");
    await s.close({ graceful: false });
    assert.equal(rec.of("dropped").length, 1, "closing afterwards reports nothing more");
    assert.equal(isAlive(pid), false);
  });

  test("Streamable HTTP: opens, calls, and close ends the server's session and closes every socket", async () => {
    const server = await startStreamableHttp();
    servers.push(server);
    const rec = recorder();
    const s = session(remote(server.url), rec.events);
    await s.open(Date.now() + 30_000);
    assert.equal(s.kind, "http");
    assert.equal(s.fellBackToSse, false);
    assert.equal(s.pid, undefined);
    assert.equal(s.processAlive(), true, "a remote session has no process to lose");
    const result = await callTool(s, "add", { a: 2, b: 3 }, { timeout: 10_000 });
    assert.deepEqual(result.content, [{ type: "text", text: "5" }]);
    assert.ok(server.openSockets() > 0);
    await s.close({ graceful: true, terminateSession: true });
    assert.ok(
      server.requests.some((r) => r.method === "DELETE"),
      "the server was told to end the session",
    );
    await waitFor(() => server.openSockets() === 0, "every socket to close");
    assert.equal(rec.of("dropped").length, 0);
  });

  test("Streamable HTTP: a server that never answers fails its revision probe at half the deadline, and keeps no socket open", async () => {
    let requests = 0;
    const server = await startHanging(() => requests++);
    servers.push(server);
    const s = session(remote(server.url), recorder().events);
    // The opener then asks with `initialize` in the time left (test/protocol-probe.test.ts); the session alone fails.
    await assert.rejects(s.open(Date.now() + 1000), (error) => probeInconclusive(error));
    assert.ok(requests > 0, "the request had reached the server");
    await waitFor(() => server.openSockets() === 0, "the socket of the failed open to close");
  });

  test("Streamable HTTP: close() while opening a server that never answers lets go of its socket at once", async () => {
    let requests = 0;
    const server = await startHanging(() => requests++);
    servers.push(server);
    const s = session(remote(server.url), recorder().events);
    // A deadline far beyond the wait below: only the session's own release can close the socket in time.
    const opening = s.open(Date.now() + 60_000);
    await waitFor(() => requests > 0 && server.openSockets() > 0, "the request to reach the server");
    await s.close({ graceful: false });
    await waitFor(() => server.openSockets() === 0, "the socket to close", 10_000);
    await assert.rejects(opening);
  });

  test("a server that only speaks legacy HTTP+SSE is opened over SSE after Streamable HTTP is refused", async () => {
    const server = await startSse();
    servers.push(server);
    const s = session(remote(server.url), recorder().events);
    await s.open(Date.now() + 30_000);
    assert.equal(s.kind, "sse");
    assert.equal(s.fellBackToSse, true);
    const result = await callTool(s, "echo", { text: "over sse" }, { timeout: 10_000 });
    assert.deepEqual(result.content, [{ type: "text", text: "over sse" }]);
    await s.close({ graceful: true });
    await waitFor(() => server.openSockets() === 0, "every socket to close");
  });

  test("client features: elicitation is offered only with a handler, and the server's request reaches it", async () => {
    const server = await startStreamableHttp();
    servers.push(server);
    const plain = session(remote(server.url), recorder().events);
    await plain.open(Date.now() + 30_000);
    const refused = await callTool(plain, "ask", {}, { timeout: 10_000 });
    assert.deepEqual(refused.content, [{ type: "text", text: "the client offers no elicitation" }]);
    await plain.close({ graceful: true });

    const asked: string[] = [];
    const features: ClientFeatures = {
      elicitation: async (request) => {
        asked.push(request.message);
        // Nothing filled in: the declared capability has the SDK apply the schema's defaults.
        return { action: "accept", content: {} };
      },
    };
    const answering = session(remote(server.url), recorder().events, features);
    await answering.open(Date.now() + 30_000);
    const answered = await callTool(answering, "ask", { question: "Who is there?" }, { timeout: 10_000 });
    assert.deepEqual(asked, ["Who is there?"]);
    assert.deepEqual(JSON.parse((answered.content[0] as { text: string }).text), {
      action: "accept",
      content: { name: "nobody" },
    });
    await answering.close({ graceful: true });
  });

  test("the live-session module imports nothing from the code that supervises it", () => {
    const srcDir = path.join(REPO_ROOT, "src");
    const supervisor = [
      "server-connection.ts",
      "session-opener.ts",
      "request-recovery.ts",
      "health-checks.ts",
      "lifecycle-report.ts",
    ].map((f) => path.join(srcDir, "connection", f));
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const match of readFileSync(file, "utf8").matchAll(/^import[^"]*"(\.[^"]+)"/gm))
        visit(path.resolve(path.dirname(file), match[1]!));
    };
    visit(path.join(srcDir, "connection", "live-session.ts"));
    assert.ok(seen.size > 3, "the import walk found the session's own modules");
    for (const file of supervisor)
      assert.equal(seen.has(file), false, `live-session.ts reaches ${path.relative(srcDir, file)}`);
  });
});
