/**
 * The bridge's JSON-lines log file: format, batching, rotation, permissions and failure handling, on a real disk.
 */
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  chmodSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { after, describe, it } from "node:test";
import { DEFAULT_LOG_KEEP, DEFAULT_LOG_MAX_BYTES, LogFile, NULL_LOGGER, readLogTail } from "../src/common/log-file.ts";
import { waitFor } from "./helpers.ts";

const root = mkdtempSync(path.join(tmpdir(), "mcp-bridge-log-"));
let counter = 0;

/** A fresh directory (not yet created) for one test's log. */
function logPath(): string {
  counter++;
  return path.join(root, `case-${counter}`, "logs", "mcp.log");
}

function readLines(file: string): Array<Record<string, unknown>> {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const skipModes = process.platform === "win32" ? "POSIX modes only" : false;

describe("log file", { timeout: 60_000 }, () => {
  after(() => rmSync(root, { recursive: true, force: true }));

  it("has sensible defaults", () => {
    assert.equal(DEFAULT_LOG_MAX_BYTES, 5 * 1024 * 1024);
    assert.equal(DEFAULT_LOG_KEEP, 2);
  });

  it("NULL_LOGGER writes nothing anywhere: no file, no output", () => {
    // In a process of its own whose home, temp dir, agent dir and working directory are one empty directory: whatever
    // it wrote, to a file or to stdout/stderr, would show.
    const sandbox = mkdtempSync(path.join(tmpdir(), "mcp-bridge-null-log-"));
    try {
      const module = new URL("../src/common/log-file.ts", import.meta.url).href;
      const script = [
        `const { NULL_LOGGER } = await import(${JSON.stringify(module)});`,
        `for (let i = 0; i < 100; i++) NULL_LOGGER.log({ level: i % 2 ? "error" : "info", event: "null-logger-test", server: "s", i });`,
        // Give a logger that batches its writes (as LogFile does) turns of the event loop to write them.
        "for (let i = 0; i < 3; i++) await new Promise((resolve) => setTimeout(resolve, 0));",
      ].join("\n");
      const child = spawnSync(
        process.execPath,
        ["--import", import.meta.resolve("tsx"), "--input-type=module", "-e", script],
        {
          cwd: sandbox,
          // tsx, which loads the TypeScript, keeps a cache in the temp dir unless told not to.
          env: {
            PATH: process.env.PATH,
            HOME: sandbox,
            TMPDIR: sandbox,
            PI_CODING_AGENT_DIR: sandbox,
            TSX_DISABLE_CACHE: "1",
          },
          encoding: "utf8",
          timeout: 60_000,
        },
      );
      assert.equal(child.status, 0, child.stderr);
      assert.equal(child.stdout, "");
      assert.equal(child.stderr, "");
      assert.deepEqual(readdirSync(sandbox, { recursive: true }), [], "no file appeared");
    } finally {
      rmSync(sandbox, { recursive: true, force: true });
    }
  });

  it("NULL_LOGGER is frozen: one caller cannot change what every connection without a log shares", () => {
    assert.ok(Object.isFrozen(NULL_LOGGER));
    assert.throws(() => {
      (NULL_LOGGER as { log: unknown }).log = () => assert.fail("replaced");
    }, TypeError);
    assert.doesNotThrow(() => NULL_LOGGER.log({ level: "info", event: "nothing" }));
  });

  it("writes one JSON object per line with time, level, event and server first", () => {
    const file = logPath();
    const fixed = new Date("2026-01-02T03:04:05.678Z");
    const log = new LogFile(file, { now: () => fixed });
    log.log({ level: "info", event: "server.connected", server: "github", tools: 3, note: "two\nlines" });
    log.log({ level: "debug", event: "bridge.start" });
    log.flush();
    const text = readFileSync(file, "utf8");
    const lines = text.split("\n");
    assert.equal(lines.length, 3, "two lines and a final newline");
    assert.equal(lines[2], "");
    const first = JSON.parse(lines[0]!) as Record<string, unknown>;
    assert.deepEqual(Object.keys(first), ["time", "level", "event", "server", "tools", "note"]);
    assert.deepEqual(first, {
      time: fixed.toISOString(),
      level: "info",
      event: "server.connected",
      server: "github",
      tools: 3,
      note: "two\nlines",
    });
    const second = JSON.parse(lines[1]!) as Record<string, unknown>;
    assert.deepEqual(second, { time: fixed.toISOString(), level: "debug", event: "bridge.start" });
    assert.equal(log.error, undefined);
  });

  it("does not let a field override the fixed ones", () => {
    const file = logPath();
    const log = new LogFile(file, { now: () => new Date(0) });
    log.log({ level: "warn", event: "e", time: "forged" });
    log.flush();
    assert.equal(readLines(file)[0]!.time, new Date(0).toISOString());
  });

  it("batches: nothing is written synchronously, then everything arrives in order", async () => {
    const file = logPath();
    const log = new LogFile(file);
    for (let i = 0; i < 2000; i++) log.log({ level: "info", event: "line", server: "s", i });
    assert.equal(existsSync(file), false, "no write per log() call");
    await waitFor(() => readLines(file).length === 2000, "the scheduled batch", 10_000, 10);
    assert.deepEqual(
      readLines(file).map((r) => r.i),
      Array.from({ length: 2000 }, (_, i) => i),
    );

    for (let i = 2000; i < 3000; i++) log.log({ level: "info", event: "line", i });
    log.flush();
    assert.deepEqual(
      readLines(file).map((r) => r.i),
      Array.from({ length: 3000 }, (_, i) => i),
    );
    await log.close();
  });

  it("rotates at maxBytes, keeping exactly `keep` old files with the newest records in the current one", () => {
    const file = logPath();
    const maxBytes = 1000;
    const log = new LogFile(file, { maxBytes, keep: 2 });
    const total = 300;
    for (let i = 0; i < total; i++) {
      log.log({ level: "info", event: "tick", seq: i, pad: "x".repeat(40) });
      if (i % 7 === 0) log.flush(); // several batches, some rotating mid-batch
    }
    log.flush();
    const dir = path.dirname(file);
    assert.deepEqual(readdirSync(dir).sort(), ["mcp.log", "mcp.log.1", "mcp.log.2"]);
    let bytes = 0;
    for (const name of ["mcp.log", "mcp.log.1", "mcp.log.2"]) {
      const size = statSync(path.join(dir, name)).size;
      assert.ok(size <= maxBytes, `${name} is ${size} bytes`);
      assert.ok(size > 0, `${name} is not empty`);
      bytes += size;
    }
    assert.ok(bytes <= 3 * maxBytes);
    // Oldest to newest, the surviving records are one unbroken run that ends with the last one logged.
    const seqs = [file + ".2", file + ".1", file].flatMap((f) => readLines(f).map((r) => r.seq as number));
    assert.equal(seqs.at(-1), total - 1);
    assert.deepEqual(
      seqs,
      Array.from({ length: seqs.length }, (_, k) => total - seqs.length + k),
    );
    assert.equal(readLines(file).at(-1)!.seq, total - 1);
    assert.equal(log.error, undefined);
  });

  it("creates the directory 0700 and the file 0600", { skip: skipModes }, () => {
    const file = logPath();
    const log = new LogFile(file);
    log.log({ level: "info", event: "hello" });
    log.flush();
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(path.dirname(file)).mode & 0o777, 0o700);
  });

  it("tightens an existing world-readable file to 0600, and keeps rotated files private", { skip: skipModes }, () => {
    const file = logPath();
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, '{"old":true}\n');
    chmodSync(file, 0o644);
    const log = new LogFile(file, { maxBytes: 200, keep: 1 });
    log.log({ level: "info", event: "hello" });
    log.flush();
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(readLines(file)[0], { old: true }, "appended, not replaced");
    for (let i = 0; i < 20; i++) log.log({ level: "info", event: "fill", i });
    log.flush();
    assert.ok(existsSync(file + ".1"));
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(file + ".1").mode & 0o777, 0o600);
  });

  it("records the first failure, never throws, and stops logging when the location is unwritable", () => {
    const blocker = path.join(root, `blocker-${++counter}`);
    writeFileSync(blocker, "a regular file, not a directory");
    const log = new LogFile(path.join(blocker, "logs", "mcp.log"));
    assert.doesNotThrow(() => {
      log.log({ level: "error", event: "first" });
      log.flush();
    });
    assert.ok(log.error, "error is set");
    const first = log.error;
    assert.doesNotThrow(() => {
      for (let i = 0; i < 10; i++) log.log({ level: "info", event: "more" });
      log.flush();
    });
    assert.equal(log.error, first, "the first failure is kept");
  });

  it("bounds the queue and reports how many records were dropped, once", () => {
    const file = logPath();
    const log = new LogFile(file, { maxPending: 5 });
    for (let i = 0; i < 12; i++) log.log({ level: "info", event: "flood", i });
    log.flush();
    let records = readLines(file);
    assert.deepEqual(
      records.slice(0, 5).map((r) => r.i),
      [0, 1, 2, 3, 4],
    );
    assert.equal(records.length, 6);
    assert.deepEqual(
      { level: records[5]!.level, event: records[5]!.event, count: records[5]!.count },
      { level: "warn", event: "log.dropped", count: 7 },
    );

    log.log({ level: "info", event: "calm" });
    log.flush();
    records = readLines(file);
    assert.equal(records.length, 7);
    assert.equal(records.filter((r) => r.event === "log.dropped").length, 1);
    assert.equal(records[6]!.event, "calm");
  });

  it("writes a placeholder for a record that cannot be serialised", () => {
    const file = logPath();
    const log = new LogFile(file);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    assert.doesNotThrow(() => {
      log.log({ level: "warn", event: "cyclic", server: "s", data: cyclic });
      log.log({ level: "info", event: "bigint", n: 10n });
      log.log({ level: "info", event: "after" });
      log.flush();
    });
    const records = readLines(file);
    assert.deepEqual(
      records.map((r) => [r.event, r.unserializable]),
      [
        ["cyclic", true],
        ["bigint", true],
        ["after", undefined],
      ],
    );
    assert.equal(records[0]!.server, "s");
  });

  it("cuts string fields longer than 8 KB with a marker, at any depth", () => {
    const file = logPath();
    const log = new LogFile(file);
    const long = "y".repeat(20_000);
    log.log({ level: "info", event: "stderr", text: long, nested: { inner: long }, short: "ok" });
    log.flush();
    const [record] = readLines(file);
    const text = record!.text as string;
    assert.ok(text.endsWith("…"));
    assert.equal(text.length, 8 * 1024 + 1);
    assert.equal((record!.nested as { inner: string }).inner, text);
    assert.equal(record!.short, "ok");
  });

  it("writes nothing after close()", async () => {
    const file = logPath();
    const log = new LogFile(file);
    log.log({ level: "info", event: "before" });
    await log.close();
    assert.deepEqual(
      readLines(file).map((r) => r.event),
      ["before"],
      "close() flushes",
    );
    const size = statSync(file).size;
    log.log({ level: "info", event: "after" });
    log.flush();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(statSync(file).size, size);
    await log.close();
  });
});

