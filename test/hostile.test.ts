/**
 * Hostile or broken servers cannot take pi down or eat the machine. Each test runs a fixture server that does one
 * hostile thing next to a healthy server in the same bridge, checks the bound the bridge puts on it, and checks that
 * the healthy server still answers.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import type { EventSink } from "../src/common/events.ts";
import { LogFile } from "../src/common/log-file.ts";
import { MAX_CONNECTIONS_PER_SERVER, ServerPool } from "../src/connection/http/http-pool.ts";
import { inRequestScope } from "../src/connection/http/request-scope.ts";
import { serverRows } from "../src/pi/server-rows.ts";
import { formatStartupSummary } from "../src/pi/status-format.ts";
import { startHostileHttp } from "./fixtures/hostile-http.ts";
import { startSse } from "./fixtures/http-servers.ts";
import {
  connectFailure,
  connectionFor,
  fixtureEntry,
  readLog,
  REPO_ROOT,
  tempDir,
  testBridge,
  waitFor,
} from "./helpers.ts";
import { registeredTools, runTool } from "./pi-tools.ts";
import { bundledFixture } from "./fixture-bundle.ts";

const HOSTILE_FIXTURE = bundledFixture(path.join(REPO_ROOT, "test", "fixtures", "hostile-stdio.mjs"));
const NPX_E404 = path.join(REPO_ROOT, "test", "fixtures", "npx-e404.sh");
const FAST = { initialDelay: 20, maxDelay: 100 };

function hostile(
  mode: string,
  env: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { command: process.execPath, args: [HOSTILE_FIXTURE, "--mode", mode], env, reconnect: FAST, ...extra };
}

/** Records events as the bridge publishes them on pi's bus. */
function recorder() {
  const events: Array<{ channel: string; payload: Record<string, unknown> }> = [];
  const sink: EventSink = (channel, payload) => events.push({ channel, payload });
  const of = (channel: string, server?: string) =>
    events
      .filter((e) => e.channel === channel && (server === undefined || e.payload.serverId === server))
      .map((e) => e.payload);
  return { sink, of };
}

/**
 * A bridge with `bad` (the hostile server) and `good` (a healthy one) from a real config file, its tools registered
 * as src/extension.ts registers them. `close` shuts it down and removes its files.
 */
async function twoServers(bad: Record<string, unknown>, options: { logger?: boolean } = {}) {
  const tmp = tempDir();
  const rec = recorder();
  const projectRoot = path.join(tmp.dir, "project");
  mkdirSync(path.join(projectRoot, ".pi"), { recursive: true });
  const config = { mcpServers: { bad, good: hostile("healthy") } };
  writeFileSync(path.join(projectRoot, ".pi", "mcp.json"), JSON.stringify(config));
  const logPath = path.join(tmp.dir, "mcp.log");
  const logger = options.logger ? new LogFile(logPath, { maxBytes: 256 * 1024 }) : undefined;
  const bridge = testBridge(tmp.dir, { projectRoot, events: rec.sink, logger });
  const { tools, registry } = registeredTools(bridge);
  await bridge.start();
  return {
    bridge,
    tools,
    registry,
    rec,
    logPath,
    dir: tmp.dir,
    bad: () => bridge.connection("bad")!,
    /** The healthy server answers a tool call. */
    goodAnswers: async () =>
      assert.equal((await runTool(tools.get("mcp_good_echo"), { text: "still here" })).text, "still here"),
    close: async () => {
      await bridge.shutdown();
      await logger?.close();
      tmp.cleanup();
    },
  };
}

function starts(log: string): number {
  return readLog(log).filter((e) => e.event === "start").length;
}

