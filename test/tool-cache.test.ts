/**
 * The persistent tool-list cache, against real files in a temp dir.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { execFile } from "node:child_process";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { promisify } from "node:util";
import type { Tool } from "@modelcontextprotocol/client";
import { cacheKey, ToolCache } from "../src/bridge/tool-cache.ts";

const root = mkdtempSync(path.join(tmpdir(), "mcp-bridge-tool-cache-"));
let counter = 0;

/** A fresh, not yet existing cache file in its own (not yet existing) directory. */
function freshFile(): string {
  counter += 1;
  return path.join(root, `case-${counter}`, "cache", "tools.json");
}

function tool(name: string, extra: Record<string, unknown> = {}): Tool {
  return {
    name,
    description: `the ${name} tool`,
    inputSchema: { type: "object", properties: { x: { type: "string" } } },
    ...extra,
  };
}

/** A clock that advances one second per call, so savedAt order is write order unless a test says otherwise. */
function steppingClock(start = Date.UTC(2025, 0, 1)): () => Date {
  let t = start;
  return () => new Date((t += 1000));
}

function readJson(file: string): { version: number; entries: Record<string, unknown> } {
  return JSON.parse(readFileSync(file, "utf8")) as { version: number; entries: Record<string, unknown> };
}

describe("cacheKey", { timeout: 60_000 }, () => {
  it("is a sha256 hex digest that does not depend on key order or undefined members", () => {
    const a = cacheKey({ command: "npx", args: ["-y", "srv"], env: { A: "1", B: "2" }, cwd: undefined });
    const b = cacheKey({ env: { B: "2", A: "1" }, args: ["-y", "srv"], command: "npx" });
    assert.match(a, /^[0-9a-f]{64}$/);
    assert.equal(a, b);
  });

  it("differs for different values", () => {
    const base = { command: "npx", args: ["-y", "srv"] };
    assert.notEqual(cacheKey(base), cacheKey({ ...base, args: ["srv", "-y"] }));
    assert.notEqual(cacheKey(base), cacheKey({ ...base, command: "node" }));
    assert.notEqual(cacheKey({ a: 1 }), cacheKey({ a: "1" }));
    assert.notEqual(cacheKey({ a: null }), cacheKey({}));
  });
});

