/**
 * A tool as pi gets it, against a real server: the portable parameters pi validates with, the server's own schema
 * checked before a call, `structuredContent` checked against `outputSchema`, and where each tool came from.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { validateToolArguments } from "@mariozechner/pi-ai";
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ServerConnection } from "../src/connection/server-connection.ts";
import { ToolRegistry } from "../src/pi/tool-registry.ts";
import { type RunningServer, startStreamableHttp } from "./fixtures/http-servers.ts";
import { connectionFor } from "./helpers.ts";
import { runTool } from "./pi-tools.ts";

const TYPED: Tool = {
  name: "typed",
  title: "Typed weather",
  description: "Structured weather",
  inputSchema: { type: "object", properties: { fit: { type: "boolean" } } },
  outputSchema: { type: "object", properties: { temperature: { type: "number" } }, required: ["temperature"] },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
};

const NULLABLE: Tool = {
  name: "nullable",
  inputSchema: {
    type: "object",
    properties: {
      limit: { type: ["integer", "null"] },
      kind: { type: "string", nullable: true },
      flag: { anyOf: [{ type: "boolean" }, { type: "null" }] },
      label: { type: "string" },
    },
  },
};

/** Nulls where the schema takes none: a required parameter, and a field of a nullable object (pydantic's Optional). */
const NESTED_NULLS: Tool = {
  name: "nested_nulls",
  inputSchema: {
    type: "object",
    properties: {
      query: { type: "string" },
      tags: { type: "array", items: { type: "string" } },
      filter: {
        anyOf: [
          { type: "object", properties: { tag: { type: "string" }, max: { type: "integer" } } },
          { type: "null" },
        ],
      },
    },
    required: ["query"],
  },
};

/** A draft-07 schema as zod-to-json-schema writes it, with a tuple (draft-07's `items` array, no 2020-12 schema). */
const TUPLE: Tool = {
  name: "tuple",
  inputSchema: {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: { point: { type: "array", items: [{ type: "string" }, { type: "integer" }] } },
  },
};

/** Parameters named as APIs name them (`filter[id]`, OData's `$top`), which Anthropic and Bedrock refuse as keys. */
const BRACKETS: Tool = {
  name: "brackets",
  inputSchema: {
    type: "object",
    properties: {
      "filter[id]": { type: "string", pattern: "^[0-9]+$" },
      $top: { type: "integer" },
      filter_id_: { type: "boolean" },
    },
    required: ["filter[id]"],
    additionalProperties: false,
  },
};

/** A parameter of one of two object shapes, told apart by `kind` (a discriminated union). */
const CHOICE: Tool = {
  name: "choice",
  inputSchema: {
    type: "object",
    properties: {
      item: {
        anyOf: [
          { type: "object", properties: { kind: { const: "count" }, value: { type: "integer" } } },
          { type: "object", properties: { kind: { const: "label" }, value: { type: "string" } } },
        ],
      },
    },
  },
};

/** A required parameter with a default that is one of the server's secrets (a header value here, as a project id). */
const PROJECT = "Proj-7f3kQ92x";
const DEFAULTED: Tool = {
  name: "defaulted",
  inputSchema: { type: "object", properties: { project: { type: "string", default: PROJECT } }, required: ["project"] },
};

