/**
 * No descendant of a local server outlives pi, however it was made. The server double-forks a sleeper (re-parented to
 * pid 1, in a session of its own: in neither the server's process group nor its tree) as it starts, and again during
 * a tool call the faux model makes; then real `pi --mode rpc` ends each way it can: a clean shutdown (its input
 * ends), SIGTERM, SIGINT (no handler of pi's runs in RPC mode) and SIGKILL. Within a minute of pi's exit nothing of the
 * server is alive. So is a reconnect while pi runs: the old process's daemons go. All five run at once.
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { within } from "../src/common/wait.ts";
import { EXIT_PATHS, sessionOf, startDoubleForkPi as startPi } from "./double-fork-pi.ts";
import { commandLine, isAlive, tempDir, waitFor } from "./helpers.ts";
import { PI_LINE } from "./pi-line.ts";
import { processTree } from "./tmux.ts";

const home = tempDir("mcp-bridge-double-fork-");
/**
 * How long the daemons may take to go. The watchdog gives the server its 2 s grace twice and reads the process table
 * with a shell script, which on a busy machine (the whole suite, four files at once) took past 10 s; a daemon left
 * behind lives 300 s, so a minute still tells one apart.
 */
const GONE_WITHIN_MS = 60_000;

describe(`double forks do not outlive pi ${PI_LINE}`, { concurrency: true, timeout: 240_000 }, () => {
  after(() => home.cleanup());

  test("while pi runs, `/mcp reconnect` ends the old process's double-forked daemons", async () => {
    const run = await startPi(home.dir);
    try {
      const old = run.sleepers();
      assert.equal(old.length, 2, "one sleeper from the start, one from the call");
      run.pi.stdin!.write(`${JSON.stringify({ type: "prompt", message: "/mcp reconnect df" })}\n`);
      await waitFor(() => run.sleepers().length === 3, "the new process's sleeper", 60_000, 100);
      await waitFor(
        () => old.every((pid) => !isAlive(pid)),
        "the old process's sleepers to be gone",
        GONE_WITHIN_MS,
        100,
      );
      assert.ok(isAlive(run.sleepers()[2]!), "the new process's sleeper runs");
      assert.equal(run.pi.exitCode, null, "pi still runs");
    } finally {
      run.stop();
    }
  });

  for (const exit of EXIT_PATHS) {
    test(`after ${exit.name}, no double-forked daemon of the server, from its start or a tool call, is left`, async () => {
      const run = await startPi(home.dir);
      try {
        const sleepers = run.sleepers();
        assert.equal(sleepers.length, 2, "one sleeper from the start, one from the call");
        const tree = processTree(run.pi.pid!);
        for (const pid of sleepers) {
          assert.ok(isAlive(pid), `sleeper ${pid} runs`);
          assert.equal(sessionOf(pid), pid, `sleeper ${pid} leads a session of its own`);
          assert.ok(!tree.includes(pid), `sleeper ${pid} is outside pi's process tree`);
        }
        exit.end(run.pi);
        await within(run.exited, { ms: 30_000, timedOut: () => new Error("pi did not exit within 30 s") });
        await waitFor(
          () => run.left().length === 0,
          "every process of the server to be gone",
          GONE_WITHIN_MS,
          100,
        ).catch((error: Error) => {
          throw new Error(`${error.message}; left: ${run.left().map(commandLine).join(" | ")}`);
        });
        await waitFor(() => run.watchdogs.every((pid) => !isAlive(pid)), "the watchdog to exit", GONE_WITHIN_MS, 100);
      } finally {
        run.stop();
      }
    });
  }
});
