/**
 * MCP for other extensions (docs/api.md), end to end: a second pi extension (fixtures/api-client-extension.ts), loaded
 * after the bridge in real pi with the faux model, uses only the bus API against the real stdio fixture server: it
 * lists, calls, aborts, registers and removes a session-only server. On pi 1.x, servers another extension registers
 * with `pi.registerMcpServer()` reach the bridge too.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { getEventListeners } from "node:events";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { type BridgeInPi, startBridgeInPi } from "./bridge-in-pi.ts";
import { apiClient, type ApiReply, setUpApiClient } from "./fixtures/api-client-extension.ts";
import { EXTENSION_DIR, fixtureEntry, isAlive, readLog, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";
import { startInProcessPi } from "./pi-harness.ts";
import { PI_LINE } from "./pi-line.ts";
import type { ExtensionUIContext } from "@mariozechner/pi-coding-agent";
import { RecordingUI } from "./recording-ui.ts";

const CLIENT_EXTENSION = path.join(REPO_ROOT, "test", "fixtures", "api-client-extension.ts");

/** Every file under `dir` with its size and modification time, to see that nothing was written. */
function filesUnder(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const stat = statSync(file);
    files.set(file, [stat.size, stat.mtimeMs].join(" "));
  }
  return files;
}

function textOf(reply: ApiReply): string {
  const content = reply.content as Array<{ type: string; text?: string }> | undefined;
  return (content ?? []).map((part) => part.text ?? "").join("");
}

type Listed = { servers: Array<Record<string, unknown>>; tools: Array<Record<string, unknown>> };

