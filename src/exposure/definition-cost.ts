/**
 * What a tool costs in every model request: the name, description and parameter schema a provider receives, measured
 * as characters and as estimated tokens (a quarter of the characters, the usual rule of thumb for English and JSON).
 * Titles, annotations and `outputSchema` stay with the bridge and are not counted. Pure.
 */
import type { Tool } from "@modelcontextprotocol/client";
import { toolNameFor } from "../translate/naming.ts";
import { normalizeInputSchema } from "../translate/schema.ts";

/** What the model is sent of one tool. */
export interface ModelFacingTool {
  name: string;
  description: string;
  parameters: unknown;
}

/** Characters per token in the estimates shown to users and in the bench. */
const CHARS_PER_TOKEN = 4;

/** The characters one tool adds to a request. */
export function definitionChars(tool: ModelFacingTool): number {
  return JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters }).length;
}

export function estimatedTokens(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** The description the model gets for a tool: the server's, or a plain one when the server gave none. */
export function toolDescription(server: string, tool: Pick<Tool, "name" | "description">): string {
  return tool.description?.trim() || `Tool '${tool.name}' from MCP server '${server}'`;
}

/** What the model would be sent of a server's tool, before any name collision moves it. */
export function modelFacingTool(server: string, tool: Tool, prefix?: string): ModelFacingTool {
  return {
    name: toolNameFor(server, tool.name, prefix),
    description: toolDescription(server, tool),
    parameters: normalizeInputSchema(tool.inputSchema).schema,
  };
}
