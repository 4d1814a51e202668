/**
 * The real `pi --mode rpc` with the extension: no orphaned server after SIGTERM, whether the servers are connected or
 * still connecting, and a server slower than the startup budget announced when it is ready.
 */
import assert from "node:assert/strict";
import { execSync, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { EXTENSION_DIR, fixtureEntry, isAlive, readLog, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";
import { PI_LINE } from "./pi-line.ts";
import { piCliIn } from "./pi-print.ts";
import { PI_CLI } from "./tmux.ts";

const home = tempDir("mcp-bridge-home-");
const { env: piEnv } = piCliIn(home.dir);

describe(`pi --mode rpc (pi ${PI_LINE})`, { timeout: 300_000 }, () => {
  after(() => home.cleanup());

  /** Starts `pi --mode rpc` on a config with two servers that each start a child process (one behind a shell wrapper). */
  function startRpcPi(extraServers: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}, args: string[] = []) {
    const tmp = tempDir();
    const log = path.join(tmp.dir, "events.jsonl");
    const direct = fixtureEntry("grandchild");
    const quoted = [direct.command, ...direct.args].map((a) => `'${a}'`).join(" ");
    const config = path.join(tmp.dir, "mcp.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          direct: { ...direct, env: { FIXTURE_LOG: log } },
          // `; exit $?` keeps the shell alive as the server's parent, as npx stays the parent of a package's server.
          wrapped: { command: "sh", args: ["-c", `${quoted}; exit $?`], env: { FIXTURE_LOG: log } },
          ...extraServers,
        },
      }),
    );
    const pi = spawn(
      process.execPath,
      [PI_CLI, "--mode", "rpc", "-e", EXTENSION_DIR, "--mcp-config", config, ...args],
      {
        cwd: tmp.dir,
        env: { ...piEnv(), ...env },
        stdio: ["pipe", "pipe", "ignore"],
      },
    );
    let stdout = "";
    pi.stdout.on("data", (d) => (stdout += d));
    const exited = new Promise<void>((resolve) => pi.once("exit", () => resolve()));
    const pids = () =>
      readLog(log).flatMap((e) =>
        e.event === "start" ? [e.pid] : e.event === "grandchild" ? [e.childPid as number] : [],
      );
    return { tmp, log, pi, exited, pids, stdout: () => stdout };
  }

  async function expectAllGone(pids: number[]): Promise<void> {
    await waitFor(() => pids.every((pid) => !isAlive(pid)), "every server process to be gone", 10_000).catch(
      (error) => {
        console.error(execSync(`ps -o pid,ppid,stat,args -p ${pids.join(",")}`).toString());
        throw error;
      },
    );
  }

  test("SIGTERM to a running pi ends every server process, including what a wrapper and a server started", async () => {
    const run = startRpcPi();
    try {
      // Ready: pi answers RPC commands only after startup, with its own signal handlers in place.
      run.pi.stdin.write(`${JSON.stringify({ id: "1", type: "get_state" })}\n`);
      await waitFor(() => run.stdout().includes('"id":"1"'), "pi to answer over RPC", 60_000);
      const pids = run.pids();
      assert.equal(pids.length, 4);
      for (const pid of pids) assert.ok(isAlive(pid), `${pid} runs before SIGTERM`);
      run.pi.kill("SIGTERM");
      await run.exited;
      await expectAllGone(pids);
    } finally {
      if (run.pi.exitCode === null) run.pi.kill("SIGKILL");
      run.tmp.cleanup();
    }
  });

  test("SIGTERM while servers are still connecting ends them too", async () => {
    const run = startRpcPi({ mute: { ...fixtureEntry("never-init"), timeout: 60_000 } });
    try {
      // Both grandchild servers are up, the mute one holds pi's startup: pi's own handlers are not installed yet.
      await waitFor(
        () => readLog(run.log).filter((e) => e.event === "grandchild").length === 2,
        "the servers to start",
        60_000,
      );
      assert.equal(run.stdout(), "", "pi is still starting");
      const pids = run.pids();
      run.pi.kill("SIGTERM");
      await run.exited;
      assert.equal(run.pi.signalCode, "SIGTERM", "pi still ends by the signal");
      await expectAllGone(pids);
    } finally {
      if (run.pi.exitCode === null) run.pi.kill("SIGKILL");
      run.tmp.cleanup();
    }
  });

  test("a server that connects after the startup budget is announced when it is ready, and the footer counts it", async () => {
    // It answers `initialize` once the test says so: on a busy machine pi's own start can outlast any fixed delay.
    const gateDir = tempDir();
    const gate = path.join(gateDir.dir, "ready");
    const slow = {
      command: process.execPath,
      args: [path.join(REPO_ROOT, "bench", "slow-start-server.mjs")],
      env: { START_GATE: gate },
    };
    const run = startRpcPi({ slow }, { PI_MCP_STARTUP_BUDGET_MS: "1000" });
    try {
      await waitFor(
        () => run.stdout().includes("slow: still connecting; its tools appear when it is ready"),
        "the startup notice",
        60_000,
      );
      writeFileSync(gate, "");
      // Alone, or named with the others that were late too (on a busy machine they all are).
      await waitFor(
        () => /MCP server 'slow' is ready: 1 tool|MCP servers ready: [^"]*'slow' \(1 tool\)/.test(run.stdout()),
        "the notice that it is ready",
        60_000,
      );
      await waitFor(() => run.stdout().includes('"statusText":"MCP 3/3"'), "the footer to count it", 10_000);
      run.pi.kill("SIGTERM");
      await run.exited;
    } finally {
      if (run.pi.exitCode === null) run.pi.kill("SIGKILL");
      run.tmp.cleanup();
      gateDir.cleanup();
    }
  });
  /** A server that answers `initialize` once the test writes `gate`: still starting for as long as the test wants. */
  function gatedServer(gate: string, extra: Record<string, unknown> = {}) {
    const args = [path.join(REPO_ROOT, "bench", "slow-start-server.mjs")];
    return { command: process.execPath, args, env: { START_GATE: gate }, ...extra };
  }
  const SCRIPTED = ["-e", path.join(REPO_ROOT, "examples", "scripted-model.ts"), "--provider", "scripted"];
  const scripted = [...SCRIPTED, "--model", "demo", "--no-session"];

  /** Sends the scripted model `prompt`; once the call of `tool` has started, opens `gate`; resolves with its answer. */
  async function promptWhileStarting(run: ReturnType<typeof startRpcPi>, prompt: string, tool: string, gate: string) {
    // Every server but the gated one connected: the others' tools are what offers `tool`.
    await waitFor(() => /"statusText":"[^"]*MCP 3\/4/.test(run.stdout()), "the other servers", 60_000);
    run.pi.stdin.write(`${JSON.stringify({ type: "prompt", message: prompt })}\n`);
    const started = `"type":"tool_execution_start","toolCallId"`;
    await waitFor(() => run.stdout().includes(started) && run.stdout().includes(`"toolName":"${tool}"`), tool, 60_000);
    writeFileSync(gate, "");
    // The model's whole answer, once its message has ended (the updates before carry it in parts).
    const answer = () =>
      run
        .stdout()
        .split("\n")
        .filter((line) => line.startsWith('{"type":"message_end"'))
        .map(
          (line) => (JSON.parse(line) as { message: { content: Array<{ text?: string }> } }).message.content[0]?.text,
        )
        .find((text) => text?.startsWith(`${tool} returned: `) || text?.startsWith(`${tool} failed: `));
    await waitFor(() => answer() !== undefined, `the answer of ${tool}`, 60_000);
    return answer()!;
  }

  test("tool_search run while a server still starts waits for it, and finds its tool", async () => {
    const gateDir = tempDir();
    const gate = path.join(gateDir.dir, "ready");
    // Another deferred server's tools are what tool_search is offered for while this one starts.
    const servers = {
      slow: gatedServer(gate, { exposure: "deferred" }),
      other: { ...fixtureEntry(), exposure: "deferred" },
    };
    const run = startRpcPi(servers, { PI_MCP_STARTUP_BUDGET_MS: "1000" }, scripted);
    try {
      const answer = await promptWhileStarting(run, 'tool_search {"names":["mcp_slow_echo"]}', "tool_search", gate);
      assert.match(answer, /tool_search returned: Loaded 1 tool[\s\S]*mcp_slow_echo/, answer);
      assert.doesNotMatch(answer, /no tool|not found/i, answer);
      assert.match(
        run.stdout(),
        /Waiting for MCP servers still starting: slow/,
        "what it waited for, shown while it did",
      );
    } finally {
      run.pi.kill("SIGKILL");
      run.tmp.cleanup();
      gateDir.cleanup();
    }
  });

  test(
    "pi 1.x: a codemode script that calls a tool of a server still starting waits for it, as with pi's built-in MCP",
    { skip: PI_LINE === "1.x" ? false : "pi 0.73 has no codemode" },
    async () => {
      const gateDir = tempDir();
      const gate = path.join(gateDir.dir, "ready");
      // Another codemode server's tools turn codemode on while this one starts.
      const slow = gatedServer(gate, { exposure: "codemode", autoApprove: ["echo"] });
      const servers = { slow, other: { ...fixtureEntry(), exposure: "codemode" } };
      const run = startRpcPi(servers, { PI_MCP_STARTUP_BUDGET_MS: "1000" }, scripted);
      try {
        const script = 'codemode const r = await tools.mcp_slow_echo({text: "hi"}); return r.content[0].text;';
        const answer = await promptWhileStarting(run, script, "codemode", gate);
        assert.match(answer, /codemode returned: Script completed/, answer);
      } finally {
        run.pi.kill("SIGKILL");
        run.tmp.cleanup();
        gateDir.cleanup();
      }
    },
  );
});
