/**
 * Tool approval through pi's `tool_call` event, in real pi: in-process with the faux model and a recording UI, and as
 * the `pi -p` command line (print mode, no UI). The servers are the HTTP fixture with a destructive, a read-only and a
 * delete-named tool; each test checks what reached the server, not only what pi said.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { fauxAssistantMessage, fauxToolCall, type FauxProviderRegistration } from "@mariozechner/pi-ai";
import type { AgentSession } from "@mariozechner/pi-coding-agent";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { layerConfigs } from "../src/config/layers.ts";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import { ToolApproval } from "../src/trust/tool-approval.ts";
import { type RunningServer, startStreamableHttp } from "./fixtures/http-servers.ts";
import { EXTENSION_DIR, fixtureEntry, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";
import { startBridgeInPi } from "./bridge-in-pi.ts";
import { apiClient, setUpApiClient } from "./fixtures/api-client-extension.ts";
import { mcpProvenance } from "../src/translate/provenance.ts";
import { type InProcessPi, startInProcessPi } from "./pi-harness.ts";
import { PI_LINE } from "./pi-line.ts";
import { RecordingUI } from "./recording-ui.ts";
import { FAUX_MODEL_EXTENSION, PI_CLI } from "./tmux.ts";

const EXTRA_TOOLS: Tool[] = [
  {
    name: "wipe",
    description: "Wipes the store",
    inputSchema: { type: "object" },
    annotations: { destructiveHint: true },
  },
  {
    name: "peek",
    description: "Reads the store",
    inputSchema: { type: "object" },
    annotations: { readOnlyHint: true },
  },
  { name: "delete_note", description: "Deletes a note", inputSchema: { type: "object" } },
];

interface ToolResultMessage {
  role: "toolResult";
  toolName: string;
  isError: boolean;
  content: Array<{ type: string; text?: string }>;
}

/** What another extension saw on `mcp.approval.request`, and how the test makes it answer. */
interface HookGlobals {
  __approvalRequests?: Array<Record<string, unknown>>;
  __approvalHook?: (request: { tool: string; respond(decision: unknown): void }) => void;
}
const hookGlobals = globalThis as HookGlobals;

/** Another extension that passes each approval request to the test, which may answer it. */
const HOOK_EXTENSION = `export default function (pi) {
  pi.events.on("mcp.approval.request", (request) => {
    (globalThis.__approvalRequests ??= []).push(request);
    globalThis.__approvalHook?.(request);
  });
}`;

