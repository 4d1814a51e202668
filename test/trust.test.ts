/**
 * Project trust's pure part (fingerprints, states, what the user is shown) and its store on disk.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { visible } from "../src/common/terminal-text.ts";
import { describeForTrust, needsTrust, trustFingerprint, trustQuestion, trustState, withAnswer } from "../src/config/trust.ts";
import { TrustStore } from "../src/config/trust-store.ts";
import type { ConfigScope, ServerConfig } from "../src/config/types.ts";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import { tempDir } from "./helpers.ts";

function config(entry: Record<string, unknown>, name = "srv", scope: ConfigScope = "project"): ServerConfig {
  const result = validateServerEntry(name, entry, { scope, path: `/p/${scope}.json` });
  if (!result.config) throw new Error(result.errors.join("; "));
  return result.config;
}

const LOCAL = { command: "npx", args: ["-y", "pkg", "${ROOT}"], env: { TOKEN: "${MY_TOKEN}", MODE: "prod" }, cwd: "./tools" };
const REMOTE = { url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer ${GH_TOKEN}" } };

describe("trust fingerprint", () => {
  test("only a project's own file needs trust", () => {
    assert.equal(needsTrust(config(LOCAL)), true);
    for (const scope of ["flag", "user", "bundled"] as const) assert.equal(needsTrust(config(LOCAL, "srv", scope)), false, scope);
  });

  test("changes with what runs or where data goes: command, args, env, cwd, url, headers, type, OAuth endpoints, tools run unasked", () => {
    const base = trustFingerprint(config(LOCAL));
    const changes: Record<string, unknown>[] = [
      { ...LOCAL, command: "uvx" },
      { ...LOCAL, args: ["-y", "pkg", "/"] },
      { ...LOCAL, env: { ...LOCAL.env, EXTRA: "1" } },
      { ...LOCAL, env: { ...LOCAL.env, TOKEN: "${OTHER}" } },
      { ...LOCAL, cwd: "/" },
      // A project that could widen what runs without asking would not need its command changed to do harm.
      { ...LOCAL, autoApprove: ["*"] },
      { ...LOCAL, autoApproveReadOnly: true },
      { ...LOCAL, sampling: "allow" },
    ];
    for (const changed of changes) assert.notEqual(trustFingerprint(config(changed)), base, JSON.stringify(changed));
    const remote = trustFingerprint(config(REMOTE));
    const remoteChanges: Record<string, unknown>[] = [
      { ...REMOTE, url: "https://evil.example.com/mcp" },
      { ...REMOTE, headers: { Authorization: "Bearer ${AWS_SECRET_ACCESS_KEY}" } },
      { ...REMOTE, type: "sse" },
    ];
    for (const changed of remoteChanges) assert.notEqual(trustFingerprint(config(changed)), remote, JSON.stringify(changed));
    const oauthEndpoints = { tokenUrl: "https://evil.example.com/token", authorizationUrl: "https://evil.example.com/auth" };
    assert.notEqual(trustFingerprint(config({ url: REMOTE.url, auth: oauthEndpoints })), trustFingerprint(config({ url: REMOTE.url })), "OAuth endpoints");
  });

  test("does not change with key order, timeouts, lazy, prefix or enabled", () => {
    const base = trustFingerprint(config(LOCAL));
    const reordered = { cwd: LOCAL.cwd, env: { MODE: "prod", TOKEN: "${MY_TOKEN}" }, args: LOCAL.args, command: LOCAL.command };
    assert.equal(trustFingerprint(config(reordered)), base);
    assert.equal(trustFingerprint(config({ ...LOCAL, initTimeout: 5000, lazy: true, prefix: "x", enabled: false, requestTimeout: 1000 })), base);
  });

  test("state against the recorded answers: new, trusted, declined, changed", () => {
    const srv = config(LOCAL);
    assert.equal(trustState(srv, new Map()), "new");
    assert.equal(trustState(srv, withAnswer(new Map(), [srv], true)), "trusted");
    assert.equal(trustState(srv, withAnswer(new Map(), [srv], false)), "declined");
    assert.equal(trustState(config({ ...LOCAL, args: ["other"] }), withAnswer(new Map(), [srv], true)), "changed");
    assert.equal(trustState(config(LOCAL, "another"), withAnswer(new Map(), [srv], true)), "new", "answers are per server name");
  });
});

describe("what the user is shown", () => {
  test("a local server: its command line, directory, env names and the variables it reads — never values", () => {
    const lines = describeForTrust(config({ ...LOCAL, args: [...LOCAL.args, "two words", "it's"], env: { ...LOCAL.env, KEY: "sk-live-inline-secret" } }));
    assert.deepEqual(lines, [
      `runs: npx -y pkg \${ROOT} 'two words' 'it'\\''s'`,
      "in: ./tools",
      "env: TOKEN ← ${MY_TOKEN}, MODE (inline), KEY (inline)",
      "reads your variables: ${ROOT}, ${MY_TOKEN}",
    ]);
    assert.doesNotMatch(lines.join("\n"), /sk-live|prod/);
  });

  test("the tools a server would run without asking", () => {
    const lines = describeForTrust(config({ ...LOCAL, autoApprove: ["*"], autoApproveReadOnly: true, sampling: "allow" }));
    assert.ok(lines.includes("may have your model answer it without asking (sampling)"), lines.join("\n"));
    assert.ok(lines.includes("runs without asking: *"), lines.join("\n"));
    assert.ok(lines.includes("runs without asking: the tools it marks read-only"), lines.join("\n"));
  });

  test("a remote server: its URL without a password or inline query values, header names, OAuth endpoints", () => {
    const lines = describeForTrust(
      config({
        url: "https://user:hunter22@mcp.example.com/mcp?key=${API_KEY}&session=abc123secret",
        headers: { Authorization: "Bearer ${GH_TOKEN}", "X-Static": "inline-value" },
        auth: { authorizationUrl: "https://auth.example.com/authorize", tokenUrl: "https://auth.example.com/token" },
      }),
    );
    assert.deepEqual(lines, [
      "connects to: https://user:***@mcp.example.com/mcp?key=${API_KEY}&session=…",
      "headers: Authorization ← ${GH_TOKEN}, X-Static (inline)",
      "OAuth endpoints: https://auth.example.com/authorize, https://auth.example.com/token",
      "reads your variables: ${API_KEY}, ${GH_TOKEN}",
    ]);
    assert.doesNotMatch(lines.join("\n"), /hunter22|abc123secret|inline-value/);
  });

  test("control characters and bidi overrides cannot hide part of a command", () => {
    const lines = describeForTrust(config({ command: "sh", args: ["-c", "rm -rf ~ \u001b[2K\rnode server.js", "\u202eevil"] }));
    assert.doesNotMatch(lines.join(""), /[\u001b\r\u202e]/);
    assert.match(lines[0]!, /\\u001b\[2K\\u000dnode/);
    assert.equal(visible("a\u0007b\u200bc"), "a\\u0007b\\u200bc");
  });

  test("the question names each server and why it is asked", () => {
    const text = trustQuestion("/repo", [
      { config: config(LOCAL, "fs"), state: "new" },
      { config: config(REMOTE, "gh"), state: "changed" },
    ]);
    assert.match(text, /^This project \(\/repo\) defines MCP servers/);
    assert.match(text, /\nfs {2}\(new\)\n {4}runs: npx -y pkg \$\{ROOT\}\n/);
    assert.match(text, /\ngh {2}\(changed since you last answered\)\n {4}connects to: https:\/\/mcp\.example\.com\/mcp\n/);
  });
});

describe("trust store", () => {
  test("answers are kept per project (by real path), merged per server, in a file only the user can read", async () => {
    const tmp = tempDir();
    try {
      const file = path.join(tmp.dir, "agent", "mcp-bridge", "trust.json");
      const store = new TrustStore(file);
      const projectA = path.join(tmp.dir, "a");
      const projectB = path.join(tmp.dir, "b");
      mkdirSync(projectA);
      mkdirSync(projectB);
      symlinkSync(projectA, path.join(tmp.dir, "link-to-a"));
      const one = config(LOCAL, "one");
      const two = config(REMOTE, "two");
      await store.save(projectA, withAnswer(new Map(), [one], true));
      await store.save(path.join(tmp.dir, "link-to-a"), withAnswer(new Map(), [two], false));
      const a = await store.read(path.join(tmp.dir, "b", "..", "a"));
      assert.equal(trustState(one, a), "trusted");
      assert.equal(trustState(two, a), "declined");
      assert.equal((await store.read(projectB)).size, 0, "another project has its own answers");
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(statSync(path.dirname(file)).mode & 0o777, 0o700);
      assert.doesNotMatch(readFileSync(file, "utf8"), /MY_TOKEN|npx/, "only fingerprints are stored");
    } finally {
      tmp.cleanup();
    }
  });

  test("a corrupt or foreign file reads as no answers, and a server named __proto__ is stored as a name", async () => {
    const tmp = tempDir();
    try {
      const file = path.join(tmp.dir, "trust.json");
      const store = new TrustStore(file);
      for (const text of ["{ not json", "[]", JSON.stringify({ version: 99, projects: {} }), JSON.stringify({ version: 1, projects: { [tmp.dir]: { x: { hash: 1 } } } })]) {
        writeFileSync(file, text);
        assert.equal((await store.read(tmp.dir)).size, 0, text);
      }
      const proto = { ...config(LOCAL), name: "__proto__" };
      await store.save(tmp.dir, withAnswer(new Map(), [proto], true));
      const read = await store.read(tmp.dir);
      assert.equal(trustState(proto, read), "trusted");
      assert.equal(({} as Record<string, unknown>).hash, undefined, "no prototype was touched");
    } finally {
      tmp.cleanup();
    }
  });
});
