/**
 * Naming and registration against real servers: collisions across servers and with pi's tools, prefixes, long and
 * unusual names that must still reach the server under their original name.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import type { ServerConnection } from "../src/connection/server-connection.ts";
import { ToolRegistry } from "../src/pi/tool-registry.ts";
import { type RunningServer, startStreamableHttp } from "./fixtures/http-servers.ts";
import { connectionFor, EXTENSION_DIR, readLog, tempDir, trustProjectServers, waitFor } from "./helpers.ts";
import { type InProcessPi, requestTools, startInProcessPi } from "./pi-harness.ts";
import { RecordingUI } from "./recording-ui.ts";

const LONG_NAME = `fetch_${"very_long_segment_".repeat(5)}end`;
const ODD_NAME = "get.item v2";
const CHINESE_NAMES = ["查询天气", "查询地址"];

describe("tool registration", { timeout: 120_000 }, () => {
  let alpha: RunningServer;
  let beta: RunningServer;
  const connections = new Map<string, ServerConnection>();

  /** A registry over `servers` (no server registered yet), and the pi tools it registers, by name. */
  function registryOf(servers: Map<string, ServerConnection>, options?: ConstructorParameters<typeof ToolRegistry>[2]) {
    const tools = new Map<string, ToolDefinition>();
    const registry = new ToolRegistry(
      (def) => tools.set(def.name, def as ToolDefinition),
      (name) => servers.get(name),
      options,
    );
    return { tools, registry };
  }
  /** alpha before beta, and `echo` of one of them hidden by the user. */
  const hidingEcho = (of: string) => ({
    serverOrder: () => ["alpha", "beta"],
    isHidden: (server: string, tool: string) => server === of && tool === "echo",
  });

  function register(): { tools: Map<string, ToolDefinition>; registry: ToolRegistry } {
    const { tools, registry } = registryOf(connections);
    for (const connection of connections.values()) registry.registerServer(connection);
    return { tools, registry };
  }

  async function callText(tool: ToolDefinition | undefined, params: Record<string, unknown> = {}): Promise<string> {
    assert.ok(tool);
    const result = await tool.execute("id", params as never, undefined, undefined, undefined as never);
    return (result.content[0] as { text: string }).text;
  }

  before(async () => {
    const extraTools = [
      { name: "read", description: "A tool named like pi's read", inputSchema: { type: "object" as const } },
      // pi 1.x's own PowerShell tool (on Windows): an extension's tool of that name would replace it.
      { name: "powershell", inputSchema: { type: "object" as const } },
      { name: "tool_search", description: "Named like the bridge's own", inputSchema: { type: "object" as const } },
      { name: LONG_NAME, inputSchema: { type: "object" as const } },
      { name: ODD_NAME, inputSchema: { type: "object" as const } },
      // Names in Chinese: as underscores alone they would be one name.
      ...CHINESE_NAMES.map((name) => ({ name, inputSchema: { type: "object" as const } })),
      // A pattern that is not a valid regular expression: TypeBox cannot compile this schema.
      {
        name: "bad_pattern",
        inputSchema: { type: "object" as const, properties: { q: { type: "string", pattern: "(" } } },
      },
    ];
    alpha = await startStreamableHttp({ extraTools });
    beta = await startStreamableHttp();
    // In config order: alpha first, so it keeps the clean names.
    connections.set("alpha", connectionFor("alpha", { url: alpha.url, prefix: "" }));
    connections.set("beta", connectionFor("beta", { url: beta.url, prefix: "" }));
    connections.set("gamma", connectionFor("gamma", { url: beta.url, prefix: "gh" }));
    for (const connection of connections.values()) await connection.connect();
  });
  after(async () => {
    for (const connection of connections.values()) await connection.close();
    await alpha.close();
    await beta.close();
  });

  test("a name taken by another server gets _2 and one warning for the server naming both sources", () => {
    const { tools, registry } = register();
    assert.ok(tools.has("echo"));
    assert.ok(tools.has("echo_2"));
    assert.equal(registry.tools.find((t) => t.name === "echo")!.server, "alpha");
    assert.equal(registry.tools.find((t) => t.name === "echo_2")!.server, "beta");
    const notes = registry.notesFor("beta").clashes;
    assert.equal(notes.length, 1, notes.join("\n"));
    assert.match(
      notes[0]!,
      /^Tool name conflict: 'echo', 'add', .* and \d+ more provided by both 'alpha' and 'beta'; 'alpha' keeps them, and 'beta''s are registered as 'echo_2', 'add_2', .*Set "prefix" on one of the servers \(e\.g\. "prefix": "beta"\)/,
    );
    assert.deepEqual(
      registry.notesFor("alpha"),
      { clashes: [], schema: [] },
      "the server that keeps the names has nothing to hear",
    );
    assert.doesNotMatch(registry.warnings.join("\n"), /'echo'/, "no line per tool besides the server's");
  });

  test("three servers whose tools want the same name: _2 and _3 in config order, each reaching its own server", async () => {
    const delta = await startStreamableHttp();
    const third = connectionFor("delta", { url: delta.url, prefix: "" });
    try {
      await third.connect();
      const three = new Map([...[...connections].filter(([name]) => name !== "gamma"), ["delta", third]]);
      assert.deepEqual([...three.keys()], ["alpha", "beta", "delta"]);
      const { tools, registry } = registryOf(three);
      for (const connection of three.values()) registry.registerServer(connection);
      const owner = (name: string) => registry.tools.find((t) => t.name === name)?.server;
      assert.deepEqual(["echo", "echo_2", "echo_3", "echo_4"].map(owner), ["alpha", "beta", "delta", undefined]);
      assert.match(
        registry.notesFor("delta").clashes.join("\n"),
        /^Tool name conflict: 'echo', .* provided by both 'alpha' and 'delta'; 'alpha' keeps them, and 'delta''s are registered as 'echo_3', 'add_3'/,
      );
      const servers = { alpha, beta, delta };
      for (const [name, server] of [
        ["echo", "alpha"],
        ["echo_2", "beta"],
        ["echo_3", "delta"],
      ] as const) {
        assert.equal(await callText(tools.get(name), { text: `to ${server}` }), `to ${server}`);
        assert.deepEqual(
          servers[server].calls.at(-1),
          { name: "echo", args: { text: `to ${server}` } },
          `${name} reached ${server}`,
        );
      }
      assert.equal(delta.calls.length, 1, "delta got only its own call");
    } finally {
      await third.close();
      await delta.close();
    }
  });

  test("a tool the user hid leaves its name to a tool of a later server that wants it, and no conflict is said", () => {
    const { tools, registry } = registryOf(connections, hidingEcho("alpha"));
    registry.registerServer(connections.get("alpha")!);
    registry.registerServer(connections.get("beta")!);
    assert.equal(registry.find("echo")?.server, "beta", "beta's echo is registered as echo, not echo_2");
    assert.ok(tools.has("echo") && !tools.has("echo_2"));
    assert.doesNotMatch(registry.notesFor("beta").clashes.join("\n"), /'echo'/);
    assert.doesNotMatch(registry.notesFor("alpha").clashes.join("\n"), /'echo'/, "nor of the hidden tool's name");
  });

  test("a tool the user hid leaves its name to a visible tool of a server that connects after the session started", () => {
    const { tools, registry } = registryOf(connections, hidingEcho("alpha"));
    registry.registerServer(connections.get("alpha")!);
    registry.bindActivation({ getActiveTools: () => [...tools.keys()], setActiveTools: () => {} });
    // beta is slower than the startup budget: pi never had the hidden tool's name, so nothing holds it.
    registry.registerServer(connections.get("beta")!);
    assert.equal(registry.find("echo")?.server, "beta", "beta's echo is registered as echo, not echo_2");
    assert.ok(tools.has("echo") && !tools.has("echo_2"));
    assert.doesNotMatch(registry.notesFor("beta").clashes.join("\n"), /'echo'/);
    assert.equal(registry.toolsOf("alpha").filter((t) => t.originalName === "echo").length, 1, "the hidden one kept");
  });

  test("a hidden tool listed after the session started takes no name a visible one has, unsaid", () => {
    const [alpha, beta] = [connections.get("alpha")!, connections.get("beta")!];
    const withoutEcho = alpha.tools.filter((t) => t.name !== "echo");
    const started = (alphaTools: typeof alpha.tools) => {
      const { tools, registry } = registryOf(connections, hidingEcho("alpha"));
      registry.syncServer(alpha, alphaTools);
      registry.bindActivation({ getActiveTools: () => [...tools.keys()], setActiveTools: () => {} });
      return registry;
    };
    const later = started(withoutEcho);
    later.registerServer(beta);
    later.syncServer(alpha, alpha.tools);
    assert.equal(later.find("echo")?.server, "beta");
    for (const server of ["alpha", "beta"])
      assert.doesNotMatch(later.notesFor(server).clashes.join("\n"), /'echo'/, server);
    // Listed, dropped while a visible tool took the name, then listed again: the hidden tool stays off that name.
    const again = started(alpha.tools);
    again.syncServer(alpha, withoutEcho);
    again.registerServer(beta);
    again.syncServer(alpha, alpha.tools);
    assert.equal(again.find("echo")?.server, "beta");
    assert.ok(again.toolsOf("beta").some((t) => t.name === "echo"));
  });

  test("a hidden tool never brings back to the model the name of a tool another server stopped listing", () => {
    const { tools, registry } = registryOf(connections, hidingEcho("beta"));
    const alpha = connections.get("alpha")!;
    registry.syncServer(alpha, alpha.tools);
    registry.syncServer(
      alpha,
      alpha.tools.filter((t) => t.name !== "echo"),
    );
    registry.registerServer(connections.get("beta")!);
    let active = [...tools.keys()];
    registry.bindActivation({ getActiveTools: () => active, setActiveTools: (names) => (active = names) });
    assert.ok(!active.includes("echo"), "pi's 'echo' only says it is no longer available");
    // Nor when the hidden tool had the name first, gave it up to alpha's, and moves back to it once alpha drops it.
    const second = new Map<string, ToolDefinition>();
    const again = new ToolRegistry(
      (def) => second.set(def.name, def as ToolDefinition),
      (name) => connections.get(name),
      { serverOrder: () => ["alpha", "beta"], isHidden: (server, tool) => server === "beta" && tool === "echo" },
    );
    again.registerServer(connections.get("beta")!);
    again.syncServer(alpha, alpha.tools);
    again.syncServer(
      alpha,
      alpha.tools.filter((t) => t.name !== "echo"),
    );
    active = [...second.keys()];
    again.bindActivation({ getActiveTools: () => active, setActiveTools: (names) => (active = names) });
    assert.ok(!active.includes("echo"), "nor after a move");
  });

  test("a hidden tool's schema is not said: the model never sees it, and there is nothing to do about it", () => {
    const registry = new ToolRegistry(
      () => {},
      (name) => connections.get(name),
      { isHidden: (_server, tool) => tool !== "shown" },
    );
    const conditional = { type: "object" as const, properties: { a: { type: "string" } }, not: { required: ["a"] } };
    const bad = { type: "object" as const, properties: { q: { type: "string", pattern: "(" } } };
    const typeless = { type: "object" as const, properties: {} };
    const meta = { "mcp-bridge/input-schema-without-type": true };
    registry.syncServer(connections.get("alpha")!, [
      { name: "shown", inputSchema: conditional },
      { name: "hidden", inputSchema: conditional },
      { name: "hidden_bad", inputSchema: bad },
      { name: "hidden_typeless", inputSchema: typeless, _meta: meta },
    ]);
    assert.match(registry.notesFor("alpha").schema.join("\n"), /^1 tool uses schema keywords/);
    assert.doesNotMatch(registry.notesFor("alpha").schema.join("\n"), /without `type`/);
    assert.doesNotMatch(registry.warnings.join("\n"), /hidden_bad/);
  });

  test("a name of one of pi's tools is never taken over", () => {
    const { tools, registry } = register();
    assert.equal(tools.has("read"), false);
    assert.ok(tools.has("read_2"));
    assert.match(
      registry.warnings.join("\n"),
      /'read' .* is already taken by pi's built-in tool 'read'; registered as 'read_2'/,
    );
    assert.ok(tools.has("powershell_2"));
    // Nor one of the bridge's own: pi keeps one tool of a name, so one of the two would be out of reach.
    assert.ok(tools.has("tool_search_2"));
    assert.match(registry.warnings.join("\n"), /is already taken by the MCP bridge's own tool 'tool_search'/);
  });

  test("a prefix replaces mcp_<server>", () => {
    const { tools } = register();
    assert.ok(tools.has("gh_echo"));
    assert.ok(tools.has("gh_add"));
  });

  test("both colliding tools work and reach their own server", async () => {
    const { tools } = register();
    assert.equal(await callText(tools.get("echo"), { text: "to alpha" }), "to alpha");
    assert.equal(await callText(tools.get("echo_2"), { text: "to beta" }), "to beta");
    assert.deepEqual(alpha.calls.at(-1), { name: "echo", args: { text: "to alpha" } });
    assert.deepEqual(beta.calls.at(-1), { name: "echo", args: { text: "to beta" } });
  });

  test("long and unusual names are made safe, and calls still use the original name", async () => {
    const { tools, registry } = register();
    const long = registry.tools.find((t) => t.originalName === LONG_NAME)!;
    assert.equal(long.name.length, 64);
    assert.match(long.name, /^[A-Za-z][A-Za-z0-9_-]*_[0-9a-f]{8}$/);
    assert.equal(await callText(tools.get(long.name)), `called ${LONG_NAME}`);
    const odd = registry.tools.find((t) => t.originalName === ODD_NAME)!;
    assert.equal(odd.name, "get_item_v2");
    assert.equal(await callText(tools.get(odd.name)), `called ${ODD_NAME}`);
    assert.equal(alpha.calls.at(-1)!.name, ODD_NAME);
    const chinese = CHINESE_NAMES.map((name) => registry.tools.find((t) => t.originalName === name)!.name);
    for (const name of chinese) assert.match(name, /^mcp_[0-9a-f]{8}$/);
    assert.notEqual(chinese[0], chinese[1]);
    assert.deepEqual(
      registry.warnings.filter((w) => w.includes("查询")),
      [],
      "no name taken: each has its own",
    );
    assert.equal(await callText(tools.get(chinese[1]!)), `called ${CHINESE_NAMES[1]}`);
  });

  test("two tools of one server whose names are the same once cleaned (a trailing space): the one registered is the one called", async () => {
    const server = await startStreamableHttp({
      extraTools: [
        { name: "lookup", inputSchema: { type: "object" as const } },
        { name: "lookup ", inputSchema: { type: "object" as const } },
      ],
    });
    const connection = connectionFor("spaced", { url: server.url, prefix: "" });
    try {
      await connection.connect();
      const tools = new Map<string, ToolDefinition>();
      new ToolRegistry(
        (def) => tools.set(def.name, def as ToolDefinition),
        () => connection,
      ).registerServer(connection);
      assert.equal(await callText(tools.get("lookup")), "called lookup");
    } finally {
      await connection.close();
      await server.close();
    }
  });

  test("a tool renamed to its cleaned name ('lookup ' to 'lookup') is called by its new name", async () => {
    // Lists 'lookup ' until its first call, then says its list changed and lists 'lookup'; a call answers its name.
    const script = `let called = false;
    const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n");
    require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
      const { id, method, params } = JSON.parse(line);
      if (id === undefined) return;
      if (method === "initialize")
        return send({ id, result: { protocolVersion: "2025-06-18", capabilities: { tools: { listChanged: true } }, serverInfo: { name: "s", version: "1" } } });
      if (method === "tools/list")
        return send({ id, result: { tools: [{ name: called ? "lookup" : "lookup ", inputSchema: { type: "object" } }] } });
      if (method !== "tools/call") return send({ id, result: {} });
      send({ id, result: { content: [{ type: "text", text: "called " + JSON.stringify(params.name) }] } });
      if (!called) send({ method: "notifications/tools/list_changed" });
      called = true;
    });`;
    let lists = 0;
    const connection = connectionFor(
      "renamed",
      { command: process.execPath, args: ["-e", script], protocolVersion: "2025-06-18", prefix: "" },
      { onTools: () => lists++ },
    );
    try {
      await connection.connect();
      const tools = new Map<string, ToolDefinition>();
      new ToolRegistry(
        (def) => tools.set(def.name, def as ToolDefinition),
        () => connection,
      ).registerServer(connection);
      assert.equal(await callText(tools.get("lookup")), 'called "lookup "');
      await waitFor(() => lists === 2, "the list read after the change (the first came with the connect)");
      assert.equal(await callText(tools.get("lookup")), 'called "lookup"');
    } finally {
      await connection.close();
    }
  });

  test("a schema that cannot be compiled: the model's copy leaves the pattern out, the server checks, a warning says so, the tool works", async () => {
    const { tools, registry } = register();
    assert.deepEqual(tools.get("bad_pattern")!.parameters, { type: "object", properties: { q: { type: "string" } } });
    assert.equal(await callText(tools.get("bad_pattern"), { q: "x" }), "called bad_pattern");
    assert.match(
      registry.warnings.join("\n"),
      /MCP server 'alpha', tool 'bad_pattern': its input schema cannot be compiled .*only the server checks the arguments/,
    );
  });

  test("the same config always gives the same names", () => {
    const first = register().registry.tools.map((t) => `${t.server}/${t.originalName}=${t.name}`);
    const second = register().registry.tools.map((t) => `${t.server}/${t.originalName}=${t.name}`);
    assert.deepEqual(second, first);
  });

  test("registering a server again keeps its names", () => {
    const { tools, registry } = registryOf(connections);
    registry.registerServer(connections.get("alpha")!);
    registry.registerServer(connections.get("beta")!);
    const before = registry.tools.map((t) => t.name);
    registry.registerServer(connections.get("alpha")!);
    registry.registerServer(connections.get("beta")!);
    assert.deepEqual(
      registry.tools.map((t) => t.name),
      before,
    );
    assert.equal(tools.has("echo_3"), false);
  });

  test("before the session, the same names whichever server's list arrives first: config order decides", () => {
    const order = () => ["alpha", "beta"];
    const namesAfter = (arrival: string[]) => {
      const registry = new ToolRegistry(
        () => {},
        (name) => connections.get(name),
        { serverOrder: order },
      );
      for (const server of arrival) registry.registerServer(connections.get(server)!);
      return registry.tools.map((t) => `${t.server}/${t.originalName}=${t.name}`).sort();
    };
    const inOrder = namesAfter(["alpha", "beta"]);
    assert.ok(inOrder.includes("alpha/echo=echo") && inOrder.includes("beta/echo=echo_2"));
    assert.deepEqual(namesAfter(["beta", "alpha"]), inOrder);
  });

  test("before the session, a name a moved tool left behind explains itself and leaves the active set", async () => {
    const order = () => ["alpha", "beta"];
    const tools = new Map<string, ToolDefinition>();
    const events: Array<[string, Record<string, unknown>]> = [];
    const registry = new ToolRegistry(
      (def) => tools.set(def.name, def as ToolDefinition),
      (name) => connections.get(name),
      { events: (channel, payload) => events.push([channel, payload]), serverOrder: order },
    );
    const alphaConnection = connections.get("alpha")!;
    const betaConnection = connections.get("beta")!;
    registry.syncServer(betaConnection, betaConnection.tools);
    registry.syncServer(alphaConnection, alphaConnection.tools);
    assert.equal(
      registry.tools.find((t) => t.name === "echo_2")?.server,
      "beta",
      "beta moved to echo_2 when alpha came",
    );
    const [channel, payload] = events.at(-1)!;
    assert.equal(channel, "tools.updated");
    assert.equal(payload.serverId, "beta");
    assert.ok(
      (payload.tools as Array<{ name: string; originalName: string }>).some(
        (t) => t.name === "echo_2" && t.originalName === "echo",
      ),
      "the move is announced",
    );
    // alpha stops listing echo: beta's echo gets the plain name back, and echo_2, which pi still has, is retired.
    registry.syncServer(
      alphaConnection,
      alphaConnection.tools.filter((t) => t.name !== "echo"),
    );
    assert.equal(registry.tools.find((t) => t.name === "echo")?.server, "beta");
    assert.equal(
      registry.tools.some((t) => t.name === "echo_2"),
      false,
    );
    let active = [...tools.keys()];
    registry.bindActivation({ getActiveTools: () => active, setActiveTools: (names) => (active = names) });
    assert.ok(active.includes("echo"));
    assert.equal(active.includes("echo_2"), false);
    assert.equal(await callText(tools.get("echo"), { text: "to beta" }), "to beta");
    assert.deepEqual(beta.calls.at(-1), { name: "echo", args: { text: "to beta" } });
    await assert.rejects(
      callText(tools.get("echo_2"), { text: "x" }),
      /Tool 'echo_2' is no longer available: tool 'echo' of MCP server 'beta' has another name now/,
    );
    assert.match(
      registry.notesFor("beta").clashes.join("\n"),
      /provided by both 'alpha' and 'beta'/,
      "add and the rest",
    );
    assert.doesNotMatch(
      registry.notesFor("beta").clashes.join("\n"),
      /'echo'/,
      "no warning about a collision that is gone",
    );
  });

  test("$ref schemas are inlined into the parameters pi sees", () => {
    const { tools } = register();
    assert.deepEqual(tools.get("shape")!.parameters, {
      type: "object",
      properties: {
        at: { type: "object", properties: { x: { type: "number" }, y: { type: "number" } }, required: ["x", "y"] },
      },
      required: ["at"],
    });
  });
});

