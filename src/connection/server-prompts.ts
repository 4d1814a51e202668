/**
 * A server's prompts through its connection: list them (every page), get one with its arguments filled in, and ask
 * the server to complete an argument's value (`completion/complete`) where it offers completions. Each goes through
 * the connection's one request seam, so it waits for a start or reconnect, is retried once after a lost connection,
 * is bounded by the request timeout and comes back redacted, as a tool call does.
 */
import type { GetPromptResult, Prompt } from "@modelcontextprotocol/client";
import { readPages } from "../common/paged-list.ts";
import type { ServerConnection } from "./server-connection.ts";

/** A server that pages its prompt list without end is cut off here. */
const MAX_PROMPT_PAGES = 50;

/** True when the server's newest session said it offers prompts. */
export function offersPrompts(connection: ServerConnection): boolean {
  return connection.capabilities?.prompts !== undefined;
}

/** True when the server can complete argument values (`completion/complete`). */
export function offersCompletions(connection: ServerConnection): boolean {
  return connection.capabilities?.completions !== undefined;
}

/** Every prompt the server lists, page after page (at most {@link MAX_PROMPT_PAGES}). */
export async function listPrompts(connection: ServerConnection, signal?: AbortSignal): Promise<Prompt[]> {
  const listed = await readPages({ maxPages: MAX_PROMPT_PAGES }, async (cursor) => {
    const params = cursor ? { cursor } : undefined;
    // Page by page: the SDK's `listPrompts` reads a list whole from its first, and refuses one past 64 pages.
    const page = await connection.withSession(
      "prompts/list",
      (c, options) => c.request({ method: "prompts/list", params }, options),
      { signal },
    );
    return { items: page.prompts, nextCursor: page.nextCursor };
  });
  // A prompt listed twice (a server's pages that overlap) is one prompt: each list read would give it another command.
  return [...new Map(listed.items.map((prompt) => [prompt.name, prompt])).values()];
}

export function getPrompt(
  connection: ServerConnection,
  name: string,
  args: Record<string, string>,
  signal?: AbortSignal,
): Promise<GetPromptResult> {
  return connection.withSession(
    `prompts/get ${name}`,
    (client, options) => client.getPrompt({ name, arguments: args }, options),
    { signal },
  );
}

/**
 * The values the server suggests for `argument` of prompt `prompt`, starting with `value`; `context` holds the
 * arguments already given (a later argument's values may depend on an earlier one's).
 */
export async function completePromptArgument(
  connection: ServerConnection,
  prompt: string,
  argument: { name: string; value: string },
  context: Record<string, string>,
  signal?: AbortSignal,
): Promise<string[]> {
  const params = {
    ref: { type: "ref/prompt" as const, name: prompt },
    argument,
    ...(Object.keys(context).length ? { context: { arguments: context } } : {}),
  };
  const result = await connection.withSession(
    `completion/complete ${prompt}`,
    (client, options) => client.complete(params, options),
    { signal },
  );
  return result.completion.values;
}
