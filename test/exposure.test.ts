/**
 * Exposure and tool search inside real pi 0.73.1, in-process, with a fake model that speaks OpenAI's Chat Completions
 * API on 127.0.0.1: what the tests check is the request body pi-ai really sends (after the bridge's
 * `before_provider_request` change), not pi's idea of its tools. A deferred server's tools are left out until
 * `tool_search` loads them; the loaded tool is declared in the next request and callable in the same run; loads
 * survive `/reload`; hidden tools are never sent nor callable; `toolExposure` precedence; `auto` past its threshold;
 * a deferred server's resources behind tool_search too; and a tool a deferred server adds at run time is found at once.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, test } from "node:test";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { TOOL_SEARCH_NAME } from "../src/exposure/tool-search-text.ts";
import { type FakeOpenAi, type RecordedRequest, startFakeOpenAi } from "./fixtures/fake-openai.ts";
import { type InProcessPi, startInProcessPi } from "./pi-harness.ts";
import { PI_LINE } from "./pi-line.ts";
import { RecordingUI } from "./recording-ui.ts";
import { EVERYTHING_SERVER, EXTENSION_DIR, type LogEvent, readLog, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";
import { bundledFixture } from "./fixture-bundle.ts";

const CATALOG = path.join(REPO_ROOT, "test", "fixtures", "catalog-server.ts");
const SLOW_START = path.join(REPO_ROOT, "test", "fixtures", "slow-start.mjs");

interface ToolResultMessage {
  role: "toolResult";
  toolName: string;
  isError: boolean;
  content: Array<{ type: string; text?: string }>;
}

interface Setup {
  pi: InProcessPi;
  model: FakeOpenAi;
  log: string;
}

const catalogTools = (request: RecordedRequest) =>
  request.tools.filter((name) => name.startsWith("mcp_catalog_")).sort();

/** The catalog server's log: its start (with its pid), the calls that reached it. */
const calls = (log: string) => readLog(log) as Array<LogEvent & { name?: string }>;

function toolResults(pi: InProcessPi): ToolResultMessage[] {
  return pi.session.messages.filter(
    (m) => (m as { role: string }).role === "toolResult",
  ) as unknown as ToolResultMessage[];
}

