/**
 * Local servers that take their time to start, under `protocolVersion: "auto"`: nothing shorter than the server's own
 * `initTimeout` decides whether it connects, the revision probe is judged only once the server has answered, and
 * every message about a connect that failed names the timer that fired and the time it took. Real child processes.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { BridgeError } from "../src/common/errors.ts";
import { PROBE_SILENCE_MS } from "../src/connection/protocol-negotiation.ts";
import type { ServerConnection } from "../src/connection/server-connection.ts";
import { bundledFixture } from "./fixture-bundle.ts";
import { connectionFor, readLog, REPO_ROOT, tempDir } from "./helpers.ts";

const SLOW_START = path.join(REPO_ROOT, "test", "fixtures", "slow-start.mjs");
const MODERN = path.join(REPO_ROOT, "test", "fixtures", "modern-server.ts");
/** Deaf for longer than the probe may stay silent: a window judged from the spawn would take it for an older server. */
const LONGER_THAN_THE_PROBE = PROBE_SILENCE_MS + 1500;

function slowStart(log: string, ...flags: string[]): Record<string, unknown> {
  return { command: process.execPath, args: [SLOW_START, ...flags], env: { FIXTURE_LOG: log } };
}

/** The methods the fixture read, in order, and how many times it started. */
function heard(log: string): { starts: number; methods: string[] } {
  const events = readLog(log);
  return {
    starts: events.filter((e) => e.event === "start").length,
    methods: events.filter((e) => e.event === "request").map((e) => String(e.method)),
  };
}

