/**
 * The pure pieces that keep secrets and terminal escapes in: stripping control sequences, the redactor and what it
 * counts as secret (inline `env` values, headers, URL userinfo and query values, credential shapes), a tool's shown
 * text, and a server's lifecycle report redacting what it publishes and logs.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Tool } from "@modelcontextprotocol/client";
import { isPlainValue, Redactor, redactShapes } from "../src/common/redact.ts";
import { stripControls, stripControlsLine } from "../src/common/terminal-text.ts";
import { argSecrets, inlineEnvSecrets, resolveServerConfig } from "../src/config/substitute.ts";
import { pathSecrets } from "../src/config/import/secrets.ts";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import { LifecycleReport } from "../src/connection/lifecycle-report.ts";
import { normalizeToolResult } from "../src/translate/output.ts";
import { safeTool } from "../src/translate/server-text.ts";

const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

describe("stripControls", () => {
  test("removes whole escape sequences: CSI, OSC (BEL or ST, also unterminated), DCS/APC strings, two-character ESC, 8-bit CSI", () => {
    assert.equal(stripControls("a\x1b[2Jb\x1b[38;5;196mc\x1b[0m"), "abc");
    assert.equal(stripControls("x\x1b]52;c;cHduZWQ=\x07y"), "xy");
    assert.equal(stripControls("x\x1b]0;title\x1b\\y"), "xy");
    assert.equal(stripControls("x\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\y"), "xlinky");
    assert.equal(stripControls("x\x1bPq#0;2;0;0;0\x1b\\y\x1b_apc\x1b\\z"), "xyz");
    assert.equal(stripControls("x\x1b(By\x1bcz\x1b7w"), "xyzw");
    assert.equal(stripControls("x\x9b31my\x9d0;t\x9cz"), "xyz");
    assert.equal(stripControls("ok \x1b]52;c;unterminated"), "ok ");
  });

  test("removes lone controls (NUL, BEL, BS, CR, DEL, C1) and keeps newlines, tabs and all printable Unicode", () => {
    assert.equal(stripControls("a\x00b\x07c\x08d\re\x7ff\x85g\x9f"), "abcdefg");
    assert.equal(stripControls("line 1\r\nline 2\tcol"), "line 1\nline 2\tcol");
    const unicode = "héllo → 日本語 🙂 \u00a0nbsp ÿ שלום 👩\u200d💻";
    assert.equal(stripControls(unicode), unicode);
  });

  test("removes bidi embeddings, overrides and isolates, which can show text in another order than it is read", () => {
    assert.equal(
      stripControls("safe\u202e}exe.txt\u202c and \u2067isolated\u2069 \u202aembedded\u202c"),
      "safe}exe.txt and isolated embedded",
    );
  });

  test("the one-line form joins lines and tabs with single spaces and trims", () => {
    assert.equal(stripControlsLine("  Evil \x1b]0;x\x07title\n\tsecond  line\r\n"), "Evil title second  line");
  });

  test("a long run of spaces (a server's description padded with them) is made one line in time linear in its length", () => {
    // Not a measurement: the line is long enough that work growing with the square of its length takes minutes (it
    // took 7 s for half as many spaces), while it takes milliseconds now; the bound lies far from both.
    const padded = `a${" ".repeat(240_000)}b\n${" ".repeat(240_000)}c`;
    const started = performance.now();
    assert.equal(stripControlsLine(padded), `a${" ".repeat(240_000)}b c`);
    assert.ok(performance.now() - started < 15_000, `${Math.round(performance.now() - started)} ms`);
  });
});

describe("Redactor", () => {
  test("known values, also percent-encoded, longest first; short ones never", () => {
    const redactor = new Redactor(["abcd1234", "abcd12345678", "a/b/c/d", "ab"]);
    assert.equal(
      redactor.text("token abcd1234 and abcd12345678; q=a%2Fb%2Fc%2Fd; ab stays"),
      "token *** and ***; q=***; ab stays",
    );
    // As a URL's query writes `'` (%27), and a form a space (+); a tool result too.
    const quoted = new Redactor(["it's-a-secret", "two words (x)"]);
    const url = new URL("https://h.example/?q=it's-a-secret").href;
    const form = new URLSearchParams({ q: "two words (x)" }).toString();
    assert.equal(quoted.text(`${url} ${form}`), "https://h.example/?q=*** q=***");
    assert.deepEqual(quoted.result({ text: `${url} ${form}` }), { text: "https://h.example/?q=*** q=***" });
  });

  test("credentials by their shape: URL userinfo, secret query values, JSON token fields, KEY=value, Bearer", () => {
    assert.equal(redactShapes("see https://user:pa55@host.example/x"), "see https://***@host.example/x");
    assert.equal(redactShapes("https://ghp_abc123@github.com/o/r"), "https://***@github.com/o/r");
    assert.equal(redactShapes("GET /cb?code=abc&state=s1&page=2"), "GET /cb?code=***&state=s1&page=2");
    assert.equal(redactShapes("/x?access_token=t1&api_key=k2&sig=s3"), "/x?access_token=***&api_key=***&sig=***");
    assert.equal(redactShapes("/cb#code=c1a2b3&state=s1"), "/cb#code=***&state=s1", "a code in a redirect's fragment");
    assert.equal(
      redactShapes(`{"access_token":"t-1","refresh_token" : "r\\"2","token_type":"Bearer"}`),
      `{"access_token":"***","refresh_token" : "***","token_type":"Bearer"}`,
    );
    // A `${VAR}` reference is the name of a value, shown where a message gives the `env` entry to write.
    assert.equal(redactShapes('add "BRAVE_API_KEY": "${BRAVE_API_KEY}"'), 'add "BRAVE_API_KEY": "${BRAVE_API_KEY}"');
    assert.equal(redactShapes('"api_key": "${X}tail"'), '"api_key": "***"');
    assert.equal(
      redactShapes('{"db_password": 73920184, "max_tokens": 4096}'),
      '{"db_password": ***, "max_tokens": 4096}',
    );
    assert.equal(redactShapes("request { apiKey: 'sk-abcdef123456…"), "request { apiKey: '***…");
    // Node and Python quote a value that has a `'` in it with `"`.
    assert.equal(redactShapes(`{ apiKey: "sk-it's-9f", 'x-api-key': "k'9" }`), `{ apiKey: "***", 'x-api-key': "***" }`);
    assert.equal(
      redactShapes("OPENAI_API_KEY=sk-123 --client-secret=shh max_tokens=100"),
      "OPENAI_API_KEY=*** --client-secret=*** max_tokens=100",
    );
    assert.equal(redactShapes("Authorization: Bearer eyJhbGciOi.x.y"), "Authorization: Bearer ***");
    assert.equal(
      redactShapes(`API_KEY="sk-1 2" TOKEN='a b' PASSWORD="" next`),
      `API_KEY="***" TOKEN='***' PASSWORD="" next`,
    );
    // As a JSON string quotes it (a server's error body).
    assert.equal(
      redactShapes(String.raw`{"e":"bad API_KEY=\"sk-1 2\" given"}`),
      String.raw`{"e":"bad API_KEY=\"***\" given"}`,
    );
    assert.equal(redactShapes("authorization: bearer xyz12345abc"), "authorization: bearer ***");
    assert.equal(redactShapes("Basic dXNlcjpwYXNz"), "Basic ***");
    assert.equal(
      redactShapes(
        'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\npassword = "hunter two"\ntoken = None',
      ),
      "aws_secret_access_key = ***\npassword = ***\ntoken = None",
    );
    assert.equal(
      redactShapes(`DB_PASS=hunter2 MYSQL_PWD='s3cr3t' {"smtp-pass": "x9", "sshPassphrase": "y8"} bypass=true PWD=/x`),
      `DB_PASS=*** MYSQL_PWD='***' {"smtp-pass": "***", "sshPassphrase": "***"} bypass=true PWD=/x`,
    );
    const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlLXZhbHVl";
    assert.equal(redactShapes(`session ${jwt} expired; {"jwt": "${jwt}"}`), 'session *** expired; {"jwt": "***"}');
    assert.equal(
      redactShapes("Basic authentication failed; see https://docs.example/auth?page=2"),
      "Basic authentication failed; see https://docs.example/auth?page=2",
    );
  });

  test("headers as a server logs them, and curl's -u, are hidden; prose after such a name is kept", () => {
    assert.equal(redactShapes("> x-api-key: sk-abc123def\n> Accept: */*"), "> x-api-key: ***\n> Accept: */*");
    assert.equal(redactShapes("Authorization: sk-abc123def456"), "Authorization: ***");
    assert.equal(redactShapes("Cookie: session=abc123; theme=dark\nnext"), "Cookie: ***\nnext");
    assert.equal(redactShapes("set-cookie: sid=abcdef1234; Path=/"), "set-cookie: ***");
    assert.equal(
      redactShapes("> Authorization: Bot MTIzNDU2Nzg5.Gx1.abc\nauthorization: ApiKey dGVzdDp0ZXN0MTIz"),
      "> Authorization: Bot ***\nauthorization: ApiKey ***",
    );
    assert.equal(
      redactShapes('curl -u admin:hunter2 https://x.example; curl --user "me:pa55" y'),
      'curl -u admin:*** https://x.example; curl --user "me:***" y',
    );
    for (const kept of [
      "token: invalid or expired",
      "refused at https://as.example/token: invalid_client (client authentication failed)",
      "token: insufficient_scope",
      "at https://as.example/token: invalid_client (wrong secret)",
      "password: 8 characters at least",
      "first pass: 1200ms",
      "Authorization: Basic authentication failed",
      "authorization: missing credentials",
      "Authorization: Bearer ***",
      "Authorization: token ***",
      "set X-Api-Key: ${API_KEY} in headers",
      "docker run -u 1000:1000 img",
      `{ apiKey: '***' }`,
    ])
      assert.equal(redactShapes(kept), kept);
  });

  test("a value hidden by its shape keeps the punctuation after it, so the sentence still reads", () => {
    assert.equal(
      redactShapes("GET https://x.example/?api_key=sk-abc123, which failed (see API_KEY=sk-abc123)."),
      "GET https://x.example/?api_key=***, which failed (see API_KEY=***).",
    );
  });

  test("a long line of kebab-case words is filtered in time linear in its length (a server may flood stderr with them)", () => {
    // Not a measurement: each took seconds at a quarter of these lengths, growing with the square of the length (so
    // half a minute to minutes here); now tens of milliseconds. The bound lies far from both.
    for (const line of [
      ..."=,:,://,: 'x'".split(",").map((end) => "ab-".repeat(60_000) + end),
      "-eyJ".repeat(64_000),
      ":x-api-key".repeat(40_000),
    ]) {
      const started = performance.now();
      assert.equal(redactShapes(line), line);
      assert.ok(
        performance.now() - started < 15_000,
        `${line.slice(-6)}: ${Math.round(performance.now() - started)} ms`,
      );
    }
    assert.equal(redactShapes("x-ab--client-secret=shh -https://u:p@h"), "x-ab--client-secret=*** -https://***@h");
  });

  test("a secret of several lines (a PEM key) is hidden also line by line, as a server's stderr comes", () => {
    const body = ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7", "VJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1+fW"];
    const pem = `-----BEGIN PRIVATE KEY-----\r\n${body.join("\r\n")}\r\n-----END PRIVATE KEY-----\r\n`;
    const redactor = new Redactor([pem]);
    assert.deepEqual(
      body.map((line) => redactor.text(`key: ${line}`)),
      ["key: ***", "key: ***"],
    );
    // Its CRs are stripped from what is filtered, so the whole no longer stands there either.
    const read = redactor.result(`read ${pem}`);
    assert.ok(!body.some((line) => read.includes(line)), read);
    assert.equal(redactor.text("-----BEGIN PRIVATE KEY-----"), "-----BEGIN PRIVATE KEY-----");
    // Written with `\n`s, as a variable holds it, and printed by the server as the lines they stand for.
    const escaped = new Redactor([
      `-----BEGIN RSA PRIVATE KEY-----\\n${body.join("\\n")}\\n-----END RSA PRIVATE KEY-----`,
    ]);
    assert.equal(escaped.text(body[0]!), "***");
  });

  test("a known value with a quote or backslash is hidden also where it is quoted as JSON", () => {
    const redactor = new Redactor(['p\\a"ss-1234']);
    assert.equal(redactor.text(`it said ${JSON.stringify('bad key p\\a"ss-1234')}`), 'it said "bad key ***"');
  });

  test("everything it filters loses control sequences; payloads are walked, errors become their filtered message", () => {
    const redactor = new Redactor(["s3cret-value"]);
    assert.equal(redactor.text("\x1b]52;c;x\x07s3cret-value\x1b[2J"), "***");
    const payload = redactor.value({
      a: ["x s3cret-value"],
      n: 1,
      nested: { e: new Error("boom s3cret-value") },
      data: "s3cret-value",
    });
    assert.deepEqual(payload, { a: ["x ***"], n: 1, nested: { e: "boom ***" }, data: "***" });
  });

  test("a tool result: known secrets hidden, but no shapes, no plain values (paths) and no binary fields touched", () => {
    const redactor = new Redactor(["s3cret-value", "/home/someone"]);
    const result = redactor.result({
      content: [
        { type: "text", text: "password=hunter22 s3cret-value /home/someone/file \x1b[2J" },
        { type: "image", data: "s3cret-value", mimeType: "image/png" },
      ],
    });
    assert.deepEqual(result.content, [
      { type: "text", text: "password=hunter22 *** /home/someone/file " },
      { type: "image", data: "s3cret-value", mimeType: "image/png" },
    ]);
  });

  test("a base64 key that starts with `/` (as one AWS secret key in 64 does) is hidden in a tool result; a path is not", () => {
    const key = "/HDmYkGqPsCU36yDz5nzF2VVZnI2+878nlOXLV2U";
    const redactor = new Redactor([key, "/Users/JohnSmith/MyProjects2024/AppV2"]);
    assert.deepEqual(redactor.result({ text: `key ${key} in /Users/JohnSmith/MyProjects2024/AppV2/x` }), {
      text: "key *** in /Users/JohnSmith/MyProjects2024/AppV2/x",
    });
  });

  test("a text resource sent as a blob, which the model is shown decoded, has its secret hidden; other blobs are kept", () => {
    const redactor = new Redactor(["s3cret-value"]);
    const b64 = (text: string) => Buffer.from(text).toString("base64");
    const resource = (mimeType: string, text: string) => ({
      type: "resource",
      resource: { uri: "a://b", mimeType, blob: b64(text) },
    });
    const clean = resource("text/plain", "nothing to hide");
    const binary = resource("application/octet-stream", "s3cret-value");
    const result = redactor.result({
      content: [resource("application/json", '{"k": "s3cret-value"}\x1b[2J'), clean, binary],
    });
    assert.equal(normalizeToolResult(result).text.split("\n")[1], '{"k": "***"}');
    assert.equal(result.content[1], clean);
    assert.equal(result.content[2], binary);
  });

  test("what is filtered is a copy: the original is never changed, and parts with nothing to hide are kept as they are", () => {
    const redactor = new Redactor(["s3cret-value"]);
    const clean = { type: "text", text: "nothing to hide" };
    const dirty = { type: "text", text: "a s3cret-value here" };
    const original = { content: [clean, dirty], structuredContent: { list: [1, "two"] } };
    const before = structuredClone(original);
    const result = redactor.result(original);
    assert.deepEqual(original, before, "the server's result is untouched");
    assert.deepEqual(result.content, [clean, { type: "text", text: "a *** here" }]);
    assert.equal(result.content[0], clean, "a part with nothing to hide is not copied");
    assert.equal(result.structuredContent, original.structuredContent);
    assert.equal(redactor.result(clean), clean);
    // A class instance becomes a plain object, as it always did.
    class Box {
      constructor(readonly text: string) {}
    }
    const boxed = redactor.value({ box: new Box("plain") }).box;
    assert.equal(Object.getPrototypeOf(boxed), Object.prototype);
    assert.deepEqual({ ...boxed }, { text: "plain" });
  });

  test("a __proto__ key (as JSON.parse makes it) is kept in a copy where something was hidden", () => {
    const result = JSON.parse('{"a": "a s3cret-value", "__proto__": {"b": "s3cret-value"}, "c": 1}') as object;
    const out = new Redactor(["s3cret-value"]).result(result);
    assert.equal(JSON.stringify(out), '{"a":"a ***","__proto__":{"b":"***"},"c":1}');
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
  });

  test("a secret used as a key (a tool's structured content keyed by token) is hidden as a value is", () => {
    const redactor = new Redactor(["s3cret-value"]);
    const result = redactor.result({ structuredContent: { "s3cret-value": { scopes: ["repo"] }, other: 1 } });
    assert.equal(JSON.stringify(result), '{"structuredContent":{"***":{"scopes":["repo"]},"other":1}}');
    assert.equal(JSON.stringify(redactor.value({ "by s3cret-value": 1 })), '{"by ***":1}');
  });

  test("a secret of digits held as a JSON number (structured content's account number) is hidden as the string is", () => {
    const redactor = new Redactor(["73920184", "sk-9f8e7d"]);
    const content = { account: 73920184, other: 173920184, count: 5, price: 7392.5 };
    const hidden = { account: "***", other: "1***", count: 5, price: 7392.5 };
    assert.deepEqual(redactor.result(content), hidden);
  });

  test("a payload nested deeper than any real one is cut, not walked without end", () => {
    let deep: unknown = "s3cret-value";
    for (let i = 0; i < 10_000; i++) deep = { d: deep };
    const out = JSON.stringify(new Redactor(["s3cret-value"]).value(deep));
    assert.ok(!out.includes("s3cret-value"));
  });
});

describe("what counts as a secret in a config", () => {
  const entry = (raw: Record<string, unknown>) => {
    const result = validateServerEntry("s", raw, { scope: "user", path: "/u/mcp.json" });
    assert.ok(result.config, result.errors.join("; "));
    return result.config;
  };

  test("inline env values are secrets, except plain numbers, booleans, paths and words under keys that do not say secret", () => {
    assert.deepEqual(inlineEnvSecrets("SERVICE_ID", "zq-PLANTED-7731"), ["zq-PLANTED-7731"]);
    assert.deepEqual(inlineEnvSecrets("PORT", "8080"), []);
    // A nested default's reference is no inline text: its value, not its name, is the secret.
    assert.deepEqual(inlineEnvSecrets("API_KEY", "${A:-${B_KEY}}"), []);
    assert.deepEqual(inlineEnvSecrets("DEBUG", "true"), []);
    assert.deepEqual(inlineEnvSecrets("ROOT", "/srv/data"), []);
    // n8n's documented settings: hidden, every "stdio" and "error" about the server read `***`.
    assert.deepEqual(inlineEnvSecrets("MCP_MODE", "stdio"), []);
    assert.deepEqual(inlineEnvSecrets("LOG_LEVEL", "error"), []);
    assert.deepEqual(inlineEnvSecrets("ACCESS_MODE", "read-only"), []);
    assert.deepEqual(inlineEnvSecrets("SESSION", "hunter"), ["hunter"], "a key named as secret hides even a word");
    assert.deepEqual(inlineEnvSecrets("SERVICE_ID", "Hunter2"), ["Hunter2"]);
    assert.deepEqual(
      inlineEnvSecrets("API_KEY", "12345678"),
      ["12345678"],
      "a key named as secret hides even a number",
    );
    assert.deepEqual(inlineEnvSecrets("DATABASE_URL", "postgres://u:pw-9f8e@db.example/x?sslkey=k-7a6b"), [
      "pw-9f8e",
      "k-7a6b",
    ]);
    assert.deepEqual(inlineEnvSecrets("MIXED", "pre-${HOME}-post"), ["pre-", "-post"]);
    assert.equal(isPlainValue("C:\\Users\\me"), true);
  });

  test("a setting in capitals or a cloud region (awslabs' FASTMCP_LOG_LEVEL: ERROR, AWS_REGION: us-east-1) is no secret", () => {
    const env = { FASTMCP_LOG_LEVEL: "ERROR", AWS_REGION: "us-east-1", MODE: "READ_ONLY", API_KEY: "ABCDEFGH" };
    const { secrets } = resolveServerConfig(
      entry({ command: "uvx", args: ["awslabs.lambda-mcp-server"], env }),
      {},
      "/p",
    );
    const redactor = new Redactor(secrets);
    const said = "[ERROR] arn:aws:lambda:us-east-1:123456789012:function:f is READ_ONLY";
    assert.equal(redactor.result(said), said);
    assert.equal(redactor.text(`${said}, key ABCDEFGH`), `${said}, key ***`);
    const fromVariables = { FASTMCP_LOG_LEVEL: "${LEVEL}", AWS_REGION: "${AWS_REGION}" };
    const resolved = resolveServerConfig(
      entry({ command: "uvx", env: fromVariables }),
      { LEVEL: "ERROR", AWS_REGION: "us-east-1" },
      "/p",
    );
    assert.equal(new Redactor(resolved.secrets).result(said), said);
  });

  test("a boolean under a name that says secret (REQUIRE_AUTH: true) is a setting: every `true` about the server stays", () => {
    assert.deepEqual(inlineEnvSecrets("REQUIRE_AUTH", "true"), []);
    assert.deepEqual(inlineEnvSecrets("USE_PRIVATE", "False"), []);
    const config = entry({ command: "node", env: { DISABLE_AUTH: "false", API_KEY: "sk-9f8e7d" } });
    const { secrets } = resolveServerConfig(config, {}, "/p");
    assert.equal(new Redactor(secrets).text("readOnly: false, key sk-9f8e7d"), "readOnly: false, key ***");
    // Nor from a variable, nor in a header.
    const remote = entry({ url: "https://h.example/mcp", headers: { "X-Read-Only": "${RO}", "X-Strict": "TRUE" } });
    const fromVariable = new Redactor(resolveServerConfig(remote, { RO: "true" }, "/p").secrets);
    assert.equal(fromVariable.text("readOnly: true, strict: TRUE"), "readOnly: true, strict: TRUE");
  });

  test("a port or a setting's word from a variable whose name does not say secret is kept; under one that does, hidden", () => {
    const env = { MCP_MODE: "${MODE}", API_KEY: "${KEY}" };
    const vars = { PORT: "8080", MODE: "stdio", KEY: "123456" };
    for (const config of [
      entry({ url: "http://localhost:${PORT}/mcp" }),
      entry({ command: "srv", args: ["-p", "${PORT}"], env }),
    ]) {
      const redactor = new Redactor(resolveServerConfig(config, vars, "/p").secrets);
      const said = "http://localhost:8080/mcp: connect ECONNREFUSED 127.0.0.1:8080 (stdio mode)";
      assert.equal(redactor.text(said), said);
    }
    const local = entry({ command: "srv", env: { ...env, PGPASSWORD: "${DBPW}" } });
    const { secrets } = resolveServerConfig(local, { ...vars, DBPW: "hunter" }, "/p");
    assert.equal(new Redactor(secrets).text("key 123456, password hunter"), "key ***, password ***");
  });

  test("a webhook URL's key (in its path) is a secret, inline or from a variable, hidden in tool results too", () => {
    const hook =
      "https://discord.com/api/webhooks/1234567890123456789/Xk3pQ9vL2mZr8TbN4wYc7Hs1Jd6Fg0Ae5UoIiK_R2tVy-8nBqW3eLpMx9ZaS4hDj";
    for (const value of [hook, "${HOOK}"]) {
      const config = entry({ command: "node", env: { DISCORD_WEBHOOK_URL: value } });
      const { secrets } = resolveServerConfig(config, { HOOK: hook }, "/p");
      assert.equal(
        new Redactor(secrets).result(`posted to ${hook}`),
        "posted to https://discord.com/api/webhooks/1234567890123456789/***",
      );
    }
  });

  test("a Slack webhook's key (24 letters and digits, shorter than other keys) is hidden in tool results too", () => {
    const hook = "https://hooks.slack.com/services/T0ABCDEFG/B0HIJKLMN/q8Vz2LmX7pR4tN1wK9cJ5hYb";
    const config = entry({ command: "node", env: { SLACK_WEBHOOK_URL: "${HOOK}" } });
    const { secrets } = resolveServerConfig(config, { HOOK: hook }, "/p");
    assert.equal(
      new Redactor(secrets).result(`posted to ${hook}`),
      "posted to https://hooks.slack.com/services/T0ABCDEFG/B0HIJKLMN/***",
    );
    // A path's words are no key.
    assert.deepEqual(pathSecrets("https://h.example/api/2024-01-15-release-notes/getUserProfile/mcp"), []);
  });

  test("a URL's query settings (Supabase's read_only=true, features=docs) are no secrets; its keys are", () => {
    const url = "https://mcp.supabase.com/mcp?project_ref=abcd1234ef&read_only=true&features=docs&key=sk-9f8e7d";
    const { secrets } = resolveServerConfig(entry({ url }), {}, "/p");
    const redactor = new Redactor(secrets);
    assert.equal(redactor.text("read_only is true: see the docs"), "read_only is true: see the docs");
    assert.equal(redactor.result("project abcd1234ef, key sk-9f8e7d"), "project ***, key ***");
  });

  test("a database URL from a variable or an argument has its password hidden on its own, as one in `env` has", () => {
    const url = "postgres://admin:Sup3r-s3cret@db.example:5432/app?sslmode=require";
    for (const value of [url, "${DATABASE_URL}"]) {
      const config = entry({ command: "node", env: { DATABASE_URL: value } });
      const { secrets } = resolveServerConfig(config, { DATABASE_URL: url }, "/p");
      assert.equal(
        new Redactor(secrets).result("connected to postgres://admin:Sup3r-s3cret@db.example:5432/app"),
        "connected to postgres://admin:***@db.example:5432/app",
      );
    }
    // Or as an argument, as the reference Postgres server takes it.
    const config = entry({ command: "npx", args: ["-y", "@modelcontextprotocol/server-postgres", url] });
    const { secrets } = resolveServerConfig(config, {}, "/p");
    assert.equal(new Redactor(secrets).result("as admin:Sup3r-s3cret@db"), "as admin:***@db");
  });

  test("a URL password with a % that starts no escape (50%off) is a secret as written, not a crash of the whole start", () => {
    assert.deepEqual(inlineEnvSecrets("DATABASE_URL", "postgres://u:50%off@db.example/x"), ["50%off"]);
    const config = entry({ url: "https://u:50%off@h.example/mcp" });
    assert.ok(resolveServerConfig(config, {}, "/p").secrets.includes("50%off"));
  });

  test("an env default written in the file (${KEY:-…}) is judged as an inline value: a secret unless plainly none", () => {
    assert.deepEqual(inlineEnvSecrets("API_KEY", "${API_KEY:-k-default-77}"), ["k-default-77"]);
    assert.deepEqual(inlineEnvSecrets("LOG_LEVEL", "${LOG_LEVEL:-info}"), []);
    const config = entry({ command: "node", env: { SERVICE_TOKEN: "${SERVICE_TOKEN:-dflt-Tok-991}" } });
    assert.ok(resolveServerConfig(config, {}, "/p").secrets.includes("dflt-Tok-991"));
  });

  test("values of secret-looking flags on the command line are secrets", () => {
    assert.deepEqual(
      argSecrets(["s.js", "--api-key", "k-1234", "--token=t-5678", "--verbose", "x", "-password", "p-9"]),
      ["k-1234", "t-5678", "p-9"],
    );
    // A flag that names a field (`--sort-key name`): hiding its word would turn every "name" about the server into ***.
    const fields = ["--sort-key", "name", "--primary-key=user_id", "--key", "5f0c9a71-2b3d", "--api-key", "secret"];
    assert.deepEqual(argSecrets(fields), ["5f0c9a71-2b3d", "secret"]);
  });

  test("a header's value given on the command line (mcp-remote's --header) is a secret, as a value in `headers` is", () => {
    const args = [
      "mcp-remote",
      "https://h.example/sse",
      "--header",
      "Authorization: Bearer sk-live-9f8e7d",
      "-H",
      "X-Key:k-1a2b",
    ];
    const { secrets } = resolveServerConfig(entry({ command: "npx", args }), {}, "/p");
    assert.equal(new Redactor(secrets).result("sent sk-live-9f8e7d and k-1a2b"), "sent *** and ***");
    assert.deepEqual(argSecrets(["--header", "Authorization: Bearer ${TOKEN}"]), ["${TOKEN}"]);
  });

  test("a secret variable set on the command line (docker's -e GITHUB_TOKEN=…) is a secret; other settings are not", () => {
    const args = ["run", "-e", "GITHUB_TOKEN=ghp_abc123def456", "-e", "LOG_LEVEL=debug", "db=main", "img"];
    assert.deepEqual(argSecrets(args), ["ghp_abc123def456"]);
    const { secrets } = resolveServerConfig(entry({ command: "docker", args }), {}, "/p");
    assert.equal(new Redactor(secrets).result("token ghp_abc123def456"), "token ***");
  });

  test("a secret flag and its value written as one argument: a secret, and kept out of the warning about it", () => {
    assert.deepEqual(argSecrets(["--api-key sk-live-1234", "--token  t-5678"]), ["sk-live-1234", "t-5678"]);
    const file = { scope: "user", path: "/u/mcp.json" } as const;
    const result = validateServerEntry("s", { command: "npx", args: ["-y", "srv", "--api-key sk-live-1234"] }, file);
    assert.equal(result.warnings.length, 1);
    assert.match(result.warnings[0]!, /`args\[2\]` is "--api-key \*\*\*": the program gets it as one argument/);
    assert.doesNotMatch(result.warnings[0]!, /sk-live-1234/);
    const string = validateServerEntry("s", { command: "srv", args: "--api-key sk-live-1234 -v" }, file);
    assert.deepEqual(string.errors, ['`args` must be an array of strings, one per argument: ["--api-key","***","-v"]']);
  });

  test("a local server's inline env value is among the secrets of its resolution, and its variables' values", () => {
    const config = entry({
      command: "node",
      args: ["s.js", "--token", "flag-tok-5"],
      env: { API_KEY: "PLANTED456", KEY2: "${MY_KEY}", PORT: "8080" },
    });
    const { secrets } = resolveServerConfig(config, { MY_KEY: "viavar-789" }, "/p");
    assert.ok(secrets.includes("PLANTED456"));
    assert.ok(secrets.includes("viavar-789"));
    assert.ok(secrets.includes("flag-tok-5"));
    assert.ok(!secrets.includes("8080"));
  });

  test("a remote server's header values, URL password and query values are secrets", () => {
    const config = entry({
      url: "https://user:url-pass-1@h.example/mcp?token=query-tok-2",
      headers: { "X-Api-Key": "header-key-3", Authorization: "Bearer bearer-tok-4" },
    });
    const { secrets } = resolveServerConfig(config, {}, "/p");
    for (const value of ["url-pass-1", "query-tok-2", "header-key-3", "bearer-tok-4"])
      assert.ok(secrets.includes(value), value);
  });
});

describe("a tool's shown text", () => {
  test("name, title, description, annotation title and schema prose lose escapes; enums and defaults stay as data", () => {
    const tool = {
      name: "evil\x1b[2Jtool",
      title: "Evil \x1b]0;pwned\x07title",
      description: "Does \x1b]52;c;cHduZWQ=\x07things\nover lines\x9b2J",
      annotations: { title: "T\x07" },
      inputSchema: {
        type: "object",
        properties: {
          q: { type: "string", description: "the \x1b[31mquery\x1b[0m", enum: ["a\x07"], default: "a\x07" },
          description: { type: "string", title: "x\ry" },
        },
      },
    } as unknown as Tool;
    const safe = safeTool(tool);
    assert.equal(safe.name, "eviltool");
    assert.equal(safe.title, "Evil title");
    assert.equal(safe.description, "Does things\nover lines");
    assert.equal(safe.annotations?.title, "T");
    const props = safe.inputSchema.properties as Record<string, Record<string, unknown>>;
    assert.equal(props.q!.description, "the query");
    assert.deepEqual(props.q!.enum, ["a\x07"]);
    assert.equal(props.q!.default, "a\x07");
    assert.equal(props.description!.title, "xy");
    assert.equal(tool.name, "evil\x1b[2Jtool", "the server's own object is left as it was");
  });
  test("parameters named as keywords (default, enum) or __proto__ are parameters: their prose is cleaned, none is lost", () => {
    const properties = JSON.parse(
      '{"default":{"type":"string","description":"d\\u001b[2J"},"enum":{"description":"e\\u0007"},"__proto__":{"type":"string"}}',
    );
    const safe = safeTool({ name: "t", inputSchema: { type: "object", properties } } as Tool);
    const props = safe.inputSchema.properties as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(props), ["default", "enum", "__proto__"]);
    assert.equal(props.default!.description, "d");
    assert.equal(props.enum!.description, "e");
    assert.equal(Object.getPrototypeOf(props), Object.prototype);
  });
});

describe("a server's lifecycle report", () => {
  test("every event payload, log line and state message it publishes is redacted and stripped", () => {
    const events: unknown[] = [];
    const lines: unknown[] = [];
    const report = new LifecycleReport(
      { name: "s", enabled: true, retry: { maxAttempts: 3 } } as never,
      {
        events: (channel, payload) => events.push({ channel, payload }),
        logger: { log: (entry) => lines.push(entry) },
        redactor: new Redactor(["raw-secret-1"]),
      },
      () => "connected",
    );
    report.crashed(42, "exited raw-secret-1", ["key raw-secret-1 \x1b]52;c;x\x07"]);
    const id = Symbol("attempt");
    report.record(
      {
        type: "failed",
        id,
        error: "failed with raw-secret-1\x1b[2J",
        kind: "transport",
        durationMs: 1,
        signIn: false,
        retryIn: 100,
      },
      { kind: "connecting", attempt: 1, id, wasUp: false },
    );
    report.record(
      { type: "dropped", session: undefined, reason: "lost raw-secret-1", retry: true },
      { kind: "live", session: undefined, since: 0 },
    );
    report.log("warn", "x", { error: "raw-secret-1\x07" });
    const published = JSON.stringify([events, lines, report.health.metrics(Date.now())]);
    assert.ok(!published.includes("raw-secret-1"), published);
    assert.ok(
      !CONTROLS.test(published.replace(/\\u00([01][0-9a-f]|7f)/gi, (m) => JSON.parse(`"${m}"`) as string)),
      published,
    );
    assert.match(published, /key \*\*\*/);
  });
});