describe("the bus API for other extensions", () => {
  const logs = tempDir("mcp-bridge-api-logs-");
  const fxLog = path.join(logs.dir, "fx.jsonl");
  const extraLog = path.join(logs.dir, "extra.jsonl");
  let run: BridgeInPi;
  let agentDir: string;

  before(async () => {
    setUpApiClient({ callAtStart: { server: "fx", tool: "echo", args: { text: "sent at session start" } } });
    run = await startBridgeInPi({
      mcpConfig: {
        mcpServers: { fx: { ...fixtureEntry(), env: { FIXTURE_LOG: fxLog }, autoApprove: ["echo", "slow", "fail"] } },
      },
      extensionPaths: [CLIENT_EXTENSION],
    });
    agentDir = process.env.PI_CODING_AGENT_DIR ?? "";
  });
  after(async () => {
    await run?.close();
    logs.cleanup();
  });

  it("lists servers and tools, for a request sent in the extension's factory too, and calls at session start", async () => {
    const listed = (await apiClient().inFactory) as ApiReply & Listed;
    assert.equal(listed.ok, true, JSON.stringify(listed.error));
    assert.deepEqual(listed.servers, [
      { name: "fx", status: "connected", source: "user", toolCount: listed.tools.length },
    ]);
    const echo = listed.tools.find((tool) => tool.name === "echo");
    assert.deepEqual(echo && { ...echo, description: typeof echo.description }, {
      server: "fx",
      name: "echo",
      piName: "mcp_fx_echo",
      description: "string",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    });
    const atStart = await apiClient().atSessionStart();
    assert.equal(atStart?.ok, true, JSON.stringify(atStart?.error));
    assert.equal(textOf(atStart), "sent at session start");
  });

  it("calls a tool and gets its result; a tool error, an unknown server or tool and a bad request are values", async () => {
    const { request } = apiClient();
    const echoed = await request("mcp.api.call", { id: "c1", server: "fx", tool: "echo", args: { text: "hi" } });
    assert.deepEqual([echoed.ok, textOf(echoed)], [true, "hi"]);
    const failed = await request("mcp.api.call", { id: "c2", server: "fx", tool: "fail", args: {} });
    assert.deepEqual(failed.error, { kind: "tool-error", message: "it failed on purpose" });
    const noServer = await request("mcp.api.call", { id: "c3", server: "nope", tool: "echo", args: {} });
    assert.equal(noServer.error?.kind, "unknown-server");
    const noTool = await request("mcp.api.call", { id: "c4", server: "fx", tool: "nope", args: {} });
    assert.equal(noTool.error?.kind, "unknown-tool");
    assert.match(noTool.error?.message ?? "", /offers no tool 'nope'/);
    const bad = await request("mcp.api.call", { id: "c5", tool: "echo" });
    assert.equal(bad.error?.kind, "bad-request");
  });

  it("a call the approval rules ask about goes to the same approval as the model's: denied is a value, allowed runs", async () => {
    const client = apiClient();
    client.answerApprovals = "deny";
    const denied = await client.request("mcp.api.call", { id: "a1", server: "fx", tool: "add", args: { a: 2, b: 3 } });
    assert.equal(denied.error?.kind, "denied");
    assert.deepEqual(client.approvals.at(-1), { serverId: "fx", tool: "add" });
    assert.equal(
      readLog(fxLog).filter((e) => e.event === "call" && e.name === "add").length,
      0,
      "a denied call never reaches the server",
    );
    client.answerApprovals = "allow";
    const allowed = await client.request("mcp.api.call", { id: "a2", server: "fx", tool: "add", args: { a: 2, b: 3 } });
    assert.deepEqual([allowed.ok, textOf(allowed)], [true, "5"]);
  });

  it("aborts a slow call: the server sees the cancellation and the reply says aborted", async () => {
    const client = apiClient();
    const reply = client.request("mcp.api.call", { id: "slow-1", server: "fx", tool: "slow", args: { ms: 60_000 } });
    await waitFor(() => readLog(fxLog).some((e) => e.event === "call" && e.name === "slow"), "the slow call to arrive");
    client.abort("slow-1");
    const aborted = await reply;
    assert.equal(aborted.error?.kind, "aborted");
    await waitFor(
      () => readLog(fxLog).some((e) => e.event === "cancelled" && e.name === "slow"),
      "the server to see the cancellation",
    );
  });

  it("a caller's own signal aborts its call; calls that share one signal leave no listener on it", async () => {
    const { request } = apiClient();
    const shared = new AbortController();
    for (const id of ["s1", "s2", "s3"]) {
      const args = { text: id };
      const reply = await request("mcp.api.call", { id, server: "fx", tool: "echo", args, signal: shared.signal });
      assert.deepEqual([reply.ok, textOf(reply)], [true, id]);
    }
    assert.equal(getEventListeners(shared.signal, "abort").length, 0, "nothing of the ended calls is left on it");
    const slowCalls = () => readLog(fxLog).filter((e) => e.event === "call" && e.name === "slow").length;
    const before = slowCalls();
    const args = { ms: 60_000 };
    const reply = request("mcp.api.call", { id: "s4", server: "fx", tool: "slow", args, signal: shared.signal });
    await waitFor(() => slowCalls() > before, "the slow call to arrive");
    shared.abort();
    assert.equal((await reply).error?.kind, "aborted");
    assert.equal(getEventListeners(shared.signal, "abort").length, 0);
  });

  it("registers a session-only server, calls its tool, refuses a bad entry, removes it: its process ends, no file written", async () => {
    const { request } = apiClient();
    const before = filesUnder(agentDir);
    const bad = await request("mcp.api.register", { id: "r1", name: "broken", entry: { command: 42 } });
    assert.equal(bad.error?.kind, "invalid-entry");
    assert.match(bad.error?.message ?? "", /MCP server entry 'broken' is not valid: .*command/);
    // What it quotes of the entry is redacted, as a config file's problems are: a credential in the wrong field.
    const misplaced = { command: "node", headersTtl: "Bearer ghp_misplaced1234" };
    const quoted = await request("mcp.api.register", { id: "r1b", name: "broken", entry: misplaced });
    assert.match(quoted.error?.message ?? "", /headersTtl.*Bearer \*\*\*/);
    const taken = await request("mcp.api.register", { id: "r2", name: "fx", entry: fixtureEntry() });
    assert.equal(taken.error?.kind, "name-taken");

    // `$HOME` written where `${HOME}` was meant: warned about, and what the warning quotes of it is redacted.
    const { command, args } = fixtureEntry();
    const entry = {
      command,
      args: [...args, "--client-secret=k9Zq7pL$HOME"],
      env: { FIXTURE_LOG: extraLog },
      autoApprove: ["pid", "slow"],
      requestTimeout: 2000,
    };
    const added = await request("mcp.api.register", { id: "r3", name: "extra", entry, by: "the API test" });
    assert.equal(added.ok, true, JSON.stringify(added.error));
    assert.match(String(added.warnings), /holds \$HOME.*--client-secret=\*\*\*/);
    assert.deepEqual(added.server, {
      name: "extra",
      status: "connected",
      source: "session",
      toolCount: (added.tools as unknown[]).length,
    });
    assert.ok(
      run.pi.session.getAllTools().some((tool) => tool.name === "mcp_extra_pid"),
      "its tools are pi's",
    );
    const pid = Number(textOf(await request("mcp.api.call", { id: "r4", server: "extra", tool: "pid", args: {} })));
    assert.ok(isAlive(pid));
    const late = await request("mcp.api.call", { id: "r4b", server: "extra", tool: "slow", args: { ms: 60_000 } });
    assert.equal(late.error?.kind, "timeout", JSON.stringify(late.error));
    const listed = (await request("mcp.api.list", { id: "r5" })) as ApiReply & Listed;
    assert.deepEqual(
      listed.servers.map((s) => [s.name, s.source]),
      [
        ["fx", "user"],
        ["extra", "session"],
      ],
    );

    const notOurs = await request("mcp.api.unregister", { id: "r6", name: "fx" });
    assert.equal(notOurs.error?.kind, "not-session");
    const removed = await request("mcp.api.unregister", { id: "r7", name: "extra" });
    assert.equal(removed.ok, true, JSON.stringify(removed.error));
    await waitFor(() => !isAlive(pid), "the removed server's process to end");
    const gone = await request("mcp.api.call", { id: "r8", server: "extra", tool: "pid", args: {} });
    assert.equal(gone.error?.kind, "unknown-server");

    // Nothing of it went into a config file or the tool cache (which the configured server's list may still be
    // reaching); its own stderr log is the only file it has.
    const cache = path.join("mcp-bridge", "tool-cache.json");
    const written = [...filesUnder(agentDir)]
      .filter(([file, stamp]) => before.get(file) !== stamp)
      .map(([file]) => path.relative(agentDir, file));
    assert.deepEqual(
      written.filter((file) => !file.endsWith(".log") && file !== cache),
      [],
    );
    assert.equal(existsSync(path.join(run.project, ".pi", "mcp.json")), false);
    const cached = existsSync(path.join(agentDir, cache))
      ? Object.values((JSON.parse(readFileSync(path.join(agentDir, cache), "utf8")) as { entries: object }).entries)
      : [];
    assert.equal(
      cached.some((entry: { server?: string }) => entry.server === "extra"),
      false,
    );
  });

  it("a call to a server switched off for the session is not-connected, not unknown-tool", async () => {
    const { request } = apiClient();
    const entry = { ...fixtureEntry(), autoApprove: ["pid"] };
    assert.equal((await request("mcp.api.register", { id: "o1", name: "offed", entry })).ok, true);
    await run.pi.session.prompt("/mcp off offed");
    const call = await request("mcp.api.call", { id: "o2", server: "offed", tool: "pid", args: {} });
    assert.equal(call.error?.kind, "not-connected", JSON.stringify(call.error));
    assert.equal((await request("mcp.api.unregister", { id: "o3", name: "offed" })).ok, true);
  });

  it("a server registered disabled is switched on for the session by /mcp on (it has no file for /mcp enable)", async () => {
    const { request } = apiClient();
    const entry = { ...fixtureEntry(), autoApprove: ["pid"], enabled: false };
    assert.equal((await request("mcp.api.register", { id: "d1", name: "dormant", entry })).ok, true);
    const command = run.pi.session.extensionRunner.getCommand("mcp")!;
    const offered = ((await command.getArgumentCompletions?.("on d")) ?? []) as Array<{ value: string }>;
    assert.deepEqual(
      offered.map((item) => item.value),
      ["on dormant"],
    );
    await run.pi.session.prompt("/mcp on dormant");
    const call = await request("mcp.api.call", { id: "d2", server: "dormant", tool: "pid", args: {} });
    assert.equal(call.ok, true, JSON.stringify(call.error));
    assert.equal((await request("mcp.api.unregister", { id: "d3", name: "dormant" })).ok, true);
  });

  it("/mcp add or import under the name of a server added for the session is refused: the server stays its extension's", async () => {
    const { request } = apiClient();
    const entry = { ...fixtureEntry(), autoApprove: ["pid"] };
    assert.equal((await request("mcp.api.register", { id: "n1", name: "theirs", entry })).ok, true);
    await run.pi.session.prompt(`/mcp add theirs -- ${process.execPath} -e 0`);
    // Refused without a UI, it set the exit status a script would see (this test's process is no script).
    assert.equal(process.exitCode, 1);
    process.exitCode = undefined;
    assert.doesNotMatch(readFileSync(path.join(agentDir, "mcp.json"), "utf8"), /theirs/, "nothing written");
    const removed = await request("mcp.api.unregister", { id: "n2", name: "theirs" });
    assert.equal(removed.ok, true, JSON.stringify(removed.error));
    // Nor does /mcp import --replace take it (here from Claude Code's .mcp.json).
    assert.equal((await request("mcp.api.register", { id: "n3", name: "theirs", entry })).ok, true);
    writeFileSync(path.join(run.project, ".mcp.json"), JSON.stringify({ mcpServers: { theirs: fixtureEntry() } }));
    await run.pi.session.prompt("/mcp import theirs --replace");
    process.exitCode = undefined; // nothing imported: failed, as a script would be told
    assert.doesNotMatch(readFileSync(path.join(agentDir, "mcp.json"), "utf8"), /theirs/, "nothing imported");
    assert.equal((await request("mcp.api.unregister", { id: "n4", name: "theirs" })).ok, true);
    rmSync(path.join(run.project, ".mcp.json"));
  });

  it("an unregistration sent right after the registration, without waiting for its reply, removes the server", async () => {
    const { request } = apiClient();
    const entry = { ...fixtureEntry(), autoApprove: ["pid"] };
    const [, removed] = await Promise.all([
      request("mcp.api.register", { id: "q1", name: "brief", entry }),
      request("mcp.api.unregister", { id: "q2", name: "brief" }),
    ]);
    assert.equal(removed.ok, true, JSON.stringify(removed.error));
    const listed = (await request("mcp.api.list", { id: "q3" })) as ApiReply & Listed;
    assert.equal(
      listed.servers.some((s) => s.name === "brief"),
      false,
    );
  });

  it("two registrations of one name at once: one server, and the other is told the name is taken", async () => {
    const { request } = apiClient();
    const entry = { ...fixtureEntry(), autoApprove: ["pid"] };
    const replies = await Promise.all(
      ["t1", "t2"].map((id) => request("mcp.api.register", { id, name: "twice", entry, by: "the API test" })),
    );
    assert.deepEqual(replies.map((reply) => reply.error?.kind ?? "ok").sort(), ["name-taken", "ok"]);
    const call = await request("mcp.api.call", { id: "t3", server: "twice", tool: "pid", args: {} });
    assert.equal(call.ok, true, JSON.stringify(call.error));
    assert.equal((await request("mcp.api.unregister", { id: "t4", name: "twice" })).ok, true);
  });
});

