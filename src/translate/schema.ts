/**
 * MCP `inputSchema` → the tool parameter schema pi sends to the model and validates against: an object schema in the
 * subset every provider accepts (./portable-schema.ts). The server's own schema stays the one a call is checked
 * against before it is sent (../pi/tool-definition.ts). Pure.
 */
import { defineOwn, isObject } from "../common/values.ts";
import { allocateToolName } from "./naming.ts";
import { type JsonSchema, mergeAlternatives, portableSchema, SchemaTooLarge } from "./portable-schema.ts";

export type { JsonSchema } from "./portable-schema.ts";

export interface NormalizedSchema {
  schema: JsonSchema;
  warnings: string[];
  /** Rule keywords of the server's schema the model's copy leaves out (`not`, `if`, …); the server's schema checks them. */
  uncarried: string[];
  /** Parameters the copy names otherwise (see `renameKeys`): the copy's name → the server's. */
  renamed?: Record<string, string>;
}

/** The parameter names Anthropic and Bedrock take: one other name refuses the whole request, every tool in it. */
const PORTABLE_KEY = /^[A-Za-z0-9_.-]{1,64}$/;

/** Renames parameters such as `filter[id]` or OData's `$top` (to `filter_id_`, `_top`), in place. */
function renameKeys(schema: JsonSchema): Record<string, string> | undefined {
  const properties = schema.properties as JsonSchema;
  const names = Object.keys(properties);
  const taken = new Set(names.filter((name) => PORTABLE_KEY.test(name)));
  if (taken.size === names.length) return undefined;
  const safe = new Map<string, string>();
  for (const name of names.filter((n) => !taken.has(n))) {
    const key = allocateToolName(name.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 64) || "_", (k) => taken.has(k));
    safe.set(name, key);
    taken.add(key);
  }
  const copy: JsonSchema = {};
  for (const name of names) {
    const [key, property] = [safe.get(name), properties[name] as JsonSchema];
    // Underscores alone (名前 → __) would leave the model guessing which parameter is which.
    const said = [property.description, `(The server names it ${JSON.stringify(name)}.)`].filter(Boolean).join(" ");
    defineOwn(copy, key ?? name, key ? { ...property, description: said } : property);
  }
  schema.properties = copy;
  if (Array.isArray(schema.required)) schema.required = schema.required.map((n) => safe.get(n as string) ?? n);
  return Object.fromEntries([...safe].map(([name, key]) => [key, name]));
}

/** The arguments as the server takes them: its names for renamed parameters, and its defaults where none was given. */
export function serverArguments(
  given: Record<string, unknown>,
  defaults: Record<string, unknown> = {},
  renamed: Record<string, string> = {},
): Record<string, unknown> {
  const args = { ...defaults };
  for (const [key, value] of Object.entries(given))
    defineOwn(args, Object.hasOwn(renamed, key) ? renamed[key]! : key, value);
  return args;
}

