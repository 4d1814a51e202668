/**
 * Bad input and user mistakes: each gets a clear error, and none silently changes what a config means. One
 * `describe` per mistake; the pure rules are also covered in lib.test.ts, these go through the real loader, real
 * processes and pi's command API.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { BridgeError } from "../src/common/errors.ts";
import { connectionFor, fixtureEntry, readLog, tempDir } from "./helpers.ts";

describe("a missing ${VAR} in a local server's command line", { timeout: 60_000 }, () => {
  test("stops the server with an error naming the variable, and starts no process", async () => {
    const tmp = tempDir();
    const log = path.join(tmp.dir, "events.jsonl");
    const fixture = fixtureEntry();
    const env: Record<string, string | undefined> = { ...process.env, FIXTURE_LOG: log };
    delete env.MCP_BRIDGE_TEST_FS_ROOT;
    const connection = connectionFor("fs", { ...fixture, args: [...fixture.args, "--root", "${MCP_BRIDGE_TEST_FS_ROOT}"], env: { FIXTURE_LOG: log } }, { env });
    try {
      await assert.rejects(connection.connect(), (error: unknown) => {
        assert.ok(error instanceof BridgeError);
        assert.equal(error.kind, "config");
        assert.match(error.message, /environment variable \$\{MCP_BRIDGE_TEST_FS_ROOT\} in `args\[\d+\]` is not set/);
        return true;
      });
      assert.equal(connection.status, "error");
      // The fixture logs "start" as its first act: no file means no process was started.
      assert.equal(existsSync(log), false, `the server started: ${JSON.stringify(existsSync(log) ? readLog(log) : [])}`);
    } finally {
      await connection.close();
      tmp.cleanup();
    }
  });
});
