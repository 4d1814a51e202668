/**
 * `/mcp off` and `/mcp on` in pi in-process, against real fixture servers: a server switched off for the session
 * leaves pi's active tools and its process ends, no config file changes, `/mcp` shows it off, completion offers the
 * right servers, `/reload` keeps it off, and `/mcp on` brings it back with tools the model can call. Trust still
 * decides: an untrusted project server switched on is not started.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { type AgentSession, SessionManager } from "@mariozechner/pi-coding-agent";
import { type InProcessPi, startInProcessPi, startPiRuntime } from "./pi-harness.ts";
import { PI_LINE } from "./pi-line.ts";
import { RecordingUI } from "./recording-ui.ts";
import { EXTENSION_DIR, fixtureEntry, helloServer, isAlive, readLog, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";
import { startBridgeInPi } from "./bridge-in-pi.ts";
import { setUpApiClient } from "./fixtures/api-client-extension.ts";

const CLIENT_EXTENSION = path.join(REPO_ROOT, "test", "fixtures", "api-client-extension.ts");

const HELLO = helloServer();

describe("/mcp off and /mcp on: a server off for this session only", { timeout: 120_000 }, () => {
  const project = tempDir("mcp-bridge-switch-project-");
  const agentDir = tempDir("mcp-bridge-switch-agent-");
  const log = path.join(project.dir, "events.jsonl");
  const projectLog = path.join(project.dir, "project-events.jsonl");
  const projectConfig = path.join(project.dir, ".pi", "mcp.json");
  const userConfig = path.join(agentDir.dir, "mcp.json");
  const saved = { cwd: process.cwd(), agentDir: process.env.PI_CODING_AGENT_DIR };
  const ui = new RecordingUI();
  let pi: InProcessPi;
  let session: AgentSession;
  let configBytes: Buffer[];

  const configs = () => [readFileSync(userConfig), readFileSync(projectConfig)];
  const active = () => session.getActiveToolNames();
  const starts = () => readLog(log).filter((e) => e.event === "start");

  before(async () => {
    mkdirSync(path.dirname(projectConfig), { recursive: true });
    // A project server nobody has trusted: switching it on must not start it.
    writeFileSync(
      projectConfig,
      JSON.stringify({ mcpServers: { proj: { ...fixtureEntry(), env: { FIXTURE_LOG: projectLog } } } }),
    );
    writeFileSync(
      userConfig,
      JSON.stringify(
        {
          exposure: "direct",
          mcpServers: {
            local: { ...fixtureEntry(), env: { FIXTURE_LOG: log }, autoApprove: ["echo"] },
            shared: { command: process.execPath, args: [HELLO] },
            dormant: { command: process.execPath, args: [HELLO], enabled: false },
          },
        },
        null,
        2,
      ),
    );
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    configBytes = configs();
    pi = await startInProcessPi({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [EXTENSION_DIR],
      projectTrusted: false,
    });
    ({ session } = pi);
    // pi 0.73 leaves the question about the project's servers to the bridge: dismissed, so nothing of it runs.
    if (PI_LINE === "0.73") ui.answers = [undefined];
    await session.bindExtensions({ uiContext: ui.context() });
    if (PI_LINE === "0.73") await waitFor(() => ui.answers.length === 0, "the question about trusting 'proj'");
  });

  after(async () => {
    await pi?.close();
    process.chdir(saved.cwd);
    if (saved.agentDir === undefined) delete process.env.PI_CODING_AGENT_DIR;
    else process.env.PI_CODING_AGENT_DIR = saved.agentDir;
    delete process.env.PI_MCP_STARTUP_BUDGET_MS;
    project.cleanup();
    agentDir.cleanup();
  });

  async function run(command: string): Promise<string> {
    const before = ui.notices.length;
    await session.prompt(command);
    return ui.notices.slice(before).join("\n");
  }

  async function completions(typed: string): Promise<string[]> {
    const command = session.extensionRunner.getCommand("mcp")!;
    const offered = ((await command.getArgumentCompletions?.(typed)) ?? []) as Array<{ value: string }>;
    return offered.map((o) => o.value);
  }

  /** The model calls `mcp_local_echo`; the tool's result. */
  async function modelEchoes(text: string): Promise<{ text: string; isError: boolean }> {
    pi.faux.setResponses([
      fauxAssistantMessage([fauxToolCall("mcp_local_echo", { text })], { stopReason: "toolUse" }),
      fauxAssistantMessage("done"),
    ]);
    await session.prompt(`echo ${text}`);
    const result = session.messages.filter((m) => (m as { role: string }).role === "toolResult").at(-1) as unknown as {
      content: Array<{ text?: string }>;
      isError: boolean;
    };
    return { text: result.content.map((c) => c.text ?? "").join(""), isError: result.isError };
  }

  test("completion: off offers the servers that are on, on those that are off", async () => {
    assert.deepEqual(await completions("o"), ["off", "on"]);
    assert.deepEqual(await completions("off "), ["off proj", "off local", "off shared"]);
    assert.deepEqual(await completions("on "), [], "nothing is off yet");
  });

  test("/mcp off: the tools leave pi at once, the process ends, no config file changes; /mcp shows it off", async () => {
    assert.ok(active().includes("mcp_local_echo"), "the server's tool is active to begin with");
    const pid = starts().at(-1)!.pid;
    assert.ok(isAlive(pid));
    const text = await run("/mcp off local");
    assert.match(
      text,
      /Switched off MCP server 'local' for this session; its tools are gone, its config is unchanged\. \/mcp on local turns it on\./,
    );
    assert.equal(active().includes("mcp_local_echo"), false, "the tool left pi's active tools");
    assert.ok(active().includes("mcp_shared_greet"), "the other server's tools stay");
    await waitFor(() => !isAlive(pid), "the server's process to end");
    assert.deepEqual(configs(), configBytes, "the config files are byte for byte as they were");

    const list = await run("/mcp list");
    assert.match(list, /^ {2}local +⚫ .*off for this session: \/mcp on local turns it on$/m);
    assert.match(list, /^ {2}dormant +⚫ .*disabled$/m, "a server disabled in its config shows as disabled");
    assert.match(list, /^local {2}off {2}stdio {2}0 tools/m);
    assert.equal(ui.statuses.get("mcp"), "MCP 1/1", "the footer counts neither the off server nor the untrusted one");
    assert.deepEqual(await completions("off "), ["off proj", "off shared"]);
    assert.deepEqual(await completions("on "), ["on local"]);
    // /mcp reconnect refuses a server off for the session or disabled in its config: completion does not offer them.
    assert.deepEqual(await completions("reconnect "), ["reconnect proj", "reconnect shared"]);
    const command = session.extensionRunner.getCommand("mcp")!;
    const [offered] = ((await command.getArgumentCompletions?.("on l")) ?? []) as Array<{ description?: string }>;
    assert.equal(offered?.description, "off for this session");
  });

  test("already off, already on, unknown, disabled in the config, and /mcp reconnect of an off server", async () => {
    const before = starts().length;
    assert.match(
      await run("/mcp off local"),
      /^MCP server 'local' is off for this session; \/mcp on local turns it on\.$/,
    );
    assert.match(
      await run("/mcp reconnect local"),
      /^MCP server 'local' is off for this session; \/mcp on local turns it on\.$/,
    );
    assert.equal(starts().length, before, "reconnect started nothing");
    for (const list of ["prompts", "resources"])
      assert.match(
        await run(`/mcp ${list} local`),
        /^MCP server 'local': off for this session \(\/mcp on local turns it on\)$/,
      );
    assert.match(await run("/mcp on shared"), /^MCP server 'shared' is on already \(connected\)\.$/);
    assert.match(await run("/mcp on nope"), /^No MCP server named 'nope'\. Configured: /);
    assert.match(
      await run("/mcp on dormant"),
      /^MCP server 'dormant' is disabled in its config; \/mcp enable dormant turns it on and saves that\.$/,
    );
    assert.match(
      await run("/mcp off dormant"),
      /^MCP server 'dormant' is disabled in its config; it is not running\.$/,
    );
    // A command that would start it does not start a server disabled in its config either.
    assert.match(
      await run("/mcp reconnect dormant"),
      /^MCP server 'dormant' is disabled in its config; \/mcp enable dormant turns it on and saves that\.$/,
    );
    assert.equal(
      session.getAllTools().some((t) => t.name.startsWith("mcp_dormant_")),
      false,
      "nothing of it started",
    );
    assert.deepEqual(configs(), configBytes);
  });

  test("/mcp on: it connects again, its tools come back, and the model's call works; the config files are untouched", async () => {
    const before = starts().length;
    assert.match(await run("/mcp on local"), /^Switched on MCP server 'local' for this session: \d+ tools\.$/);
    assert.equal(starts().length, before + 1, "a new process");
    assert.ok(isAlive(starts().at(-1)!.pid));
    assert.ok(active().includes("mcp_local_echo"), "the tool is active again");
    assert.deepEqual(await modelEchoes("back again"), { text: "back again", isError: false });
    assert.match(await run("/mcp list"), /^ {2}local +🟢/m);
    assert.deepEqual(await completions("on "), []);
    assert.deepEqual(configs(), configBytes);
  });

  // Last of the model's turns: pi 0.73's reload drops the faux provider along with every other registered API.
  test("/reload keeps the server off (the process pi started while loading ends), and keeps it on once switched on", async () => {
    await run("/mcp off local");
    const before = starts().length;
    await session.reload();
    // pi starts every server while it loads the extension, before the session can be read; that process ends again.
    assert.ok(starts().length > before, "pi started the server while loading");
    for (const start of starts().slice(before))
      await waitFor(() => !isAlive(start.pid), "the process started during the reload to end");
    assert.equal(active().includes("mcp_local_echo"), false, "still off after /reload");
    assert.match(await run("/mcp list"), /^ {2}local +⚫ .*off for this session/m);
    assert.deepEqual(await completions("on "), ["on local"]);

    assert.match(await run("/mcp on local"), /^Switched on MCP server 'local' for this session: \d+ tools\.$/);
    assert.ok(active().includes("mcp_local_echo"));
    await session.reload();
    await waitFor(() => active().includes("mcp_local_echo"), "the server's tools after the next /reload");
    assert.ok(isAlive(starts().at(-1)!.pid), "its process runs");
    assert.deepEqual(configs(), configBytes);
  });

  test("an untrusted project server switched off and on again is still not started", async () => {
    assert.match(await run("/mcp off proj"), /^Switched off MCP server 'proj' for this session/m);
    const text = await run("/mcp on proj");
    assert.match(
      text,
      /^Switched on MCP server 'proj', but it did not start: .*is not trusted, so it was not started/m,
    );
    assert.equal(
      active().some((name) => name.startsWith("mcp_proj_")),
      false,
    );
    assert.match(await run("/mcp list"), /^ {2}proj +🔒/m);
    assert.deepEqual(readLog(projectLog), [], "its process never started");
    assert.deepEqual(configs(), configBytes);
  });
});

