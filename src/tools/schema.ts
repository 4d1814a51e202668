/**
 * MCP `inputSchema` → a tool parameter schema every provider takes. Pure.
 *
 * Local `$ref`s (`#/$defs/...`, `#/definitions/...`) are inlined because some providers drop `$defs` and others
 * reject `$ref`; a recursive reference is cut off at its second appearance with an open schema.
 */
import { isObject } from "../common/values.ts";

export type JsonSchema = Record<string, unknown>;

export interface NormalizedSchema {
  schema: JsonSchema;
  warnings: string[];
}


export const EMPTY_OBJECT_SCHEMA: JsonSchema = Object.freeze({ type: "object", properties: {} });
/** Accepts any arguments: for schemas that cannot be used as they are. */
export const OPEN_OBJECT_SCHEMA: JsonSchema = Object.freeze({ type: "object", properties: {}, additionalProperties: true });

function resolvePointer(root: JsonSchema, ref: string): unknown {
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (!isObject(node)) return undefined;
    node = node[key];
  }
  return node;
}

function inlineRefs(node: unknown, root: JsonSchema, active: readonly string[], warnings: Set<string>): unknown {
  if (Array.isArray(node)) return node.map((item) => inlineRefs(item, root, active, warnings));
  if (!isObject(node)) return node;
  if (typeof node.$ref === "string") {
    const ref = node.$ref;
    const { $ref: _ignored, ...siblings } = node;
    if (active.includes(ref)) {
      warnings.add(`recursive reference ${ref} is left open after one level`);
      return { ...inlineRefs(siblings, root, active, warnings) as JsonSchema };
    }
    const target = resolvePointer(root, ref);
    if (!isObject(target)) {
      warnings.add(`reference ${ref} cannot be resolved; any value is accepted there`);
      return inlineRefs(siblings, root, active, warnings);
    }
    const inlined = inlineRefs(target, root, [...active, ref], warnings) as JsonSchema;
    return { ...inlined, ...(inlineRefs(siblings, root, active, warnings) as JsonSchema) };
  }
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$defs" || key === "definitions") continue;
    // `properties` maps names to schemas; a property may itself be called `$ref`.
    if (key === "properties" && isObject(value)) {
      const props: JsonSchema = {};
      for (const [prop, schema] of Object.entries(value)) props[prop] = inlineRefs(schema, root, active, warnings);
      out[key] = props;
      continue;
    }
    out[key] = inlineRefs(value, root, active, warnings);
  }
  return out;
}

function hasRefs(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(hasRefs);
  if (!isObject(node)) return false;
  return Object.entries(node).some(([key, value]) => (key === "$ref" && typeof value === "string") || hasRefs(value));
}

/**
 * Returns an object schema for tool parameters. A missing or empty schema becomes `{type: "object", properties: {}}`;
 * a schema that is not an object type is replaced by an open object schema, with a warning.
 */
export function normalizeInputSchema(input: unknown): NormalizedSchema {
  const warnings = new Set<string>();
  if (!isObject(input) || Object.keys(input).length === 0) return { schema: { ...EMPTY_OBJECT_SCHEMA, properties: {} }, warnings: [] };
  const type = input.type;
  if (type !== undefined && type !== "object" && !(Array.isArray(type) && type.includes("object"))) {
    return {
      schema: { ...OPEN_OBJECT_SCHEMA, properties: {} },
      warnings: [`input schema has type ${JSON.stringify(type)}, not "object"; arguments are passed through unchecked`],
    };
  }
  let schema: JsonSchema = hasRefs(input) ? (inlineRefs(input, input, [], warnings) as JsonSchema) : { ...input };
  if (!hasRefs(input)) {
    delete schema.$defs;
    delete schema.definitions;
  }
  // `$schema` names a draft some providers reject; it carries no constraint.
  delete schema.$schema;
  schema = { ...schema, type: "object" };
  if (!isObject(schema.properties)) schema.properties = {};
  return { schema, warnings: [...warnings] };
}