/** A promise and the function that resolves it (Node 20 has no `Promise.withResolvers`). */
function gate(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe("in pi: colliding names go by config order, whichever server connects first", { timeout: 120_000 }, () => {
  const project = tempDir("mcp-bridge-order-project-");
  const agentDir = tempDir("mcp-bridge-order-agent-");
  const originalCwd = process.cwd();
  const originalBudget = process.env.PI_MCP_STARTUP_BUDGET_MS;
  const events: Array<{ channel: string; serverId: string; tools: Array<{ name: string; originalName: string }> }> = [];
  const hook = globalThis as { __mcpOrderEvent?: (channel: string, payload: (typeof events)[number]) => void };
  const releaseFirst = gate();
  const releaseZeroth = gate();
  let zeroth: RunningServer;
  let first: RunningServer;
  let second: RunningServer;
  let pi: InProcessPi | undefined;
  /**
   * pi's UI: with one the session starts at once, as in the TUI, while zeroth is still held back (a session without one
   * waits for every server). The startup notice is shown in it.
   */
  const ui = new RecordingUI();

  const registered = (server: string) => events.some((e) => e.channel === "tools.registered" && e.serverId === server);

  before(async () => {
    // zeroth and first come before second in the config, but second is up first: first answers nothing until second's
    // tools are registered, and zeroth nothing until pi's session runs.
    zeroth = await startStreamableHttp({ holdRequests: releaseZeroth.promise });
    first = await startStreamableHttp({ holdRequests: releaseFirst.promise });
    second = await startStreamableHttp();
    mkdirSync(path.join(project.dir, ".pi"));
    writeFileSync(
      path.join(project.dir, ".pi", "mcp.json"),
      JSON.stringify({
        // The model calls the tools here directly, without asking anyone (approval has its own tests).
        exposure: "direct",
        mcpServers: {
          zeroth: { url: zeroth.url, prefix: "", autoApprove: ["*"] },
          first: { url: first.url, prefix: "", autoApprove: ["*"] },
          second: { url: second.url, prefix: "", autoApprove: ["*"] },
        },
      }),
    );
    // Another extension, loaded first, that passes the bridge's tool events on to this test.
    writeFileSync(
      path.join(project.dir, "listener.ts"),
      `export default function (pi) {
        for (const channel of ["tools.registered", "tools.updated"]) {
          pi.events.on(channel, (payload) => globalThis.__mcpOrderEvent?.(channel, payload));
        }
      }`,
    );
    hook.__mcpOrderEvent = (channel, payload) => {
      events.push({ ...payload, channel });
      if (channel === "tools.registered" && payload.serverId === "second") releaseFirst.resolve();
    };
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    // pi's startup does not wait for any server: the test decides when the session starts.
    process.env.PI_MCP_STARTUP_BUDGET_MS = "0";
    process.chdir(project.dir);
    // The project's servers are the test's own: trusted, as "trust all" would record it.
    await trustProjectServers(project.dir, agentDir.dir);
    pi = await startInProcessPi({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [path.join(project.dir, "listener.ts"), EXTENSION_DIR],
    });
    // Both servers are registered before the session starts (pi has shown no tool to a model yet).
    await waitFor(() => registered("first"), "the first server's tools, after the second's", 30_000);
    assert.equal(registered("zeroth"), false, "zeroth is still held back");
    await pi.session.bindExtensions({ uiContext: ui.context() });
  });

  /** The servers whose tool lists the bridge's cache holds on disk. */
  function cachedServers(): Set<string> {
    try {
      const file = path.join(agentDir.dir, "mcp-bridge", "tool-cache.json");
      const { entries } = JSON.parse(readFileSync(file, "utf8")) as { entries: Record<string, { server: string }> };
      return new Set(Object.values(entries).map((e) => e.server));
    } catch {
      return new Set();
    }
  }

  after(async () => {
    // Shut down first: a server still held back is then abandoned, not connected during the shutdown.
    await pi?.close();
    releaseFirst.resolve();
    releaseZeroth.resolve();
    delete hook.__mcpOrderEvent;
    // The bridge's shutdown waits for the tool lists it is writing to its cache, so no late write recreates the agent
    // dir once it is removed.
    const arrived = new Set(events.filter((e) => e.channel === "tools.registered").map((e) => e.serverId));
    assert.deepEqual(
      [...arrived].filter((server) => !cachedServers().has(server)),
      [],
      "every list that arrived is in the cache",
    );
    process.chdir(originalCwd);
    if (originalBudget === undefined) delete process.env.PI_MCP_STARTUP_BUDGET_MS;
    else process.env.PI_MCP_STARTUP_BUDGET_MS = originalBudget;
    await Promise.all([zeroth, first, second].map((server) => server?.close()));
    project.cleanup();
    agentDir.cleanup();
  });

  /** The model calls `echo`-named tools with these texts; returns the tool names it was offered. */
  async function callEchoes(calls: Record<string, string>): Promise<string[]> {
    let offered: string[] = [];
    pi!.faux.setResponses([
      (context) => {
        offered = requestTools(context).map((t) => t.name);
        return fauxAssistantMessage(
          Object.entries(calls).map(([tool, text]) => fauxToolCall(tool, { text })),
          { stopReason: "toolUse" },
        );
      },
      fauxAssistantMessage("done"),
    ]);
    await pi!.session.prompt("echo");
    return offered;
  }

  test("the server earlier in the config keeps the plain name though it connected second", async () => {
    assert.ok(
      events.findIndex((e) => e.channel === "tools.registered" && e.serverId === "second") <
        events.findIndex((e) => e.channel === "tools.registered" && e.serverId === "first"),
      "second really was registered first",
    );
    const offered = await callEchoes({ echo: "to the plain name", echo_2: "to the suffixed name" });
    assert.ok(offered.includes("echo") && offered.includes("echo_2"), offered.join(", "));
    assert.deepEqual(first.calls.at(-1), { name: "echo", args: { text: "to the plain name" } });
    assert.deepEqual(second.calls.at(-1), { name: "echo", args: { text: "to the suffixed name" } });
    assert.equal(first.calls.length + second.calls.length, 2);
    // Every fixture tool collides: the first server has all the plain names, the second all the _2 ones.
    const tools = pi!.session.getAllTools().map((t) => t.name);
    for (const name of ["echo", "add", "strict", "pid"]) {
      assert.ok(tools.includes(name) && tools.includes(`${name}_2`), name);
    }
    const moved = events
      .filter((e) => e.channel === "tools.updated" && e.serverId === "second")
      .flatMap((e) => e.tools);
    assert.ok(
      moved.some((t) => t.originalName === "echo" && t.name === "echo_2"),
      "the move is announced",
    );
    // One line in the startup notice says which server keeps the names and how to tell the servers apart.
    const text = ui.notices.join("\n");
    assert.equal(text.split("Tool name conflict").length - 1, 1, text);
    assert.match(
      text,
      /! second: Tool name conflict: 'echo', 'add', .* provided by both 'first' and 'second'; 'first' keeps them, and 'second''s are registered as 'echo_2', .*Set "prefix" on one of the servers/,
    );
    assert.doesNotMatch(text, /provided by both 'second' and 'first'/, "no warning left from before the move");
    // The log names each tool once, in the spec's words, as named when the session started (not the move before).
    const log = path.join(agentDir.dir, "mcp-bridge", "mcp.log");
    const clashes = () => readLog(log).filter((e) => e.event === "tools.name.conflict");
    await waitFor(() => clashes().some((e) => e.server === "second"), "the clashes in mcp.log");
    const echoLines = clashes().filter((e) => String(e.message).startsWith("Tool name conflict: 'echo' "));
    assert.deepEqual(
      echoLines.map((e) => e.message),
      ["Tool name conflict: 'echo' provided by both 'first' and 'second'; 'second''s is registered as 'echo_2'"],
    );
  });

  test("once the session runs, names stay: a server earlier in the config that comes later gets the next free suffix", async () => {
    releaseZeroth.resolve();
    await waitFor(() => registered("zeroth"), "the held-back server's tools", 30_000);
    const offered = await callEchoes({ echo: "still the first", echo_3: "to zeroth" });
    assert.ok(offered.includes("echo_3"), offered.join(", "));
    assert.deepEqual(first.calls.at(-1), { name: "echo", args: { text: "still the first" } });
    assert.deepEqual(zeroth.calls.at(-1), { name: "echo", args: { text: "to zeroth" } });
    assert.equal(zeroth.calls.length, 1);
  });
});
