/**
 * Local servers over stdio: real child processes running the SDK-based fixture server.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import { BridgeError } from "../src/common/errors.ts";
import type { ServerConnection } from "../src/connection/server-connection.ts";
import { TINY_PNG } from "./fixtures/fixture-server.ts";
import { connectFailure, connectionFor, fixtureEntry, isAlive, readLog, tempDir, waitFor } from "./helpers.ts";
import { runTool, toolsOf } from "./pi-tools.ts";

type Tool = ToolDefinition;

describe("stdio: a working server", { timeout: 120_000 }, () => {
  const tmp = tempDir();
  const log = path.join(tmp.dir, "events.jsonl");
  let connection: ServerConnection;
  let tools: Map<string, Tool>;

  before(async () => {
    connection = connectionFor("fx", { ...fixtureEntry(), env: { FIXTURE_LOG: log }, requestTimeout: 5000 });
    await connection.connect();
    tools = toolsOf(connection);
  });
  after(async () => {
    await connection.close();
    tmp.cleanup();
  });

  test("lists its tools under mcp_<server>_<tool>", () => {
    assert.equal(connection.status, "connected");
    assert.equal(connection.transport, "stdio");
    assert.ok(tools.has("mcp_fx_echo"));
    assert.ok(tools.has("mcp_fx_crash_once"));
    assert.equal(tools.get("mcp_fx_echo")!.description, "Echo the text back");
    assert.equal(tools.get("mcp_fx_no_schema")!.description, "Tool 'no_schema' from MCP server 'fx'");
    assert.deepEqual(tools.get("mcp_fx_image")!.parameters, { type: "object", properties: {} });
  });

  test("calls a tool with its original name and returns its text", async () => {
    const { result, text } = await runTool(tools.get("mcp_fx_echo"), { text: "hello" });
    assert.equal(text, "hello");
    assert.deepEqual(result.details, {
      server: "fx",
      tool: "echo",
      provenance: { source: "mcp", serverId: "fx", originalName: "echo" },
    });
    const events = readLog(log).filter((e) => e.event === "call");
    assert.deepEqual(events.at(-1)!.name, "echo");
  });

  test("structured content is kept in details and shown when there is no text", async () => {
    const added = await runTool(tools.get("mcp_fx_add"), { a: 2, b: 3 });
    assert.equal(added.text, "5");
    assert.deepEqual((added.result.details as { structuredContent: unknown }).structuredContent, { sum: 5 });
    const structured = await runTool(tools.get("mcp_fx_structured"), {});
    assert.deepEqual(JSON.parse(structured.text), { temperature: 21.5, unit: "C" });
  });

  test("a text field named `data` in structured content has the server's secrets hidden, as any other text", async () => {
    const secret = "data-key-7c1e5a93";
    const leaky = connectionFor("leaky", { ...fixtureEntry(), env: { FIXTURE_DATA: secret } });
    try {
      await leaky.connect();
      const { text, result } = await runTool(toolsOf(leaky).get("mcp_leaky_structured"), {});
      assert.deepEqual(JSON.parse(text), { temperature: 21.5, unit: "C", data: "key ***" });
      assert.ok(!JSON.stringify(result).includes(secret), "nor in the details");
    } finally {
      await leaky.close();
    }
  });

  test("a password written inline under a *_PASS or *_PASSPHRASE key is hidden, even a plain word", async () => {
    const env = { SMTP_PASS: "hunter", GPG_PASSPHRASE: "correcthorse" };
    const leaky = connectionFor("pass", { ...fixtureEntry(), env });
    try {
      await leaky.connect();
      for (const name of Object.keys(env))
        assert.equal((await runTool(toolsOf(leaky).get("mcp_pass_env"), { name })).text, "***", name);
    } finally {
      await leaky.close();
    }
  });

  test("a secret with a lone surrogate in it (a JSON escape in the config) breaks neither the connect nor the calls", async () => {
    const odd = connectionFor("odd", { ...fixtureEntry(), env: { API_KEY: "k3y-\ud800-value" } });
    try {
      await odd.connect();
      assert.equal((await runTool(toolsOf(odd).get("mcp_odd_echo"), { text: "fine" })).text, "fine");
      assert.equal((await runTool(toolsOf(odd).get("mcp_odd_echo"), { text: "k3y-\ud800-value" })).text, "***");
    } finally {
      await odd.close();
    }
  });

  test("images reach pi as images", async () => {
    const { result } = await runTool(tools.get("mcp_fx_image"), {});
    assert.deepEqual(result.content, [
      { type: "text", text: "a tiny image" },
      { type: "image", data: TINY_PNG, mimeType: "image/png" },
    ]);
  });

  test("embedded resources and links", async () => {
    const text = (await runTool(tools.get("mcp_fx_resources"), {})).text;
    assert.match(text, /\[resource\] memo:\/\/notes\/today \(text\/plain\)\nbuy milk/);
    assert.match(text, /\[resource\] memo:\/\/blob\/1 \(application\/octet-stream\): binary, 5 B, not shown/);
    assert.match(text, /\[resource link\] memo:\/\/notes\/archive \(archive\) text\/plain/);
  });

  test("progress notifications are streamed through onUpdate", async () => {
    const { text, updates: texts } = await runTool(tools.get("mcp_fx_progress"), { steps: 3, delayMs: 5 });
    assert.equal(text, "done after 3 steps");
    // Every update arrives before the result, even when they come in one chunk (see the transport's drain()).
    assert.deepEqual(texts, ["progress 1/3: step 1", "progress 2/3: step 2", "progress 3/3: step 3"]);
  });

  test("an isError result becomes a thrown error carrying the server's text", async () => {
    await assert.rejects(runTool(tools.get("mcp_fx_fail"), {}), { message: "it failed on purpose" });
  });

  test("a JSON-RPC error from the server is reported with its message, without reconnecting", async () => {
    const startsBefore = readLog(log).filter((e) => e.event === "start").length;
    await assert.rejects(runTool(tools.get("mcp_fx_throw"), {}), /MCP server 'fx' failed 'throw': .*the server threw/);
    assert.equal(readLog(log).filter((e) => e.event === "start").length, startsBefore);
  });

  test("cancellation reaches the server", async () => {
    const controller = new AbortController();
    const calls = () => readLog(log).filter((e) => e.event === "call" && e.name === "slow").length;
    const before = calls();
    const pending = runTool(tools.get("mcp_fx_slow"), { ms: 30_000 }, controller.signal);
    await waitFor(() => calls() > before, "the slow call to reach the server");
    controller.abort();
    await assert.rejects(pending, (error: unknown) => error instanceof BridgeError && error.kind === "cancelled");
    await waitFor(
      () => readLog(log).some((e) => e.event === "cancelled" && e.name === "slow"),
      "the server to see the cancellation",
    );
  });

  test("large output is capped, with the whole text in a file", async () => {
    const { result, text } = await runTool(tools.get("mcp_fx_big"), { kb: 200 });
    assert.ok(text.length < 60 * 1024, `capped output is ${text.length} chars`);
    const named = /\[Output truncated: .* Full output saved to: (.*)\]/.exec(text);
    assert.ok(named, "the model is told where the full output is");
    const details = result.details as { truncated?: { fullOutputPath: string; totalBytes: number } };
    assert.equal(details.truncated!.totalBytes, 200 * 1024);
    const file = details.truncated!.fullOutputPath;
    assert.equal(named[1], file);
    try {
      // What the fixture's `big` tool sends: 200 lines of 1023 x's, each ending in a newline.
      assert.equal(readFileSync(file, "utf8"), `${"x".repeat(1023)}\n`.repeat(200), "the file holds the whole text");
      if (process.platform !== "win32") assert.equal(statSync(file).mode & 0o777, 0o600, "only the user may read it");
    } finally {
      rmSync(path.dirname(file), { recursive: true, force: true });
    }
  });

  test("output on one line over the cap (minified JSON) is cut within the line: the model still gets its head", async () => {
    const { result, text } = await runTool(tools.get("mcp_fx_big"), { kb: 60, oneLine: true });
    assert.match(text, /^x{50000}/);
    assert.ok(Buffer.byteLength(text) < 51 * 1024, `capped output is ${text.length} chars`);
    const file = (result.details as { truncated: { fullOutputPath: string } }).truncated.fullOutputPath;
    assert.match(text, /\[Output truncated: .* Full output saved to: .*\]$/);
    rmSync(path.dirname(file), { recursive: true, force: true });
  });

  test("a long error text is capped as a result's text is, with the whole text in a file", async () => {
    await assert.rejects(runTool(tools.get("mcp_fx_fail"), { kb: 200 }), (error: Error) => {
      assert.ok(error.message.length < 60 * 1024, `the model is given ${error.message.length} chars`);
      const file = /Full output saved to: (.*)\]/.exec(error.message)![1]!;
      assert.equal(readFileSync(file, "utf8").length, 200 * 1024);
      rmSync(path.dirname(file), { recursive: true, force: true });
      return true;
    });
  });

  test("the child gets the configured env and the SDK's safe defaults, not the host environment", async () => {
    process.env.MCP_BRIDGE_TEST_HOST_ONLY = "must-not-leak";
    try {
      assert.equal((await runTool(tools.get("mcp_fx_env"), { name: "MCP_BRIDGE_TEST_HOST_ONLY" })).text, "(unset)");
      assert.equal((await runTool(tools.get("mcp_fx_env"), { name: "FIXTURE_LOG" })).text, log);
      assert.notEqual((await runTool(tools.get("mcp_fx_env"), { name: "PATH" })).text, "(unset)");
    } finally {
      delete process.env.MCP_BRIDGE_TEST_HOST_ONLY;
    }
  });

  test("the child gets how pi reaches the network (proxies, CAs, npm's registry), its own env winning, and no token", async () => {
    const piEnv = {
      ...process.env,
      https_proxy: "http://proxy.example.invalid:3128",
      NO_PROXY: "localhost,.corp.example",
      NODE_EXTRA_CA_CERTS: "/etc/company/ca.pem",
      NPM_CONFIG_REGISTRY: "https://npm.corp.example/",
      GITHUB_TOKEN: "ghp_mustnotleak0123456789",
    };
    const entry = { ...fixtureEntry(), env: { FIXTURE_LOG: log, NO_PROXY: "*" } };
    const own = connectionFor("net", entry, { env: piEnv });
    try {
      await own.connect();
      const ownTools = toolsOf(own);
      const env = async (name: string) => (await runTool(ownTools.get("mcp_net_env"), { name })).text;
      assert.equal(await env("https_proxy"), piEnv.https_proxy);
      assert.equal(await env("NODE_EXTRA_CA_CERTS"), piEnv.NODE_EXTRA_CA_CERTS);
      assert.equal(await env("NPM_CONFIG_REGISTRY"), piEnv.NPM_CONFIG_REGISTRY);
      assert.equal(await env("NO_PROXY"), "*", "the entry's own value wins");
      assert.equal(await env("GITHUB_TOKEN"), "(unset)");
    } finally {
      await own.close();
    }
  });
});

describe("stdio: timeouts", { timeout: 120_000 }, () => {
  test("a call with no answer and no progress times out; the server is told; the connection stays usable", async () => {
    const tmp = tempDir();
    const log = path.join(tmp.dir, "events.jsonl");
    // Long enough that the other requests on this connection (the tool list, the echo after) never come near it.
    const connection = connectionFor("fx", { ...fixtureEntry(), env: { FIXTURE_LOG: log }, requestTimeout: 2000 });
    try {
      await connection.connect();
      const tools = toolsOf(connection);
      await assert.rejects(runTool(tools.get("mcp_fx_slow"), { ms: 60_000 }), (error: unknown) => {
        assert.ok(error instanceof BridgeError);
        assert.equal(error.kind, "timeout");
        assert.match(error.message, /did not answer 'slow' within 2 s without progress; raise `requestTimeout`/);
        return true;
      });
      // The call did reach the server and was left unanswered; at the timeout the server was told to stop.
      await waitFor(
        () => readLog(log).some((e) => e.event === "cancelled" && e.name === "slow"),
        "the server to see the cancellation",
      );
      assert.equal(readLog(log).filter((e) => e.event === "call" && e.name === "slow").length, 1);
      assert.equal((await runTool(tools.get("mcp_fx_echo"), { text: "still here" })).text, "still here");
    } finally {
      await connection.close();
      tmp.cleanup();
    }
  });

  test("a server whose output opens with a UTF-8 byte order mark (as Windows tools write it) connects", async () => {
    const { command, args } = fixtureEntry();
    const bom = `printf '\\357\\273\\277'; exec "$0" "$@"`;
    const connection = connectionFor("bom", {
      command: "sh",
      args: ["-c", bom, command, ...args],
      maxRestarts: 0,
      initTimeout: 10_000,
    });
    try {
      await connection.connect();
      assert.equal(connection.state.kind, "live");
    } finally {
      await connection.close();
    }
  });

  test("progress notifications reset the request timeout", async () => {
    const tmp = tempDir();
    const release = path.join(tmp.dir, "release");
    const requestTimeout = 1000;
    const connection = connectionFor("fx", { ...fixtureEntry(), requestTimeout });
    try {
      await connection.connect();
      const tool = toolsOf(connection).get("mcp_fx_progress")!;
      // The server reports progress every 50 ms (a twentieth of the timeout) until the test creates `release`.
      const delayMs = 50;
      let updates = 0;
      const started = performance.now();
      const call = tool.execute(
        "call-id",
        { steps: 10_000, delayMs, until: release } as never,
        undefined,
        () => void updates++,
        undefined as never,
      );
      let ended = false;
      const outcome = call.then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      );
      void outcome.then(() => (ended = true));
      // The server waits at least `delayMs` before each notification, so this many span well over twice the timeout.
      const enough = Math.ceil((2.5 * requestTimeout) / delayMs);
      await waitFor(() => updates >= enough || ended, `${enough} progress notifications`, 60_000);
      if (ended) {
        const early = await outcome;
        assert.fail(
          `the call ended before the test released it: ${"error" in early ? String(early.error) : "it answered"}`,
        );
      }
      writeFileSync(release, "");
      const finished = await outcome;
      assert.ok("result" in finished, `the call failed: ${String((finished as { error: unknown }).error)}`);
      assert.match((finished.result.content[0] as { text: string }).text, /^done after \d+ steps$/);
      assert.ok(performance.now() - started >= 2 * requestTimeout, "the call lasted longer than two request timeouts");
    } finally {
      await connection.close();
      tmp.cleanup();
    }
  });
});

/** A server that is a Node script (`node -e`), not restarted. */
const nodeScript = (name: string, script: string) =>
  connectionFor(name, { command: process.execPath, args: ["-e", script], maxRestarts: 0 });

