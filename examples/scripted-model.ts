/**
 * A pi extension with a scripted model, so the agent can be watched calling MCP tools without an API key or a network:
 * it registers the provider `scripted` with one model, `demo`. `npm run demo:agent` runs it:
 *
 *   pi -e . -e examples/scripted-model.ts --provider scripted --model demo --mcp-config examples/demo.json -p "greet Ada"
 *
 * What it answers, always the same way:
 * - a prompt `<tool> <text>` calls the tool pi offers under that name, or whose name ends in `_<tool>` (so `greet`
 *   finds the bridge's `mcp_hello_greet`); the text after the tool's name is its arguments when it is a JSON object,
 *   else the value of the tool's first text parameter (`greet Ada` calls `mcp_hello_greet` with `{"name":"Ada"}`);
 * - if no tool pi offers matches but `tool_search` is offered, it searches with the prompt first, then picks again
 *   among the tools the search loaded (`echo hi` finds the reference server's deferred `ev_echo`);
 * - once it has the tool's result, it answers with the tool's name and the result's text, word for word;
 * - a prompt that names no tool gets the list of the tools pi offered it.
 *
 * `registerScriptedModel` is the part to reuse for a model with another script.
 */
import {
  type AssistantMessage,
  type Context,
  fauxAssistantMessage,
  type FauxResponseStep,
  fauxToolCall,
  getApiProvider,
  type Model,
  registerFauxProvider,
  type StreamOptions,
  type Tool,
} from "@mariozechner/pi-ai";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export const SCRIPTED_PROVIDER = "scripted";
export const SCRIPTED_MODEL = "demo";
const TOOL_SEARCH = "tool_search";

/** What the script does next: call a tool, or answer in text. */
export type ScriptedStep = { tool: string; args: Record<string, unknown> } | { text: string };

/** What the model is asked: the conversation (prompt, its answers, tool results) and the tools it may call. */
export interface ScriptedRequest {
  messages: Context["messages"];
  tools: Tool[];
}

/** The text parts of a message's content. */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((c): c is { type: "text"; text: string } => c?.type === "text" && typeof c.text === "string")
    .map((c) => c.text)
    .join("\n");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The name of the tool's first text parameter, the required ones first. */
function textParameter(tool: Tool): string | undefined {
  const schema: unknown = tool.parameters;
  if (!isRecord(schema) || !isRecord(schema.properties)) return undefined;
  const properties = schema.properties;
  const required = Array.isArray(schema.required)
    ? schema.required.filter((n): n is string => typeof n === "string")
    : [];
  // A text parameter may also be null (`anyOf` of a string and a null), as `tool_search`'s `query` is.
  const isString = (schema: unknown) => isRecord(schema) && schema.type === "string";
  const isText = (name: string) => {
    const schema = properties[name];
    return isString(schema) || (isRecord(schema) && Array.isArray(schema.anyOf) && schema.anyOf.some(isString));
  };
  return [...required, ...Object.keys(properties)].find(isText);
}

function argumentsFrom(rest: string, tool: Tool): Record<string, unknown> {
  if (rest.startsWith("{")) {
    try {
      const parsed: unknown = JSON.parse(rest);
      if (isRecord(parsed)) return parsed;
    } catch {
      // Not JSON: the text itself is the argument.
    }
  }
  const parameter = textParameter(tool);
  return rest && parameter ? { [parameter]: rest } : {};
}

/** The first word of the prompt that names an offered tool, as a call of that tool with the rest of the prompt. */
export function pickToolCall(
  prompt: string,
  tools: readonly Tool[],
): { tool: string; args: Record<string, unknown> } | undefined {
  for (const word of prompt.matchAll(/\S+/g)) {
    const wanted = word[0].toLowerCase();
    const tool =
      tools.find((t) => t.name.toLowerCase() === wanted) ??
      tools.find((t) => t.name.toLowerCase().endsWith(`_${wanted}`));
    if (!tool) continue;
    const rest = prompt.slice(word.index + word[0].length).trim();
    return { tool: tool.name, args: argumentsFrom(rest, tool) };
  }
  return undefined;
}

/** The demo's script: the next step for the conversation so far. */
export function demoStep({ messages, tools }: ScriptedRequest): ScriptedStep {
  const promptAt = messages.findLastIndex((m) => m.role === "user");
  const prompt = promptAt < 0 ? "" : textOf(messages[promptAt]!.content).trim();
  const last = messages[messages.length - 1];
  const call = pickToolCall(prompt, tools);
  // A search the prompt asked for is answered like any other tool (calling it again would never end); after one the
  // script made itself, it picks among the tools the search loaded.
  if (last?.role === "toolResult" && (last.toolName !== TOOL_SEARCH || call?.tool === TOOL_SEARCH)) {
    return { text: `${last.toolName} ${last.isError ? "failed" : "returned"}: ${textOf(last.content)}` };
  }
  if (call) return call;
  const searched = messages.slice(promptAt + 1).some((m) => m.role === "toolResult" && m.toolName === TOOL_SEARCH);
  if (!searched && tools.some((t) => t.name === TOOL_SEARCH)) return { tool: TOOL_SEARCH, args: { query: prompt } };
  const offered = tools.map((t) => t.name).join(", ") || "none";
  return {
    text: `No tool I was offered matches "${prompt}". Start the prompt with a tool's name, then its argument (e.g. "greet Ada"). Tools offered: ${offered}.`,
  };
}

