/**
 * OAuth endpoints a server names must be https (or http on this machine): a real authorization server
 * (test/fixtures/oauth-server.ts) advertising a `javascript:`, `file:` or plain-http endpoint is refused before any
 * registration, token request or browser, with an error naming the endpoint and its scheme, never the full URL.
 */
import assert from "node:assert/strict";
import * as path from "node:path";
import { describe, test } from "node:test";
import { BridgeError } from "../src/common/errors.ts";
import { endpointProblem } from "../src/oauth/endpoint-policy.ts";
import type { SignInHandler } from "../src/oauth/provider.ts";
import { automaticSignIn } from "../src/oauth/sign-in.ts";
import { AuthStore } from "../src/oauth/storage.ts";
import { startOAuthServer } from "./fixtures/oauth-server.ts";
import { connectionFor } from "./helpers.ts";
import { oauthBed } from "./oauth-bed.ts";

describe("OAuth endpoint schemes", { timeout: 120_000 }, () => {
  const { tmp, fixtures, connections } = oauthBed("mcp-bridge-oauth-endpoints-");

  /** Connects through a fixture advertising `advertise`; returns the error, what the browser hook saw, and the fixture. */
  async function tryConnect(advertise: Record<string, string>) {
    const fixture = await startOAuthServer({ advertise });
    fixtures.push(fixture);
    const opened: string[] = [];
    const browser: SignInHandler = ({ url }) => void opened.push(url.href);
    const connection = connectionFor(
      "hostile",
      { url: fixture.url, auth: {}, reconnect: { maxAttempts: 0 } },
      {
        authStore: new AuthStore(path.join(tmp.dir, `auth-${fixtures.length}`)),
        signIn: () => browser,
        signInTimeoutMs: 5000,
      },
    );
    connections.push(connection);
    const error = await connection.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    return { error, opened, fixture };
  }

  for (const [field, url, scheme] of [
    ["authorization_endpoint", "javascript:alert(document.cookie)//", "the `javascript:` scheme"],
    ["authorization_endpoint", "file:///etc/passwd", "the `file:` scheme"],
    ["token_endpoint", "http://198.51.100.7/token?secret=zz-NOT-SHOWN", "plain http to 198.51.100.7"],
    ["registration_endpoint", "ftp://198.51.100.7/register", "the `ftp:` scheme"],
  ] as const) {
    test(`a ${field} of ${url.split(":")[0]}: is refused before a browser opens or anything is sent to it`, async () => {
      const { error, opened, fixture } = await tryConnect({ [field]: url });
      assert.ok(error instanceof BridgeError, String(error));
      if (url.startsWith("javascript:")) {
        // The SDK's metadata schema refuses javascript:, data: and vbscript: itself, before the bridge sees them.
        assert.match(error.message, new RegExp(`${field}: URL cannot use javascript:`));
      } else {
        assert.equal(error.kind, "auth");
        assert.ok(error.message.includes(`OAuth ${field} uses ${scheme}`), error.message);
      }
      assert.ok(!error.message.includes(url), "the refused URL itself is not quoted");
      assert.deepEqual(opened, [], "no browser was sent anywhere");
      assert.equal(fixture.registrations.length, 0, "no client was registered");
      assert.equal(fixture.tokenRequests.length, 0, "no token was requested");
    });
  }

  test("endpoints written in the config are held to the same rule", async () => {
    const fixture = await startOAuthServer();
    fixtures.push(fixture);
    const opened: string[] = [];
    const connection = connectionFor(
      "configured",
      {
        url: fixture.url,
        auth: { clientId: "c", authorizationUrl: `${fixture.origin}/authorize`, tokenUrl: "http://198.51.100.7/token" },
        reconnect: { maxAttempts: 0 },
      },
      {
        authStore: new AuthStore(path.join(tmp.dir, "auth-configured")),
        signIn:
          () =>
          ({ url }) =>
            void opened.push(url.href),
        signInTimeoutMs: 5000,
      },
    );
    connections.push(connection);
    await assert.rejects(connection.connect(), (error: unknown) => {
      assert.ok(error instanceof BridgeError && error.kind === "auth", String(error));
      assert.match(error.message, /OAuth token_endpoint uses plain http to 198\.51\.100\.7/);
      return true;
    });
    assert.deepEqual(opened, []);
    assert.equal(fixture.tokenRequests.length, 0);
  });

  test("https and loopback http endpoints are used: the same fixture signs in", async () => {
    const fixture = await startOAuthServer();
    fixtures.push(fixture);
    const connection = connectionFor(
      "fine",
      { url: fixture.url, auth: {} },
      {
        authStore: new AuthStore(path.join(tmp.dir, "auth-fine")),
        signIn: () => automaticSignIn(),
        signInTimeoutMs: 5000,
      },
    );
    connections.push(connection);
    await connection.connect();
    assert.equal(connection.status, "connected");
  });

  test("the policy: https anywhere, http only on loopback, nothing else", () => {
    for (const ok of [
      "https://auth.example.com/a",
      "http://127.0.0.1:8080/cb",
      "http://127.8.9.10/x",
      "http://[::1]:3000/",
      "http://localhost/x",
      "http://LOCALHOST/x",
    ]) {
      assert.equal(endpointProblem("x", ok), undefined, ok);
    }
    for (const bad of [
      "http://auth.example.com/a",
      "http://127.0.0.1.evil.example/",
      "http://localhost.evil.example/",
      "javascript:alert(1)",
      "file:///etc/passwd",
      "data:text/html,hi",
      "vbscript:x",
      "ws://127.0.0.1/",
      "not a url",
    ]) {
      assert.ok(endpointProblem("x", bad), bad);
    }
  });
});
