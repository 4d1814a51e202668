/**
 * Sandboxed local servers (`"sandbox": true`): a real server process, started by real pi, tries to read a planted
 * `~/.ssh` key, write outside its working directory, and connect to a port listening on 127.0.0.1. Sandboxed, each is
 * refused and a write inside its working directory works, but not to what another program there would run
 * (pi's `.pi`, a git hook); the same server with `"sandbox": false` succeeds at all of
 * it, so the test fails where the sandbox does not hold. Needs bubblewrap, socat and ripgrep (.ci/run installs them).
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { REPO_ROOT, tempDir } from "./helpers.ts";
import { callOnceInPi } from "./pi-harness.ts";

const PROBE = path.join(REPO_ROOT, "test", "fixtures", "sandbox-probe-server.mjs");

describe("sandboxed local servers", { timeout: 180_000 }, () => {
  const home = tempDir("mcp-bridge-sandbox-home-");
  const project = tempDir("mcp-bridge-sandbox-project-");
  const outside = tempDir("mcp-bridge-sandbox-outside-");
  const agentDir = path.join(home.dir, ".pi", "agent");
  const secret = path.join(home.dir, ".ssh", "id_test");
  let listener: Server;
  let port = 0;
  let connections = 0;
  const saved = { cwd: process.cwd(), env: { ...process.env } };

  before(async () => {
    mkdirSync(path.dirname(secret), { recursive: true });
    writeFileSync(secret, "PLANTED-KEY\n");
    mkdirSync(agentDir, { recursive: true });
    // What another program would run later: pi's project config and a git hook, inside the server's working directory.
    mkdirSync(path.join(project.dir, ".pi"));
    mkdirSync(path.join(project.dir, ".git", "hooks"), { recursive: true });
    listener = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    port = (listener.address() as { port: number }).port;
    process.env.HOME = home.dir;
    process.env.PI_CODING_AGENT_DIR = agentDir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
  });

  after(async () => {
    process.chdir(saved.cwd);
    process.env = saved.env;
    await new Promise<void>((resolve) => listener.close(() => resolve()));
    for (const dir of [home, project, outside]) dir.cleanup();
  });

  async function probe(sandbox: boolean, tag: string): Promise<string> {
    writeFileSync(
      path.join(agentDir, "mcp.json"),
      JSON.stringify({
        exposure: "direct",
        mcpServers: { probe: { command: process.execPath, args: [PROBE], sandbox, autoApprove: ["*"] } },
      }),
    );
    const result = await callOnceInPi({
      cwd: project.dir,
      agentDir,
      extensionPaths: [REPO_ROOT],
      tool: "mcp_probe_probe",
      args: {
        read: secret,
        write: [
          path.join(outside.dir, `${tag}.txt`),
          path.join(project.dir, `${tag}-inside.txt`),
          path.join(project.dir, ".pi", `${tag}.ts`),
          path.join(project.dir, ".git", "hooks", `${tag}-pre-commit`),
        ],
        port,
      },
    });
    assert.equal(result.offered, true, `the probe server connected: ${result.text}`);
    return result.text;
  }

  test('"sandbox": true refuses the secret, the outside write and the loopback port; the inside write works', async () => {
    const before = connections;
    const text = await probe(true, "boxed");
    assert.match(text, /^read: failed/m, text);
    assert.doesNotMatch(text, /PLANTED-KEY/, "the key's content never reaches the model");
    assert.match(text, new RegExp(`^write ${outside.dir}/boxed\\.txt: failed`, "m"), text);
    assert.equal(existsSync(path.join(outside.dir, "boxed.txt")), false);
    assert.match(text, new RegExp(`^write ${project.dir}/boxed-inside\\.txt: ok`, "m"), text);
    assert.equal(existsSync(path.join(project.dir, "boxed-inside.txt")), true);
    assert.match(text, new RegExp(`^write ${project.dir}/\\.pi/boxed\\.ts: failed`, "m"), text);
    assert.match(text, new RegExp(`^write ${project.dir}/\\.git/hooks/boxed-pre-commit: failed`, "m"), text);
    assert.match(text, /^connect: failed/m, text);
    assert.equal(connections, before, "nothing reached the listener on 127.0.0.1");
  });

  test('"sandbox": false: the same server reads, writes and connects (so the first test can fail)', async () => {
    const before = connections;
    const text = await probe(false, "open");
    assert.match(text, /^read: ok PLANTED-KEY/m, text);
    assert.match(text, new RegExp(`^write ${outside.dir}/open\\.txt: ok`, "m"), text);
    assert.match(text, new RegExp(`^write ${project.dir}/\\.pi/open\\.ts: ok`, "m"), text);
    assert.match(text, /^connect: ok/m, text);
    assert.equal(connections, before + 1);
  });
});
