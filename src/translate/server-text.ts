/**
 * What a server says about its tools, made safe to show and to hand to the model: names, titles and descriptions
 * (the tool's own, and those of its parameters and output fields) lose terminal escape sequences and control
 * characters and are cut to a bound (see ../common/terminal-text.ts). Values a schema constrains (enums, defaults, examples) are data and stay
 * as they are. Pure.
 */
import type { Tool } from "@modelcontextprotocol/client";
import { shown, SHOWN } from "../common/terminal-text.ts";
import { defineOwn } from "../common/values.ts";
// Deeper than any real schema; a tool whose schema nests deeper is not registered at all (./tool-list-limits.ts).
import { MAX_SCHEMA_DEPTH } from "./tool-list-limits.ts";

/** Schema keywords whose string values are prose for people and the model. */
const PROSE_KEYS = new Set(["description", "title", "$comment"]);

/** A copy of `tool` with its shown text stripped of control sequences and bounded. */
export function safeTool(tool: Tool): Tool {
  const safe: Tool = { ...tool, name: shown(tool.name, SHOWN.name, "line") };
  if (typeof tool.title === "string") safe.title = shown(tool.title, SHOWN.line, "line");
  if (typeof tool.description === "string") safe.description = shown(tool.description, SHOWN.description);
  if (tool.annotations && typeof tool.annotations.title === "string")
    safe.annotations = { ...tool.annotations, title: shown(tool.annotations.title, SHOWN.line, "line") };
  safe.inputSchema = safeSchema(tool.inputSchema, 0) as Tool["inputSchema"];
  if (tool.outputSchema) safe.outputSchema = safeSchema(tool.outputSchema, 0) as Tool["outputSchema"];
  return safe;
}

/** Keywords whose keys are names (of parameters, definitions), not keywords: `default` there is a parameter. */
const NAME_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);

function safeSchema(value: unknown, depth: number, names = false): unknown {
  if (value === null || typeof value !== "object" || depth > MAX_SCHEMA_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => safeSchema(item, depth + 1));
  const out: Record<string, unknown> = {};
  // Defined, not assigned: a parameter named `__proto__` stays a parameter.
  for (const [key, item] of Object.entries(value)) {
    if (names) defineOwn(out, key, safeSchema(item, depth + 1));
    else if (PROSE_KEYS.has(key) && typeof item === "string")
      out[key] = key === "title" ? shown(item, SHOWN.line, "line") : shown(item, SHOWN.body);
    else if (key === "enum" || key === "const" || key === "default" || key === "examples") out[key] = item;
    else defineOwn(out, key, safeSchema(item, depth + 1, NAME_MAPS.has(key)));
  }
  return out;
}
