/**
 * Answers a server's `sampling/createMessage` with pi's model. The request is shown for approval first (which server,
 * its system prompt, its messages, the token limit), then the model's answer before it goes back (send, edit or
 * refuse). The model is the session's current one, or one the server's `modelPreferences` hints name where such a
 * model is configured with a key. Without a UI a request is refused, unless the server's `sampling` setting is
 * `"allow"`. Tool use inside sampling is not offered, and a request that carries it is refused.
 */
import {
  type Api,
  type AssistantMessage,
  type Context,
  type ImageContent,
  type Model,
  type TextContent,
} from "@mariozechner/pi-ai";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { CreateMessageRequest, CreateMessageResult, SamplingMessage } from "@modelcontextprotocol/client";
import { errorMessage } from "../common/errors.ts";
import { formatBytes, plural } from "../common/text.ts";
import { shown, SHOWN } from "../common/terminal-text.ts";
import type { SamplingMode } from "../config/types.ts";
import { DENY_REST, type DialogBudget } from "./dialog-budget.ts";
import { imageRefusalOf, MODEL_IMAGES_MAX_BASE64, modelImage } from "../translate/output.ts";
import { completeWithPi } from "./pi-line.ts";

type SamplingParams = CreateMessageRequest["params"];
type SamplingContext = Pick<ExtensionContext, "hasUI" | "ui" | "model" | "modelRegistry" | "signal">;

/** The MCP error code for a request the user (or the client on the user's behalf) refused. */
const USER_REJECTED = -1;
/** How much of each message the approval dialog shows. */
const SHOWN_CHARS = 600;
/** How many of the conversation's messages it shows: the last ones, which the model answers. */
const SHOWN_MESSAGES = 6;
const ALLOW = "Allow";
const DENY = "Deny";
const SEND = "Send";
const EDIT = "Edit, then send";
const REFUSE = "Refuse";

/**
 * The error answer to the server's request: the SDK sends a thrown error's `code` and `message` as the JSON-RPC error,
 * as it does for its own `ProtocolError`, which is not imported here so that pi's start does not load the SDK.
 */
class SamplingError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = "SamplingError";
  }
}

function refused(message: string): SamplingError {
  return new SamplingError(USER_REJECTED, message);
}

/** A message's content blocks: one block or a list, as the spec allows both. */
function blocks(message: SamplingMessage): Array<Record<string, unknown>> {
  const content = message.content as unknown;
  return (Array.isArray(content) ? content : [content]) as Array<Record<string, unknown>>;
}

const NO_TOKENS = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