/** Connects, and returns how long it took (ms) with the error it failed with. */
async function failedConnect(connection: ServerConnection): Promise<{ error: BridgeError; elapsedMs: number }> {
  const started = Date.now();
  const error = await connection.connect().then(
    () => assert.fail("the connect should have failed"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof BridgeError, String(error));
  return { error, elapsedMs: Date.now() - started };
}

/** The seconds a message reports (`after 2.5 s`), checked against what was measured around it. */
function reportedAfter(message: string, at_least_ms: number, measuredMs: number): number {
  const match = /after (\d+(?:\.\d)?) s/.exec(message);
  assert.ok(match, `no "after N s" in: ${message}`);
  const reported = Number(match[1]) * 1000;
  assert.ok(reported >= at_least_ms - 50, `reported ${reported} ms, but the timer was ${at_least_ms} ms: ${message}`);
  assert.ok(
    reported <= measuredMs + 100,
    `reported ${reported} ms, more than the ${measuredMs} ms measured: ${message}`,
  );
  return reported;
}

describe("slow local servers under protocolVersion auto", { timeout: 120_000 }, () => {
  const tmp = tempDir("mcp-bridge-slow-");
  after(() => tmp.cleanup());

  test("a server deaf for longer than the probe's window connects on one process: a ping first, the probe once it answered", async () => {
    const log = path.join(tmp.dir, "deaf.jsonl");
    const connection = connectionFor("deaf", slowStart(log, "--delay", String(LONGER_THAN_THE_PROBE)));
    try {
      await connection.connect();
      assert.equal(connection.protocolVersion, "2025-11-25");
      assert.deepEqual(
        connection.tools.map((t) => t.name),
        ["hello"],
      );
      assert.deepEqual(heard(log), { starts: 1, methods: ["ping", "server/discover", "initialize", "tools/list"] });
    } finally {
      await connection.close();
    }
  });

  test("a slow 2026-07-28 server is recognised as one, not taken for an older server by its silence while it starts", async () => {
    const seconds = (LONGER_THAN_THE_PROBE / 1000).toFixed(1);
    const command = `sleep ${seconds}; exec "${process.execPath}" "${bundledFixture(MODERN)}" --stdio --state "${path.join(tmp.dir, "modern-state")}"`;
    const connection = connectionFor("modern", { command: "sh", args: ["-c", command], cwd: REPO_ROOT });
    try {
      await connection.connect();
      assert.equal(connection.protocolVersion, "2026-07-28");
      assert.ok(connection.tools.some((t) => t.name === "echo"));
    } finally {
      await connection.close();
    }
  });

  test("a server that ignores methods it does not know before initialize is asked with initialize after its silence, on the same process", async () => {
    const log = path.join(tmp.dir, "ignoring.jsonl");
    const connection = connectionFor("ignoring", slowStart(log, "--ignore-unknown", "--delay", "500"));
    try {
      await connection.connect();
      assert.equal(connection.protocolVersion, "2025-11-25");
      assert.deepEqual(heard(log), { starts: 1, methods: ["ping", "server/discover", "initialize", "tools/list"] });
    } finally {
      await connection.close();
    }
  });

  test("what worked is remembered: the next start asks with initialize at once (no ping, no probe)", async () => {
    const log = path.join(tmp.dir, "remembered.jsonl");
    const connection = connectionFor("remembered", slowStart(log, "--delay", "300"), {
      recallProtocol: () => "2025-11-25",
    });
    try {
      await connection.connect();
      assert.deepEqual(heard(log).methods, ["initialize", "tools/list"]);
    } finally {
      await connection.close();
    }
  });

  test("a server that exits on any request before initialize, a ping too, is started once more and asked with initialize alone", async () => {
    const log = path.join(tmp.dir, "strict.jsonl");
    const connection = connectionFor("strict", slowStart(log, "--exit-before-initialize"));
    try {
      await connection.connect();
      assert.equal(connection.protocolVersion, "2025-11-25");
      assert.deepEqual(heard(log), { starts: 2, methods: ["ping", "initialize", "tools/list"] });
    } finally {
      await connection.close();
    }
  });
});

describe("a failed connect names the timer that fired and the time it took", { timeout: 120_000 }, () => {
  const tmp = tempDir("mcp-bridge-slow-msg-");
  const servers: Server[] = [];
  after(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    tmp.cleanup();
  });

  test("a process that says nothing: its initTimeout, the seconds it waited, and that it wrote nothing to stdout", async () => {
    const connection = connectionFor("mute", {
      ...slowStart(path.join(tmp.dir, "mute.jsonl"), "--delay", "600000"),
      initTimeout: 1500,
      maxRestarts: 0,
    });
    try {
      const { error, elapsedMs } = await failedConnect(connection);
      assert.equal(error.kind, "timeout");
      assert.match(
        error.message,
        /^MCP server 'mute': no answer to the MCP handshake after [\d.]+ s, when its `initTimeout` of 1\.5 s ran out; its process was running but had written nothing to stdout, so it was stopped\. Raise `initTimeout` for 'mute' in \S+ if it is just slow to start/,
      );
      reportedAfter(error.message, 1500, elapsedMs);
    } finally {
      await connection.close();
    }
  });

  test("a timeout written as `timeout` is named `timeout`", async () => {
    const connection = connectionFor("old", {
      ...slowStart(path.join(tmp.dir, "old.jsonl"), "--delay", "600000"),
      timeout: 1200,
      maxRestarts: 0,
    });
    try {
      const { error, elapsedMs } = await failedConnect(connection);
      assert.match(error.message, /when its `timeout` of 1\.2 s ran out/);
      assert.match(error.message, /Raise `timeout` for 'old'/);
      reportedAfter(error.message, 1200, elapsedMs);
    } finally {
      await connection.close();
    }
  });

  test("a process that answers but never completes initialize: it wrote to stdout, not the handshake", async () => {
    const connection = connectionFor("half", {
      ...slowStart(path.join(tmp.dir, "half.jsonl"), "--no-initialize"),
      initTimeout: 4000,
      maxRestarts: 0,
    });
    try {
      const { error, elapsedMs } = await failedConnect(connection);
      assert.match(
        error.message,
        /no answer to the MCP handshake after [\d.]+ s, when its `initTimeout` of 4 s ran out; it wrote to stdout but did not complete the handshake, so it was stopped/,
      );
      reportedAfter(error.message, 4000, elapsedMs);
    } finally {
      await connection.close();
    }
  });

  test("a server whose tool list never comes: the handshake completed, the tool list did not", async () => {
    const connection = connectionFor("listless", {
      ...slowStart(path.join(tmp.dir, "listless.jsonl"), "--no-tools-list"),
      initTimeout: 4000,
      maxRestarts: 0,
    });
    try {
      const { error, elapsedMs } = await failedConnect(connection);
      assert.match(
        error.message,
        /^MCP server 'listless' completed the MCP handshake, but its tool list had not arrived after [\d.]+ s, when its `initTimeout` of 4 s ran out, so it was stopped/,
      );
      reportedAfter(error.message, 4000, elapsedMs);
    } finally {
      await connection.close();
    }
  });

  test("a process that exits: its exit code, after how long, and its stderr", async () => {
    const connection = connectionFor("broken", {
      command: "sh",
      args: ["-c", "sleep 0.5; echo 'cannot open the database' >&2; exit 3"],
      maxRestarts: 0,
    });
    try {
      const { error, elapsedMs } = await failedConnect(connection);
      assert.match(
        error.message,
        /^MCP server 'broken': the process exited with code 3 after [\d.]+ s, before completing the MCP handshake; what it printed .* check `command`, `args` and `env` of 'broken'/,
      );
      assert.match(error.message, /Last stderr lines:\n {2}cannot open the database/);
      reportedAfter(error.message, 500, elapsedMs);
    } finally {
      await connection.close();
    }
  });

  test("a process that exits without a word: the command to run in a terminal, and the names its env sets", async () => {
    const connection = connectionFor("quiet", {
      ...{ command: "sh", args: ["-c", "sleep 0.2; exit 1"], env: { DB_HOST: "127.0.0.1", DB_PASS: "s3cret-pass-99" } },
      maxRestarts: 0,
    });
    try {
      const { error } = await failedConnect(connection);
      assert.match(
        error.message,
        /^MCP server 'quiet': the process exited with code 1 after [\d.]+ s, before completing the MCP handshake, and printed nothing to say why: check `command`, `args` and `env` of 'quiet' in .*, and run `sh -c 'sleep 0\.2; exit 1'` in a terminal with DB_HOST, DB_PASS set as its `env` sets them to see how it fails/,
      );
      assert.doesNotMatch(error.message, /s3cret-pass-99|Last stderr lines/);
    } finally {
      await connection.close();
    }
  });

  test("the command to run in a terminal hides a password given on it, even one with a quote in it", async () => {
    const password = "it's-s3cret-77";
    const connection = connectionFor("quoted", {
      ...{ command: "sh", args: ["-c", "sleep 0.2; exit 1", "sh", "--password", password] },
      maxRestarts: 0,
    });
    try {
      const { error } = await failedConnect(connection);
      assert.match(error.message, /and run `sh -c 'sleep 0\.2; exit 1' sh --password \*\*\*` in a terminal/);
      assert.doesNotMatch(error.message, /s3cret-77/);
    } finally {
      await connection.close();
    }
  });

  test("the command to run in a terminal hides a key given with --key (Smithery's CLI), --secret-key or --private-key", async () => {
    const keys = ["5f0c9a71-2b3d-4e5f-8a9b-0c1d2e3f4a5b", "sk-inline-7e1d", "pk-inline-3c9a"];
    const args = [
      "-c",
      "sleep 0.2; exit 1",
      "sh",
      "--key",
      keys[0]!,
      `--secret-key=${keys[1]}`,
      "--private-key",
      keys[2]!,
    ];
    const connection = connectionFor("keyed", { command: "sh", args, maxRestarts: 0 });
    try {
      const { error } = await failedConnect(connection);
      assert.match(error.message, /sh --key \*\*\* --secret-key=\*\*\* --private-key \*\*\*` in a terminal/);
      for (const key of keys) assert.ok(!error.message.includes(key), error.message);
    } finally {
      await connection.close();
    }
  });

  test("the command to run in a terminal hides a key in the path of a URL argument (mcp-remote's to Zapier)", async () => {
    const key = "NjNkNTc4ZDMtMjA0Zi00MjEzLWJhMmEtODJhZjRkNjU4NDI2OjE2Yzk0Zm==";
    const args = ["-c", "sleep 0.2; exit 1", "sh", `https://mcp.zapier.com/api/mcp/s/${key}/sse`];
    const connection = connectionFor("proxied", { command: "sh", args, maxRestarts: 0 });
    try {
      const { error } = await failedConnect(connection);
      assert.match(error.message, /sh https:\/\/mcp\.zapier\.com\/api\/mcp\/s\/\*\*\*\/sse` in a terminal/);
      assert.ok(!error.message.includes(key.slice(0, 20)), error.message);
    } finally {
      await connection.close();
    }
  });

  test("a remote server whose URL holds its key in its path (Zapier's): the messages name the URL without the key", async () => {
    const key = "NjNkNTc4ZDMtMjA0Zi00MjEzLWJhMmEtODJhZjRkNjU4NDI2OjE2Yzk0Zm==";
    const refusing = createServer((_req, res) => res.writeHead(404).end("not here"));
    servers.push(refusing);
    await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}/api/mcp/s/${key}/mcp`;
    const connection = connectionFor("zapier", { url, reconnect: { maxAttempts: 0 } });
    try {
      const { error } = await failedConnect(connection);
      assert.match(error.message, /^MCP server 'zapier' at http:\/\/127\.0\.0\.1:\d+\/api\/mcp\/s\/\*\*\*\/mcp/);
      for (const text of [error.message, connection.lastError ?? ""]) assert.ok(!text.includes(key.slice(0, 20)), text);
    } finally {
      await connection.close();
    }
  });

  test("a remote server that never answers: its `timeout`, the seconds it waited, nothing about stdout", async () => {
    const silent = createServer(() => undefined);
    servers.push(silent);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`;
    const connection = connectionFor("faraway", { url, timeout: 1000, reconnect: { maxAttempts: 0 } });
    try {
      const { error, elapsedMs } = await failedConnect(connection);
      assert.match(
        error.message,
        /^MCP server 'faraway' at http:\/\/127\.0\.0\.1:\d+\/mcp: no answer to the MCP handshake after [\d.]+ s, when its `timeout` of 1 s ran out\. Raise `timeout` for 'faraway'/,
      );
      assert.doesNotMatch(error.message, /stdout|stopped/);
      reportedAfter(error.message, 1000, elapsedMs);
    } finally {
      await connection.close();
    }
  });
});
