/**
 * Shared local servers (`"shared": true`): one process under the hub (src/connection/hub/) for every session that
 * uses the same definition. These tests open sessions as the bridge does (ServerConnection) against a real hub
 * process and real fixture server processes; test/shared-pi.test.ts runs two real pi processes.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, lchownSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, afterEach, describe, test } from "node:test";
import type { ServerConnection } from "../src/connection/server-connection.ts";
import type { ClientFeatures } from "../src/connection/mcp-client.ts";
import type { EventSink } from "../src/common/events.ts";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import type { ResolvedStdio } from "../src/config/substitute.ts";
import type { ServerConfig } from "../src/config/types.ts";
import { stdioSandbox } from "../src/sandbox/server-sandbox.ts";
import { PI_LINE } from "./pi-line.ts";
import {
  commandLine,
  connectFailure,
  connectionFor,
  fixtureEntry,
  type FixtureMode,
  isAlive,
  REPO_ROOT,
  tempDir,
  waitFor,
} from "./helpers.ts";
import { bundledFixture } from "./fixture-bundle.ts";

const tmp = tempDir();
after(() => tmp.cleanup());

/** The hub of `dir`'s pid, from its lock file; undefined while there is none. */
function hubPid(dir: string): number | undefined {
  try {
    return Number(readFileSync(path.join(dir, "hub.lock"), "utf8")) || undefined;
  } catch {
    return undefined;
  }
}

/** The hub processes running for `dir`. */
function hubProcesses(dir: string): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      const line = commandLine(pid);
      return line.includes("hub.mjs") && line.includes(dir) && isAlive(pid);
    });
}

const MODERN_FIXTURE = path.join(REPO_ROOT, "test", "fixtures", "modern-server.ts");