describe("tool schemas against a real server", { timeout: 60_000 }, () => {
  let server: RunningServer;
  let connection: ServerConnection;
  const tools = new Map<string, ToolDefinition>();
  const events: Array<{ channel: string; payload: Record<string, unknown> }> = [];
  let registry: ToolRegistry;

  before(async () => {
    const blank: Tool = {
      name: "blank",
      title: "\x1b[2J",
      annotations: { title: "Blank" },
      inputSchema: { type: "object" },
    };
    server = await startStreamableHttp({
      extraTools: [TYPED, blank, NULLABLE, NESTED_NULLS, TUPLE, BRACKETS, CHOICE, DEFAULTED],
    });
    connection = connectionFor("wx", { url: server.url, prefix: "", headers: { "X-Project": PROJECT } });
    await connection.connect();
    registry = new ToolRegistry(
      (def) => tools.set(def.name, def as ToolDefinition),
      () => connection,
      { events: (channel, payload) => events.push({ channel, payload }) },
    );
    registry.registerServer(connection);
  });
  after(async () => {
    await connection.close();
    await server.close();
  });

  test("arguments pi's wider copy lets through but the server's schema refuses get a clear error; the server sees nothing", async () => {
    const strict = tools.get("strict")!;
    const args = { count: 2, mode: "fast", extra: true };
    // The portable copy has no `additionalProperties: false` (Gemini rejects the keyword): pi lets these through.
    assert.doesNotThrow(() =>
      validateToolArguments(strict as never, { type: "toolCall", id: "1", name: "strict", arguments: args } as never),
    );
    const calls = server.calls.length;
    await assert.rejects(runTool(strict, args), (error: Error) => {
      assert.match(
        error.message,
        /The arguments do not match the input schema of tool 'strict' \(MCP server 'wx'\): .*additional properties.*Fix the arguments/,
      );
      return true;
    });
    assert.equal(server.calls.length, calls, "nothing reached the server");
    assert.equal((await runTool(strict, { count: 2, mode: "fast" })).text, "count=2 mode=fast");
  });

  test('a model\'s null reaches the server as null where the schema allows it, never as 0, "" or false', async () => {
    const nullable = tools.get("nullable")!;
    const check = (args: Record<string, unknown>) =>
      validateToolArguments(
        nullable as never,
        { type: "toolCall", id: "1", name: "nullable", arguments: args } as never,
      );
    await runTool(nullable, check({ limit: null, kind: null, flag: null }));
    assert.deepEqual(server.calls.at(-1)?.args, { limit: null, kind: null, flag: null });
    await runTool(nullable, check({ limit: 0, kind: "", flag: false }));
    assert.deepEqual(
      server.calls.at(-1)?.args,
      { limit: 0, kind: "", flag: false },
      'and 0, "" or false as themselves',
    );
    // Where the schema does not allow null: left out (pi 1.x), or the call refused naming the field (pi 0.73).
    let checked: unknown;
    assert.doesNotThrow(() => {
      try {
        checked = check({ limit: 5, label: null });
      } catch (error) {
        assert.match(String(error), /label/);
      }
    });
    if (checked !== undefined) assert.deepEqual(checked, { limit: 5 });
  });

  test('a null where the schema takes none (a required parameter, a field of a nullable object) never reaches the server as "null", 0 or false', async () => {
    const tool = tools.get("nested_nulls")!;
    // As pi's agent loop does: the tool's own preparation of the arguments, then pi's check.
    const check = (args: Record<string, unknown>) =>
      validateToolArguments(
        tool as never,
        { type: "toolCall", id: "1", name: "nested_nulls", arguments: tool.prepareArguments?.(args) ?? args } as never,
      );
    const checked = check({ query: "a", filter: { tag: null, max: null } });
    assert.deepEqual(checked, { query: "a", filter: {} }, "left out, as pi 1.x leaves out such a null elsewhere");
    await runTool(tool, checked);
    assert.deepEqual(server.calls.at(-1)?.args, { query: "a", filter: {} });
    assert.throws(() => check({ query: null }), /query/, "a required one is missing: the call is refused naming it");
    assert.deepEqual(check({ query: "a", tags: ["x", null] }), { query: "a", tags: ["x"] }, "nor is one in a list");
  });

  test('a number the model gave is never changed into another (3.5 into 3, true into 1, "" into 0): the call is refused naming it', () => {
    const prepared = (name: string, args: Record<string, unknown>) => {
      const tool = tools.get(name)!;
      const call = { type: "toolCall", id: "1", name, arguments: tool.prepareArguments?.(args) ?? args };
      return validateToolArguments(tool as never, call as never);
    };
    // A snowflake id written as a string: as a number it would be another id (…890 → …900).
    for (const limit of [3.5, true, "", "3.5", "true", "12345678901234567890"])
      assert.throws(() => prepared("nullable", { limit }), new RegExp(`limit.*integer.*${JSON.stringify(limit)}`, "s"));
    assert.throws(() => prepared("nested_nulls", { query: "a", filter: { max: 0.5 } }), /filter\.max.*integer.*0\.5/s);
    assert.deepEqual(
      prepared("nullable", { limit: 3, kind: "x" }),
      { limit: 3, kind: "x" },
      "a right one passes as given",
    );
    // An id the model wrote unquoted lost its last digits when the call was parsed: sent as a string, another id.
    assert.throws(() => prepared("nested_nulls", { query: 12345678901234567890 }), /query must be a string in quotes/);
    const prepare = tools.get("nullable")!.prepareArguments!;
    assert.doesNotThrow(() => prepare({ kind: 2.5 }) && prepare({ kind: 2 }), "other numbers for a string are not");
    const label = { item: { kind: "label", value: "ten" } };
    assert.deepEqual(prepared("choice", label), label, "a string where another of the shapes takes one");
  });

  test("a required parameter's default reaches the server as the server wrote it, though the model is shown it hidden", async () => {
    const tool = tools.get("defaulted")!;
    assert.doesNotMatch(JSON.stringify(tool.parameters), new RegExp(PROJECT), "the model does not see the secret");
    await runTool(tool, {});
    assert.deepEqual(server.calls.at(-1)?.args, { project: PROJECT }, "not ***");
  });

  test("a draft-07 schema is checked as draft-07: a tuple's items in the wrong order never reach the server", async () => {
    const tuple = tools.get("tuple")!;
    const calls = server.calls.length;
    await assert.rejects(runTool(tuple, { point: [1, "a"] }), /do not match the input schema of tool 'tuple'/);
    assert.equal(server.calls.length, calls, "nothing reached the server");
    assert.equal((await runTool(tuple, { point: ["a", 1] })).text, "called tuple");
    assert.doesNotMatch(connection.warnings.join("\n"), /tool 'tuple'/, "nothing said about its schema");
  });

  test("parameter names Anthropic refuses (filter[id], $top) are renamed for the model and sent to the server as it names them", async () => {
    const brackets = tools.get("brackets")!;
    const parameters = brackets.parameters as { properties: object; required?: string[] };
    // Anthropic (and Bedrock) refuse a whole request, every tool in it, over one such key.
    for (const key of Object.keys(parameters.properties)) assert.match(key, /^[a-zA-Z0-9_.-]{1,64}$/);
    assert.deepEqual(Object.keys(parameters.properties), ["filter_id__2", "_top", "filter_id_"]);
    assert.deepEqual(parameters.required, ["filter_id__2"]);
    const args = { filter_id__2: "7", _top: 5, filter_id_: true };
    validateToolArguments(brackets as never, { type: "toolCall", id: "1", name: "brackets", arguments: args } as never);
    await runTool(brackets, args);
    assert.deepEqual(server.calls.at(-1)?.args, { "filter[id]": "7", $top: 5, filter_id_: true });
    // What the server's schema refuses is said in the model's name of the parameter, the one it can fix.
    await assert.rejects(runTool(brackets, { ...args, filter_id__2: "x" }), (error: Error) => {
      assert.match(error.message, /filter_id__2 must match pattern/);
      assert.doesNotMatch(error.message, /filter\[id\]/);
      return true;
    });
  });

  test("structuredContent comes back in the details; a result that misses the outputSchema still reaches the model, and the user hears of it once", async () => {
    type Details = { structuredContent?: unknown; outputSchemaMismatch?: string };
    const typed = tools.get("typed")!;
    const ok = await runTool(typed, { fit: true });
    assert.deepEqual((ok.result.details as Details).structuredContent, { temperature: 21.5 });
    assert.equal((ok.result.details as Details).outputSchemaMismatch, undefined);
    // Under the server in /mcp (its warnings).
    const told = () => connection.warnings.filter((w) => /tool 'typed': a result does not match/.test(w));
    assert.deepEqual(told(), []);
    // The tool ran: its answer is the model's, not an error it would call the tool again for.
    const unfit = await runTool(typed, { fit: false });
    assert.equal(unfit.text, "weather");
    const details = unfit.result.details as Details;
    assert.deepEqual(details.structuredContent, { temperature: "warm" }, "as the server sent it");
    assert.match(details.outputSchemaMismatch ?? "", /temperature.*must be number/);
    const none = await runTool(typed, { omit: true });
    assert.equal(none.text, "weather");
    assert.equal((none.result.details as Details).outputSchemaMismatch, "no structured content");
    assert.equal(told().length, 1, told().join("\n"));
    assert.match(
      told()[0]!,
      /^tool 'typed': a result does not match its output schema \(.*must be number\); results are passed on as the server sent them$/,
    );
  });

  test("title, annotations and outputSchema are kept; every tool carries its provenance, in the details and the bus events", async () => {
    const typed = registry.find("typed")!;
    assert.equal(typed.title, "Typed weather");
    assert.deepEqual(typed.annotations, TYPED.annotations);
    assert.deepEqual(typed.outputSchema, TYPED.outputSchema);
    assert.equal(tools.get("typed")!.label, "Typed weather (wx)");
    // A title with nothing to show (here once its escape is stripped): the annotations' title.
    assert.equal(tools.get("blank")!.label, "Blank (wx)");
    assert.equal(registry.find("blank")!.title, "Blank");
    for (const tool of registry.tools)
      assert.deepEqual(tool.provenance, { source: "mcp", serverId: "wx", originalName: tool.originalName });
    const ok = await runTool(tools.get("echo"), { text: "hi" });
    assert.deepEqual((ok.result.details as { provenance?: unknown }).provenance, {
      source: "mcp",
      serverId: "wx",
      originalName: "echo",
    });
    const registered = events.find((e) => e.channel === "tools.registered")!;
    const listed = registered.payload.tools as Array<{ name: string; provenance: unknown }>;
    assert.equal(listed.length, registry.tools.length);
    assert.deepEqual(listed.find((t) => t.name === "typed")!.provenance, {
      source: "mcp",
      serverId: "wx",
      originalName: "typed",
    });
  });
});
