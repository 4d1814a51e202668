/**
 * The process-group stdio transport, with real processes: the fixture server through the SDK client, and small
 * scripts for the misbehaviours the fixture does not have.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { OrphanWatchdog } from "../src/connection/local/orphan-watchdog.ts";
import { bundledFixture } from "./fixture-bundle.ts";
import type { ProcessExitInfo, ProcessGroupStdioOptions } from "../src/connection/local/stdio-options.ts";
import { BURST_WRITE, ProcessGroupStdioTransport } from "../src/connection/local/stdio-transport.ts";
import {
  commandLine,
  type FixtureMode,
  fixtureEntry,
  isAlive,
  readLog,
  REPO_ROOT,
  tempDir,
  waitFor,
} from "./helpers.ts";

const temp = tempDir("mcp-bridge-stdio-transport-");
const transports: ProcessGroupStdioTransport[] = [];
const otherPids: number[] = [];

interface Tracked {
  transport: ProcessGroupStdioTransport;
  stderr: string[];
  exits: ProcessExitInfo[];
  errors: Error[];
  closes: number;
}

/** A transport whose stderr lines, exits, errors and closes are recorded; killed in the after hook. */
function track(options: Omit<ProcessGroupStdioOptions, "env"> & { env?: Record<string, string> }): Tracked {
  const tracked: Tracked = { transport: undefined as never, stderr: [], exits: [], errors: [], closes: 0 };
  const transport = new ProcessGroupStdioTransport({
    ...options,
    env: options.env ?? {},
    onStderrLine: (line) => tracked.stderr.push(line),
    onExit: (info) => tracked.exits.push(info),
  });
  transport.onerror = (error) => tracked.errors.push(error);
  transport.onclose = () => tracked.closes++;
  tracked.transport = transport;
  transports.push(transport);
  return tracked;
}

function fixture(mode: FixtureMode, env: Record<string, string> = {}, closeGraceMs?: number): Tracked {
  return track({ ...fixtureEntry(mode), env, closeGraceMs });
}

/** A node script as the server. */
function script(source: string, options: Partial<ProcessGroupStdioOptions> = {}): Tracked {
  return track({ command: process.execPath, args: ["-e", source], ...options });
}

function newClient(): Client {
  return new Client({ name: "stdio-transport-test", version: "0.0.0" }, { capabilities: {} });
}

/** Fields of /proc/<pid>/stat after the command name: state, ppid, pgrp, session, … */
function statFields(pid: number): string[] {
  const text = readFileSync(`/proc/${pid}/stat`, "utf8");
  return text.slice(text.lastIndexOf(")") + 2).split(" ");
}

const processGroupOf = (pid: number) => Number(statFields(pid)[2]);
const sessionOf = (pid: number) => Number(statFields(pid)[3]);

async function grandchildOf(log: string): Promise<number> {
  await waitFor(() => readLog(log).some((e) => e.event === "grandchild"), "the fixture to start its grandchild");
  const childPid = readLog(log).find((e) => e.event === "grandchild")!.childPid as number;
  otherPids.push(childPid);
  return childPid;
}

