/**
 * OAuth for machines (`"grantType": "client_credentials"`) against a real authorization server started by the tests
 * (test/fixtures/oauth-server.ts with ./fixtures/client-credentials.ts), protecting a real MCP server: a client secret
 * sent as HTTP Basic or in the form, a JWT signed with a PEM or JWK key file (verified with jose, `kid` included), no
 * browser and no sign-in at any point, tokens stored 0600 and reused, fetched again before they expire and after the
 * server refuses one, and a wrong secret or key failing with a message that names the server and quotes the token
 * endpoint's answer, with no secret in any message, event or log line.
 */
import assert from "node:assert/strict";
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { BridgeError } from "../src/common/errors.ts";
import { describeForTrust, trustFingerprint } from "../src/trust/trust-rules.ts";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import { automaticSignIn } from "../src/oauth/sign-in.ts";
import { AuthStore } from "../src/oauth/storage.ts";
import type { MachineClient } from "./fixtures/client-credentials.ts";
import type { OAuthFixture, OAuthFixtureOptions } from "./fixtures/oauth-server.ts";
import { oauthBed } from "./oauth-bed.ts";
import { waitFor } from "./helpers.ts";
import { SignJWT } from "jose";
import { startEnterpriseIdp } from "./fixtures/enterprise-idp.ts";

const SECRET = "s3cret-of-the-ci-job-9f2c";

