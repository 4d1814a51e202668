/**
 * One JSON Schema (a tool's parameters, or part of them) rewritten into the subset every provider pi talks to accepts
 * (OpenAI function schemas, Gemini function declarations, Anthropic): local `$ref`s inlined, `type` arrays, `nullable`
 * and `oneOf` as `anyOf`, `allOf` merged, `const` as a one-value `enum`, and the keywords some provider rejects
 * (`$schema`, `$id`, `$comment`, `additionalProperties`, `not`, `if`, …) dropped. Pure.
 *
 * Every rewrite keeps or widens what the schema accepts, never narrows it: arguments valid under the server's schema
 * stay valid under this copy, and the server's own schema is what a call is finally checked against
 * (../pi/tool-definition.ts). Schemas are hostile input: nesting is bounded by {@link MAX_SCHEMA_DEPTH} and inlining
 * by {@link MAX_PORTABLE_NODES}, so a `$ref` bomb cannot exhaust memory.
 */
import { defineOwn, isObject } from "../common/values.ts";
import { MAX_SCHEMA_DEPTH } from "./tool-list-limits.ts";

export type JsonSchema = Record<string, unknown>;

/** How many schema nodes inlining may produce before the conversion gives up (real schemas have a few hundred). */
export const MAX_PORTABLE_NODES = 20_000;

/** The JSON types every provider names the same way. */
const TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);

/** Keywords kept as they are, by the type they apply to; anything else is dropped. */
const KEPT_FOR: Record<string, readonly string[]> = {
  number: ["minimum", "maximum"],
  integer: ["minimum", "maximum"],
  array: ["minItems", "maxItems"],
};

/**
 * Keywords that tie a rule to other values or shapes (a condition, a negation, a dependency between fields): dropped
 * like the rest, but unlike a dropped length or pattern the model cannot guess them from a field's description, so
 * each tool that uses one is reported.
 */
const UNCARRIED = new Set([
  ...["not", "if", "then", "else", "contains", "prefixItems", "dependencies", "dependentSchemas"],
  ...["dependentRequired", "patternProperties", "propertyNames"],
]);
/** What some generators write for every map (zod's records): it holds for any JSON object, so it hides nothing. */
const KEYS_ARE_STRINGS = JSON.stringify({ type: "string" });

export class SchemaTooLarge extends Error {}

interface Context {
  root: JsonSchema;
  warnings: Set<string>;
  uncarried: Set<string>;
  nodes: number;
}

