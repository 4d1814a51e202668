/**
 * pi 1.x's `oauth` block against the real OAuth test server (test/fixtures/oauth-server.ts): the block read as `auth`,
 * `clientName` sent when registering, `scope` as one string, `callbackUrl` sent as written (with the port put in when
 * it has none) and served on its own path, `clientRegistration` deciding between a Client ID Metadata Document and
 * registering, and `authServerMetadataUrl` used instead of a discovery that leads nowhere.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { BridgeError } from "../src/common/errors.ts";
import { freePort } from "./helpers.ts";
import { oauthBed } from "./oauth-bed.ts";

const DOCUMENT = "https://client.example.com/mcp-bridge/client.json";

describe("pi 1.x's oauth block against a real authorization server", { timeout: 120_000 }, () => {
  const { setup, connect, echo, newAuthDir } = oauthBed("mcp-bridge-pi1x-oauth-", {
    authKey: "oauth",
    entry: { reconnect: false },
  });

  test("`oauth` is read as `auth`: clientName is sent at registration, scope is a space-separated string", async () => {
    const { fixture } = await setup();
    const callbackPort = await freePort();
    const connection = connect(fixture, newAuthDir(), {
      callbackPort,
      clientName: "Claude Code",
      scope: "tools extra",
    });
    await connection.connect();
    assert.equal(await echo(connection, "named"), "named");
    assert.equal(fixture.registrations.length, 1);
    assert.equal(fixture.registrations[0]!.client_name, "Claude Code");
    assert.equal(fixture.authorizations[0]!.get("scope"), "tools extra");
    assert.equal(fixture.authorizations[0]!.get("redirect_uri"), `http://127.0.0.1:${callbackPort}/callback`);
  });

  test("a callbackUrl without a port: callbackPort is put in, its path served; registered and sent as that", async () => {
    const { fixture } = await setup();
    const callbackPort = await freePort();
    const connection = connect(fixture, newAuthDir(), { callbackUrl: "http://127.0.0.1/oauth/back", callbackPort });
    await connection.connect();
    assert.equal(await echo(connection, "back"), "back");
    const sent = fixture.authorizations[0]!.get("redirect_uri");
    assert.equal(sent, `http://127.0.0.1:${callbackPort}/oauth/back`);
    assert.ok((fixture.registrations[0]!.redirect_uris as string[]).includes(sent!));
  });

  test("a callbackUrl with a port is sent exactly as written (localhost stays localhost), the only one registered", async () => {
    const { fixture } = await setup();
    const written = `http://localhost:${await freePort()}/cb`;
    const connection = connect(fixture, newAuthDir(), { callbackUrl: written });
    await connection.connect();
    assert.equal(await echo(connection, "exact"), "exact");
    assert.equal(fixture.authorizations[0]!.get("redirect_uri"), written);
    assert.deepEqual(fixture.registrations[0]!.redirect_uris, [written]);
  });

  test('clientRegistration: "auto" uses a Client ID Metadata Document where the server supports one; "dcr" registers anyway', async () => {
    const { fixture: auto } = await setup({ clientIdDocuments: true });
    const first = connect(auto, newAuthDir(), { callbackPort: await freePort(), clientMetadataUrl: DOCUMENT });
    await first.connect();
    assert.equal(await echo(first, "document"), "document");
    assert.equal(auto.registrations.length, 0, "no registration");
    assert.equal(auto.authorizations[0]!.get("client_id"), DOCUMENT);

    const { fixture: dcr } = await setup({ clientIdDocuments: true });
    const second = connect(dcr, newAuthDir(), {
      callbackPort: await freePort(),
      clientMetadataUrl: DOCUMENT,
      clientRegistration: "dcr",
    });
    await second.connect();
    assert.equal(await echo(second, "registered"), "registered");
    assert.equal(dcr.registrations.length, 1, "registered itself");
    assert.notEqual(dcr.authorizations[0]!.get("client_id"), DOCUMENT);

    // As in pi 1.x, a clientName means registering: a document cannot carry the name.
    const { fixture: named } = await setup({ clientIdDocuments: true });
    const third = connect(named, newAuthDir(), {
      callbackPort: await freePort(),
      clientMetadataUrl: DOCUMENT,
      clientName: "Claude Code",
    });
    await third.connect();
    assert.equal(named.registrations[0]?.client_name, "Claude Code");
  });

  test('clientRegistration "cimd" against a server without document support: a clear error, nothing registered', async () => {
    const { fixture } = await setup();
    const connection = connect(fixture, newAuthDir(), {
      callbackPort: await freePort(),
      clientMetadataUrl: DOCUMENT,
      clientRegistration: "cimd",
    });
    await assert.rejects(connection.connect(), (error: unknown) => {
      assert.ok(error instanceof BridgeError && error.kind === "auth", String(error));
      assert.match(
        error.message,
        /does not support Client ID Metadata Documents, and `clientRegistration` is "cimd"; use "auto" or "dcr"/,
      );
      return true;
    });
    assert.equal(fixture.registrations.length, 0);
    assert.equal(fixture.authorizations.length, 0);
  });

  test("authServerMetadataUrl replaces a discovery that leads nowhere", async () => {
    // The resource names an authorization server on a port nothing listens on.
    const { fixture: lost } = await setup({ advertiseAuthServer: `http://127.0.0.1:${await freePort()}` });
    const without = connect(lost, newAuthDir(), { callbackPort: await freePort() });
    await assert.rejects(without.connect());
    assert.equal(lost.authorizations.length, 0, "discovery alone finds no way to sign in");

    const { fixture } = await setup({ advertiseAuthServer: `http://127.0.0.1:${await freePort()}` });
    const connection = connect(fixture, newAuthDir(), {
      callbackPort: await freePort(),
      authServerMetadataUrl: `${fixture.origin}/custom/openid-configuration`,
    });
    await connection.connect();
    assert.equal(await echo(connection, "configured metadata"), "configured metadata");
    assert.ok(fixture.metadataRequests.includes("/custom/openid-configuration"));
    assert.equal(fixture.authorizations.length, 1);
  });

  test("an authServerMetadataUrl nothing answers at: the error says why the fetch failed, not only that it did", async () => {
    const { fixture } = await setup({ advertiseAuthServer: `http://127.0.0.1:${await freePort()}` });
    const metadataUrl = `http://127.0.0.1:${await freePort()}/.well-known/openid-configuration`;
    const connection = connect(fixture, newAuthDir(), {
      callbackPort: await freePort(),
      authServerMetadataUrl: metadataUrl,
    });
    await assert.rejects(connection.connect(), (error: Error) => {
      assert.match(error.message, /`authServerMetadataUrl` could not be fetched \(fetch failed: .*ECONNREFUSED/);
      return true;
    });
    assert.equal(fixture.authorizations.length, 0);
  });
});

describe("a client secret from a command", { timeout: 60_000 }, () => {
  const { setup, connect, echo } = oauthBed("mcp-bridge-pi1x-secret-", {
    authKey: "oauth",
    entry: { reconnect: false },
  });

  test('`clientSecret: "!…"` sends what the command printed, hidden like any secret', async () => {
    const { fixture, authDir, callbackPort } = await setup({ secretInForm: true });
    const registered = await fetch(`${fixture.origin}/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ redirect_uris: [`http://127.0.0.1:${callbackPort}/callback`], client_name: "by hand" }),
    });
    const clientId = ((await registered.json()) as { client_id: string }).client_id;
    const secret = `printed-secret-${Date.now()}`;
    const connection = connect(
      fixture,
      authDir,
      { clientId, clientSecret: `!printf ${secret}`, callbackPort },
      { trusted: () => true },
    );
    await connection.connect();
    assert.equal(await echo(connection, `the secret is ${secret}`), "the secret is ***");
    const exchange = fixture.tokenRequests.find((form) => form.get("grant_type") === "authorization_code");
    assert.equal(exchange?.get("client_secret"), secret, "the command's output went to the token endpoint");
  });
});
