/**
 * Remote servers behind a company proxy (src/common/env-proxy.ts): a real proxy on 127.0.0.1 (CONNECT tunnels, and
 * requests in absolute form) in front of the Streamable HTTP fixture, whose host name only the proxy can reach.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer as createHttpServer, request as httpRequest } from "node:http";
import { createServer as createTlsServer } from "node:https";
import * as path from "node:path";
import { type AddressInfo, createServer, type Socket } from "node:net";
import { describe, test } from "node:test";
import { Agent } from "undici";
import { dispatcherFor } from "../src/common/env-proxy.ts";
import { startStreamableHttp } from "./fixtures/http-servers.ts";
import { forwardProxy } from "./forward-proxy.ts";
import { connectionFor, freePort, restoreEnv, tempDir } from "./helpers.ts";
import { type OAuthFixtureOptions, startOAuthServer } from "./fixtures/oauth-server.ts";
import { automaticSignIn } from "../src/oauth/sign-in.ts";
import { AuthStore } from "../src/oauth/storage.ts";
import { runTool, toolsOf } from "./pi-tools.ts";

describe("remote servers through pi's proxy", { timeout: 60_000 }, () => {
  test("HTTP_PROXY: a host only the proxy reaches connects through it; a loopback one is reached directly", async () => {
    const server = await startStreamableHttp();
    const proxy = await forwardProxy(server.port);
    const saved = { ...process.env };
    for (const name of ["NO_PROXY", "no_proxy", "http_proxy", "HTTPS_PROXY", "https_proxy"]) delete process.env[name];
    process.env.HTTP_PROXY = proxy.url;
    const far = connectionFor("far", { url: `http://mcp.example.invalid:${server.port}/mcp` });
    const near = connectionFor("near", { url: server.url });
    try {
      await far.connect();
      assert.equal(far.status, "connected", far.lastError);
      const echo = await runTool(toolsOf(far).get("mcp_far_echo"), { text: "via the proxy" });
      assert.equal(echo.text, "via the proxy");
      assert.ok(proxy.asked.includes(`mcp.example.invalid:${server.port}`), `the proxy was asked for ${proxy.asked}`);
      const before = proxy.asked.length;
      await near.connect();
      assert.equal(near.status, "connected", near.lastError);
      assert.equal(proxy.asked.length, before, "127.0.0.1 is reached directly");
    } finally {
      restoreEnv(saved);
      await Promise.all([far.close(), near.close()]);
      await proxy.close();
      await server.close();
    }
  });

  test("an empty http_proxy turns the proxy off, as for curl, Python and undici: HTTP_PROXY is not read then", () => {
    const proxy = "http://127.0.0.1:9";
    assert.ok(
      dispatcherFor({}, { http_proxy: "", HTTP_PROXY: proxy, https_proxy: "", HTTPS_PROXY: proxy }) instanceof Agent,
    );
    assert.ok(!(dispatcherFor({}, { http_proxy: "", HTTPS_PROXY: proxy }) instanceof Agent));
  });

  test("NO_PROXY=* reaches every host directly, as for curl and undici (the loopback hosts added must not spoil it)", () => {
    const proxy = "http://127.0.0.1:9";
    assert.ok(dispatcherFor({}, { HTTPS_PROXY: proxy, HTTP_PROXY: proxy, NO_PROXY: "*" }) instanceof Agent);
    assert.ok(dispatcherFor({}, { https_proxy: proxy, no_proxy: "*" }) instanceof Agent);
  });

  test("a proxy that refuses the connection (not running, a stale HTTPS_PROXY): the error blames the proxy, not the server", async () => {
    const saved = { ...process.env };
    for (const name of ["NO_PROXY", "no_proxy", "http_proxy", "HTTP_PROXY", "https_proxy"]) delete process.env[name];
    // A port nothing listens on any more.
    const gone = createServer();
    await new Promise<void>((resolve) => gone.listen(0, "127.0.0.1", resolve));
    process.env.HTTPS_PROXY = `http://127.0.0.1:${(gone.address() as AddressInfo).port}`;
    await new Promise((resolve) => gone.close(resolve));
    const far = connectionFor("far", { url: "https://mcp.example.invalid/mcp", reconnect: { maxAttempts: 0 } });
    try {
      const message = await far.connect().then(
        () => "connected",
        (error: Error) => error.message,
      );
      assert.match(
        message,
        /ECONNREFUSED 127\.0\.0\.1:\d+ \(connection refused by the proxy HTTPS_PROXY names: is it running/,
      );
    } finally {
      restoreEnv(saved);
      await far.close();
    }
  });

  test("a proxy that wants credentials (407 to its CONNECT): the error says to put them in the variable", async () => {
    const proxy = createHttpServer((_req, res) => res.writeHead(407).end());
    proxy.on("connect", (_req, socket: Socket) =>
      socket.end("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=corp\r\n\r\n"),
    );
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const saved = { ...process.env };
    for (const name of ["NO_PROXY", "no_proxy", "http_proxy", "HTTP_PROXY", "https_proxy"]) delete process.env[name];
    process.env.HTTPS_PROXY = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const far = connectionFor("far", { url: "https://mcp.example.invalid/mcp", reconnect: { maxAttempts: 0 } });
    try {
      const message = await far.connect().then(
        () => "connected",
        (error: Error) => error.message,
      );
      assert.match(
        message,
        /Proxy response \(407\).*\(pi's proxy asks for credentials: put them in the variable that names it .* as user:password@ before its host/,
      );
    } finally {
      restoreEnv(saved);
      await far.close();
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  test("a sign-in whose token endpoint only the proxy reaches: the code is exchanged through the proxy too", async () => {
    const options: OAuthFixtureOptions = {};
    const fixture = await startOAuthServer(options);
    const tmp = tempDir();
    // The token endpoint at a name only the proxy reaches: https, relayed to the fixture's own.
    const [key, cert] = [path.join(tmp.dir, "key.pem"), path.join(tmp.dir, "cert.pem")];
    const request = "req -x509 -newkey rsa:2048 -nodes -subj /CN=auth.example.invalid -days 1".split(" ");
    execFileSync("openssl", [...request, "-keyout", key, "-out", cert], { stdio: "ignore", timeout: 60_000 });
    const relay = createTlsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
      const target = { host: "127.0.0.1", port: new URL(fixture.origin).port, path: req.url, method: req.method };
      req.pipe(
        httpRequest({ ...target, headers: req.headers }, (answer) =>
          answer.pipe(res.writeHead(answer.statusCode!, answer.headers)),
        ),
      );
    });
    await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
    const relayPort = (relay.address() as AddressInfo).port;
    options.advertise = { token_endpoint: `https://auth.example.invalid:${relayPort}/token` };
    const proxy = await forwardProxy(relayPort);
    const saved = { ...process.env };
    for (const name of ["NO_PROXY", "no_proxy", "http_proxy", "HTTP_PROXY", "https_proxy"]) delete process.env[name];
    process.env.HTTPS_PROXY = proxy.url;
    // The relay's certificate is its own.
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
    const signIn = automaticSignIn();
    const auth = { authStore: new AuthStore(tmp.dir), signIn: () => signIn };
    const connection = connectionFor("secure", { url: fixture.url, auth: { callbackPort: await freePort() } }, auth);
    try {
      await connection.connect();
      assert.equal((await runTool(toolsOf(connection).get("mcp_secure_echo"), { text: "in" })).text, "in");
      assert.ok(proxy.asked.includes(`auth.example.invalid:${relayPort}`), `the proxy was asked for ${proxy.asked}`);
    } finally {
      restoreEnv(saved);
      await connection.close();
      await proxy.close();
      relay.closeAllConnections();
      await new Promise((resolve) => relay.close(resolve));
      await fixture.close();
      tmp.cleanup();
    }
  });
});
