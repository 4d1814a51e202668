/**
 * Configs written for pi 1.x, with real servers: `"timeout": 30` (seconds there) connects and gives each request 30 s
 * (a `timeout` in seconds really bounds a request: a slower call fails at it), and `~/` in `command` and `cwd` names
 * the home directory when a real server starts.
 */
import assert from "node:assert/strict";
import { mkdirSync, realpathSync, symlinkSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import type { ServerConnection } from "../src/connection/server-connection.ts";
import { connectionFor, fixtureEntry, tempDir } from "./helpers.ts";
import { runTool, toolsOf } from "./pi-tools.ts";

describe("pi 1.x configs against real servers", { timeout: 120_000 }, () => {
  const connections: ServerConnection[] = [];
  const home = tempDir("mcp-bridge-home-");
  const realHome = process.env.HOME;
  after(async () => {
    for (const c of connections) await c.close();
    process.env.HOME = realHome;
    home.cleanup();
  });
  const open = (name: string, entry: Record<string, unknown>) => {
    const connection = connectionFor(name, entry);
    connections.push(connection);
    return connection;
  };

  test('"timeout": 30 connects (not a 30 ms handshake), and its requests get 30 s', async () => {
    const connection = open("thirty", { ...fixtureEntry(), timeout: 30 });
    await connection.connect();
    assert.equal(connection.config.timeout, 30_000);
    assert.equal(connection.config.requestTimeout, 30_000);
    assert.equal((await runTool(toolsOf(connection).get("mcp_thirty_echo"), { text: "hi" })).text, "hi");
  });

  test("a `timeout` in seconds is each request's deadline: a call slower than it fails, naming it", async () => {
    // Two seconds for requests: the echo after the slow call must answer within them too, on a busy machine. The
    // handshake gets `initTimeout`, as a machine under load may need more.
    const connection = open("half", { ...fixtureEntry(), timeout: 2, initTimeout: 30_000 });
    await connection.connect();
    await assert.rejects(
      runTool(toolsOf(connection).get("mcp_half_slow"), { ms: 20_000 }),
      /did not answer 'slow' within 2 s without progress; raise `timeout` \(seconds\) for 'half'/,
    );
    assert.equal((await runTool(toolsOf(connection).get("mcp_half_echo"), { text: "still here" })).text, "still here");
  });

  test("`~/` in command and cwd is the home directory", async () => {
    process.env.HOME = home.dir;
    mkdirSync(path.join(home.dir, "bin"));
    mkdirSync(path.join(home.dir, "work"));
    symlinkSync(process.execPath, path.join(home.dir, "bin", "node"));
    const { args } = fixtureEntry();
    const connection = open("homely", { command: "~/bin/node", args, cwd: "~/work" });
    await connection.connect();
    assert.equal(
      (await runTool(toolsOf(connection).get("mcp_homely_cwd"))).text,
      realpathSync(path.join(home.dir, "work")),
    );
  });
});
