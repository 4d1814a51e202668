import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { validateToolArguments } from "@mariozechner/pi-ai";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { schemaCheck } from "../src/translate/schema-check.ts";
import { MAX_PORTABLE_NODES, portableSchema } from "../src/translate/portable-schema.ts";
import { checkedAsGiven, normalizeInputSchema } from "../src/translate/schema.ts";
import { geminiProblems, openAiProblems } from "./schema-rules.ts";

type Schema = Record<string, unknown>;
const FIXTURES = path.join(import.meta.dirname, "fixtures", "schemas");

function fixtures(): Array<{ file: string; server: string; tools: Tool[] }> {
  return readdirSync(FIXTURES)
    .filter((f) => f.endsWith(".json"))
    .map((file) => ({
      file,
      ...(JSON.parse(readFileSync(path.join(FIXTURES, file), "utf8")) as { server: string; tools: Tool[] }),
    }));
}

/** pi's own check of a call's arguments (what runs before `execute`); throws with pi's message when they fail. */
function piAccepts(parameters: Schema, args: unknown): void {
  validateToolArguments(
    { name: "t", description: "", parameters } as never,
    { type: "toolCall", id: "1", name: "t", arguments: args } as never,
  );
}

/**
 * A value the schema accepts: every property (`all`) or only the required ones, `null` wherever null is allowed
 * (`nulls`), else the first enum value, the default, or a plain value of the first type.
 */
function sample(schema: unknown, mode: { all: boolean; nulls: boolean }, root: Schema, depth = 0): unknown {
  if (!schema || typeof schema !== "object" || depth > 20) return {};
  let s = schema as Schema;
  if (typeof s.$ref === "string")
    s = s.$ref
      .split("/")
      .slice(1)
      .reduce<Schema>((n, k) => n[k] as Schema, root);
  const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (branches) {
    const nullable = branches.find((b) => b.type === "null");
    if (mode.nulls && nullable) return null;
    return sample(
      branches.find((b) => b.type !== "null"),
      mode,
      root,
      depth + 1,
    );
  }
  const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
  if (mode.nulls && types.includes("null")) return null;
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum)) return s.enum.find((v) => v !== null);
  if (s.default !== undefined) return s.default;
  const type = types.find((t) => t !== "null") ?? (s.properties ? "object" : "string");
  switch (type) {
    case "object": {
      const required = new Set((s.required as string[] | undefined) ?? []);
      const out: Schema = {};
      for (const [name, child] of Object.entries((s.properties as Schema | undefined) ?? {})) {
        if (mode.all || required.has(name)) out[name] = sample(child, mode, root, depth + 1);
      }
      return out;
    }
    case "array":
      return Array.from({ length: Math.max(1, (s.minItems as number | undefined) ?? 1) }, () =>
        sample(s.items, mode, root, depth + 1),
      );
    case "number":
    case "integer":
      return (s.minimum as number | undefined) ?? 1;
    case "boolean":
      return true;
    default:
      return s.format === "uri" ? "https://example.com/x" : "x";
  }
}

