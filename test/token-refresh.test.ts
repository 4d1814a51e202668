/**
 * A session outlives its tokens: real pi in-process (faux model) calls tools of real HTTP servers on 127.0.0.1 whose
 * accepted token changes mid-session. A `!command` header is run again when the server refuses it (once for a burst
 * of refused calls) or before a request once older than `headersTtl`; an inline value is refused with advice.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { type InProcessPi, startInProcessPi } from "./pi-harness.ts";
import { type RunningServer, startSse, startStreamableHttp } from "./fixtures/http-servers.ts";
import { EXTENSION_DIR, tempDir } from "./helpers.ts";
import { validateServerEntry } from "../src/config/validate/entry.ts";

interface ToolResult {
  role: "toolResult";
  isError: boolean;
  content: Array<{ text?: string }>;
}

/** One server whose accepted token the test changes, and the token file its `!command` reads. */
interface Rotating {
  server: RunningServer;
  auth: { token: string };
  tokenFile: string;
  runsFile: string;
}

const newToken = () => `tok-${randomUUID()}`;

describe("token refresh: a `!command` header is read again, in real pi", { timeout: 120_000 }, () => {
  const dir = tempDir("mcp-bridge-tokens-");
  const agentDir = path.join(dir.dir, "agent");
  const originalCwd = process.cwd();
  const servers: Record<string, Rotating> = {};
  const literal = { token: newToken() };
  let inline: RunningServer;
  let pi: InProcessPi;
  /** Every token a server accepted at some point: none may show anywhere. */
  const tokens: string[] = [literal.token];

  async function rotating(name: string, start: typeof startStreamableHttp, refuseWith?: 403): Promise<Rotating> {
    const auth = { token: newToken() };
    tokens.push(auth.token);
    const tokenFile = path.join(dir.dir, `${name}.token`);
    const runsFile = path.join(dir.dir, `${name}.runs`);
    writeFileSync(tokenFile, `Bearer ${auth.token}\n`);
    const whoami = {
      name: "whoami",
      description: "Says what credentials it got",
      inputSchema: { type: "object" as const },
    };
    return { server: await start({ auth, extraTools: [whoami], refuseWith }), auth, tokenFile, runsFile };
  }

  /** The token changes, as when `gh` refreshes its own: the file the command reads, and what the server accepts. */
  function rotate(r: Rotating): string {
    const old = r.auth.token;
    r.auth.token = newToken();
    tokens.push(r.auth.token);
    writeFileSync(r.tokenFile, `Bearer ${r.auth.token}\n`);
    return old;
  }

  const runs = (r: Rotating) => (existsSync(r.runsFile) ? readFileSync(r.runsFile, "utf8").split("\n").length - 1 : 0);
  const refusedWith = (r: Rotating, token: string, from: number) =>
    r.server.requests.slice(from).filter((q) => q.authorization === `Bearer ${token}`).length;

  async function call(tool: string, count = 1): Promise<ToolResult[]> {
    const calls = Array.from({ length: count }, (_, i) => fauxToolCall(tool, { text: `hello ${i}` }));
    pi.faux.setResponses([fauxAssistantMessage(calls, { stopReason: "toolUse" }), fauxAssistantMessage("done")]);
    const before = pi.session.messages.length;
    await pi.session.prompt(`call ${tool}`);
    return pi.session.messages.slice(before).filter((m) => (m as { role: string }).role === "toolResult") as never;
  }
  const text = (r: ToolResult) => r.content.map((c) => c.text ?? "").join("\n");

  before(async () => {
    servers.http = await rotating("http", startStreamableHttp);
    servers.sse = await rotating("sse", startSse);
    servers.ttl = await rotating("ttl", startStreamableHttp);
    servers.forbidden = await rotating("forbidden", startStreamableHttp, 403);
    inline = await startStreamableHttp({ auth: literal });
    const entry = (name: string, extra: Record<string, unknown> = {}) => ({
      url: servers[name]!.server.url,
      // The command says each time it runs, so the test can count the runs.
      headers: { Authorization: `!echo run >> '${servers[name]!.runsFile}'; cat '${servers[name]!.tokenFile}'` },
      healthCheckInterval: 0,
      ...extra,
    });
    mkdirSync(agentDir);
    writeFileSync(
      path.join(agentDir, "mcp.json"),
      JSON.stringify({
        approval: "never",
        exposure: "direct",
        mcpServers: {
          http: entry("http"),
          sse: entry("sse", { type: "sse" }),
          // A millisecond: any value sent later than that after it was read is read again first.
          ttl: entry("ttl", { headersTtl: 0.001 }),
          forbidden: entry("forbidden"),
          inline: { url: inline.url, headers: { Authorization: `Bearer ${literal.token}` }, healthCheckInterval: 0 },
        },
      }),
    );
    process.env.PI_CODING_AGENT_DIR = agentDir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(dir.dir);
    pi = await startInProcessPi({ cwd: dir.dir, agentDir, extensionPaths: [EXTENSION_DIR] });
    await pi.session.bindExtensions({});
  });

  after(async () => {
    await pi?.close();
    process.chdir(originalCwd);
    await Promise.all([...Object.values(servers).map((r) => r.server.close()), inline?.close()]);
    dir.cleanup();
  });

  for (const name of ["http", "sse", "forbidden"]) {
    test(`${name}: the call after a token change succeeds, after one refused request, each time`, async () => {
      const r = servers[name]!;
      assert.equal(text((await call(`mcp_${name}_echo`))[0]!), "hello 0");
      for (let change = 1; change <= 2; change++) {
        const from = r.server.requests.length;
        const runsBefore = runs(r);
        const old = rotate(r);
        const [result] = await call(`mcp_${name}_echo`);
        assert.equal(result!.isError, false, text(result!));
        assert.equal(text(result!), "hello 0");
        assert.equal(refusedWith(r, old, from), 1, `change ${change}: one request refused with the old token`);
        assert.equal(runs(r), runsBefore + 1, `change ${change}: the command ran once more`);
      }
    });
  }

  test("a value read again is redacted as the first one was", async () => {
    const r = servers.http!;
    rotate(r);
    const [result] = await call("mcp_http_whoami");
    assert.equal(result!.isError, false, text(result!));
    // The server quotes the credentials it got: the new token, which only the re-run command printed.
    assert.match(text(result!), /^called with \S/);
    assert.ok(!text(result!).includes(r.auth.token), "the new token is hidden");
  });

  test("10 calls in flight refused together run the command once", async () => {
    const r = servers.http!;
    const from = r.server.requests.length;
    const runsBefore = runs(r);
    const old = rotate(r);
    const results = await call("mcp_http_echo", 10);
    assert.equal(results.length, 10);
    for (const result of results) assert.equal(result.isError, false, text(result));
    // All ten went out with the old token before any answer came back: one burst.
    assert.ok(refusedWith(r, old, from) > 1, "the calls were in flight together");
    assert.equal(runs(r), runsBefore + 1, "one run of the command for the whole burst");
  });

  test("headersTtl: the command runs again before the request, so the server refuses nothing", async () => {
    const r = servers.ttl!;
    const from = r.server.requests.length;
    const runsBefore = runs(r);
    const old = rotate(r);
    const [result] = await call("mcp_ttl_echo");
    assert.equal(result!.isError, false, text(result!));
    assert.equal(refusedWith(r, old, from), 0, "nothing was sent with the old token");
    assert.equal(runs(r), runsBefore + 1);
  });

  test("an inline value the server refuses is not retried, and the error says to use a `!command`", async () => {
    const from = inline.requests.length;
    literal.token = newToken();
    tokens.push(literal.token);
    const [result] = await call("mcp_inline_echo");
    assert.equal(result!.isError, true);
    assert.match(text(result!), /HTTP 401/);
    assert.match(text(result!), /write the header's value as a `!command` \(`"!cat <token file>"`\)/);
    assert.match(text(result!), /not retried/);
    assert.equal(inline.requests.length - from, 1, "one request, not retried");
  });

  test("a refreshed value refused too names the header, its `!command`, and that it was re-read", async () => {
    const r = servers.http!;
    const from = r.server.requests.length;
    const runsBefore = runs(r);
    rotate(r);
    // The server moves on, but the file keeps the value it now refuses.
    r.auth.token = newToken();
    tokens.push(r.auth.token);
    const [result] = await call("mcp_http_echo");
    assert.equal(result!.isError, true);
    assert.match(text(result!), /`Authorization` header .* came from a `!command`, which was run again/);
    assert.equal(r.server.requests.length - from, 2, "sent once, and once more with the value read again");
    assert.equal(runs(r), runsBefore + 1, "the command ran again, once");
  });

  test("no token, old or new, shows in a tool result, the transcript or a log", () => {
    const logs = path.join(agentDir, "mcp-bridge");
    const files = [path.join(logs, "mcp.log")];
    if (existsSync(path.join(logs, "servers")))
      files.push(...readdirSync(path.join(logs, "servers")).map((f) => path.join(logs, "servers", f)));
    const everything = [JSON.stringify(pi.session.messages), ...files.map((f) => readFileSync(f, "utf8"))].join("\n");
    assert.ok(existsSync(files[0]!), "the bridge wrote its log");
    for (const token of tokens) assert.ok(!everything.includes(token), "a token leaked");
  });
});

describe("headersTtl in a config", () => {
  const source = { scope: "user", path: "/tmp/mcp.json" } as const;
  const remote = (headersTtl: unknown) =>
    validateServerEntry("s", { url: "https://example.com/mcp", headers: { A: "!true" }, headersTtl }, source);

  test("seconds, kept as ms; anything else, or on a local server, is an error naming the field", () => {
    assert.equal(remote(3600).config?.headersTtl, 3_600_000);
    assert.equal(remote(undefined).config?.headersTtl, undefined);
    for (const bad of [0, -1, "3600", 1e10]) assert.match(remote(bad).errors.join(), /`headersTtl` must be a number/);
    const local = validateServerEntry("s", { command: "x", headersTtl: 60 }, source);
    assert.match(local.errors.join(), /`headersTtl` is for a remote server's `headers`/);
  });
});
