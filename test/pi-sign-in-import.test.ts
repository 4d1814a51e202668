/**
 * Taking over the sign-ins pi 1.x's built-in MCP stored in `<agent dir>/mcp-auth.json`, against the real authorization
 * server of test/fixtures/oauth-server.ts (which binds refresh tokens to their client): pi signs in there as pi does
 * (test/fixtures/pi-auth-file.ts), and a bridge connection with no one to sign in uses that sign-in, refreshes it as
 * pi's client, leaves other URLs and names alone, ignores an unsafe or corrupt file with a warning, never writes pi's
 * file, and does not take a sign-in back after `/mcp logout` or instead of one the user asked for.
 */
import assert from "node:assert/strict";
import { chmodSync, chownSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { describe, test } from "node:test";
import { BridgeError } from "../src/common/errors.ts";
import type { ServerConnection } from "../src/connection/server-connection.ts";
import { automaticSignIn } from "../src/oauth/sign-in.ts";
import { AuthStore } from "../src/oauth/storage.ts";
import type { OAuthFixture } from "./fixtures/oauth-server.ts";
import { piKey, signInAsPi, writePiAuthFile } from "./fixtures/pi-auth-file.ts";
import { oauthBed } from "./oauth-bed.ts";

/** The file's bytes and modification time: pi's file must come out of every test as it went in. */
function snapshot(file: string): { bytes: Buffer; mtimeMs: number; mode: number } {
  const info = statSync(file);
  return { bytes: readFileSync(file), mtimeMs: info.mtimeMs, mode: info.mode };
}

describe("taking over pi 1.x's sign-ins", { timeout: 120_000 }, () => {
  const { setup, connect, echo, fixtures, events, logger, messages } = oauthBed("mcp-bridge-pi-auth-", {
    auth: { callbackPort: 45_200 },
    signIn: null,
    piSignIns: true,
    signInTimeoutMs: 5000,
  });

  async function needsSignIn(connection: ServerConnection): Promise<void> {
    await assert.rejects(connection.connect(), (error: unknown) => {
      assert.ok(error instanceof BridgeError && error.kind === "auth", String(error));
      assert.match(error.message, /needs you to sign in/);
      messages.push(error.message);
      return true;
    });
  }

  const refreshRequests = (fixture: OAuthFixture) =>
    fixture.tokenRequests.filter((p) => p.get("grant_type") === "refresh_token");

  test("a server whose URL has pi's sign-in connects without one; pi's file is not written", async () => {
    const { fixture, piFile, authDir } = await setup();
    const state = await signInAsPi(fixture);
    writePiAuthFile(piFile, { [piKey("secure", fixture.url)]: state });
    const before = snapshot(piFile);
    const connection = connect(fixture, authDir);
    await connection.connect();
    assert.equal(await echo(connection, "taken over"), "taken over");
    assert.equal(fixture.authorizations.length, 1, "only pi's own sign-in");
    assert.equal(fixture.registrations.length, 1, "only pi's registration");
    const store = new AuthStore(authDir);
    assert.equal(
      store.tokens("secure", fixture.url)?.accessToken,
      (state.tokens as { access_token: string }).access_token,
    );
    assert.equal(store.client("secure", fixture.url)?.importedFrom, piFile);
    assert.equal(statSync(store.tokensPath("secure")).mode & 0o777, 0o600, "the copy is the bridge's own 0600 file");
    assert.deepEqual(connection.warnings, []);
    assert.ok(
      events.some(
        (e) => e.channel === "mcp.auth.imported" && e.payload.serverId === "secure" && e.payload.from === piFile,
      ),
    );
    await connection.close();
    assert.deepEqual(snapshot(piFile), before, "pi's file: same bytes, mtime and mode");
  });

  test("pi's entry for another URL, or for another server name at the same URL, is not used", async () => {
    const { fixture, piFile, authDir } = await setup();
    const state = await signInAsPi(fixture);
    const otherUrl = `${fixture.origin}/other/mcp`;
    writePiAuthFile(piFile, {
      [piKey("secure", otherUrl)]: { ...state, serverUrl: otherUrl },
      [piKey("work-account", fixture.url)]: state,
    });
    await needsSignIn(connect(fixture, authDir));
    assert.equal(new AuthStore(authDir).tokens("secure", fixture.url), undefined);
    // The same state under the server's own name is used: the two above were told apart by URL and by name alone.
    writePiAuthFile(piFile, { [piKey("secure", fixture.url)]: state });
    const connection = connect(fixture, authDir);
    await connection.connect();
    assert.equal(await echo(connection, "own name"), "own name");
  });

  test("URLs match as pi writes them (host case, default port), names as pi writes them (- as _), and pi's older key by URL alone", async () => {
    const { fixture, piFile, authDir } = await setup();
    const state = await signInAsPi(fixture);
    // pi keys `my-server` as `mcp__my_server`; the bridge's config spells the host in capitals.
    writePiAuthFile(piFile, { [piKey("my-server", fixture.url)]: state });
    const connection = connect(
      fixture,
      authDir,
      {},
      { name: "my-server", url: fixture.url.replace("http://", "HTTP://") },
    );
    await connection.connect();
    const result = await connection.callTool("echo", { text: "keyed" });
    assert.deepEqual(result.content, [{ type: "text", text: "keyed" }]);

    const legacy = await setup();
    const legacyState = await signInAsPi(legacy.fixture);
    writePiAuthFile(legacy.piFile, { [new URL(legacy.fixture.url).href]: legacyState });
    const old = connect(legacy.fixture, legacy.authDir);
    await old.connect();
    assert.equal(await echo(old, "legacy key"), "legacy key");
  });

  test("an expired access token is refreshed with pi's refresh token, as pi's client; pi's file is not written", async () => {
    const { fixture, piFile, authDir } = await setup();
    const state = await signInAsPi(fixture);
    fixture.expireAccessTokens();
    writePiAuthFile(piFile, { [piKey("secure", fixture.url)]: { ...state, tokensExpireAt: Date.now() - 60_000 } });
    const before = snapshot(piFile);
    const connection = connect(fixture, authDir);
    await connection.connect();
    assert.equal(await echo(connection, "refreshed"), "refreshed");
    const refreshes = refreshRequests(fixture);
    assert.ok(refreshes.length >= 1, "refreshed");
    const piClient = String(state.clientInformation?.client_id);
    for (const request of refreshes)
      assert.equal(request.get("client_id"), piClient, "as the client pi registered (the server refuses any other)");
    assert.equal(refreshes[0]!.get("refresh_token"), (state.tokens as { refresh_token: string }).refresh_token);
    assert.equal(fixture.authorizations.length, 1, "no new sign-in");
    assert.equal(fixture.registrations.length, 1, "no registration of its own");
    const stored = new AuthStore(authDir).tokens("secure", fixture.url);
    assert.notEqual(
      stored?.accessToken,
      (state.tokens as { access_token: string }).access_token,
      "the new tokens are the bridge's",
    );
    await connection.close();
    assert.deepEqual(
      snapshot(piFile),
      before,
      "pi keeps its (now rotated) tokens untouched: the bridge never writes there",
    );
  });

  test("a sign-in pi made as the config's clientId is refreshed as that client", async () => {
    const { fixture, piFile, authDir } = await setup();
    // An administrator registered the client; the config names it, for pi and the bridge alike.
    const registered = await fetch(`${fixture.origin}/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ redirect_uris: ["http://127.0.0.1:45123/callback"], client_name: "by hand" }),
    });
    const clientId = ((await registered.json()) as { client_id: string }).client_id;
    const state = await signInAsPi(fixture, { clientId });
    assert.equal(state.clientInformation, undefined, "pi stores no registration for a configured client");
    fixture.expireAccessTokens();
    writePiAuthFile(piFile, { [piKey("secure", fixture.url)]: { ...state, tokensExpireAt: Date.now() - 60_000 } });
    const connection = connect(fixture, authDir, { callbackPort: 45_123, clientId });
    await connection.connect();
    assert.equal(await echo(connection, "configured client"), "configured client");
    const refreshes = refreshRequests(fixture);
    assert.ok(refreshes.length >= 1);
    for (const request of refreshes) assert.equal(request.get("client_id"), clientId);
    assert.equal(fixture.authorizations.length, 1, "only pi's sign-in");
  });

  test("a sign-in made with pi's client document (no registration stored) is used until it expires, never refreshed", async () => {
    const { fixture, piFile, authDir } = await setup();
    const { clientInformation: _, ...state } = await signInAsPi(fixture);
    writePiAuthFile(piFile, { [piKey("secure", fixture.url)]: state });
    const connection = connect(fixture, authDir);
    await connection.connect();
    assert.equal(await echo(connection, "until expiry"), "until expiry");
    assert.equal(
      new AuthStore(authDir).tokens("secure", fixture.url)?.refreshToken,
      undefined,
      "the refresh token was not taken",
    );
    fixture.expireAccessTokens();
    await assert.rejects(echo(connection, "after expiry"), /needs you to sign in/);
    assert.equal(refreshRequests(fixture).length, 0, "pi's refresh token was never sent as another client");
  });

  test("a refresh the authorization server cannot answer does not start a sign-in with pi's client", async () => {
    const { fixture, piFile, authDir } = await setup({ refreshStatus: 500 });
    const state = await signInAsPi(fixture);
    fixture.expireAccessTokens();
    writePiAuthFile(piFile, { [piKey("secure", fixture.url)]: { ...state, tokensExpireAt: Date.now() - 60_000 } });
    let pagesOpened = 0;
    const connection = connect(fixture, authDir, {}, { signIn: () => void pagesOpened++ });
    await assert.rejects(connection.connect(), (error: unknown) => {
      assert.ok(error instanceof BridgeError && error.kind === "auth", String(error));
      assert.match(error.message, /the sign-in taken over from pi 1\.x could not be refreshed\. Run \/mcp auth secure/);
      messages.push(error.message);
      return true;
    });
    assert.ok(refreshRequests(fixture).length >= 1, "the refresh was tried");
    assert.equal(pagesOpened, 0, "no authorization page with pi's client id and the bridge's redirect URI");
    assert.equal(fixture.authorizations.length, 1, "only pi's");
  });

  test("a corrupt file is ignored with a warning naming the file and server, and nothing is lost", async () => {
    const { fixture, piFile, authDir } = await setup();
    writeFileSync(piFile, '{ "mcp__secure|x": { "tokens": { "access_token": "leaky-secret-value" ', { mode: 0o600 });
    const before = snapshot(piFile);
    const connection = connect(fixture, authDir);
    await needsSignIn(connection);
    const [warning] = connection.warnings;
    assert.match(
      warning ?? "",
      /MCP server 'secure' was not used: .*mcp-auth\.json: it is not valid JSON\. Run \/mcp auth secure/,
    );
    assert.ok(warning!.includes(piFile));
    assert.equal(warning!.includes("leaky-secret-value"), false, "nothing of the file's content");
    messages.push(...connection.warnings);
    assert.deepEqual(snapshot(piFile), before);
    assert.equal(new AuthStore(authDir).tokens("secure", fixture.url), undefined);
    // The user signs in here instead: the bridge's own sign-in works beside pi's broken file, and the warning goes.
    await connection.signIn(automaticSignIn());
    assert.equal(await echo(connection, "own sign-in"), "own sign-in");
    assert.deepEqual(connection.warnings, []);
    assert.deepEqual(snapshot(piFile), before);
  });

  test("a file other users can write is not read, with a warning saying how to fix it; once fixed it is used", async () => {
    const { fixture, piFile, authDir } = await setup();
    const state = await signInAsPi(fixture);
    writePiAuthFile(piFile, { [piKey("secure", fixture.url)]: state }, 0o620);
    const before = snapshot(piFile);
    const loose = connect(fixture, authDir);
    await needsSignIn(loose);
    assert.match(
      loose.warnings.join("\n"),
      /mcp-auth\.json: other users can write it \(mode 0620; `chmod 600` it to have its sign-ins used\)/,
    );
    messages.push(...loose.warnings);
    assert.deepEqual(snapshot(piFile), before, "not even its mode is changed: the file is pi's");
    await loose.close();

    chmodSync(piFile, 0o600);
    const fixed = connect(fixture, authDir);
    await fixed.connect();
    assert.equal(await echo(fixed, "fixed"), "fixed");
    assert.deepEqual(fixed.warnings, []);
  });

  test(
    "a file another user owns is not read, with a warning",
    { skip: process.getuid?.() === 0 ? false : "only root can give a file to another user" },
    async () => {
      const { fixture, piFile, authDir } = await setup();
      writePiAuthFile(piFile, { [piKey("secure", fixture.url)]: await signInAsPi(fixture) });
      chownSync(piFile, 65_534, 65_534);
      const connection = connect(fixture, authDir);
      await needsSignIn(connection);
      assert.match(connection.warnings.join("\n"), /mcp-auth\.json: it belongs to another user/);
      messages.push(...connection.warnings);
    },
  );

  test("a directory in the file's place is ignored with a warning", async () => {
    const { fixture, piFile, authDir } = await setup();
    mkdirSync(piFile);
    const connection = connect(fixture, authDir);
    await needsSignIn(connection);
    assert.match(connection.warnings.join("\n"), /mcp-auth\.json: it is not a regular file/);
  });

  test("/mcp logout removes only the bridge's copy and does not take pi's sign-in again; a new one in pi is taken", async () => {
    const { fixture, piFile, authDir } = await setup();
    writePiAuthFile(piFile, { [piKey("secure", fixture.url)]: await signInAsPi(fixture) });
    const before = snapshot(piFile);
    const connection = connect(fixture, authDir);
    await connection.connect();
    assert.deepEqual(
      await connection.logout(),
      { removed: true, piFileKept: piFile },
      "what /mcp logout tells the user it left in place",
    );
    assert.deepEqual(snapshot(piFile), before, "pi's sign-in stays in pi's file");
    assert.equal(new AuthStore(authDir).tokens("secure", fixture.url), undefined);
    await needsSignIn(connect(fixture, authDir));

    // The user signs in again in pi: that sign-in is a new one, and is taken over.
    writePiAuthFile(piFile, { [piKey("secure", fixture.url)]: await signInAsPi(fixture) });
    const again = connect(fixture, authDir);
    await again.connect();
    assert.equal(await echo(again, "pi signed in again"), "pi signed in again");
  });

  test("/mcp logout of a server that used its own sign-in does not let pi's replace it either", async () => {
    const { fixture, piFile, authDir } = await setup();
    const connection = connect(fixture, authDir, {}, { signIn: automaticSignIn() });
    await connection.connect();
    writePiAuthFile(piFile, { [piKey("secure", fixture.url)]: await signInAsPi(fixture) });
    assert.equal((await connection.logout()).removed, true);
    await needsSignIn(connect(fixture, authDir));
  });

  test("/mcp auth signs in as the bridge even where pi has a sign-in", async () => {
    const { fixture, piFile, authDir } = await setup();
    writePiAuthFile(piFile, { [piKey("secure", fixture.url)]: await signInAsPi(fixture) });
    const connection = connect(fixture, authDir);
    await connection.signIn(automaticSignIn());
    assert.equal(await echo(connection, "own"), "own");
    assert.equal(fixture.authorizations.length, 2, "pi's and the bridge's");
    assert.equal(fixture.registrations.at(-1)!.client_name, "pi (mcp-bridge)");
    assert.equal(new AuthStore(authDir).client("secure", fixture.url)?.importedFrom, undefined);
  });

  test("pi's registration never starts a sign-in here, even one that names no redirect URIs", async () => {
    const { fixture, piFile, authDir } = await setup();
    const state = await signInAsPi(fixture);
    const { redirect_uris: _, ...client } = state.clientInformation!;
    writePiAuthFile(piFile, { [piKey("secure", fixture.url)]: { ...state, clientInformation: client } });
    const connection = connect(fixture, authDir);
    await connection.connect();
    assert.equal(await echo(connection, "taken over"), "taken over");
    await connection.signIn(automaticSignIn());
    assert.equal(await echo(connection, "signed in here"), "signed in here");
    assert.equal(fixture.registrations.at(-1)!.client_name, "pi (mcp-bridge)", "the bridge registered itself");
    assert.notEqual(fixture.authorizations.at(-1)!.get("client_id"), client.client_id);
  });

  test("no token, code or client id appears in the log file, the events or any message", async () => {
    logger.flush();
    const log = readFileSync(logger.path, "utf8");
    assert.match(log, /"event":"auth\.imported"/);
    assert.match(log, /"event":"auth\.import\.ignored"/);
    const texts = [log, JSON.stringify(events), messages.join("\n")];
    const issued = fixtures.flatMap((f) => f.issued);
    assert.ok(issued.length > 10);
    for (const secret of [...issued, "leaky-secret-value"])
      for (const text of texts) assert.equal(text.includes(secret), false, "a secret leaked");
  });
});