describe("OAuth for machines: the client-credentials grant", { timeout: 120_000 }, () => {
  // A connection no one can sign in through: a machine client must never need that.
  const { setup, connect, echo, tmp, fixtures, events, logger, messages } = oauthBed("mcp-bridge-machine-auth-", {
    name: "machine",
    auth: { grantType: "client_credentials" },
    entry: { reconnect: false },
    signIn: null,
  });

  /** Secrets made by the tests themselves (workload JWTs): they must not show up either. */
  const issuedElsewhere: string[] = [];
  const grants = (fixture: OAuthFixture) =>
    fixture.tokenRequests.filter((p) => p.get("grant_type") === "client_credentials");
  /** The stored token made one of an hour with 30 s left, as a long session finds it: inside the 60 s margin. */
  const nearExpiry = (authDir: string) => {
    const file = path.join(authDir, "machine.json");
    const stored = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    const savedAt = new Date(Date.now() - 3_600_000).toISOString();
    writeFileSync(file, JSON.stringify({ ...stored, savedAt, expiresAt: Date.now() + 30_000 }));
  };

  test("client_secret_basic from a ${VAR}: connects and calls a tool with no sign-in; the token is stored 0600 and reused", async () => {
    const { fixture, authDir } = await setup({
      machineClients: [{ clientId: "ci-job", method: "client_secret_basic", secret: SECRET }],
    });
    const first = connect(
      fixture,
      authDir,
      { clientId: "ci-job", clientSecret: "${CI_SECRET}" },
      { env: { ...process.env, CI_SECRET: SECRET } },
    );
    await first.connect();
    assert.equal(await echo(first, "machine"), "machine");
    assert.equal(first.status, "connected");
    assert.equal(first.needsSignIn, false);
    assert.deepEqual(
      fixture.clientAuth.map((a) => [a.method, a.clientId, a.ok]),
      [["client_secret_basic", "ci-job", true]],
      "one token request, authenticated with HTTP Basic",
    );
    assert.equal(fixture.authorizations.length, 0, "no browser sign-in");
    assert.equal(fixture.registrations.length, 0, "no registration");
    assert.equal(grants(fixture)[0]!.get("resource"), fixture.url, "RFC 8707 resource");
    assert.equal(grants(fixture)[0]!.get("client_secret"), null, "the secret is not in the form");
    assert.equal(fixture.unauthorized, 0, "the token was there before the first request");
    const tokensFile = path.join(authDir, "machine.json");
    assert.equal(statSync(tokensFile).mode & 0o777, 0o600);
    const stored = JSON.parse(readFileSync(tokensFile, "utf8")) as Record<string, unknown>;
    assert.equal(typeof stored.accessToken, "string");
    assert.equal(stored.refreshToken, undefined);
    assert.equal(readFileSync(tokensFile, "utf8").includes(SECRET), false, "the secret is not stored");
    await first.close();

    const second = connect(
      fixture,
      authDir,
      { clientId: "ci-job", clientSecret: "${CI_SECRET}" },
      { env: { ...process.env, CI_SECRET: SECRET } },
    );
    await second.connect();
    assert.equal(await echo(second, "again"), "again");
    assert.equal(grants(fixture).length, 1, "the stored token was reused");
    // `/mcp auth`: a new token, still without a browser; `/mcp logout`: the token is gone.
    await second.signIn(automaticSignIn());
    assert.equal(await echo(second, "new token"), "new token");
    assert.equal(grants(fixture).length, 2);
    assert.equal(fixture.authorizations.length, 0);
    assert.equal((await second.logout()).removed, true);
    assert.equal(new AuthStore(authDir).tokens("machine", fixture.url), undefined);
    await second.close();
  });

  test("a token answered without `scope` has the scope asked for: a step-up after it asks for both", async () => {
    const options: OAuthFixtureOptions = {
      machineClients: [{ clientId: "ci-job", method: "client_secret_basic", secret: SECRET }],
      omitScope: true,
    };
    const { fixture, authDir } = await setup(options);
    const connection = connect(fixture, authDir, { clientId: "ci-job", clientSecret: SECRET });
    await connection.connect();
    options.requiredScope = "admin";
    assert.equal(await echo(connection, "more"), "more");
    assert.deepEqual(grants(fixture).at(-1)?.get("scope")?.split(" ").sort(), ["admin", "tools"]);
  });

  test("client_secret_post when the config says so: the secret goes in the form, not a header", async () => {
    // The server takes both; without the setting the SDK would choose Basic.
    const { fixture, authDir } = await setup({
      machineClients: [
        { clientId: "poster", method: "client_secret_post", secret: SECRET },
        { clientId: "other", method: "client_secret_basic", secret: SECRET },
      ],
    });
    const connection = connect(fixture, authDir, {
      clientId: "poster",
      clientSecret: SECRET,
      tokenEndpointAuthMethod: "client_secret_post",
      scopes: ["tools"],
    });
    await connection.connect();
    assert.equal(await echo(connection, "posted"), "posted");
    assert.deepEqual(
      fixture.clientAuth.map((a) => [a.method, a.ok]),
      [["client_secret_post", true]],
    );
    assert.equal(grants(fixture)[0]!.get("scope"), "tools", "the configured scopes");
  });

  test("a 403 insufficient_scope gets a token with the larger scope, though `scopes` are configured", async () => {
    const { fixture, authDir } = await setup({
      machineClients: [{ clientId: "stepper", method: "client_secret_basic", secret: SECRET }],
      requiredScope: "admin",
    });
    const connection = connect(fixture, authDir, { clientId: "stepper", clientSecret: SECRET, scopes: ["tools"] });
    await connection.connect();
    assert.equal(await echo(connection, "more"), "more");
    assert.equal(grants(fixture)[0]!.get("scope"), "tools", "the configured scopes first");
    assert.deepEqual(grants(fixture).at(-1)!.get("scope")?.split(" ").sort(), ["admin", "tools"]);
  });

  test("private_key_jwt with a PEM key (SEC1 EC): the assertion verifies against the client's public key", async () => {
    const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const { fixture, authDir } = await setup({
      machineClients: [{ clientId: "signer", method: "private_key_jwt", publicKey }],
    });
    const keyFile = path.join(tmp.dir, "signer.pem");
    writeFileSync(keyFile, privateKey.export({ format: "pem", type: "sec1" }), { mode: 0o600 });
    const connection = connect(fixture, authDir, { clientId: "signer", privateKeyFile: keyFile });
    await connection.connect();
    assert.equal(await echo(connection, "signed"), "signed");
    assert.deepEqual(
      fixture.clientAuth.map((a) => [a.method, a.clientId, a.ok, a.kid]),
      [["private_key_jwt", "signer", true, undefined]],
    );
  });

  test("private_key_jwt with a key file under ${PROJECT_ROOT}: the project's file is read", async () => {
    const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const { fixture, authDir } = await setup({
      machineClients: [{ clientId: "in-project", method: "private_key_jwt", publicKey }],
    });
    writeFileSync(path.join(tmp.dir, "project.pem"), privateKey.export({ format: "pem", type: "sec1" }), {
      mode: 0o600,
    });
    const auth = { clientId: "in-project", privateKeyFile: "${PROJECT_ROOT}/project.pem" };
    const connection = connect(fixture, authDir, auth, { projectRoot: tmp.dir });
    await connection.connect();
    assert.equal(await echo(connection, "from the project"), "from the project");
  });

  test("private_key_jwt with a JWK key file and keyId: the assertion's header names the key", async () => {
    const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const { fixture, authDir } = await setup({
      machineClients: [{ clientId: "rotating", method: "private_key_jwt", publicKey, keyId: "key-2026" }],
    });
    const keyFile = path.join(tmp.dir, "rotating.jwk.json");
    writeFileSync(keyFile, JSON.stringify(privateKey.export({ format: "jwk" })), { mode: 0o600 });
    const connection = connect(fixture, authDir, {
      clientId: "rotating",
      privateKeyFile: keyFile,
      signingAlgorithm: "PS256",
      keyId: "key-2026",
    });
    await connection.connect();
    assert.equal(await echo(connection, "rotated"), "rotated");
    assert.deepEqual(
      fixture.clientAuth.map((a) => [a.method, a.ok, a.kid]),
      [["private_key_jwt", true, "key-2026"]],
    );
  });

  test("a token about to expire is fetched again before use (no 401); one the server stopped accepting is replaced after its 401", async () => {
    const { fixture, authDir } = await setup({
      machineClients: [{ clientId: "short", method: "client_secret_basic", secret: SECRET }],
    });
    const connection = connect(fixture, authDir, { clientId: "short", clientSecret: SECRET });
    await connection.connect();
    nearExpiry(authDir);
    const before = grants(fixture).length;
    assert.equal(await echo(connection, "fresh"), "fresh");
    assert.ok(grants(fixture).length > before, "a new token was fetched ahead of expiry");
    assert.equal(fixture.unauthorized, 0, "no request was refused");

    const { fixture: other, authDir: otherDir } = await setup({
      machineClients: [{ clientId: "long", method: "client_secret_basic", secret: SECRET }],
    });
    const lasting = connect(other, otherDir, { clientId: "long", clientSecret: SECRET });
    await lasting.connect();
    assert.equal(grants(other).length, 1);
    other.expireAccessTokens();
    assert.equal(await echo(lasting, "after 401"), "after 401");
    assert.ok(other.unauthorized >= 1, "the server refused the old token");
    assert.equal(grants(other).length, 2, "one new token");
    assert.equal(lasting.needsSignIn, false);
  });

  test("tokens that live less than the refresh margin (a minute) are not fetched again for every call", async () => {
    const { fixture, authDir } = await setup({
      machineClients: [{ clientId: "brief", method: "client_secret_basic", secret: SECRET }],
      accessTtl: 60,
    });
    const connection = connect(fixture, authDir, { clientId: "brief", clientSecret: SECRET });
    await connection.connect();
    for (const text of ["one", "two", "three", "four"]) assert.equal(await echo(connection, text), text);
    assert.equal(grants(fixture).length, 1, "one token for calls within the first half of its minute");
  });

  test("a token near its end still works while the token endpoint does not answer for a new one: calls go through", async () => {
    const options: OAuthFixtureOptions = {
      machineClients: [{ clientId: "ci-job", method: "client_secret_basic", secret: SECRET }],
    };
    const { fixture, authDir } = await setup(options);
    const connection = connect(fixture, authDir, { clientId: "ci-job", clientSecret: SECRET }, { tokenTimeoutMs: 500 });
    await connection.connect();
    nearExpiry(authDir);
    options.clientCredentialsHang = true;
    for (const text of ["one", "two"]) assert.equal(await echo(connection, text), text);
    assert.equal(grants(fixture).length, 2, "one new token asked for, not one per call");
  });

  test("a wrong secret fails clearly: the server, the token endpoint and its answer, never the secret; not 'needs sign-in'", async () => {
    const { fixture, authDir } = await setup({
      machineClients: [{ clientId: "ci-job", method: "client_secret_basic", secret: "the-right-one-1234" }],
      echoSecrets: true,
    });
    const connection = connect(fixture, authDir, { clientId: "ci-job", clientSecret: SECRET });
    await assert.rejects(connection.connect(), (error: unknown) => {
      messages.push(String(error));
      assert.ok(error instanceof BridgeError && error.kind === "auth", String(error));
      assert.match(
        error.message,
        /^MCP server 'machine': the authorization server refused client 'ci-job' at http:\/\/127\.0\.0\.1:\d+\/token: invalid_client \(client authentication failed \(wrong secret '\*\*\*'\)\)/,
      );
      assert.match(error.message, /Check `auth\.clientId` and `auth\.clientSecret`/);
      assert.equal(error.message.includes(SECRET), false);
      return true;
    });
    assert.ok(fixture.clientAuth.length >= 1 && fixture.clientAuth.every((a) => !a.ok));
    assert.equal(connection.needsSignIn, false);
    assert.notEqual(connection.status, "needs sign-in");
    assert.equal(connection.lastError?.includes(SECRET), false);
    assert.match(connection.lastError ?? "", /refused client 'ci-job'/);
  });

  test("a secret from a ${VAR} set to an empty string: an error naming the variable, and no token request", async () => {
    const { fixture, authDir } = await setup({
      machineClients: [{ clientId: "ci-job", method: "client_secret_basic", secret: SECRET }],
    });
    const env = { ...process.env, CI_SECRET: "" };
    const connection = connect(fixture, authDir, { clientId: "ci-job", clientSecret: "${CI_SECRET}" }, { env });
    await assert.rejects(connection.connect(), /environment variable \$\{CI_SECRET\} in `auth\.clientSecret` is empty/);
    assert.equal(grants(fixture).length, 0, "no secret-less token request");
  });

  test("a token endpoint that takes the request and never answers: the connect fails in time, naming it, not the server", async () => {
    const { fixture, authDir } = await setup({
      machineClients: [{ clientId: "ci-job", method: "client_secret_basic", secret: SECRET }],
      clientCredentialsHang: true,
    });
    const auth = { clientId: "ci-job", clientSecret: SECRET };
    // The connect's revision probe has half its time: more than the token request's 1 s.
    const entry = { reconnect: false, timeout: 45_000 };
    const connection = connect(fixture, authDir, auth, { entry, tokenTimeoutMs: 1000 });
    await assert.rejects(connection.connect(), /no access token from http:\/\/127\.0\.0\.1:\d+\/token: .*timeout/i);
  });

  test("a token endpoint that did not answer the connect's request is asked again: the server connects once it answers", async () => {
    const options: OAuthFixtureOptions = {
      machineClients: [{ clientId: "ci-job", method: "client_secret_basic", secret: SECRET }],
      clientCredentialsHang: true,
    };
    const { fixture, authDir } = await setup(options);
    const auth = { clientId: "ci-job", clientSecret: SECRET };
    const entry = { reconnect: { initialDelay: 20, maxDelay: 200 } };
    const connection = connect(fixture, authDir, auth, { entry, tokenTimeoutMs: 500 });
    await assert.rejects(connection.connect(), /no access token from/);
    options.clientCredentialsHang = false;
    await waitFor(() => connection.status === "connected", "a reconnect once the token endpoint answers");
    assert.equal(await echo(connection, "back"), "back");
  });

  test("a token endpoint in trouble (server_error) is not said to refuse the client, and is asked again", async () => {
    const options: OAuthFixtureOptions = {
      machineClients: [{ clientId: "ci-job", method: "client_secret_basic", secret: SECRET }],
      clientCredentialsStatus: 500,
    };
    const { fixture, authDir } = await setup(options);
    const auth = { clientId: "ci-job", clientSecret: SECRET };
    const connection = connect(fixture, authDir, auth, { entry: { reconnect: { initialDelay: 20, maxDelay: 200 } } });
    const { message } = await connection.connect().then(
      () => assert.fail("no token"),
      (error: Error) => error,
    );
    assert.match(message, /server_error/);
    assert.doesNotMatch(message, /refused client|Check `auth\.clientId`/);
    delete options.clientCredentialsStatus;
    await waitFor(() => connection.status === "connected", "a reconnect once the token endpoint issues tokens");
  });

  test("a signed assertion the token endpoint quotes back in its refusal is hidden like a secret", async () => {
    const registered = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const other = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const { fixture, authDir } = await setup({
      machineClients: [{ clientId: "signer", method: "private_key_jwt", publicKey: registered.publicKey }],
      echoSecrets: true,
    });
    const keyFile = path.join(tmp.dir, "wrong-signer.pem");
    writeFileSync(keyFile, other.privateKey.export({ format: "pem", type: "sec1" }), { mode: 0o600 });
    const connection = connect(fixture, authDir, { clientId: "signer", privateKeyFile: keyFile });
    const error = await connection.connect().then(
      () => assert.fail("the assertion is refused"),
      (e: unknown) => e,
    );
    const assertions = grants(fixture).map((form) => form.get("client_assertion")!);
    assert.ok(assertions.length > 0);
    issuedElsewhere.push(...assertions);
    assert.match(String(error), /assertion rejected: signature verification failed in \*\*\*/);
    for (const text of [String(error), connection.lastError ?? "", JSON.stringify(events)])
      for (const assertion of assertions) assert.ok(!text.includes(assertion), text);
  });

  test("a secret revoked while connected: the next call, refused, fails with the token endpoint's answer, not 'sign in'", async () => {
    const client: MachineClient = { clientId: "ci-job", method: "client_secret_basic", secret: SECRET };
    const { fixture, authDir } = await setup({ machineClients: [client] });
    const connection = connect(fixture, authDir, { clientId: "ci-job", clientSecret: SECRET });
    await connection.connect();
    assert.equal(await echo(connection, "before"), "before");
    client.secret = "rotated-by-the-admin";
    fixture.expireAccessTokens();
    await assert.rejects(echo(connection, "after"), (error: unknown) => {
      assert.ok(error instanceof BridgeError && error.kind === "auth", String(error));
      assert.match(
        error.message,
        /MCP server 'machine': the authorization server refused client 'ci-job' at \S+\/token: invalid_client \(client authentication failed \(wrong secret\)\)/,
      );
      return true;
    });
    assert.equal(connection.needsSignIn, false);
  });

  test("a server that refuses every token: one new token is tried, then a clear error; no sign-in is asked for", async () => {
    const { fixture, authDir } = await setup({
      machineClients: [{ clientId: "ci-job", method: "client_secret_basic", secret: SECRET }],
      refuseTokens: true,
    });
    const connection = connect(fixture, authDir, { clientId: "ci-job", clientSecret: SECRET });
    await assert.rejects(connection.connect(), (error: unknown) => {
      messages.push(String(error));
      assert.ok(error instanceof BridgeError && error.kind === "auth", String(error));
      assert.match(
        error.message,
        /MCP server 'machine' refused the access token its authorization server issued to client 'ci-job' \(a new one as well\)/,
      );
      return true;
    });
    assert.ok(grants(fixture).length >= 2, "a new token was tried");
    assert.equal(connection.needsSignIn, false);
    assert.equal(fixture.authorizations.length, 0);
  });

  describe("the JWT bearer grant: a workload's identity token", () => {
    const WORKLOAD_ISSUER = "https://token.actions.example.com";
    const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
    const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });

    function workloadJwt(key: KeyObject, audience: string, expires: string | number = "10m"): Promise<string> {
      return new SignJWT({})
        .setProtectedHeader({ alg: "ES256" })
        .setIssuer(WORKLOAD_ISSUER)
        .setSubject("repo:acme/app:ref:main")
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime(expires)
        .setJti(crypto.randomUUID())
        .sign(key);
    }

    test("a JWT from a file is exchanged for a token with no sign-in, and the file is read again for the next token", async () => {
      const { fixture, authDir } = await setup({
        machineClients: [],
        workloadIssuer: { issuer: WORKLOAD_ISSUER, publicKey },
      });
      const jwtFile = path.join(tmp.dir, "workload-token");
      const first = await workloadJwt(privateKey, fixture.origin);
      writeFileSync(jwtFile, `${first}\n`);
      const connection = connect(fixture, authDir, {
        grantType: JWT_BEARER,
        clientId: "workload",
        assertionFile: jwtFile,
      });
      await connection.connect();
      assert.equal(await echo(connection, "workload"), "workload");
      assert.ok(
        fixture.workloadGrants.length >= 1 &&
          fixture.workloadGrants.every((g) => g.ok && g.assertion === first && g.clientId === "workload"),
      );
      assert.equal(fixture.authorizations.length + fixture.registrations.length, 0, "no sign-in, no registration");
      // The platform replaces the file with a new token; the next token request (the token is near its end) sends it.
      const second = await workloadJwt(privateKey, fixture.origin);
      writeFileSync(jwtFile, second);
      nearExpiry(authDir);
      assert.equal(await echo(connection, "rotated"), "rotated");
      assert.equal(fixture.workloadGrants.at(-1)!.assertion, second);
      issuedElsewhere.push(first, second);
    });

    test("a workload client that proves itself with a key file signs a client assertion beside the JWT", async () => {
      const { fixture, authDir } = await setup({
        machineClients: [],
        workloadIssuer: { issuer: WORKLOAD_ISSUER, publicKey },
      });
      const jwt = await workloadJwt(privateKey, fixture.origin);
      issuedElsewhere.push(jwt);
      const keyFile = path.join(tmp.dir, "workload-client.pem");
      writeFileSync(keyFile, privateKey.export({ format: "pem", type: "pkcs8" }), { mode: 0o600 });
      const auth = { grantType: JWT_BEARER, clientId: "workload", assertion: jwt, privateKeyFile: keyFile };
      const connection = connect(fixture, authDir, auth);
      await connection.connect();
      assert.equal(await echo(connection, "keyed"), "keyed");
      const form = fixture.tokenRequests.find((p) => p.get("grant_type") === JWT_BEARER)!;
      assert.equal(form.get("assertion"), jwt);
      assert.equal(form.get("client_assertion_type"), "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
    });

    test("an expired JWT from a variable fails with the token endpoint's answer, the JWT hidden even where the server quotes it", async () => {
      const { fixture, authDir } = await setup({
        machineClients: [],
        workloadIssuer: { issuer: WORKLOAD_ISSUER, publicKey },
        echoSecrets: true,
      });
      const expired = await workloadJwt(privateKey, fixture.origin, Math.floor(Date.now() / 1000) - 60);
      issuedElsewhere.push(expired);
      const connection = connect(
        fixture,
        authDir,
        { grantType: JWT_BEARER, clientId: "workload", assertion: "${WORKLOAD_JWT}" },
        { env: { ...process.env, WORKLOAD_JWT: expired } },
      );
      await assert.rejects(connection.connect(), (error: unknown) => {
        messages.push(String(error));
        assert.ok(error instanceof BridgeError && error.kind === "auth", String(error));
        assert.match(
          error.message,
          /refused client 'workload' at \S+\/token: invalid_grant \(assertion rejected: "exp" claim timestamp check failed in \*\*\*\)/,
        );
        assert.match(error.message, /Check `auth.clientId` and the workload's JWT/);
        assert.equal(error.message.includes(expired), false);
        return true;
      });
      assert.equal(connection.needsSignIn, false);
    });
  });

  describe("enterprise-managed authorization: the user's ID token exchanged at the enterprise's identity provider", () => {
    const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
    const IDP_SECRET = "idp-client-secret-77aa";

    async function enterprise(options: OAuthFixtureOptions = {}) {
      const idp = await startEnterpriseIdp({
        clientId: "pi-at-acme",
        clientSecret: IDP_SECRET,
        mcpClientId: "mcp-client",
      });
      const { fixture, authDir } = await setup({
        machineClients: [{ clientId: "mcp-client", method: "client_secret_basic", secret: SECRET }],
        ...options,
        enterpriseIdp: { issuer: idp.issuer, publicKey: idp.publicKey },
      });
      const auth = {
        grantType: JWT_BEARER,
        clientId: "mcp-client",
        clientSecret: SECRET,
        idpTokenUrl: idp.tokenUrl,
        idpClientId: "pi-at-acme",
        idpClientSecret: "${IDP_SECRET}",
      };
      return { idp, fixture, authDir, auth };
    }

    test("an ID token from a file becomes an ID-JAG for this server, then a token: no sign-in; the file is read again", async () => {
      const { idp, fixture, authDir, auth } = await enterprise();
      const idTokenFile = path.join(tmp.dir, "id-token");
      const alice = await idp.idToken("alice");
      writeFileSync(idTokenFile, alice);
      const connection = connect(fixture, authDir, { ...auth, idTokenFile }, { env: { ...process.env, IDP_SECRET } });
      try {
        await connection.connect();
        assert.equal(await echo(connection, "enterprise"), "enterprise");
        assert.ok(idp.exchanges.length >= 1 && idp.exchanges.every((e) => e.ok), JSON.stringify(idp.exchanges));
        assert.equal(idp.exchanges[0]!.audience, fixture.origin, "the ID-JAG is for this authorization server");
        assert.equal(idp.exchanges[0]!.resource, fixture.url, "and for this MCP server");
        assert.ok(
          fixture.workloadGrants.length >= 1 &&
            fixture.workloadGrants.every((g) => g.ok && g.clientId === "mcp-client"),
          JSON.stringify(fixture.workloadGrants.map((g) => g.error)),
        );
        assert.equal(fixture.authorizations.length + fixture.registrations.length, 0);
        assert.equal(idp.exchanges[0]!.user, "alice");
        // Another sign-in replaces the file; the next token (this one is near its end) is asked for with the new ID token.
        writeFileSync(idTokenFile, await idp.idToken("alice-again"));
        nearExpiry(authDir);
        assert.equal(await echo(connection, "again"), "again");
        assert.equal(idp.exchanges.at(-1)!.user, "alice-again");
      } finally {
        issuedElsewhere.push(alice, ...idp.issued);
        await idp.close();
      }
    });

    test("a refusal at the MCP server's authorization server names the enterprise keys, not a workload JWT's", async () => {
      const { idp, fixture, authDir, auth } = await enterprise();
      const alice = await idp.idToken("alice");
      const env = { ...process.env, IDP_SECRET, ID_TOKEN: alice };
      const wrong = { ...auth, clientSecret: "not-the-secret-1234", idToken: "${ID_TOKEN}" };
      const connection = connect(fixture, authDir, wrong, { env });
      try {
        await assert.rejects(connection.connect(), (error: unknown) => {
          messages.push(String(error));
          assert.match(String(error), /refused client 'mcp-client'.*Check `auth\.clientId` and `auth\.clientSecret`/);
          assert.doesNotMatch(String(error), /auth\.assertion/, "the config has no workload JWT");
          return true;
        });
      } finally {
        issuedElsewhere.push(alice, ...idp.issued);
        await idp.close();
      }
    });

    test("an expired ID token from a file: the error names `auth.idTokenFile`, the key that holds it", async () => {
      const { idp, fixture, authDir, auth } = await enterprise();
      const expired = await idp.idToken("carol", true);
      issuedElsewhere.push(expired);
      const idTokenFile = path.join(tmp.dir, "expired-id-token");
      writeFileSync(idTokenFile, expired);
      const connection = connect(fixture, authDir, { ...auth, idTokenFile }, { env: { ...process.env, IDP_SECRET } });
      try {
        await assert.rejects(connection.connect(), (error: unknown) => {
          messages.push(String(error));
          assert.match(String(error), /Check `auth\.idTokenFile` \(is it current\?\)/);
          return true;
        });
      } finally {
        await idp.close();
      }
    });

    test("an expired ID token fails with the identity provider's answer; no secret or token in the message", async () => {
      const { idp, fixture, authDir, auth } = await enterprise();
      const expired = await idp.idToken("bob", true);
      issuedElsewhere.push(expired);
      const connection = connect(
        fixture,
        authDir,
        { ...auth, idToken: "${ID_TOKEN}" },
        { env: { ...process.env, IDP_SECRET, ID_TOKEN: expired } },
      );
      try {
        await assert.rejects(connection.connect(), (error: unknown) => {
          messages.push(String(error));
          assert.ok(error instanceof BridgeError && error.kind === "auth", String(error));
          assert.match(
            error.message,
            /^MCP server 'machine': the identity provider http:\/\/127\.0\.0\.1:\d+\/token did not exchange the ID token for an authorization grant: Token exchange failed: invalid_grant - ID token rejected: "exp" claim timestamp check failed\. Check `auth\.idToken`/,
          );
          for (const secret of [expired, IDP_SECRET, SECRET]) assert.equal(error.message.includes(secret), false);
          return true;
        });
        assert.equal(fixture.workloadGrants.length, 0, "nothing reached the authorization server");
        assert.equal(connection.needsSignIn, false);
      } finally {
        await idp.close();
      }
    });
  });

  test("a key file that is missing, or holds a public key, is named with what to fix", async () => {
    const { publicKey } = generateKeyPairSync("ed25519");
    const { fixture, authDir } = await setup({
      machineClients: [{ clientId: "signer", method: "private_key_jwt", publicKey }],
    });
    const missing = connect(fixture, authDir, {
      clientId: "signer",
      privateKeyFile: path.join(tmp.dir, "nowhere.pem"),
    });
    await assert.rejects(
      missing.connect(),
      /MCP server 'machine': the private key file .*nowhere\.pem cannot be read \(it does not exist\); fix `auth\.privateKeyFile`/,
    );
    const publicFile = path.join(tmp.dir, "public.pem");
    writeFileSync(publicFile, publicKey.export({ format: "pem", type: "spki" }));
    const wrong = connect(fixture, authDir, { clientId: "signer", privateKeyFile: publicFile });
    await assert.rejects(wrong.connect(), /holds no usable private key: it holds a public key or certificate/);
    // A JWK Set (`{"keys": [...]}`) holding the private key is not "a public JWK".
    const setFile = path.join(tmp.dir, "set.jwks");
    const { privateKey } = generateKeyPairSync("ed25519");
    writeFileSync(setFile, JSON.stringify({ keys: [privateKey.export({ format: "jwk" })] }));
    const set = connect(fixture, authDir, { clientId: "signer", privateKeyFile: setFile });
    await assert.rejects(set.connect(), /set\.jwks holds no usable private key: it is a JWK Set; the file should hold/);
    // A symmetric JWK (a client_secret_jwt key) is no public key either.
    const octFile = path.join(tmp.dir, "oct.jwk");
    writeFileSync(octFile, JSON.stringify({ kty: "oct", k: "c2VjcmV0LW9mLXRoZS1jbGllbnQ" }));
    const oct = connect(fixture, authDir, { clientId: "signer", privateKeyFile: octFile });
    await assert.rejects(oct.connect(), /oct\.jwk holds a symmetric key, which cannot sign a client assertion/);
    assert.equal(fixture.clientAuth.length, 0, "nothing was sent");
  });

  test("no secret, token or key appears in the log file, the events or any message", async () => {
    logger.flush();
    const texts = [readFileSync(logger.path, "utf8"), JSON.stringify(events), messages.join("\n")];
    const issued = [...fixtures.flatMap((f) => f.issued), ...issuedElsewhere];
    assert.ok(issued.length >= 5);
    for (const secret of [SECRET, ...issued])
      for (const text of texts) assert.equal(text.includes(secret), false, "a secret leaked");
    const assertions = fixtures.flatMap((f) =>
      f.tokenRequests.map((p) => p.get("client_assertion")).filter((a): a is string => a !== null),
    );
    assert.ok(assertions.length >= 2);
    for (const text of texts)
      assert.equal(text.includes("idp-client-secret-77aa"), false, "the IdP client secret leaked");
    for (const assertion of assertions)
      for (const text of texts) assert.equal(text.includes(assertion), false, "an assertion leaked");
  });
});