/** A package tarball in `dir` (its bin is `name`) whose postinstall runs `script`. */
function packageWithPostinstall(dir: string, name: string, script: string): string {
  const pkg = path.join(dir, name, "package");
  mkdirSync(pkg, { recursive: true });
  const manifest = { name, version: "1.0.0", bin: { [name]: "cli.js" }, scripts: { postinstall: script } };
  writeFileSync(path.join(pkg, "package.json"), JSON.stringify(manifest));
  writeFileSync(path.join(pkg, "cli.js"), "#!/usr/bin/env node\n", { mode: 0o755 });
  const tarball = path.join(dir, name, `${name}-1.0.0.tgz`);
  execFileSync("tar", ["czf", tarball, "-C", path.dirname(pkg), "package"]);
  return tarball;
}
// A bound on a hang only: its tests take about 45 s together on the idle machine, and over 120 s with the CPU loaded.
describe("hostile local servers", { timeout: 300_000 }, () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  test("a stdout line over the limit: refused with an error naming the limit, not 'exited with code 0', and counted toward maxRestarts", async () => {
    const log = path.join(tmp.dir, "huge-start.jsonl");
    const bad = hostile(
      "huge-line",
      { FIXTURE_LOG: log, HOSTILE_HUGE_AT: "start", HOSTILE_LINE_BYTES: String(2 * 1024 * 1024) },
      { maxMessageBytes: 1024 * 1024, maxRestarts: 2 },
    );
    const env = await twoServers(bad);
    try {
      await waitFor(() => env.bad().state.kind === "gaveUp", "the restarts to run out", 30_000);
      assert.equal(starts(log), 3, "the first start and 2 restarts, then no more");
      const error = env.bad().lastError ?? "";
      assert.match(error, /a message from the server was over the 1\.0 MB limit \(`maxMessageBytes`\)/);
      assert.doesNotMatch(error, /exited with code 0/);
      assert.deepEqual(
        env.rec.of("mcp.error", "bad").map((e) => e.attempt),
        [0, 1, 2],
      );
      await env.goodAnswers();
    } finally {
      await env.close();
    }
  });

  test("a line over the limit in the middle of a call: the call fails naming the limit, and the drop is reported as such", async () => {
    const log = path.join(tmp.dir, "huge-call.jsonl");
    const bad = hostile(
      "huge-line",
      { FIXTURE_LOG: log, HOSTILE_LINE_BYTES: String(2 * 1024 * 1024) },
      { maxMessageBytes: 1024 * 1024, maxRestarts: 3 },
    );
    const env = await twoServers(bad);
    try {
      assert.equal(env.bad().status, "connected");
      await assert.rejects(runTool(env.tools.get("mcp_bad_huge")), /over the 1\.0 MB limit/);
      const reasons = env.rec.of("mcp.disconnected", "bad").map((e) => String(e.reason));
      assert.ok(reasons.length >= 1);
      for (const reason of reasons) assert.match(reason, /a message from the server was over the 1\.0 MB limit/);
      const crashed = env.rec.of("mcp.local.crashed", "bad").map((e) => String(e.reason));
      for (const reason of crashed) assert.doesNotMatch(reason, /exited with code/);
      // Restarted once, and the call that produced the line was not sent to the new process (it would do it again).
      await waitFor(() => env.bad().status === "connected", "the restart");
      assert.equal(starts(log), 2, "one restart, no call sent again to make another");
      await env.goodAnswers();
    } finally {
      await env.close();
    }
  });

  test("a server that crashes after every good connect is restarted maxRestarts times, counting on, then left down", async () => {
    const log = path.join(tmp.dir, "crash-loop.jsonl");
    const bad = hostile("crash-after-connect", { FIXTURE_LOG: log, HOSTILE_CRASH_MS: "50" }, { maxRestarts: 3 });
    const env = await twoServers(bad);
    try {
      await waitFor(() => env.bad().state.kind === "gaveUp", "the restarts to run out", 30_000);
      assert.equal(starts(log), 4, "the first start and 3 restarts");
      // Each restart is the next attempt, not attempt 1 again.
      assert.deepEqual(
        env.rec.of("mcp.connecting", "bad").map((e) => e.attempt),
        [0, 1, 2, 3],
      );
      assert.equal(env.bad().status, "disconnected");
      await assert.rejects(
        runTool(env.tools.get("mcp_bad_echo"), { text: "x" }),
        /was not restarted again after 3 restart attempts.*exited with code 1/s,
      );
      await env.goodAnswers();
      assert.equal(starts(log), 4, "still no further start");
    } finally {
      await env.close();
    }
  });

  // Its pid and the time differ in each complaint: the same failure still. With nothing known of its revision, the
  // first start asks with the revision probe, and when that start dies the server is started again at once with
  // `initialize` alone: that second start failing the same way is the second failure, in the first attempt. Pinned to a
  // revision, it starts once an attempt.
  for (const [setting, extra, firstAttempts] of [
    ["nothing known of its revision", {}, [0]],
    ["pinned to a revision", { protocolVersion: "2025-11-25" }, [0, 1]],
  ] as const)
    test(`a server that fails to start the same way twice is not restarted a third time, and says why (${setting})`, async () => {
      const tmp = tempDir();
      const log = path.join(tmp.dir, "starts.log");
      const entry = { ...fixtureEntry("crash-on-start"), env: { FIXTURE_LOG: log }, reconnect: FAST, maxRestarts: 5 };
      const env = await twoServers({ ...entry, ...extra });
      try {
        await waitFor(() => env.bad().state.kind === "gaveUp", "the bridge to give up", 30_000);
        const attempts = () => env.rec.of("mcp.connecting", "bad").map((e) => e.attempt);
        assert.deepEqual(attempts(), firstAttempts);
        assert.equal(starts(log), 2, "two starts");
        const errors = env.rec.of("mcp.error", "bad");
        const last = errors.at(-1);
        for (const early of errors.slice(0, -1)) {
          assert.doesNotMatch(String(early.error), /failed the same way/);
          assert.notEqual(early.retryIn, null, "a first failure is retried");
        }
        assert.equal(last?.retryIn, null, "the second, the same, is not");
        assert.match(
          String(last?.error),
          /exited with code 3 .*It failed the same way at its last start, so it was not restarted again: `\/mcp reconnect bad` starts it once the cause is fixed\nLast stderr lines:\n.*told to crash on start \(pid \d+/s,
        );
        assert.match(env.bad().lastError ?? "", /failed the same way at its last start/);
        assert.equal(env.bad().status, "error", "not merely disconnected: retrying was ruled out");
        // The user fixed it (or not): a reconnect starts it again, with a fresh comparison, and no probe.
        await env.bridge
          .connection("bad")!
          .reconnect()
          .catch(() => undefined);
        await waitFor(() => env.bad().state.kind === "gaveUp", "the bridge to give up again", 30_000);
        assert.deepEqual(attempts(), [...firstAttempts, 0, 1]);
        assert.equal(starts(log), 4);
        await env.goodAnswers();
      } finally {
        await env.close();
        tmp.cleanup();
      }
    });

  // A network that is down now may be up in a moment (all Node's fetch says where a server prints no cause), and a port
  // another process holds may be free: the same failure each time, retried all the same.
  for (const [what, printed, said] of [
    [
      "cannot reach a host",
      "Error: could not load the spec: fetch failed",
      /could not reach a host it needs \(fetch failed\)/,
    ],
    ["finds its port in use", "Error: listen EADDRINUSE: address already in use :::3000", /EADDRINUSE/],
  ] as const)
    test(`a server that ${what}, the same way each time, is restarted until its restarts run out`, async () => {
      const exit = `console.error(${JSON.stringify(printed)}); process.exit(1)`;
      const env = await twoServers({ command: process.execPath, args: ["-e", exit], reconnect: FAST, maxRestarts: 2 });
      try {
        await waitFor(() => env.bad().state.kind === "gaveUp", "the restarts to run out", 30_000);
        assert.deepEqual(
          env.rec.of("mcp.connecting", "bad").map((e) => e.attempt),
          [0, 1, 2],
        );
        assert.match(env.bad().lastError ?? "", said);
        assert.doesNotMatch(env.bad().lastError ?? "", /failed the same way/);
      } finally {
        await env.close();
      }
    });

  test("a tool list the MCP schema refuses: the error says what is wrong with it, not how the bridge then ended the process", async () => {
    const env = await twoServers(hostile("invalid-list", {}, { maxRestarts: 5 }));
    try {
      await waitFor(() => env.bad().state.kind === "gaveUp", "the bridge to give up", 30_000);
      const error = env.bad().lastError ?? "";
      assert.match(
        error,
        /^MCP server 'bad' failed to connect: Invalid result for tools\/list: tools\.0\.inputSchema\.type: [^;]+; tools\.1\.inputSchema\.type: [^;]+; tools\.2\.inputSchema\.type: [^;]+; and 2 more \(the server's answer does not follow the MCP schema/,
      );
      assert.doesNotMatch(error, /killed by|exited with/);
      // The same wrong answer at its second start: not a third.
      assert.deepEqual(
        env.rec.of("mcp.connecting", "bad").map((e) => e.attempt),
        [0, 1],
      );
      await env.goodAnswers();
    } finally {
      await env.close();
    }
  });

  test("a tool list refused because the server could not reach its API: the error names the host, and the server is restarted, as the network may come back", async () => {
    const env = await twoServers(hostile("offline-list", {}, { maxRestarts: 2 }));
    try {
      await waitFor(() => env.bad().state.kind === "gaveUp", "the restarts to run out", 30_000);
      assert.match(
        env.bad().lastError ?? "",
        /^MCP server 'bad' failed to connect: Failed to fetch remote tools .*\(the server could not reach api\.example\.invalid \(ENOTFOUND\): check that this machine reaches it \(network, DNS, proxy or firewall\)\)/,
      );
      // Not given up after the second start as a wrong answer repeated would be.
      assert.deepEqual(
        env.rec.of("mcp.connecting", "bad").map((e) => e.attempt),
        [0, 1, 2],
      );
      await env.goodAnswers();
    } finally {
      await env.close();
    }
  });

  test("a server whose start fails differently each time is restarted until its restarts run out", async () => {
    const env = await twoServers({
      ...fixtureEntry("crash-on-start"),
      env: { FIXTURE_CRASH_WORDS: "vary" },
      reconnect: FAST,
      maxRestarts: 3,
    });
    try {
      await waitFor(() => env.bad().state.kind === "gaveUp", "the restarts to run out", 30_000);
      const attempts = env.rec.of("mcp.connecting", "bad").map((e) => e.attempt);
      assert.deepEqual(attempts, [0, 1, 2, 3], "the first start and 3 restarts");
      assert.doesNotMatch(String(env.rec.of("mcp.error", "bad").at(-1)?.error), /failed the same way/);
    } finally {
      await env.close();
    }
  });

  test("a server that says its tool list changed whenever it is read is read at most once a second", async () => {
    const log = path.join(tmp.dir, "relist.jsonl");
    const env = await twoServers(hostile("relist", { FIXTURE_LOG: log }));
    try {
      const lists = () => readLog(log).filter((e) => e.event === "list");
      // Read afresh at once after each change it says, this took a few milliseconds.
      await waitFor(() => lists().length >= 4, "three reads after the first", 30_000);
      // Two intervals of a second lie between the second read and the fourth; the server's clock sees them less the
      // time the second request took to reach it, which a margin of half a second leaves room for.
      const at = lists().map((e) => e.at as number);
      assert.ok(at[3]! - at[1]! >= 1500, `the fourth read came ${at[3]! - at[1]!} ms after the second`);
      assert.equal(env.bad().status, "connected");
      await env.goodAnswers();
    } finally {
      await env.close();
    }
  });

  test("the restart count starts again once a server has stayed up for the stable period", async () => {
    const log = path.join(tmp.dir, "stable.jsonl");
    const events = recorder();
    // Up for 400 ms each time, longer than the 100 ms stable period: every crash is a first one.
    const connection = connectionFor(
      "steady",
      hostile("crash-after-connect", { FIXTURE_LOG: log, HOSTILE_CRASH_MS: "400" }, { maxRestarts: 1 }),
      {
        events: events.sink,
        stableAfterMs: 100,
      },
    );
    try {
      await connection.connect();
      await waitFor(() => starts(log) >= 4, "more restarts than maxRestarts, each after a stable period", 30_000);
      assert.notEqual(connection.state.kind, "gaveUp");
      for (const attempt of events
        .of("mcp.connecting")
        .map((e) => e.attempt)
        .slice(1))
        assert.equal(attempt, 1);
    } finally {
      await connection.close();
    }
  });

  test("tools per server and schema size are capped, with one warning naming the server", async () => {
    const env = await twoServers(hostile("many-tools"));
    try {
      const registered = env.registry.toolsOf("bad");
      assert.equal(registered.length, 500, "the default maxTools");
      const names = new Set(registered.map((t) => t.originalName));
      assert.equal(names.has("fat"), false, "a 2 MB schema is left out");
      assert.equal(names.has("deep"), false, "a schema nested 5,000 levels is left out");
      const warnings = env.bad().warnings;
      assert.equal(warnings.length, 1, "one warning for the server");
      assert.match(warnings[0]!, /it lists 600 usable tools; only the first 500 are registered \(`maxTools`\)/);
      assert.match(
        warnings[0]!,
        /1 tool left out because the input schema is over the 64\.0 KB limit \(`maxSchemaBytes`\): 'fat' \(2\.\d MB\)/,
      );
      assert.match(warnings[0]!, /1 tool left out because the input schema is nested deeper than 64 levels: 'deep'/);
      const summary =
        formatStartupSummary(
          serverRows(env.bridge, env.registry, process.env),
          env.bridge.problems,
          env.registry.warnings,
        ) ?? "";
      assert.equal(summary.split("\n").filter((line) => line.includes("maxTools")).length, 1);
      assert.match(summary, /! bad: it lists 600 usable tools/);
      assert.equal(
        (await runTool(env.tools.get("mcp_bad_tool_499"), { n: 1 })).text,
        "(no output)",
        "a registered tool can be called",
      );
      await env.goodAnswers();
    } finally {
      await env.close();
    }
  });

  test("maxTools and maxSchemaBytes are configurable", async () => {
    const env = await twoServers(
      hostile("many-tools", { HOSTILE_TOOLS: "20" }, { maxTools: 10, maxSchemaBytes: 4 * 1024 * 1024 }),
    );
    try {
      const names = env.registry.toolsOf("bad").map((t) => t.originalName);
      assert.equal(names.length, 10);
      // `fat` fits in the raised maxSchemaBytes and counts; `deep` is still too deep (that bound is not configurable).
      assert.match(env.bad().warnings[0]!, /it lists 21 usable tools; only the first 10 are registered/);
      assert.doesNotMatch(env.bad().warnings[0]!, /maxSchemaBytes/);
      await env.goodAnswers();
    } finally {
      await env.close();
    }
  });

  test("a notification flood is bounded: the healthy server answers meanwhile and the log stays within its size", async () => {
    const env = await twoServers(hostile("flood"), { logger: true });
    try {
      const flood = runTool(env.tools.get("mcp_bad_flood"), { count: 100_000 });
      await env.goodAnswers();
      assert.equal((await flood).text, "sent 100000 notifications");
      // The flooding server itself still answers afterwards.
      assert.equal((await runTool(env.tools.get("mcp_bad_echo"), { text: "after" })).text, "after");
      await env.goodAnswers();
      assert.ok(statSync(env.logPath).size <= 256 * 1024 + 4096, "the log is rotated at its size limit");
    } finally {
      await env.close();
    }
  });

  test("a launcher that fails for good (npx E404, command not found, npx's copy incomplete) is not retried", async () => {
    const log = path.join(tmp.dir, "e404.jsonl");
    const env = await twoServers({ command: NPX_E404, env: { FIXTURE_LOG: log }, reconnect: FAST });
    const connection = connectionFor("shell", {
      command: "sh",
      args: ["-c", "no-such-command-for-mcp-bridge-tests"],
      reconnect: FAST,
    });
    // What Node prints when npx runs a package whose install was stopped partway.
    const npxDir = "/home/u/.npm/_npx/0123456789abcdef";
    const partial = connectionFor("partial", {
      command: "sh",
      args: [
        "-c",
        `echo "Error: Cannot find module '@opentelemetry/core'" >&2; echo "  requireStack: [ '${npxDir}/node_modules/a/index.js' ]" >&2; exit 1`,
      ],
      reconnect: FAST,
    });
    try {
      await assert.rejects(
        partial.connect(),
        new RegExp(`npx's copy of its package in ${npxDir} is missing a module .*; delete that folder, then reconnect`),
      );
      assert.equal(partial.state.kind, "gaveUp");
      const bad = env.bad();
      assert.equal(bad.state.kind, "gaveUp", "given up at once");
      assert.equal(starts(log), 1, "started once, not retried");
      assert.equal(env.rec.of("mcp.connecting", "bad").length, 1);
      assert.match(bad.lastError ?? "", /the package it runs does not exist in the npm registry \(npm E404\)/);
      assert.match(bad.lastError ?? "", /not retried/);
      const summary = formatStartupSummary(serverRows(env.bridge, env.registry, process.env), [], []) ?? "";
      assert.equal(summary.match(/not retried/g)?.length, 1, `the startup line says it once: ${summary}`);
      await assert.rejects(
        connection.connect(),
        /the program 'no-such-command-for-mcp-bridge-tests' it runs was not found \(exit code 127\)/,
      );
      assert.equal(connection.state.kind, "gaveUp");
      await env.goodAnswers();
    } finally {
      await Promise.all([connection.close(), partial.close()]);
      await env.close();
    }
  });

  test("npx whose package's install script fails, which npm 11 does not print: npm's log names the script; not retried", async () => {
    // A package whose postinstall fails, as puppeteer's does where it cannot download its browser.
    const script = `node -e "console.error('cannot download chrome'); process.exit(1)"`;
    const tarball = packageWithPostinstall(tmp.dir, "failpost", script);
    const cache = path.join(tmp.dir, "npm-cache");
    const env = { npm_config_cache: cache, npm_config_audit: "false", npm_config_update_notifier: "false" };
    const connection = connectionFor("failpost", {
      command: "npx",
      args: ["-y", `--package=${tarball}`, "failpost"],
      env,
      reconnect: FAST,
    });
    const home = path.join(tmp.dir, "home");
    mkdirSync(home);
    writeFileSync(path.join(home, ".npmrc"), "cache=~/moved-cache\n");
    const moved = connectionFor("moved", {
      ...{ command: "npx", args: ["-y", `--package=${tarball}`, "failpost"], reconnect: FAST },
      env: { HOME: home, npm_config_audit: "false", npm_config_update_notifier: "false" },
    });
    let flaggedConnection: ReturnType<typeof connectionFor> | undefined;
    try {
      const quoted = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      await assert.rejects(
        connection.connect(),
        new RegExp(
          `npx could not install its package: the \`postinstall\` script of failpost@1\\.0\\.0 \\(\`${quoted(script)}\`\\) ` +
            `exited with code 1 \\(npm's log: ${quoted(path.join(cache, "_logs"))}/.*-debug-0\\.log\\); ` +
            `run \`npx --foreground-scripts -y --package=${quoted(tarball)} failpost\` in a terminal .* Restarting would not help`,
        ),
      );
      assert.equal(connection.state.kind, "gaveUp", "not retried: each try would install it again");
      assert.equal(readdirSync(path.join(cache, "_logs")).length, 1, "npx ran once");
      // The same with the cache moved in the user's npmrc (`npm config set cache …`), as npm itself reads it.
      await assert.rejects(
        moved.connect(),
        new RegExp(`\\(npm's log: ${quoted(path.join(home, "moved-cache", "_logs"))}/`),
      );
      // And moved on npx's command line, before the package.
      const flagged = path.join(tmp.dir, "flagged-cache");
      const args = ["-y", "--cache", flagged, `--package=${tarball}`, "failpost"];
      const quiet = { npm_config_audit: "false", npm_config_update_notifier: "false" };
      flaggedConnection = connectionFor("flagged", { command: "npx", args, env: quiet, reconnect: FAST });
      await assert.rejects(
        flaggedConnection.connect(),
        new RegExp(`\\(npm's log: ${quoted(path.join(flagged, "_logs"))}/`),
      );
    } finally {
      await Promise.all([connection.close(), moved.close(), flaggedConnection?.close()]);
    }
  });
  test("npx that leaves out an optional dependency whose install fails, which the server then says it lacks: not 'could not install', and not retried", async () => {
    // As @bytebase/dbhub with better-sqlite3, whose prebuilt download fails offline: npm goes on without it, the
    // program runs and exits saying the driver is not installed, and every later start of npx's copy does the same.
    const native = path.join(tmp.dir, "optnative", "package");
    mkdirSync(native, { recursive: true });
    const failing = `node -e "console.error('no prebuilt binary'); process.exit(1)"`;
    writeFileSync(
      path.join(native, "package.json"),
      JSON.stringify({ name: "optnative", version: "1.0.0", scripts: { install: failing } }),
    );
    const nativeTarball = path.join(tmp.dir, "optnative", "optnative-1.0.0.tgz");
    execFileSync("tar", ["czf", nativeTarball, "-C", path.dirname(native), "package"]);
    const app = path.join(tmp.dir, "optapp", "package");
    mkdirSync(app, { recursive: true });
    const manifest = {
      ...{ name: "optapp", version: "1.0.0", bin: { optapp: "cli.js" } },
      optionalDependencies: { optnative: `file:${nativeTarball}` },
    };
    writeFileSync(path.join(app, "package.json"), JSON.stringify(manifest));
    const says = `console.error('Skipping SQLite connector: driver package "optnative" not installed.');`;
    writeFileSync(path.join(app, "cli.js"), `#!/usr/bin/env node\n${says}\nprocess.exit(1);\n`, { mode: 0o755 });
    const tarball = path.join(tmp.dir, "optapp", "optapp-1.0.0.tgz");
    execFileSync("tar", ["czf", tarball, "-C", path.dirname(app), "package"]);
    const cache = path.join(tmp.dir, "optional-cache");
    const env = { npm_config_cache: cache, npm_config_audit: "false", npm_config_update_notifier: "false" };
    const entry = { command: "npx", args: ["-y", `--package=${tarball}`, "optapp"], env, reconnect: FAST };
    const first = connectionFor("opt", entry);
    try {
      const quoted = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      const copy = `${quoted(path.join(cache, "_npx"))}/[0-9a-f]+`;
      const { message, state } = await connectFailure(first);
      assert.doesNotMatch(message, /could not install its package/);
      assert.match(
        message,
        new RegExp(
          `its output names 'optnative', an optional dependency of its package that npx's copy of it in ${copy} does ` +
            `not have, whose \`install\` script \\(\`${quoted(failing)}\`\\) exited with code 1 when npx installed it ` +
            `\\(npm's log: .*\\): npm leaves out .*; delete that folder, run \`npx --foreground-scripts -y ` +
            `--package=${quoted(tarball)} optapp\` in a terminal to see why 'optnative' does not install .*Restarting would not help`,
        ),
      );
      assert.equal(state, "gaveUp", "not retried: each start runs the same copy");
    } finally {
      await first.close();
    }
  });
});

describe("npx servers starting together", { timeout: 120_000 }, () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  test("a package with no program to run (a library, or the wrong name): said so, and not retried", async () => {
    const pkg = path.join(tmp.dir, "nobin", "package");
    mkdirSync(pkg, { recursive: true });
    writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: "nobin", version: "1.0.0" }));
    const tarball = path.join(tmp.dir, "nobin", "nobin-1.0.0.tgz");
    execFileSync("tar", ["czf", tarball, "-C", path.dirname(pkg), "package"]);
    const env = { npm_config_cache: path.join(tmp.dir, "nobin-cache"), npm_config_update_notifier: "false" };
    const connection = connectionFor("lib", { command: "npx", args: ["-y", `file:${tarball}`], env, reconnect: FAST });
    try {
      const { message, state } = await connectFailure(connection);
      assert.match(message, /^MCP server 'lib': npx found no program to run in its package .*check the package's name/);
      assert.equal(state, "gaveUp");
    } finally {
      await connection.close();
    }
  });

  test("npm runs after a failed install's own (other servers starting) neither delete its log nor hide it", async () => {
    // npm keeps its 10 newest logs; a dozen npm runs while this install runs stand for a dozen npx servers starting.
    const others = "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do npm config get registry > /dev/null; done";
    const tarball = packageWithPostinstall(tmp.dir, "crowded", `${others}; exit 1`);
    const cache = path.join(tmp.dir, "npm-cache");
    const env = { npm_config_cache: cache, npm_config_audit: "false", npm_config_update_notifier: "false" };
    const connection = connectionFor("crowded", {
      ...{ command: "npx", args: ["-y", `--package=${tarball}`, "crowded"], env, reconnect: FAST },
    });
    try {
      const { message, state } = await connectFailure(connection);
      assert.match(message, /npx could not install its package: the `postinstall` script of crowded@1\.0\.0/);
      assert.equal(state, "gaveUp");
      assert.ok(readdirSync(path.join(cache, "_logs")).length > 10, "the other runs' logs are there too");
    } finally {
      await connection.close();
    }
  });
});