/** The request as pi-ai's context for `model`. Text and images pass; audio is named; tool use is refused. Pure. */
export function samplingContext(params: SamplingParams, model: Model<Api>, now = Date.now()): Context {
  if (params.tools?.length || params.toolChoice)
    throw new SamplingError(-32602, "sampling with tools is not supported by this client (it offers no tool use)");
  // pi's providers take no limit (0) for none at all: the model would write thousands of tokens for "at most 0".
  if (!(params.maxTokens >= 1))
    throw new SamplingError(-32602, `maxTokens must be at least 1, not ${params.maxTokens}`);
  let imageBytes = 0;
  const messages: Context["messages"] = params.messages.map((message) => {
    const parts: Array<TextContent | ImageContent> = blocks(message).map((block) => {
      if (block.type === "text") return { type: "text", text: String(block.text) };
      // pi's model answers hold no images: one the server quotes in an earlier answer is named, not dropped unsaid.
      if (block.type === "image" && message.role === "assistant")
        return { type: "text", text: "[image left out: the model here takes images only in the user's messages]" };
      const mimeType = String(block.mimeType);
      // As a tool result's image: `image/jpg` or any case taken, base64 in lines made one, typed as its bytes are.
      const image = block.type === "image" ? modelImage(String(block.data), mimeType) : undefined;
      // A provider refuses a whole request past its bound, images and all, as it would a tool result's.
      if (image && imageBytes + image.data.length > MODEL_IMAGES_MAX_BASE64)
        return {
          type: "text",
          text: `[image left out: with it, the request's images would be over the ${formatBytes(MODEL_IMAGES_MAX_BASE64)} of base64 one request takes]`,
        };
      if (image) {
        imageBytes += image.data.length;
        return image;
      }
      const why = block.type === "image" && imageRefusalOf(String(block.data), mimeType);
      if (block.type === "image")
        return { type: "text", text: `[image left out${why || `: the model here takes no ${mimeType}`}]` };
      if (block.type === "audio") return { type: "text", text: "[audio left out: the model here takes no audio]" };
      throw new SamplingError(
        -32602,
        `sampling content of type '${String(block.type)}' is not supported by this client (it offers no tool use in sampling)`,
      );
    });
    if (message.role === "user") return { role: "user", content: parts, timestamp: now };
    const text = parts.filter((p): p is TextContent => p.type === "text");
    const answer: AssistantMessage = {
      role: "assistant",
      content: text,
      api: model.api,
      provider: model.provider,
      model: model.id,
      // An earlier answer the server quotes: no tokens of this session went into it.
      usage: { ...NO_TOKENS, totalTokens: 0, cost: { ...NO_TOKENS, total: 0 } },
      stopReason: "stop",
      timestamp: now,
    };
    return answer;
  });
  return { systemPrompt: params.systemPrompt, messages };
}

/** The model a server's hints name, among those configured with a key; else the current one. Pure. */
export function pickModel(
  params: SamplingParams,
  current: Model<Api> | undefined,
  available: readonly Model<Api>[],
): Model<Api> | undefined {
  for (const hint of params.modelPreferences?.hints ?? []) {
    const name = hint.name?.toLowerCase();
    if (!name) continue;
    if (current?.id.toLowerCase().includes(name)) return current;
    const match = available.find((m) => m.id.toLowerCase().includes(name));
    if (match) return match;
  }
  return current;
}

/** The server's limit, within the model's own: providers refuse a request for more than the model can write. Pure. */
const tokenLimit = (params: SamplingParams, model: Model<Api>): number =>
  model.maxTokens > 0 ? Math.min(params.maxTokens, model.maxTokens) : params.maxTokens;

/** What the user sees before the model is asked: who asks, for what, with which limit. Pure. */
export function describeSamplingRequest(server: string, params: SamplingParams, model: Model<Api>): string {
  const lines = [
    `MCP server '${server}' wants ${model.id} to answer it (at most ${tokenLimit(params, model)} tokens).`,
  ];
  if (params.systemPrompt) lines.push(`System prompt: ${shown(params.systemPrompt, SHOWN_CHARS)}`);
  const earlier = params.messages.length - SHOWN_MESSAGES;
  if (earlier > 0) lines.push(`(${plural(earlier, "earlier message")})`);
  for (const message of params.messages.slice(-SHOWN_MESSAGES)) {
    const text = blocks(message)
      .map((b) => (b.type === "text" ? String(b.text) : `[${String(b.type)}]`))
      .join(" ");
    lines.push(`${shown(String(message.role), SHOWN.name, "line")}: ${shown(text, SHOWN_CHARS)}`);
  }
  return shown(lines.join("\n"), SHOWN.body);
}

/**
 * The sampling handler for one server; `ctx` gives the running session's context, if there is one. A request that
 * asks the user waits its turn in `budget`, and may be refused there unasked.
 */