describe("ProcessGroupStdioTransport", { timeout: 120_000 }, () => {
  test("a write that fails because the server closed its input fails once the process has ended, so its exit is known", async () => {
    // The server closes its input at once and exits a little later: a message written meanwhile fails at once (EPIPE),
    // and a start whose first write failed so was described by that, not by the exit and what the server printed.
    const t = track({ command: "sh", args: ["-c", "exec 0<&-; echo closed >&2; sleep 0.5; exit 3"] });
    await t.transport.start();
    await waitFor(() => t.stderr.includes("closed"), "the server to close its input");
    await assert.rejects(t.transport.send({ jsonrpc: "2.0", id: 1, method: "ping" }), /EPIPE/);
    assert.deepEqual(
      t.exits.map((exit) => exit.code),
      [3],
      "the send failed after the exit",
    );
    assert.equal(t.closes, 1);
  });

  after(async () => {
    for (const transport of transports) transport.killNow();
    await Promise.all(transports.map((t) => t.close()));
    for (const pid of otherPids) {
      if (!isAlive(pid)) continue;
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    temp.cleanup();
  });

  test("a message sent after the process exited fails once its output is read to the end, with what came last", async () => {
    // A helper of the server writes its last line after the server exited, once the test lets it.
    const gate = path.join(temp.dir, "late-output-gate");
    const stray: string[] = [];
    const t = track({
      command: "sh",
      args: ["-c", `echo early; (while [ ! -f '${gate}' ]; do sleep 0.02; done; echo late) & exit 1`],
      closeGraceMs: 60_000,
      onStrayLine: (line) => stray.push(line),
    });
    await t.transport.start();
    await waitFor(() => t.exits.length === 1, "the server to exit");
    let failedWith: string[] | undefined;
    const sent = t.transport.send({ jsonrpc: "2.0", id: 1, method: "ping" }).then(
      () => assert.fail("sent to a process that exited"),
      () => (failedWith = [...stray]),
    );
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(failedWith, undefined, "not failed while the output is still open");
    writeFileSync(gate, "");
    await sent;
    assert.deepEqual(failedWith, ["early", "late"]);
  });

  test("serves the fixture through the SDK client, in a process group and session of its own", async () => {
    const t = fixture("normal");
    const client = newClient();
    await client.connect(t.transport);
    const pid = t.transport.pid!;
    assert.ok(pid > 0);

    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === "echo"));
    const result = await client.callTool({ name: "echo", arguments: { text: "hello over a group" } });
    assert.deepEqual(result.content, [{ type: "text", text: "hello over a group" }]);

    await waitFor(() => t.stderr.includes("fixture server starting (mode normal)"), "the fixture's stderr line");
    assert.equal(processGroupOf(pid), pid, "the server leads its own process group");
    assert.equal(sessionOf(pid), pid, "and its own session, away from pi's terminal");
    assert.notEqual(processGroupOf(process.pid), pid);

    const closing = client.close();
    assert.equal(t.transport.close(), t.transport.close(), "close() is idempotent");
    await closing;
    assert.ok(!isAlive(pid), "close() resolves once the process has exited");
    assert.equal(t.closes, 1);
    assert.equal(t.exits.length, 1);
    await assert.rejects(t.transport.send({ jsonrpc: "2.0", method: "notifications/initialized" }), /Not connected/);
    await t.transport.close();
    assert.equal(t.closes, 1, "onclose fires once");
  });

  test("close() ends the server and the grandchild it started", async () => {
    const log = path.join(temp.dir, "grandchild.log");
    const t = fixture("grandchild", { FIXTURE_LOG: log });
    const client = newClient();
    await client.connect(t.transport);
    const pid = t.transport.pid!;
    const grandchild = await grandchildOf(log);
    assert.ok(isAlive(grandchild));
    assert.equal(processGroupOf(grandchild), pid, "the grandchild is in the server's group");

    await t.transport.close();
    assert.ok(!isAlive(pid));
    await waitFor(() => !isAlive(grandchild), "the grandchild to be gone", 5000);
    assert.deepEqual(
      t.exits,
      [{ code: null, signal: "SIGTERM", description: "killed by SIGTERM" }],
      "the group's SIGTERM sufficed",
    );
    assert.equal(t.closes, 1);
  });

  test("a server that ignores stdin EOF and SIGTERM is SIGKILLed after the grace periods", async () => {
    const t = script("process.on('SIGTERM', () => {}); process.stderr.write('ready\\n'); setInterval(() => {}, 1e9)", {
      closeGraceMs: 200,
    });
    await t.transport.start();
    const pid = t.transport.pid!;
    await waitFor(() => t.stderr.includes("ready"), "the SIGTERM handler to be installed");

    const startedAt = Date.now();
    await t.transport.close();
    const elapsed = Date.now() - startedAt;
    assert.ok(!isAlive(pid));
    assert.deepEqual(t.exits, [{ code: null, signal: "SIGKILL", description: "killed by SIGKILL" }]);
    assert.ok(elapsed >= 350, `waited ${elapsed} ms: the stdin and SIGTERM grace periods came first`);
    assert.equal(t.closes, 1);
  });

  test("npx stopped while it installs gets the time npm takes to roll the install back, not a SIGKILL", async () => {
    const rolledBack = path.join(temp.dir, "rolled-back");
    const t = track({
      command: path.join(REPO_ROOT, "test", "fixtures", "fake-npx.sh"),
      args: [path.join(temp.dir, "never-installed"), process.execPath, "-e", ""],
      env: { FAKE_NPX_ROLLED_BACK: rolledBack },
      closeGraceMs: 200,
    });
    await t.transport.start();
    const pid = t.transport.pid!;
    await waitFor(() => existsSync(`${rolledBack}.ready`), "the fake npx to start installing");
    await t.transport.close();
    assert.ok(existsSync(rolledBack), "npm finished its rollback");
    assert.deepEqual(t.transport.ending?.by, "SIGTERM");
    assert.ok(!isAlive(pid));
  });

  test("killNow() (pi's process exiting) leaves npm installing for npx alive, for the watchdog to end after its rollback", async () => {
    const t = track({
      command: path.join(REPO_ROOT, "test", "fixtures", "fake-npx.sh"),
      args: [path.join(temp.dir, "never-installed"), process.execPath, "-e", ""],
      env: {},
    });
    await t.transport.start();
    const pid = t.transport.pid!;
    await waitFor(() => commandLine(pid).startsWith("npm exec"), "the fake npx to name itself as npm does");
    t.transport.killNow();
    try {
      // What a SIGKILL would have ended by now; the exit it would have reported has not come either.
      await new Promise((resolve) => setImmediate(resolve));
      assert.ok(isAlive(pid), "npm was not killed");
      assert.deepEqual(t.exits, []);
    } finally {
      process.kill(-pid, "SIGKILL");
    }
  });

  test("pi quitting: close() ends the input and leaves the server to the watchdog; if pi lives on, the close goes on", async () => {
    const log = path.join(temp.dir, "lingering.log");
    const watchdog = new OrphanWatchdog();
    const t = track({ ...fixtureEntry("lingering"), env: { FIXTURE_LOG: log }, watchdog, closeGraceMs: 400 });
    await t.transport.start();
    try {
      watchdog.handOver();
      assert.ok(watchdog.takesOver, "a watchdog runs to take the server over");
      await t.transport.close();
      assert.ok(t.transport.handedOver);
      assert.equal(t.closes, 1, "the session is over for the client");
      // This process lives on (the timer stands for what else keeps it running; the close itself holds nothing): its own
      // close sends SIGTERM after five graces (a quitting pi has exited long before).
      const livesOn = setInterval(() => undefined, 1000);
      await t.transport.handedOver?.finally(() => clearInterval(livesOn));
      assert.deepEqual(
        readLog(log).map((e) => e.event),
        ["start", "stdin-end", "sigterm"],
      );
      assert.deepEqual(t.transport.ending?.by, "SIGTERM");
      // Not before five graces: a pi slow to exit must not cut short the grace the watchdog gives from pi's exit.
      assert.ok(t.transport.ending!.durationMs >= 5 * 400, `ended after ${t.transport.ending!.durationMs} ms`);
      assert.equal(t.closes, 1);
      await waitFor(() => watchdog.pid === undefined, "the watchdog to be let go once nothing is watched");
    } finally {
      const pid = t.transport.pid;
      if (pid !== undefined && isAlive(pid)) process.kill(-pid, "SIGKILL");
    }
  });

  // pi slow to exit (a busy machine) after it handed its servers over: the close goes on, and once it is done nothing
  // is watched, so the watchdog is told to let go of pi's mark. A daemon the server double-forked (outside its group
  // and tree, found only by the mark) must be gone by then, or nothing ends it.
  test("pi quitting but living on past the grace: the close ends the server's double-forked daemon before it lets the watchdog go", async () => {
    const log = path.join(temp.dir, "double-fork.log");
    const watchdog = new OrphanWatchdog();
    const t = track({
      command: process.execPath,
      args: [bundledFixture(path.join(REPO_ROOT, "test", "fixtures", "double-fork-server.mjs"))],
      env: { FIXTURE_LOG: log },
      watchdog,
    });
    const client = newClient();
    await client.connect(t.transport);
    const [sleeper] = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { pid: number }).pid);
    assert.ok(sleeper !== undefined && isAlive(sleeper), "the server's daemon runs");
    otherPids.push(sleeper);
    watchdog.handOver();
    await client.close();
    const livesOn = setInterval(() => undefined, 1000);
    await t.transport.handedOver?.finally(() => clearInterval(livesOn));
    await waitFor(() => watchdog.pid === undefined, "the watchdog to be let go once nothing is watched");
    assert.ok(!isAlive(sleeper), `the daemon ${sleeper} is gone`);
  });

  test("a server that crashes on start reports its exit code, its stderr, then closes", async () => {
    const t = fixture("crash-on-start");
    let stderrAtClose: string[] = [];
    t.transport.onclose = () => {
      t.closes++;
      stderrAtClose = [...t.stderr];
    };
    await t.transport.start();
    await waitFor(() => t.closes === 1, "onclose");
    assert.deepEqual(t.exits, [{ code: 3, signal: null, description: "exited with code 3" }]);
    assert.ok(
      stderrAtClose.some((line) => line.startsWith("fatal: the fixture was told to crash on start")),
      "stderr arrives before onclose",
    );

    await t.transport.close();
    assert.equal(t.closes, 1);
    assert.equal(t.exits.length, 1);
  });

  test("the SDK client sees a crash on start as a failed connect", async () => {
    const t = fixture("crash-on-start");
    await assert.rejects(newClient().connect(t.transport));
    await waitFor(() => t.closes === 1, "onclose");
    assert.equal(t.exits[0]?.code, 3);
  });

  test("a missing command rejects start() with ENOENT", async () => {
    for (const command of ["/nonexistent/mcp-bridge-no-such-server", "mcp-bridge-no-such-command-on-path"]) {
      const t = track({ command, args: [] });
      await assert.rejects(t.transport.start(), (error: NodeJS.ErrnoException) => error.code === "ENOENT");
      await waitFor(() => t.closes === 1, "onclose after the failed start");
      assert.deepEqual(t.exits, [], "no exit: the process never ran");
      await t.transport.close();
      assert.equal(t.closes, 1);
    }
  });

  test("killNow() SIGKILLs the whole group without the event loop", async () => {
    const log = path.join(temp.dir, "kill-now.log");
    const t = fixture("grandchild", { FIXTURE_LOG: log });
    const client = newClient();
    await client.connect(t.transport);
    const pid = t.transport.pid!;
    const grandchild = await grandchildOf(log);

    t.transport.killNow();
    // Blocks this process, as a process 'exit' handler would: nothing further may depend on the event loop.
    const gone = (p: number) =>
      `while [ -e /proc/${p} ] && ! grep -q '^State:[[:space:]]*Z' /proc/${p}/status 2>/dev/null; do sleep 0.01; done`;
    execFileSync("sh", ["-c", `${gone(pid)}; ${gone(grandchild)}`], { timeout: 10_000 });
    assert.ok(!isAlive(pid));
    assert.ok(!isAlive(grandchild));

    await waitFor(() => t.closes === 1, "onclose after the kill");
    assert.deepEqual(t.exits, [{ code: null, signal: "SIGKILL", description: "killed by SIGKILL" }]);
  });

  test("the server gets the safe defaults and its own env, not the rest of the host environment", async () => {
    const hostOnly = "MCP_BRIDGE_TRANSPORT_TEST_HOST_ONLY";
    process.env[hostOnly] = "must not leak";
    try {
      const t = script("process.stderr.write(JSON.stringify(process.env) + '\\n')", {
        env: { MCP_BRIDGE_OPTION: "from options", HOME: "/options/home" },
      });
      await t.transport.start();
      await waitFor(() => t.closes === 1, "the script to finish");
      const env = JSON.parse(t.stderr[0]!) as Record<string, string>;
      assert.equal(env.MCP_BRIDGE_OPTION, "from options");
      assert.equal(env.HOME, "/options/home", "options.env wins over the defaults");
      assert.equal(env.PATH, process.env.PATH);
      assert.equal(env[hostOnly], undefined);
      assert.equal(env.MCP_BRIDGE_OWNER, t.transport.ownerMark, "the mark its descendants are found by");
      const expected = new Set([
        ...Object.keys(getDefaultEnvironment()),
        "MCP_BRIDGE_OPTION",
        "HOME",
        "MCP_BRIDGE_OWNER",
      ]);
      assert.deepEqual(Object.keys(env).sort(), [...expected].sort());
    } finally {
      delete process.env[hostOnly];
    }
  });

  test("stderr is split into lines, overlong lines are cut, and a final partial line is delivered", async () => {
    const t = script(
      [
        "process.stderr.write('first\\r\\nsecond\\n');",
        "process.stderr.write('x'.repeat(100000) + '\\nafter\\n');",
        "process.stderr.write('é'.repeat(3000) + '\\n');",
        "process.stderr.write('y'.repeat(2000000));",
        "process.stderr.write('\\nno newline at the end');",
      ].join(""),
    );
    await t.transport.start();
    await waitFor(() => t.closes === 1, "the script to finish");
    assert.deepEqual(t.stderr, [
      "first",
      "second",
      `${"x".repeat(4096)}…`,
      "after",
      "é".repeat(3000),
      `${"y".repeat(4096)}…`,
      "no newline at the end",
    ]);
  });

  test("stdout lines that are not JSON-RPC go to onerror and the connection carries on", async () => {
    const t = fixture("garbage");
    const client = newClient();
    const errors: Error[] = [];
    client.onerror = (error) => errors.push(error);
    await client.connect(t.transport);
    const result = await client.callTool({ name: "echo", arguments: { text: "still here" } });
    assert.deepEqual(result.content, [{ type: "text", text: "still here" }]);
    assert.equal(errors.length, 2, errors.map((e) => e.message).join("; "));
    await client.close();
  });

  test("a last stdout line without a newline, written before the exit, is read as a line too", async () => {
    const stray: string[] = [];
    const t = script("process.stdout.write('Error: EXAMPLE_KEY is required', () => process.exit(1))", {
      onStrayLine: (line) => stray.push(line),
    });
    let strayAtClose: string[] | undefined;
    t.transport.onclose = () => (strayAtClose = [...stray]);
    await t.transport.start();
    await waitFor(() => strayAtClose !== undefined, "onclose");
    assert.deepEqual(strayAtClose, ["Error: EXAMPLE_KEY is required"], "read before onclose");

    // A prompt that waits for an answer, the server stopped by the bridge: the prompt is read too.
    const prompt = script(
      "process.stdout.write('Enter your API key: '); process.stderr.write('asked\\n'); setInterval(() => {}, 1e9)",
      {
        onStrayLine: (line) => stray.push(line),
        closeGraceMs: 100,
      },
    );
    await prompt.transport.start();
    await waitFor(() => prompt.stderr.includes("asked"), "the prompt");
    await prompt.transport.close();
    assert.equal(stray.at(-1), "Enter your API key: ");
  });

  test("writing to a server that closed its stdin rejects the send and reports EPIPE, without crashing", async () => {
    const t = script("require('fs').closeSync(0); process.stderr.write('closed\\n'); setInterval(() => {}, 1e9)", {
      closeGraceMs: 200,
    });
    await t.transport.start();
    await waitFor(() => t.stderr.includes("closed"), "the script to close its stdin");
    await assert.rejects(
      t.transport.send({ jsonrpc: "2.0", id: 1, method: "ping" }),
      (error: NodeJS.ErrnoException) => error.code === "EPIPE",
    );
    assert.ok(
      t.errors.some((e) => (e as NodeJS.ErrnoException).code === "EPIPE"),
      "reported through onerror",
    );
    await t.transport.close();
    assert.equal(t.closes, 1);
  });

  test("start() twice is refused", async () => {
    const t = fixture("normal");
    await t.transport.start();
    await assert.rejects(t.transport.start(), /already started/);
    await t.transport.close();
    assert.equal(t.exits.length, 1);
  });

  test("the messages of a burst of calls reach the server in a few writes, and each call gets its answer", async () => {
    // Counts the reads of stdin that carry a call, and answers each call with that count so far. Two hundred calls
    // are about 22 KB, within the pipe's buffer: the kernel hands a write that fits to the reader whole, so batched (the
    // first at once, then BURST_WRITE at a time) they arrive in at most eight reads; written one by one, in dozens.
    const t = script(`
      let reads = 0;
      process.stdin.on("data", (chunk) => { if (String(chunk).includes("tools/call")) reads++; });
      require("readline").createInterface({ input: process.stdin }).on("line", (line) => {
        const m = JSON.parse(line);
        if (m.id === undefined) return;
        const result = m.method === "initialize"
          ? { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "reads", version: "1" } }
          : { content: [{ type: "text", text: m.params.arguments.n + " " + reads }] };
        process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result }) + "\\n");
      });`);
    const client = newClient();
    await client.connect(t.transport);
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, n) => client.callTool({ name: "x", arguments: { n } })),
    );
    const texts = answers.map((a) => (a.content as Array<{ text: string }>)[0]!.text.split(" "));
    assert.deepEqual(
      texts.map(([n]) => Number(n)),
      Array.from({ length: 200 }, (_, n) => n),
    );
    const reads = Math.max(...texts.map(([, count]) => Number(count)));
    const writes = 1 + Math.ceil(199 / BURST_WRITE);
    assert.ok(reads <= writes, `the calls came in ${reads} reads: the first at once, the rest in ${writes - 1} writes`);
    await client.close();
  });

  test("progress notifications that arrive in the same chunk as the result all reach the caller first", async () => {
    // Answers every tools/call with three progress notifications and the result in one write.
    const t = script(`
      const out = (ms) => process.stdout.write(ms.map((m) => JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n").join(""));
      require("readline").createInterface({ input: process.stdin }).on("line", (line) => {
        const m = JSON.parse(line);
        if (m.id === undefined) return;
        if (m.method === "initialize") {
          return out([{ id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "burst", version: "1" } } }]);
        }
        const token = m.params._meta.progressToken;
        out([1, 2, 3].map((i) => ({ method: "notifications/progress", params: { progressToken: token, progress: i, total: 3 } }))
          .concat([{ id: m.id, result: { content: [{ type: "text", text: "done" }] } }]));
      });`);
    const client = newClient();
    const errors: Error[] = [];
    client.onerror = (error) => errors.push(error);
    await client.connect(t.transport);
    for (let round = 0; round < 5; round++) {
      const seen: number[] = [];
      const result = await client.callTool({ name: "x", arguments: {} }, undefined, {
        onprogress: (p) => seen.push(p.progress),
      });
      assert.deepEqual(result.content, [{ type: "text", text: "done" }]);
      assert.deepEqual(seen, [1, 2, 3], `round ${round}`);
    }
    assert.deepEqual(
      errors.map((e) => e.message),
      [],
      "no 'unknown token' errors",
    );
    await client.close();
  });
});
