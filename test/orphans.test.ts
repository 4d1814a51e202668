/**
 * No orphans, ever. The watchdog script on its own (its input ends: what it watches is ended), the watchdog of a
 * process killed with SIGKILL, and real `pi --mode rpc` with a wrapped local server (`sh -c "sleep 300 & exec node
 * server"`, plus a child that left the group with `setsid`) killed with SIGKILL or SIGINT, which run none of pi's own
 * handlers: every server process ends, and then the watchdog too.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execSync, spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { within } from "../src/common/wait.ts";
import { OrphanWatchdog, orphanWatchdog, WATCHDOG_SCRIPT } from "../src/connection/local/orphan-watchdog.ts";
import {
  groupHasLiveMember,
  markedProcesses,
  OWNER_ENV,
  processStartTime,
} from "../src/connection/local/process-tree.ts";
import { bundledFixture } from "./fixture-bundle.ts";
import {
  commandLine,
  EXTENSION_DIR,
  fixtureEntry,
  helloServer,
  isAlive,
  killIfAlive,
  readLog,
  REPO_ROOT,
  tempDir,
  testBridge,
  waitFor,
} from "./helpers.ts";
import { PI_LINE } from "./pi-line.ts";
import { GENEROUS_BUDGET, runPiCli } from "./pi-print.ts";
import { PI_CLI, processesWithEnv, processTree } from "./tmux.ts";

const HELLO_SERVER = helloServer();
/** Every process of the server carries this variable, with a value unique to the test. */
const MARK = "MCP_BRIDGE_ORPHAN_TEST";
const WATCHDOG_HOST = path.join(REPO_ROOT, "test", "fixtures", "watchdog-host.ts");
/** The watchdog's script where pi's copy of the extension starts it from (the package pi loads, see EXTENSION_DIR). */
const PI_WATCHDOG_SCRIPT = path.join(EXTENSION_DIR, path.relative(REPO_ROOT, WATCHDOG_SCRIPT));
const home = tempDir("mcp-bridge-orphans-");

function sessionOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]);
  } catch {
    return undefined;
  }
}

function describeProcesses(pids: number[]): string {
  return pids.length ? execSync(`ps -o pid,ppid,pgid,sid,stat,args -p ${pids.join(",")} || true`).toString() : "(none)";
}

type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** How `child` exits, once it does. */
function exitOf(child: ChildProcess): Promise<Exit> {
  return new Promise<Exit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
}

/** Waits for an exit that must come, at most 15 s. */
function expectExit<T>(exit: Promise<T>, what: string): Promise<T> {
  return within(exit, { ms: 15_000, timedOut: () => new Error(`${what} did not exit within 15 s`) });
}

/** `sh -c script` leading a process group of its own, as a local server runs; ready once `size` processes are in it. */
async function startGroup(script: string, size: number) {
  const child = spawn("sh", ["-c", script], { detached: true, stdio: "ignore" });
  const pid = child.pid!;
  const exited = exitOf(child);
  await waitFor(() => processTree(pid).length === size, `${size} processes in the group`, 10_000);
  return {
    pid,
    start: processStartTime(pid)!,
    exited,
    running: () => child.exitCode === null && child.signalCode === null,
    cleanup: () => {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // Gone already.
      }
    },
  };
}

/** Runs the watchdog script on `lines` as its whole input: what it does once pi (the end of its input) is gone. */
async function runWatchdogScript(lines: string[], graceSeconds = 2, rollbackSeconds = 30): Promise<Exit> {
  // Detached, as pi starts it: were group 0 ever accepted, it would signal its own group, not the test runner's.
  const watchdog = spawn("/bin/sh", [WATCHDOG_SCRIPT, String(graceSeconds), String(rollbackSeconds)], {
    detached: true,
    stdio: ["pipe", "ignore", "ignore"],
  });
  const exited = exitOf(watchdog);
  watchdog.stdin.end(lines.map((line) => `${line}\n`).join(""));
  return expectExit(exited, "the watchdog");
}

