/**
 * DPoP (RFC 9449) against a real authorization server and MCP server started by the tests (./fixtures/oauth-server.ts
 * with ./fixtures/dpop-checks.ts, which verify every proof with jose): a browser sign-in and a machine client get
 * DPoP-bound tokens where the authorization server offers DPoP, present them with the DPoP scheme and a fresh proof
 * per request, refresh with the same key, answer both servers' nonce challenges, keep the key with the tokens (0600)
 * so a restart needs no sign-in, and never show it; `auth.dpop` turns it on or off, and a Bearer-only server is
 * unaffected.
 */
import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { type AuthorizationServerMetadata, DPOP_SUPPORTED_ALGS } from "@modelcontextprotocol/client";
import { calculateJwkThumbprint, type JWK } from "jose";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import { dpopAlgorithm } from "../src/oauth/dpop.ts";
import { DPOP_ALGS, type StoredTokens } from "../src/oauth/storage.ts";
import type { OAuthFixture } from "./fixtures/oauth-server.ts";
import { oauthBed } from "./oauth-bed.ts";

describe("DPoP-bound tokens against a real authorization server and MCP server", { timeout: 120_000 }, () => {
  const { setup, connect, echo, fixtures, connections, events, logger, messages } = oauthBed("mcp-bridge-dpop-", {
    name: "bound",
    entry: { reconnect: false },
    signInTimeoutMs: 5000,
  });
  /** Every private key the bridge stored: none may show up anywhere. */
  const privateKeys: string[] = [];

  function stored(authDir: string): StoredTokens {
    const file = path.join(authDir, "bound.json");
    assert.equal(statSync(file).mode & 0o777, 0o600, "the tokens file, key included, is 0600");
    const tokens = JSON.parse(readFileSync(file, "utf8")) as StoredTokens;
    if (typeof tokens.dpopKey?.jwk.d === "string") privateKeys.push(tokens.dpopKey.jwk.d);
    return tokens;
  }

  async function thumbprintOf(tokens: StoredTokens): Promise<string> {
    assert.ok(tokens.dpopKey, "the DPoP key is stored with the tokens");
    return await calculateJwkThumbprint(tokens.dpopKey.jwk as JWK, "sha256");
  }

  const proofsAt = (fixture: OAuthFixture, at: "token" | "mcp") => fixture.dpop.proofs.filter((p) => p.at === at);
  const grants = (fixture: OAuthFixture, grant: string) =>
    fixture.tokenRequests.filter((p) => p.get("grant_type") === grant);

  test("a sign-in where the authorization server offers DPoP: a bound token, the DPoP scheme with a valid proof on every request; a restart uses the stored key", async () => {
    const { fixture, authDir, callbackPort } = await setup({ dpop: {} });
    const first = connect(fixture, authDir, { callbackPort });
    await first.connect();
    assert.equal(await echo(first, "bound"), "bound");

    const tokenProofs = proofsAt(fixture, "token");
    assert.equal(tokenProofs.length, 1, "the code exchange carried a proof");
    assert.deepEqual(tokenProofs[0], { at: "token", ok: true, jkt: tokenProofs[0]!.jkt });
    const tokens = stored(authDir);
    assert.equal(tokens.tokenType, "DPoP");
    assert.equal(await thumbprintOf(tokens), tokenProofs[0]!.jkt, "the stored key is the one the token is bound to");
    assert.equal(tokens.dpopKey?.alg, "ES256");

    const mcpProofs = proofsAt(fixture, "mcp");
    assert.ok(mcpProofs.length >= 2, "the MCP requests (at least the listing and the call) each had a proof");
    assert.deepEqual(
      mcpProofs.filter((p) => !p.ok),
      [],
      "every proof verified: htm, htu, iat, a new jti, ath, the bound key",
    );
    assert.ok(fixture.presented.length >= 2);
    assert.deepEqual(
      [...new Set(fixture.presented.map((p) => `${p.scheme} ${p.ok}`))],
      ["DPoP true"],
      "never as Bearer",
    );
    await first.close();

    // pi started again: nobody can sign in, and nobody needs to.
    const proofsBefore = mcpProofs.length;
    const second = connect(fixture, authDir, { callbackPort }, { signIn: null });
    await second.connect();
    assert.equal(await echo(second, "again"), "again");
    assert.equal(fixture.authorizations.length, 1, "no second sign-in");
    const later = proofsAt(fixture, "mcp").slice(proofsBefore);
    assert.ok(later.length >= 2);
    assert.deepEqual([...new Set(later.map((p) => p.jkt))], [tokenProofs[0]!.jkt], "signed with the stored key");
    await second.close();
  });

  test("refresh: ahead of expiry and after a 401, with a proof by the key the refresh token is bound to", async () => {
    const { fixture, authDir, callbackPort } = await setup({ dpop: {}, accessTtl: 60 });
    const connection = connect(fixture, authDir, { callbackPort });
    await connection.connect();
    const jkt = await thumbprintOf(stored(authDir));
    // 60 s left is inside the 5-minute margin: the next request refreshes first, without a 401.
    const unauthorized = fixture.unauthorized;
    assert.equal(await echo(connection, "early"), "early");
    assert.ok(grants(fixture, "refresh_token").length >= 1, "refreshed ahead of expiry");
    assert.equal(fixture.unauthorized, unauthorized, "no request was refused");

    fixture.expireAccessTokens();
    assert.equal(await echo(connection, "after 401"), "after 401");
    assert.equal(fixture.authorizations.length, 1, "no new sign-in");
    const refreshProofs = proofsAt(fixture, "token").slice(1);
    assert.ok(refreshProofs.length >= 2);
    assert.deepEqual(
      [...new Set(refreshProofs.map((p) => `${p.ok} ${p.jkt}`))],
      [`true ${jkt}`],
      "every refresh signed by the same key",
    );
    const tokens = stored(authDir);
    assert.equal(tokens.tokenType, "DPoP");
    assert.equal(await thumbprintOf(tokens), jkt, "the refreshed tokens keep the key");
  });

  test("tokens that are gone take their key with them: the sign-in after a revocation binds the new tokens to a new key", async () => {
    const { fixture, authDir, callbackPort } = await setup({ dpop: {} });
    const connection = connect(fixture, authDir, { callbackPort });
    await connection.connect();
    const first = await thumbprintOf(stored(authDir));
    fixture.revokeAll();
    assert.equal(await echo(connection, "signed in again"), "signed in again");
    assert.equal(fixture.authorizations.length, 2, "the refresh was refused: a new sign-in");
    const second = await thumbprintOf(stored(authDir));
    assert.notEqual(second, first, "a new key for the new tokens");
    assert.equal(proofsAt(fixture, "mcp").at(-1)?.jkt, second);
  });

  test("nonces: the token endpoint and the MCP server demand theirs; the bridge retries with each, also after both change", async () => {
    const { fixture, authDir, callbackPort } = await setup({ dpop: { asNonce: true, rsNonce: true } });
    const connection = connect(fixture, authDir, { callbackPort });
    await connection.connect();
    assert.equal(await echo(connection, "with nonces"), "with nonces");
    assert.equal(fixture.dpop.challenges.token, 1, "one use_dpop_nonce at the token endpoint");
    assert.equal(fixture.dpop.challenges.mcp, 1, "one at the MCP server: the nonce is remembered from then on");
    assert.equal(proofsAt(fixture, "token").at(-1)?.nonce, fixture.dpop.nonce("token"));
    assert.equal(proofsAt(fixture, "mcp").at(-1)?.nonce, fixture.dpop.nonce("mcp"));

    // Both servers move to new nonces while the token expires: the refresh and the call are each challenged once more.
    fixture.dpop.rotateNonces();
    fixture.expireAccessTokens();
    assert.equal(await echo(connection, "new nonces"), "new nonces");
    assert.equal(fixture.dpop.challenges.token, 2);
    assert.equal(fixture.dpop.challenges.mcp, 2);
    const refreshes = grants(fixture, "refresh_token");
    assert.equal(refreshes.length, 2, "the refresh, then the same refresh again with the new nonce");
    assert.equal(refreshes[0]!.get("refresh_token"), refreshes[1]!.get("refresh_token"));
    assert.equal(fixture.authorizations.length, 1, "no new sign-in");
    assert.equal(proofsAt(fixture, "token").at(-1)?.ok, true);
    assert.equal(proofsAt(fixture, "mcp").at(-1)?.ok, true);
    stored(authDir);
  });

  test("a machine client (client credentials) gets a bound token; the one fetched after a refusal is bound to the same key", async () => {
    const secret = "dpop-machine-secret-7d1e";
    const { fixture, authDir } = await setup({
      dpop: {},
      machineClients: [{ clientId: "ci-job", method: "client_secret_basic", secret }],
    });
    const connection = connect(
      fixture,
      authDir,
      { grantType: "client_credentials", clientId: "ci-job", clientSecret: secret },
      { signIn: null },
    );
    await connection.connect();
    assert.equal(await echo(connection, "machine"), "machine");
    const jkt = await thumbprintOf(stored(authDir));
    assert.deepEqual(
      proofsAt(fixture, "token").map((p) => `${p.ok} ${p.jkt}`),
      [`true ${jkt}`],
      "the client-credentials request carried a proof by the stored key",
    );
    assert.deepEqual([...new Set(fixture.presented.map((p) => p.scheme))], ["DPoP"]);

    fixture.expireAccessTokens();
    assert.equal(await echo(connection, "refused, then new"), "refused, then new");
    assert.equal(grants(fixture, "client_credentials").length, 2);
    assert.equal(await thumbprintOf(stored(authDir)), jkt);
    assert.deepEqual(
      proofsAt(fixture, "mcp").filter((p) => !p.ok),
      [],
    );
  });

  test("`auth.dpop` false: Bearer tokens from a server that offers DPoP; a Bearer-only server gets no proof", async () => {
    const offering = await setup({ dpop: {} });
    const optedOut = connect(offering.fixture, offering.authDir, { callbackPort: offering.callbackPort, dpop: false });
    await optedOut.connect();
    assert.equal(await echo(optedOut, "bearer"), "bearer");
    assert.equal(offering.fixture.proofsSent, 0, "no DPoP header on any request");
    assert.equal(stored(offering.authDir).tokenType, "Bearer");
    assert.equal(stored(offering.authDir).dpopKey, undefined, "no key kept for Bearer tokens");
    assert.deepEqual([...new Set(offering.fixture.presented.map((p) => `${p.scheme} ${p.ok}`))], ["Bearer true"]);
    await optedOut.close();

    const plain = await setup({ accessTtl: 60 });
    const connection = connect(plain.fixture, plain.authDir, { callbackPort: plain.callbackPort });
    await connection.connect();
    assert.equal(await echo(connection, "plain"), "plain");
    assert.ok(grants(plain.fixture, "refresh_token").length >= 1, "refreshed too");
    assert.equal(plain.fixture.proofsSent, 0, "no DPoP header on any request");
    assert.deepEqual([...new Set(plain.fixture.presented.map((p) => `${p.scheme} ${p.ok}`))], ["Bearer true"]);
  });

  test("`auth.dpop` true: a bound token from a server that does not advertise DPoP (left out, the bridge sends no proof there)", async () => {
    const quiet = await setup({ dpop: { algs: null } });
    const unset = connect(quiet.fixture, quiet.authDir, { callbackPort: quiet.callbackPort });
    await unset.connect();
    assert.equal(await echo(unset, "auto"), "auto");
    assert.equal(quiet.fixture.proofsSent, 0, "not advertised: Bearer");
    await unset.close();

    const forced = await setup({ dpop: { algs: null } });
    const connection = connect(forced.fixture, forced.authDir, { callbackPort: forced.callbackPort, dpop: true });
    await connection.connect();
    assert.equal(await echo(connection, "forced"), "forced");
    assert.equal(stored(forced.authDir).tokenType, "DPoP");
    assert.deepEqual([...new Set(forced.fixture.presented.map((p) => `${p.scheme} ${p.ok}`))], ["DPoP true"]);
  });

  test("no private key, token or code appears in the log file, the events or any message", async () => {
    logger.flush();
    const texts = [readFileSync(logger.path, "utf8"), JSON.stringify(events), messages.join("\n")];
    assert.ok(privateKeys.length >= 5, "the tests above stored keys");
    const secrets = [...privateKeys, ...fixtures.flatMap((f) => f.issued)];
    for (const secret of secrets)
      for (const text of texts)
        assert.equal(
          text.includes(secret),
          false,
          `a secret leaked: ${secret} in ${text.slice(Math.max(0, text.indexOf(secret) - 300), text.indexOf(secret) + 100)}`,
        );
    // Each key is hidden by the connection that holds it, wherever a server might send it back.
    for (const key of new Set(privateKeys))
      assert.ok(
        connections.some((connection) => connection.redact(`k=${key}`) === "k=***"),
        "a key is redacted",
      );
  });
});