describe(
  "servers other extensions register with pi 1.x's pi.registerMcpServer()",
  { skip: PI_LINE !== "1.x" && "pi 0.73 has no pi.registerMcpServer()" },
  () => {
    const logs = tempDir("mcp-bridge-registered-logs-");
    let run: BridgeInPi;

    before(async () => {
      setUpApiClient({ registerAtLoad: { name: "atload", config: { ...fixtureEntry(), autoApprove: ["pid"] } } });
      run = await startBridgeInPi({ mcpConfig: { mcpServers: {} }, extensionPaths: [CLIENT_EXTENSION] });
    });
    after(async () => {
      await run?.close();
      logs.cleanup();
    });

    const list = async (id: string) => (await apiClient().request("mcp.api.list", { id })) as ApiReply & Listed;

    it("one registered while pi loads is connected at session start, one registered later at once, and unregistering ends it", async () => {
      const client = apiClient();
      const listed = await list("p1");
      assert.deepEqual(
        listed.servers.map((s) => [s.name, s.source, s.status]),
        [["atload", "session", "connected"]],
      );
      const pid = Number(
        textOf(await client.request("mcp.api.call", { id: "p2", server: "atload", tool: "pid", args: {} })),
      );
      assert.ok(isAlive(pid));

      client.registerMcpServer("later", fixtureEntry());
      let attempts = 0;
      await waitFor(
        async () => {
          const now = await list(`p3-${++attempts}`);
          return now.servers.some((s) => s.name === "later" && s.status === "connected");
        },
        "the server registered later to connect",
        20_000,
        100,
      );
      assert.ok(run.pi.session.getAllTools().some((tool) => tool.name === "mcp_later_echo"));

      client.unregisterMcpServer("atload");
      await waitFor(() => !isAlive(pid), "the unregistered server's process to end");
      assert.deepEqual(
        (await list("p4")).servers.map((s) => s.name),
        ["later"],
      );
    });

    it("a registered server that never answers its handshake does not hold back one registered after it", async () => {
      const client = apiClient();
      const hangs = { command: process.execPath, args: ["-e", "setInterval(() => {}, 1000)"], timeout: 60 };
      client.registerMcpServer("hangs", hangs);
      client.registerMcpServer("quick", fixtureEntry());
      let attempts = 0;
      await waitFor(
        async () => (await list(`q-${++attempts}`)).servers.some((s) => s.name === "quick" && s.status === "connected"),
        "the server registered after the hanging one to connect",
        15_000,
        100,
      );
    });

    it("unregistering a server still in its handshake ends it at once, not when its handshake deadline (60 s) has passed", async () => {
      const log = path.join(logs.dir, "deaf.jsonl");
      // Deaf until a file that never comes: its handshake waits.
      const args = [
        path.join(REPO_ROOT, "test", "fixtures", "slow-start.mjs"),
        "--until",
        path.join(logs.dir, "never"),
      ];
      apiClient().registerMcpServer("deaf", { command: process.execPath, args, env: { FIXTURE_LOG: log } });
      await waitFor(() => readLog(log).some((e) => e.event === "start"), "the server to start");
      const { pid } = readLog(log).find((e) => e.event === "start")!;
      apiClient().unregisterMcpServer("deaf");
      await waitFor(() => !isAlive(Number(pid)), "the unregistered server's process to end", 10_000);
    });

    it("a registered entry's warnings (a misspelt field) are told, not dropped", async () => {
      const log = path.join(process.env.PI_CODING_AGENT_DIR!, "mcp-bridge", "mcp.log");
      apiClient().registerMcpServer("warned", { ...fixtureEntry(), autoAprove: ["echo"] });
      const told = () =>
        readLog(log).some(
          (e) =>
            e.event === "registered.server.warning" && /'warned'.*unknown field `autoAprove`/.test(String(e.message)),
        );
      await waitFor(told, "the warning to be logged");
    });

    it("a registration left out for a config server of its name is added once /mcp remove takes that server out", async () => {
      const client = apiClient();
      const log = path.join(process.env.PI_CODING_AGENT_DIR!, "mcp-bridge", "mcp.log");
      const { command, args } = fixtureEntry();
      await run.pi.session.prompt(`/mcp add clash -- ${[command, ...args].join(" ")}`);
      client.registerMcpServer("clash", fixtureEntry());
      const skipped = (e: Record<string, unknown>) => e.event === "registered.server.skipped";
      await waitFor(() => readLog(log).some((e) => skipped(e) && String(e.message).includes("'clash'")), "left out");
      await run.pi.session.prompt("/mcp remove clash");
      let attempts = 0;
      await waitFor(
        async () =>
          (await list(`c-${++attempts}`)).servers.some(
            (s) => s.name === "clash" && s.source === "session" && s.status === "connected",
          ),
        "the registered server to be added in its place",
        10_000,
        100,
      );
    });

    it("a registration whose name a session server (added over the bus) has is told once, not at each later one", async () => {
      const client = apiClient();
      const log = path.join(process.env.PI_CODING_AGENT_DIR!, "mcp-bridge", "mcp.log");
      const told = () =>
        readLog(log).filter((e) => e.event === "registered.server.skipped" && String(e.message).includes("'busy'"));
      assert.equal(
        (await client.request("mcp.api.register", { id: "b1", name: "busy", entry: fixtureEntry() })).ok,
        true,
      );
      client.registerMcpServer("busy", fixtureEntry());
      await waitFor(() => told().length === 1, "the name taken to be logged");
      client.registerMcpServer("later2", fixtureEntry());
      const connected = () => readLog(log).some((e) => e.event === "connected" && e.server === "later2");
      await waitFor(connected, "the server registered after it to connect");
      assert.equal(told().length, 1);
      // Once the bus's server is removed, the name is free: the registration is added.
      assert.equal((await client.request("mcp.api.unregister", { id: "b2", name: "busy" })).ok, true);
      let attempts = 0;
      await waitFor(
        async () => (await list(`b-${++attempts}`)).servers.some((s) => s.name === "busy" && s.status === "connected"),
        "the registered server to be added",
        10_000,
        100,
      );
    });

    it("an entry the bridge refuses is told once, not again at each later registration", async () => {
      const client = apiClient();
      const log = path.join(process.env.PI_CODING_AGENT_DIR!, "mcp-bridge", "mcp.log");
      const told = () =>
        readLog(log).filter((e) => e.event === "registered.server.skipped" && String(e.message).includes("'wordy'"));
      client.registerMcpServer("wordy", { ...fixtureEntry(), description: "x".repeat(300) });
      await waitFor(() => told().length === 1, "the refusal to be logged");
      client.registerMcpServer("after", fixtureEntry());
      // Logged after what that registration's sync told.
      const connected = () => readLog(log).some((e) => e.event === "connected" && e.server === "after");
      await waitFor(connected, "the server registered after it to connect");
      assert.equal(told().length, 1);
    });
  },
);

