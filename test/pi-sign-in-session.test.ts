/**
 * The extension in pi in-process (on pi 0.73 and, through test/pi1x/run.mjs, on pi 1.x), with pi 1.x's
 * `mcp-auth.json` in the agent dir: a remote server pi signed in to is called by the model with no one to sign in,
 * through the sign-in the extension took over from that file; pi's file is left as it was. Once with the file as
 * test/fixtures/pi-auth-file.ts writes it, and once as the real pi 1.6 wrote it after `pi mcp login` (run on its Node 22
 * from test/pi1x; skipped, saying why, where that is not installed yet), which also checks the fixture's format.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import type { OAuthFixture } from "./fixtures/oauth-server.ts";
import { oauthBed } from "./oauth-bed.ts";
import { piKey, signInAsPi, writePiAuthFile } from "./fixtures/pi-auth-file.ts";
import { callOnceInPi } from "./pi-harness.ts";
import { EXTENSION_DIR, tempDir } from "./helpers.ts";
import { node22, PI1X_DIR } from "../scripts/node22.mjs";

const PI1X_CLI = path.join(PI1X_DIR, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js");

const NODE22 = node22();
const missing =
  !existsSync(PI1X_CLI) || !NODE22 ? "pi 1.x is not installed in test/pi1x (npm run test:pi1x installs it)" : undefined;

/**
 * Runs `pi mcp login <server>` of pi 1.x and plays the browser: opens the authorization URL it prints and follows the
 * redirect to its loopback callback. Bounded by `timeoutMs`.
 */
function piLogin(
  server: string,
  agentDir: string,
  home: string,
  timeoutMs = 60_000,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
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

describe("pi's own sign-in, in a pi session", { timeout: 120_000 }, () => {
  const project = tempDir("mcp-bridge-pi-sign-in-project-");
  const { setup } = oauthBed("mcp-bridge-pi-sign-in-");
  const originalCwd = process.cwd();

  before(() => {
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
  });
  after(async () => {
    process.chdir(originalCwd);
    project.cleanup();
  });

  /** The bed's server and agent dir, whose mcp.json lists it as `secure`; pi's agent dir from now on. */
  async function agentWithServer(): Promise<{ fixture: OAuthFixture; agentDir: string; piFile: string }> {
    const { fixture, authDir, piFile } = await setup();
    const agentDir = path.dirname(authDir);
    writeFileSync(
      path.join(agentDir, "mcp.json"),
      JSON.stringify({ mcpServers: { secure: { url: fixture.url, autoApprove: ["echo"], exposure: "direct" } } }),
    );
    process.env.PI_CODING_AGENT_DIR = agentDir;
    return { fixture, agentDir, piFile };
  }

  const snapshot = (file: string) => ({ bytes: readFileSync(file), mtimeMs: statSync(file).mtimeMs });

  /** The echo tool called by the model in a pi session in `agentDir`. */
  async function echoInPi(agentDir: string, text: string): Promise<string> {
    const result = await callOnceInPi({
      cwd: project.dir,
      agentDir,
      extensionPaths: [EXTENSION_DIR],
      tool: "mcp_secure_echo",
      args: { text },
    });
    assert.ok(result.offered, "the server's tools were there");
    assert.equal(result.isError, false, result.text);
    return result.text;
  }

  test("the model calls a tool of a server pi 1.x signed in to, and nobody signs in", async () => {
    const { fixture, agentDir, piFile } = await agentWithServer();
    writePiAuthFile(piFile, { [piKey("secure", fixture.url)]: await signInAsPi(fixture) });
    const before = snapshot(piFile);
    assert.equal(await echoInPi(agentDir, "through pi's sign-in"), "through pi's sign-in");
    assert.equal(fixture.authorizations.length, 1, "only pi's sign-in");
    assert.ok(existsSync(path.join(agentDir, "mcp-auth", "secure.json")), "the bridge's own copy, in its own folder");
    assert.deepEqual(snapshot(piFile), before, "pi's file as pi left it");
  });

  test(
    "a sign-in the real pi 1.6 made (`pi mcp login`) is used, and refreshed as pi's client",
    { skip: missing },
    async () => {
      const { fixture, agentDir, piFile } = await agentWithServer();
      const login = await piLogin("secure", agentDir, project.dir);
      assert.equal(login.code, 0, "pi mcp login succeeded");
      assert.equal(fixture.registrations.length, 1, "pi registered itself");
      const states = JSON.parse(readFileSync(piFile, "utf8")) as Record<
        string,
        { clientInformation?: { client_id?: string } }
      >;
      const piClientId = states[piKey("secure", fixture.url)]?.clientInformation?.client_id;
      assert.ok(piClientId, "pi stored its registration under the key test/fixtures/pi-auth-file.ts writes");
      const before = snapshot(piFile);

      assert.equal(await echoInPi(agentDir, "pi made this sign-in"), "pi made this sign-in");
      fixture.expireAccessTokens();
      assert.equal(await echoInPi(agentDir, "and it was refreshed"), "and it was refreshed");
      const refreshes = fixture.tokenRequests.filter((p) => p.get("grant_type") === "refresh_token");
      assert.ok(refreshes.length >= 1, "refreshed");
      for (const request of refreshes) assert.equal(request.get("client_id"), piClientId, "as pi's client");
      assert.equal(fixture.authorizations.length, 1, "no sign-in but pi's");
      assert.equal(fixture.registrations.length, 1, "no registration but pi's");
      assert.deepEqual(snapshot(piFile), before, "pi's file as pi left it");
    },
  );
});
