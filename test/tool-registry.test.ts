/**
 * Naming and registration against real servers: collisions across servers and with pi's tools, prefixes, long and
 * unusual names that must still reach the server under their original name.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import type { ServerConnection } from "../src/connection/server-connection.ts";
import { ToolRegistry } from "../src/pi/tool-registry.ts";
import { type RunningServer, startStreamableHttp } from "./fixtures/http-servers.ts";
import { connectionFor } from "./helpers.ts";

const LONG_NAME = `fetch_${"very_long_segment_".repeat(5)}end`;
const ODD_NAME = "get.item v2";

describe("tool registration", { timeout: 120_000 }, () => {
  let alpha: RunningServer;
  let beta: RunningServer;
  const connections = new Map<string, ServerConnection>();

  function register(): { tools: Map<string, ToolDefinition>; registry: ToolRegistry } {
    const tools = new Map<string, ToolDefinition>();
    const registry = new ToolRegistry((def) => tools.set(def.name, def as ToolDefinition), (name) => connections.get(name));
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
      { name: LONG_NAME, inputSchema: { type: "object" as const } },
      { name: ODD_NAME, inputSchema: { type: "object" as const } },
      // A pattern that is not a valid regular expression: TypeBox cannot compile this schema.
      { name: "bad_pattern", inputSchema: { type: "object" as const, properties: { q: { type: "string", pattern: "(" } } } },
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

  test("a name taken by another server gets _2 and a warning naming both sources", () => {
    const { tools, registry } = register();
    assert.ok(tools.has("echo"));
    assert.ok(tools.has("echo_2"));
    assert.equal(registry.tools.find((t) => t.name === "echo")!.server, "alpha");
    assert.equal(registry.tools.find((t) => t.name === "echo_2")!.server, "beta");
    const warning = registry.warnings.find((w) => w.includes("'echo'"));
    assert.match(warning!, /Tool name 'echo' of MCP server 'beta' \(tool 'echo'\) is already taken by tool 'echo' of MCP server 'alpha'; registered as 'echo_2'/);
  });

  test("three servers whose tools want the same name: _2 and _3 in config order, each reaching its own server", async () => {
    const delta = await startStreamableHttp();
    const third = connectionFor("delta", { url: delta.url, prefix: "" });
    try {
      await third.connect();
      const three = new Map([...[...connections].filter(([name]) => name !== "gamma"), ["delta", third]]);
      assert.deepEqual([...three.keys()], ["alpha", "beta", "delta"]);
      const tools = new Map<string, ToolDefinition>();
      const registry = new ToolRegistry((def) => tools.set(def.name, def as ToolDefinition), (name) => three.get(name));
      for (const connection of three.values()) registry.registerServer(connection);
      const owner = (name: string) => registry.tools.find((t) => t.name === name)?.server;
      assert.deepEqual(["echo", "echo_2", "echo_3", "echo_4"].map(owner), ["alpha", "beta", "delta", undefined]);
      assert.match(registry.warnings.join("\n"), /Tool name 'echo' of MCP server 'delta' \(tool 'echo'\) is already taken by tool 'echo' of MCP server 'alpha'; registered as 'echo_3'/);
      const servers = { alpha, beta, delta };
      for (const [name, server] of [["echo", "alpha"], ["echo_2", "beta"], ["echo_3", "delta"]] as const) {
        assert.equal(await callText(tools.get(name), { text: `to ${server}` }), `to ${server}`);
        assert.deepEqual(servers[server].calls.at(-1), { name: "echo", args: { text: `to ${server}` } }, `${name} reached ${server}`);
      }
      assert.equal(delta.calls.length, 1, "delta got only its own call");
    } finally {
      await third.close();
      await delta.close();
    }
  });

  test("a name of one of pi's tools is never taken over", () => {
    const { tools, registry } = register();
    assert.equal(tools.has("read"), false);
    assert.ok(tools.has("read_2"));
    assert.match(registry.warnings.join("\n"), /'read' .* is already taken by pi's built-in tool 'read'; registered as 'read_2'/);
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
  });

  test("a schema pi could not compile is replaced by an open one, with a warning, and the tool still works", async () => {
    const { tools, registry } = register();
    assert.deepEqual(tools.get("bad_pattern")!.parameters, { type: "object", properties: {}, additionalProperties: true });
    assert.match(registry.warnings.join("\n"), /MCP server 'alpha', tool 'bad_pattern': input schema cannot be used .*Invalid regular expression/);
    assert.equal(await callText(tools.get("bad_pattern"), { q: "x" }), "called bad_pattern");
  });

  test("the same config always gives the same names", () => {
    const first = register().registry.tools.map((t) => `${t.server}/${t.originalName}=${t.name}`);
    const second = register().registry.tools.map((t) => `${t.server}/${t.originalName}=${t.name}`);
    assert.deepEqual(second, first);
  });

  test("registering a server again keeps its names", () => {
    const tools = new Map<string, ToolDefinition>();
    const registry = new ToolRegistry((def) => tools.set(def.name, def as ToolDefinition), (name) => connections.get(name));
    registry.registerServer(connections.get("alpha")!);
    registry.registerServer(connections.get("beta")!);
    const before = registry.tools.map((t) => t.name);
    registry.registerServer(connections.get("alpha")!);
    registry.registerServer(connections.get("beta")!);
    assert.deepEqual(registry.tools.map((t) => t.name), before);
    assert.equal(tools.has("echo_3"), false);
  });

  test("$ref schemas are inlined into the parameters pi sees", () => {
    const { tools } = register();
    assert.deepEqual(tools.get("shape")!.parameters, {
      type: "object",
      properties: { at: { type: "object", properties: { x: { type: "number" }, y: { type: "number" } }, required: ["x", "y"] } },
      required: ["at"],
    });
  });
});