/** A check's message in the model's names of renamed parameters (`data/filter_id_`, not `data/filter[id]`), longest first. */
export function inModelNames(message: string, renamed: Record<string, string>): string {
  for (const [key, name] of Object.entries(renamed).sort((a, b) => b[1].length - a[1].length)) {
    const pointer = name.replace(/~/g, "~0").replace(/\//g, "~1");
    message = message
      .replaceAll(`data/${pointer}`, `data/${key}`)
      .replaceAll(`property '${name}'`, `property '${key}'`);
  }
  return message;
}

/** Whether a schema of the copy takes `null`: a null type or branch, or no type (any value). */
function takesNull(schema: unknown): boolean {
  if (!isObject(schema) || schema.type === "null") return true;
  return schema.type === undefined && (!Array.isArray(schema.anyOf) || schema.anyOf.some(takesNull));
}

/**
 * What a parameter must be where pi 1.x's check would turn the model's value into a number it did not give (3.5 into 3
 * for an integer, true into 1, "" into 0), if so; a number written as a string ("3") it converts as meant.
 */
function changedNumber(value: unknown, schema: unknown): string | undefined {
  if (!isObject(schema) || (typeof value !== "number" && typeof value !== "boolean" && typeof value !== "string"))
    return undefined;
  if (typeof value === schema.type || (schema.type === "integer" && Number.isInteger(value))) return undefined;
  const types = Array.isArray(schema.anyOf) ? schema.anyOf.map((b) => isObject(b) && b.type) : [schema.type];
  // A whole number past 2^53 lost digits as the call was parsed: as a string ("…567000") it would be another id.
  const lost = Number.isInteger(value) && !Number.isSafeInteger(value) && types.includes("string");
  const quoted = lost ? "a string in quotes (as a number it loses its last digits)" : undefined;
  const want = types.includes("number") ? "a number" : types.includes("integer") ? "an integer" : quoted;
  if (!want || types.includes(typeof value)) return undefined;
  const number = typeof value === "string" && value.trim() ? Number(value) : value;
  // Past 2^53 a string's digits do not survive as a number: "12345678901234567890" would be another id.
  const whole = typeof value === "string" ? Number.isSafeInteger(number) : Number.isInteger(number);
  const kept = want === "a number" || (want === "an integer" && whole);
  return typeof number === "number" && Number.isFinite(number) && kept ? undefined : want;
}

/**
 * The model's arguments without the nulls the copy does not take there, before pi checks them (`prepareArguments`).
 * pi 1.x leaves out such a null only in an optional property outside any choice; a required one, or one inside a
 * nullable object or list, or an item of a list, it turned into "null", 0 or false, which the server took as meant.
 * Left out, a required one is refused naming it. Copies only what changes; throws on a number pi 1.x would change.
 */
export function withoutRefusedNulls(value: unknown, schema: unknown, sure = true): unknown {
  if (!isObject(schema) || value === null || typeof value !== "object") return value;
  const list = Array.isArray(value);
  if (Array.isArray(schema.anyOf)) {
    const shape = (b: unknown) => isObject(b) && b.type === (list ? "array" : "object");
    // Of several shapes, the first is not surely the one meant: a number it refuses another may take.
    const one = schema.anyOf.find(shape) === schema.anyOf.findLast(shape);
    return withoutRefusedNulls(value, schema.anyOf.find(shape), sure && one);
  }
  const properties = isObject(schema.properties) && !list ? schema.properties : {};
  let out: Record<string, unknown> | undefined;
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key];
    const property = list ? schema.items : Object.hasOwn(properties, key) ? properties[key] : undefined;
    const refused = item === null && property !== undefined && !takesNull(property);
    const want = changedNumber(item, property);
    if (want && sure)
      throw new Error(`${key} must be ${want}, not ${JSON.stringify(item)}; fix it and call the tool again`);
    let next: unknown;
    try {
      next = refused ? undefined : withoutRefusedNulls(item, property, sure);
    } catch (error) {
      // The path from the top, as pi names one (`filter.max`).
      throw new Error(`${key}.${(error as Error).message}`);
    }
    if (next === item) continue;
    out ??= (list ? [...(value as unknown[])] : { ...value }) as Record<string, unknown>;
    if (refused) delete out[key];
    else defineOwn(out, key, next);
  }
  // A list's items left out close up (filter skips the holes `delete` left).
  return list && out ? (out as unknown as unknown[]).filter(() => true) : (out ?? value);
}

/**
 * Accepts any arguments: for a tool without a schema, and for schemas that cannot be used as they are. Without
 * `additionalProperties` (which Gemini rejects) an object schema already allows any property.
 */
export const OPEN_OBJECT_SCHEMA: JsonSchema = Object.freeze({ type: "object", properties: {} });

function open(...warnings: string[]): NormalizedSchema {
  return { schema: { ...OPEN_OBJECT_SCHEMA, properties: {} }, warnings, uncarried: [] };
}