export function samplingHandler(
  server: string,
  mode: SamplingMode,
  ctx: () => SamplingContext | undefined,
  budget: DialogBudget,
): (params: SamplingParams, cancelled?: AbortSignal) => Promise<CreateMessageResult> {
  /** The user's pick in the first dialog; the rest of the server's requests are refused unasked if they said so. */
  const first = (choice: string | undefined) => {
    if (choice === DENY_REST) budget.denyRest(server);
  };
  // `cancelled`: the server gave up on the request; its dialogs are dismissed and its model call ended.
  const respond = async (params: SamplingParams, cancelled?: AbortSignal): Promise<CreateMessageResult> => {
    const asked = ctx();
    if (!asked) throw refused(`pi has no session running to answer MCP server '${server}' with a model`);
    const askUser = asked.hasUI;
    if (!askUser && mode !== "allow")
      throw refused(
        `Sampling for MCP server '${server}' needs the user's approval and there is no UI to ask in; set "sampling": "allow" for it to answer without asking`,
      );
    const model = pickModel(params, asked.model, asked.modelRegistry.getAvailable());
    if (!model) throw refused("pi has no model selected to answer with");
    const context = samplingContext(params, model);
    // Refused above, a request asked nobody: only one that may put up a dialog takes a turn in the budget.
    // The session of the request's turn: another may have started while it waited, and the old one's context is stale.
    const dialogs = async (session = ctx() ?? asked): Promise<CreateMessageResult> => {
      // The server gave up, or pi's turn was aborted: the dialogs are dismissed and the model's answer ended.
      const ended = () => AbortSignal.any([cancelled, session.signal, budget.ended].filter((s) => s !== undefined));
      if (askUser && mode === "ask") {
        const answer = await budget.onScreen(() =>
          session.ui.select(describeSamplingRequest(server, params, model), [ALLOW, DENY, DENY_REST], {
            signal: ended(),
          }),
        );
        first(answer);
        if (answer !== ALLOW) throw refused(`The user declined MCP server '${server}''s sampling request`);
      }
      const reply = await completeWithPi(session.modelRegistry, model, context, {
        maxTokens: tokenLimit(params, model),
        // OpenAI's reasoning models refuse any temperature but their own; for a reasoning model it is left to the model.
        temperature: model.reasoning ? undefined : params.temperature,
        signal: ended(),
      }).catch((error: unknown) => {
        // The model failed (no key, network), as an error answer would: the user refused nothing.
        throw new SamplingError(-32603, `The model failed: ${errorMessage(error)}`);
      });
      if (reply.stopReason === "error" || reply.stopReason === "aborted")
        throw new SamplingError(-32603, `The model failed: ${reply.errorMessage ?? reply.stopReason}`);
      let text = reply.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("");
      if (askUser) {
        const choice = await budget.onScreen(() =>
          session.ui.select(
            `${model.id} answered MCP server '${server}':\n${shown(text, SHOWN.view)}`,
            [SEND, EDIT, REFUSE, ...(mode === "ask" ? [] : [DENY_REST])],
            { signal: ended() },
          ),
        );
        first(choice);
        if (choice === EDIT) {
          // pi's editor cannot be dismissed: a server that gives up meanwhile would take the user's edit nowhere.
          const gaveUp = () =>
            session.ui.notify(
              `MCP server '${server}' gave up on its request: the answer you are editing will not be sent.`,
              "warning",
            );
          cancelled?.addEventListener("abort", gaveUp);
          const edited = await budget
            .onScreen(() => session.ui.editor(`The answer MCP server '${server}' will get`, text))
            .finally(() => cancelled?.removeEventListener("abort", gaveUp));
          if (edited === undefined) throw refused(`The user withheld the answer to MCP server '${server}'`);
          text = edited;
        } else if (choice !== SEND) throw refused(`The user withheld the answer to MCP server '${server}'`);
      }
      return {
        role: "assistant",
        content: { type: "text", text },
        model: model.id,
        stopReason: reply.stopReason === "length" ? "maxTokens" : "endTurn",
      };
    };
    const refuse = (reason: string): never => {
      throw refused(reason);
    };
    return askUser ? budget.run(server, dialogs, refuse, false) : dialogs();
  };
  return respond;
}