describe("stdio: servers that misbehave", { timeout: 120_000 }, () => {
  test("a Node server that crashes with a long stack: its error stays in the quoted lines, the frames shortened", async () => {
    // Node prints the message, then the stack: a plain tail of a deep stack would be frames only.
    const crash =
      "console.error('Error: cannot open the config file ~/.acme/config.json');" +
      "for (let i = 0; i < 20; i++) console.error('    at frame' + i + ' (file:///srv/acme/dist/index.js:' + i + ':1)');" +
      "console.error('Node.js v20');process.exit(1)";
    // connectFailure closes the connection.
    const { message } = await connectFailure(nodeScript("deep", crash));
    assert.match(
      message,
      /Last stderr lines:\n {2}Error: cannot open the config file ~\/\.acme\/config\.json\n {2}at frame0 \(file:\/\/\/srv\/acme\/dist\/index\.js:0:1\)\n {2}… 19 more stack frames\n {2}Node\.js v20$/,
    );
  });

  test("npm's notice that a newer npm is out is left out of the quoted lines, which say why the start failed", async () => {
    const failed =
      "console.error('npm error code 1');console.error('npm error command sh -c node-gyp rebuild');" +
      "for (const line of ['', 'New minor version of npm available! 11.19.1 -> 11.21.3', 'To update run: npm install -g npm@11.21.3', ''])" +
      "console.error('npm notice ' + line);process.exit(1)";
    const { message } = await connectFailure(nodeScript("npmish", failed));
    assert.match(message, /Last stderr lines:\n {2}npm error code 1\n {2}npm error command sh -c node-gyp rebuild$/);
  });

  test("a server that crashes on start: its exit code and stderr in the error, no process left", async () => {
    const tmp = tempDir();
    const log = path.join(tmp.dir, "events.jsonl");
    const connection = connectionFor("broken", { ...fixtureEntry("crash-on-start"), env: { FIXTURE_LOG: log } });
    try {
      await assert.rejects(connection.connect(), (error: unknown) => {
        assert.ok(error instanceof BridgeError);
        assert.match(
          error.message,
          /MCP server 'broken': the process exited with code 3 after [\d.]+ s, before completing the MCP handshake/,
        );
        assert.match(error.message, /fatal: the fixture was told to crash on start/);
        return true;
      });
      assert.equal(connection.status, "error");
      const pid = readLog(log)[0]!.pid;
      await waitFor(() => !isAlive(pid), "the crashed server to be gone");
    } finally {
      await connection.close();
      tmp.cleanup();
    }
  });

  test("a secret the server prints to stderr is redacted in the error", async () => {
    const connection = connectionFor(
      "leaky",
      { ...fixtureEntry("leak-and-crash"), env: { FIXTURE_TOKEN: "${MCP_BRIDGE_TEST_SECRET}" } },
      { env: { ...process.env, MCP_BRIDGE_TEST_SECRET: "sk-live-0123456789" } },
    );
    await assert.rejects(connection.connect(), (error: unknown) => {
      assert.ok(error instanceof BridgeError);
      assert.match(error.message, /exited with code 4/);
      assert.match(error.message, /connecting with token=\*\*\*/);
      assert.doesNotMatch(error.message, /sk-live/);
      return true;
    });
    assert.doesNotMatch(connection.lastError!, /sk-live/);
    assert.doesNotMatch(connection.stderrTail().join("\n"), /sk-live/);
  });

  test("a command that does not exist", async () => {
    const connection = connectionFor("missing", { command: "mcp-bridge-no-such-command", args: ["x"] });
    await assert.rejects(
      connection.connect(),
      /command 'mcp-bridge-no-such-command' was not found \(is it installed and on PATH\?\)/,
    );
    const spaced = connectionFor("spaced", { command: "mcp-bridge-no-such-command --stdio" });
    await assert.rejects(
      spaced.connect(),
      /put its arguments in `args` rather than in `command`: "command": "mcp-bridge-no-such-command", "args": \["--stdio"\]/,
    );
    // A path with a space in it is one path, not a program and its arguments.
    const pathed = connectionFor("pathed", { command: "/opt/mcp-bridge no such/server" });
    await assert.rejects(pathed.connect(), (error: Error) => !/put its arguments/.test(error.message));
    const withArgs = connectionFor("withargs", { command: "/opt/mcp-bridge-no-such/server /srv/data" });
    await assert.rejects(
      withArgs.connect(),
      /"command": "\/opt\/mcp-bridge-no-such\/server", "args": \["\/srv\/data"\]/,
    );
  });

  test("a server that never answers initialize is killed at its timeout", async () => {
    const tmp = tempDir();
    const log = path.join(tmp.dir, "events.jsonl");
    const connection = connectionFor("mute", {
      ...fixtureEntry("never-init"),
      env: { FIXTURE_LOG: log },
      // Long enough for the fixture to start and write its stderr on a busy machine: the message must show it.
      timeout: 4000,
    });
    try {
      await assert.rejects(connection.connect(), (error: unknown) => {
        assert.ok(error instanceof BridgeError);
        assert.equal(error.kind, "timeout");
        assert.match(
          error.message,
          /MCP server 'mute': no answer to the MCP handshake after [\d.]+ s, when its `timeout` of 4 s ran out/,
        );
        assert.match(error.message, /fixture server starting \(mode never-init\)/, "stderr tail is shown");
        return true;
      });
      const pid = readLog(log)[0]!.pid;
      assert.equal(isAlive(pid), false, "the hung server was killed before connect() returned");
    } finally {
      await connection.close();
      tmp.cleanup();
    }
  });

  test("a server that prints garbage to stdout still works", async () => {
    const connection = connectionFor("noisy", fixtureEntry("garbage"));
    try {
      await connection.connect();
      assert.equal((await runTool(toolsOf(connection).get("mcp_noisy_echo"), { text: "ok" })).text, "ok");
    } finally {
      await connection.close();
    }
  });

  test("a server that prints only garbage: the error says what it wrote is not JSON-RPC", async () => {
    // The timeout leaves a busy machine time to start the fixture and read what it wrote.
    const connection = connectionFor("noisy", { ...fixtureEntry("garbage-only"), timeout: 4000 });
    try {
      await assert.rejects(connection.connect(), /wrote 2 line\(s\) to stdout that are not JSON-RPC messages/);
    } finally {
      await connection.close();
    }
  });

  /**
   * A server whose `crash_once` tool kills it the first time, and works after. The tools have no hints: the entry's
   * `resendAfterDrop` lets their calls be sent again (test/call-once.test.ts: what happens without it).
   */
  function flakyServer() {
    const tmp = tempDir();
    const log = path.join(tmp.dir, "events.jsonl");
    const connection = connectionFor("flaky", {
      ...fixtureEntry(),
      env: { FIXTURE_LOG: log, FIXTURE_CRASH_MARKER: path.join(tmp.dir, "crashed") },
      resendAfterDrop: ["crash_once", "slow"],
    });
    return { tmp, log, connection };
  }

  test("a server that dies mid-call: one reconnect, the call `resendAfterDrop` allows is sent again and succeeds", async () => {
    const { tmp, log, connection } = flakyServer();
    try {
      await connection.connect();
      const tools = toolsOf(connection);
      assert.equal((await runTool(tools.get("mcp_flaky_crash_once"), {})).text, "survived");
      const starts = readLog(log).filter((e) => e.event === "start");
      assert.equal(starts.length, 2, "exactly one reconnect");
      assert.equal(isAlive(starts[0]!.pid), false);
      assert.equal(connection.status, "connected");
      assert.equal((await runTool(tools.get("mcp_flaky_echo"), { text: "after" })).text, "after");
    } finally {
      await connection.close();
      tmp.cleanup();
    }
  });

  test("concurrent calls that lose the connection share one reconnect", async () => {
    const { tmp, log, connection } = flakyServer();
    try {
      await connection.connect();
      const tools = toolsOf(connection);
      // The slow calls wait until the test creates `release`, so they are still running when the server dies.
      const release = path.join(tmp.dir, "release");
      const slowCalls = [1, 2, 3].map(() => runTool(tools.get("mcp_flaky_slow"), { ms: 60_000, until: release }));
      const slowOn = (pid: number) =>
        readLog(log).filter((e) => e.event === "call" && e.name === "slow" && e.pid === pid).length;
      const firstPid = readLog(log).find((e) => e.event === "start")!.pid;
      await waitFor(() => slowOn(firstPid) === 3, "three slow calls in flight");
      const crash = runTool(tools.get("mcp_flaky_crash_once"), {});
      await waitFor(() => !isAlive(firstPid), "the first server process to die");
      writeFileSync(release, "");
      const results = await Promise.all([crash, ...slowCalls]);
      assert.deepEqual(
        results.map((r) => r.text),
        ["survived", "finished", "finished", "finished"],
      );
      const starts = readLog(log).filter((e) => e.event === "start");
      assert.equal(starts.length, 2, "one process before, one after: no duplicate connections");
      assert.equal(slowOn(starts[1]!.pid), 3, "each interrupted call ran again on the new process");
    } finally {
      await connection.close();
      tmp.cleanup();
    }
  });

  test("a server that closes its stdout during a call but runs on: the call fails then, saying so, not at its timeout", async () => {
    const tmp = tempDir();
    const server = path.join(tmp.dir, "closer.mjs");
    writeFileSync(
      server,
      `import { closeSync } from "node:fs";
      const out = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n");
      const tools = [{ name: "shut", inputSchema: { type: "object" } }];
      const serverInfo = { name: "closer", version: "1" };
      process.stdin.setEncoding("utf8").on("data", (text) => {
        for (const m of text.split("\\n").filter(Boolean).map((line) => JSON.parse(line))) {
          if (m.method === "initialize") out({ id: m.id, result: { ...m.params, capabilities: { tools: {} }, serverInfo } });
          else if (m.method === "tools/list") out({ id: m.id, result: { tools } });
          else if (m.method === "tools/call") closeSync(1);
        }
      });
      setInterval(() => {}, 1 << 30);`,
    );
    const entry = { command: process.execPath, args: [server], protocolVersion: "2025-06-18", requestTimeout: 30_000 };
    const connection = connectionFor("closer", { ...entry, maxRestarts: 0 });
    try {
      await connection.connect();
      await assert.rejects(runTool(toolsOf(connection).get("mcp_closer_shut"), {}), (error: Error) => {
        assert.match(error.message, /closed its stdout but kept running/);
        return true;
      });
    } finally {
      await connection.close();
      tmp.cleanup();
    }
  });

  test("a server that dies again after the reconnect: a clear error with its stderr", async () => {
    const connection = connectionFor("doomed", { ...fixtureEntry(), resendAfterDrop: ["crash_*"] });
    try {
      await connection.connect();
      await assert.rejects(runTool(toolsOf(connection).get("mcp_doomed_crash_always"), {}), (error: unknown) => {
        assert.ok(error instanceof BridgeError);
        assert.equal(error.kind, "transport");
        assert.match(
          error.message,
          /MCP server 'doomed' lost its connection during 'crash_always' again after reconnecting \(the server process exited with code 1\); not retrying/,
        );
        assert.match(error.message, /fixture server: dying in the middle of a call/);
        return true;
      });
    } finally {
      await connection.close();
    }
  });
});