describe("tool approval in pi (in-process, faux model, recording UI)", { timeout: 120_000 }, () => {
  const project = tempDir("mcp-bridge-approval-project-");
  const agentDir = tempDir("mcp-bridge-approval-agent-");
  const userConfig = path.join(agentDir.dir, "mcp.json");
  const originalCwd = process.cwd();
  const ui = new RecordingUI();
  let store: RunningServer;
  let open: RunningServer;
  let pi: InProcessPi;
  let session: AgentSession;
  let faux: FauxProviderRegistration;
  let written: string;

  before(async () => {
    store = await startStreamableHttp({ extraTools: EXTRA_TOOLS });
    open = await startStreamableHttp({ extraTools: EXTRA_TOOLS });
    // The user-level file (no project trust involved), with a comment and 4-space indentation that "Always allow" keeps.
    written = [
      "{",
      "    // servers for the approval test, whose tools the model calls directly",
      '    "exposure": "direct",',
      '    "mcpServers": {',
      `        "store": { "url": "${store.url}", "autoApproveReadOnly": true },`,
      '        "open": {',
      `            "url": "${open.url}",`,
      '            "autoApprove": ["*"]',
      "        }",
      "    }",
      "}",
      "",
    ].join("\n");
    writeFileSync(userConfig, written);
    writeFileSync(path.join(project.dir, "hook-extension.ts"), HOOK_EXTENSION);
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    pi = await startInProcessPi({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [path.join(project.dir, "hook-extension.ts"), EXTENSION_DIR],
    });
    ({ session, faux } = pi);
    await session.bindExtensions({ uiContext: ui.context() });
    assert.ok(
      session.getAllTools().some((t) => t.name === "mcp_store_wipe"),
      "the store's tools are registered",
    );
  });

  after(async () => {
    await pi?.close();
    process.chdir(originalCwd);
    delete hookGlobals.__approvalHook;
    delete hookGlobals.__approvalRequests;
    await Promise.all([store?.close(), open?.close()]);
    project.cleanup();
    agentDir.cleanup();
  });

  /** The model makes one call; returns its result and what the UI was asked meanwhile. */
  async function modelCalls(
    tool: string,
    args: Record<string, unknown>,
    answers: unknown[] = [],
  ): Promise<{ result: ToolResultMessage; asked: string[]; offered: string[][] }> {
    ui.answers = [...answers];
    const asked = ui.asked.length;
    const offered = ui.offered.length;
    faux.setResponses([
      fauxAssistantMessage([fauxToolCall(tool, args)], { stopReason: "toolUse" }),
      fauxAssistantMessage("done"),
    ]);
    await session.prompt(`call ${tool}`);
    assert.deepEqual(ui.answers, [], "every scripted answer was used");
    const results = session.messages.filter(
      (m) => (m as { role: string }).role === "toolResult",
    ) as unknown as ToolResultMessage[];
    const result = results.at(-1)!;
    assert.equal(result.toolName, tool);
    return { result, asked: ui.asked.slice(asked), offered: ui.offered.slice(offered) };
  }

  const callsOf = (server: RunningServer, name: string) => server.calls.filter((c) => c.name === name);

  test(
    "pi 1.x's tool list carries each server's hints, for permission extensions to read",
    { skip: PI_LINE === "1.x" ? false : "pi 0.73's tool list has no annotations" },
    () => {
      const hints = (name: string) =>
        (session.getAllTools().find((t) => t.name === name) as { annotations?: unknown } | undefined)?.annotations;
      assert.deepEqual(hints("mcp_store_wipe"), { destructiveHint: true });
      assert.deepEqual(hints("mcp_store_peek"), { readOnlyHint: true });
      assert.equal(hints("mcp_store_delete_note"), undefined, "no hints declared: pi's defaults apply");
    },
  );

  test("the first call asks; after 'Allow for this session' the second does not", async () => {
    const first = await modelCalls("mcp_store_echo", { text: "one" }, ["Allow for this session"]);
    assert.equal(first.asked.length, 1);
    assert.match(
      first.asked[0]!,
      /^select: Allow MCP tool 'echo' of server 'store' \(mcp_store_echo\) to run\? \(first use in this session\)$/m,
    );
    assert.match(first.asked[0]!, /Arguments: \{"text":"one"\}/);
    assert.deepEqual(first.offered[0], [
      "Allow once",
      "Allow for this session",
      `Always allow (adds "echo" to autoApprove in ${userConfig})`,
      "Deny",
    ]);
    assert.equal(first.result.isError, false);
    assert.deepEqual(
      callsOf(store, "echo").map((c) => c.args),
      [{ text: "one" }],
    );

    const second = await modelCalls("mcp_store_echo", { text: "two" });
    assert.deepEqual(second.asked, []);
    assert.deepEqual(second.result.content, [{ type: "text", text: "two" }]);
    assert.deepEqual(
      callsOf(store, "echo").map((c) => c.args),
      [{ text: "one" }, { text: "two" }],
    );
  });

  test("'Allow once' asks again next time; 'Deny' and Escape keep the call from the server and tell the model", async () => {
    await modelCalls("mcp_store_add", { a: 1, b: 2 }, ["Allow once"]);
    assert.equal(callsOf(store, "add").length, 1);
    const denied = await modelCalls("mcp_store_add", { a: 3, b: 4 }, ["Deny"]);
    assert.equal(denied.asked.length, 1, "asked again");
    assert.equal(denied.result.isError, true);
    assert.equal(denied.result.content[0]!.text, "The user denied the call of MCP tool 'add' of server 'store'.");
    // Escape (or an RPC client without dialogs cancelling): refused, and the model learns which setting would allow it.
    const escaped = await modelCalls("mcp_store_add", { a: 5, b: 6 }, [undefined]);
    assert.equal(escaped.result.isError, true);
    assert.equal(
      escaped.result.content[0]!.text,
      `The approval dialog for MCP tool 'add' of server 'store' closed without an answer, so it did not run. To allow it, add "add" to "autoApprove" of server "store" in ${userConfig}, or set "approval": "never" in ${userConfig} to turn approval prompts off.`,
    );
    assert.equal(callsOf(store, "add").length, 1, "neither denied call reached the server");
  });

  test("'Always allow' writes the tool into the server's autoApprove, keeping the file as written; it asks no more", async () => {
    const always = await modelCalls("mcp_store_structured", {}, ["Always allow"]);
    assert.equal(always.result.isError, false);
    assert.equal(callsOf(store, "structured").length, 1);
    const text = readFileSync(userConfig, "utf8");
    assert.equal(
      text,
      written.replace(`"autoApproveReadOnly": true }`, `"autoApproveReadOnly": true, "autoApprove": ["structured"] }`),
    );
    assert.ok(ui.notices.includes(`Added "structured" to autoApprove of MCP server 'store' in ${userConfig}.`));
    // The next pi reads it from the file.
    const store2 = layerConfigs([{ source: { scope: "user", path: userConfig }, text }]).servers.find(
      (s) => s.name === "store",
    );
    assert.deepEqual(store2?.autoApprove, ["structured"]);

    const again = await modelCalls("mcp_store_structured", {});
    assert.deepEqual(again.asked, []);
    assert.equal(callsOf(store, "structured").length, 2);
  });

  test("a destructive tool asks every time, without 'for this session'; a pattern in autoApprove does not cover it", async () => {
    for (const round of [1, 2]) {
      const wipe = await modelCalls("mcp_store_wipe", {}, ["Allow once"]);
      assert.equal(wipe.asked.length, 1, `asked on call ${round}`);
      assert.match(
        wipe.asked[0]!,
        /to run\? \(its server marks it destructive; it asks every time unless autoApprove lists its exact name\)$/m,
      );
      assert.deepEqual(wipe.offered[0], [
        "Allow once",
        `Always allow (adds "wipe" to autoApprove in ${userConfig})`,
        "Deny",
      ]);
      assert.equal(callsOf(store, "wipe").length, round);
    }
    // "open" approves every tool with "*", except the one whose name says delete.
    const echo = await modelCalls("mcp_open_echo", { text: "free" });
    assert.deepEqual(echo.asked, []);
    const del = await modelCalls("mcp_open_delete_note", {}, ["Deny"]);
    assert.match(del.asked[0]!, /to run\? \(its name says 'delete'; it asks every time/);
    assert.deepEqual(callsOf(open, "delete_note"), []);
    assert.deepEqual(
      callsOf(open, "echo").map((c) => c.args),
      [{ text: "free" }],
    );
  });

  test("autoApproveReadOnly runs a tool its server marks read-only without asking", async () => {
    const peek = await modelCalls("mcp_store_peek", {});
    assert.deepEqual(peek.asked, []);
    assert.equal(callsOf(store, "peek").length, 1);
  });

  test("another extension decides on pi's bus instead of the dialog: allow, deny, later, or an answer it cannot give", async () => {
    hookGlobals.__approvalRequests = [];
    hookGlobals.__approvalHook = (request) => request.respond(request.tool === "add" ? "allow" : "deny");
    try {
      const allowed = await modelCalls("mcp_store_add", { a: 20, b: 22 });
      assert.deepEqual(allowed.asked, [], "the dialog was not shown");
      assert.deepEqual(allowed.result.content, [{ type: "text", text: "42" }]);
      assert.deepEqual(callsOf(store, "add").at(-1)?.args, { a: 20, b: 22 });
      const request = hookGlobals.__approvalRequests[0]!;
      assert.deepEqual(
        { ...request, respond: typeof request.respond },
        {
          serverId: "store",
          tool: "add",
          toolName: "mcp_store_add",
          args: { a: 20, b: 22 },
          everyTime: false,
          reason: "first use in this session",
          respond: "function",
        },
      );

      const wipes = callsOf(store, "wipe").length;
      const denied = await modelCalls("mcp_store_wipe", {});
      assert.equal(
        denied.result.content[0]!.text,
        "Another extension denied the call of MCP tool 'wipe' of server 'store' (mcp.approval.request).",
      );
      assert.equal(hookGlobals.__approvalRequests.at(-1)!.everyTime, true);
      assert.deepEqual(hookGlobals.__approvalRequests.at(-1)!.annotations, { destructiveHint: true });
      assert.equal(callsOf(store, "wipe").length, wipes, "the server did not get it");

      // A decision that comes later, as a promise; then one that is not a decision at all.
      hookGlobals.__approvalHook = (request) =>
        request.respond(new Promise((resolve) => setImmediate(() => resolve("allow"))));
      await modelCalls("mcp_store_wipe", {});
      assert.equal(callsOf(store, "wipe").length, wipes + 1);
      hookGlobals.__approvalHook = (request) => request.respond("yes");
      const odd = await modelCalls("mcp_store_wipe", {});
      assert.match(
        odd.result.content[0]!.text!,
        /answered mcp\.approval\.request .* with "yes", not "allow", "allow-session" or "deny"; the call is refused/,
      );
      assert.equal(callsOf(store, "wipe").length, wipes + 1);
    } finally {
      delete hookGlobals.__approvalHook;
    }
    // An extension that listens without answering leaves the decision to the user.
    const asked = await modelCalls("mcp_store_add", { a: 0, b: 0 }, ["Deny"]);
    assert.equal(asked.asked.length, 1);
  });

  test("an extension that changes the request's arguments changes nothing that runs: the server gets the model's", async () => {
    hookGlobals.__approvalHook = (request) => {
      const args = (request as unknown as { args: Record<string, unknown> }).args;
      args.a = 1000;
      delete args.b;
      request.respond("allow");
    };
    try {
      const { result } = await modelCalls("mcp_store_add", { a: 20, b: 22 });
      assert.deepEqual(callsOf(store, "add").at(-1)?.args, { a: 20, b: 22 }, "the server got the original arguments");
      assert.deepEqual(result.content, [{ type: "text", text: "42" }]);
    } finally {
      delete hookGlobals.__approvalHook;
    }
  });

  test("mcp.log records each decision, without the arguments", async () => {
    const logFile = path.join(agentDir.dir, "mcp-bridge", "mcp.log");
    const approvals = () => {
      try {
        return readFileSync(logFile, "utf8")
          .split("\n")
          .filter((l) => l.includes('"event":"approval"'));
      } catch {
        return [];
      }
    };
    const lines = () => approvals().map((l) => JSON.parse(l) as Record<string, unknown>);
    // Lines reach the file in batches, so each is waited for.
    await waitFor(() => approvals().some((l) => l.includes('"decision":"always"')), "the log's approval lines", 10_000);
    await waitFor(
      () =>
        lines().some((l) => l.server === "store" && l.tool === "echo" && l.decision === "session" && l.by === "user"),
      "the session decision",
      10_000,
    );
    await waitFor(
      () => lines().some((l) => l.tool === "add" && l.decision === "once" && l.by === "extension"),
      "the extension's decision",
      10_000,
    );
    assert.ok(!approvals().some((l) => l.includes("free") || l.includes('"a":')), "no argument values");
  });
});

const execFileAsync = promisify(execFile);

describe("tool approval in print mode (the real pi command line)", { timeout: 240_000 }, () => {
  const home = tempDir("mcp-bridge-approval-home-");
  const agent = path.join(home.dir, "agent");
  const userConfig = path.join(agent, "mcp.json");
  const config = path.join(home.dir, "servers.json");
  const hookExtension = path.join(home.dir, "allow-hook.ts");
  let store: RunningServer;

  before(async () => {
    store = await startStreamableHttp({ extraTools: EXTRA_TOOLS });
    mkdirSync(agent, { recursive: true });
    writeFileSync(config, JSON.stringify({ exposure: "direct", mcpServers: { store: { url: store.url } } }));
    // A project file cannot turn approval off.
    mkdirSync(path.join(home.dir, ".pi"));
    writeFileSync(path.join(home.dir, ".pi", "mcp.json"), JSON.stringify({ approval: "never" }));
    writeFileSync(
      hookExtension,
      `export default function (pi) { pi.events.on("mcp.approval.request", (r) => r.respond("allow")); }`,
    );
  });

  after(async () => {
    await store?.close();
    home.cleanup();
  });

  /** `pi -p "call <tool> <args>"` with the faux model; pi's output (stdout and stderr). */
  async function printMode(prompt: string, extra: string[] = []): Promise<string> {
    const args = [PI_CLI, "-e", EXTENSION_DIR, "-e", FAUX_MODEL_EXTENSION, ...extra];
    args.push("--provider", "faux", "--model", "faux-1", "--no-session", "--mcp-config", config, "-p", prompt);
    const run = execFileAsync(process.execPath, args, {
      cwd: home.dir,
      env: {
        ...process.env,
        HOME: home.dir,
        PI_CODING_AGENT_DIR: agent,
        PI_OFFLINE: "1",
        PI_MCP_STARTUP_BUDGET_MS: "60000",
      },
      timeout: 90_000,
      killSignal: "SIGKILL",
    });
    run.child.stdin?.end();
    const { stdout, stderr } = await run;
    return stdout + stderr;
  }

  test("a call that would ask is refused, naming the setting that allows it; the server never gets it", async () => {
    const output = await printMode('call mcp_store_echo {"text":"unasked"}');
    assert.ok(
      output.includes(
        `faux: tool result: MCP tool 'echo' of server 'store' needs approval, and there is no UI to ask in. To allow it, add "echo" to "autoApprove" of server "store" in ${config}, or set "approval": "never" in ${userConfig} to turn approval prompts off.`,
      ),
      output,
    );
    assert.match(
      output,
      /`approval` is ignored here: only the user-level file/,
      "the project file's approval: never is reported as ignored",
    );
    assert.deepEqual(store.calls, []);
  });

  test("the hook of another extension can allow it", async () => {
    const output = await printMode('call mcp_store_echo {"text":"hooked"}', ["-e", hookExtension]);
    assert.match(output, /faux: tool result: hooked/);
    assert.deepEqual(store.calls, [{ name: "echo", args: { text: "hooked" } }]);
  });

  test('the named setting works: "approval": "never" in the user-level file lets even a destructive tool run', async () => {
    writeFileSync(userConfig, JSON.stringify({ approval: "never" }));
    try {
      const output = await printMode("call mcp_store_wipe {}");
      assert.match(output, /faux: tool result: called wipe/);
      assert.deepEqual(store.calls.at(-1), { name: "wipe", args: {} });
    } finally {
      rmSync(userConfig);
    }
  });
});

describe("approval of a bundled server's tool", () => {
  test("offers no Always allow: the bundled file belongs to the package, and an update would replace it", async () => {
    const { config } = validateServerEntry(
      "kit",
      { url: "http://127.0.0.1:1/mcp" },
      { scope: "bundled", path: "/ext/mcp.json" },
    );
    assert.ok(config);
    const approval = new ToolApproval({
      find: (name) =>
        name === "mcp_kit_echo"
          ? {
              name,
              server: "kit",
              originalName: "echo",
              description: "",
              provenance: mcpProvenance("kit", "echo"),
              inputSchema: { type: "object" },
            }
          : undefined,
      configOf: () => config,
      approvalMode: () => "ask",
      userConfigPath: () => undefined,
      emit: () => undefined,
      writeConfig: () => Promise.reject(new Error("a bundled server's file is never written")),
    });
    const ui = new RecordingUI();
    ui.answers.push("Allow once");
    const verdict = await approval.check(
      { toolName: "mcp_kit_echo", input: {} },
      { hasUI: true, ui: ui.context(), signal: undefined },
    );
    assert.equal(verdict, undefined, "allowed once");
    assert.deepEqual(ui.offered, [["Allow once", "Allow for this session", "Deny"]]);
  });
});

describe("approval of a tool whose name holds escape sequences", () => {
  test("what the user and the model are told names it with the sequences written out, as the dialog does", async () => {
    const evil = "evil\u001b]52;c;cHduZWQ=\u0007\u001b[2J";
    const { config } = validateServerEntry(
      "srv",
      { url: "http://127.0.0.1:1/mcp" },
      { scope: "user", path: "/u.json" },
    );
    assert.ok(config);
    const approval = new ToolApproval({
      find: (name) =>
        name === "mcp_srv_evil"
          ? {
              name,
              server: "srv",
              originalName: evil,
              description: "",
              provenance: mcpProvenance("srv", evil),
              inputSchema: { type: "object" },
            }
          : undefined,
      configOf: () => config,
      approvalMode: () => "ask",
      userConfigPath: () => undefined,
      emit: () => undefined,
      writeConfig: async () => ({}),
    });
    const ui = new RecordingUI();
    ui.answers.push("Deny", "Always allow");
    const ask = () =>
      approval.check({ toolName: "mcp_srv_evil", input: {} }, { hasUI: true, ui: ui.context(), signal: undefined });
    const denied = await ask();
    assert.doesNotMatch(denied?.reason ?? "", /[\u0000-\u001f]/, denied?.reason);
    assert.equal(await ask(), undefined);
    assert.equal(ui.notices.length, 1);
    assert.doesNotMatch(ui.notices[0]!, /[\u0000-\u001f]/, ui.notices[0]);
  });
});

describe("approval of a tool whose name is a pattern", () => {
  test("offers no Always allow: saved to autoApprove, 'get*' would let every get… tool run unasked", async () => {
    const { config } = validateServerEntry(
      "srv",
      { url: "http://127.0.0.1:1/mcp" },
      { scope: "user", path: "/u.json" },
    );
    assert.ok(config);
    const tool = (originalName: string) => ({
      name: `mcp_srv_${originalName}`,
      server: "srv",
      originalName,
      description: "",
      provenance: mcpProvenance("srv", originalName),
      inputSchema: { type: "object" },
    });
    const approval = new ToolApproval({
      find: (name) => [tool("get*"), tool("get_and_write")].find((t) => t.name === name),
      configOf: () => config,
      approvalMode: () => "ask",
      userConfigPath: () => undefined,
      emit: () => undefined,
      writeConfig: async () => ({}),
    });
    const ui = new RecordingUI();
    ui.answers.push("Allow once", "Deny");
    const ask = (toolName: string) =>
      approval.check({ toolName, input: {} }, { hasUI: true, ui: ui.context(), signal: undefined });
    assert.equal(await ask("mcp_srv_get*"), undefined);
    assert.deepEqual(ui.offered[0], ["Allow once", "Allow for this session", "Deny"]);
    assert.ok((await ask("mcp_srv_get_and_write"))?.block, "another tool still asks");
  });
});

describe("'Allow for this session', then /reload", { timeout: 60_000 }, () => {
  test("pi's /reload goes on with the same session: the tool asks no more", async () => {
    setUpApiClient({});
    const ui = new RecordingUI();
    const run = await startBridgeInPi({
      mcpConfig: { mcpServers: { fx: fixtureEntry() } },
      extensionPaths: [path.join(REPO_ROOT, "test", "fixtures", "api-client-extension.ts")],
      uiContext: ui.context(),
    });
    // Another extension's call takes the model's approval path, and needs no model (pi 0.73's reload drops the faux one).
    const echo = (id: string) =>
      apiClient().request("mcp.api.call", { id, server: "fx", tool: "echo", args: { text: id } });
    try {
      ui.answers = ["Allow for this session"];
      assert.equal((await echo("before")).ok, true);
      await run.pi.session.reload();
      const after = await echo("after");
      assert.equal(after.ok, true, JSON.stringify(after.error));
      assert.equal(ui.asked.length, 1, ui.asked.join("\n"));
    } finally {
      await run.close();
    }
  });
});
