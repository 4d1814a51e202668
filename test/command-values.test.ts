/**
 * `!command` values with real child processes: how one command runs (with and without a shell, bounded in time and
 * output, its process group ended), a local server's `env` and a remote server's `headers` filled from commands, the
 * output redacted in the log file, tool results and errors, a failing command reported by its field without its
 * output — and a project's commands not run before the user trusts the project's servers, and run once trusted.
 */
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { McpBridge } from "../src/bridge/mcp-bridge.ts";
import { ProjectTrust } from "../src/trust/project-trust.ts";
import { BridgeError } from "../src/common/errors.ts";
import { LogFile } from "../src/common/log-file.ts";
import { runCommand } from "../src/config/command-runner.ts";
import { TrustStore } from "../src/trust/trust-store.ts";
import type { ConfigSource } from "../src/config/types.ts";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import { type ConnectionOptions, ServerConnection } from "../src/connection/server-connection.ts";
import { startStreamableHttp } from "./fixtures/http-servers.ts";
import { connectionFor, fixtureEntry, isAlive, REPO_ROOT, tempDir, testBridge, waitFor } from "./helpers.ts";
import { runTool, toolsOf } from "./pi-tools.ts";

const run = randomBytes(4).toString("hex");
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

describe("running one command", { timeout: 60_000 }, () => {
  const tmp = tempDir("mcp-bridge-cmd-");
  after(() => tmp.cleanup());
  const options = { env: process.env, cwd: tmp.dir };

  test("without shell syntax, without a shell; with it, under /bin/sh; the output trimmed", async () => {
    assert.deepEqual(await runCommand("printf tok-plain", options), { value: "tok-plain" });
    assert.deepEqual(await runCommand('echo "  Bearer $(printf abc)  "', options), { value: "Bearer abc" });
    assert.deepEqual(await runCommand("pwd", options), { value: tmp.dir }, "runs in the given directory");
  });

  test("a failing command is reported without what it printed", async () => {
    const outcome = await runCommand("echo leaked-output-123; exit 3", options);
    assert.deepEqual(outcome, { problem: "its command exited with code 3" });
    assert.deepEqual(await runCommand("true", options), { problem: "its command printed nothing" });
    assert.deepEqual(await runCommand("no-such-program-" + run + " arg", options), {
      problem: `its command's program 'no-such-program-${run}' was not found`,
    });
  });

  test("a hanging command is stopped at its deadline, with what it started", async () => {
    const pidFile = path.join(tmp.dir, "sleeper.pid");
    const outcome = await runCommand(`sleep 30 & echo $! > ${pidFile}; wait`, { ...options, timeoutMs: 300 });
    assert.deepEqual(outcome, { problem: "its command did not finish within 0.3 s" });
    const sleeper = Number(readFileSync(pidFile, "utf8"));
    await waitFor(() => !isAlive(sleeper), "the command's child to be ended");
  });

  test("a command that exits while a background child still holds its output gives what it printed", async () => {
    const pidFile = path.join(tmp.dir, "background.pid");
    const outcome = await runCommand(`echo tok-bg; sleep 30 & echo $! > ${pidFile}`, { ...options, timeoutMs: 5000 });
    assert.deepEqual(outcome, { value: "tok-bg" });
    process.kill(Number(readFileSync(pidFile, "utf8")));
  });

  test("a command that prints without end is stopped at the output bound", async () => {
    assert.deepEqual(await runCommand("yes", { ...options, maxBytes: 1000 }), {
      problem: "its command printed more than 1000 bytes",
    });
  });
});

