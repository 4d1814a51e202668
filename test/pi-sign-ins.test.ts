/**
 * pi 1.x's `mcp-auth.json` read as data (src/oauth/pi-sign-ins.ts): which entry belongs to a server, what is wrong with
 * one that is not in pi's format, and what of a sign-in the bridge can take over; and the checks on the file itself
 * (src/oauth/pi-sign-in-import.ts `readPiAuthFile`). The end-to-end behaviour is in pi-sign-in-import.test.ts.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { readPiAuthFile } from "../src/oauth/pi-sign-in-import.ts";
import { findPiSignIn, type PiSignIn, piStateKeys, planPiImport } from "../src/oauth/pi-sign-ins.ts";
import { tempDir } from "./helpers.ts";

const URL_ = "https://mcp.example.com/mcp";
const NOW = 1_800_000_000_000;

/** A state as pi 1.x stores it after a sign-in with dynamic client registration. */
function state(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    serverUrl: URL_,
    discovery: {
      authorizationServerUrl: "https://auth.example.com",
      resourceMetadataUrl: "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
    },
    clientInformation: {
      client_id: "pi-client",
      client_name: "pi",
      redirect_uris: ["http://127.0.0.1:40000/callback"],
      token_endpoint_auth_method: "none",
    },
    oauthState: "state",
    codeVerifier: "verifier",
    tokens: {
      access_token: "access-1",
      token_type: "Bearer",
      expires_in: 3600,
      scope: "read write",
      refresh_token: "refresh-1",
    },
    tokensExpireAt: NOW + 3_600_000,
    ...overrides,
  };
}

function file(states: Record<string, unknown>): string {
  return `${JSON.stringify(states, null, 2)}\n`;
}

function found(text: string, server = "linear", url = URL_): PiSignIn {
  const lookup = findPiSignIn(text, server, url);
  assert.equal(lookup.kind, "found", JSON.stringify(lookup));
  return (lookup as { signIn: PiSignIn }).signIn;
}

const plan = (signIn: PiSignIn, configuredClient = false) =>
  planPiImport(signIn, { serverUrl: URL_, configuredClient, now: NOW, from: "/agent/mcp-auth.json" });

