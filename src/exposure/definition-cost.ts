/**
 * What a tool costs in every model request: the entry a provider receives for it in the request body, as pi-ai builds
 * it for the model's API (the provider's wrapper around name, description and parameters, `strict` where it is sent,
 * the fields Anthropic keeps of the schema), measured as characters and as estimated tokens (a quarter of the
 * characters, the usual rule of thumb for English and JSON). Titles, annotations and `outputSchema` stay with the
 * bridge and are not counted, nor is Anthropic's cache breakpoint on the last tool (the request's, not a tool's).
 * Pure, given the model.
 */
import type { Api, Model } from "@mariozechner/pi-ai";
import type { Tool } from "@modelcontextprotocol/client";
import { toolNameFor } from "../translate/naming.ts";
import { normalizeInputSchema } from "../translate/schema.ts";

/** What the model is sent of one tool. */
export interface ModelFacingTool {
  name: string;
  description: string;
  parameters: unknown;
}

/**
 * How a request body declares each tool. `strict` is the value sent, or absent when the body has no such field:
 * which pi-ai built the request matters, as pi 1.x's sends it to fewer providers than pi 0.73's.
 */
export type ToolWire =
  | { format: "chat-function"; strict?: false }
  | { format: "responses-function"; strict?: false | null }
  | { format: "anthropic"; eagerStreaming: boolean }
  | { format: "google" }
  | { format: "bedrock" };

/** The parts of pi's model that decide the wire format. */
export type WireModel = Pick<Model<Api>, "api" | "provider" | "baseUrl" | "compat">;

/** Characters per token in the estimates shown to users and in the bench. */
const CHARS_PER_TOKEN = 4;

/** A compatibility setting of the model's, where it sets one (each API has its own set of them). */
function compatFlag(model: WireModel | undefined, key: "supportsStrictMode" | "supportsEagerToolInputStreaming") {
  const value = (model?.compat as Record<string, unknown> | undefined)?.[key];
  return typeof value === "boolean" ? value : undefined;
}

/** pi 0.73's pi-ai leaves `strict` out for the providers that reject it; pi 1.x's sends it only where a model asks. */
function completionsStrict(model: WireModel, piAiOneX: boolean): false | undefined {
  const { provider, baseUrl } = model;
  const rejects =
    provider === "moonshotai" ||
    provider === "moonshotai-cn" ||
    baseUrl.includes("api.moonshot.") ||
    provider === "cloudflare-ai-gateway" ||
    baseUrl.includes("gateway.ai.cloudflare.com");
  const supported = compatFlag(model, "supportsStrictMode") ?? (piAiOneX ? false : !rejects);
  return supported ? false : undefined;
}

/**
 * The wire format of a model's API. Without a model (print mode without one, a command before any model is set), and
 * for an API pi-ai does not list, OpenAI's Chat Completions format: the one most providers speak.
 */
export function toolWire(model: WireModel | undefined, piAiOneX: boolean): ToolWire {
  switch (model?.api) {
    case "mistral-conversations":
      return { format: "chat-function", strict: false };
    case "openai-responses":
    case "azure-openai-responses":
    case "openai-codex-responses": {
      // pi 1.x's sends `strict` only where the model allows it, by default to Azure and Codex but not OpenAI.
      const sent = !piAiOneX || (compatFlag(model, "supportsStrictMode") ?? model.api !== "openai-responses");
      const strict = model.api === "openai-codex-responses" ? null : false;
      return sent ? { format: "responses-function", strict } : { format: "responses-function" };
    }
    case "anthropic-messages":
      return { format: "anthropic", eagerStreaming: compatFlag(model, "supportsEagerToolInputStreaming") ?? true };
    case "google-generative-ai":
    case "google-vertex":
      // pi 1.x's also turns each `const` into a one-value `enum` for Gemini: a few characters, not counted.
      return { format: "google" };
    case "bedrock-converse-stream":
      return { format: "bedrock" };
    default:
      return {
        format: "chat-function",
        strict: model ? completionsStrict(model, piAiOneX) : piAiOneX ? undefined : false,
      };
  }
}

/**
 * Anthropic's `input_schema`: the schema's properties and required list only. pi 1.x's pi-ai also keeps a root
 * `additionalProperties`, `$defs` and `definitions`, which the bridge's parameters never have (../translate/schema.ts
 * inlines definitions and leaves the others out).
 */
function anthropicSchema(parameters: unknown): Record<string, unknown> {
  const schema = (parameters ?? {}) as Record<string, unknown>;
  return { type: "object", properties: schema.properties ?? {}, required: schema.required ?? [] };
}

/** The tool's entry in the request body, as pi-ai builds it for this wire format. */
function wireEntry(tool: ModelFacingTool, wire: ToolWire): unknown {
  const { name, description, parameters } = tool;
  const strict = "strict" in wire && wire.strict !== undefined ? { strict: wire.strict } : {};
  switch (wire.format) {
    case "chat-function":
      return { type: "function", function: { name, description, parameters, ...strict } };
    case "responses-function":
      return { type: "function", name, description, parameters, ...strict };
    case "anthropic":
      return {
        name,
        description,
        ...(wire.eagerStreaming ? { eager_input_streaming: true } : {}),
        input_schema: anthropicSchema(parameters),
      };
    case "google":
      return { name, description, parametersJsonSchema: parameters };
    case "bedrock":
      return { toolSpec: { name, description, inputSchema: { json: parameters } } };
  }
}

/** The characters one tool adds to a request. */
export function definitionChars(tool: ModelFacingTool, wire: ToolWire): number {
  return JSON.stringify(wireEntry(tool, wire)).length;
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
