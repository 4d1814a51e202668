/**
 * `protocolVersion: "auto"` against local servers that do not speak 2026-07-28: one that answers the probe with an
 * error, and one that exits on it. Real child processes on the 1.x SDK.
 */
import assert from "node:assert/strict";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { connectionFor, fixtureEntry, readLog, REPO_ROOT, tempDir } from "./helpers.ts";

const INTOLERANT = path.join(REPO_ROOT, "test", "fixtures", "probe-intolerant.mjs");

describe("auto against handshake-only local servers", { timeout: 60_000 }, () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  test("a server that answers the probe with an error speaks 2025-11-25 on the same process", async () => {
    const log = path.join(tmp.dir, "tolerant.jsonl");
    const connection = connectionFor("plain", { ...fixtureEntry(), env: { FIXTURE_LOG: log } });
    try {
      await connection.connect();
      assert.equal(connection.protocolVersion, "2025-11-25");
      assert.equal(readLog(log).filter((e) => e.event === "start").length, 1, "one process: the probe did not cost a start");
    } finally {
      await connection.close();
    }
  });

  test("a server that exits on the probe is started once more and asked with initialize alone, from then on", async () => {
    const log = path.join(tmp.dir, "intolerant.jsonl");
    const connection = connectionFor("strict", { command: process.execPath, args: [INTOLERANT], env: { FIXTURE_LOG: log } });
    try {
      await connection.connect();
      assert.equal(connection.protocolVersion, "2025-11-25");
      assert.deepEqual(connection.tools.map((t) => t.name), ["hello"]);
      assert.equal(readLog(log).length, 2, "the start the probe ended, then one with initialize alone");
      await connection.reconnect();
      assert.equal(connection.protocolVersion, "2025-11-25");
      assert.equal(readLog(log).length, 3, "a reconnect asks with initialize alone: no probe, no extra start");
    } finally {
      await connection.close();
    }
  });
});