function resolvePointer(root: JsonSchema, ref: string): unknown {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    } catch {
      return undefined;
    }
    if (!isObject(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

/** A single JSON type of a schema, if it names exactly one. */
function singleType(schema: unknown): string | undefined {
  if (!isObject(schema)) return undefined;
  if (typeof schema.type === "string") return schema.type;
  if (Array.isArray(schema.type) && schema.type.length === 1 && typeof schema.type[0] === "string")
    return schema.type[0];
  return undefined;
}

function withNote(description: unknown, note: string): string {
  return typeof description === "string" && description.trim() ? `${description.trim()} ${note}` : note;
}

/**
 * The placeholder for a reference met again inside itself: the same kind of value, not described further. It accepts
 * every value of that type, so nothing the server's schema allows is refused here.
 */
function recursionPlaceholder(ref: string, target: unknown): JsonSchema {
  const type = singleType(target);
  const name = ref.split("/").pop() || ref;
  return {
    description: `(Recursive: the same shape as '${name}' above; not expanded further.)`,
    ...(type && TYPES.has(type) && type !== "null" ? { type } : {}),
    ...(type === "array" ? { items: {} } : {}),
  };
}

/** Which JSON type a value has, as a schema would name it. */
function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** Merges `allOf` branches (already portable) into one schema that accepts at least what all of them accept together. */
function mergeAll(branches: JsonSchema[]): JsonSchema {
  const merged: JsonSchema = {};
  const properties: JsonSchema = {};
  const required = new Set<string>();
  const types = new Set<unknown>();
  let sawProperties = false;
  const descriptions: string[] = [];
  for (const branch of branches) {
    if (branch.type !== undefined) types.add(JSON.stringify(branch.type));
    if (typeof branch.description === "string") descriptions.push(branch.description);
    if (Array.isArray(branch.required))
      for (const name of branch.required) if (typeof name === "string") required.add(name);
    if (isObject(branch.properties)) {
      sawProperties = true;
      for (const [name, schema] of Object.entries(branch.properties)) {
        // Two branches constraining one property differently: the merge keeps neither constraint rather than one.
        const clash = Object.hasOwn(properties, name) && JSON.stringify(properties[name]) !== JSON.stringify(schema);
        defineOwn(properties, name, clash ? {} : schema);
      }
    }
    for (const [key, value] of Object.entries(branch)) {
      if (["type", "description", "required", "properties"].includes(key)) continue;
      if (!Object.hasOwn(merged, key)) merged[key] = value;
      else if (JSON.stringify(merged[key]) !== JSON.stringify(value)) merged[key] = undefined;
    }
  }
  for (const key of Object.keys(merged)) if (merged[key] === undefined) delete merged[key];
  // Branches that disagree on the type cannot all hold; dropping the type widens instead of picking one.
  if (types.size === 1) merged.type = JSON.parse([...types][0] as string);
  if (descriptions.length) merged.description = descriptions.join(" ");
  if (sawProperties) merged.properties = properties;
  if (required.size) merged.required = [...required];
  return merged;
}

/**
 * A root `anyOf`/`oneOf` of object shapes (which OpenAI rejects at the top) as one object: every property any branch
 * (or `own`, the schema beside the choice) has, and required what `own` requires and what every branch requires.
 */
export function mergeAlternatives(branches: JsonSchema[], own: JsonSchema = {}): JsonSchema | undefined {
  if (branches.length === 0 || !branches.every((b) => singleType(b) === "object")) return undefined;
  const properties: JsonSchema = isObject(own.properties) ? { ...own.properties } : {};
  for (const branch of branches)
    for (const [name, schema] of Object.entries(isObject(branch.properties) ? branch.properties : {})) {
      const clash = Object.hasOwn(properties, name) && JSON.stringify(properties[name]) !== JSON.stringify(schema);
      defineOwn(properties, name, clash ? {} : schema);
    }
  const requiredOf = (b: JsonSchema) =>
    new Set(Array.isArray(b.required) ? b.required.filter((n) => typeof n === "string") : []);
  const [first, ...rest] = branches.map(requiredOf);
  const required = [
    ...new Set([...requiredOf(own), ...[...first!].filter((name) => rest.every((set) => set.has(name)))]),
  ];
  const merged: JsonSchema = { type: "object", properties };
  if (required.length) merged.required = required;
  return merged;
}

/** Splits a schema with several types into one `anyOf` branch per type, each with the keywords that apply to it. */
function splitTypes(types: string[], schema: JsonSchema): JsonSchema {
  const { description, title: _title, ...rest } = schema;
  const branches: JsonSchema[] = [];
  for (const type of types) {
    const branch: JsonSchema = { type };
    if (type === "object") {
      if (rest.properties !== undefined) branch.properties = rest.properties;
      if (rest.required !== undefined) branch.required = rest.required;
    }
    if (type === "array") branch.items = rest.items ?? {};
    for (const key of KEPT_FOR[type] ?? []) if (rest[key] !== undefined) branch[key] = rest[key];
    if (Array.isArray(rest.enum) && type !== "null") {
      const values = rest.enum.filter((v) => typeOf(v) === type || (type === "number" && typeOf(v) === "integer"));
      if (values.length === 0) continue;
      branch.enum = values;
      portableEnum(branch);
    }
    branches.push(branch);
  }
  const out: JsonSchema = branches.length === 1 ? branches[0]! : { anyOf: branches };
  if (description !== undefined) out.description = description;
  return out;
}

/** A type-specific rewrite of enums Gemini rejects (non-strings, an empty string) into a note in the description. */
function portableEnum(schema: JsonSchema): void {
  if (!Array.isArray(schema.enum)) return;
  const values = schema.enum;
  if (values.every((v) => typeof v === "string" && v !== "")) {
    if (schema.type === undefined) schema.type = "string";
    return;
  }
  delete schema.enum;
  schema.description = withNote(
    schema.description,
    `Allowed values: ${values.map((v) => JSON.stringify(v)).join(", ")}.`,
  );
}

/** The JSON types a schema allows, from `type`, `nullable` and the values of `enum`/`const`. */
function declaredTypes(node: JsonSchema): string[] | undefined {
  let types: string[] | undefined;
  if (typeof node.type === "string") types = [node.type];
  else if (Array.isArray(node.type)) types = node.type.filter((t): t is string => typeof t === "string");
  if (types && node.nullable === true && !types.includes("null")) types = [...types, "null"];
  return types?.filter((t) => TYPES.has(t));
}

/** Converts one schema node. `active` holds the references being expanded on the way here (for cutting recursion). */
function portableNode(input: unknown, ctx: Context, depth: number, active: readonly string[]): JsonSchema {
  if (++ctx.nodes > MAX_PORTABLE_NODES)
    throw new SchemaTooLarge(`expands to more than ${MAX_PORTABLE_NODES} schema nodes`);
  if (input === true || (isObject(input) && Object.keys(input).length === 0)) return {};
  if (!isObject(input)) {
    ctx.warnings.add("a schema that accepts nothing (or is not a schema) is left open");
    return {};
  }
  if (depth > MAX_SCHEMA_DEPTH) {
    ctx.warnings.add(`schema nested deeper than ${MAX_SCHEMA_DEPTH} levels is left open below that`);
    return { description: "(Not described: nested too deeply.)" };
  }
  const next = (child: unknown, refs = active) => portableNode(child, ctx, depth + 1, refs);
  for (const [key, value] of Object.entries(input))
    if (UNCARRIED.has(key) && !(key === "propertyNames" && JSON.stringify(value) === KEYS_ARE_STRINGS))
      ctx.uncarried.add(key);

  let node: JsonSchema = input;
  if (typeof node.$ref === "string") {
    const ref = node.$ref;
    const { $ref: _ref, ...siblings } = node;
    const target = resolvePointer(ctx.root, ref);
    let inlined: JsonSchema;
    if (active.includes(ref)) {
      ctx.warnings.add(`recursive reference ${ref} is expanded once, then left open`);
      inlined = recursionPlaceholder(ref, target);
    } else if (target === undefined || (!isObject(target) && target !== true)) {
      ctx.warnings.add(`reference ${ref} cannot be resolved; any value is accepted there`);
      inlined = {};
    } else {
      inlined = next(target, [...active, ref]);
    }
    if (Object.keys(siblings).length === 0) return inlined;
    // Siblings of `$ref` constrain the same value: both hold.
    return next({ allOf: [inlined, siblings] });
  }

  const out: JsonSchema = {};
  if (typeof node.description === "string") out.description = node.description;
  else if (typeof node.title === "string" && node.title.trim()) out.description = node.title;

  if (Array.isArray(node.allOf)) {
    const { allOf, ...own } = node;
    const branches = [...allOf, own].map((b) => next(b));
    const merged = mergeAll(branches);
    // A branch that only lists `required` (its properties beside the `allOf`) has no properties of its own to keep it.
    const listed = [...allOf, own].flatMap((b) => (isObject(b) && Array.isArray(b.required) ? b.required : []));
    const required = listed.filter(
      (n) => typeof n === "string" && isObject(merged.properties) && Object.hasOwn(merged.properties, n),
    );
    if (required.length) merged.required = [...new Set([...((merged.required as string[]) ?? []), ...required])];
    if (out.description !== undefined && merged.description === undefined) merged.description = out.description;
    return merged;
  }

  const alternatives = Array.isArray(node.anyOf) ? node.anyOf : Array.isArray(node.oneOf) ? node.oneOf : undefined;
  if (alternatives) {
    const branches = alternatives.map((b) => next(b));
    // A branch that accepts anything makes the whole choice accept anything.
    const open = branches.some((b) => Object.keys(b).every((k) => k === "description"));
    const { anyOf: _a, oneOf: _o, ...own } = node;
    const ownPortable = Object.keys(own).some((k) => k !== "description" && k !== "title") ? next(own) : {};
    let result: JsonSchema;
    if (open || branches.length === 0) result = { ...ownPortable };
    else if (branches.length === 1) result = mergeAll([ownPortable, branches[0]!]);
    else {
      result = { anyOf: branches };
      // A type or object shape beside the choice also holds; without one the choice says it all.
      if (ownPortable.type !== undefined) result = mergeAll([ownPortable, result]);
    }
    // The choice's own description, with what its own keywords add to it (`Default: …`).
    const description = ownPortable.description ?? out.description;
    if (description !== undefined) result.description = description;
    return result;
  }

  if (node.const !== undefined) node = { ...node, enum: [node.const] };
  let types = declaredTypes(node);
  if (Array.isArray(node.enum) && node.enum.includes(null)) {
    node = { ...node, enum: node.enum.filter((v) => v !== null) };
    if (types && !types.includes("null")) types = [...types, "null"];
    else if (!types) types = [...new Set([...(node.enum as unknown[]).map(typeOf), "null"])];
  }
  if (types === undefined && Array.isArray(node.enum) && node.enum.length > 0) {
    const valueTypes = [...new Set(node.enum.map(typeOf))];
    if (valueTypes.length > 1) types = valueTypes;
  }

  const body: JsonSchema = {};
  if (isObject(node.properties)) {
    const properties: JsonSchema = {};
    // Defined, not assigned: a parameter named `__proto__` stays a parameter.
    for (const [name, schema] of Object.entries(node.properties)) {
      const converted = next(schema);
      const { description, ...rest } = converted;
      // pi's check (TypeBox) takes a name every object has (`toString`) as given when it is left out, and refuses the
      // call: such a property's shape is said in words, and the server's schema checks it.
      const inherited = name in Object.prototype && name !== "__proto__" && Object.keys(rest).length > 0;
      const said = { description: withNote(description, `Schema: ${JSON.stringify(rest)}.`) };
      defineOwn(properties, name, inherited ? said : converted);
    }

    body.properties = properties;
  }
  if (Array.isArray(node.required) && isObject(body.properties)) {
    const { properties } = body;
    const names = node.required.filter((n) => typeof n === "string" && Object.hasOwn(properties, n));
    if (names.length) body.required = names;
  }
  const tuple = Array.isArray(node.prefixItems) ? node.prefixItems : Array.isArray(node.items) ? node.items : undefined;
  if (tuple) {
    // A tuple becomes an array whose items may be any of the tuple's item shapes, or of those after it (any, unless
    // `items` in 2020-12, or draft-07's `additionalItems`, say otherwise).
    const rest = tuple === node.items ? node.additionalItems : node.items;
    const shapes = rest === false ? tuple : isObject(rest) ? [...tuple, rest] : [];
    body.items = next(shapes.length ? { anyOf: shapes } : {});
  } else if (node.items !== undefined) body.items = next(node.items);
  if (Array.isArray(node.enum) && node.enum.length) body.enum = node.enum;
  for (const key of ["minimum", "maximum", "minItems", "maxItems"])
    if (typeof node[key] === "number") body[key] = node[key];
  // Not as a keyword: pi's check of one refuses forms the server's schema takes (`2024-06-01 10:00:00Z`, `+0200`).
  if (node.format === "date-time") out.description = withNote(out.description, "Format: date-time (RFC 3339).");
  if (node.default !== undefined) {
    // Some providers reject `default`; the model still learns it from the description.
    out.description = withNote(out.description, `Default: ${JSON.stringify(node.default)}.`);
  }

  if (types && types.length > 1) return splitTypes(types, { ...out, ...body });
  const result: JsonSchema = { ...out, ...body };
  if (types?.length === 1) result.type = types[0];
  else if (body.properties !== undefined) result.type = "object";
  else if (body.items !== undefined) result.type = "array";
  if (result.type !== undefined) {
    // Keywords of another type than the one declared say nothing about its values.
    const type = result.type as string;
    for (const key of ["minimum", "maximum"]) if (type !== "number" && type !== "integer") delete result[key];
    for (const key of ["minItems", "maxItems", "items"]) if (type !== "array") delete result[key];
    if (type !== "object") {
      delete result.properties;
      delete result.required;
    }
    if (type === "array" && result.items === undefined) result.items = {};
  }
  portableEnum(result);
  // The type first, as people write it.
  const { type: declared, ...rest } = result;
  return declared === undefined ? result : { type: declared, ...rest };
}

/**
 * Converts a whole schema; `root` is where its `$ref`s point. `uncarried` lists the rule keywords it used that the copy
 * leaves out (see {@link UNCARRIED}). Throws {@link SchemaTooLarge}.
 */
export function portableSchema(schema: JsonSchema): { schema: JsonSchema; warnings: string[]; uncarried: string[] } {
  const ctx: Context = { root: schema, warnings: new Set(), uncarried: new Set(), nodes: 0 };
  const portable = portableNode(schema, ctx, 0, []);
  return { schema: portable, warnings: [...ctx.warnings], uncarried: [...ctx.uncarried] };
}
