/**
 * What a tool costs in every model request: the name, description and parameter schema a provider receives, measured
 * as characters and as estimated tokens (a quarter of the characters, the usual rule of thumb for English and JSON).
 * Titles, annotations and `outputSchema` stay with the bridge and are not counted. Pure.
 */

/** What the model is sent of one tool. */
export interface ModelFacingTool {
  name: string;
  description: string;
  parameters: unknown;
}

/** Characters per token in the estimates shown to users and in the bench. */
export const CHARS_PER_TOKEN = 4;

/** The characters one tool adds to a request. */
export function definitionChars(tool: ModelFacingTool): number {
  return JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters }).length;
}

export function estimatedTokens(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** The characters a set of tools adds to each request. */
export function totalDefinitionChars(tools: Iterable<ModelFacingTool>): number {
  let total = 0;
  for (const tool of tools) total += definitionChars(tool);
  return total;
}