/** The stand-in for pi (./fixtures/watchdog-host.ts), its watchdog's grace `graceSeconds`; `send` waits for its reply. */
function startHost(graceSeconds = 1) {
  const host = spawn(process.execPath, [bundledFixture(WATCHDOG_HOST), String(graceSeconds)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  let replies = 0;
  host.stdout.on("data", (d: Buffer) => (replies += String(d).split("done").length - 1));
  const send = async (line: string) => {
    const expected = replies + 1;
    host.stdin.write(`${line}\n`);
    await waitFor(() => replies >= expected, `the host to do "${line}"`, 30_000);
  };
  return { host, hostExited: exitOf(host), send };
}

function watchdogsUnder(pid: number): number[] {
  return processTree(pid).filter((p) => p !== pid && commandLine(p).includes(WATCHDOG_SCRIPT));
}

describe("the orphan watchdog", { timeout: 120_000 }, () => {
  test("when its input ends, it ends a watched group, a wrapper's background child included, with SIGTERM, and exits", async () => {
    const group = await startGroup("sleep 300 & exec sleep 301", 2);
    try {
      assert.deepEqual(await runWatchdogScript([`+ g ${group.pid} ${group.start}`]), { code: 0, signal: null });
      assert.equal((await expectExit(group.exited, "the group leader")).signal, "SIGTERM");
      await waitFor(() => !groupHasLiveMember(group.pid), "the background child to be gone too");
    } finally {
      group.cleanup();
    }
  });

  test("what ignores SIGTERM gets SIGKILL after the grace", async () => {
    const group = await startGroup("trap '' TERM; sleep 300 & exec sleep 301", 2);
    try {
      assert.deepEqual(await runWatchdogScript([`+ g ${group.pid} ${group.start}`], 1), { code: 0, signal: null });
      assert.equal((await expectExit(group.exited, "the group leader")).signal, "SIGKILL");
      await waitFor(() => !groupHasLiveMember(group.pid), "the background child to be gone too");
    } finally {
      group.cleanup();
    }
  });

  test("told pi is quitting, it lets a group end on its own within the grace: no signal", async () => {
    const done = path.join(home.dir, `done-${randomUUID()}`);
    // The leader exits by itself once the file exists, as a server does a moment after its input ends.
    const group = await startGroup(`sleep 300 & while [ ! -e '${done}' ]; do sleep 0.05; done; kill $!`, 2);
    try {
      const watchdog = spawn("/bin/sh", [WATCHDOG_SCRIPT, "30", "30"], {
        detached: true,
        stdio: ["pipe", "ignore", "ignore"],
      });
      const exited = exitOf(watchdog);
      watchdog.stdin.end(`+ g ${group.pid} ${group.start}\n+ q\n`);
      // Its input has ended: without `+ q` the group would be sent SIGTERM now.
      await waitFor(() => watchdog.stdin.writableFinished, "the watchdog's input to end");
      writeFileSync(done, "");
      assert.deepEqual(await expectExit(group.exited, "the group leader"), { code: 0, signal: null });
      assert.deepEqual(await expectExit(exited, "the watchdog"), { code: 0, signal: null });
    } finally {
      group.cleanup();
    }
  });

  test("told pi is quitting, it sends SIGTERM after the grace to what outlives its input", async () => {
    const group = await startGroup("sleep 300 & exec sleep 301", 2);
    try {
      assert.deepEqual(await runWatchdogScript([`+ g ${group.pid} ${group.start}`, "+ q"], 1), {
        code: 0,
        signal: null,
      });
      assert.equal((await expectExit(group.exited, "the group leader")).signal, "SIGTERM");
    } finally {
      group.cleanup();
    }
  });

  test("told pi quits and then that it does not (a session started after all), it sends SIGTERM at once again", async () => {
    const group = await startGroup("sleep 300 & exec sleep 301", 2);
    try {
      // A grace longer than the wait for the exit below: only `- q` lets the SIGTERM come before it.
      const ended = runWatchdogScript([`+ g ${group.pid} ${group.start}`, "+ q", "- q"], 60);
      assert.equal((await expectExit(group.exited, "the group leader")).signal, "SIGTERM");
      assert.deepEqual(await ended, { code: 0, signal: null });
    } finally {
      group.cleanup();
    }
  });

  test("npm installing for npx gets time to roll the install back; a program npm runs that ignores SIGTERM is still killed", async () => {
    const temp = tempDir();
    const npx = path.join(REPO_ROOT, "test", "fixtures", "fake-npx.sh");
    const rolledBack = path.join(temp.dir, "rolled-back");
    const env = `FAKE_NPX_ROLLED_BACK='${rolledBack}' FAKE_NPX_ROLLBACK_SECONDS=2`;
    const installing = await startGroup(`${env} exec '${npx}' '${path.join(temp.dir, "never")}' sleep 300`, 1);
    // The same npm once the package's program runs below it: its program ignores SIGTERM, and so gets SIGKILL.
    const running = await startGroup(`exec '${npx}' 0 sh -c "trap '' TERM; sleep 300"`, 3);
    try {
      await waitFor(() => existsSync(`${rolledBack}.ready`), "npm to be ready to roll back");
      const watched = [installing, running].map((g) => `+ g ${g.pid} ${g.start}`);
      assert.deepEqual(await runWatchdogScript(watched, 1, 5), { code: 0, signal: null });
      assert.ok(existsSync(rolledBack), "npm finished its rollback");
      assert.equal((await expectExit(installing.exited, "npm")).code, 1);
      await waitFor(() => !groupHasLiveMember(running.pid), "the running program to be killed");
    } finally {
      installing.cleanup();
      running.cleanup();
      temp.cleanup();
    }
  });

  test("a single process is ended by its pid", async () => {
    const sleeper = spawn("sleep", ["300"], { stdio: "ignore" });
    const exited = exitOf(sleeper);
    try {
      await runWatchdogScript([`+ p ${sleeper.pid} ${processStartTime(sleeper.pid!)}`]);
      assert.equal((await expectExit(exited, "the process")).signal, "SIGTERM");
    } finally {
      sleeper.kill("SIGKILL");
    }
  });

  test("a group whose leader has exited and been reaped is still ended, by its group id", async () => {
    // The leader starts a background child (in its group) and exits; this process, its parent, reaps it.
    const leader = spawn("sh", ["-c", "sleep 300 & echo $!"], { detached: true, stdio: ["ignore", "pipe", "ignore"] });
    const start = processStartTime(leader.pid!)!;
    let out = "";
    leader.stdout.on("data", (d: Buffer) => (out += d));
    await expectExit(exitOf(leader), "the group leader");
    const member = Number(out.trim());
    try {
      assert.equal(processStartTime(leader.pid!), undefined, "the leader is reaped, not a zombie");
      assert.ok(groupHasLiveMember(leader.pid!), "its background child lives on in the group");
      assert.deepEqual(await runWatchdogScript([`+ g ${leader.pid} ${start}`]), { code: 0, signal: null });
      await waitFor(() => !isAlive(member), "the group's remaining member to be ended");
    } finally {
      try {
        process.kill(-leader.pid!, "SIGKILL");
      } catch {
        // Gone already.
      }
    }
  });

  test("it ends every process carrying pi's mark; another pi's mark, and a mark pi took back, are left alone", async () => {
    const token = () => randomBytes(16).toString("hex");
    const [ours, theirs, takenBack] = [token(), token(), token()];
    const sleeper = (mark: string) => {
      const child = spawn("sleep", ["300"], { stdio: "ignore", env: { PATH: process.env.PATH, [OWNER_ENV]: mark } });
      return { child, exited: exitOf(child) };
    };
    const [marked, other, kept] = [sleeper(`${ours}-3`), sleeper(`${theirs}-1`), sleeper(`${takenBack}-1`)];
    try {
      await waitFor(() => [marked, other, kept].every(({ child }) => isAlive(child.pid!)), "the sleepers to start");
      // A mark that is not 32 hex digits is ignored (it would become part of a grep pattern): the last valid one holds.
      await runWatchdogScript([`+ m ${ours}`, `+ m ${theirs.slice(0, 8)}.*`]);
      assert.equal((await expectExit(marked.exited, "the marked process")).signal, "SIGTERM");
      await runWatchdogScript([`+ m ${takenBack}`, `- m ${takenBack}`]);
      for (const { child } of [other, kept]) assert.ok(isAlive(child.pid!), `${child.pid} still runs`);
    } finally {
      for (const { child } of [marked, other, kept]) child.kill("SIGKILL");
    }
  });

  test(
    "a process of another user that carries pi's mark is left alone, by the watchdog and by pi",
    { skip: process.getuid?.() !== 0 && "only root can start a process as another user" },
    async () => {
      const mark = `${randomBytes(16).toString("hex")}-1`;
      const env = { PATH: process.env.PATH, [OWNER_ENV]: mark };
      const stranger = spawn("sleep", ["300"], { stdio: "ignore", env, uid: 65534, gid: 65534 });
      const own = spawn("sleep", ["300"], { stdio: "ignore", env });
      try {
        await waitFor(() => isAlive(stranger.pid!) && isAlive(own.pid!), "the sleepers to start");
        assert.deepEqual(
          markedProcesses(mark).map((p) => p.pid),
          [own.pid],
        );
        const ownExit = exitOf(own);
        await runWatchdogScript([`+ m ${mark.slice(0, -2)}`]);
        assert.equal((await expectExit(ownExit, "our marked process")).signal, "SIGTERM");
        assert.ok(isAlive(stranger.pid!), "the other user's process still runs");
      } finally {
        stranger.kill("SIGKILL");
        own.kill("SIGKILL");
      }
    },
  );

  test("a forgotten target, a pid now another process's (another start time) and lines it cannot use are left alone", async () => {
    const [forgotten, reused, junk, watched] = await Promise.all(
      [1, 2, 3, 4].map(() => startGroup("exec sleep 300", 1)),
    );
    try {
      const exit = await runWatchdogScript([
        `+ g ${forgotten!.pid} ${forgotten!.start}`,
        `- g ${forgotten!.pid}`,
        `+ g ${reused!.pid} ${Number(reused!.start) + 1}`,
        // Unknown kind, bad start time, no start time, a leading zero, and group 0 (the watchdog's own).
        `+ x ${junk!.pid} -`,
        `+ g ${junk!.pid} 12x`,
        `+ g ${junk!.pid}`,
        `+ g 0${junk!.pid} -`,
        "+ g 0 -",
        `+ g ${watched!.pid} ${watched!.start}`,
      ]);
      assert.deepEqual(exit, { code: 0, signal: null }, "the watchdog did not signal its own group");
      assert.equal((await expectExit(watched!.exited, "the watched group's leader")).signal, "SIGTERM");
      for (const group of [forgotten!, reused!, junk!]) assert.ok(group.running(), `group ${group.pid} still runs`);
    } finally {
      for (const group of [forgotten, reused, junk, watched]) group?.cleanup();
    }
  });

  test("at its end it removes the sandbox's mount points still empty; one filled, forgotten or a symlink stays", async () => {
    const tmp = tempDir();
    const at = (name: string) => path.join(tmp.dir, name);
    try {
      // A later sandbox's mount point inside an earlier one's directory comes after it, and goes first.
      for (const dir of ["empty dir", "outer", "full dir"]) mkdirSync(at(dir));
      for (const file of ["empty", "outer/inner", "forgotten", "target"]) writeFileSync(at(file), "");
      writeFileSync(at("filled"), "the user's own");
      writeFileSync(at("full dir/kept"), "");
      symlinkSync(at("target"), at("link"));
      const watched = ["empty", "empty dir", "outer", "outer/inner", "filled", "full dir", "forgotten", "link"];
      const exit = await runWatchdogScript([...watched.map((name) => `+ f ${at(name)}`), `- f ${at("forgotten")}`]);
      assert.deepEqual(exit, { code: 0, signal: null });
      assert.deepEqual(readdirSync(tmp.dir).sort(), ["filled", "forgotten", "full dir", "link", "target"]);
      assert.deepEqual(readdirSync(at("full dir")), ["kept"]);
    } finally {
      tmp.cleanup();
    }
  });

  test("at its end it removes a server's temp directory with what it holds; one forgotten or a symlink stays", async () => {
    const tmp = tempDir();
    const at = (name: string) => path.join(tmp.dir, name);
    try {
      for (const dir of ["temp/deep", "forgotten", "target"]) mkdirSync(at(dir), { recursive: true });
      for (const file of ["temp/file", "temp/deep/file", "target/file"]) writeFileSync(at(file), "the server's");
      symlinkSync(at("target"), at("link"));
      const lines = ["temp", "forgotten", "link", "target/file"].map((name) => `+ t ${at(name)}`);
      // A file named as a temp directory is removed too: what pi names is its own.
      const exit = await runWatchdogScript([...lines, `- t ${at("forgotten")}`]);
      assert.deepEqual(exit, { code: 0, signal: null });
      assert.deepEqual(readdirSync(tmp.dir).sort(), ["forgotten", "link", "target"]);
      assert.deepEqual(readdirSync(at("target")), []);
    } finally {
      tmp.cleanup();
    }
  });

  test("a mount point another sandbox still mounts on is waited for: removed from outside, its deny would be lifted there", async () => {
    // Another pi's sandbox in the same project binds over the empty files the first one's made (they were there when
    // it started). Were one removed now, the kernel would take that bind away, and its server could write the path.
    const tmp = tempDir();
    const at = (name: string) => path.join(tmp.dir, "a project", name);
    let other: ChildProcess | undefined;
    let watchdog: ChildProcess | undefined;
    try {
      mkdirSync(at("held dir"), { recursive: true });
      for (const file of ["held", "free"]) writeFileSync(at(file), "");
      const binds = ["--ro-bind", "/dev/null", at("held"), "--ro-bind", tmp.dir, at("held dir")];
      other = spawn("bwrap", ["--dev-bind", "/", "/", ...binds, "sleep", "300"], { stdio: "ignore" });
      // bubblewrap runs the command as its child, in the new mount namespace.
      const mounted = () =>
        processTree(other!.pid!).some((pid) => {
          const mounts = readFileSync(`/proc/${pid}/mountinfo`, "utf8");
          return mounts.includes("a\\040project/held\\040dir");
        });
      await waitFor(() => isAlive(other!.pid!) && mounted(), "the other sandbox's mounts");
      watchdog = spawn("/bin/sh", [WATCHDOG_SCRIPT, "2", "30"], {
        detached: true,
        stdio: ["pipe", "ignore", "ignore"],
      });
      const exited = exitOf(watchdog);
      watchdog.stdin!.end(["held", "held dir", "free"].map((name) => `+ f ${at(name)}\n`).join(""));
      await waitFor(() => !existsSync(at("free")), "the watchdog to remove what nothing mounts on");
      assert.deepEqual(readdirSync(at(".")).sort(), ["held", "held dir"]);
      assert.ok(isAlive(watchdog.pid!), "the watchdog waits for the other sandbox");
      const sandbox = processTree(other.pid!);
      for (const pid of sandbox) killIfAlive(pid);
      assert.deepEqual(await expectExit(exited, "the watchdog"), { code: 0, signal: null });
      assert.deepEqual(readdirSync(at(".")), [], "once that sandbox has ended they go");
    } finally {
      for (const child of [other, watchdog]) if (child?.pid) killIfAlive(child.pid);
      tmp.cleanup();
    }
  });

  test("it starts with the first target, in a session of its own, and exits once nothing is watched", async () => {
    const group = await startGroup("exec sleep 300", 1);
    const watchdog = new OrphanWatchdog({ graceSeconds: 1 });
    try {
      assert.equal(watchdog.pid, undefined, "no watchdog while nothing is watched");
      const earlier = watchdog.watch("group", group.pid);
      const pid = watchdog.pid!;
      assert.ok(isAlive(pid));
      assert.equal(sessionOf(pid), pid, "the watchdog leads a session of its own");
      // The same pid watched again (a new server got the id of one still being shut down): the old forget is stale.
      const watch = watchdog.watch("group", group.pid);
      earlier.forget();
      assert.equal(watchdog.pid, pid, "a stale forget leaves the newer target watched");
      watch.forget();
      await waitFor(() => !isAlive(pid), "the watchdog to exit");
      assert.ok(group.running(), "what it no longer watched was left alone");
    } finally {
      group.cleanup();
    }
  });

  test("the watchdog of a process killed with SIGKILL ends what it watched; a killed watchdog is replaced and told everything", async () => {
    const [first, second] = await Promise.all([
      startGroup("sleep 300 & exec sleep 301", 2),
      startGroup("exec sleep 300", 1),
    ]);
    const { host, hostExited, send } = startHost();
    try {
      await send(`watch group ${first.pid}`);
      const [original] = watchdogsUnder(host.pid!);
      assert.ok(original, "the host started a watchdog");
      process.kill(original, "SIGKILL");
      await waitFor(() => watchdogsUnder(host.pid!).some((pid) => pid !== original), "a new watchdog");
      const [replacement] = watchdogsUnder(host.pid!);
      await send(`watch group ${second.pid}`);
      assert.deepEqual(watchdogsUnder(host.pid!), [replacement], "one watchdog for both");
      host.kill("SIGKILL");
      await expectExit(hostExited, "the host");
      assert.equal(
        (await expectExit(first.exited, "the first group's leader")).signal,
        "SIGTERM",
        "the replacement was told about the first group",
      );
      assert.equal((await expectExit(second.exited, "the second group's leader")).signal, "SIGTERM");
      await waitFor(() => !groupHasLiveMember(first.pid), "the first group's background child to be gone");
      await waitFor(() => !isAlive(replacement!), "the watchdog to exit");
    } finally {
      host.kill("SIGKILL");
      first.cleanup();
      second.cleanup();
    }
  });
  test("a watchdog replaced after pi said it quits is told so too: it lets the group end on its own", async () => {
    const done = path.join(home.dir, `done-${randomUUID()}`);
    const group = await startGroup(`sleep 300 & while [ ! -e '${done}' ]; do sleep 0.05; done; kill $!`, 2);
    const { host, hostExited, send } = startHost(30);
    try {
      await send(`watch group ${group.pid}`);
      await send("quit");
      const [original] = watchdogsUnder(host.pid!);
      assert.ok(original, "the host started a watchdog");
      process.kill(original, "SIGKILL");
      await waitFor(() => watchdogsUnder(host.pid!).some((pid) => pid !== original), "a new watchdog");
      host.kill("SIGKILL");
      await expectExit(hostExited, "the host");
      // Told only of the group, the replacement would send SIGTERM now; told pi quit, it waits for the group first.
      writeFileSync(done, "");
      assert.deepEqual(await expectExit(group.exited, "the group leader"), { code: 0, signal: null });
    } finally {
      host.kill("SIGKILL");
      group.cleanup();
    }
  });

  // A program that embeds pi, or a test process, goes on after a session that quit: a server it starts later must not
  // be taken for one of the quitting pi's, whose close leaves it to the watchdog and resolves before it has ended.
  test("a session started after a quit, in the same process, waits for its servers to end again", async () => {
    // What the quit left to the watchdog, still watched: the quit's own servers had not all ended yet.
    const left = await startGroup("exec sleep 300", 1);
    const watch = orphanWatchdog.watch("group", left.pid);
    orphanWatchdog.handOver();
    const tmp = tempDir();
    const config = path.join(tmp.dir, "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { stubborn: fixtureEntry("stubborn") } }));
    const bridge = testBridge(tmp.dir, { extraPath: config });
    try {
      await bridge.start();
      const pid = bridge.connections.get("stubborn")?.pid;
      assert.ok(pid, "the server runs");
      // `/new`: the session ends, the process goes on. The stubborn server ignores its input's end and SIGTERM.
      await bridge.shutdown();
      assert.equal(isAlive(pid), false, "ended (SIGKILL) before the session's end resolved");
    } finally {
      watch.forget();
      orphanWatchdog.takeBack();
      left.cleanup();
      tmp.cleanup();
    }
  });

  // Two sessions at once in one process (an SDK host, an in-process subagent): one quitting is not the process ending.
  test("a session that quits leaves the servers of another session still running in the process to their own close", async () => {
    const tmp = tempDir();
    const config = path.join(tmp.dir, "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { stubborn: fixtureEntry("stubborn") } }));
    const quitting = testBridge(tmp.dir, { extraPath: config });
    const other = testBridge(tmp.dir, { extraPath: config });
    try {
      await Promise.all([quitting.start(), other.start()]);
      const pid = other.connections.get("stubborn")?.pid;
      assert.ok(pid, "the other session's server runs");
      await quitting.shutdown({ quitting: true });
      // `/new` in the other session: its end waits for its servers, the stubborn one ignoring its input's end.
      await other.shutdown();
      assert.equal(isAlive(pid), false, "ended (SIGKILL) before the other session's end resolved");
    } finally {
      await Promise.all([quitting.shutdown(), other.shutdown()]);
      orphanWatchdog.takeBack();
      tmp.cleanup();
    }
  });
});

/** Starts `pi --mode rpc` with one wrapped server and waits until pi answers (its servers connected). */
async function startPi() {
  const tmp = tempDir();
  const mark = randomUUID();
  const config = path.join(tmp.dir, "mcp.json");
  // A background child in the server's group, one that left it (setsid), and the server itself, exec'd by the shell.
  const script = `setsid sleep 300 & sleep 300 & exec node '${HELLO_SERVER}' ${mark}`;
  writeFileSync(
    config,
    JSON.stringify({ mcpServers: { wrapped: { command: "sh", args: ["-c", script], env: { [MARK]: mark } } } }),
  );
  const pi = spawn(
    process.execPath,
    [PI_CLI, "--mode", "rpc", "--no-session", "-e", EXTENSION_DIR, "--mcp-config", config],
    {
      cwd: tmp.dir,
      env: {
        ...process.env,
        HOME: home.dir,
        PI_CODING_AGENT_DIR: path.join(home.dir, "agent"),
        PI_OFFLINE: "1",
        PI_MCP_STARTUP_BUDGET_MS: "60000",
      },
      stdio: ["pipe", "pipe", "ignore"],
    },
  );
  let stdout = "";
  pi.stdout.on("data", (d) => (stdout += d));
  const exited = new Promise<void>((resolve) => pi.once("exit", () => resolve()));
  const stop = () => {
    if (pi.exitCode === null && pi.signalCode === null) pi.kill("SIGKILL");
    for (const pid of processesWithEnv(MARK, mark)) killIfAlive(pid);
    tmp.cleanup();
  };
  try {
    pi.stdin.write(`${JSON.stringify({ id: "ready", type: "get_state" })}\n`);
    await waitFor(() => stdout.includes('"id":"ready"'), "pi to answer over RPC", 60_000);
    await waitFor(
      () => processesWithEnv(MARK, mark).length === 3,
      "the server, its background child and the setsid child",
      10_000,
    );
  } catch (error) {
    stop();
    throw error;
  }
  const watchdogs = processTree(pi.pid!).filter((pid) => commandLine(pid).includes(PI_WATCHDOG_SCRIPT));
  return { pi, exited, stop, servers: () => processesWithEnv(MARK, mark), watchdogs };
}

async function expectNothingLeft(run: Awaited<ReturnType<typeof startPi>>, servers: number[]): Promise<void> {
  await waitFor(() => run.servers().length === 0, "every server process to be gone", 10_000).catch((error) => {
    throw new Error(`${(error as Error).message}\n${describeProcesses(run.servers())}`);
  });
  await waitFor(() => run.watchdogs.every((pid) => !isAlive(pid)), "the watchdog to exit", 10_000);
  for (const pid of servers) assert.equal(isAlive(pid), false, `${pid} is gone`);
}

describe(`no orphans when pi is killed (pi ${PI_LINE})`, { timeout: 180_000 }, () => {
  after(() => home.cleanup());

  for (const signal of ["SIGKILL", "SIGINT"] as const) {
    test(`${signal} to pi: no server process, grandchild or watchdog is left`, async () => {
      const run = await startPi();
      try {
        assert.equal(run.watchdogs.length, 1, "one watchdog, started by pi");
        const [watchdog] = run.watchdogs;
        assert.notEqual(sessionOf(watchdog!), sessionOf(run.pi.pid!), "the watchdog has a session of its own");
        const servers = run.servers();
        run.pi.kill(signal);
        await expectExit(run.exited, "pi");
        assert.equal(run.pi.signalCode, signal, "pi ended by the signal, without a shutdown of its own");
        await expectNothingLeft(run, servers);
      } finally {
        run.stop();
      }
    });
  }

  test("pi -p does not wait for a server that outlives its input: after pi's exit the watchdog gives it its grace, then SIGTERM", async () => {
    const tmp = tempDir();
    try {
      const log = path.join(tmp.dir, "server.log");
      const config = path.join(tmp.dir, "mcp.json");
      const lingering = { ...fixtureEntry("lingering"), env: { FIXTURE_LOG: log } };
      writeFileSync(config, JSON.stringify({ mcpServers: { lingering } }));
      const { code, output } = await runPiCli(["-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp"], {
        home: home.dir,
        cwd: tmp.dir,
        env: GENEROUS_BUDGET,
      });
      assert.equal(code, 0, output);
      assert.match(output, /lingering/);
      const [server] = readLog(log).filter((e) => e.event === "start");
      await waitFor(() => !isAlive(server!.pid), "the server to be ended by the watchdog", 20_000);
      const events = readLog(log);
      const sigterm = events.find((e) => e.event === "sigterm");
      assert.deepEqual(
        events.map((e) => e.event),
        ["start", "stdin-end", "sigterm"],
      );
      // The watchdog sends SIGTERM once pi (the server's parent) is gone; a pi that waited for the server would have sent
      // it itself after one grace. A pi slow to exit (a busy machine) sends it only after its five graces.
      const waited = (sigterm!.at as number) - (events.find((e) => e.event === "stdin-end")!.at as number);
      if (sigterm!.ppid === server!.ppid)
        assert.ok(waited > 5000, `pi sent SIGTERM ${waited} ms after the input ended`);
    } finally {
      tmp.cleanup();
    }
  });

  test('pi -p "/mcp test" waits neither for the test\'s own server that outlives its input nor for the configured one', async () => {
    const tmp = tempDir();
    try {
      const log = path.join(tmp.dir, "server.log");
      const config = path.join(tmp.dir, "mcp.json");
      const lingering = { ...fixtureEntry("lingering"), env: { FIXTURE_LOG: log } };
      writeFileSync(config, JSON.stringify({ mcpServers: { lingering } }));
      const args = ["-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp test lingering"];
      const { code, output } = await runPiCli(args, { home: home.dir, cwd: tmp.dir, env: GENEROUS_BUDGET });
      assert.equal(code, 0, output);
      assert.match(output, /MCP server 'lingering' works/);
      const starts = readLog(log).filter((e) => e.event === "start");
      assert.equal(starts.length, 2, "the configured server and the test's own");
      await waitFor(() => starts.every((s) => !isAlive(s.pid)), "both to be ended by the watchdog", 20_000);
      for (const start of starts) {
        const events = readLog(log).filter((e) => e.pid === start.pid);
        const sigterm = events.find((e) => e.event === "sigterm");
        const waited = (sigterm!.at as number) - (events.find((e) => e.event === "stdin-end")!.at as number);
        // From pi itself only after its five graces (a pi slow to exit), never after one (a pi that waited for it).
        if (sigterm!.ppid === start.ppid)
          assert.ok(waited > 5000, `pi sent SIGTERM ${waited} ms after the input ended`);
      }
    } finally {
      tmp.cleanup();
    }
  });

  test("a clean shutdown (SIGTERM) ends the servers, and the watchdog exits with them", async () => {
    const run = await startPi();
    try {
      assert.equal(run.watchdogs.length, 1);
      const servers = run.servers();
      run.pi.kill("SIGTERM");
      await expectExit(run.exited, "pi");
      await expectNothingLeft(run, servers);
    } finally {
      run.stop();
    }
  });
});
