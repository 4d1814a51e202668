/**
 * `/mcp auth` with no server named (src/pi/command-auth.ts), in pi's UI: every server that waits for a sign-in is
 * offered at once, before each server by itself. Print mode, which asks nothing and signs in to each, is in
 * ./pi-cli.test.ts.
 */
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { automaticSignIn } from "../src/oauth/sign-in.ts";
import { startOAuthServer } from "./fixtures/oauth-server.ts";
import { EXTENSION_DIR, fixtureEntry, freePort, restoreEnv, tempDir, waitFor } from "./helpers.ts";
import { startInProcessPi } from "./pi-harness.ts";
import { RecordingUI } from "./recording-ui.ts";

const SIGN_IN_URL =
  /^Sign in to MCP server '(\w+)' by opening this URL[^]*?(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)/;

describe("/mcp auth without a server named, in pi's UI", { timeout: 120_000 }, () => {
  test("'all that wait for a sign-in' comes first, then each server; picked, it signs in to each in turn", async () => {
    const fixtures = [await startOAuthServer(), await startOAuthServer()];
    const [project, agentDir] = [tempDir(), tempDir()];
    const saved = { ...process.env };
    const servers = {
      first: { url: fixtures[0]!.url, auth: { callbackPort: await freePort() } },
      local: fixtureEntry(),
      second: { url: fixtures[1]!.url, auth: { callbackPort: await freePort() } },
    };
    writeFileSync(path.join(agentDir.dir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
    Object.assign(process.env, {
      HOME: project.dir,
      PI_CODING_AGENT_DIR: agentDir.dir,
      PI_MCP_NO_BROWSER: "1",
      PI_MCP_STARTUP_BUDGET_MS: "60000",
    });
    const pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
    const ui = new RecordingUI();
    try {
      await pi.session.bindExtensions({ uiContext: ui.context() });
      // Nobody signed in at startup: both wait (the list says so), the local server is connected.
      const listed = async () => {
        const before = ui.notices.length;
        await pi.session.prompt("/mcp list");
        return ui.notices.slice(before).join("\n");
      };
      await waitFor(
        async () => /^first {2}needs sign-in[^]*^second {2}needs sign-in/m.test(await listed()),
        "both",
        30_000,
      );
      // Picked: all; each sign-in then asks for the address a browser would end on (none here: the question is left
      // open, as a user whose browser completes the sign-in leaves it; Escape would end the sign-in).
      const leftOpen = () => new Promise<undefined>(() => undefined);
      ui.answers = ["All that wait for a sign-in", leftOpen(), leftOpen()];
      const command = pi.session.prompt("/mcp auth");
      const signedIn: string[] = [];
      for (let n = 1; n <= 2; n++) {
        const pages = () => ui.notices.map((notice) => SIGN_IN_URL.exec(notice)).filter((found) => found !== null);
        await waitFor(() => pages().length >= n, `sign-in page ${n}`, 30_000);
        const [, server, url] = pages()[n - 1]!;
        signedIn.push(server!);
        await automaticSignIn()({ server: server!, url: new URL(url!), callback: undefined as never });
      }
      await command;
      assert.deepEqual(ui.offered[0], ["All that wait for a sign-in (first, second)", "first", "second", "local"]);
      assert.deepEqual(signedIn, ["first", "second"]);
      for (const name of signedIn) {
        assert.ok(ui.notices.some((notice) => notice.startsWith(`Signed in to MCP server '${name}': `)));
        assert.ok(existsSync(path.join(agentDir.dir, "mcp-auth", `${name}.json`)));
      }
      assert.match(await listed(), /^first {2}connected[^]*^second {2}connected/m);
    } finally {
      await pi.close();
      restoreEnv(saved);
      await Promise.all(fixtures.map((fixture) => fixture.close()));
      for (const dir of [project, agentDir]) dir.cleanup();
    }
  });
  test("a server disabled in its config: /mcp auth neither signs in to it nor starts it; /mcp logout leaves it disabled", async () => {
    const fixture = await startOAuthServer();
    const [project, agentDir] = [tempDir(), tempDir()];
    const saved = { ...process.env };
    const servers = { dormant: { url: fixture.url, enabled: false, auth: { callbackPort: await freePort() } } };
    writeFileSync(path.join(agentDir.dir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
    Object.assign(process.env, { HOME: project.dir, PI_CODING_AGENT_DIR: agentDir.dir, PI_MCP_NO_BROWSER: "1" });
    const pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
    const ui = new RecordingUI();
    try {
      await pi.session.bindExtensions({ uiContext: ui.context() });
      const mcp = pi.session.extensionRunner.getCommand("mcp")!;
      assert.equal(await mcp.getArgumentCompletions?.("auth "), null, "nothing to offer");
      const logout = (await mcp.getArgumentCompletions?.("logout ")) as Array<{ value: string }>;
      assert.deepEqual(
        logout?.map((item) => item.value),
        ["logout dormant"],
        "its sign-in may still be forgotten",
      );
      await pi.session.prompt("/mcp auth dormant");
      assert.match(ui.notices.join("\n"), /MCP server 'dormant' is disabled in its config; \/mcp enable dormant/);
      assert.equal(fixture.authorizations.length, 0, "no sign-in page");
      await pi.session.prompt("/mcp logout dormant");
      await pi.session.prompt("/mcp list");
      const listed = ui.notices.at(-1) ?? "";
      assert.match(listed, /^dormant {2}disabled/m);
      assert.doesNotMatch(listed, /Signed out|Run \/mcp auth/, "not told to sign in to a server that is disabled");
    } finally {
      await pi.close();
      restoreEnv(saved);
      await fixture.close();
      for (const dir of [project, agentDir]) dir.cleanup();
    }
  });
});
