/**
 * npx without a network (src/connection/local/npx-offline.ts): npm asks the registry about a package at every start,
 * even one in its cache, and offline retries for about 70 s before it uses the cache. Where the registry's host cannot
 * be looked up, the bridge starts npx preferring its cache. The lookup against real DNS (a `.invalid` name never
 * resolves), and real npx through real pi in a network namespace with no network (`unshare -rn`, from util-linux), the
 * package put in npx's cache by a real install first (which needs the npm registry).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { offlineRegistry } from "../src/connection/local/npx-offline.ts";
import { npmSettings } from "../src/connection/local/npm-settings.ts";
import { EXTENSION_DIR, tempDir } from "./helpers.ts";
import { PI_LINE } from "./pi-line.ts";
import { PI_CLI } from "./tmux.ts";

const NOWHERE = "http://mcp-bridge-offline.invalid/";
/** A package no test installs: never in npx's cache. */
const UNCACHED = "@mcp-bridge-test/never-installed-server";

/** Runs `command` to its end (killed after `ms`): its exit code and all it wrote. */
function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; ms: number }) {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const timer = setTimeout(() => child.kill("SIGKILL"), options.ms);
  return new Promise<{ code: number | null; output: string }>((resolve) =>
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

describe(`npx without a network (pi ${PI_LINE})`, { timeout: 300_000 }, () => {
  const home = tempDir("mcp-bridge-npx-offline-");
  after(() => home.cleanup());

  test("a registry whose host cannot be looked up is offline; one that can, a proxy or the user's own setting is not", async () => {
    const env = { HOME: home.dir };
    assert.equal(await offlineRegistry({ ...env, npm_config_registry: NOWHERE }), "mcp-bridge-offline.invalid");
    assert.equal(await offlineRegistry({ ...env, npm_config_registry: "http://127.0.0.1:9/" }), undefined);
    assert.equal(
      await offlineRegistry({ ...env, npm_config_registry: NOWHERE, HTTPS_PROXY: "http://p:3128" }),
      undefined,
    );
    assert.equal(
      await offlineRegistry({ ...env, npm_config_registry: NOWHERE, NPM_CONFIG_PREFER_ONLINE: "true" }),
      undefined,
    );
    // The user's npmrc: its registry is the one looked up, and its own setting is left alone.
    const rc = path.join(home.dir, "npmrc");
    writeFileSync(rc, `registry = ${NOWHERE}\n`);
    assert.equal(await offlineRegistry({ ...env, npm_config_userconfig: rc }), "mcp-bridge-offline.invalid");
    writeFileSync(rc, `registry = ${NOWHERE}\noffline=true\n`);
    assert.equal(await offlineRegistry({ ...env, npm_config_userconfig: rc }), undefined);
    // A value as npm's ini reads it: quoted, or followed by a comment.
    for (const written of [`"${NOWHERE}"`, `'${NOWHERE}'`, `${NOWHERE} ; the company's`, `${NOWHERE}# mirror`]) {
      writeFileSync(rc, `registry = ${written}\n`);
      assert.equal(await offlineRegistry({ ...env, npm_config_userconfig: rc }), "mcp-bridge-offline.invalid", written);
    }
  });

  test("a project's .npmrc (where the server starts, or the nearest folder up with a package.json) counts, after env", async () => {
    const env = { HOME: home.dir };
    const project = path.join(home.dir, "project");
    const deeper = path.join(project, "packages", "server");
    mkdirSync(deeper, { recursive: true });
    writeFileSync(path.join(project, "package.json"), "{}");
    writeFileSync(path.join(project, ".npmrc"), `registry = ${NOWHERE}\ncache = ~/project-cache\n`);
    const rc = path.join(home.dir, "user-npmrc");
    writeFileSync(rc, "registry = http://127.0.0.1:9/\nlogs-dir = /var/user-logs\n");
    const user = { ...env, npm_config_userconfig: rc };
    const setting = npmSettings({ env: user, cwd: deeper });
    assert.equal(setting("registry"), NOWHERE, "the project's over the user's");
    assert.equal(setting("cache"), path.join(home.dir, "project-cache"));
    assert.equal(setting("logs-dir"), "/var/user-logs", "the user's where the project's has none");
    assert.equal(await offlineRegistry(user, setting), "mcp-bridge-offline.invalid");
    assert.equal(npmSettings({ env: user })("registry"), "http://127.0.0.1:9/", "no folder: no project");
    const set = { ...user, npm_config_registry: "http://127.0.0.1:9/" };
    assert.equal(npmSettings({ env: set, cwd: deeper })("registry"), "http://127.0.0.1:9/", "the server's env first");
    // npx's command line before the package, over everything else; after it, the server's own arguments.
    const args = ["-y", "--registry", NOWHERE, "pkg", "--registry", "http://127.0.0.1:9/"];
    assert.equal(npmSettings({ env: set, cwd: deeper, args })("registry"), NOWHERE);
    // A path there starts from the home directory as npm takes it (no shell expands `~` in `args`).
    assert.equal(npmSettings({ env, args: ["--cache", "~/flagged", "pkg"] })("cache"), path.join(home.dir, "flagged"));
    assert.equal(await offlineRegistry(set, npmSettings({ env: set, args })), "mcp-bridge-offline.invalid");
    assert.equal(npmSettings({ env: user, args: [`--registry=${NOWHERE}`, "pkg"] })("registry"), NOWHERE);
    assert.equal(
      npmSettings({ env: user, args: ["-y", "pkg", "--registry", NOWHERE] })("registry"),
      "http://127.0.0.1:9/",
    );
  });

  /**
   * A directory and agent dir of their own under the test's HOME, and the environment for npx and pi there: without the
   * `npm_config_*` that `npm test` sets (its cache among them), so npx uses the one in this HOME, as the server's npx
   * will (a server gets none of pi's npm settings).
   */
  function place(name: string) {
    const work = path.join(home.dir, name);
    const agentDir = path.join(home.dir, `agent-${name}`);
    mkdirSync(work);
    mkdirSync(agentDir);
    const inherited = Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key));
    const env = { ...Object.fromEntries(inherited), HOME: home.dir, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1" };
    return { work, env };
  }

  /** `pi -p "/mcp"` with `entry` as the server `name`, in a network namespace without a network. */
  function mcpOffline(name: string, entry: Record<string, unknown>, where: { work: string; env: NodeJS.ProcessEnv }) {
    const config = path.join(home.dir, `${name}.json`);
    writeFileSync(config, JSON.stringify({ mcpServers: { [name]: { ...entry, cwd: where.work } } }));
    const argv = ["-rn", process.execPath, PI_CLI, "-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp"];
    return run("unshare", argv, { cwd: where.work, env: where.env, ms: 180_000 });
  }

  test("real npx with no network: a package in its cache starts from there, and /mcp says why", async () => {
    const here = place("work");
    // Online, npx installs the package (its input is closed at once, so the server ends after its start).
    const args = ["-y", "@modelcontextprotocol/server-memory"];
    const install = await run("npx", args, { cwd: here.work, env: here.env, ms: 180_000 });
    assert.match(install.output, /running on stdio/i, install.output);
    const pi = await mcpOffline("memory", { command: "npx", args }, here);
    assert.equal(pi.code, 0, pi.output);
    assert.match(pi.output, /^ {2}memory +🟢/m, pi.output);
    assert.match(
      pi.output,
      /offline: npx started it from its cache \(registry\.npmjs\.org could not be looked up\)/,
      pi.output,
    );
  });

  test("real npx with no network, a package not in its cache: npm asks the registry once, not for a minute and a half", async () => {
    const pi = await mcpOffline("fresh", { command: "npx", args: ["-y", UNCACHED], maxRestarts: 0 }, place("uncached"));
    assert.match(pi.output, /fresh: MCP server 'fresh': .*could not reach registry\.npmjs\.org/, pi.output);
    // npm's own log of the run: each of its requests for the package tried once (its default is three tries, 85 s).
    const logs = path.join(home.dir, ".npm", "_logs");
    const tries = readdirSync(logs)
      .map((file) => readFileSync(path.join(logs, file), "utf8"))
      .filter((text) => text.includes(UNCACHED))
      .flatMap((text) => [
        ...text.matchAll(new RegExp(`fetch GET \\S+${UNCACHED.replace("/", "%2f")} attempt (\\d+)`, "g")),
      ]);
    assert.ok(tries.length > 0, "npm's log has the request");
    assert.deepEqual(new Set(tries.map((m) => m[1])), new Set(["1"]));
  });
});