describe("ToolCache", { timeout: 60_000 }, () => {
  after(() => rmSync(root, { recursive: true, force: true }));

  it("reads a missing file as a miss", () => {
    const cache = new ToolCache(freshFile());
    assert.equal(cache.get(cacheKey("anything")), undefined);
    assert.equal(cache.error, undefined);
  });

  it("returns what was set, also from a fresh instance on the same file", async () => {
    const file = freshFile();
    const now = new Date(Date.UTC(2025, 5, 1, 12));
    const cache = new ToolCache(file, { now: () => now });
    const key = cacheKey({ server: "alpha" });
    const tools = [tool("one"), tool("two", { annotations: { readOnlyHint: true } })];
    const setting = cache.set(key, { server: "alpha", tools });
    assert.deepEqual(cache.get(key)?.tools, tools, "visible before the write finishes");
    await setting;
    assert.equal(cache.error, undefined);
    assert.deepEqual(cache.get(key), { server: "alpha", savedAt: now.toISOString(), tools });

    const other = new ToolCache(file);
    assert.deepEqual(other.get(key), { server: "alpha", savedAt: now.toISOString(), tools });
    assert.equal(other.get(cacheKey({ server: "beta" })), undefined);
    const data = readJson(file);
    assert.equal(data.version, 1);
    assert.deepEqual(Object.keys(data.entries), [key]);
  });

  it("merges entries written by two instances sharing a file", async () => {
    const file = freshFile();
    const first = new ToolCache(file);
    const second = new ToolCache(file);
    // Both load the (empty) file before either writes, as two pi processes would.
    assert.equal(first.get("a"), undefined);
    assert.equal(second.get("b"), undefined);
    await first.set("a", { server: "a", tools: [tool("ta")] });
    await second.set("b", { server: "b", tools: [tool("tb")] });
    assert.equal(second.get("a")?.server, "a", "the re-read before writing picked up the other instance's entry");
    const third = new ToolCache(file);
    assert.equal(third.get("a")?.tools[0]?.name, "ta");
    assert.equal(third.get("b")?.tools[0]?.name, "tb");
  });

  it("evicts the oldest entries beyond maxEntries", async () => {
    const file = freshFile();
    const cache = new ToolCache(file, { maxEntries: 3, now: steppingClock() });
    for (const name of ["k0", "k1", "k2", "k3", "k4"]) await cache.set(name, { server: name, tools: [tool(name)] });
    assert.deepEqual(Object.keys(readJson(file).entries).sort(), ["k2", "k3", "k4"]);
    const fresh = new ToolCache(file);
    assert.equal(fresh.get("k0"), undefined);
    assert.equal(fresh.get("k1"), undefined);
    assert.equal(fresh.get("k4")?.server, "k4");
    assert.equal(cache.get("k0"), undefined, "the in-memory view matches the file");
  });

  it("evicts by savedAt, not by write order", async () => {
    const file = freshFile();
    let t = 0;
    const cache = new ToolCache(file, { maxEntries: 2, now: () => new Date(Date.UTC(2025, 0, 1) + t * 1000) });
    t = 3;
    await cache.set("a", { server: "a", tools: [tool("a")] });
    t = 1;
    await cache.set("b", { server: "b", tools: [tool("b")] });
    t = 2;
    await cache.set("c", { server: "c", tools: [tool("c")] });
    assert.deepEqual(Object.keys(readJson(file).entries).sort(), ["a", "c"]);
  });

  it("reads a corrupt file as a miss, and a later set repairs it", async () => {
    const file = freshFile();
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, '{"version": 1, "entries": {"a": {"server": "a", "sav');
    const cache = new ToolCache(file);
    assert.equal(cache.get("a"), undefined);
    await cache.set("b", { server: "b", tools: [tool("tb")] });
    assert.equal(cache.error, undefined);
    const data = readJson(file);
    assert.equal(data.version, 1);
    assert.deepEqual(Object.keys(data.entries), ["b"]);
    assert.equal(new ToolCache(file).get("b")?.tools[0]?.name, "tb");

    for (const text of ["null", "[]", '"text"', '{"version": 2, "entries": {}}', '{"version": 1, "entries": []}']) {
      writeFileSync(file, text);
      assert.equal(new ToolCache(file).get("b"), undefined, `${text} reads as empty`);
    }
  });

  it("ignores malformed entries and keeps the valid ones", async () => {
    const file = freshFile();
    mkdirSync(path.dirname(file), { recursive: true });
    const good = { server: "good", savedAt: "2025-01-01T00:00:00.000Z", tools: [tool("ok")] };
    const entries: Record<string, unknown> = {
      good,
      empty: { server: "empty", savedAt: "2025-01-01T00:00:00.000Z", tools: [] },
      notObject: "x",
      noServer: { savedAt: "2025-01-01T00:00:00.000Z", tools: [] },
      numericServer: { server: 1, savedAt: "2025-01-01T00:00:00.000Z", tools: [] },
      noSavedAt: { server: "s", tools: [] },
      toolsNotArray: { server: "s", savedAt: "2025-01-01T00:00:00.000Z", tools: {} },
      toolNotObject: { server: "s", savedAt: "2025-01-01T00:00:00.000Z", tools: ["t"] },
      toolNoName: { server: "s", savedAt: "2025-01-01T00:00:00.000Z", tools: [{ inputSchema: { type: "object" } }] },
      toolNoSchema: { server: "s", savedAt: "2025-01-01T00:00:00.000Z", tools: [{ name: "t" }] },
      toolArraySchema: { server: "s", savedAt: "2025-01-01T00:00:00.000Z", tools: [{ name: "t", inputSchema: [] }] },
      oneBadTool: {
        server: "s",
        savedAt: "2025-01-01T00:00:00.000Z",
        tools: [tool("fine"), { name: 5, inputSchema: {} }],
      },
    };
    writeFileSync(file, JSON.stringify({ version: 1, entries }));
    const cache = new ToolCache(file);
    assert.deepEqual(cache.get("good"), good);
    assert.deepEqual(cache.get("empty")?.tools, []);
    for (const key of Object.keys(entries).filter((k) => k !== "good" && k !== "empty")) {
      assert.equal(cache.get(key), undefined, `${key} is ignored`);
    }
    // A rewrite keeps only what was valid.
    await cache.set("new", { server: "new", tools: [tool("n")] });
    assert.deepEqual(Object.keys(readJson(file).entries).sort(), ["empty", "good", "new"]);
  });

  it("creates the directory 0700 and the file 0600", { skip: process.platform === "win32" }, async () => {
    const file = freshFile();
    const cache = new ToolCache(file);
    await cache.set("a", { server: "a", tools: [tool("a")] });
    assert.equal(statSync(path.dirname(file)).mode & 0o777, 0o700);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    // Still 0600 after a rewrite through a new temp file.
    await cache.set("b", { server: "b", tools: [tool("b")] });
    assert.equal(statSync(file).mode & 0o777, 0o600);
  });

  it("leaves no temp files behind, even with 20 concurrent sets", async () => {
    const file = freshFile();
    const cache = new ToolCache(file, { now: steppingClock() });
    await cache.set("first", { server: "first", tools: [tool("f")] });
    assert.deepEqual(readdirSync(path.dirname(file)), [path.basename(file)]);

    const keys = Array.from({ length: 20 }, (_, i) => `k${i}`);
    await Promise.all(keys.map((key) => cache.set(key, { server: key, tools: [tool(key)] })));
    assert.equal(cache.error, undefined);
    assert.deepEqual(readdirSync(path.dirname(file)), [path.basename(file)]);
    const fresh = new ToolCache(file);
    for (const key of ["first", ...keys])
      assert.equal(fresh.get(key)?.tools[0]?.name, key === "first" ? "f" : key, key);

    // Two instances racing each other still leave only the target file.
    const other = new ToolCache(file);
    await Promise.all(
      keys.flatMap((key) => [
        cache.set(`x${key}`, { server: key, tools: [tool(key)] }),
        other.set(`y${key}`, { server: key, tools: [tool(key)] }),
      ]),
    );
    assert.deepEqual(readdirSync(path.dirname(file)), [path.basename(file)]);
    assert.doesNotThrow(() => readJson(file));
  });

  it("does not rewrite the file when the tools are unchanged", async () => {
    const file = freshFile();
    const cache = new ToolCache(file, { now: steppingClock() });
    const tools = [tool("one"), tool("two")];
    await cache.set("a", { server: "a", tools });
    const before = statSync(file);
    const savedAt = cache.get("a")?.savedAt;

    await cache.set("a", { server: "a", tools: structuredClone(tools) });
    // The same tools with keys in another order and an undefined member are still the same tools.
    const reordered = tools.map((t) => ({
      inputSchema: t.inputSchema,
      name: t.name,
      description: t.description,
      title: undefined,
    }));
    await new ToolCache(file).set("a", { server: "a", tools: reordered });
    const afterSame = statSync(file);
    assert.equal(afterSame.mtimeMs, before.mtimeMs);
    assert.equal(afterSame.ino, before.ino);
    assert.equal(cache.get("a")?.savedAt, savedAt);
    assert.deepEqual(cache.get("a")?.tools, tools);

    await cache.set("a", { server: "a", tools: [tool("one")] });
    const afterChange = statSync(file);
    assert.notEqual(afterChange.ino, before.ino, "a change is written through a rename");
    assert.deepEqual(new ToolCache(file).get("a")?.tools, [tool("one")]);
  });

  it("the same tools with a new protocol revision are written: the next start asks for the revision spoken now", async () => {
    const file = freshFile();
    const cache = new ToolCache(file, { now: steppingClock() });
    await cache.set("a", { server: "a", tools: [tool("one")], protocolVersion: "2025-11-25" });
    await cache.set("a", { server: "a", tools: [tool("one")], protocolVersion: "2026-07-28" });
    assert.equal(cache.get("a")?.protocolVersion, "2026-07-28");
    assert.equal(new ToolCache(file).get("a")?.protocolVersion, "2026-07-28");
  });

  it("records an error and resolves when the location cannot be written", async () => {
    const blocker = path.join(root, `blocker-${++counter}`);
    writeFileSync(blocker, "a file where a directory should be");
    const file = path.join(blocker, "cache", "tools.json");
    const cache = new ToolCache(file);
    assert.equal(cache.get("a"), undefined);
    await cache.set("a", { server: "a", tools: [tool("a")] });
    assert.match(cache.error ?? "", /cannot write tool cache/);
    assert.equal(cache.get("a")?.tools[0]?.name, "a", "still served from memory");
    assert.equal(readFileSync(blocker, "utf8"), "a file where a directory should be");
  });
});