describe("real servers' schemas, made portable", () => {
  const all = fixtures();
  test("the fixtures are the servers named in the brief", () => {
    const servers = all.map((f) => f.server).join(" ");
    for (const name of ["server-everything", "server-filesystem", "server-github", "server-postgres", "playwright"])
      assert.match(servers, new RegExp(name));
    assert.ok(all.reduce((n, f) => n + f.tools.length, 0) >= 80);
    // The servers' own schemas break the rules, or passing them would prove nothing about the conversion.
    for (const rules of [openAiProblems, geminiProblems])
      assert.ok(all.some((f) => f.tools.some((t) => rules(t.inputSchema).length > 0)));
  });
  for (const { file, tools } of all) {
    test(`${file}: every tool passes the OpenAI and Gemini rules, with no warning`, () => {
      for (const tool of tools) {
        const { schema, warnings } = normalizeInputSchema(tool.inputSchema);
        assert.deepEqual(warnings, [], `${tool.name}`);
        assert.deepEqual(openAiProblems(schema), [], `${tool.name} (OpenAI)`);
        assert.deepEqual(geminiProblems(schema), [], `${tool.name} (Gemini)`);
      }
    });
    test(`${file}: arguments valid under the server's schema pass pi's validation of the portable copy`, () => {
      for (const tool of tools) {
        const { schema } = normalizeInputSchema(tool.inputSchema);
        const { check } = schemaCheck(tool.inputSchema);
        assert.ok(check, `${tool.name}: the server's schema compiles`);
        for (const mode of [
          { all: false, nulls: false },
          { all: true, nulls: false },
          { all: true, nulls: true },
        ]) {
          const args = sample(tool.inputSchema, mode, tool.inputSchema as Schema) as Record<string, unknown>;
          assert.equal(
            check(args),
            undefined,
            `${tool.name}: the sample ${JSON.stringify(args)} is valid for the server`,
          );
          assert.doesNotThrow(() => piAccepts(schema, args), `${tool.name}: ${JSON.stringify(args)}`);
        }
      }
    });
  }
});

