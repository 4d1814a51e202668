/**
 * Config fuzzing: thousands of generated malformed and adversarial config files (wrong types, deep nesting, 10 MB
 * strings, huge numbers, `__proto__` keys, unicode and empty names, broken syntax) through the loader. It must never
 * throw, never let an invalid entry through, never quote a huge value, and never touch a prototype. The generator is
 * seeded, so a failure names the seed and case that reproduce it; the amount of work is bounded by count, not time.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { findReservedKey, isObject } from "../src/common/values.ts";
import { layerConfigs } from "../src/config/layers.ts";
import { MAX_NESTING, parseConfigText } from "../src/config/parse.ts";
import type { ConfigFileInput, ConfigScope, ServerConfig } from "../src/config/types.ts";
import { checkUrl } from "../src/config/validate/endpoint.ts";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import { MAX_TIMER_MS } from "../src/config/validate/fields.ts";

const SEED = 0x5eed_c0f1;
const CASES = 3000;
/** One case in this many carries a 10 MB string, and one in this many nests thousands deep. */
const HUGE_STRING_EVERY = 500;
const DEEP_EVERY = 150;
const HUGE = "A".repeat(10 * 1024 * 1024);

/** mulberry32: small, fast, and the same sequence on every machine. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A JSON text tree: objects are lists of [key, value] pairs, so keys may repeat and may be `__proto__`. */
type Node = { raw: string } | { obj: Array<[string, Node]> } | { arr: Node[] };

const FIELDS = [
  "command",
  "args",
  "url",
  "env",
  "environment",
  "headers",
  "cwd",
  "type",
  "timeout",
  "initTimeout",
  "requestTimeout",
  "healthCheckInterval",
  "pingTimeout",
  "reconnect",
  "maxRestarts",
  "restartOnCrash",
  "lazy",
  "enabled",
  "disabled",
  "prefix",
  "auth",
  "envFile",
  "autoApprove",
  "autoApproveReadOnly",
];
const EVIL_KEYS = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "__defineGetter__",
];
const TOP_KEYS = [
  "mcpServers",
  "servers",
  "mcp",
  "mcpservers",
  "MCPServers",
  "server",
  "approval",
  "$schema",
  "inputs",
  ...EVIL_KEYS,
];
const NAMES = [
  "",
  " ",
  "a",
  "fs",
  "my server",
  " lead",
  "trail ",
  "名前",
  "🙂",
  "a/b",
  'a"b',
  "a\\b",
  "tab\there",
  "nl\nx",
  "nul\u0000",
  "esc\u001b[2J",
  "bell\u0007",
  "\u202eevil",
  "line\u2028sep",
  "x".repeat(101),
  "y".repeat(100),
  ...EVIL_KEYS,
];
const STRINGS = [
  "",
  " ",
  "node",
  "npx",
  "${HOME}",
  "${",
  "${NOPE}",
  "${A:-b}",
  "${env:X}",
  "http://127.0.0.1:1/mcp",
  "https://example.com/mcp",
  "file:///etc/passwd",
  "javascript:alert(1)",
  "ftp://x",
  "stdio",
  "http",
  "sse",
  "local",
  "remote",
  "oauth",
  "none",
  "日本語",
  "🙂".repeat(50),
  "\u0000",
  "\u001b]52;c;cHduZWQ=\u0007",
  "\ud800",
  "a".repeat(300),
  "Bearer ${TOKEN}",
];
const NUMBERS = [
  "0",
  "-0",
  "1",
  "-1",
  "1.5",
  "2147483647",
  "2147483648",
  "4294967296",
  "9007199254740993",
  "1e308",
  "-1e308",
  "1e-300",
  "1e309",
  "65535",
  "65536",
  "0.0000001",
  "123456789012345678901234567890",
];