describe("two pi processes writing at once", { timeout: 120_000 }, () => {
  /** Runs `body` (a module's text, given the file as `file`) in two node processes at once. */
  async function twice(file: string, body: string): Promise<void> {
    const script = path.join(path.dirname(file), "write.mts");
    writeFileSync(script, `const [file, who] = process.argv.slice(2);\n${body}`);
    const run = (who: string) => promisify(execFile)(process.execPath, ["--import", "tsx", script, file, who]);
    await Promise.all([run("a"), run("b")]);
  }

  it("the tool cache keeps every server's tools: neither write drops the other's", async () => {
    const file = freshFile();
    mkdirSync(path.dirname(file), { recursive: true });
    const cache = JSON.stringify(path.resolve("src/bridge/tool-cache.ts"));
    await twice(
      file,
      `import { ToolCache } from ${cache};
       for (let i = 0; i < 40; i++)
         await new ToolCache(file).set(who + i, { server: who + i, tools: [{ name: "t", inputSchema: { type: "object" } }] });`,
    );
    assert.equal(Object.keys(readJson(file).entries).length, 80);
  });

  it("the notices given are all remembered: neither write drops the other's", async () => {
    const file = freshFile();
    mkdirSync(path.dirname(file), { recursive: true });
    const memory = JSON.stringify(path.resolve("src/bridge/notice-memory.ts"));
    await twice(
      file,
      `import { NoticeMemory } from ${memory};
       for (let i = 0; i < 40; i++) await new NoticeMemory(file).firstTime([{ key: who + i }]);`,
    );
    assert.equal((JSON.parse(readFileSync(file, "utf8")) as { told: string[] }).told.length, 80);
  });
});