describe("readLogTail", { timeout: 60_000 }, () => {
  it("the last records of a long log, stderr lines as they were, a line cut by the read dropped; none for a missing file", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "mcp-log-tail-"));
    try {
      const file = path.join(dir, "server.log");
      const log = new LogFile(file, { maxBytes: 10 * 1024 * 1024 });
      // Multi-byte text, so a cut by bytes and a count of characters differ.
      for (let i = 0; i < 2000; i++) log.log({ level: "debug", event: "stderr", line: `ünïcödé line ${i}` });
      log.log({ level: "warn", event: "disconnected", server: "a", error: "the process exited\nLast stderr lines:" });
      log.flush();
      const tail = readLogTail(file, 3);
      assert.equal(tail.length, 3);
      assert.match(tail[0]!, /^(?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d ünïcödé line 1998$/);
      assert.match(
        tail[2]!,
        /^(?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d disconnected error=the process exited$/,
        "an event, its fields' first lines",
      );
      assert.deepEqual(
        readLogTail(file, 3, "a").map((l) => l.replace(/^(?:\S+ )?\d\d:\d\d:\d\d /, "")),
        ["disconnected error=the process exited"],
        "one server's records",
      );
      const many = readLogTail(file, 100_000);
      assert.ok(many.length < 2001, "only the end of the file is read");
      assert.ok(
        many.every((l) => /ünïcödé line \d+$|disconnected/.test(l)),
        "no half line from the cut",
      );
      assert.deepEqual(readLogTail(path.join(dir, "missing.log"), 5), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("times as the user's clock shows them, not the file's UTC, and with the date when it is not today's", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "mcp-log-tail-"));
    const tz = process.env.TZ;
    try {
      process.env.TZ = "America/Los_Angeles";
      const file = path.join(dir, "server.log");
      const times = ["2026-01-02T03:04:05.000Z", "2026-01-02T20:00:00.000Z"];
      const log = new LogFile(file, { now: () => new Date(times.shift()!) });
      log.log({ level: "debug", event: "stderr", line: "the evening before, there" });
      log.log({ level: "debug", event: "stderr", line: "that day, noon there" });
      log.flush();
      assert.deepEqual(readLogTail(file, 2, undefined, new Date("2026-01-02T21:00:00.000Z")), [
        "2026-01-01 19:04:05 the evening before, there",
        "12:00:00 that day, noon there",
      ]);
    } finally {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