describe("which DPoP algorithm, and `auth.dpop` in the config", () => {
  const metadata = (algs?: string[]) =>
    ({
      issuer: "https://as.example",
      ...(algs ? { dpop_signing_alg_values_supported: algs } : {}),
    }) as unknown as AuthorizationServerMetadata;

  test("unset: DPoP where advertised (ES256 first, else the first the SDK signs); true: always; false: never", () => {
    assert.equal(dpopAlgorithm(undefined, metadata(["RS256", "ES256"])), "ES256");
    assert.equal(dpopAlgorithm(undefined, metadata(["ES256K", "PS256"])), "PS256");
    assert.equal(dpopAlgorithm(undefined, metadata()), undefined);
    assert.equal(dpopAlgorithm(undefined, metadata([])), undefined);
    assert.equal(dpopAlgorithm(undefined, undefined), undefined);
    assert.equal(dpopAlgorithm(undefined, metadata(["ES256K"])), undefined, "nothing the SDK signs: Bearer");
    assert.equal(dpopAlgorithm(true, metadata()), "ES256");
    assert.equal(dpopAlgorithm(true, undefined), "ES256");
    assert.equal(dpopAlgorithm(false, metadata(["ES256"])), undefined);
    assert.throws(
      () => dpopAlgorithm(true, metadata(["ES256K"])),
      /verifies DPoP proofs only with ES256K.*set it to false/,
    );
  });

  test("the algorithms a stored key may have are the ones the SDK signs with", () => {
    assert.deepEqual([...DPOP_ALGS].sort(), [...DPOP_SUPPORTED_ALGS].sort());
  });

  test("`auth.dpop` is true or false; anything else says so", () => {
    const entry = (dpop: unknown) =>
      validateServerEntry("s", { url: "https://mcp.example.com/mcp", auth: { dpop } }, { scope: "flag", path: "test" });
    assert.equal(entry(true).config?.oauth?.dpop, true);
    assert.equal(entry(false).config?.oauth?.dpop, false);
    assert.equal(
      validateServerEntry("s", { url: "https://mcp.example.com/mcp", auth: {} }, { scope: "flag", path: "test" }).config
        ?.oauth?.dpop,
      undefined,
    );
    const errors = entry("yes").errors.join("\n");
    assert.match(
      errors,
      /`auth\.dpop` must be true \(always ask for DPoP-bound tokens\) or false \(never\); leave it out .* \(got "yes"\)/,
    );
    const machine = validateServerEntry(
      "s",
      {
        url: "https://mcp.example.com/mcp",
        auth: { grantType: "client_credentials", clientId: "c", clientSecret: "x", dpop: true },
      },
      { scope: "flag", path: "test" },
    );
    assert.deepEqual(machine.errors, []);
    assert.equal(machine.config?.oauth?.dpop, true);
  });
});