/**
 * Returns an object schema for tool parameters. A missing or empty schema becomes `{type: "object", properties: {}}`;
 * a schema that is not an object type, or cannot be converted, is replaced by an open object schema, with a warning.
 */
export function normalizeInputSchema(input: unknown): NormalizedSchema {
  if (!isObject(input) || Object.keys(input).length === 0) return open();
  const type = input.type;
  if (type !== undefined && type !== "object" && !(Array.isArray(type) && type.includes("object")))
    return open(`input schema has type ${JSON.stringify(type)}, not "object"; arguments are passed through unchecked`);
  let converted: ReturnType<typeof portableSchema>;
  try {
    // A type list with "object" in it: the arguments are an object in any case.
    converted = portableSchema(type === undefined || type === "object" ? input : { ...input, type: "object" });
  } catch (error) {
    if (error instanceof SchemaTooLarge)
      return open(`input schema ${error.message}; arguments are checked only against the server's schema`);
    throw error;
  }
  let schema = converted.schema;
  // OpenAI takes no choice at the top of a tool's parameters: alternatives of object shapes become one object.
  if (Array.isArray(schema.anyOf)) {
    const { anyOf, ...own } = schema;
    // The arguments are an object in any case: a null branch (`nullable: true`) says nothing about them.
    const branches = (anyOf as JsonSchema[]).filter((branch) => branch.type !== "null");
    const merged = mergeAlternatives(branches, own);
    if (!merged)
      return open(
        "input schema is a choice of non-object shapes; arguments are checked only against the server's schema",
      );
    schema = { ...(schema.description !== undefined ? { description: schema.description } : {}), ...merged };
    if (branches.length > 1)
      converted.warnings.push(
        "input schema offers alternatives; the model sees them as one object (the server's schema still decides)",
      );
  }
  if (schema.type !== undefined && schema.type !== "object")
    return open(`input schema does not describe an object; arguments are checked only against the server's schema`);
  schema = { ...schema, type: "object" };
  if (!isObject(schema.properties)) schema.properties = {};
  const defaults = requiredDefaults(input);
  if (defaults && Array.isArray(schema.required)) {
    const required = schema.required.filter((name) => !(typeof name === "string" && Object.hasOwn(defaults, name)));
    if (required.length) schema.required = required;
    else delete schema.required;
  }
  const renamed = renameKeys(schema);
  return { schema, warnings: converted.warnings, uncarried: converted.uncarried, ...(renamed && { renamed }) };
}

/**
 * The parameters the server's schema both requires and gives a `default` (youtube-transcript's `lang`), with their
 * defaults; undefined when there are none. A model leaves such a parameter out, and pi, which checks the arguments
 * against the model's copy without filling in defaults, would refuse the call: so the copy does not require them, and
 * the call is sent with the default where the model gave none.
 */
export function requiredDefaults(input: unknown): Record<string, unknown> | undefined {
  if (!isObject(input) || !Array.isArray(input.required) || !isObject(input.properties)) return undefined;
  const { properties } = input;
  const entries = input.required.flatMap((name) => {
    const property = typeof name === "string" && Object.hasOwn(properties, name) ? properties[name] : undefined;
    return isObject(property) && Object.hasOwn(property, "default")
      ? [[name as string, property.default] as const]
      : [];
  });
  return entries.length ? Object.fromEntries(entries) : undefined;
}

/**
 * Parameters pi checks a model's arguments against as they are. pi 0.73's pi-ai first coerces them by a plain JSON
 * Schema, turning a `null` into 0, "" or false even where the schema allows null (`"limit": null` reached the server as
 * 0); it leaves a TypeBox schema alone, which this mark says (a symbol, not enumerable: no provider sees it, nor a
 * comparison). pi 1.x keeps a null the schema allows, drops one it does not, and ignores the mark.
 */
export function checkedAsGiven<T extends object>(schema: T): T {
  return Object.defineProperty(schema, Symbol.for("TypeBox.Kind"), { value: "Object" });
}