class Generator {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = prng(seed);
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }

  scalar(): Node {
    switch (this.int(5)) {
      case 0:
        return { raw: JSON.stringify(this.pick(STRINGS)) };
      case 1:
        return { raw: this.pick(NUMBERS) };
      case 2:
        return { raw: this.pick(["true", "false", "null"]) };
      case 3:
        return { raw: JSON.stringify(this.pick(NAMES)) };
      default:
        return {
          raw: JSON.stringify(String.fromCodePoint(...Array.from({ length: this.int(8) }, () => this.int(0x3000)))),
        };
    }
  }

  value(depth: number): Node {
    if (depth > 3 || this.chance(0.55)) return this.scalar();
    if (this.chance(0.5)) return { arr: Array.from({ length: this.int(4) }, () => this.value(depth + 1)) };
    return { obj: Array.from({ length: this.int(4) }, () => [this.key(), this.value(depth + 1)] as [string, Node]) };
  }

  key(): string {
    return this.chance(0.2) ? this.pick(EVIL_KEYS) : this.chance(0.5) ? this.pick(FIELDS) : this.pick(NAMES);
  }

  /** A value for a known field: usually the right type, often a wrong or hostile one. */
  field(name: string): Node {
    if (this.chance(0.4)) return this.value(1);
    switch (name) {
      case "command":
        return this.chance(0.7)
          ? { raw: JSON.stringify(this.pick(["node", "npx", "${BIN}", ""])) }
          : { arr: [this.scalar(), this.scalar()] };
      case "args":
      case "autoApprove":
        return { arr: Array.from({ length: this.int(4) }, () => this.scalar()) };
      case "url":
        return { raw: JSON.stringify(this.pick(STRINGS.filter((s) => s.includes(":")))) };
      case "env":
      case "environment":
      case "headers":
      case "reconnect":
      case "auth":
        return { obj: Array.from({ length: this.int(4) }, () => [this.key(), this.scalar()] as [string, Node]) };
      default:
        return this.scalar();
    }
  }

  entry(): Node {
    if (this.chance(0.05)) return this.scalar();
    const pairs: Array<[string, Node]> = [];
    if (this.chance(0.7)) pairs.push([this.pick(["command", "url"]), this.field(this.pick(["command", "url"]))]);
    for (let i = this.int(6); i > 0; i--) {
      const key = this.chance(0.85) ? this.pick(FIELDS) : this.key();
      pairs.push([key, this.field(key)]);
    }
    return { obj: pairs };
  }

  file(caseIndex: number): string {
    const pairs: Array<[string, Node]> = [];
    for (let i = 1 + this.int(2); i > 0; i--) {
      const servers: Array<[string, Node]> = [];
      for (let j = this.int(5); j > 0; j--) servers.push([this.pick(NAMES), this.entry()]);
      pairs.push([
        this.chance(0.8) ? this.pick(["mcpServers", "servers", "mcp"]) : this.pick(TOP_KEYS),
        { obj: servers },
      ]);
    }
    let text = render({ obj: pairs });
    if (caseIndex % HUGE_STRING_EVERY === 1)
      text = text.replace(/"node"/, JSON.stringify(HUGE)).replace(/^\{/, `{"big":${JSON.stringify(HUGE)},`);
    if (caseIndex % DEEP_EVERY === 2) {
      const levels = MAX_NESTING + this.int(20_000);
      const open = this.chance(0.5) ? '{"a":' : "[";
      const close = open === "[" ? "]" : "}";
      text = text.replace(/^\{/, `{"deep":${open.repeat(levels)}1${close.repeat(levels)},`);
    }
    return this.mangle(text);
  }

  /** Sometimes breaks the syntax or wraps it in what JSONC tolerates. */
  mangle(text: string): string {
    switch (this.int(12)) {
      case 0:
        return text.slice(0, this.int(text.length + 1));
      case 1:
        return `\ufeff// comment\n${text.replace(/}$/, ",}")}`;
      case 2: {
        const at = this.int(text.length + 1);
        return `${text.slice(0, at)}${this.pick(["{", "}", "[", "]", '"', ",", ":", "/*", "\u0000", "\\"])}${text.slice(at)}`;
      }
      case 3:
        return this.pick([
          "",
          "null",
          "[]",
          "42",
          '"text"',
          "{",
          "}",
          "{}",
          '{"mcpServers": null}',
          '{"mcpServers": []}',
        ]);
      default:
        return text;
    }
  }
}

function render(node: Node): string {
  if ("raw" in node) return node.raw;
  if ("arr" in node) return `[${node.arr.map(render).join(",")}]`;
  return `{${node.obj.map(([k, v]) => `${JSON.stringify(k)}:${render(v)}`).join(",")}}`;
}

const isStringRecord = (value: unknown): boolean =>
  isObject(value) && Object.entries(value).every(([k, v]) => typeof v === "string" && serverKeyOk(k));
const serverKeyOk = (key: string): boolean => key !== "__proto__" && key !== "constructor" && key !== "prototype";
const msOk = (value: number, min: number): boolean => Number.isFinite(value) && value >= min && value <= MAX_TIMER_MS;

/** What every server the loader returns must satisfy, whatever the file said. */
function checkServer(server: ServerConfig, where: string): void {
  const what = `${where}: server ${JSON.stringify(server.name).slice(0, 80)}`;
  // Checked here on its own terms, not with the validator's own function.
  const name = server.name;
  assert.ok(name.length > 0 && name.length <= 100 && name === name.trim() && serverKeyOk(name), `${what}: name`);
  assert.ok(
    ![...name].some(
      (c) =>
        c.codePointAt(0)! < 0x20 ||
        (c.codePointAt(0)! >= 0x7f && c.codePointAt(0)! <= 0x9f) ||
        c === "\u2028" ||
        c === "\u2029",
    ),
    `${what}: untypable name`,
  );
  assert.ok(["stdio", "http", "sse"].includes(server.transport), `${what}: transport`);
  if (server.transport === "stdio") {
    assert.ok(typeof server.command === "string" && server.command.trim() !== "", `${what}: command`);
    assert.equal(server.url, undefined, `${what}: a local server with a url`);
  } else {
    assert.ok(typeof server.url === "string" && checkUrl(server.url) === undefined, `${what}: url`);
    assert.equal(server.command, undefined, `${what}: a remote server with a command`);
  }
  assert.ok(Array.isArray(server.args) && server.args.every((a) => typeof a === "string"), `${what}: args`);
  assert.ok(isStringRecord(server.env), `${what}: env`);
  assert.ok(isStringRecord(server.headers), `${what}: headers`);
  assert.ok(server.cwd === undefined || (typeof server.cwd === "string" && server.cwd.trim() !== ""), `${what}: cwd`);
  for (const field of ["timeout", "requestTimeout", "pingTimeout"] as const)
    assert.ok(msOk(server[field], Number.MIN_VALUE), `${what}: ${field} ${server[field]}`);
  assert.ok(msOk(server.healthCheckInterval, 0), `${what}: healthCheckInterval`);
  assert.ok(Number.isSafeInteger(server.retry.maxAttempts) && server.retry.maxAttempts >= 0, `${what}: maxAttempts`);
  assert.ok(
    msOk(server.retry.initialDelayMs, Number.MIN_VALUE) && msOk(server.retry.maxDelayMs, Number.MIN_VALUE),
    `${what}: retry delays`,
  );
  assert.equal(typeof server.enabled, "boolean", `${what}: enabled`);
  assert.equal(typeof server.lazy, "boolean", `${what}: lazy`);
  assert.ok(server.prefix === undefined || typeof server.prefix === "string", `${what}: prefix`);
  assert.ok(
    Array.isArray(server.autoApprove) && server.autoApprove.every((t) => typeof t === "string" && t.trim() !== ""),
    `${what}: autoApprove`,
  );
  assert.equal(typeof server.autoApproveReadOnly, "boolean", `${what}: autoApproveReadOnly`);
  if (server.oauth)
    assert.ok(
      Number.isInteger(server.oauth.callbackPort) &&
        server.oauth.callbackPort >= 1 &&
        server.oauth.callbackPort <= 65535,
      `${what}: port`,
    );
  assert.equal(findReservedKey(server.raw), undefined, `${what}: a reserved key in raw`);
}

/** Everything a polluted prototype would show. */
function prototypeSnapshot(): string {
  const names = (o: object) => Object.getOwnPropertyNames(o).sort().join(",");
  return [
    names(Object.prototype),
    names(Array.prototype),
    names(String.prototype),
    names(Function.prototype),
    String(Object.getPrototypeOf({}) === Object.prototype),
  ].join("|");
}

function assertNoPollution(before: string, where: string): void {
  const probe = {} as Record<string, unknown>;
  for (const key of ["command", "args", "url", "env", "polluted", "a", "enabled"])
    assert.equal(probe[key], undefined, `${where}: ({}).${key}`);
  assert.equal(prototypeSnapshot(), before, `${where}: a built-in prototype changed`);
}

const SCOPES: readonly ConfigScope[] = ["flag", "project", "user", "bundled"];

describe("config fuzzing", () => {
  test(`${CASES} generated configs through the loader: no throw, no invalid server, no huge quote, no prototype pollution`, () => {
    const gen = new Generator(SEED);
    const before = prototypeSnapshot();
    let servers = 0;
    let problems = 0;
    for (let i = 0; i < CASES; i++) {
      const where = `seed ${SEED}, case ${i}`;
      const files: ConfigFileInput[] = SCOPES.filter(() => gen.chance(0.5)).map((scope) => ({
        source: { scope, path: `/${scope}/mcp.json` },
        text: gen.file(i),
      }));
      let result: ReturnType<typeof layerConfigs>;
      try {
        result = layerConfigs(files);
      } catch (error) {
        assert.fail(
          `${where}: the loader threw ${error instanceof Error ? error.stack : String(error)}\n${files.map((f) => f.text!.slice(0, 500)).join("\n---\n")}`,
        );
      }
      for (const server of result.servers) checkServer(server, where);
      for (const problem of result.problems) {
        assert.ok(problem.message.length < 20_000, `${where}: a ${problem.message.length}-character message`);
        assert.ok((problem.server?.length ?? 0) <= 100, `${where}: a ${problem.server?.length}-character server label`);
      }
      servers += result.servers.length;
      problems += result.problems.length;
      assertNoPollution(before, where);
    }
    // The generator must reach both sides, or the checks above prove little.
    assert.ok(servers > CASES / 10, `only ${servers} servers were valid`);
    assert.ok(problems > CASES, `only ${problems} problems were found`);
  });

  test("entries built in code (not parsed), with reserved keys as own properties, are refused the same way", () => {
    const gen = new Generator(SEED + 1);
    const before = prototypeSnapshot();
    for (let i = 0; i < CASES / 3; i++) {
      const where = `seed ${SEED + 1}, case ${i}`;
      const parsed = parseConfigText(render(gen.entry())).value;
      // The shape a caller gets from elsewhere (import, /mcp add): an ordinary object, reserved keys defined on it.
      const entry = isObject(parsed) ? Object.defineProperties({}, Object.getOwnPropertyDescriptors(parsed)) : parsed;
      const name = gen.pick(NAMES);
      const result = validateServerEntry(name, entry, { scope: "project", path: "/p" });
      if (result.config) checkServer(result.config, where);
      else assert.ok(result.errors.length > 0, `${where}: refused without a reason`);
      assertNoPollution(before, where);
    }
  });
});