describe("exposure and tool search in pi (in-process, a fake OpenAI-compatible model)", { timeout: 120_000 }, () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  interface StartOptions {
    contextWindow?: number;
    ui?: RecordingUI;
    sessionManager?: (cwd: string) => SessionManager;
    /** How long startup waits for servers (long: the tests read what connected). */
    budgetMs?: number;
    /** Other extensions, loaded before the bridge. */
    extensions?: string[];
    /** Other servers, after the catalog server. */
    servers?: Record<string, unknown>;
  }

  /** pi with the catalog server configured at user level as `entry` says, plus any top-level keys. */
  async function start(
    entry: Record<string, unknown>,
    topLevel: Record<string, unknown> = {},
    { contextWindow, ui, sessionManager, budgetMs = 60_000, extensions = [], servers = {} }: StartOptions = {},
  ): Promise<Setup> {
    const project = tempDir("mcp-bridge-exposure-");
    const agentDir = tempDir("mcp-bridge-agent-");
    const log = path.join(project.dir, "catalog.log");
    const catalog = {
      command: process.execPath,
      args: [bundledFixture(CATALOG)],
      env: { CATALOG_LOG: log },
      ...entry,
    };
    writeFileSync(
      path.join(agentDir.dir, "mcp.json"),
      JSON.stringify({ approval: "never", ...topLevel, mcpServers: { catalog, ...servers } }),
    );
    const originalCwd = process.cwd();
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = String(budgetMs);
    process.chdir(project.dir);
    const model = await startFakeOpenAi({ contextWindow });
    const pi = await startInProcessPi({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [...extensions, EXTENSION_DIR],
      model: model.model,
      sessionManager: sessionManager?.(project.dir),
    });
    cleanups.push(() => {
      process.chdir(originalCwd);
      project.cleanup();
      agentDir.cleanup();
    });
    cleanups.push(() => model.close());
    cleanups.push(() => pi.close());
    // An error listener, as every pi host binds one: pi fires session_start after a reload only to a bound session.
    await pi.session.bindExtensions({
      onError: (error) => assert.fail(`extension error: ${JSON.stringify(error)}`),
      ...(ui ? { uiContext: ui.context() } : {}),
    });
    return { pi, model, log };
  }

  test("a deferred server's tools wait behind tool_search; the one found is declared next and callable; /reload keeps it", async () => {
    const { pi, model, log } = await start({
      exposure: "deferred",
      description: "Code hosting: issues, pull requests, branches",
    });
    let searchAnswer = "";
    model.script([
      { toolCalls: [{ name: TOOL_SEARCH_NAME, args: { query: "open an issue about the crash" } }] },
      (request) => {
        searchAnswer = JSON.stringify(request.body.messages);
        return {
          toolCalls: [{ name: "mcp_catalog_create_issue", args: { repo: "acme/app", title: "Crash on start" } }],
        };
      },
      { text: "filed" },
    ]);
    await pi.session.prompt("report the crash");

    const [first, second] = model.requests;
    assert.ok(first && second, "two requests at least");
    assert.deepEqual(catalogTools(first), [], "no catalog tool in the first request");
    assert.ok(first.tools.includes(TOOL_SEARCH_NAME), "tool_search is declared");
    const system = JSON.stringify(
      (first.body.messages as Array<{ role: string; content: unknown }>).find(
        (m) => m.role === "system" || m.role === "developer",
      ),
    );
    assert.match(
      system,
      /Their servers and tools:\\n- catalog \(Code hosting: issues, pull requests, branches\): create_issue, delete_branch, delete_comment, get_file_contents, list_pull_requests, merge_pull_request, search_code/,
    );

    const search = toolResults(pi).find((r) => r.toolName === TOOL_SEARCH_NAME);
    const lines = (search?.content[0]?.text ?? "").split("\n").filter((line) => line.startsWith("- "));
    assert.ok(
      lines.slice(0, 3).some((line) => line.startsWith("- mcp_catalog_create_issue ")),
      `create_issue among the top 3:\n${lines.join("\n")}`,
    );
    assert.ok(searchAnswer.includes("mcp_catalog_create_issue"), "the model got the search's answer");
    assert.ok(second.tools.includes("mcp_catalog_create_issue"), "the loaded tool is declared in the next request");
    assert.ok(catalogTools(second).length <= 5, "only the loaded tools are declared");
    const created = toolResults(pi).find((r) => r.toolName === "mcp_catalog_create_issue");
    assert.equal(created?.isError, false, JSON.stringify(created?.content));
    assert.ok(
      calls(log).some((c) => c.event === "call" && c.name === "create_issue"),
      "the call reached the server",
    );

    // After /reload the extension starts afresh; the load recorded in the session brings the tool back.
    await pi.session.reload();
    const before = model.requests.length;
    model.script([{ text: "ok" }]);
    await pi.session.prompt("anything else?");
    const afterReload = model.requests[before];
    assert.ok(afterReload, "a request after the reload");
    assert.ok(afterReload.tools.includes("mcp_catalog_create_issue"), "still loaded after /reload");
    assert.ok(!afterReload.tools.includes("mcp_catalog_delete_branch"), "the others still wait");
  });

  test("hidden tools are never sent and a call to one is refused; exact names win over patterns, the first pattern wins", async () => {
    const { pi, model, log } = await start({
      exposure: "direct",
      toolExposure: {
        "delete_*": "hidden",
        delete_comment: "direct",
        "*_pull_request*": "deferred",
        "merge_*": "hidden",
      },
    });
    model.script([
      { toolCalls: [{ name: "mcp_catalog_delete_branch", args: { repo: "acme/app", branch: "main" } }] },
      { text: "done" },
    ]);
    await pi.session.prompt("delete main");
    const [first] = model.requests;
    assert.deepEqual(catalogTools(first!), [
      "mcp_catalog_create_issue",
      "mcp_catalog_delete_comment",
      "mcp_catalog_get_file_contents",
      "mcp_catalog_search_code",
    ]);
    for (const request of model.requests)
      assert.ok(!request.tools.includes("mcp_catalog_delete_branch"), "the hidden tool is in no request");
    const refused = toolResults(pi).find((r) => r.toolName === "mcp_catalog_delete_branch");
    assert.equal(refused?.isError, true, "the call is refused");
    assert.ok(!calls(log).some((c) => c.event === "call"), "nothing reached the server");
    // merge_pull_request: `*_pull_request*` comes first, so it is deferred (searchable), not hidden.
    model.script([
      { toolCalls: [{ name: TOOL_SEARCH_NAME, args: { query: "merge a pull request" } }] },
      { text: "done" },
    ]);
    await pi.session.prompt("merge it");
    const search = toolResults(pi).find((r) => r.toolName === TOOL_SEARCH_NAME);
    assert.match(search?.content[0]?.text ?? "", /mcp_catalog_merge_pull_request/);
    assert.doesNotMatch(search?.content[0]?.text ?? "", /delete_branch/, "hidden tools are not searchable");
  });

  test("auto: direct under the threshold, deferred past it (decided at session start)", async () => {
    const under = await start({}, { exposure: "auto", exposureThreshold: "10%" });
    under.model.script([{ text: "hi" }]);
    await under.pi.session.prompt("hello");
    assert.equal(
      catalogTools(under.model.requests[0]!).length,
      7,
      "all seven catalog tools are direct under 10% of 200k tokens",
    );
    assert.ok(!under.model.requests[0]!.tools.includes(TOOL_SEARCH_NAME), "no tool_search while nothing is deferred");

    // The same tools against a small window: 10% of 4,000 tokens is less than they cost.
    const past = await start({}, { exposure: "auto" }, { contextWindow: 4_000 });
    past.model.script([{ text: "hi" }]);
    await past.pi.session.prompt("hello");
    assert.deepEqual(catalogTools(past.model.requests[0]!), [], "auto defers past 10% of the window");
    assert.ok(past.model.requests[0]!.tools.includes(TOOL_SEARCH_NAME));
  });

  test("a deferred server's resources: the resource tools wait behind tool_search too, and are callable once found", async () => {
    // server-everything under the catalog's name: it offers resources, and its tools are deferred.
    const { pi, model } = await start({
      command: process.execPath,
      args: [EVERYTHING_SERVER, "stdio"],
      exposure: "deferred",
    });
    const uri = "demo://resource/static/document/instructions.md";
    model.script([
      { toolCalls: [{ name: TOOL_SEARCH_NAME, args: { query: "read a resource by its URI", limit: 1 } }] },
      { toolCalls: [{ name: "read_mcp_resource", args: { server: "catalog", uri } }] },
      { text: "read" },
    ]);
    await pi.session.prompt("read the server's instructions");
    const [first, second] = model.requests;
    assert.ok(first && second, "two requests at least");
    assert.deepEqual(
      first.tools.filter((name) => name.includes("resource")),
      [],
      "no resource tool (and no tool of the server) before the search",
    );
    assert.ok(first.tools.includes(TOOL_SEARCH_NAME));
    assert.match(
      toolResults(pi).find((r) => r.toolName === TOOL_SEARCH_NAME)?.content[0]?.text ?? "",
      /^- read_mcp_resource \(MCP resources\): /m,
    );
    assert.deepEqual(
      second.tools.filter((name) => name.includes("_mcp_resource")),
      ["read_mcp_resource"],
      "the one found is declared next",
    );
    const read = toolResults(pi).find((r) => r.toolName === "read_mcp_resource");
    assert.equal(read?.isError, false, JSON.stringify(read?.content));
    assert.match(read?.content[0]?.text ?? "", new RegExp(`^\\[resource\\] ${uri}`));
  });

  test("a tool a deferred server adds at run time is found by tool_search at once", async () => {
    const { pi, model, log } = await start({ exposure: "search" });
    const started = calls(log).find((c) => c.event === "start");
    assert.ok(started?.pid, "the server wrote its pid");
    process.kill(started.pid, "SIGUSR2");
    await waitFor(
      () => pi.session.getAllTools().some((t) => t.name === "mcp_catalog_rotate_deploy_key"),
      "the added tool to be registered",
      20_000,
    );
    model.script([
      { toolCalls: [{ name: TOOL_SEARCH_NAME, args: { query: "rotate the repository's ssh key", limit: 3 } }] },
      { text: "done" },
    ]);
    await pi.session.prompt("rotate the key");
    const search = toolResults(pi).find((r) => r.toolName === TOOL_SEARCH_NAME);
    const first = (search?.content[0]?.text ?? "").split("\n").find((line) => line.startsWith("- "));
    assert.match(first ?? "", /^- mcp_catalog_rotate_deploy_key /, search?.content[0]?.text);
    assert.ok(model.requests[1]!.tools.includes("mcp_catalog_rotate_deploy_key"));
  });

  test("/mcp and /mcp tools show each tool's exposure, what auto chose, and each server's cost per request", async () => {
    const ui = new RecordingUI();
    const { pi, model } = await start(
      { toolExposure: { "delete_*": "hidden", search_code: "direct" } },
      { exposure: "auto", exposureThreshold: 100 },
      { ui },
    );
    const run = async (command: string) => {
      const before = ui.notices.length;
      await pi.session.prompt(command);
      return ui.notices.slice(before).join("\n");
    };
    const tools = await run("/mcp tools catalog");
    assert.match(tools, /mcp_catalog_search_code .*·\s+direct$/m, "an exact name set direct");
    assert.match(tools, /mcp_catalog_delete_branch .*·\s+hidden$/m);
    assert.match(tools, /mcp_catalog_create_issue .*·\s+deferred \(auto\)$/m, "auto chose deferred past 100 tokens");
    assert.match(
      tools,
      /Tool exposure "auto" is deferred this session: MCP tool definitions of about [\d,]+ tokens are over the limit of 100/,
    );

    model.script([
      { toolCalls: [{ name: TOOL_SEARCH_NAME, args: { query: "list pull requests", limit: 1 } }] },
      { text: "done" },
    ]);
    await pi.session.prompt("which PRs are open?");
    const list = await run("/mcp list");
    assert.match(list, /mcp_catalog_list_pull_requests .*· deferred, loaded \(auto\)$/m);
    // The cost shown is what the server adds to a request: the entries of its declared tools (search_code, and
    // list_pull_requests now loaded) in the last request body, and its line of the system prompt's tool catalog.
    const last = model.requests.at(-1)!;
    const entries = (last.body.tools ?? []) as Array<{ function: { name: string } }>;
    const declared = entries
      .filter((t) => ["mcp_catalog_search_code", "mcp_catalog_list_pull_requests"].includes(t.function.name))
      .reduce((n, t) => n + JSON.stringify(t).length, 0);
    const messages = last.body.messages as Array<{ role: string; content: unknown }>;
    const system = String(messages.find((m) => m.role === "system" || m.role === "developer")?.content ?? "");
    const line = system.split("\n").find((l) => l.startsWith("- catalog"));
    assert.ok(line, system);
    const tokens = Math.ceil((declared + line.length + 1) / 4);
    assert.match(list, new RegExp(`catalog .* 7 tools  about ${tokens} tokens per request`));
    ui.noCustom = true; // as pi's RPC mode: /mcp is /mcp list's text, with what auto chose
    assert.match(await run("/mcp"), /Tool exposure "auto" is deferred this session/);
  });

  test("a resumed session and a fork of it still have the tools loaded before", async () => {
    const sessions = tempDir("mcp-bridge-sessions-");
    cleanups.push(() => sessions.cleanup());
    const deferred = { exposure: "deferred" };
    const first = await start(deferred, {}, { sessionManager: (cwd) => SessionManager.create(cwd, sessions.dir) });
    first.model.script([
      { toolCalls: [{ name: TOOL_SEARCH_NAME, args: { query: "search the code", limit: 1 } }] },
      { text: "done" },
    ]);
    await first.pi.session.prompt("where is main defined?");
    const file = first.pi.session.sessionManager.getSessionFile();
    assert.ok(file, "the session is saved to a file");
    assert.ok(first.model.requests[1]!.tools.includes("mcp_catalog_search_code"));

    for (const [how, open] of [
      ["resumed", (_cwd: string) => SessionManager.open(file)],
      ["forked", (cwd: string) => SessionManager.forkFrom(file, cwd, sessions.dir)],
    ] as const) {
      const again = await start(deferred, {}, { sessionManager: open });
      again.model.script([{ text: "ok" }]);
      await again.pi.session.prompt("and now?");
      assert.deepEqual(
        catalogTools(again.model.requests[0]!),
        ["mcp_catalog_search_code"],
        `${how}: the loaded tool and no other`,
      );
    }

    // The session still records the load, but the tool is hidden now: the record brings it back to no request.
    const hidden = await start(
      { ...deferred, toolExposure: { search_code: "hidden" } },
      {},
      { sessionManager: () => SessionManager.open(file) },
    );
    hidden.model.script([{ text: "ok" }]);
    await hidden.pi.session.prompt("and now?");
    assert.deepEqual(catalogTools(hidden.model.requests[0]!), [], "a load of a tool now hidden does nothing");
  });

  test("a deferred server still starting: tool_search is offered for it (on pi 0.73 the first prompt waits for it), and finds its tools once it is up", async () => {
    const gateDir = tempDir("mcp-bridge-gate-");
    cleanups.push(() => gateDir.cleanup());
    const gate = path.join(gateDir.dir, "ready");
    const slow = { command: process.execPath, args: [SLOW_START, "--until", gate], exposure: "deferred" };
    // Startup does not wait: the session starts with the server still deaf, until the test opens the gate.
    const ui = new RecordingUI();
    const { pi, model } = await start(slow, {}, { ui, budgetMs: 0 });
    model.script([
      { toolCalls: [{ name: TOOL_SEARCH_NAME, args: { names: ["mcp_catalog_hello"] } }] },
      { text: "done" },
    ]);
    const prompted = pi.session.prompt("say hello");
    // pi 0.73 gives a run the tools it had when it began, so the first prompt waits for the server; on pi 1.x the
    // first request goes at once, with tool_search, which waits for the server when it is called.
    if (PI_LINE === "0.73") {
      const waiting = "Waiting up to 10 s for MCP servers still starting: catalog (Escape: go on without them)";
      await waitFor(() => ui.notices.includes(waiting), "the first prompt to wait", 30_000);
      writeFileSync(gate, "");
    }
    await waitFor(() => model.requests.length > 0, "the first request", 30_000);
    const first = model.requests[0]!;
    assert.ok(first.tools.includes(TOOL_SEARCH_NAME), `tool_search is offered: ${first.tools.join(", ")}`);
    if (PI_LINE === "1.x") {
      assert.match(JSON.stringify(first.body), /find them with tool_search\. Their servers: catalog \(starting\)/);
      writeFileSync(gate, "");
    }
    await prompted;
    const [search] = toolResults(pi);
    assert.match(search?.content[0]?.text ?? "", /^Loaded 1 tool; call it by name:\n- mcp_catalog_hello /);
    const second = model.requests[1]!.tools;
    assert.ok(second.includes("mcp_catalog_hello"), `declared once loaded: ${second.join(", ")}`);
  });

  test(
    "pi 0.73: a tool whose server connected during the run is found, said to be callable from the next message, and is then",
    { skip: PI_LINE === "1.x" && "pi 1.x offers a run the tools registered during it" },
    async () => {
      const gateDir = tempDir("mcp-bridge-gate-");
      const originalWait = process.env.PI_MCP_FIRST_PROMPT_WAIT_MS;
      // The first prompt does not wait for the server: it comes up while tool_search waits for it.
      process.env.PI_MCP_FIRST_PROMPT_WAIT_MS = "0";
      cleanups.push(() => {
        gateDir.cleanup();
        if (originalWait === undefined) delete process.env.PI_MCP_FIRST_PROMPT_WAIT_MS;
        else process.env.PI_MCP_FIRST_PROMPT_WAIT_MS = originalWait;
      });
      const gate = path.join(gateDir.dir, "ready");
      const slow = { command: process.execPath, args: [SLOW_START, "--until", gate], exposure: "deferred" };
      const { pi, model } = await start(slow, {}, { ui: new RecordingUI(), budgetMs: 0 });
      const hello = { toolCalls: [{ name: "mcp_catalog_hello", args: {} }] };
      model.script([
        { toolCalls: [{ name: TOOL_SEARCH_NAME, args: { names: ["mcp_catalog_hello"] } }] },
        { text: "found it" },
        hello,
        { text: "done" },
      ]);
      const prompted = pi.session.prompt("say hello");
      await waitFor(() => model.requests.length > 0, "the first request", 30_000);
      writeFileSync(gate, "");
      await prompted;
      const [search] = toolResults(pi);
      assert.match(
        search?.content[0]?.text ?? "",
        /^Loaded 1 tool; call it by name:\n- mcp_catalog_hello \(MCP server catalog\) \(it arrived during this turn: callable from the user's next message on\): /,
      );
      await pi.session.prompt("now say hello");
      assert.ok(model.requests[2]!.tools.includes("mcp_catalog_hello"), "the next run declares it");
      const [, call] = toolResults(pi);
      assert.equal(call?.isError, false, JSON.stringify(call?.content));
    },
  );

  test("tool_search never finds a hidden tool, even one that fits the query best", async () => {
    const { pi, model } = await start({ exposure: "deferred", toolExposure: { delete_branch: "hidden" } });
    model.script([
      { toolCalls: [{ name: TOOL_SEARCH_NAME, args: { query: "delete a branch of a repository", limit: 10 } }] },
      { text: "done" },
    ]);
    await pi.session.prompt("remove the old branch");
    const search = toolResults(pi).find((r) => r.toolName === TOOL_SEARCH_NAME);
    const text = search?.content[0]?.text ?? "";
    // The query reached the index: the deferred tools that fit it come back.
    assert.match(text, /mcp_catalog_delete_comment/);
    assert.doesNotMatch(text, /delete_branch/, "the hidden tool is not found");
    for (const request of model.requests)
      assert.ok(!request.tools.includes("mcp_catalog_delete_branch"), "nor loaded into a request");
  });

  test("/tree to a point before a tool was loaded: the tool is not loaded there; back on the branch it is again", async () => {
    const { pi, model } = await start({ exposure: "deferred" });
    model.script([{ text: "hello" }]);
    await pi.session.prompt("hi");
    // The point before the load: the model's first answer, on the session's branch.
    const beforeLoad = pi.session.sessionManager.getLeafId();
    assert.ok(beforeLoad);
    model.script([
      { toolCalls: [{ name: TOOL_SEARCH_NAME, args: { query: "search the code", limit: 1 } }] },
      { text: "found" },
    ]);
    await pi.session.prompt("where is main defined?");
    const loadedLeaf = pi.session.sessionManager.getLeafId();
    assert.ok(model.requests.at(-1)!.tools.includes("mcp_catalog_search_code"), "loaded on this branch");

    await pi.session.navigateTree(beforeLoad);
    let before = model.requests.length;
    model.script([{ text: "ok" }]);
    await pi.session.prompt("and now?");
    assert.deepEqual(catalogTools(model.requests[before]!), [], "no load on the branch before it");

    await pi.session.navigateTree(loadedLeaf!);
    before = model.requests.length;
    model.script([{ text: "ok" }]);
    await pi.session.prompt("and back here?");
    assert.deepEqual(catalogTools(model.requests[before]!), ["mcp_catalog_search_code"], "the branch's load is back");
  });

  test("a deferred tool whose name another extension has: tool_search names the tool's own free name, not the other's", async () => {
    const other = tempDir("mcp-bridge-other-");
    cleanups.push(() => other.cleanup());
    const extension = path.join(other.dir, "other-extension.ts");
    writeFileSync(
      extension,
      `export default function (pi) {
        pi.registerTool({ name: "mcp_catalog_search_code", label: "other", description: "another extension's tool",
          parameters: { type: "object", properties: {} },
          async execute() { return { content: [{ type: "text", text: "from the other extension" }], details: {} }; } });
      }`,
    );
    const { pi, model } = await start({ exposure: "deferred" }, {}, { extensions: [extension] });
    model.script([{ toolCalls: [{ name: TOOL_SEARCH_NAME, args: { names: ["search_code"] } }] }, { text: "found" }]);
    await pi.session.prompt("where is main defined?");
    const text = toolResults(pi).find((r) => r.toolName === TOOL_SEARCH_NAME)?.content[0]?.text ?? "";
    assert.match(text, /^- mcp_catalog_search_code_2 \(MCP server catalog\): /m, text);
    assert.ok(model.requests.at(-1)!.tools.includes("mcp_catalog_search_code_2"), "the tool it named is declared");
  });

  test("a hidden tool whose name another extension has: the startup notice says nothing of registering it elsewhere, as of a visible one", async () => {
    const other = tempDir("mcp-bridge-other-");
    cleanups.push(() => other.cleanup());
    const extension = path.join(other.dir, "other-extension.ts");
    writeFileSync(
      extension,
      `export default function (pi) {
        for (const name of ["mcp_catalog_delete_branch", "mcp_catalog_search_code"])
          pi.registerTool({ name, label: "other", description: "another extension's tool",
            parameters: { type: "object", properties: {} },
            async execute() { return { content: [{ type: "text", text: "from the other extension" }], details: {} }; } });
      }`,
    );
    const ui = new RecordingUI();
    await start({ toolExposure: { delete_branch: "hidden" } }, {}, { extensions: [extension], ui });
    await waitFor(() => ui.notices.length > 0, "the startup notice");
    const notice = ui.notices.join("\n");
    assert.match(notice, /Tool name 'mcp_catalog_search_code' .* registered as 'mcp_catalog_search_code_2'/, notice);
    assert.doesNotMatch(notice, /delete_branch/, notice);
  });

  test("tool_search with a limit past its bounds loads at most 10 (or at least 1) instead of failing the call", async () => {
    const { pi, model } = await start({ exposure: "deferred" });
    model.script([
      { toolCalls: [{ name: TOOL_SEARCH_NAME, args: { query: "pull requests", limit: 20 } }] },
      { toolCalls: [{ name: TOOL_SEARCH_NAME, args: { query: "delete a branch", limit: 0 } }] },
      { text: "done" },
    ]);
    await pi.session.prompt("review the open pull requests");
    const [many, none] = toolResults(pi).filter((r) => r.toolName === TOOL_SEARCH_NAME);
    assert.equal(many?.isError, false, JSON.stringify(many?.content));
    assert.match(many?.content[0]?.text ?? "", /^Loaded \d+ tools?;/);
    assert.equal(none?.isError, false, JSON.stringify(none?.content));
    assert.match(none?.content[0]?.text ?? "", /^Loaded 1 tool;/);
  });

  test("tool_search with null for what it leaves out (as some models send) searches as without them", async () => {
    const { pi, model } = await start({ exposure: "deferred" });
    model.script([
      { toolCalls: [{ name: TOOL_SEARCH_NAME, args: { query: "pull requests" } }] },
      { toolCalls: [{ name: TOOL_SEARCH_NAME, args: { query: "pull requests", names: null, limit: null } }] },
      { text: "done" },
    ]);
    await pi.session.prompt("review the open pull requests");
    const [plain, nulls] = toolResults(pi).filter((r) => r.toolName === TOOL_SEARCH_NAME);
    assert.match(plain?.content[0]?.text ?? "", /^Loaded [2-9] tools;/);
    assert.equal(nulls?.isError, false, JSON.stringify(nulls?.content));
    assert.equal(nulls?.content[0]?.text, plain?.content[0]?.text);
  });

  test("tool_search with names in one string (one name, or several) loads them instead of failing the call", async () => {
    const { pi, model } = await start({ exposure: "deferred" });
    model.script([
      { toolCalls: [{ name: TOOL_SEARCH_NAME, args: { names: "create_issue, search_code" } }] },
      { text: "done" },
    ]);
    await pi.session.prompt("file it");
    const search = toolResults(pi).find((r) => r.toolName === TOOL_SEARCH_NAME);
    assert.equal(search?.isError, false, JSON.stringify(search?.content));
    assert.match(search?.content[0]?.text ?? "", /^Loaded 2 tools;/);
    assert.deepEqual(catalogTools(model.requests.at(-1)!), ["mcp_catalog_create_issue", "mcp_catalog_search_code"]);
  });

  test("tool_search does not wait for a server still starting whose tools will be direct: it could find none of them", async () => {
    const gateDir = tempDir("mcp-bridge-gate-");
    const gate = path.join(gateDir.dir, "ready");
    const originalWait = process.env.PI_MCP_FIRST_PROMPT_WAIT_MS;
    process.env.PI_MCP_FIRST_PROMPT_WAIT_MS = "0";
    cleanups.push(() => {
      writeFileSync(gate, "");
      gateDir.cleanup();
      if (originalWait === undefined) delete process.env.PI_MCP_FIRST_PROMPT_WAIT_MS;
      else process.env.PI_MCP_FIRST_PROMPT_WAIT_MS = originalWait;
    });
    const slow = { command: process.execPath, args: [SLOW_START, "--until", gate], exposure: "direct" };
    const { pi, model } = await start(
      { exposure: "deferred" },
      {},
      { ui: new RecordingUI(), servers: { slow }, budgetMs: 0 },
    );
    model.script([{ toolCalls: [{ name: TOOL_SEARCH_NAME, args: { names: ["search_code"] } }] }, { text: "done" }]);
    const prompted = pi.session.prompt("where is main defined?");
    await waitFor(() => toolResults(pi).some((r) => r.toolName === TOOL_SEARCH_NAME), "tool_search's answer", 10_000);
    assert.match(toolResults(pi)[0]?.content[0]?.text ?? "", /^Loaded 1 tool;/);
    writeFileSync(gate, "");
    await prompted;
  });

  test("a search that matches nothing counts only the tools not loaded yet as not in the model's list", async () => {
    const { pi, model } = await start({ exposure: "deferred" });
    model.script([
      { toolCalls: [{ name: TOOL_SEARCH_NAME, args: { names: ["create_issue", "search_code"] } }] },
      { toolCalls: [{ name: TOOL_SEARCH_NAME, args: { query: "xyzzy plugh" } }] },
      { text: "done" },
    ]);
    await pi.session.prompt("file it");
    const [, none] = toolResults(pi).filter((r) => r.toolName === TOOL_SEARCH_NAME);
    assert.match(none?.content[0]?.text ?? "", /^No tool matched "xyzzy plugh" among 5 MCP tools not in your list\./);
  });
});