describe("stdio: configuration at connect time", { timeout: 120_000 }, () => {
  test("a missing variable is a warning naming it and the entry is left out of the env", async () => {
    delete process.env.MCP_BRIDGE_TEST_MISSING;
    const connection = connectionFor("fx", {
      ...fixtureEntry(),
      env: { API_KEY: "${MCP_BRIDGE_TEST_MISSING}", PRESENT: "yes" },
    });
    try {
      await connection.connect();
      assert.equal(connection.warnings.length, 1);
      assert.match(connection.warnings[0]!, /\$\{MCP_BRIDGE_TEST_MISSING\} is not set, so `env.API_KEY` is not passed/);
      const tools = toolsOf(connection);
      assert.equal((await runTool(tools.get("mcp_fx_env"), { name: "API_KEY" })).text, "(unset)");
      assert.equal((await runTool(tools.get("mcp_fx_env"), { name: "PRESENT" })).text, "yes");
    } finally {
      await connection.close();
    }
  });

  test("variables and ${PROJECT_ROOT} in env and cwd, cwd relative to the project root", async () => {
    const tmp = tempDir();
    mkdirSync(path.join(tmp.dir, "tools"));
    const connection = connectionFor(
      "fx",
      { ...fixtureEntry(), cwd: "./tools", env: { TOKEN: "${MCP_BRIDGE_TEST_TOKEN}", ROOT: "${PROJECT_ROOT}" } },
      { projectRoot: tmp.dir, env: { ...process.env, MCP_BRIDGE_TEST_TOKEN: "tok-123456" } },
    );
    try {
      await connection.connect();
      const tools = toolsOf(connection);
      // The value reached the server; a result that quotes it has it hidden, like every message does.
      assert.equal(
        (await runTool(tools.get("mcp_fx_env"), { name: "TOKEN", digest: true })).text,
        createHash("sha256").update("tok-123456").digest("hex"),
      );
      assert.equal((await runTool(tools.get("mcp_fx_env"), { name: "TOKEN" })).text, "***");
      assert.equal((await runTool(tools.get("mcp_fx_env"), { name: "ROOT" })).text, tmp.dir);
      assert.equal(
        realpathSync((await runTool(tools.get("mcp_fx_cwd"), {})).text),
        realpathSync(path.join(tmp.dir, "tools")),
      );
    } finally {
      await connection.close();
      tmp.cleanup();
    }
  });
});