describe("/mcp off across pi's sessions in one process", { timeout: 120_000 }, () => {
  test("/new starts with every server on; /resume of the session that switched one off: it is off again", async () => {
    const project = tempDir("mcp-bridge-off-project-");
    const agentDir = tempDir("mcp-bridge-off-agent-");
    const sessions = tempDir("mcp-bridge-off-sessions-");
    const log = path.join(project.dir, "events.jsonl");
    writeFileSync(
      path.join(agentDir.dir, "mcp.json"),
      JSON.stringify({ exposure: "direct", mcpServers: { local: { ...fixtureEntry(), env: { FIXTURE_LOG: log } } } }),
    );
    const saved = { cwd: process.cwd(), agentDir: process.env.PI_CODING_AGENT_DIR };
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    const pi = await startPiRuntime({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [EXTENSION_DIR],
      sessionManager: SessionManager.create(project.dir, sessions.dir),
    });
    const active = () => pi.runtime.session.getActiveToolNames().includes("mcp_local_echo");
    const ui = new RecordingUI();
    // Each session's extensions bound as pi's TUI binds them (session_start has run when it returns).
    const bind = () => pi.runtime.session.bindExtensions({ uiContext: ui.context() });
    try {
      await bind();
      await waitFor(active, "the server's tools");
      await pi.runtime.session.prompt("/mcp off local");
      assert.equal(active(), false);
      // pi saves a session to its file once the model has answered in it.
      pi.faux.setResponses([fauxAssistantMessage("ok")]);
      await pi.runtime.session.prompt("hello");
      const first = pi.runtime.session.sessionManager.getSessionFile()!;

      await pi.runtime.newSession();
      await bind();
      await waitFor(active, "the server's tools in the new session");
      assert.ok(isAlive(readLog(log).at(-1)!.pid), "its process runs");

      const before = readLog(log).length;
      await pi.runtime.switchSession(first);
      await bind();
      assert.equal(active(), false, "off again in the resumed session");
      for (const start of readLog(log).slice(before))
        await waitFor(() => !isAlive(start.pid), "the process started while the session loaded to end");
      assert.match(
        (await pi.runtime.session.prompt("/mcp list"), ui.notices.at(-1)!),
        /^ {2}local +⚫ .*off for this session/m,
      );
    } finally {
      await pi.close();
      process.chdir(saved.cwd);
      if (saved.agentDir === undefined) delete process.env.PI_CODING_AGENT_DIR;
      else process.env.PI_CODING_AGENT_DIR = saved.agentDir;
      delete process.env.PI_MCP_STARTUP_BUDGET_MS;
      for (const dir of [project, agentDir, sessions]) dir.cleanup();
    }
  });
});

