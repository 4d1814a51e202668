/**
 * On-disk OAuth state for remote MCP servers, against real files in a temp dir.
 */
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import type { OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import {
  AuthStore,
  authDir,
  expiresWithin,
  toOAuthTokens,
  toStoredTokens,
  type StoredClient,
  type StoredTokens,
} from "../src/oauth/storage.ts";

const root = mkdtempSync(path.join(tmpdir(), "mcp-bridge-oauth-storage-"));
let counter = 0;

/** A fresh, not yet existing auth dir. */
function freshDir(): string {
  counter += 1;
  return authDir(path.join(root, `case-${counter}`, "agent"));
}

const URL_A = "https://a.example/mcp";
const NOW = Date.UTC(2025, 0, 1);
const posix = process.platform !== "win32";

function tokens(overrides: Partial<StoredTokens> = {}): StoredTokens {
  return {
    accessToken: "access-SECRET-123",
    tokenType: "Bearer",
    refreshToken: "refresh-SECRET-456",
    expiresAt: NOW + 3_600_000,
    scopes: ["read", "write"],
    issuer: "https://auth.example",
    serverUrl: URL_A,
    savedAt: new Date(NOW).toISOString(),
    ...overrides,
  };
}

function client(overrides: Partial<StoredClient> = {}): StoredClient {
  return {
    serverUrl: URL_A,
    savedAt: new Date(NOW).toISOString(),
    client: {
      client_id: "client-1",
      client_secret: "client-SECRET",
      redirect_uris: ["http://127.0.0.1:33418/callback"],
      issuer: "https://auth.example",
    },
    ...overrides,
  };
}

function mode(file: string): number {
  return statSync(file).mode & 0o777;
}

describe("token conversions", { timeout: 60_000 }, () => {
  const sdk: OAuthTokens = {
    access_token: "at",
    token_type: "Bearer",
    expires_in: 3600,
    scope: "read write  admin",
    refresh_token: "rt",
    id_token: "idt",
    issuer: "https://auth.example",
  };

  it("turns expires_in into expiresAt and scope into a list, keeping issuer", () => {
    const stored = toStoredTokens(sdk, URL_A, NOW);
    assert.deepEqual(stored, {
      accessToken: "at",
      tokenType: "Bearer",
      refreshToken: "rt",
      expiresAt: NOW + 3_600_000,
      scopes: ["read", "write", "admin"],
      idToken: "idt",
      issuer: "https://auth.example",
      serverUrl: URL_A,
      savedAt: new Date(NOW).toISOString(),
    });
  });

  it("rebuilds the SDK form with expires_in counted from now", () => {
    const stored = toStoredTokens(sdk, URL_A, NOW);
    assert.deepEqual(toOAuthTokens(stored, NOW), { ...sdk, scope: "read write admin" });
    assert.equal(toOAuthTokens(stored, NOW + 1_000_500).expires_in, 2599);
    assert.equal(toOAuthTokens(stored, NOW + 10_000_000).expires_in, 0);
  });

  it("leaves out what the SDK did not give", () => {
    const stored = toStoredTokens({ access_token: "at", token_type: "Bearer" }, URL_A, NOW);
    assert.deepEqual(Object.keys(stored).sort(), ["accessToken", "savedAt", "serverUrl", "tokenType"]);
    assert.deepEqual(toOAuthTokens(stored, NOW), { access_token: "at", token_type: "Bearer" });
  });

  it("expiresWithin", () => {
    const stored = tokens({ expiresAt: NOW + 60_000 });
    assert.equal(expiresWithin(stored, 30_000, NOW), false);
    assert.equal(expiresWithin(stored, 60_000, NOW), true);
    assert.equal(expiresWithin(stored, 0, NOW + 120_000), true);
    assert.equal(expiresWithin(tokens({ expiresAt: undefined }), 1e12, NOW), false);
  });
});

describe("AuthStore", { timeout: 60_000 }, () => {
  after(() => rmSync(root, { recursive: true, force: true }));

  it("reads what another instance wrote", async () => {
    const dir = freshDir();
    await new AuthStore(dir).saveTokens("srv", tokens());
    await new AuthStore(dir).saveClient("srv", client());
    const reader = new AuthStore(dir);
    assert.deepEqual(reader.tokens("srv", URL_A), tokens());
    assert.deepEqual(reader.client("srv", URL_A), client());
    assert.equal(reader.tokensPath("srv"), path.join(dir, "srv.json"));
    assert.equal(reader.clientPath("srv"), path.join(dir, "srv-client.json"));
    assert.equal(reader.tokens("other", URL_A), undefined);
    assert.equal(reader.client("other", URL_A), undefined);
  });

  it("creates the dir 0700 and the files 0600", { skip: !posix }, async () => {
    const dir = freshDir();
    const store = new AuthStore(dir);
    await store.saveTokens("srv", tokens());
    await store.saveClient("srv", client());
    assert.equal(mode(dir), 0o700);
    assert.equal(mode(store.tokensPath("srv")), 0o600);
    assert.equal(mode(store.clientPath("srv")), 0o600);
  });

  it("keeps the dir 0700 and the files 0600 under a permissive umask (000)", { skip: !posix }, async () => {
    const dir = freshDir();
    const store = new AuthStore(dir);
    const previous = process.umask(0);
    try {
      await store.saveTokens("srv", tokens());
      await store.saveClient("srv", client());
      // A second save replaces the file: the new one must be as tight as the first.
      await store.saveTokens("srv", tokens({ accessToken: "access-SECRET-789" }));
    } finally {
      process.umask(previous);
    }
    assert.equal(mode(dir), 0o700);
    assert.equal(mode(store.tokensPath("srv")), 0o600);
    assert.equal(mode(store.clientPath("srv")), 0o600);
    assert.deepEqual(readdirSync(dir).sort(), ["srv-client.json", "srv.json"], "no temp file left behind");
  });

  it("tightens an existing 0644 file and 0755 dir on save", { skip: !posix }, async () => {
    const dir = freshDir();
    const store = new AuthStore(dir);
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o755);
    writeFileSync(store.tokensPath("srv"), "{}");
    chmodSync(store.tokensPath("srv"), 0o644);
    await store.saveTokens("srv", tokens());
    assert.equal(mode(dir), 0o700);
    assert.equal(mode(store.tokensPath("srv")), 0o600);
    assert.deepEqual(store.tokens("srv", URL_A), tokens());
  });

  it("binds tokens and client to the server URL, compared normalised", async () => {
    const store = new AuthStore(freshDir());
    await store.saveTokens("srv", tokens());
    await store.saveClient("srv", client());
    assert.equal(store.tokens("srv", "https://b.example/mcp"), undefined);
    assert.equal(store.client("srv", "https://a.example/other"), undefined);
    assert.equal(store.tokens("srv", "not a url"), undefined);
    assert.deepEqual(store.tokens("srv", "https://A.example/mcp"), tokens());
    assert.deepEqual(store.client("srv", "HTTPS://a.example:443/mcp"), client());

    await store.saveTokens("bare", tokens({ serverUrl: "https://a.example" }));
    assert.ok(store.tokens("bare", "https://a.example/"));
  });

  it("reads a missing, corrupt or malformed file as undefined", async () => {
    const dir = freshDir();
    const store = new AuthStore(dir);
    assert.equal(store.tokens("srv", URL_A), undefined);
    assert.equal(store.client("srv", URL_A), undefined);
    mkdirSync(dir, { recursive: true });
    writeFileSync(store.tokensPath("srv"), '{"accessToken": "x", ');
    writeFileSync(store.clientPath("srv"), "null");
    assert.equal(store.tokens("srv", URL_A), undefined);
    assert.equal(store.client("srv", URL_A), undefined);
    writeFileSync(store.tokensPath("srv"), JSON.stringify({ ...tokens(), expiresAt: "soon" }));
    writeFileSync(store.clientPath("srv"), JSON.stringify({ ...client(), client: { client_secret: "s" } }));
    assert.equal(store.tokens("srv", URL_A), undefined);
    assert.equal(store.client("srv", URL_A), undefined);
    // DPoP-bound tokens whose key is unreadable cannot be used: they read as absent too.
    const key = { alg: "ES256", jwk: { kty: "EC", crv: "P-256", x: "x", y: "y", d: "d-SECRET" } } as const;
    writeFileSync(store.tokensPath("srv"), JSON.stringify({ ...tokens({ tokenType: "DPoP" }), dpopKey: key }));
    assert.equal(store.tokens("srv", URL_A)?.dpopKey?.jwk.d, "d-SECRET", "a well-formed key is read with its tokens");
    for (const dpopKey of [
      null,
      "key",
      { alg: "HS256", jwk: key.jwk },
      { alg: "ES256", jwk: { kty: "EC", x: "x" } },
      { alg: "ES256" },
    ]) {
      writeFileSync(store.tokensPath("srv"), JSON.stringify({ ...tokens({ tokenType: "DPoP" }), dpopKey }));
      assert.equal(store.tokens("srv", URL_A), undefined, JSON.stringify(dpopKey));
    }
    // A directory where the file should be.
    mkdirSync(store.tokensPath("dirred"));
    assert.equal(store.tokens("dirred", URL_A), undefined);
  });

  it("maps unsafe names to distinct files inside the dir", async () => {
    const dir = freshDir();
    const store = new AuthStore(dir);
    const names = [
      "a/b",
      "a:b",
      "a_b",
      "..",
      ".",
      "../x",
      "../../etc/passwd",
      ".hidden",
      "",
      "x".repeat(300),
      "a-client",
      "a",
    ];
    const files = new Set<string>();
    for (const name of names) {
      for (const file of [store.tokensPath(name), store.clientPath(name)]) {
        assert.equal(path.dirname(file), dir, `${JSON.stringify(name)} -> ${file}`);
        assert.match(path.basename(file), /^[A-Za-z0-9_-][A-Za-z0-9_.-]*\.json$/);
        assert.ok(path.basename(file).length < 120);
        assert.ok(!files.has(file), `${file} shared`);
        files.add(file);
      }
    }
    assert.match(path.basename(store.tokensPath("a/b")), /^a_b-[0-9a-f]{8}\.json$/);

    for (const name of names) await store.saveTokens(name, tokens({ accessToken: `token for ${name}` }));
    assert.equal(readdirSync(path.dirname(dir)).length, 1, "nothing written beside the dir");
    for (const name of names) assert.equal(store.tokens(name, URL_A)?.accessToken, `token for ${name}`);
  });

  it("servers whose names differ only in case (GitHub, github) get files that differ in more than case", async () => {
    const store = new AuthStore(freshDir());
    const names = ["github", "GitHub", "GITHUB", "a/B", "a/b"];
    const stems = names.flatMap((name) => [
      store.tokensPath(name),
      store.clientPath(name),
      store.importRecordPath(name),
    ]);
    // macOS and Windows file systems do not tell `GitHub.json` from `github.json`.
    assert.equal(new Set(stems.map((file) => file.toLowerCase())).size, stems.length, stems.join("\n"));
    for (const name of names) await store.saveTokens(name, tokens({ accessToken: `token for ${name}` }));
    for (const name of names) assert.equal(store.tokens(name, URL_A)?.accessToken, `token for ${name}`);
  });

  it("a name with capitals keeps its sign-in from before it was told apart by case, and loses it at logout", async () => {
    const dir = freshDir();
    const store = new AuthStore(dir);
    mkdirSync(dir, { recursive: true });
    // Where the files of `GitHub` were: a sign-in for its URL, and one of `Linear` for another server's.
    writeFileSync(path.join(dir, "GitHub.json"), JSON.stringify(tokens({ accessToken: "kept" })), { mode: 0o600 });
    writeFileSync(
      path.join(dir, "Linear.json"),
      JSON.stringify(tokens({ accessToken: "other", serverUrl: "https://b.example/mcp" })),
    );
    assert.equal(store.tokens("GitHub", URL_A)?.accessToken, "kept");
    assert.equal(store.tokens("Linear", URL_A), undefined);
    assert.ok(existsSync(path.join(dir, "Linear.json")), "another URL's file stays where it was");
    await store.logout("GitHub");
    assert.equal(store.tokens("GitHub", URL_A), undefined, "signed out means signed out");
  });

  it("a server named as a Windows device (con, nul, aux, com1 …) gets a file Windows can write", () => {
    const store = new AuthStore(freshDir());
    for (const name of ["con", "NUL", "aux", "prn", "com1", "lpt9", "nul.x"])
      assert.doesNotMatch(path.basename(store.tokensPath(name)), /^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/i, name);
  });

  it("logout deletes both files and says whether anything was there", async () => {
    const store = new AuthStore(freshDir());
    await store.saveTokens("srv", tokens());
    await store.saveClient("srv", client());
    assert.equal(await store.logout("srv"), true);
    assert.equal(store.tokens("srv", URL_A), undefined);
    assert.equal(store.client("srv", URL_A), undefined);
    assert.equal(await store.logout("srv"), false);

    await store.saveClient("srv", client());
    assert.equal(await store.logout("srv"), true);
    await store.deleteTokens("srv");
    await store.deleteClient("srv");
  });

  it("deleteTokens and deleteClient delete one each", async () => {
    const store = new AuthStore(freshDir());
    await store.saveTokens("srv", tokens());
    await store.saveClient("srv", client());
    await store.deleteTokens("srv");
    assert.equal(store.tokens("srv", URL_A), undefined);
    assert.ok(store.client("srv", URL_A));
    await store.deleteClient("srv");
    assert.equal(store.client("srv", URL_A), undefined);
  });

  it("serialises concurrent saves and leaves no temp files", async () => {
    const dir = freshDir();
    const store = new AuthStore(dir);
    const other = new AuthStore(dir);
    const saves: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) {
      saves.push((i % 2 ? other : store).saveTokens("srv", tokens({ accessToken: `at-${i}` })));
      saves.push(store.saveClient("srv", client({ client: { client_id: `c-${i}` } })));
    }
    await Promise.all(saves);
    assert.deepEqual(readdirSync(dir).sort(), ["srv-client.json", "srv.json"]);
    assert.equal(store.tokens("srv", URL_A)?.accessToken, "at-19");
    assert.equal(store.client("srv", URL_A)?.client.client_id, "c-19");

    // A save queued behind a delete, and a delete behind a save, take effect in call order.
    const ordered = [store.saveTokens("srv", tokens({ accessToken: "last" })), store.deleteTokens("srv")];
    await Promise.all(ordered);
    assert.equal(store.tokens("srv", URL_A), undefined);
  });

  it("a failed save names the file but none of the secrets", async () => {
    const base = path.join(root, "not-a-dir");
    writeFileSync(base, "plain file");
    const store = new AuthStore(base);
    const secret = tokens();
    await assert.rejects(store.saveTokens("srv", secret), (error: Error) => {
      assert.ok(error.message.includes(base), error.message);
      for (const text of [secret.accessToken, secret.refreshToken!, "SECRET"])
        assert.ok(!error.message.includes(text), error.message);
      assert.match(error.message, /: E[A-Z]+$/);
      return true;
    });
    await assert.rejects(store.saveClient("srv", client()), (error: Error) => !error.message.includes("SECRET"));
    // Reads still never throw.
    assert.equal(store.tokens("srv", URL_A), undefined);
    // A failed save does not block the queue: once the dir can be made, the next save goes through.
    rmSync(base);
    await store.saveTokens("srv", secret);
    assert.deepEqual(store.tokens("srv", URL_A), secret);
  });
});
