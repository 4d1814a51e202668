/**
 * Project trust in real pi 0.73.1, in-process with the faux model: a project's servers (one eager, one lazy the tool
 * cache does not know) are not spawned until the user trusts them — checked in the process table — whether the user is
 * asked in a UI (recording UI) or runs pi without one (print mode); answers are remembered per project, and a changed
 * definition asks again.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { CHOOSE_FULLY, TRUST_CHOOSE, TRUST_NONE } from "../src/pi/command-trust.ts";
import { type InProcessPi, startInProcessPi } from "./pi-harness.ts";
import { PI_LINE } from "./pi-line.ts";
import { type RunningServer, startStreamableHttp } from "./fixtures/http-servers.ts";
import { RecordingUI } from "./recording-ui.ts";
import { processesWithEnv } from "./tmux.ts";
import { EXTENSION_DIR, helloServer, tempDir, trustFile, waitFor } from "./helpers.ts";

const HELLO = helloServer();
/** Every server of this test carries this variable with its own value, so the process table shows which one runs. */
const MARKER = "MCP_TRUST_TEST";
const run = randomBytes(4).toString("hex");
/** A variable the eager server's arguments read: its name may be shown, its value never. */
const SECRET_VAR = "MCP_TRUST_TEST_SECRET";
const SECRET = `s3cret-${run}`;

const marker = (server: string) => `${run}-${server}`;
const running = (server: string) => processesWithEnv(MARKER, marker(server)).length > 0;

function server(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    command: process.execPath,
    args: [HELLO, `--token=\${${SECRET_VAR}}`],
    env: { [MARKER]: marker(name) },
    ...extra,
  };
}

/** pi 0.73 has no project trust: the bridge asks. pi 1.x decides it itself, and the bridge follows its answer. */
const bridgeAsks = PI_LINE === "1.x" ? "pi 1.x decides project trust itself (tested at the end)" : false;
const piDecides = PI_LINE === "1.x" ? false : "pi 0.73 has no project trust of its own (the bridge asks; tested above)";