function textOf(result: { content: unknown[] }): string {
  return (result.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("");
}

interface Bed {
  hub: string;
  open(
    name?: string,
    entry?: Record<string, unknown>,
    features?: ClientFeatures,
    events?: EventSink,
  ): Promise<ServerConnection>;
  pidOf(connection: ServerConnection): Promise<number>;
  /** Closes every session it opened, then waits for the hub to have exited (bounded). */
  end(): Promise<void>;
}

let beds = 0;
/** Beds not ended yet: a test that failed half-way has its sessions closed after it, so no hub keeps the file running. */
const unended = new Set<Bed>();
afterEach(async () => {
  for (const b of unended) await b.end().catch(() => undefined);
});

function bed(idleSeconds = 0.2): Bed {
  const hub = path.join(tmp.dir, `hub-${beds++}`);
  const opened: ServerConnection[] = [];
  const made: Bed = {
    hub,
    async open(name = "shared", entry = {}, features, events) {
      const connection = connectionFor(
        name,
        { ...fixtureEntry(), shared: { idleSeconds }, ...entry },
        { hubDir: hub, features, events },
      );
      opened.push(connection);
      await connection.connect();
      assert.equal(connection.status, "connected", connection.lastError);
      return connection;
    },
    async pidOf(connection) {
      return Number(textOf(await connection.callTool("pid", {})));
    },
    async end() {
      unended.delete(made);
      await Promise.all(opened.map((c) => c.close()));
      const pid = hubPid(hub);
      if (pid !== undefined) await waitFor(() => !isAlive(pid), "the hub to exit once it serves nobody", 20_000);
    },
  };
  unended.add(made);
  return made;
}

// On both pi lines' Node versions: the hub runs under the Node that runs pi.
describe(`shared servers (Node ${process.versions.node}, pi ${PI_LINE})`, () => {
  test("two sessions of one definition: one process, both served, each counted; it stops after the last leaves, and the hub exits", async () => {
    const b = bed();
    const first = await b.open();
    const second = await b.open();
    const pid = await b.pidOf(first);
    assert.equal(await b.pidOf(second), pid, "both sessions reach the same server process");
    await waitFor(() => first.shared?.sessions === 2 && second.shared?.sessions === 2, "both to count two sessions");
    assert.equal(first.shared?.pid, pid);
    // One leaves: the other still works, and is told it is alone now.
    await first.close();
    assert.equal(textOf(await second.callTool("echo", { text: "still here" })), "still here");
    await waitFor(() => second.shared?.sessions === 1, "the remaining session to count one");
    const hub = hubPid(b.hub);
    assert.ok(hub && isAlive(hub));
    await second.close();
    await waitFor(() => !isAlive(pid), "the server to stop after its idle time", 15_000);
    await waitFor(() => !isAlive(hub), "the hub to exit once it runs no server", 15_000);
    // It waited no longer than the server's idle time (0.2 s), which was the wait for a session to come back already.
    const log = readFileSync(path.join(b.hub, "hub.log"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    assert.deepEqual(log.filter((e) => e.event === "hub.empty").at(-1)?.exitInMs, 200, JSON.stringify(log));
  });

  test("a session pinned to an older revision (protocolVersion) beside one that is not: each connected, two processes", async () => {
    const b = bed();
    const newest = await b.open("pinned");
    const older = await b.open("pinned", { protocolVersion: "2025-03-26" });
    assert.deepEqual([newest.protocolVersion, older.protocolVersion], ["2025-11-25", "2025-03-26"]);
    assert.notEqual(await b.pidOf(newest), await b.pidOf(older));
    await b.end();
  });

  test("a different environment is a different server: two processes", async () => {
    const b = bed();
    const one = await b.open("one", { env: { FIXTURE_FLAVOUR: "a" } });
    const two = await b.open("two", { env: { FIXTURE_FLAVOUR: "b" } });
    const same = await b.open("same", { env: { FIXTURE_FLAVOUR: "a" } });
    const [p1, p2, p3] = [await b.pidOf(one), await b.pidOf(two), await b.pidOf(same)];
    assert.notEqual(p1, p2);
    assert.equal(p1, p3, "the same definition under another name is the same server");
    await b.end();
  });

  test("sessions in two kinds of terminal (another TERM) share one process: under the hub the server has none", async () => {
    const b = bed();
    const term = process.env.TERM;
    try {
      process.env.TERM = "xterm-256color";
      const one = await b.open();
      process.env.TERM = "tmux-256color";
      const two = await b.open();
      assert.equal(await b.pidOf(two), await b.pidOf(one));
    } finally {
      if (term === undefined) delete process.env.TERM;
      else process.env.TERM = term;
      await b.end();
    }
  });

  test("a server's request during one session's call goes to that session only", async () => {
    const b = bed();
    const asked: string[] = [];
    const answering = (who: string): ClientFeatures => ({
      elicitation: async (request) => {
        asked.push(`${who}: ${request.message}`);
        return { action: "accept", content: { name: who } };
      },
    });
    const a = await b.open("shared", {}, answering("a"));
    const c = await b.open("shared", {}, answering("c"));
    const fromA = JSON.parse(textOf(await a.callTool("ask", { question: "who calls?" })));
    assert.deepEqual(fromA, { action: "accept", content: { name: "a" } });
    const fromC = JSON.parse(textOf(await c.callTool("ask", { question: "and now?" })));
    assert.deepEqual(fromC, { action: "accept", content: { name: "c" } });
    assert.deepEqual(asked, ["a: who calls?", "c: and now?"]);
    // While both have a call in flight, whose question it is cannot be told: refused, with the reason, and asked of nobody.
    const aborter = new AbortController();
    const slow = a.callTool("slow", { ms: 60_000 }, { signal: aborter.signal });
    await assert.rejects(c.callTool("ask", { question: "whose?" }), /2 pi sessions have calls in flight/);
    aborter.abort();
    await assert.rejects(slow);
    assert.equal(asked.length, 2);
    await b.end();
  });

  test("a call cancelled in one session (the server never answers it) does not keep the other's questions refused", async () => {
    const b = bed();
    const features: ClientFeatures = { elicitation: async () => ({ action: "accept", content: { name: "c" } }) };
    const c = await b.open("shared", {}, features);
    const a = await b.open();
    const aborter = new AbortController();
    const slow = a.callTool("slow", { ms: 60_000 }, { signal: aborter.signal });
    // Answered after the slow call was sent: that one reached the server before it is cancelled.
    assert.equal(textOf(await a.callTool("echo", { text: "sent" })), "sent");
    aborter.abort();
    await assert.rejects(slow);
    const fromC = JSON.parse(textOf(await c.callTool("ask", { question: "mine?" })));
    assert.deepEqual(fromC, { action: "accept", content: { name: "c" } });
    await b.end();
  });

  test("progress and cancellation reach the session that asked, by its own ids", async () => {
    const b = bed();
    const a = await b.open();
    const c = await b.open();
    const updates: string[] = [];
    const progress = a.callTool(
      "progress",
      { steps: 3 },
      { onProgress: (p) => updates.push(typeof p === "string" ? p : String(p.progress)) },
    );
    const aborter = new AbortController();
    const slow = c.callTool("slow", { ms: 60_000 }, { signal: aborter.signal });
    await progress;
    assert.ok(updates.length >= 1, "the caller got its progress");
    aborter.abort();
    await assert.rejects(slow);
    // The server is not stuck on the cancelled call, and both sessions still work.
    assert.equal(textOf(await c.callTool("echo", { text: "after" })), "after");
    assert.equal(textOf(await a.callTool("echo", { text: "too" })), "too");
    await b.end();
  });

  test("progress the server writes in the same chunk as its result all reaches the caller first", async () => {
    // A server that answers every call with three progress notifications and the result in one write, which the hub
    // forwards line by line and this session reads as one chunk.
    const burst = `
      const out = (ms) => process.stdout.write(ms.map((m) => JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n").join(""));
      require("readline").createInterface({ input: process.stdin }).on("line", (line) => {
        const m = JSON.parse(line);
        if (m.id === undefined) return;
        if (m.method === "initialize") {
          const serverInfo = { name: "burst", version: "1" };
          return out([{ id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo } }]);
        }
        if (m.method === "tools/list") return out([{ id: m.id, result: { tools: [{ name: "burst", inputSchema: { type: "object" } }] } }]);
        if (m.method !== "tools/call") return out([{ id: m.id, result: {} }]);
        const progressToken = m.params._meta.progressToken;
        out([1, 2, 3].map((progress) => ({ method: "notifications/progress", params: { progressToken, progress, total: 3 } }))
          .concat([{ id: m.id, result: { content: [{ type: "text", text: "done" }] } }]));
      });`;
    const b = bed();
    const session = await b.open("burst", { command: process.execPath, args: ["-e", burst] });
    // Five rounds: fifteen updates, within the twenty a second passed on before progress is coalesced.
    for (let round = 0; round < 5; round++) {
      const seen: number[] = [];
      const result = await session.callTool(
        "burst",
        {},
        { onProgress: (p) => typeof p !== "string" && seen.push(p.progress) },
      );
      assert.equal(textOf(result), "done");
      assert.deepEqual(seen, [1, 2, 3], `round ${round}`);
    }
    await b.end();
  });

  test('a server that answers with its ids as strings (1 as "1"): served, as unshared', async () => {
    const stringIds = `
      const out = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m, id: String(m.id) }) + "\\n");
      require("readline").createInterface({ input: process.stdin }).on("line", (line) => {
        const m = JSON.parse(line);
        if (m.id === undefined) return;
        const serverInfo = { name: "strings", version: "1" };
        if (m.method === "initialize")
          return out({ id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo } });
        if (m.method === "tools/list") return out({ id: m.id, result: { tools: [{ name: "hi", inputSchema: { type: "object" } }] } });
        out({ id: m.id, result: { content: [{ type: "text", text: "hello" }] } });
      });`;
    const b = bed();
    const session = await b.open("strings", { command: process.execPath, args: ["-e", stringIds], initTimeout: 5000 });
    assert.equal(textOf(await session.callTool("hi", {})), "hello");
    await b.end();
  });

  test("a server that crashes is started again, and every session reconnects to the new process", async () => {
    const b = bed();
    const a = await b.open("shared", { env: { FIXTURE_FLAVOUR: "crash" } });
    const c = await b.open("shared", { env: { FIXTURE_FLAVOUR: "crash" } });
    const before = await b.pidOf(a);
    await assert.rejects(a.callTool("crash_always", {}));
    await waitFor(
      async () => a.status === "connected" && c.status === "connected" && a.shared?.pid !== before,
      "both to reconnect",
      30_000,
    );
    const after = await b.pidOf(a);
    assert.notEqual(after, before);
    assert.equal(await b.pidOf(c), after);
    await b.end();
  });

  test("a server that crashes leaving a child in its process group: the child ends with it, as unshared", async () => {
    const b = bed();
    const childFile = path.join(b.hub + "-child.pid");
    const { command, args } = fixtureEntry();
    const script = `sleep 300 & echo $! > "$1"; shift; exec "$@"`;
    const entry = { command: "sh", args: ["-c", script, "sh", childFile, command, ...args], restartOnCrash: false };
    const a = await b.open("leaving", entry);
    const child = Number(readFileSync(childFile, "utf8"));
    assert.ok(isAlive(child));
    process.kill(await b.pidOf(a), "SIGKILL");
    await waitFor(() => !isAlive(child), "the crashed server's child to end", 15_000);
    await b.end();
  });

  test("/mcp reconnect's restart: the server is started anew for every session, each reconnecting to the new process", async () => {
    const b = bed();
    const dropped: string[] = [];
    const a = await b.open();
    const c = await b.open("shared", {}, undefined, (channel, payload) => {
      if (channel === "mcp.disconnected") dropped.push(String(payload.reason));
    });
    const before = await b.pidOf(a);
    assert.equal(a.restartShared(), true);
    await a.reconnect();
    const renewed = await b.pidOf(a);
    assert.notEqual(renewed, before);
    await waitFor(
      () => c.status === "connected" && c.shared?.pid === renewed,
      "the other session to reconnect",
      30_000,
    );
    assert.equal(await b.pidOf(c), renewed);
    await waitFor(() => !isAlive(before), "the old process to end");
    await b.end();
  });

  test("sessions that start at once with no hub running: one hub wins the lock, one server process serves them all", async () => {
    const b = bed();
    const sessions = await Promise.all([b.open(), b.open(), b.open(), b.open()]);
    const pids = new Set(await Promise.all(sessions.map((s) => b.pidOf(s))));
    assert.equal(pids.size, 1, "one server process");
    // A hub that lost the lock exits as soon as it finds it taken, which on a busy machine may be after the sessions
    // have connected to the one that won (its Node still starting): one hub is what is left.
    await waitFor(() => hubProcesses(b.hub).length === 1, "the hubs that lost the lock to exit", 20_000);
    await b.end();
  });

  test("a hub killed by SIGKILL is started again by the sessions that need it, and they reconnect", async () => {
    const b = bed();
    const a = await b.open();
    const c = await b.open();
    const before = await b.pidOf(a);
    const hub = hubPid(b.hub)!;
    process.kill(hub, "SIGKILL");
    // Its server loses its stdin with the hub and ends; each session sees the drop and reconnects through a new hub.
    await waitFor(
      () => a.status === "connected" && c.status === "connected" && !!a.shared?.pid && a.shared.pid !== before,
      "both sessions to reconnect through a new hub",
      30_000,
    );
    const renewed = await b.pidOf(a);
    assert.equal(await b.pidOf(c), renewed);
    assert.notEqual(hubPid(b.hub), hub);
    // Both sessions started a hub; the one that lost the lock may still be starting when they have reconnected.
    await waitFor(() => hubProcesses(b.hub).length === 1, "the hub that lost the lock to exit", 20_000);
    await waitFor(() => !isAlive(before), "the old server to end once its hub is gone");
    await b.end();
  });

  test("a hub sent SIGTERM: the sessions come back on a new hub, not on the one that is ending", async () => {
    const b = bed();
    const a = await b.open();
    const before = await b.pidOf(a);
    const hub = hubPid(b.hub)!;
    process.kill(hub, "SIGTERM");
    await waitFor(
      () => a.status === "connected" && !!a.shared?.pid && a.shared.pid !== before,
      "a to reconnect",
      30_000,
    );
    const renewed = a.shared!.pid!;
    await waitFor(() => !isAlive(hub), "the old hub to exit", 20_000);
    assert.ok(isAlive(renewed), "the server the session came back to runs on after the old hub has exited");
    await b.end();
  });

  test("a server that logs JSON that is no JSON-RPC message on stdout: the line is skipped, the session kept, as unshared", async () => {
    const b = bed();
    const go = path.join(tmp.dir, "log-now");
    // Once `go` exists, a line of a JSON logger (with a `method`, of the HTTP request it logs) joins the server's stdout.
    const logger = `(i=0; while [ ! -e "${go}" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; echo '{"level":30,"method":"GET","msg":"request"}'; rm -f "${go}") &`;
    const { command, args } = fixtureEntry();
    const dropped: string[] = [];
    const entry = { command: "/bin/sh", args: ["-c", `${logger} exec "$0" "$@"`, command, ...args] };
    const a = await b.open("logger", entry, undefined, (channel, payload) => {
      if (channel === "mcp.disconnected") dropped.push(String(payload.reason));
    });
    writeFileSync(go, "");
    await waitFor(() => !existsSync(go), "the line to be written");
    // The server's answer comes after that line on its stdout.
    assert.equal(textOf(await a.callTool("echo", { text: "hi" })), "hi");
    assert.deepEqual(dropped, []);
    assert.equal(a.status, "connected");
    await b.end();
  });

  test("a server that sends a message over maxMessageBytes: the error names the limit, as an unshared one's does", async () => {
    const b = bed();
    const a = await b.open("long", { maxMessageBytes: 100_000, restartOnCrash: false });
    await assert.rejects(a.callTool("big", { kb: 200 }), /over the 97\.7 KB limit \(`maxMessageBytes`\)/);
    await b.end();
  });

  test("tool arguments over maxMessageBytes reach the server: the limit is on what the server sends, as unshared", async () => {
    const b = bed();
    const a = await b.open("long", { maxMessageBytes: 100_000, restartOnCrash: false });
    const pid = await b.pidOf(a);
    assert.equal(Number(textOf(await a.callTool("pid", { pad: "x".repeat(200_000) }))), pid);
    await b.end();
  });

  test("a 40 MB message (maxMessageBytes raised) passes the hub in seconds: its reading is linear, not quadratic", async () => {
    const b = bed();
    const entry = { maxMessageBytes: 50_000_000, requestTimeout: 10_000, restartOnCrash: false };
    const a = await b.open("large", entry);
    assert.equal(textOf(await a.callTool("big", { kb: 40_000 })).length, 40_000 * 1024);
    await b.end();
  });

  test("a message over 64 MB, within a raised maxMessageBytes, reaches a session that reads: as unshared", async () => {
    const b = bed();
    const a = await b.open("huge", { maxMessageBytes: 100_000_000, restartOnCrash: false });
    assert.equal(textOf(await a.callTool("big", { kb: 70_000 })).length, 70_000 * 1024);
    await b.end();
  });

  test(
    "a hub directory that is another user's symlink (to a directory of this user's) is refused: it could be turned to theirs",
    { skip: process.getuid?.() === 0 ? false : "needs root, to make a symlink another user owns" },
    async () => {
      const b = bed();
      const mine = path.join(tmp.dir, "mine");
      mkdirSync(mine, { mode: 0o700 });
      symlinkSync(mine, b.hub);
      lchownSync(b.hub, 65534, 65534);
      const connection = connectionFor("shared", { ...fixtureEntry(), shared: true }, { hubDir: b.hub });
      await assert.rejects(connection.connect(), /belongs to another user; the shared-server hub cannot use it/);
      await connection.close();
      assert.deepEqual(readdirSync(mine), [], "no hub started in it");
    },
  );

  test("a lock left by a hub that is gone, its pid now another program's: the next hub takes the lock over", async () => {
    const b = bed();
    mkdirSync(b.hub, { recursive: true, mode: 0o700 });
    // A live process that is no hub (this test's own), as a pid is given again after a reboot or a container's restart.
    writeFileSync(path.join(b.hub, "hub.lock"), String(process.pid));
    await b.open("shared", { initTimeout: 5000 });
    assert.notEqual(hubPid(b.hub), process.pid);
    await b.end();
  });

  test("a server that ignores its stdin closing and SIGTERM still ends when its hub is killed: the hub's watchdog", async () => {
    const b = bed();
    const stubborn = await b.open("stubborn", { ...fixtureEntry("stubborn"), restartOnCrash: false });
    const server = await b.pidOf(stubborn);
    process.kill(hubPid(b.hub)!, "SIGKILL");
    await waitFor(() => !isAlive(server), "the stubborn server to be ended by the hub's watchdog", 15_000);
    await b.end();
  });

  for (const protocolVersion of ["auto", "2025-11-25"]) {
    test(`both revisions through the hub: a 2026-07-28 server asked with ${protocolVersion}`, async () => {
      const b = bed();
      const state = path.join(tmp.dir, `modern-${protocolVersion}`);
      const entry = {
        command: process.execPath,
        args: [bundledFixture(MODERN_FIXTURE), "--stdio", "--state", state],
        protocolVersion,
      };
      const a = await b.open("modern", entry);
      const c = await b.open("modern", entry);
      const expected = protocolVersion === "auto" ? "2026-07-28" : "2025-11-25";
      assert.equal(a.protocolVersion, expected);
      assert.equal(c.protocolVersion, expected);
      const sum = await c.callTool("add", { a: 2, b: 3 });
      assert.equal(textOf(sum), "5");
      assert.equal(textOf(await a.callTool("echo", { text: "hi" })), "hi");
      assert.equal(a.shared?.sessions, 2);
      await b.end();
    });
  }

  test("npx still installing under the hub when initTimeout runs out: the session waits, then connects", async () => {
    const npx = path.join(REPO_ROOT, "test", "fixtures", "fake-npx.sh");
    const server = path.join(REPO_ROOT, "test", "fixtures", "slow-start.mjs");
    // The download lasts three times initTimeout; without the wait for it the connect fails at initTimeout. (Twice, a
    // check at the deadline that runs seconds late on a busy machine could find the install over, and nothing held.)
    const b = bed();
    await b.open("installing", { command: npx, args: ["6", process.execPath, server], initTimeout: 2000 });
    await b.end();
  });

  test("a command that is not found: the message an unshared start gets, and the hub does not stay for it", async () => {
    const b = bed();
    const connection = connectionFor(
      "missing",
      { command: "no-such-command-for-the-hub", shared: true, restartOnCrash: false },
      { hubDir: b.hub },
    );
    await assert.rejects(connection.connect(), /command 'no-such-command-for-the-hub' was not found/);
    await connection.close();
    const hub = hubPid(b.hub);
    if (hub !== undefined) await waitFor(() => !isAlive(hub), "the hub to exit, running nothing", 15_000);
  });

  test("a hub that fails at its start: said at once, not as a server silent until initTimeout; its log says why", async () => {
    const b = bed();
    // What the hub cannot remove to listen: it throws at its start.
    mkdirSync(path.join(b.hub, "hub.sock"), { recursive: true, mode: 0o700 });
    const entry = { ...fixtureEntry(), shared: true, initTimeout: 20_000, restartOnCrash: false };
    const { message } = await connectFailure(connectionFor("crashing-hub", entry, { hubDir: b.hub }));
    assert.match(message, /the shared-server hub exited with code 1 \(its log: .*hub\.log\)/);
    assert.match(readFileSync(path.join(b.hub, "hub.log"), "utf8"), /EISDIR/);
    await b.end();
  });

  test("a hub that holds the lock but does not answer: the timeout says so, not that the server's process ran silent", async () => {
    const b = bed();
    mkdirSync(b.hub, { recursive: true, mode: 0o700 });
    // A live hub (by its command line) whose socket is gone: hubs started after it step back, and nobody listens.
    const stuck = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", "hub.mjs"], { stdio: "ignore" });
    await once(stuck, "spawn");
    writeFileSync(path.join(b.hub, "hub.lock"), String(stuck.pid));
    const entry = { ...fixtureEntry(), shared: true, initTimeout: 2000, restartOnCrash: false };
    const { message } = await connectFailure(connectionFor("unanswered", entry, { hubDir: b.hub }));
    stuck.kill();
    // Said by the session's timer or, a moment later, by the wait for the hub: either way, of the hub.
    assert.match(message, /the shared-server hub did not start (it )?in time \(its log: .*hub\.log\)/);
    await b.end();
  });

  test("a server that exits saying why on a last stderr line without a newline: the error reads it, as unshared", async () => {
    const b = bed();
    const said = "process.stderr.write('Error: FOO_API_KEY environment variable is required'); process.exit(1)";
    const entry = { command: process.execPath, args: ["-e", said], shared: true, restartOnCrash: false };
    const { message } = await connectFailure(connectionFor("keyless", entry, { hubDir: b.hub }));
    assert.match(message, /it needs FOO_API_KEY, which its `env` does not set/);
    await b.end();
  });

  test("a stderr line the hub cuts at 4096 characters does not show the beginning of a secret the cut split", async () => {
    const b = bed();
    const secret = "hubkey-7f3a9c1e5b2d";
    const said = `process.stderr.write(" ".repeat(4080) + "x " + process.env.HUB_SECRET + "\\n"); process.exit(1)`;
    const entry = { command: process.execPath, args: ["-e", said], env: { HUB_SECRET: secret }, shared: true };
    const logged: unknown[] = [];
    const logger = { log: (record: unknown) => logged.push(record) };
    await connectFailure(connectionFor("leaky", { ...entry, restartOnCrash: false }, { hubDir: b.hub, logger }));
    assert.ok(JSON.stringify(logged).includes(" x"), "the line was logged");
    assert.ok(!JSON.stringify(logged).includes(secret.slice(0, 10)), JSON.stringify(logged).slice(-300));
    await b.end();
  });
});

describe("the shared setting", () => {
  const validate = (entry: Record<string, unknown>) =>
    validateServerEntry("s", entry, { scope: "user", path: "/home/u/.pi/agent/mcp.json" });
  test("true, an idle time, or off; only for local servers", () => {
    assert.deepEqual(validate({ command: "x", shared: true }).config?.shared, { idleMs: 30_000 });
    assert.deepEqual(validate({ command: "x", shared: { idleSeconds: 5 } }).config?.shared, { idleMs: 5000 });
    assert.equal(validate({ command: "x", shared: false }).config?.shared, undefined);
    assert.match(validate({ command: "x", shared: "yes" }).errors.join(), /`shared` must be true, false or/);
    assert.match(validate({ command: "x", shared: { idleSeconds: -1 } }).errors.join(), /idleSeconds/);
    assert.match(
      validate({ url: "https://example.com/mcp", shared: true }).errors.join(),
      /local \(command\) servers only/,
    );
  });
});

describe("shared sandboxed servers", () => {
  const sandbox = (endpoint: ResolvedStdio) =>
    stdioSandbox({ name: "boxed" } as ServerConfig, true, endpoint, {
      servers: [],
      agentDir: path.join(tmp.dir, "agent"),
      projectRoot: REPO_ROOT,
      env: process.env,
    });
  const open = async (b: Bed, env: Record<string, string> = {}, mode: FixtureMode = "normal") => {
    const entry = { ...fixtureEntry(mode), env, shared: { idleSeconds: 0.2 } };
    const connection = connectionFor("boxed", entry, { hubDir: b.hub, sandbox });
    await connection.connect();
    return connection;
  };

  test("two sessions whose env lists the same variables in another order share one sandboxed process", async () => {
    const b = bed();
    const a = await open(b, { FIRST: "1", SECOND: "2" });
    const c = await open(b, { SECOND: "2", FIRST: "1" });
    try {
      assert.equal(c.shared?.pid, a.shared?.pid, "one process");
      assert.equal(a.shared?.sessions, 2);
    } finally {
      await Promise.all([a.close(), c.close()]);
      await b.end();
    }
  });

  test("/mcp reconnect's restart of a sandboxed server: it comes back, the old one's end not stopping the new one's sandbox", async () => {
    const b = bed();
    const a = await open(b);
    try {
      const before = a.shared?.pid;
      assert.equal(a.restartShared(), true);
      await a.reconnect();
      assert.equal(a.status, "connected", a.lastError);
      assert.notEqual(a.shared?.pid, before);
      assert.equal(textOf(await a.callTool("echo", { text: "hi" })), "hi");
    } finally {
      await a.close();
      await b.end();
    }
  });

  test("/mcp reconnect's restart: the new process keeps its temp dir when the old one ends", async () => {
    const b = bed();
    // One that outlives its input closing: the new process runs before the old one ends.
    const a = await open(b, {}, "lingering");
    try {
      const temp = readdirSync(path.join(b.hub, "tmp")).map((name) => path.join(b.hub, "tmp", name));
      assert.equal(temp.length, 1, "one temp dir");
      assert.equal(a.restartShared(), true);
      await a.reconnect();
      // The old process's end is logged in the same turn of the hub's loop that lets go of its sandbox.
      const exits = () => readFileSync(path.join(b.hub, "hub.log"), "utf8").split('"server.exit"').length - 1;
      await waitFor(() => exits() === 1, "the old process to end");
      assert.equal(a.status, "connected");
      assert.ok(existsSync(temp[0]!), "the running server's temp dir is still there");
    } finally {
      await a.close();
      await b.end();
    }
  });
});