describe("a call still running when pi reloads", () => {
  it("a call cut short by the end of the session is told so, not told to resend the tool after a dropped connection", async () => {
    const logs = tempDir("mcp-bridge-api-cut-");
    const fxLog = path.join(logs.dir, "fx.jsonl");
    setUpApiClient({});
    const run = await startBridgeInPi({
      mcpConfig: { mcpServers: { fx: { ...fixtureEntry(), env: { FIXTURE_LOG: fxLog }, autoApprove: ["slow"] } } },
      extensionPaths: [CLIENT_EXTENSION],
    });
    try {
      const args = { ms: 60_000 };
      const replied = new Promise<ApiReply>((reply) =>
        apiClient().request("mcp.api.call", { id: "cut", server: "fx", tool: "slow", args, reply }),
      );
      await waitFor(() => readLog(fxLog).some((e) => e.event === "call" && e.name === "slow"), "the slow call");
      await run.pi.session.reload();
      const message = (await replied).error?.message ?? "";
      assert.match(message, /^MCP server 'fx' was stopped during the call of tool 'slow' \(pi's session ended/);
      assert.doesNotMatch(message, /resendAfterDrop|dropped/);
    } finally {
      await run.close();
      logs.cleanup();
    }
  });

  it("its caller's reply callback gets the answer, and the bridge the reload ended throws nothing into pi", async () => {
    setUpApiClient({});
    // The approval dialog is answered only after the reload, as a UI may (pi's RPC mode leaves it to its client).
    let allow = (_answer: string) => {};
    const ui = new RecordingUI();
    const answered = new Promise<string>((resolve) => (allow = resolve));
    let asked = false;
    const context = { ...ui.context(), select: () => ((asked = true), answered) };
    const run = await startBridgeInPi({
      mcpConfig: { mcpServers: { fx: fixtureEntry() } },
      extensionPaths: [CLIENT_EXTENSION],
      uiContext: context as unknown as ExtensionUIContext,
    });
    // On pi 1.x the old bridge's pi refuses everything once the reload is done: a throw there went unhandled.
    const unhandled: unknown[] = [];
    const record = (error: unknown) => void unhandled.push(error);
    process.on("unhandledRejection", record);
    try {
      const args = { text: "late" };
      const replied = new Promise<ApiReply>((reply) =>
        apiClient().request("mcp.api.call", { id: "across-reload", server: "fx", tool: "echo", args, reply }),
      );
      await waitFor(() => asked, "the approval dialog");
      await run.pi.session.reload();
      allow("Allow for this session");
      const reply = await replied;
      assert.match(reply.error?.message ?? "", /MCP server 'fx' is shut down/);
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(unhandled.map(String), []);
    } finally {
      process.off("unhandledRejection", record);
      await run.close();
    }
  });

  it("a call waiting for a session that ends without starting (an SDK host that never binds) is answered at its end", async () => {
    setUpApiClient({});
    const project = tempDir("mcp-bridge-api-unbound-");
    const agentDir = tempDir("mcp-bridge-api-unbound-agent-");
    const saved = { cwd: process.cwd(), agentDir: process.env.PI_CODING_AGENT_DIR };
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.chdir(project.dir);
    try {
      const options = { cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR, CLIENT_EXTENSION] };
      const pi = await startInProcessPi(options);
      const replied = new Promise<ApiReply>((reply) =>
        apiClient().request("mcp.api.call", { id: "unbound", server: "fx", tool: "echo", args: {}, reply }),
      );
      await pi.close();
      const timeout = new Promise<string>((resolve) => setTimeout(() => resolve("no reply"), 5_000).unref());
      const reply = await Promise.race([replied, timeout]);
      assert.notEqual(reply, "no reply");
      assert.match((reply as ApiReply).error?.message ?? "", /pi's session has ended/);
    } finally {
      process.chdir(saved.cwd);
      if (saved.agentDir === undefined) delete process.env.PI_CODING_AGENT_DIR;
      else process.env.PI_CODING_AGENT_DIR = saved.agentDir;
      project.cleanup();
      agentDir.cleanup();
    }
  });

  it("a call whose approval dialog is open at the reload gets a reply: pi closes the dialog, and answers it only through its signal", async () => {
    setUpApiClient({});
    let asked = false;
    // As pi's TUI: the reload hides the dialog, and its promise settles only if the caller's signal aborts.
    const select = (_title: string, _options: string[], opts?: { signal?: AbortSignal }) =>
      new Promise<undefined>((resolve) => {
        asked = true;
        opts?.signal?.addEventListener("abort", () => resolve(undefined), { once: true });
      });
    const run = await startBridgeInPi({
      mcpConfig: { mcpServers: { fx: fixtureEntry() } },
      extensionPaths: [CLIENT_EXTENSION],
      uiContext: { ...new RecordingUI().context(), select } as unknown as ExtensionUIContext,
    });
    try {
      const replied = new Promise<ApiReply>((reply) =>
        apiClient().request("mcp.api.call", { id: "open-dialog", server: "fx", tool: "echo", args: {}, reply }),
      );
      await waitFor(() => asked, "the approval dialog");
      await run.pi.session.reload();
      const timeout = new Promise<string>((resolve) => setTimeout(() => resolve("no reply"), 5_000).unref());
      const reply = await Promise.race([replied, timeout]);
      assert.notEqual(reply, "no reply");
      assert.match((reply as ApiReply).error?.message ?? "", /pi's session has ended/);
    } finally {
      await run.close();
    }
  });
});