describe("servers whose env or headers come from commands", { timeout: 120_000 }, () => {
  const tmp = tempDir("mcp-bridge-cmd-servers-");
  const logger = new LogFile(path.join(tmp.dir, "mcp.log"));
  const connections: ServerConnection[] = [];
  const userSource: ConfigSource = { scope: "user", path: path.join(tmp.dir, "mcp.json") };
  after(async () => {
    for (const c of connections) await c.close();
    await logger.close();
    tmp.cleanup();
  });

  /** A server from the user's own file, which needs no trust. */
  function userServer(
    name: string,
    entry: Record<string, unknown>,
    options: Partial<ConnectionOptions> = {},
  ): ServerConnection {
    const result = validateServerEntry(name, { reconnect: false, ...entry }, userSource);
    assert.ok(result.config, result.errors.join("; "));
    const connection = new ServerConnection(result.config, {
      projectRoot: tmp.dir,
      env: process.env,
      clientInfo: { name: "test", version: "0" },
      logger,
      ...options,
    });
    connections.push(connection);
    return connection;
  }

  test("a local server's env value from a command reaches the server, and is hidden in its stderr, log messages, results and errors", async () => {
    const secret = `cmd-secret-${run}`;
    const connection = userServer("hostile", {
      ...fixtureEntry("hostile-text"),
      env: { FIXTURE_SECRET: `!printf ${secret}` },
    });
    await connection.connect();
    const tools = toolsOf(connection);
    assert.equal(
      (await runTool(tools.get("mcp_hostile_env"), { name: "FIXTURE_SECRET", digest: true })).text,
      sha256(secret),
      "the server got the output",
    );
    assert.equal(
      (await runTool(tools.get("mcp_hostile_env"), { name: "FIXTURE_SECRET" })).text,
      "***",
      "and the model never sees it",
    );
    await runTool(tools.get("mcp_hostile_log_message"), { text: `server says ${secret}` });
    await assert.rejects(
      runTool(tools.get("mcp_hostile_leak_env")),
      (error: Error) => !error.message.includes(secret) && error.message.includes("***"),
    );
    // The startup stderr line and the log message, both of which carry the secret, are in the log file redacted.
    await waitFor(() => {
      logger.flush();
      const log = existsSync(logger.path) ? readFileSync(logger.path, "utf8") : "";
      return log.includes("key is ***") && log.includes("server says ***");
    }, "the stderr line and the log message in the log file");
    assert.equal(
      readFileSync(logger.path, "utf8").includes(secret),
      false,
      "the command's output is not in the log file",
    );
  });

  test("a remote server's Authorization header from a command (shell syntax) authenticates it, and is hidden", async () => {
    const token = `tok-${run}-${randomBytes(8).toString("hex")}`;
    const server = await startStreamableHttp({ auth: { token } });
    try {
      const connection = userServer("web", {
        url: server.url,
        headers: { Authorization: `!printf 'Bearer %s' ${token}` },
      });
      await connection.connect();
      assert.equal(
        (await runTool(toolsOf(connection).get("mcp_web_echo"), { text: `echo ${token}` })).text,
        "echo ***",
      );
      assert.ok(
        server.requests.every((r) => r.authorization === `Bearer ${token}`),
        "every request carried the command's output",
      );
      assert.equal(connection.redact(`Authorization: Bearer ${token}`).includes(token), false);
    } finally {
      await server.close();
    }
  });

  test("a failing command stops the server with an error that names the field, never the output", async () => {
    const printed = `half-a-secret-${run}`;
    const connection = userServer("broken", { ...fixtureEntry(), env: { TOKEN: `!echo ${printed}; exit 3` } });
    await assert.rejects(connection.connect(), (error: unknown) => {
      assert.ok(error instanceof BridgeError && error.kind === "config");
      assert.match(
        error.message,
        /`env\.TOKEN` is a `!command` value, and its command exited with code 3 \(what it printed is not shown\); fix the command in user config/,
      );
      assert.equal(error.message.includes(printed), false);
      return true;
    });
    assert.equal(connection.lastError?.includes(printed), false);
  });

  test("a project server's command does not run on the project file's word alone (no trust given)", async () => {
    const marker = path.join(tmp.dir, `guard-${run}`);
    // `connectionFor` configs come from a project file; no `trusted` answer is given.
    const connection = connectionFor(
      "guarded",
      { ...fixtureEntry(), env: { TOKEN: `!touch ${marker} && echo x` } },
      { projectRoot: tmp.dir },
    );
    connections.push(connection);
    await assert.rejects(
      connection.connect(),
      /`env\.TOKEN` is a `!command` value from project config .*commands in a project's config run only once you trust its servers, so it was not run; run \/mcp trust guarded/,
    );
    assert.equal(existsSync(marker), false, "the command did not run");
  });
});

describe(
  "a project's `!command` values and project trust (real config files, trust store and processes)",
  { timeout: 120_000 },
  () => {
    const root = tempDir("mcp-bridge-cmd-trust-");
    const projectRoot = path.join(root.dir, "project");
    const agentDir = path.join(root.dir, "agent");
    const projectMarker = path.join(root.dir, `project-ran-${run}`);
    const userMarker = path.join(root.dir, `user-ran-${run}`);
    const logger = new LogFile(path.join(root.dir, "mcp.log"));
    let bridge: McpBridge | undefined;
    after(async () => {
      await bridge?.shutdown();
      await logger.close();
      root.cleanup();
    });

    const withCommand = (marker: string, output: string) => ({
      ...fixtureEntry(),
      env: { FROM_COMMAND: `!touch ${marker} && echo ${output}` },
    });

    test("an untrusted project's command is not run; the user's is; once trusted, the project's runs too", async () => {
      mkdirSync(path.join(projectRoot, ".pi"), { recursive: true });
      mkdirSync(agentDir, { recursive: true });
      writeFileSync(
        path.join(projectRoot, ".pi", "mcp.json"),
        JSON.stringify({ mcpServers: { proj: withCommand(projectMarker, `project-output-${run}`) } }),
      );
      writeFileSync(
        path.join(agentDir, "mcp.json"),
        JSON.stringify({ mcpServers: { mine: withCommand(userMarker, `user-output-${run}`) } }),
      );
      bridge = testBridge(projectRoot, {
        agentDir,
        bundledPath: path.join(REPO_ROOT, "mcp.json"),
        logger,
        projectTrust: new ProjectTrust(projectRoot, new TrustStore(path.join(agentDir, "mcp-bridge", "trust.json"))),
      });
      await bridge.start();

      const mine = bridge.connection("mine")!;
      assert.equal(mine.status, "connected", mine.lastError);
      assert.ok(existsSync(userMarker), "the user's command ran");
      assert.equal(
        (await runTool(toolsOf(mine).get("mcp_mine_env"), { name: "FROM_COMMAND", digest: true })).text,
        sha256(`user-output-${run}`),
      );

      const proj = bridge.connection("proj")!;
      assert.deepEqual(
        bridge.trust.untrusted().map((c) => c.name),
        ["proj"],
      );
      await assert.rejects(proj.connect(), /is not trusted, so it was not started/);
      assert.equal(existsSync(projectMarker), false, "the untrusted project's command did not run");

      const [result] = await bridge.trust.trust([proj]);
      assert.equal(result?.error, undefined);
      const trusted = bridge.connection("proj")!;
      assert.equal(trusted.status, "connected", trusted.lastError);
      assert.ok(existsSync(projectMarker), "once trusted, the project's command ran");
      assert.equal(
        (await runTool(toolsOf(trusted).get("mcp_proj_env"), { name: "FROM_COMMAND", digest: true })).text,
        sha256(`project-output-${run}`),
      );
    });
  },
);