describe("project trust (in-process pi, recording UI and print mode)", { timeout: 180_000 }, () => {
  const project = tempDir("mcp-bridge-trust-project-");
  const agentDir = tempDir("mcp-bridge-trust-agent-");
  const projectConfig = path.join(project.dir, ".pi", "mcp.json");
  const originalCwd = process.cwd();
  let pi: InProcessPi | undefined;
  /** A remote project server: its request log shows whether anything connected to it. */
  let remote: RunningServer;
  const web = () => ({ url: remote.url, headers: { "X-Key": `\${${SECRET_VAR}}` } });

  const writeProject = (servers: Record<string, unknown>) =>
    writeFileSync(projectConfig, JSON.stringify({ mcpServers: servers }));

  before(async () => {
    remote = await startStreamableHttp();
    mkdirSync(path.dirname(projectConfig));
    writeProject({ eager: server("eager"), sleepy: server("sleepy", { lazy: true }), web: web() });
    // A user-level server needs no trust: it starts as always, and tells the test when startup has run its course.
    writeFileSync(path.join(agentDir.dir, "mcp.json"), JSON.stringify({ mcpServers: { mine: server("mine") } }));
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.env[SECRET_VAR] = SECRET;
    process.chdir(project.dir);
  });

  after(async () => {
    await pi?.close();
    process.chdir(originalCwd);
    delete process.env[SECRET_VAR];
    await remote?.close();
    for (const dir of [project, agentDir]) dir.cleanup();
  });

  /** pi with the bridge, its session started with `ui` (or, without one, as print mode has it; its printed output kept). */
  async function startPi(ui?: RecordingUI, projectTrusted?: boolean): Promise<{ pi: InProcessPi; printed: string[] }> {
    // One pi at a time, also after a test that failed before closing its own.
    await closePi();
    const started = await startInProcessPi({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [EXTENSION_DIR],
      projectTrusted,
    });
    pi = started;
    const printed: string[] = [];
    const originalLog = console.log;
    console.log = (...args: unknown[]) => printed.push(args.join(" "));
    try {
      await started.session.bindExtensions(ui ? { uiContext: ui.context() } : {});
    } finally {
      console.log = originalLog;
    }
    return { pi: started, printed };
  }

  async function closePi(): Promise<void> {
    await pi?.close();
    pi = undefined;
    await waitFor(
      () => !running("eager") && !running("sleepy") && !running("mine"),
      "every server to stop with pi",
      15_000,
    );
  }

  /** Runs a command and returns what it showed (notices in a UI, printed text without). */
  async function command(current: InProcessPi, text: string, ui?: RecordingUI): Promise<string> {
    const before = ui?.notices.length ?? 0;
    const printed: string[] = [];
    const originalLog = console.log;
    console.log = (...args: unknown[]) => printed.push(args.join(" "));
    try {
      await current.session.prompt(text);
    } finally {
      console.log = originalLog;
    }
    return [...(ui?.notices.slice(before) ?? []), ...printed].join("\n");
  }

  const mcpTools = (current: InProcessPi) =>
    current.session
      .getAllTools()
      .map((t) => t.name)
      .filter((n) => n.startsWith("mcp_"));

  test(
    "asked once in the UI: declined, neither the eager nor the lazy server is spawned, and nothing can start them",
    { skip: bridgeAsks },
    async () => {
      const ui = new RecordingUI();
      ui.answers = [TRUST_NONE];
      const { pi: current } = await startPi(ui);
      // The question runs beside pi's startup; the startup notice follows the answer.
      await waitFor(
        () => ui.notices.some((n) => n.includes("not trusted")),
        "the answer and the startup notice",
        30_000,
      );
      assert.equal(ui.asked.length, 1, ui.asked.join("\n"));
      const question = ui.asked[0]!;
      assert.match(question, /^select: This project \(.*\) defines MCP servers/);
      assert.match(question, /eager {2}\(new\)\n {4}runs: .*hello-server\.mjs --token=\$\{MCP_TRUST_TEST_SECRET\}\n/);
      assert.match(question, /sleepy {2}\(new\)/);
      assert.match(question, /env: MCP_TRUST_TEST \(inline\)/);
      assert.match(question, /reads your variables: \$\{MCP_TRUST_TEST_SECRET\}/);
      assert.match(
        question,
        /web {2}\(new\)\n {4}connects to: http:\/\/127\.0\.0\.1:\d+\/mcp\n {4}headers: X-Key ← \$\{MCP_TRUST_TEST_SECRET\}/,
      );
      assert.doesNotMatch(question, new RegExp(SECRET), "a variable's value is never shown");
      assert.doesNotMatch(question, /mine/, "a user-level server needs no trust");

      assert.ok(running("mine"), "the user's own server runs");
      assert.equal(running("eager"), false, "the untrusted eager server was not spawned");
      assert.equal(running("sleepy"), false, "the untrusted lazy server was not spawned to learn its tools");
      assert.deepEqual(
        mcpTools(current).filter((n) => !n.startsWith("mcp_mine_")),
        [],
        "no tool of an untrusted server is registered",
      );

      const mcp = current.session.extensionRunner.getCommand("mcp");
      const completions = ((await mcp?.getArgumentCompletions?.("trust ")) ?? []) as Array<{ value: string }>;
      assert.deepEqual(
        completions.map((c) => c.value),
        ["trust eager", "trust sleepy", "trust web"],
        "only project servers are offered",
      );
      assert.equal((completions[0] as { description?: string }).description, "not trusted", "as /mcp shows it");
      // /mcp trust takes several names: the next one completes too, without those already typed.
      const more = ((await mcp?.getArgumentCompletions?.("trust eager ")) ?? []) as Array<{ value: string }>;
      assert.deepEqual(
        more.map((c) => c.value),
        ["trust eager sleepy", "trust eager web", "trust eager --sandboxed"],
      );

      const listing = await command(current, "/mcp list", ui);
      assert.match(listing, /eager +🔒/);
      assert.match(listing, /eager {2}not trusted/);
      assert.match(listing, /not trusted, so not started: \/mcp trust eager starts it\n {4}runs: /);
      for (const [sub, name] of [
        ["reconnect", "eager"],
        ["test", "eager"],
        ["reconnect", "web"],
        ["test", "web"],
        ["auth", "web"],
      ]) {
        const said = await command(current, `/mcp ${sub} ${name}`, ui);
        assert.match(
          said,
          new RegExp(
            `MCP server '${name}' from project config .* is not trusted, so it was not started\\. Run /mcp trust ${name}`,
          ),
          sub,
        );
      }
      const enabled = await command(current, "/mcp enable sleepy", ui);
      assert.match(enabled, /did not start: MCP server 'sleepy' .* is not trusted/);
      assert.equal(running("eager") || running("sleepy"), false, "no subcommand started a server");
      assert.deepEqual(remote.requests, [], "nothing connected to the remote server");
      await closePi();
    },
  );

  test(
    "a declined server is not asked about again; /mcp trust starts them all, and trusted servers start by themselves next time",
    { skip: bridgeAsks },
    async () => {
      const ui = new RecordingUI();
      let { pi: current } = await startPi(ui);
      await waitFor(() => ui.notices.some((n) => n.includes("not trusted")), "the startup notice", 30_000);
      assert.deepEqual(ui.asked, [], "the answer was remembered");
      assert.equal(running("eager") || running("sleepy"), false);

      const said = await command(current, "/mcp trust", ui);
      assert.match(
        said,
        /Trusted 3 MCP servers of .*\n {2}eager: trusted, connected, 2 tools\n {2}sleepy: trusted, (starting; its tools appear when it is ready|connected, 2 tools)\n {2}web: trusted, connected/,
      );
      assert.ok(running("eager"), "the eager server runs once trusted");
      // A remote server has no process to sandbox: trusted as it is, and not said to be sandboxed.
      assert.match(await command(current, "/mcp trust web --sandboxed", ui), /^Already trusted: web\.$/m);
      // The lazy server is unknown to the tool cache: trusted, it starts once in the background to learn its tools.
      await waitFor(() => running("sleepy"), "the lazy server to start and learn its tools");
      await waitFor(() => mcpTools(current).includes("mcp_sleepy_greet"), "the lazy server's tools");
      assert.ok(statSync(trustFile(agentDir.dir)).mode % 0o1000 === 0o600, "the answers are private to the user");
      await closePi();

      const again = new RecordingUI();
      ({ pi: current } = await startPi(again));
      assert.deepEqual(again.asked, []);
      assert.ok(running("eager"), "trusted: started with pi, no question");
      assert.ok(mcpTools(current).includes("mcp_sleepy_greet"), "the lazy server's tools come from the cache");
      await closePi();
    },
  );

  test(
    "a changed command asks again, only about that server; /mcp untrust stops it",
    { skip: bridgeAsks },
    async () => {
      writeProject({
        eager: server("eager", { args: [HELLO, "--changed"] }),
        sleepy: server("sleepy", { lazy: true }),
        web: web(),
      });
      const ui = new RecordingUI();
      ui.answers = [TRUST_CHOOSE, CHOOSE_FULLY];
      const { pi: current } = await startPi(ui);
      await waitFor(() => running("eager"), "the changed server, once trusted in the dialog", 30_000);
      assert.equal(ui.asked.length, 2, ui.asked.join("\n"));
      assert.match(
        ui.asked[0]!,
        /eager {2}\(changed since you last answered\)\n {4}runs: .*hello-server\.mjs --changed/,
      );
      assert.doesNotMatch(ui.asked[0]!, /sleepy/, "the unchanged server stays trusted");
      assert.match(ui.asked[1]!, /^select: Trust MCP server 'eager'\?\nruns: .*--changed/);
      await waitFor(() => mcpTools(current).includes("mcp_eager_greet"), "the trusted server's tools");

      const said = await command(current, "/mcp untrust eager", ui);
      assert.match(said, /No longer trusted, stopped: eager/);
      await waitFor(() => !running("eager"), "the untrusted server to stop");
      assert.equal(
        current.session.getActiveToolNames().includes("mcp_eager_greet"),
        false,
        "its tools left the model's set",
      );
      const stored = JSON.parse(readFileSync(trustFile(agentDir.dir), "utf8")) as {
        projects: Record<string, Record<string, { trusted: boolean }>>;
      };
      assert.deepEqual(
        Object.values(stored.projects).map((servers) =>
          Object.fromEntries(Object.entries(servers).map(([name, a]) => [name, a.trusted])),
        ),
        [{ eager: false, sleepy: true, web: true }],
      );
      await closePi();
    },
  );

  test(
    "Escape on one server's question in 'Choose…' is no answer: nothing is saved, and it is asked again",
    { skip: bridgeAsks },
    async () => {
      writeProject({
        eager: server("eager", { args: [HELLO, "--escaped"] }),
        sleepy: server("sleepy", { lazy: true }),
        web: web(),
      });
      const saved = readFileSync(trustFile(agentDir.dir), "utf8");
      const ui = new RecordingUI();
      ui.answers = [TRUST_CHOOSE, undefined];
      await startPi(ui);
      await waitFor(() => ui.notices.some((n) => n.includes("not trusted")), "the startup notice", 30_000);
      assert.equal(ui.asked.length, 2, ui.asked.join("\n"));
      assert.equal(readFileSync(trustFile(agentDir.dir), "utf8"), saved, "no answer saved");
      await closePi();
      const again = new RecordingUI();
      again.answers = [undefined];
      await startPi(again);
      await waitFor(() => again.asked.length === 1, "the question again", 30_000);
      assert.match(again.asked[0]!, /eager/);
      await closePi();
    },
  );

  test(
    "print mode spawns nothing and prints one notice naming /mcp trust; /mcp trust in print mode then starts it",
    { skip: bridgeAsks },
    async () => {
      writeProject({
        eager: server("eager", { args: [HELLO, "--print-mode"] }),
        sleepy: server("sleepy", { lazy: true, args: [HELLO, "--print-mode"] }),
        web: web(),
      });
      const { pi: current, printed } = await startPi();
      assert.ok(running("mine"));
      assert.equal(running("eager"), false, "not spawned");
      assert.equal(running("sleepy"), false, "not spawned, lazy or not");
      const notices = printed.filter((line) => line.includes("/mcp trust"));
      assert.equal(notices.length, 1, printed.join("\n---\n"));
      assert.match(
        notices[0]!,
        /not trusted, not started \(project config\): eager, sleepy\. .*\/mcp trust \[server…\] starts them/,
      );

      const said = await command(current, "/mcp trust eager");
      assert.match(said, /eager: trusted, connected, 2 tools/);
      assert.ok(running("eager"));
      assert.equal(running("sleepy"), false, "only the named server");
      await closePi();
    },
  );

  test(
    "on pi 1.x, pi's own answer decides: an untrusted project's servers never start, and nobody is asked",
    { skip: piDecides },
    async () => {
      writeProject({ eager: server("eager"), sleepy: server("sleepy", { lazy: true }), web: web() });
      const ui = new RecordingUI();
      const { pi: current } = await startPi(ui, false);
      assert.ok(running("mine"), "the user's own server runs");
      assert.deepEqual(ui.asked, [], "the bridge asks nothing: pi has answered");
      assert.equal(running("eager"), false, "not spawned");
      assert.equal(running("sleepy"), false, "not spawned, lazy or not");
      assert.deepEqual(remote.requests, [], "nothing connected to the remote server");
      assert.deepEqual(
        mcpTools(current).filter((n) => !n.startsWith("mcp_mine_")),
        [],
      );
      assert.match(await command(current, "/mcp list", ui), /eager/);
      await closePi();
    },
  );

  test(
    "on pi 1.x, a project pi trusts: its servers start without a question, their tools are there",
    { skip: piDecides },
    async () => {
      const ui = new RecordingUI();
      const { pi: current } = await startPi(ui, true);
      assert.deepEqual(ui.asked, [], "the bridge asks nothing: pi has answered");
      assert.ok(running("eager"), "the eager project server runs");
      assert.ok(
        mcpTools(current).some((n) => n.startsWith("mcp_eager_")),
        mcpTools(current).join(", "),
      );
      assert.ok(
        mcpTools(current).some((n) => n.startsWith("mcp_web_")),
        mcpTools(current).join(", "),
      );
      await closePi();
    },
  );
});
