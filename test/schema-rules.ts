/**
 * The strictest published rules for tool parameter schemas, as checks that list what breaks them (empty: passes).
 *
 * - OpenAI function schemas (the Structured Outputs subset strict mode accepts): an object at the top, never a choice;
 *   only `type` (one of the seven JSON types), `description`, `properties`, `required`, `items`, `enum`, `anyOf`,
 *   `minimum`, `maximum`, `minItems`, `maxItems`, `format`, `additionalProperties: false`; no `allOf`, `oneOf`, `not`,
 *   `const`, `$ref` or `$defs`; every `required` name among `properties`; at most 10 levels
 *   of nesting and 5000 properties. Strict mode's own demands (every property required, every object closed) are not
 *   applied: pi sends `strict: false`, and they would make pi refuse calls the server accepts.
 * - Gemini function declarations (the OpenAPI 3.0 subset of `parameters`): one `type` per schema, never a list;
 *   no `$ref`, `$defs`, `$schema`, `additionalProperties`, `const`, `oneOf`, `allOf`, `title`; enums of strings only,
 *   none of them empty ("enum[3]: cannot be empty"), on string schemas; `format` only `date-time` on strings.
 *
 * Both: every schema says its `type` or is an `anyOf`; every array says its `items`.
 */
type Schema = Record<string, unknown>;

const TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);
const OPENAI_KEYWORDS = new Set([
  "type",
  "description",
  "properties",
  "required",
  "items",
  "enum",
  "anyOf",
  "minimum",
  "maximum",
  "minItems",
  "maxItems",
  "format",
  "additionalProperties",
]);
const GEMINI_KEYWORDS = new Set([
  "type",
  "description",
  "properties",
  "required",
  "items",
  "enum",
  "anyOf",
  "minimum",
  "maximum",
  "minItems",
  "maxItems",
  "format",
  "nullable",
  "minLength",
  "maxLength",
  "pattern",
  "default",
  "example",
  "propertyOrdering",
]);

function isSchema(value: unknown): value is Schema {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Calls `visit` on every subschema with its path and nesting depth. */
function walk(
  schema: unknown,
  visit: (node: Schema, path: string, depth: number) => void,
  path = "$",
  depth = 0,
): void {
  if (!isSchema(schema)) return;
  visit(schema, path, depth);
  if (isSchema(schema.properties))
    for (const [name, child] of Object.entries(schema.properties)) walk(child, visit, `${path}.${name}`, depth + 1);
  if (schema.items !== undefined) walk(schema.items, visit, `${path}[]`, depth);
  if (Array.isArray(schema.anyOf)) schema.anyOf.forEach((branch, i) => walk(branch, visit, `${path}|${i}`, depth));
}

function common(node: Schema, path: string, problems: string[]): void {
  if (node.type === undefined && !Array.isArray(node.anyOf)) problems.push(`${path}: no type`);
  if (node.type === "array" && node.items === undefined) problems.push(`${path}: array without items`);
  if (Array.isArray(node.required) && isSchema(node.properties)) {
    for (const name of node.required)
      if (!Object.hasOwn(node.properties, name as string))
        problems.push(`${path}: required '${String(name)}' is not a property`);
  }
}

export function openAiProblems(schema: unknown): string[] {
  const problems: string[] = [];
  if (!isSchema(schema) || schema.type !== "object") problems.push("$: the top is not an object schema");
  if (isSchema(schema) && Array.isArray(schema.anyOf)) problems.push("$: anyOf at the top");
  let properties = 0;
  walk(schema, (node, path, depth) => {
    common(node, path, problems);
    for (const key of Object.keys(node)) if (!OPENAI_KEYWORDS.has(key)) problems.push(`${path}: keyword '${key}'`);
    if (node.type !== undefined && (typeof node.type !== "string" || !TYPES.has(node.type)))
      problems.push(`${path}: type ${JSON.stringify(node.type)}`);
    if (node.additionalProperties !== undefined && node.additionalProperties !== false)
      problems.push(`${path}: additionalProperties other than false`);
    if (isSchema(node.properties)) properties += Object.keys(node.properties).length;
    if (depth > 10) problems.push(`${path}: nested deeper than 10 object levels`);
  });
  if (properties > 5000) problems.push(`$: ${properties} properties`);
  return problems;
}

export function geminiProblems(schema: unknown): string[] {
  const problems: string[] = [];
  if (!isSchema(schema) || schema.type !== "object") problems.push("$: the top is not an object schema");
  walk(schema, (node, path) => {
    common(node, path, problems);
    for (const key of Object.keys(node)) if (!GEMINI_KEYWORDS.has(key)) problems.push(`${path}: keyword '${key}'`);
    if (node.type !== undefined && (typeof node.type !== "string" || !TYPES.has(node.type)))
      problems.push(`${path}: type ${JSON.stringify(node.type)}`);
    if (node.enum !== undefined) {
      if (!Array.isArray(node.enum) || !node.enum.every((v) => typeof v === "string"))
        problems.push(`${path}: enum of non-strings`);
      else if (node.enum.includes("")) problems.push(`${path}: an empty enum value`);
      if (node.type !== "string") problems.push(`${path}: enum on a ${JSON.stringify(node.type)} schema`);
    }
    if (node.format !== undefined && !(node.type === "string" && node.format === "date-time"))
      problems.push(`${path}: format ${JSON.stringify(node.format)}`);
  });
  return problems;
}