describe("hostile remote servers", { timeout: 120_000 }, () => {
  // The schedule's timers are unref'd; this stands in for pi's own handles.
  let keepAlive: NodeJS.Timeout;
  before(() => {
    keepAlive = setInterval(() => {}, 1000);
  });
  after(() => clearInterval(keepAlive));

  test("timed-out and cancelled calls close their response stream", async () => {
    const server = await startHostileHttp();
    const env = await twoServers({ url: server.url, requestTimeout: 1000, reconnect: FAST });
    try {
      const endless = env.tools.get("mcp_bad_endless");
      for (let i = 0; i < 5; i++) await assert.rejects(runTool(endless), /did not answer 'endless' within 1 s/);
      const cancel = new AbortController();
      const cancelled = runTool(endless, {}, cancel.signal);
      await waitFor(() => server.streamsStarted() === 6, "the sixth stream to start");
      cancel.abort();
      await assert.rejects(cancelled, /cancelled/);
      // As the server sees it: every stream it opened has been closed by the client.
      await waitFor(() => server.openStreams() === 0, "every endless stream to be closed");
      assert.equal(env.bad().status, "connected", "the connection itself is fine");
      assert.equal((await runTool(env.tools.get("mcp_bad_echo"), { text: "ok" })).text, "ok");
      await env.goodAnswers();
    } finally {
      await env.close();
      await server.close();
    }
  });

  test("a request scope ties only its own pool's fetches: work started inside an ended call (a reconnect) is not cut", async () => {
    const server = await startHostileHttp();
    const oldPool = new ServerPool();
    const newPool = new ServerPool();
    const ping = (pool: ServerPool) =>
      pool.fetch(server.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: "{}",
      });
    try {
      // What a reconnect started from an error handler inside a call would do, once the call is over.
      let callEnded!: () => void;
      const ended = new Promise<void>((resolve) => (callEnded = resolve));
      let later!: Promise<unknown>;
      await inRequestScope(oldPool, async () => {
        // Started inside the call, it runs on in the call's context after the call is over.
        later = (async () => {
          await ended;
          return [
            await ping(newPool).then((r) => r.status),
            await ping(oldPool).then(
              () => "not cut",
              (e: Error) => e.name,
            ),
          ];
        })();
      });
      callEnded();
      assert.deepEqual(
        await later,
        [400, "AbortError"],
        "the new pool's request goes through; the ended call's own pool is cut",
      );
    } finally {
      await oldPool.destroy();
      await newPool.destroy();
      await server.close();
    }
  });

  test("an endless reply to initialize is cut at the connect timeout and its stream closed", async () => {
    const server = await startHostileHttp({ endlessInitialize: true });
    const env = await twoServers({ url: server.url, timeout: 1000, reconnect: false });
    try {
      assert.match(
        env.bad().lastError ?? "",
        /no answer to the MCP handshake after [\d.]+ s, when its `timeout` of 1 s ran out/,
      );
      assert.ok(server.streamsStarted() >= 1);
      await waitFor(() => server.openStreams() === 0, "the initialize stream to be closed");
      await env.goodAnswers();
    } finally {
      await env.close();
      await server.close();
    }
  });

  describe("a message over maxMessageBytes", () => {
    const LIMIT = { maxMessageBytes: 1024 * 1024, reconnect: FAST };
    const overLimit = /a message from the server was over the 1\.0 MB limit \(`maxMessageBytes`\)/;

    for (const tool of ["huge_json", "huge_event"]) {
      test(`${tool}: the call fails naming the limit and its response is closed; the server's other calls go on`, async () => {
        const server = await startHostileHttp();
        const env = await twoServers({ url: server.url, ...LIMIT });
        try {
          // 64 MB, in one JSON body or one SSE event.
          await assert.rejects(runTool(env.tools.get(`mcp_bad_${tool}`)), overLimit);
          await waitFor(() => server.repliesCut() === 1, "the server to see its reply closed");
          await waitFor(() => server.cancellations() === 1, "the server to be told the call is cancelled");
          assert.equal(server.repliesFinished(), 0);
          assert.equal(env.bad().status, "connected", "one message, not the connection");
          assert.equal((await runTool(env.tools.get("mcp_bad_echo"), { text: "ok" })).text, "ok");
          await env.goodAnswers();
        } finally {
          await env.close();
          await server.close();
        }
      });
    }

    test("a call whose arguments hold a notification's method is a call: over the limit, it fails and the session stays", async () => {
      const server = await startHostileHttp();
      const env = await twoServers({ url: server.url, ...LIMIT });
      try {
        const args = { about: { method: "notifications/message" } };
        await assert.rejects(runTool(env.tools.get("mcp_bad_huge_json"), args), overLimit);
        assert.equal(env.bad().status, "connected", "one message, not the connection");
      } finally {
        await env.close();
        await server.close();
      }
    });

    test("a gzip-coded answer is counted as it is read, decoded: 4 MB sent as a few KB fails; one under the limit arrives whole", async () => {
      const server = await startHostileHttp();
      const env = await twoServers({ url: server.url, ...LIMIT });
      try {
        await assert.rejects(runTool(env.tools.get("mcp_bad_gzip_json")), overLimit);
        assert.equal(env.bad().status, "connected", "one message, not the connection");
        const small = await runTool(env.tools.get("mcp_bad_gzip_json"), { bytes: 8192 });
        assert.equal(small.text, "x".repeat(8192));
        await env.goodAnswers();
      } finally {
        await env.close();
        await server.close();
      }
    });

    test("many small SSE events adding up to more than the limit are not cut", async () => {
      const server = await startHostileHttp();
      const env = await twoServers({ url: server.url, ...LIMIT });
      try {
        // 40 progress events of 64 KB: 2.5 MB on one stream.
        assert.equal((await runTool(env.tools.get("mcp_bad_many_events"), { count: 40 })).text, "done after 40 events");
        assert.equal(server.repliesFinished(), 1);
        assert.equal(server.repliesCut(), 0);
        await env.goodAnswers();
      } finally {
        await env.close();
        await server.close();
      }
    });

    test("legacy SSE: an event over the limit on the one stream ends the session as a drop naming the limit, and it reconnects", async () => {
      const server = await startSse();
      const env = await twoServers({ url: server.url, type: "sse", ...LIMIT });
      try {
        // The fixture's `big` answers 2 MB of text; a legacy SSE server sends every answer on its one standing stream.
        await assert.rejects(runTool(env.tools.get("mcp_bad_big"), { kb: 2048 }), overLimit);
        const reasons = env.rec.of("mcp.disconnected", "bad").map((e) => String(e.reason));
        assert.ok(reasons.length >= 1);
        for (const reason of reasons) assert.match(reason, overLimit);
        assert.equal((await runTool(env.tools.get("mcp_bad_echo"), { text: "back" })).text, "back");
        await env.goodAnswers();
      } finally {
        await env.close();
        await server.close();
      }
    });

    for (const form of ["json", "event"] as const) {
      test(`an initialize answer over the limit (${form}) fails the connect naming the limit and the setting`, async () => {
        const server = await startHostileHttp({ hugeInitialize: form });
        const env = await twoServers({ url: server.url, maxMessageBytes: 1024 * 1024, reconnect: false });
        try {
          const error = env.bad().lastError ?? "";
          assert.match(error, overLimit);
          assert.match(error, /, so the connection was closed \(raise `maxMessageBytes` for 'bad'/);
          await waitFor(() => server.repliesCut() === 1, "the server to see its reply closed");
          await env.goodAnswers();
        } finally {
          await env.close();
          await server.close();
        }
      });
    }
  });

  test("1,000 concurrent calls share a bounded pool of connections and raise no MaxListenersExceededWarning", async () => {
    const server = await startHostileHttp();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    // What is tested is the pool, not the machine's speed: a call waits in the pool's queue on the clock of its
    // `requestTimeout`, and a thousand of them on a loaded 2-core machine took longer than the default minute.
    const env = await twoServers({ url: server.url, reconnect: FAST, requestTimeout: 600_000 });
    try {
      const echo = env.tools.get("mcp_bad_echo");
      // As pi runs the parallel tool calls of one turn: all with the turn's signal.
      const turn = new AbortController();
      const results = await Promise.all(
        Array.from({ length: 1000 }, (_, i) => runTool(echo, { text: `n${i}` }, turn.signal)),
      );
      assert.deepEqual(
        results.map((r) => r.text),
        Array.from({ length: 1000 }, (_, i) => `n${i}`),
      );
      // At once: a connection the server closed as idle (on a slow machine) is replaced by a new one.
      assert.ok(server.mostOpen() <= MAX_CONNECTIONS_PER_SERVER, `${server.mostOpen()} connections at once`);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(
        warnings.filter((w) => w.name === "MaxListenersExceededWarning").map((w) => w.message),
        [],
      );
      await env.goodAnswers();
    } finally {
      process.off("warning", onWarning);
      await env.close();
      await server.close();
    }
  });
});