describe("stdio: shutdown leaves no process behind", { timeout: 120_000 }, () => {
  test("the server and a child process it started are gone after close()", async () => {
    const tmp = tempDir();
    const log = path.join(tmp.dir, "events.jsonl");
    const connection = connectionFor("parent", { ...fixtureEntry("grandchild"), env: { FIXTURE_LOG: log } });
    await connection.connect();
    const events = readLog(log);
    const serverPid = events.find((e) => e.event === "start")!.pid;
    const childPid = events.find((e) => e.event === "grandchild")!.childPid as number;
    assert.ok(isAlive(serverPid) && isAlive(childPid));
    await connection.close();
    await waitFor(() => !isAlive(serverPid) && !isAlive(childPid), "server and grandchild to exit");
    assert.equal(connection.status, "disconnected");
    tmp.cleanup();
  });

  // Linux hands a pid out again (after 32768 of them, where that is `pid_max`); root can say which comes next.
  const NEXT_PID = "/proc/sys/kernel/ns_last_pid";
  const choosesPids = process.getuid?.() === 0 && existsSync(NEXT_PID);
  test(
    "pi exiting after a server failed: a process that has the failed server's pid since is left alone",
    { skip: !choosesPids && "needs root and /proc/sys/kernel/ns_last_pid" },
    async (t) => {
      const tmp = tempDir();
      const log = path.join(tmp.dir, "events.jsonl");
      const connection = connectionFor("broken", { ...fixtureEntry("crash-on-start"), env: { FIXTURE_LOG: log } });
      let other: ChildProcess | undefined;
      try {
        await assert.rejects(connection.connect());
        const pid = readLog(log).at(-1)!.pid;
        await waitFor(() => !isAlive(pid), "the crashed server to be gone");
        for (let i = 0; i < 200 && other?.pid !== pid; i++) {
          other?.kill("SIGKILL");
          writeFileSync(NEXT_PID, String(pid - 1));
          other = spawn("sleep", ["60"], { stdio: "ignore" });
        }
        if (other?.pid !== pid) return t.skip("a process elsewhere on the machine took the pid first");
        connection.killNow();
        // Ended by a SIGTERM of ours, not by a SIGKILL sent before it.
        const ended = new Promise((resolve) => other!.once("exit", (_code, signal) => resolve(signal)));
        other.kill("SIGTERM");
        assert.equal(await ended, "SIGTERM", "that program was left alone");
      } finally {
        other?.kill("SIGKILL");
        await connection.close();
        tmp.cleanup();
      }
    },
  );

  test("close() while a server is still connecting ends that server and fails the connect", async () => {
    const tmp = tempDir();
    const log = path.join(tmp.dir, "events.jsonl");
    const connection = connectionFor("mute", {
      ...fixtureEntry("never-init"),
      env: { FIXTURE_LOG: log },
      timeout: 60_000,
    });
    const connecting = connection.connect();
    const outcome = connecting.then(
      () => "connected",
      (error: Error) => error.message,
    );
    await waitFor(() => readLog(log).length > 0, "the server to start");
    const pid = readLog(log)[0]!.pid;
    await connection.close();
    assert.match(await outcome, /MCP server 'mute' was shut down while connecting/);
    // Nothing was started in its place: a closed connection is not asked again with `initialize` alone.
    assert.equal(readLog(log).length, 1, "one start");
    await waitFor(() => !isAlive(pid), "the connecting server to be gone");
    tmp.cleanup();
  });

  test("a wrapper (as npx is) and the server it runs are both gone after close()", async () => {
    const tmp = tempDir();
    const log = path.join(tmp.dir, "events.jsonl");
    const { command, args } = fixtureEntry("grandchild");
    const quoted = [command, ...args].map((a) => `'${a}'`).join(" ");
    // `; exit $?` keeps the shell alive as the server's parent, the way npx stays the parent of the package's server.
    const connection = connectionFor("wrapped", {
      command: "sh",
      args: ["-c", `${quoted}; exit $?`],
      env: { FIXTURE_LOG: log },
    });
    await connection.connect();
    const serverPid = readLog(log).find((e) => e.event === "start")!.pid;
    const childPid = readLog(log).find((e) => e.event === "grandchild")!.childPid as number;
    await connection.close();
    await waitFor(() => !isAlive(serverPid) && !isAlive(childPid), "wrapped server and its child to exit");
    tmp.cleanup();
  });
});