describe("the client-credentials config: each mistake said with what to change", () => {
  const errorsOf = (auth: Record<string, unknown>, field = "auth") =>
    validateServerEntry(
      "m",
      { url: "https://mcp.example.com/mcp", [field]: auth },
      { scope: "user", path: "/home/u/.pi/agent/mcp.json" },
    ).errors;

  test("complete entries pass, and read as written (pi 1.x's `oauth` block too)", () => {
    assert.deepEqual(
      errorsOf({ grantType: "client_credentials", clientId: "job", clientSecret: "${JOB_SECRET}", scopes: ["read"] }),
      [],
    );
    assert.deepEqual(
      errorsOf(
        {
          grantType: "client_credentials",
          clientId: "job",
          privateKeyFile: "~/keys/job.pem",
          signingAlgorithm: "ES256",
          keyId: "k1",
        },
        "oauth",
      ),
      [],
    );
    assert.deepEqual(
      errorsOf({
        grantType: "urn:ietf:params:oauth:grant-type:jwt-bearer",
        clientId: "w",
        assertionFile: "/var/run/secrets/tokens/mcp",
      }),
      [],
    );
    assert.deepEqual(
      errorsOf({
        grantType: "urn:ietf:params:oauth:grant-type:jwt-bearer",
        clientId: "w",
        assertion: "${ACTIONS_ID_TOKEN}",
        clientSecret: "${S}",
      }),
      [],
    );
    const enterprise = {
      grantType: "urn:ietf:params:oauth:grant-type:jwt-bearer",
      clientId: "w",
      clientSecret: "${S}",
      idpClientId: "c",
      idToken: "${ID_TOKEN}",
    };
    assert.deepEqual(errorsOf({ ...enterprise, idpUrl: "https://acme.okta.com" }), []);
    assert.deepEqual(
      errorsOf({
        ...enterprise,
        idpTokenUrl: "https://acme.okta.com/oauth2/v1/token",
        idpClientSecret: "${IDP_SECRET}",
      }),
      [],
    );
    const config = validateServerEntry(
      "m",
      { url: "https://x/mcp", auth: { grantType: "client_credentials", clientId: "job", privateKeyFile: "~/k.pem" } },
      { scope: "user", path: "/p" },
    ).config;
    assert.equal(config?.oauth?.tokenEndpointAuthMethod, "private_key_jwt", "a key file means private_key_jwt");
  });

  test("a project server's key file is shown when trust is asked, and a changed one asks again", () => {
    const entry = (file: string) =>
      validateServerEntry(
        "m",
        { url: "https://x/mcp", auth: { grantType: "client_credentials", clientId: "job", privateKeyFile: file } },
        { scope: "project", path: "/p/.pi/mcp.json" },
      ).config!;
    assert.ok(
      describeForTrust(entry("~/keys/job.pem")).includes(
        "signs its OAuth token requests with the key in: ~/keys/job.pem",
      ),
    );
    assert.notEqual(trustFingerprint(entry("~/keys/job.pem")), trustFingerprint(entry("~/.ssh/id_ed25519")));
    const enterprise = validateServerEntry(
      "m",
      {
        url: "https://x/mcp",
        auth: {
          grantType: "urn:ietf:params:oauth:grant-type:jwt-bearer",
          clientId: "c",
          idpUrl: "https://idp",
          idpClientId: "i",
          idpClientSecret: "${IDP_SECRET}",
          idToken: "${ID_TOKEN}",
        },
      },
      { scope: "project", path: "/p/.pi/mcp.json" },
    ).config!;
    assert.ok(
      describeForTrust(enterprise).includes("reads your variables: ${IDP_SECRET}, ${ID_TOKEN}"),
      describeForTrust(enterprise).join("\n"),
    );
    // The identity provider gets the user's ID token: it is shown as the token endpoint is, and so is a file sent.
    assert.ok(
      describeForTrust(enterprise).includes("OAuth endpoints: https://idp"),
      describeForTrust(enterprise).join("\n"),
    );
    const fromFile = validateServerEntry(
      "m",
      {
        url: "https://x/mcp",
        auth: {
          grantType: "urn:ietf:params:oauth:grant-type:jwt-bearer",
          clientId: "w",
          assertionFile: "~/.ssh/id_rsa",
        },
      },
      { scope: "project", path: "/p/.pi/mcp.json" },
    ).config!;
    assert.ok(describeForTrust(fromFile).join("\n").includes("~/.ssh/id_rsa"), describeForTrust(fromFile).join("\n"));
  });

  test("what is missing, contradictory or meant for a browser sign-in", () => {
    const JWT = "urn:ietf:params:oauth:grant-type:jwt-bearer";
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ grantType: "client_credentials", clientSecret: "x" }, /`auth.clientSecret` needs `auth.clientId`/],
      [
        { grantType: "client_credentials", clientId: "job" },
        /needs `auth.clientSecret` \(client_secret_basic or client_secret_post\) or `auth.privateKeyFile` \(private_key_jwt\)/,
      ],
      [
        { grantType: "client_credentials", clientId: "job", clientSecret: "x", privateKeyFile: "/k.pem" },
        /two ways to prove the client; keep one/,
      ],
      [
        {
          grantType: "client_credentials",
          clientId: "job",
          clientSecret: "x",
          tokenEndpointAuthMethod: "private_key_jwt",
        },
        /"private_key_jwt" signs with `auth.privateKeyFile`/,
      ],
      [
        {
          grantType: "client_credentials",
          clientId: "job",
          privateKeyFile: "/k.pem",
          tokenEndpointAuthMethod: "client_secret_post",
        },
        /with `auth.privateKeyFile` it is "private_key_jwt"/,
      ],
      [
        {
          grantType: "client_credentials",
          clientId: "job",
          clientSecret: "x",
          tokenEndpointAuthMethod: "tls_client_auth",
        },
        /must be "client_secret_basic", "client_secret_post" or "private_key_jwt"/,
      ],
      [
        { grantType: "client_credentials", clientId: "job", privateKeyFile: "/k.pem", signingAlgorithm: "HS256" },
        /must be one of RS256, .*EdDSA \(got "HS256"\)/,
      ],
      [
        { grantType: "client_credentials", clientId: "job", privateKeyFile: "keys/k.pem" },
        /must be an absolute path, or start with ~\/ or a \$\{VAR\}/,
      ],
      [
        { grantType: "client_credentials", clientId: "job", clientSecret: "x", keyId: "k1" },
        /`auth.keyId` go with `auth.privateKeyFile`/,
      ],
      [
        { grantType: "client_credentials", clientId: "job", clientSecret: "x", callbackPort: 9000 },
        /`auth.callbackPort` is for signing in in a browser/,
      ],
      [
        {
          grantType: "client_credentials",
          clientId: "job",
          clientSecret: "x",
          authorizationUrl: "https://a/authorize",
          tokenUrl: "https://a/token",
        },
        /use discovery, or `auth.authServerMetadataUrl`/,
      ],
      [
        { grantType: "password", clientId: "job" },
        /`auth.grantType` must be "authorization_code" .*, "client_credentials" .* or "urn:ietf:params:oauth:grant-type:jwt-bearer"/,
      ],
      [
        { clientId: "job", privateKeyFile: "/k.pem" },
        /`auth.privateKeyFile` is for `"grantType": "client_credentials"` or "urn:ietf:params:oauth:grant-type:jwt-bearer"; add one, or remove it/,
      ],
      [
        { grantType: JWT, clientId: "w" },
        /needs one of `auth.assertion` \(the workload's JWT, from a \$\{VAR\}\), `auth.assertionFile` .* or an identity provider/,
      ],
      [{ grantType: JWT, clientId: "w", assertion: "${T}", assertionFile: "/t" }, /needs one of `auth.assertion`/],
      [{ grantType: JWT, clientId: "w", assertionFile: "token" }, /`auth.assertionFile` must be an absolute path/],
      [
        { grantType: "client_credentials", clientId: "job", clientSecret: "x", assertion: "${T}" },
        /`auth.assertion`, `auth.assertionFile` and the `auth.idp…`\/`idToken` keys are for `"grantType": "urn:ietf:params:oauth:grant-type:jwt-bearer"`/,
      ],
      [
        { grantType: JWT, clientId: "w", idpUrl: "https://idp.example.com", idToken: "${T}" },
        /enterprise-managed authorization needs `auth.idpClientId`/,
      ],
      [
        { grantType: JWT, clientId: "w", idpClientId: "c", idToken: "${T}" },
        /needs one of `auth.idpUrl` \(the identity provider's issuer\) or `auth.idpTokenUrl`/,
      ],
      [
        { grantType: JWT, clientId: "w", idpTokenUrl: "ftp://idp/token", idpClientId: "c", idToken: "${T}" },
        /`auth.idpTokenUrl`/,
      ],
      [
        { grantType: JWT, clientId: "w", idpUrl: "https://idp.example.com", idpClientId: "c" },
        /needs one of `auth.idToken` \(the user's ID token, from a \$\{VAR\}\) or `auth.idTokenFile`/,
      ],
      [
        {
          grantType: JWT,
          clientId: "w",
          assertion: "${A}",
          idpUrl: "https://idp.example.com",
          idpClientId: "c",
          idToken: "${T}",
        },
        /needs one of `auth.assertion`/,
      ],
      [
        { grantType: "client_credentials", clientId: "job", clientSecret: "x", idToken: "${T}" },
        /the `auth.idp…`\/`idToken` keys are for/,
      ],
      [
        { grantType: JWT, clientId: "w", assertion: "${T}", callbackPort: 1 },
        /`auth.callbackPort` is for signing in in a browser, which a "urn:ietf:params:oauth:grant-type:jwt-bearer" client never does/,
      ],
    ];
    for (const [auth, expected] of cases) {
      const errors = errorsOf(auth);
      assert.ok(
        errors.some((e) => expected.test(e)),
        `${JSON.stringify(auth)} → ${JSON.stringify(errors)}`,
      );
    }
  });

  test("a file setting that is no string is said to be wrong once, not once more where its path is checked", () => {
    const JWT = "urn:ietf:params:oauth:grant-type:jwt-bearer";
    const idp = { idpUrl: "https://idp.example.com", idpClientId: "c" };
    for (const [key, auth] of [
      ["assertionFile", { grantType: JWT, clientId: "w", assertionFile: 5 }],
      ["idTokenFile", { grantType: JWT, clientId: "w", ...idp, idTokenFile: "" }],
    ] as const) {
      const said = errorsOf(auth).filter((e) => e === `\`auth.${key}\` must be a non-empty string`);
      assert.equal(said.length, 1, `${JSON.stringify(auth)} → ${JSON.stringify(errorsOf(auth))}`);
    }
  });
});
