/**
 * The characters the bridge counts for a tool against the request bodies pi-ai's own client builds for every API it
 * speaks (captured by `onPayload`, before anything is sent), with the tools of two real public servers (their saved
 * `tools/list` answers) as the bridge hands them to pi. Runs on both pi lines: their pi-ai builds some bodies
 * differently (`strict`, Anthropic's schema fields). test/request-cost.test.ts checks the same through real pi and
 * HTTP for three of these APIs.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type Api, type Model, streamSimple } from "@mariozechner/pi-ai";
import { definitionChars, modelFacingTool } from "../src/exposure/definition-cost.ts";
import { requestToolWire } from "../src/pi/pi-line.ts";
import { publicServers } from "./fixtures/public-tools.ts";
import { PI_LINE } from "./pi-line.ts";

const TOOLS = publicServers()
  .filter(({ server }) => server === "notion" || server === "slack")
  .flatMap(({ server, tools }) => tools.map((tool) => modelFacingTool(server, tool)));

function modelFor(api: string): Model<Api> {
  return {
    id: "m",
    name: "m",
    api,
    provider: "p",
    baseUrl: "http://127.0.0.1:9",
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 1000,
    maxTokens: 100,
  } as Model<Api>;
}

/** A made-up key of the shape Codex's client reads its account from (a JWT with the claim; it signs nothing). */
const CODEX_KEY = ["{}", JSON.stringify({ "https://api.openai.com/auth": { chatgpt_account_id: "test" } }), "x"]
  .map((part) => Buffer.from(part).toString("base64url"))
  .join(".");

/** The request body pi-ai's client for the model's API builds with the tools. */
async function providerBody(model: Model<Api>): Promise<unknown> {
  const context = {
    systemPrompt: "s",
    messages: [{ role: "user" as const, content: "hi", timestamp: 0 }],
    tools: TOOLS,
  };
  let captured: unknown;
  const options = {
    apiKey: model.api === "openai-codex-responses" ? CODEX_KEY : "x",
    onPayload: (payload: unknown) => {
      captured = payload;
      throw new Error("captured; nothing is sent");
    },
  };
  for await (const _event of streamSimple(model, context as never, options as never)) {
    // The stream ends with the error thrown above.
  }
  return captured;
}

/**
 * The characters of the body's entries for MCP tools, in whatever array the API keeps its tools. Anthropic's cache
 * breakpoint on the last tool is the request's, not that tool's: it is left out.
 */
function mcpEntryChars(value: unknown): number {
  if (Array.isArray(value))
    return value.reduce((n: number, element: unknown) => {
      const entry = element as { name?: unknown; function?: { name?: unknown }; toolSpec?: { name?: unknown } };
      const name = entry?.name ?? entry?.function?.name ?? entry?.toolSpec?.name;
      if (typeof name !== "string" || !name.startsWith("mcp_")) return n + mcpEntryChars(element);
      return n + JSON.stringify({ ...(element as object), cache_control: undefined }).length;
    }, 0);
  if (typeof value === "object" && value !== null)
    return Object.values(value).reduce((n: number, child) => n + mcpEntryChars(child), 0);
  return 0;
}

describe(`each tool's count is its entry in the body pi-ai builds (pi ${PI_LINE})`, () => {
  for (const api of [
    "openai-completions",
    "openai-responses",
    "azure-openai-responses",
    "anthropic-messages",
    "google-generative-ai",
    "google-vertex",
    "bedrock-converse-stream",
    "mistral-conversations",
    "openai-codex-responses",
  ]) {
    test(api, async () => {
      const model = modelFor(api);
      const body = await providerBody(model);
      const sent = mcpEntryChars(body);
      assert.ok(sent > 10_000, `pi-ai built a body with the tools: ${JSON.stringify(body)?.slice(0, 200)}`);
      const wire = requestToolWire(model);
      const counted = TOOLS.reduce((n, tool) => n + definitionChars(tool, wire), 0);
      assert.equal(counted, sent);
    });
  }
});
