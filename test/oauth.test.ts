/**
 * OAuth against a real authorization server started by the tests (test/fixtures/oauth-server.ts): first sign-in
 * through the loopback callback server, tokens kept 0600 and reused, refresh ahead of expiry and after a 401 (one
 * refresh for concurrent calls), a revoked refresh token leading to a new sign-in, a taken callback port, a forged
 * state, sign-out, a server that moved to another authorization server (a second sign-in, and no third), a connect
 * stopped during a sign-in (its callback server stops), and no token text in the log or in any message.
 */
import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import { createServer } from "node:http";
import * as path from "node:path";
import { describe, test } from "node:test";
import { BridgeError, errorMessage } from "../src/common/errors.ts";
import type { SignInHandler } from "../src/oauth/provider.ts";
import { AuthStore } from "../src/oauth/storage.ts";
import { automaticSignIn } from "../src/oauth/sign-in.ts";
import { startStreamableHttp } from "./fixtures/http-servers.ts";
import type { OAuthFixtureOptions } from "./fixtures/oauth-server.ts";
import { connectFailure, connectionFor } from "./helpers.ts";
import { oauthBed } from "./oauth-bed.ts";

describe("OAuth against a real authorization server", { timeout: 120_000 }, () => {
  const bed = oauthBed("mcp-bridge-oauth-", { signInTimeoutMs: 5000 });
  const { setup, connect, echo, fixtures, events, messages, logger } = bed;

  test("first sign-in through the callback server; tokens 0600 in a 0700 directory; a restart reuses them", async () => {
    const { fixture, authDir, callbackPort } = await setup();
    const first = connect(fixture, authDir, { callbackPort });
    await first.connect();
    assert.equal(await echo(first, "signed in"), "signed in");
    assert.equal(fixture.registrations.length, 1, "registered itself (RFC 7591)");
    const { client_name, grant_types, response_types, token_endpoint_auth_method } = fixture.registrations[0]!;
    assert.deepEqual(
      { client_name, grant_types, response_types, token_endpoint_auth_method },
      {
        client_name: "pi (mcp-bridge)",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      },
      "the client metadata RFC 7591 lists, as a public client with PKCE",
    );
    const authorize = fixture.authorizations[0]!;
    assert.equal(authorize.get("code_challenge_method"), "S256");
    assert.equal(authorize.get("redirect_uri"), `http://127.0.0.1:${callbackPort}/callback`);
    assert.equal(authorize.get("resource"), fixture.url, "RFC 8707 resource");
    assert.equal(authorize.get("scope"), "tools", "scopes_supported, as nothing narrower was asked for");
    assert.ok((authorize.get("state") ?? "").length >= 32, "a random state");
    const channels = events.map((e) => e.channel).filter((c) => c.startsWith("mcp.auth"));
    assert.deepEqual(channels, ["mcp.auth.started", "mcp.auth.completed"]);

    const tokensFile = path.join(authDir, "secure.json");
    assert.equal(statSync(tokensFile).mode & 0o777, 0o600);
    assert.equal(statSync(path.join(authDir, "secure-client.json")).mode & 0o777, 0o600);
    assert.equal(statSync(authDir).mode & 0o777, 0o700);
    const stored = JSON.parse(readFileSync(tokensFile, "utf8")) as Record<string, unknown>;
    assert.equal(stored.serverUrl, fixture.url);
    assert.equal(typeof stored.accessToken, "string");
    assert.equal(typeof stored.refreshToken, "string");
    assert.equal(typeof stored.expiresAt, "number");
    await first.close();

    // A new session: nobody could sign in, and nobody needs to.
    const second = connect(fixture, authDir, { callbackPort }, { signIn: null });
    await second.connect();
    assert.equal(await echo(second, "again"), "again");
    assert.equal(fixture.authorizations.length, 1, "no second sign-in");
    await second.close();
  });

  test("a server that registers the client as confidential decides: its client_secret is stored 0600 and sent as it says", async () => {
    const { fixture, authDir, callbackPort } = await setup({ confidential: "client_secret_post" });
    const connection = connect(fixture, authDir, { callbackPort });
    await connection.connect();
    assert.equal(await echo(connection, "confidential"), "confidential");
    assert.equal(fixture.registrations[0]!.token_endpoint_auth_method, "none", "asked to be a public client");
    const exchange = fixture.tokenRequests.find((form) => form.get("grant_type") === "authorization_code");
    const secret = exchange?.get("client_secret");
    assert.ok(secret && fixture.issued.includes(secret), "the secret the server issued went in the form, as answered");
    const clientFile = path.join(authDir, "secure-client.json");
    assert.equal(statSync(clientFile).mode & 0o777, 0o600);
    assert.ok(readFileSync(clientFile, "utf8").includes(secret), "kept for the next sign-in and refresh");
  });

  test("an access token close to expiry is refreshed before use; one the server stopped accepting is refreshed after its 401", async () => {
    const { fixture, authDir, callbackPort } = await setup({ accessTtl: 60 });
    const connection = connect(fixture, authDir, { callbackPort });
    await connection.connect();
    const refreshes = () => fixture.tokenRequests.filter((p) => p.get("grant_type") === "refresh_token").length;
    // 60 s left is inside the 5-minute margin: the next request refreshes first, without a 401.
    const unauthorizedBefore = fixture.unauthorized;
    assert.equal(await echo(connection, "early"), "early");
    assert.ok(refreshes() >= 1, "refreshed ahead of expiry");
    assert.equal(fixture.unauthorized, unauthorizedBefore, "no request was refused");
    assert.equal(fixture.authorizations.length, 1);
  });

  test("tokens that live less than the refresh margin (5 minutes) are not refreshed before every call", async () => {
    const { fixture, authDir, callbackPort } = await setup({ accessTtl: 120 });
    const connection = connect(fixture, authDir, { callbackPort });
    await connection.connect();
    const refreshes = () => fixture.tokenRequests.filter((p) => p.get("grant_type") === "refresh_token").length;
    for (const text of ["one", "two", "three", "four"]) assert.equal(await echo(connection, text), text);
    assert.ok(refreshes() <= 1, `${refreshes()} refreshes for 4 calls within a token's 2 minutes`);
  });

  test("a refresh ahead of expiry that the token endpoint does not answer is not waited for again at every call", async () => {
    const { fixture, authDir, callbackPort } = await setup({ accessTtl: 120, refreshHangs: true });
    const connection = connect(fixture, authDir, { callbackPort }, { tokenTimeoutMs: 500 });
    await connection.connect();
    // The token still has two minutes: each call goes through with it, but only the first waits on the token endpoint.
    for (const text of ["one", "two", "three"]) assert.equal(await echo(connection, text), text);
    const refreshes = fixture.tokenRequests.filter((p) => p.get("grant_type") === "refresh_token").length;
    assert.equal(refreshes, 1, "one refresh tried, not one per request");
    assert.equal(fixture.authorizations.length, 1, "no new sign-in");
  });

  test('a token answered with `"expires_in": null` (no lifetime given) is not refreshed before every call', async () => {
    const { fixture, authDir, callbackPort } = await setup({ accessTtl: null });
    const connection = connect(fixture, authDir, { callbackPort });
    await connection.connect();
    const refreshes = () => fixture.tokenRequests.filter((p) => p.get("grant_type") === "refresh_token").length;
    for (const text of ["one", "two", "three"]) assert.equal(await echo(connection, text), text);
    assert.equal(refreshes(), 0, "refreshed though nothing said it expires");
  });

  test('a token answer with `null` for the fields it has no value for (`"scope": null`): signs in and refreshes', async () => {
    const { fixture, authDir, callbackPort } = await setup({ nullFields: true, accessTtl: 60 });
    const connection = connect(fixture, authDir, { callbackPort });
    await connection.connect();
    assert.equal(await echo(connection, "with nulls"), "with nulls");
    const refreshes = fixture.tokenRequests.filter((p) => p.get("grant_type") === "refresh_token").length;
    assert.ok(refreshes >= 1, "refreshed ahead of expiry, with nulls in that answer too");
  });

  test("concurrent calls after the server expired the token share one refresh", async () => {
    const { fixture, authDir, callbackPort } = await setup();
    const connection = connect(fixture, authDir, { callbackPort });
    await connection.connect();
    fixture.expireAccessTokens();
    const results = await Promise.all([1, 2, 3, 4, 5].map((i) => echo(connection, `call ${i}`)));
    assert.deepEqual(results, ["call 1", "call 2", "call 3", "call 4", "call 5"]);
    const refreshes = fixture.tokenRequests.filter((p) => p.get("grant_type") === "refresh_token").length;
    assert.equal(refreshes, 1, "one refresh (the server rotates refresh tokens: a second would have failed)");
    assert.equal(fixture.authorizations.length, 1, "and no new sign-in");
  });

  test("an authorization server that takes a refresh and never answers: the call signs in anew, not waits out its timeout", async () => {
    const options: OAuthFixtureOptions = {};
    const { fixture, authDir, callbackPort } = await setup(options);
    const entry = { requestTimeout: 20_000 };
    const connection = connect(fixture, authDir, { callbackPort }, { entry, tokenTimeoutMs: 1000 });
    await connection.connect();
    options.refreshHangs = true;
    fixture.expireAccessTokens();
    // The refresh is given up after the token wait's 1 s, and the automatic sign-in answers at once.
    assert.equal(await echo(connection, "after the hang"), "after the hang");
    assert.equal(fixture.authorizations.length, 2, "signed in anew");
  });

  test("an authorization server that takes the sign-in's code and never answers: the sign-in fails in time, saying so", async () => {
    const { fixture, authDir, callbackPort } = await setup({ exchangeHangs: true });
    const connection = connect(fixture, authDir, { callbackPort }, { tokenTimeoutMs: 1000 });
    const hung = new Promise((resolve) => setTimeout(resolve, 20_000, "still waiting after 20 s").unref());
    const outcome = await Promise.race([connection.signIn(automaticSignIn()).then(() => "signed in", String), hung]);
    assert.match(String(outcome), /Signing in to MCP server 'secure' failed: .*did not answer within 1 s/);
  });

  for (const [hangs, what, path] of [
    ["metadataHangs", "whose metadata never comes", "\\/\\.well-known\\/\\S+"],
    ["registrationHangs", "that takes a registration and never answers", "\\/register"],
  ] as const)
    test(`an authorization server ${what}: the connect fails in the token wait, saying so`, async () => {
      const { fixture, authDir, callbackPort } = await setup({ [hangs]: true });
      const options = { entry: { timeout: 20_000 }, tokenTimeoutMs: 1000 };
      const connection = connect(fixture, authDir, { callbackPort }, options);
      const started = Date.now();
      const { message } = await connectFailure(connection);
      // Within the token wait, long before the connect's own 20 s.
      assert.ok(Date.now() - started < 15_000, `failed after ${Date.now() - started} ms: ${message}`);
      const said = new RegExp(
        `failed to connect: the OAuth request to http:\\/\\/\\S+${path} got no answer within 1 s`,
      );
      assert.match(message, said);
    });

  test("a user who takes longer in the browser than the token endpoint may take to answer still signs in", async () => {
    const { fixture, authDir, callbackPort } = await setup();
    // 1.5 s on the page: longer than the 1 s the exchange of the code may take here, within the sign-in's 5 s.
    const slowUser: SignInHandler = (request) =>
      void setTimeout(() => automaticSignIn()(request)?.catch(() => {}), 1500);
    const connection = connect(fixture, authDir, { callbackPort }, { signIn: slowUser, tokenTimeoutMs: 1000 });
    await connection.connect();
    assert.equal(await echo(connection, "took my time"), "took my time");
  });

  test("two pi processes sharing the tokens refresh once: the second uses what the first stored", async () => {
    const { fixture, authDir, callbackPort } = await setup();
    const first = connect(fixture, authDir, { callbackPort });
    await first.connect();
    // A second "process": its own connection, provider and store object over the same files, nobody to sign in.
    const second = connect(fixture, authDir, { callbackPort }, { signIn: null });
    await second.connect();
    fixture.expireAccessTokens();
    const results = await Promise.all([echo(first, "one"), echo(second, "two")]);
    assert.deepEqual(results, ["one", "two"]);
    const refreshes = fixture.tokenRequests.filter((p) => p.get("grant_type") === "refresh_token").length;
    assert.equal(refreshes, 1, "the rotating refresh token was used once");
    assert.equal(fixture.authorizations.length, 1, "no one had to sign in again");
  });

  test("a revoked refresh token leads to a new sign-in, and the call goes through", async () => {
    const { fixture, authDir, callbackPort } = await setup();
    const connection = connect(fixture, authDir, { callbackPort });
    await connection.connect();
    fixture.revokeAll();
    assert.equal(await echo(connection, "after revocation"), "after revocation");
    assert.equal(fixture.authorizations.length, 2, "signed in again");
  });

  test("concurrent calls after the refresh token was revoked share one new sign-in", async () => {
    const { fixture, authDir, callbackPort } = await setup();
    const connection = connect(fixture, authDir, { callbackPort });
    await connection.connect();
    fixture.revokeAll();
    const results = await Promise.all([1, 2, 3].map((i) => echo(connection, `call ${i}`)));
    assert.deepEqual(results, ["call 1", "call 2", "call 3"]);
    assert.equal(fixture.authorizations.length, 2, "one new sign-in");
  });

  test("/mcp auth while a call waits on a sign-in page the user closed: its own page is shown, not the old one waited for", async () => {
    const { fixture, authDir, callbackPort } = await setup();
    const signIn = automaticSignIn();
    let pages = 0;
    let shown = () => {};
    const closedTab = new Promise<void>((resolve) => (shown = resolve));
    // The first page is signed in at once; the next one the user closes without signing in.
    const handler: SignInHandler = (request) => (++pages === 1 ? signIn(request) : shown());
    const connection = connect(fixture, authDir, { callbackPort }, { signIn: handler, signInTimeoutMs: 20_000 });
    await connection.connect();
    fixture.revokeAll();
    const call = echo(connection, "waiting").catch((error: Error) => error.message);
    await closedTab;
    let asked = 0;
    await connection.signIn((request) => (asked++, signIn(request)));
    assert.equal(asked, 1, "/mcp auth showed its own page");
    // The call that waited on the old page is told it was given up, at once rather than at its timeout.
    assert.match(await call, /The sign-in was cancelled/);
    assert.equal(await echo(connection, "after"), "after");
  });

  test("the callback port in use: the next port takes the redirect", async () => {
    const { fixture, authDir, callbackPort } = await setup();
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(callbackPort, "127.0.0.1", resolve));
    try {
      const connection = connect(fixture, authDir, { callbackPort });
      await connection.connect();
      // The next free port: callbackPort + 1 unless something else on this machine took that one too.
      const used = new URL(fixture.authorizations[0]!.get("redirect_uri")!);
      const port = Number(used.port);
      assert.ok(
        port > callbackPort && port <= callbackPort + 5,
        `port ${port} is one of the next five after ${callbackPort}`,
      );
      const redirectUris = fixture.registrations[0]!.redirect_uris as string[];
      assert.equal(redirectUris.length, 6);
      assert.ok(redirectUris.includes(used.href), "every port it may use is registered");
      assert.equal(await echo(connection, "next port"), "next port");
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  test("a redirect with a forged state is refused: no tokens, a clear error", async () => {
    const { fixture, authDir, callbackPort } = await setup({ tamperState: true });
    const connection = connect(fixture, authDir, { callbackPort }, { signInTimeoutMs: 1500 });
    await assert.rejects(connection.connect(), (error: unknown) => {
      assert.ok(error instanceof BridgeError && error.kind === "auth");
      assert.match(error.message, /Signing in to MCP server 'secure' failed: .*No sign-in redirect arrived/);
      assert.match(error.message, /within 1500 ms\. Run \/mcp auth secure to try again\.$/, "one full stop");
      messages.push(error.message);
      return true;
    });
    assert.equal(fixture.tokenRequests.length, 0, "the forged code was never exchanged");
    assert.equal(new AuthStore(authDir).tokens("secure", fixture.url), undefined);
    assert.ok(events.some((e) => e.channel === "mcp.auth.failed"));
  });

  test("with no one to sign in, the error says how to; /mcp logout forgets everything", async () => {
    const { fixture, authDir, callbackPort } = await setup();
    const headless = connect(fixture, authDir, { callbackPort }, { signIn: null });
    await assert.rejects(headless.connect(), (error: unknown) => {
      assert.ok(error instanceof BridgeError && error.kind === "auth");
      assert.match(error.message, /MCP server 'secure' needs you to sign in \(OAuth\)\. Run \/mcp auth secure/);
      return true;
    });
    assert.equal(headless.state.kind, "needsSignIn", "not retried: retrying cannot sign in");
    await headless.close();
    // A logout with nothing stored (a client from the config) signs nobody out: it still waits for a sign-in.
    const waiting = connect(fixture, bed.newAuthDir(), { callbackPort, clientId: "by-hand" }, { signIn: null });
    await assert.rejects(waiting.connect(), /needs you to sign in/);
    assert.equal((await waiting.logout()).removed, false);
    assert.equal(waiting.state.kind, "needsSignIn", "not 'Signed out of …'");
    await waiting.close();

    const connection = connect(fixture, authDir, { callbackPort });
    await connection.signIn(automaticSignIn());
    assert.equal(await echo(connection, "in"), "in");
    assert.equal((await connection.logout()).removed, true);
    assert.equal(new AuthStore(authDir).tokens("secure", fixture.url), undefined);
    assert.equal(new AuthStore(authDir).client("secure", fixture.url), undefined);
    await assert.rejects(echo(connection, "out"), /Signed out of MCP server 'secure'/);
  });

  test("/mcp logout and /mcp auth of a remote server that never used OAuth: it stays connected, and is not signed in", async () => {
    const server = await startStreamableHttp();
    const connection = connectionFor("plain", { url: server.url }, { authStore: new AuthStore(bed.newAuthDir()) });
    try {
      await connection.connect();
      assert.equal((await connection.logout()).removed, false);
      assert.equal(connection.state.kind, "live", "not cut off by a sign-out of nothing");
      assert.equal(await echo(connection, "still"), "still");
      // Nor is `/mcp auth` said to have signed in to it: it asked for no sign-in.
      await assert.rejects(
        connection.signIn(automaticSignIn()),
        /MCP server 'plain' did not ask for a sign-in: it connected without one/,
      );
      assert.equal(await echo(connection, "again"), "again");
    } finally {
      await connection.close();
      await server.close();
    }
  });

  test("an authServerMetadataUrl on this machine with its port in a ${VAR} (a local Keycloak's) is taken, and used", async () => {
    const { fixture, authDir, callbackPort } = await setup();
    const env = { ...process.env, AUTH_PORT: new URL(fixture.origin).port };
    const authServerMetadataUrl = "http://127.0.0.1:${AUTH_PORT}/custom/openid-configuration";
    const connection = connect(fixture, authDir, { callbackPort, authServerMetadataUrl }, { env });
    await connection.connect();
    assert.equal(await echo(connection, "configured"), "configured");
    assert.ok(fixture.metadataRequests.includes("/custom/openid-configuration"), "the document named was read");
  });

  test("endpoints and a pre-registered client from the config replace discovery and registration", async () => {
    const { fixture, authDir, callbackPort } = await setup();
    // Register a client by hand, as an administrator would.
    const registered = await fetch(`${fixture.origin}/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ redirect_uris: [`http://127.0.0.1:${callbackPort}/callback`], client_name: "by hand" }),
    });
    const clientId = ((await registered.json()) as { client_id: string }).client_id;
    const registrations = fixture.registrations.length;
    const secret = "client-secret-value-for-redaction";
    process.env.OAUTH_TEST_CLIENT_SECRET = secret;
    const connection = connect(fixture, authDir, {
      callbackPort,
      clientId,
      clientSecret: "${OAUTH_TEST_CLIENT_SECRET}",
      authorizationUrl: `${fixture.origin}/authorize`,
      tokenUrl: `${fixture.origin}/token`,
      scopes: ["tools", "extra"],
    });
    await connection.connect();
    assert.equal(connection.redact(`oops: ${secret}`), "oops: ***", "the client secret from ${VAR} is redacted");
    await connection.reconnect();
    assert.equal(connection.redact(secret), "***", "also after a reconnect");
    assert.equal(await echo(connection, "configured"), "configured");
    assert.equal(fixture.registrations.length, registrations, "no registration: the configured client is used");
    const authorize = fixture.authorizations.at(-1)!;
    assert.equal(authorize.get("client_id"), clientId);
    assert.equal(authorize.get("scope"), "tools extra", "scopes from the config come first");
    assert.equal(new AuthStore(authDir).client("secure", fixture.url), undefined, "a configured client is not stored");
  });

  test("endpoints from the config: an authorization server whose issuer has a path, and that sends it as `iss`, signs in", async () => {
    // The issuer is not the endpoints' origin, and nothing here says what it is: there is nothing to check `iss` against.
    const { fixture, authDir, callbackPort } = await setup({ iss: "https://auth.example/realms/pi" });
    const registered = await fetch(`${fixture.origin}/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ redirect_uris: [`http://127.0.0.1:${callbackPort}/callback`] }),
    });
    const { client_id: clientId } = (await registered.json()) as { client_id: string };
    const endpoints = { authorizationUrl: `${fixture.origin}/authorize`, tokenUrl: `${fixture.origin}/token` };
    const connection = connect(fixture, authDir, { callbackPort, clientId, ...endpoints });
    await connection.connect();
    assert.equal(await echo(connection, "realm"), "realm");
  });

  test("endpoints from the config without a clientId: the error asks for one, not blames the server's registration", async () => {
    const { fixture, authDir, callbackPort } = await setup();
    const endpoints = { authorizationUrl: `${fixture.origin}/authorize`, tokenUrl: `${fixture.origin}/token` };
    const connection = connect(fixture, authDir, { callbackPort, ...endpoints });
    await assert.rejects(connection.connect(), /no registration endpoint to register a client at: set `clientId`/);
    assert.equal(fixture.authorizations.length, 0);
  });

  test("an authorization server without a registration endpoint: the error says to set `clientId`", async () => {
    const { fixture, authDir, callbackPort } = await setup({
      advertise: { registration_endpoint: undefined } as never,
    });
    const connection = connect(fixture, authDir, { callbackPort });
    await assert.rejects(connection.connect(), /does not support dynamic client registration: set `clientId`/);
    assert.equal(fixture.authorizations.length, 0);
  });

  test("a 403 insufficient_scope asks for the larger scope, though `scopes` are configured", async () => {
    const { fixture, authDir, callbackPort } = await setup({ requiredScope: "admin" });
    const connection = connect(fixture, authDir, { callbackPort, scopes: ["tools"] });
    await connection.connect();
    assert.equal(await echo(connection, "more"), "more");
    const asked = fixture.authorizations.map((query) => query.get("scope"));
    assert.equal(asked[0], "tools", "the configured scopes first");
    assert.deepEqual(asked.at(-1)?.split(" ").sort(), ["admin", "tools"], "then the larger scope");
  });

  test("with `scopes` configured, a step-up in a later session asks for the scopes the token had too", async () => {
    const options: OAuthFixtureOptions = { requiredScope: "admin" };
    const { fixture, authDir, callbackPort } = await setup(options);
    const first = connect(fixture, authDir, { callbackPort, scopes: ["tools"] });
    await first.connect();
    assert.equal(await echo(first, "admin"), "admin");
    await first.close();
    // pi again, and the server now wants another scope as well.
    options.requiredScope = "write";
    const second = connect(fixture, authDir, { callbackPort, scopes: ["tools"] });
    await second.connect();
    assert.deepEqual(fixture.authorizations.at(-1)?.get("scope")?.split(" ").sort(), ["admin", "tools", "write"]);
  });

  test("a refresh answered without `scope` keeps the scope granted before: a step-up after it asks for both", async () => {
    const options: OAuthFixtureOptions = { accessTtl: 60 };
    const { fixture, authDir, callbackPort } = await setup(options);
    const connection = connect(fixture, authDir, { callbackPort });
    await connection.connect();
    assert.equal(await echo(connection, "refreshed"), "refreshed");
    assert.ok(
      fixture.tokenRequests.some((form) => form.get("grant_type") === "refresh_token"),
      "refreshed",
    );
    const stored = JSON.parse(readFileSync(path.join(authDir, "secure.json"), "utf8")) as { scopes?: string[] };
    assert.deepEqual(stored.scopes, ["tools"], "the same scope as before (RFC 6749 section 5.1)");
    options.requiredScope = "admin";
    assert.equal(await echo(connection, "more"), "more");
    assert.deepEqual(fixture.authorizations.at(-1)?.get("scope")?.split(" ").sort(), ["admin", "tools"]);
  });

  test("tokens answered without `scope` have the scope asked for: a step-up after them asks for both", async () => {
    const options: OAuthFixtureOptions = { omitScope: true };
    const { fixture, authDir, callbackPort } = await setup(options);
    const connection = connect(fixture, authDir, { callbackPort });
    await connection.connect();
    options.requiredScope = "admin";
    assert.equal(await echo(connection, "more"), "more");
    assert.deepEqual(fixture.authorizations.at(-1)?.get("scope")?.split(" ").sort(), ["admin", "tools"]);
  });

  test("a server that needed a sign-in nobody could do at startup signs in at its first call once someone can", async () => {
    const { fixture, authDir, callbackPort } = await setup();
    let handler: SignInHandler | undefined;
    const connection = connect(fixture, authDir, { callbackPort }, { signInNow: () => handler });
    await assert.rejects(connection.connect(), /needs you to sign in/);
    handler = automaticSignIn(); // the session started, with a UI
    // Its tools are not known yet (a lazy server's would be cached): call by the MCP name.
    const result = await connection.callTool("echo", { text: "later" });
    assert.deepEqual(result.content, [{ type: "text", text: "later" }]);
    assert.equal(fixture.authorizations.length, 1);
  });

  test("the tokens and the authorization code it handled are hidden even in what the server sends back", async () => {
    const { fixture, authDir, callbackPort } = await setup();
    const connection = connect(fixture, authDir, { callbackPort });
    await connection.connect();
    // A server that echoes a credential back (in a result, an error) must not show it to the model or the user.
    const credentials = fixture.issued.filter((value) => !value.startsWith("client-"));
    assert.equal(credentials.length, 3, "a code, an access token and a refresh token");
    for (const credential of credentials) {
      assert.equal(await echo(connection, `got ${credential}`), "got ***");
      assert.equal(connection.redact(`oops ${credential}`), "oops ***");
    }
  });

  test("the PKCE verifier of its sign-in is hidden in what the server sends back", async () => {
    const { fixture, authDir, callbackPort } = await setup();
    const connection = connect(fixture, authDir, { callbackPort });
    await connection.connect();
    const exchange = fixture.tokenRequests.find((form) => form.get("grant_type") === "authorization_code");
    const verifier = exchange?.get("code_verifier");
    assert.ok(verifier, "the code was exchanged with a verifier");
    assert.equal(await echo(connection, `got ${verifier}`), "got ***");
  });

  test("a token endpoint that quotes the code exchange back: the error /mcp auth shows has no client secret or code", async () => {
    const { fixture, authDir, callbackPort } = await setup({ confidential: "client_secret_post", echoForm: true });
    const connection = connect(fixture, authDir, { callbackPort });
    const error = await connection.signIn(automaticSignIn()).then(
      () => assert.fail("the exchange is refused"),
      (e: unknown) => e,
    );
    const form = fixture.tokenRequests.find((p) => p.get("grant_type") === "authorization_code")!;
    const message = errorMessage(error);
    assert.match(
      message,
      /cannot use grant_type=authorization_code&code=\*\*\*/,
      "the server's words are quoted, redacted",
    );
    for (const name of ["client_secret", "code"])
      assert.ok(!message.includes(form.get(name)!), `the ${name} is not shown: ${message}`);
  });

  test("a token endpoint that quotes the code exchange back form-encoded: a verifier with a ~ (%7E there) is hidden too", async () => {
    const { fixture, authDir, callbackPort } = await setup({ echoForm: true });
    const verifiers = () =>
      fixture.tokenRequests.map((form) => form.get("code_verifier")!).filter((verifier) => verifier.includes("~"));
    // A verifier has a `~` about every other time: sign in until one has.
    for (let i = 0; i < 30 && verifiers().length === 0; i++) {
      const connection = connect(fixture, authDir, { callbackPort });
      await connection.connect().then(
        () => assert.fail("the exchange is refused"),
        () => connection.close(),
      );
      const encoded = new URLSearchParams({ v: verifiers()[0] ?? "" }).toString().slice(2);
      if (verifiers().length) assert.ok(!(connection.lastError ?? "").includes(encoded), connection.lastError);
    }
    assert.ok(verifiers().length > 0, "a verifier with a ~ was made");
  });

  test("a server that moved its users to another authorization server: one connect signs in there too and is live", async () => {
    const { fixture: next } = await setup();
    const moves = [next];
    const { fixture, authDir, callbackPort } = await setup({ movesTo: async () => moves.shift() });
    const connection = connect(fixture, authDir, { callbackPort });
    await connection.connect();
    assert.equal(connection.state.kind, "live");
    assert.equal(await echo(connection, "moved"), "moved");
    const exchanges = (f: typeof fixture) =>
      f.tokenRequests.filter((p) => p.get("grant_type") === "authorization_code").length;
    assert.deepEqual([exchanges(fixture), exchanges(next)], [1, 1], "signed in at the first, then at the new one");
    assert.equal(next.registrations.length, 1, "registered itself at the new one");
    const issuers = new Set(fixture.presented.filter((p) => p.ok).map((p) => p.issuer));
    assert.deepEqual([...issuers], [next.origin], "the server took tokens from the new one only");
  });

  test("moved to an authorization server that issues no refresh token: the old one's refresh token is not sent there", async () => {
    const { fixture: next } = await setup({ noRefreshTokens: true, accessTtl: 60 });
    const moves = [next];
    const { fixture, authDir, callbackPort } = await setup({ movesTo: async () => moves.shift() });
    const connection = connect(fixture, authDir, { callbackPort });
    await connection.connect();
    assert.equal(await echo(connection, "moved"), "moved");
    assert.equal(await echo(connection, "again"), "again");
    const sent = next.tokenRequests.map((p) => p.get("refresh_token")).filter((t) => t !== null);
    assert.deepEqual(sent, [], "no refresh token of the first authorization server went to the new one");
  });

  test("a server that moves on after every sign-in: the connect gives up after two, saying to sign in; a sign-in after it works", async () => {
    const first = fixtures.length;
    let moving = true;
    const movesTo = async () => (moving ? (await setup()).fixture : undefined);
    const { fixture, authDir, callbackPort } = await setup({ movesTo });
    const counted = (calls: { n: number }): SignInHandler => {
      const signIn = automaticSignIn();
      return (request) => {
        calls.n++;
        return signIn(request);
      };
    };
    const calls = { n: 0 };
    const connection = connect(fixture, authDir, { callbackPort }, { signIn: counted(calls) });
    const outcome = await connection.connect().then(
      () => undefined,
      (error: unknown) => error,
    );
    const moved = fixtures.slice(first);
    const exchanges = moved
      .flatMap((f) => f.tokenRequests)
      .filter((p) => p.get("grant_type") === "authorization_code").length;
    assert.equal(exchanges, 2, "two sign-ins, and no more");
    assert.equal(calls.n, 2, "the user was sent to sign in twice, not a third time");
    assert.equal(moved.length, 3, "it moved twice");
    assert.equal(moved[2]!.authorizations.length, 0, "no page of the third authorization server was opened");
    assert.ok(outcome instanceof BridgeError && outcome.kind === "auth", `failed: ${String(outcome)}`);
    messages.push(outcome.message);
    assert.match(outcome.message, /MCP server 'secure' needs you to sign in \(OAuth\)/);
    assert.equal(connection.state.kind, "needsSignIn", "not retried: retrying cannot sign in");
    assert.equal(fixture.presented.filter((p) => p.ok).length, 0);

    // The server stops moving; `/mcp auth` sends the user to sign in afresh (nothing left of the third) and connects.
    moving = false;
    const again = { n: 0 };
    await connection.signIn(counted(again));
    assert.equal(again.n, 1, "the new sign-in's own handler was called");
    assert.equal(calls.n, 2);
    assert.equal(moved[2]!.authorizations.length, 1, "signed in where the server now is");
    assert.equal(await echo(connection, "settled"), "settled");
    assert.ok(fixture.presented.some((p) => p.ok));
    assert.equal(fixture.presented.findLast((p) => p.ok)?.issuer, moved[2]!.origin);
  });

  test("a connect stopped while the user is being sent to sign in leaves no sign-in behind: its callback server stops", async () => {
    const { fixture, authDir, callbackPort } = await setup();
    // The handler is still busy sending the user when `/mcp logout` stops the connect.
    let release = () => {};
    const busy = new Promise<void>((resolve) => (release = resolve));
    let sent = (_url: URL) => {};
    const sending = new Promise<URL>((resolve) => (sent = resolve));
    const slow: SignInHandler = async ({ callback }) => {
      sent(new URL("/callback", callback.redirectUrl));
      await busy;
    };
    const connection = connect(fixture, authDir, { callbackPort }, { signIn: slow });
    const failed = connection.connect().then(
      () => undefined,
      (error: unknown) => error,
    );
    const stale = await sending;
    const loggedOut = connection.logout();
    release();
    await loggedOut;
    const outcome = await failed;
    assert.ok(outcome instanceof Error, "the connect gave up");
    messages.push(outcome.message);
    const listening = await fetch(stale).then(
      async (response) => (await response.body?.cancel(), true),
      () => false,
    );
    assert.equal(listening, false, "its callback server was stopped");
    let called = 0;
    const signIn = automaticSignIn();
    await connection.signIn((request) => (called++, signIn(request)));
    assert.equal(called, 1);
    assert.equal(await echo(connection, "afresh"), "afresh");
  });

  test("no token, code or client id appears in the log file, the events or any message", async () => {
    logger.flush();
    const texts = [readFileSync(logger.path, "utf8"), JSON.stringify(events), messages.join("\n")];
    const issued = fixtures.flatMap((f) => f.issued);
    assert.ok(issued.length > 10);
    for (const secret of issued)
      for (const text of texts) assert.equal(text.includes(secret), false, "an issued secret leaked");
  });
});
