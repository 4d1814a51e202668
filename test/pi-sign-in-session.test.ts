/**
 * The extension in pi in-process (on pi 0.73 and, through test/pi1x/run.mjs, on pi 1.x), with pi 1.x's
 * `mcp-auth.json` in the agent dir: a remote server pi signed in to is called by the model with no one to sign in,
 * through the sign-in the extension took over from that file; pi's file is left as it was.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { type OAuthFixture, startOAuthServer } from "./fixtures/oauth-server.ts";
import { piKey, signInAsPi, writePiAuthFile } from "./fixtures/pi-auth-file.ts";
import { callOnceInPi } from "./pi-harness.ts";
import { REPO_ROOT, tempDir } from "./helpers.ts";

describe("pi's own sign-in, in a pi session", { timeout: 120_000 }, () => {
  const project = tempDir("mcp-bridge-pi-sign-in-project-");
  const agentDir = tempDir("mcp-bridge-pi-sign-in-agent-");
  const originalCwd = process.cwd();
  let fixture: OAuthFixture;

  before(async () => {
    fixture = await startOAuthServer();
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
  });
  after(async () => {
    process.chdir(originalCwd);
    await fixture.close();
    project.cleanup();
    agentDir.cleanup();
  });

  test("the model calls a tool of a server pi 1.x signed in to, and nobody signs in", async () => {
    writeFileSync(path.join(agentDir.dir, "mcp.json"), JSON.stringify({ mcpServers: { secure: { url: fixture.url, autoApprove: ["echo"] } } }));
    const piFile = path.join(agentDir.dir, "mcp-auth.json");
    writePiAuthFile(piFile, { [piKey("secure", fixture.url)]: await signInAsPi(fixture) });
    const before = { bytes: readFileSync(piFile), mtimeMs: statSync(piFile).mtimeMs };
    const { text, isError, offered } = await callOnceInPi({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [REPO_ROOT],
      tool: "mcp_secure_echo",
      args: { text: "through pi's sign-in" },
    });
    assert.ok(offered, "the server's tools were there");
    assert.equal(isError, false, text);
    assert.equal(text, "through pi's sign-in");
    assert.equal(fixture.authorizations.length, 1, "only pi's sign-in");
    assert.ok(existsSync(path.join(agentDir.dir, "mcp-auth", "secure.json")), "the bridge's own copy, in its own folder");
    assert.deepEqual({ bytes: readFileSync(piFile), mtimeMs: statSync(piFile).mtimeMs }, before, "pi's file as pi left it");
  });
});
