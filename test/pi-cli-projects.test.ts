/**
 * The real `pi` command line in projects: the extension installed with `pi install` and a project's `.pi/mcp.json`,
 * and a project nobody has trusted yet. Moved out of ./pi-cli.test.ts so the two run side by side.
 */
import assert from "node:assert/strict";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import {
  EXTENSION_DIR,
  fixtureEntry,
  helloServer,
  readLog,
  REPO_ROOT,
  tempDir,
  trustProjectServers,
} from "./helpers.ts";
import { PI_LINE } from "./pi-line.ts";
import { piCliIn } from "./pi-print.ts";

const home = tempDir("mcp-bridge-home-");
const { run: runPi } = piCliIn(home.dir);

describe(`pi command line in projects (pi ${PI_LINE})`, { timeout: 300_000 }, () => {
  after(() => home.cleanup());

  test("`pi install <path>` and a project .pi/mcp.json: the tools are there with no build step", async () => {
    const project = tempDir("mcp-bridge-installed-");
    try {
      const install = await runPi(["install", REPO_ROOT]);
      assert.equal(install.code, 0, install.output);
      mkdirSync(path.join(project.dir, ".pi"));
      writeFileSync(
        path.join(project.dir, ".pi", "mcp.json"),
        JSON.stringify({
          mcpServers: { hello: { command: "node", args: [helloServer()] } },
        }),
      );
      await trustProjectServers(project.dir, path.join(home.dir, "agent"));
      const { code, output } = await runPi(["-p", "/mcp"], 60_000, project.dir);
      assert.equal(code, 0, output);
      assert.match(
        output,
        /hello {2}connected {2}stdio {2}MCP 2025-11-25 {2}2 tools {2}about \d+ tokens per request {2}\(project\)/,
      );
    } finally {
      await runPi(["remove", REPO_ROOT]);
      project.cleanup();
    }
  });

  test("print mode in a project nobody has trusted: no server starts and one notice names /mcp trust; `/mcp trust` then starts it", async () => {
    const project = tempDir("mcp-bridge-untrusted-");
    const log = path.join(project.dir, "events.jsonl");
    try {
      mkdirSync(path.join(project.dir, ".pi"));
      const entry = { ...fixtureEntry(), env: { FIXTURE_LOG: log } };
      writeFileSync(
        path.join(project.dir, ".pi", "mcp.json"),
        JSON.stringify({ mcpServers: { local: entry, later: { ...entry, lazy: true } } }),
      );
      const listed = await runPi(["-e", EXTENSION_DIR, "-p", "/mcp list"], 60_000, project.dir);
      assert.equal(listed.code, 0, listed.output);
      assert.equal(listed.output.match(/\/mcp trust \[server…\] starts them/g)?.length, 1, listed.output);
      assert.match(listed.output, /not trusted, not started \(project config\): local, later\./);
      assert.match(listed.output, /local +🔒/);
      assert.deepEqual(readLog(log), [], "no server process was started, lazy or not");
      // A mistyped name trusts nothing: a script is told so by the exit status.
      const mistyped = await runPi(["-e", EXTENSION_DIR, "-p", "/mcp trust locl"], 60_000, project.dir);
      assert.equal(mistyped.code, 1, mistyped.output);

      const trusted = await runPi(["-e", EXTENSION_DIR, "-p", "/mcp trust local"], 60_000, project.dir);
      assert.equal(trusted.code, 0, trusted.output);
      assert.match(trusted.output, /local: trusted, connected, \d+ tools/);
      assert.deepEqual(
        readLog(log)
          .map((e) => e.event)
          .filter((e) => e === "start"),
        ["start"],
        "only the trusted server started",
      );
      // Trusted but not started: as /mcp enable, a script is told by the exit status.
      const broken = { mcpServers: { local: entry, later: { ...entry, lazy: true }, broken: { command: "false" } } };
      writeFileSync(path.join(project.dir, ".pi", "mcp.json"), JSON.stringify(broken));
      const failing = await runPi(["-e", EXTENSION_DIR, "-p", "/mcp trust broken"], 60_000, project.dir);
      assert.equal(failing.code, 1, failing.output);
      assert.match(failing.output, /broken: trusted, but it did not start/);
      // An answer that cannot be saved ends with this run: a script is told it did not take.
      const store = path.join(home.dir, "agent", "mcp-bridge", "trust.json");
      rmSync(store, { force: true });
      mkdirSync(store);
      try {
        for (const command of ["/mcp trust local", "/mcp untrust local"]) {
          const unsaved = await runPi(["-e", EXTENSION_DIR, "-p", command], 60_000, project.dir);
          assert.equal(unsaved.code, 1, `${command}: ${unsaved.output}`);
          assert.match(unsaved.output, /but the answer could not be saved/);
        }
      } finally {
        rmSync(store, { recursive: true, force: true });
      }
    } finally {
      project.cleanup();
    }
  });
});