describe("finding a server's entry in pi 1.x's file", () => {
  test("keys are pi's: the name with - as _, and the URL as the URL parser writes it", () => {
    assert.deepEqual(piStateKeys("my-server", "HTTPS://MCP.Example.com:443"), {
      key: "mcp__my_server|https://mcp.example.com/",
      legacyKey: "https://mcp.example.com/",
    });
    assert.equal(piStateKeys("x", "not a url"), undefined);
  });

  test("the entry by name and URL wins over the older one by URL alone, which is the fallback", () => {
    const text = file({
      [URL_]: state({ tokens: { access_token: "legacy", token_type: "Bearer" } }),
      [`mcp__linear|${URL_}`]: state(),
    });
    assert.equal(found(text).accessToken, "access-1");
    assert.equal(found(file({ [URL_]: state() })).accessToken, "access-1");
  });

  test("no entry, another name, another URL, an entry pi keeps for another URL, or one without tokens: none", () => {
    for (const text of [
      "",
      "{}",
      file({ [`mcp__other|${URL_}`]: state() }),
      file({ "mcp__linear|https://mcp.example.com/other": state() }),
    ]) {
      assert.deepEqual(findPiSignIn(text, "linear", URL_), { kind: "none" });
    }
    assert.deepEqual(
      findPiSignIn(
        file({ [`mcp__linear|${URL_}`]: state({ serverUrl: "https://elsewhere.example.com/mcp" }) }),
        "linear",
        URL_,
      ),
      { kind: "none" },
    );
    const { tokens: _, ...pending } = state();
    assert.deepEqual(
      findPiSignIn(file({ [`mcp__linear|${URL_}`]: pending }), "linear", URL_),
      { kind: "none" },
      "a sign-in that never finished",
    );
  });

  test("a file or entry not in pi's format is invalid, and the problem quotes nothing of it", () => {
    const cases: Array<[string, RegExp]> = [
      [
        '{"mcp__linear|https://mcp.example.com/mcp": {"tokens": {"access_token": "secret-in-broken-file"',
        /not valid JSON/,
      ],
      ['["secret-in-array"]', /not a JSON object/],
      [file({ [`mcp__linear|${URL_}`]: "secret-string" }), /entry is not an object/],
      [file({ [`mcp__linear|${URL_}`]: state({ tokens: "secret-token" }) }), /tokens are not an object/],
      [file({ [`mcp__linear|${URL_}`]: state({ tokens: { token_type: "Bearer" } }) }), /no access token/],
      [
        file({
          [`mcp__linear|${URL_}`]: state({
            tokens: { access_token: "secret-a", token_type: "Bearer", refresh_token: 5 },
          }),
        }),
        /not a string/,
      ],
      [file({ [`mcp__linear|${URL_}`]: state({ tokensExpireAt: "soon" }) }), /expiry is not a number/],
      [file({ [`mcp__linear|${URL_}`]: state({ clientInformation: { client_secret: "secret-c" } }) }), /no client id/],
    ];
    for (const [text, problem] of cases) {
      const lookup = findPiSignIn(text, "linear", URL_);
      assert.equal(lookup.kind, "invalid", text);
      const message = (lookup as { problem: string }).problem;
      assert.match(message, problem);
      assert.equal(/secret/.test(message), false, message);
    }
  });

  test("keys that mean something to JavaScript objects are data here", () => {
    const text = '{"__proto__": {"polluted": true}, "constructor": 1}';
    assert.deepEqual(findPiSignIn(text, "linear", URL_), { kind: "none" });
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test("pi's empty and null fields are absent; the fingerprint tells sign-ins apart without holding their tokens", () => {
    const signIn = found(
      file({
        [`mcp__linear|${URL_}`]: state({
          tokens: { access_token: "a", token_type: "Bearer", scope: "", refresh_token: null },
        }),
      }),
    );
    assert.equal(signIn.scope, undefined);
    assert.equal(signIn.refreshToken, undefined);
    const one = findPiSignIn(file({ [`mcp__linear|${URL_}`]: state() }), "linear", URL_);
    const same = findPiSignIn(file({ [URL_]: state() }), "linear", URL_);
    const other = findPiSignIn(
      file({
        [`mcp__linear|${URL_}`]: state({
          tokens: { access_token: "access-2", token_type: "Bearer", refresh_token: "refresh-1" },
        }),
      }),
      "linear",
      URL_,
    );
    assert.ok(one.kind === "found" && same.kind === "found" && other.kind === "found");
    assert.equal(one.fingerprint, same.fingerprint);
    assert.notEqual(one.fingerprint, other.fingerprint);
    assert.equal(one.fingerprint.includes("access-1") || one.fingerprint.includes("refresh-1"), false);
  });
});

describe("what of pi's sign-in the bridge takes over", () => {
  test("a sign-in with a registration: the tokens, their expiry and scopes, the refresh token and pi's client, bound to the authorization server", () => {
    const result = plan(found(file({ [`mcp__linear|${URL_}`]: state() })));
    assert.equal(result.kind, "import");
    if (result.kind !== "import") return;
    assert.equal(result.refreshable, true);
    assert.deepEqual(
      { ...result.tokens, savedAt: undefined },
      {
        accessToken: "access-1",
        tokenType: "Bearer",
        refreshToken: "refresh-1",
        expiresAt: NOW + 3_600_000,
        scopes: ["read", "write"],
        issuer: "https://auth.example.com",
        serverUrl: URL_,
        savedAt: undefined,
      },
    );
    assert.equal(result.client?.client.client_id, "pi-client");
    assert.equal(result.client?.client.issuer, "https://auth.example.com");
    assert.equal(result.client?.importedFrom, "/agent/mcp-auth.json");
  });

  test("without the authorization server pi used, the refresh token stays behind: it must not reach another one", () => {
    const result = plan(found(file({ [`mcp__linear|${URL_}`]: state({ discovery: undefined }) })));
    assert.ok(result.kind === "import");
    assert.equal(result.refreshable, false);
    assert.equal(result.tokens.refreshToken, undefined);
    assert.equal(result.client, undefined);
  });

  test("a sign-in through pi's client document (no registration) keeps its access token only, unless the config names the client", () => {
    const cimd = found(file({ [`mcp__linear|${URL_}`]: state({ clientInformation: undefined }) }));
    const alone = plan(cimd);
    assert.ok(alone.kind === "import");
    assert.equal(alone.refreshable, false);
    assert.equal(alone.tokens.refreshToken, undefined);
    const configured = plan(cimd, true);
    assert.ok(configured.kind === "import");
    assert.equal(configured.refreshable, true, "pi signed in as the configured clientId, which the bridge uses too");
    assert.equal(configured.tokens.refreshToken, "refresh-1");
    assert.equal(configured.client, undefined);
  });

  test("an expired sign-in the bridge cannot refresh is not taken over, and the reason says why", () => {
    const expired = { tokensExpireAt: NOW - 1 };
    const reasons = [
      plan(found(file({ [URL_]: state({ ...expired, tokens: { access_token: "a", token_type: "Bearer" } }) }))),
      plan(found(file({ [URL_]: state({ ...expired, discovery: {} }) }))),
      plan(found(file({ [URL_]: state({ ...expired, clientInformation: undefined }) }))),
    ].map((result) => (result.kind === "unusable" ? result.reason : result.kind));
    assert.match(reasons[0]!, /expired .* no refresh token/);
    assert.match(reasons[1]!, /did not record which authorization server/);
    assert.match(reasons[2]!, /pi's own client identity/);
    const refreshable = plan(found(file({ [URL_]: state(expired) })));
    assert.equal(refreshable.kind, "import", "an expired token with what it takes to refresh it is taken over");
  });
});

describe("the file itself", { timeout: 30_000 }, () => {
  const tmp = tempDir("mcp-bridge-pi-file-");
  after(() => tmp.cleanup());

  test("missing is quiet; a FIFO in its place is refused without hanging; a private regular file is read", async () => {
    assert.deepEqual(await readPiAuthFile(path.join(tmp.dir, "absent.json")), { kind: "missing" });
    const fifo = path.join(tmp.dir, "fifo.json");
    execFileSync("mkfifo", ["-m", "600", fifo]);
    assert.deepEqual(await readPiAuthFile(fifo), { kind: "refused", problem: "it is not a regular file" });
    const regular = path.join(tmp.dir, "mcp-auth.json");
    writeFileSync(regular, "{}\n", { mode: 0o600 });
    assert.deepEqual(await readPiAuthFile(regular), { kind: "read", text: "{}\n" });
  });
});
