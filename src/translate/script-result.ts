/**
 * What a script that calls an MCP tool gets back (pi 1.x's `codemode`): the server's `CallToolResult` without `_meta`,
 * as pi 1.x's own MCP gives it, so a script written for either reads `content`, `structuredContent` and `isError` the
 * same way. Never cut: only the model's copy of a result is capped (../pi/tool-definition.ts). Pure.
 */
import { type JsonSchema, portableSchema } from "./portable-schema.ts";
import type { McpToolResult } from "./output.ts";

/** The fields of content blocks scripts read most (a text block's text, an image's data and type); others pass. */
const CONTENT_BLOCK: JsonSchema = {
  type: "object",
  properties: {
    type: { enum: ["text", "image", "audio", "resource_link", "resource"] },
    text: { type: "string" },
    data: { type: "string" },
    mimeType: { type: "string" },
  },
  required: ["type"],
  additionalProperties: true,
};

/**
 * The result's shape, declared to pi as the tool's output schema: pi writes it into the tool's declaration in scripts.
 * The tool's own output schema, if it has one, describes `structuredContent` (its `$ref`s inlined, so they still point
 * where they did); any JSON value otherwise, as servers send structured content without declaring it.
 */
export function scriptResultSchema(outputSchema: unknown): JsonSchema {
  let structured: JsonSchema = {};
  if (outputSchema && typeof outputSchema === "object") {
    try {
      structured = portableSchema(outputSchema as JsonSchema).schema;
    } catch {
      // Too large to inline: described as any value, which it still is.
    }
  }
  return {
    type: "object",
    properties: {
      content: { type: "array", items: CONTENT_BLOCK },
      structuredContent: structured,
      isError: { type: "boolean" },
    },
    required: ["content"],
    // Fields a newer protocol revision adds.
    additionalProperties: true,
  };
}

/** The result as a script receives it: without `_meta`, and with `content` a list even where a server left it out. */
export function scriptResult(result: McpToolResult & { _meta?: unknown }): Record<string, unknown> {
  const { _meta: _dropped, ...rest } = result;
  return { ...rest, content: Array.isArray(result.content) ? result.content : [] };
}