describe("portable schema rules", () => {
  const convert = (schema: Schema) => normalizeInputSchema({ type: "object", properties: { p: schema } });
  const prop = (schema: Schema) => (convert(schema).schema.properties as Schema).p as Schema;

  test("$schema, $id, $comment, title and additionalProperties are dropped; descriptions kept", () => {
    const { schema } = normalizeInputSchema({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $id: "urn:x",
      $comment: "internal",
      title: "Args",
      type: "object",
      properties: { a: { type: "string", title: "A", $comment: "c" }, b: { type: "string", description: "B" } },
      additionalProperties: false,
    });
    assert.deepEqual(schema, {
      type: "object",
      description: "Args",
      properties: { a: { type: "string", description: "A" }, b: { type: "string", description: "B" } },
    });
  });
  test("local $refs are inlined and $defs dropped", () => {
    const { schema, warnings } = normalizeInputSchema({
      type: "object",
      $defs: { Point: { type: "object", properties: { x: { type: "number" } } } },
      properties: { p: { $ref: "#/$defs/Point", description: "where" } },
    });
    assert.deepEqual(warnings, []);
    assert.deepEqual(schema, {
      type: "object",
      properties: { p: { type: "object", properties: { x: { type: "number" } }, description: "where" } },
    });
  });
  test("recursion is cut with a placeholder of the same type that says so", () => {
    const { schema, warnings } = normalizeInputSchema({
      type: "object",
      $defs: { Node: { type: "object", properties: { child: { $ref: "#/$defs/Node" } } } },
      properties: { root: { $ref: "#/$defs/Node" } },
    });
    const child = (((schema.properties as Schema).root as Schema).properties as Schema).child as Schema;
    assert.equal(child.type, "object");
    assert.match(child.description as string, /Recursive: the same shape as 'Node'/);
    assert.match(warnings[0]!, /recursive reference #\/\$defs\/Node/);
    piAccepts(schema, { root: { child: { child: { child: {} } } } });
  });
  test("a recursive array is cut with an array that says its items, as every provider wants", () => {
    const { schema } = normalizeInputSchema({
      type: "object",
      $defs: { Tree: { type: "array", items: { $ref: "#/$defs/Tree" } } },
      properties: { tree: { $ref: "#/$defs/Tree" } },
    });
    // Items of any value are `{}`, as for `{"type": "array"}`; an array without `items` fails the request.
    for (const rules of [openAiProblems, geminiProblems])
      assert.deepEqual(
        rules(schema).filter((problem) => /without items/.test(problem)),
        [],
      );
    piAccepts(schema, { tree: [[[1]], []] });
  });
  test("a $ref bomb is refused with a warning, not expanded", () => {
    const defs: Schema = { d0: { type: "string" } };
    for (let i = 1; i <= 30; i++)
      defs[`d${i}`] = {
        type: "object",
        properties: { a: { $ref: `#/$defs/d${i - 1}` }, b: { $ref: `#/$defs/d${i - 1}` } },
      };
    const { schema, warnings } = normalizeInputSchema({
      type: "object",
      $defs: defs,
      properties: { x: { $ref: "#/$defs/d30" } },
    });
    assert.deepEqual(schema, { type: "object", properties: {} });
    assert.match(warnings[0]!, new RegExp(`more than ${MAX_PORTABLE_NODES}`));
  });
  test("type arrays and nullable become anyOf with a null branch; null is still accepted", () => {
    assert.deepEqual(prop({ type: ["string", "null"], description: "d" }), {
      anyOf: [{ type: "string" }, { type: "null" }],
      description: "d",
    });
    assert.deepEqual(prop({ type: "integer", nullable: true, minimum: 1 }), {
      anyOf: [{ type: "integer", minimum: 1 }, { type: "null" }],
    });
    assert.deepEqual(prop({ type: ["string"] }), { type: "string" });
    // An array that may be null still says its items, as `{"type": "array"}` does.
    for (const p of [{ type: ["array", "null"] }, { type: "array", nullable: true }])
      assert.deepEqual(prop(p), { anyOf: [{ type: "array", items: {} }, { type: "null" }] });
    assert.deepEqual(prop({ enum: ["a", null] }), { anyOf: [{ type: "string", enum: ["a"] }, { type: "null" }] });
    piAccepts(convert({ type: ["string", "null"] }).schema, { p: null });
    for (const only of [{ const: null }, { enum: [null] }, { type: "null", enum: [null] }])
      piAccepts(convert(only).schema, { p: null });
  });
  test("oneOf becomes anyOf; allOf is merged", () => {
    assert.deepEqual(prop({ oneOf: [{ type: "string" }, { type: "number" }] }), {
      anyOf: [{ type: "string" }, { type: "number" }],
    });
    assert.deepEqual(
      prop({
        allOf: [
          { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
          { properties: { b: { type: "number" } } },
        ],
      }),
      {
        type: "object",
        properties: { a: { type: "string" }, b: { type: "number" } },
        required: ["a"],
      },
    );
    // A property two branches describe alike keeps its description and type.
    const id = { type: "string", description: "The id." };
    assert.deepEqual(prop({ allOf: [{ properties: { id } }, { properties: { id }, required: ["id"] }] }), {
      type: "object",
      properties: { id },
      required: ["id"],
    });
    // A choice with an open branch accepts anything.
    assert.deepEqual(prop({ anyOf: [{ type: "string" }, {}] }), {});
  });
  test("a required list in an allOf branch of its own still says what is required", () => {
    const { schema } = normalizeInputSchema({ properties: { a: { type: "string" } }, allOf: [{ required: ["a"] }] });
    assert.deepEqual(schema, { type: "object", properties: { a: { type: "string" } }, required: ["a"] });
    assert.deepEqual(prop({ type: "object", properties: { b: { type: "number" } }, allOf: [{ required: ["b"] }] }), {
      type: "object",
      properties: { b: { type: "number" } },
      required: ["b"],
    });
  });
  test("a choice at the top becomes one object requiring only what every branch requires", () => {
    const { schema, warnings } = normalizeInputSchema({
      anyOf: [
        { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
        { type: "object", properties: { name: { type: "string" }, id: { type: "string" } }, required: ["name", "id"] },
      ],
    });
    assert.deepEqual(schema, {
      type: "object",
      properties: { id: { type: "string" }, name: { type: "string" } },
      required: ["id"],
    });
    assert.match(warnings[0]!, /alternatives/);
  });
  test("arguments that may be null at the top are an object all the same, with their properties", () => {
    const object = { type: "object", properties: { a: { type: "string" } }, required: ["a"] };
    for (const input of [{ ...object, nullable: true }, { anyOf: [object, { type: "null" }] }])
      assert.deepEqual(normalizeInputSchema(input), { schema: object, warnings: [], uncarried: [] });
  });
  test("a choice at the top beside properties of its own keeps them, and what they require", () => {
    const { schema } = normalizeInputSchema({
      type: "object",
      properties: { url: { type: "string" }, path: { type: "string" }, depth: { type: "integer" } },
      required: ["depth"],
      oneOf: [
        { type: "object", required: ["url"] },
        { type: "object", properties: { token: { type: "string" } }, required: ["path", "token"] },
      ],
    });
    assert.deepEqual(schema, {
      type: "object",
      properties: {
        url: { type: "string" },
        path: { type: "string" },
        depth: { type: "integer" },
        token: { type: "string" },
      },
      required: ["depth"],
    });
  });
  test("enums are kept; const becomes a one-value enum; non-string enums move to the description", () => {
    assert.deepEqual(prop({ type: "string", enum: ["a", "b"], description: "d" }), {
      type: "string",
      description: "d",
      enum: ["a", "b"],
    });
    assert.deepEqual(prop({ const: "x" }), { type: "string", enum: ["x"] });
    assert.deepEqual(prop({ type: "integer", enum: [1, 2] }), {
      type: "integer",
      description: "Allowed values: 1, 2.",
    });
    for (const p of [{ type: ["integer", "null"], enum: [1, 2, null] }, { enum: [true, "x"] }])
      assert.deepEqual(geminiProblems(convert(p).schema), [], JSON.stringify(p));
  });
  test("an enum with an empty string (as mcp-server-excel's actions have), which Gemini refuses, moves to the description", () => {
    const schema = { type: "string", enum: ["list", "open", ""] };
    assert.deepEqual(prop(schema), { type: "string", description: 'Allowed values: "list", "open", "".' });
    assert.deepEqual(geminiProblems(convert({ type: "object", properties: { action: schema } }).schema), []);
  });
  test("defaults move into the description; provider-specific keywords go", () => {
    assert.deepEqual(
      prop({ type: "string", default: "info", description: "Level.", pattern: "^a", minLength: 1, format: "uri" }),
      {
        type: "string",
        description: 'Level. Default: "info".',
      },
    );
    assert.deepEqual(prop({ type: "integer", minimum: 1, maximum: 100 }), {
      type: "integer",
      minimum: 1,
      maximum: 100,
    });
    assert.deepEqual(prop({ type: "array" }), { type: "array", items: {} });
    // Beside a choice too, as pydantic writes `Optional[str] = "en"`.
    assert.deepEqual(prop({ anyOf: [{ type: "string" }, { type: "null" }], default: "en", title: "Lang" }), {
      anyOf: [{ type: "string" }, { type: "null" }],
      description: 'Lang Default: "en".',
    });
  });
  test("a date-time the server's schema takes (a space before the time, an offset without a colon) passes pi's check", () => {
    const input = { type: "object", properties: { at: { type: "string", format: "date-time" } } };
    const { check } = schemaCheck(input);
    for (const at of ["2024-06-01 10:00:00Z", "2024-06-01T10:00:00+0200"]) {
      assert.equal(check!({ at }), undefined, `${at} is valid for the server`);
      assert.doesNotThrow(() => piAccepts(normalizeInputSchema(input).schema, { at }), at);
    }
    assert.notEqual(check!({ at: "tomorrow" }), undefined, "the server's schema still refuses what is no date-time");
    assert.match(String(prop({ type: "string", format: "date-time" }).description), /date-time/, "the model is told");
  });
  test("a format the server's schema check does not know (pydantic's path) is ignored without a word on pi's screen", () => {
    const printed: unknown[] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => printed.push(args);
    try {
      const { check } = schemaCheck({ type: "object", properties: { p: { type: "string", format: "path" } } });
      assert.equal(check!({ p: "src/a.ts" }), undefined);
    } finally {
      console.warn = warn;
    }
    assert.deepEqual(printed, []);
  });
  test("schemas nested past the depth limit are cut with a placeholder", () => {
    let deep: Schema = { type: "string" };
    for (let i = 0; i < 100; i++) deep = { type: "object", properties: { n: deep } };
    const { warnings } = portableSchema(deep);
    assert.match(warnings[0]!, /nested deeper/);
  });
  test("a tuple's items past those it names pass pi's check as given (prefixItems with items; draft-07 items without additionalItems)", () => {
    const draft07 = "http://json-schema.org/draft-07/schema#";
    for (const [$schema, p, value] of [
      [
        undefined,
        { type: "array", prefixItems: [{ type: "string" }, { type: "number" }], items: { type: "number" } },
        ["a", 0.5, 2],
      ],
      [draft07, { type: "array", items: [{ type: "string" }] }, ["a", 0.5]],
    ] as const) {
      const input = { ...($schema && { $schema }), type: "object", properties: { p } };
      assert.equal(schemaCheck(input).check!({ p: value }), undefined, "valid for the server");
      const parameters = checkedAsGiven(normalizeInputSchema(input).schema);
      const call = { type: "toolCall", id: "1", name: "t", arguments: { p: value } };
      // pi 0.73 refused it; pi 1.x turned 0.5 into "0.5".
      assert.deepEqual(validateToolArguments({ name: "t", parameters } as never, call as never), { p: value });
    }
  });
  test("a parameter renamed for Anthropic (名前, 住所: underscores alone) tells the model which of the server's it is", () => {
    const { schema, renamed } = normalizeInputSchema({
      type: "object",
      properties: { 名前: { type: "string", description: "Name" }, 住所: { type: "string" } },
    });
    const properties = schema.properties as Record<string, Schema>;
    assert.deepEqual(Object.keys(properties), ["__", "___2"]);
    assert.deepEqual(renamed, { __: "名前", ___2: "住所" });
    assert.match(String(properties.__!.description), /^Name.*名前/);
    assert.match(String(properties.___2!.description), /住所/);
  });
  test("a parameter named __proto__ stays a parameter and sets no prototype", () => {
    const input = JSON.parse(
      '{"type":"object","properties":{"__proto__":{"type":"string"},"a":{"type":"number"}},"required":["__proto__"]}',
    );
    const { schema } = normalizeInputSchema(input);
    const properties = schema.properties as Schema;
    assert.equal(Object.getPrototypeOf(properties), Object.prototype);
    assert.deepEqual(Object.keys(properties), ["__proto__", "a"]);
    assert.deepEqual(Object.getOwnPropertyDescriptor(properties, "__proto__")!.value, { type: "string" });
    assert.deepEqual(schema.required, ["__proto__"]);
  });
  test("an optional parameter named as what every object has (toString, valueOf) may be left out", () => {
    for (const name of ["toString", "valueOf", "hasOwnProperty"]) {
      const input = { type: "object", properties: { [name]: { type: "integer", description: "How many." }, a: {} } };
      const { schema } = normalizeInputSchema({ ...input, properties: { ...input.properties, nested: input } });
      for (const args of [{}, { [name]: 3 }, { nested: { a: 1 } }, { nested: { [name]: 3 } }]) piAccepts(schema, args);
      assert.match(((schema.properties as Schema)[name] as Schema).description as string, /How many\..*integer/);
    }
  });
  test("a non-object top falls back to an open object schema with a warning", () => {
    const { schema, warnings } = normalizeInputSchema({ type: "string" });
    assert.deepEqual(schema, { type: "object", properties: {} });
    assert.match(warnings[0]!, /not "object"/);
  });
});