function toMessage(step: ScriptedStep): AssistantMessage {
  if ("text" in step) return fauxAssistantMessage(step.text);
  return fauxAssistantMessage([fauxToolCall(step.tool, step.args)], { stopReason: "toolUse" });
}

function isTool(value: unknown): value is Tool {
  return isRecord(value) && typeof value.name === "string";
}

/**
 * The tools pi gives the model: `context.tools` on pi 0.73; on pi 1.x, system messages in the conversation declare
 * them instead, each adding (`toolsAdded`) or removing (`toolsRemoved`) some, in order.
 */
function toolsOf(context: Context): Tool[] {
  const tools = new Map((context.tools ?? []).map((tool) => [tool.name, tool]));
  for (const message of context.messages as readonly unknown[]) {
    if (!isRecord(message) || message.role !== "system") continue;
    for (const tool of Array.isArray(message.toolsAdded) ? message.toolsAdded : [])
      if (isTool(tool)) tools.set(tool.name, tool);
    for (const ref of Array.isArray(message.toolsRemoved) ? message.toolsRemoved : [])
      if (isTool(ref)) tools.delete(ref.name);
  }
  return [...tools.values()];
}

/**
 * The request as a real provider would send it: the tools go through pi's `before_provider_request` handlers as a
 * request body (`tools: [{name, description, input_schema}]`, Anthropic's shape), and the model gets the ones that
 * are still there. The bridge leaves out deferred tools there on pi 0.73, so the model sees what a real one would.
 */
async function requestOf(
  context: Context,
  streamOptions: StreamOptions | undefined,
  model: Model<string>,
): Promise<ScriptedRequest> {
  const messages = context.messages.filter((m) => (m as { role: string }).role !== "system");
  const tools = toolsOf(context);
  const body = {
    model: model.id,
    tools: tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })),
  };
  const changed: unknown = await streamOptions?.onPayload?.(body, model);
  if (!isRecord(changed)) return { messages, tools };
  const kept = new Set((Array.isArray(changed.tools) ? changed.tools : []).filter(isTool).map((t) => t.name));
  return { messages, tools: tools.filter((t) => kept.has(t.name)) };
}

export interface ScriptedModelOptions {
  provider: string;
  model: string;
  /** The provider's name as pi shows it. */
  label: string;
  /** The model's next step for the request pi sends it. */
  step: (request: ScriptedRequest) => ScriptedStep;
}

/** Registers a provider with one model whose every answer is `options.step` of the request pi sends it. */
export function registerScriptedModel(pi: ExtensionAPI, options: ScriptedModelOptions): void {
  const definition = { id: options.model, name: `${options.label} model`, reasoning: false, input: ["text" as const] };
  // pi-ai's faux provider streams the answer in small deltas like a real model. It registers its stream in this
  // module's pi-ai; the stream is handed to pi's model registry below, which registers it under the same api name in
  // pi's own copy (they may be different module instances when pi loads extensions).
  const faux = registerFauxProvider({ provider: options.provider, models: [definition] });
  const fauxStream = getApiProvider(faux.api)!.streamSimple;
  const answer: FauxResponseStep = async (context, streamOptions, _state, model) =>
    toMessage(options.step(await requestOf(context, streamOptions, model)));
  pi.registerProvider(options.provider, {
    name: options.label,
    baseUrl: "http://localhost:0",
    // A literal key (not an env var name): pi then counts the provider as configured and never asks for a login.
    apiKey: "scripted-model-needs-no-key",
    api: faux.api,
    streamSimple: (model, context, streamOptions) => {
      // The faux stream answers each request with one queued response: queue one per request.
      if (faux.getPendingResponseCount() === 0) faux.appendResponses([answer]);
      return fauxStream(model, context, streamOptions);
    },
    models: [
      {
        ...definition,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        contextWindow: 128_000,
        maxTokens: 16_384,
      },
    ],
  });
  pi.on("session_shutdown", () => faux.unregister());
}

export default function scriptedModelExtension(pi: ExtensionAPI): void {
  registerScriptedModel(pi, {
    provider: SCRIPTED_PROVIDER,
    model: SCRIPTED_MODEL,
    label: "Scripted (demo)",
    step: demoStep,
  });
}