describe(
  "/mcp off of a server another extension registered with pi 1.x's pi.registerMcpServer()",
  { timeout: 120_000, skip: PI_LINE !== "1.x" && "pi 0.73 has no pi.registerMcpServer()" },
  () => {
    test("/reload keeps it off, as it keeps a configured server off", async () => {
      const log = tempDir("mcp-bridge-off-registered-");
      const fxLog = path.join(log.dir, "events.jsonl");
      setUpApiClient({
        registerAtLoad: { name: "atload", config: { ...fixtureEntry(), env: { FIXTURE_LOG: fxLog } } },
      });
      const ui = new RecordingUI();
      const run = await startBridgeInPi({
        mcpConfig: { mcpServers: {} },
        extensionPaths: [CLIENT_EXTENSION],
        uiContext: ui.context(),
      });
      const { session } = run.pi;
      const starts = () => readLog(fxLog).filter((e) => e.event === "start");
      try {
        await waitFor(() => session.getAllTools().some((t) => t.name === "mcp_atload_echo"), "its tools");
        await session.prompt("/mcp off atload");
        assert.match(ui.notices.at(-1) ?? "", /^Switched off MCP server 'atload' for this session/);
        await session.reload();
        // pi starts it while loading the extensions again; it goes off once it is there.
        const listsOff = async () => {
          await session.prompt("/mcp list");
          return /^ {2}atload +⚫ .*off for this session/m.test(ui.notices.at(-1) ?? "");
        };
        await waitFor(listsOff, "/mcp list to show it off again", 30_000, 200);
        assert.equal(
          session.getActiveToolNames().some((name) => name.startsWith("mcp_atload_")),
          false,
        );
        for (const start of starts()) await waitFor(() => !isAlive(start.pid), "no process of it to run");
      } finally {
        await run.close();
        log.cleanup();
      }
    });
  },
);

describe("/reload while a server switched off is still stopping", { timeout: 60_000 }, () => {
  test("the reload waits for its process to end, and its close reaches nothing of the session that ended", async () => {
    const logs = tempDir("mcp-bridge-off-stopping-");
    const log = path.join(logs.dir, "events.jsonl");
    // Outlives its input closing: its close takes the 2 s grace, then SIGTERM.
    const lingering = { ...fixtureEntry("lingering"), env: { FIXTURE_LOG: log } };
    const run = await startBridgeInPi({
      mcpConfig: { mcpServers: { lingering } },
      uiContext: new RecordingUI().context(),
    });
    try {
      const pid = readLog(log).find((e) => e.event === "start")!.pid;
      const off = run.pi.session.prompt("/mcp off lingering");
      await waitFor(() => readLog(log).some((e) => e.event === "stdin-end"), "its input to be closed");
      await run.pi.session.reload();
      assert.equal(isAlive(pid), false, "its process ended before the session did");
      await off;
    } finally {
      await run.close();
      logs.cleanup();
    }
  });
});
