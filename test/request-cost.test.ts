/**
 * What `/mcp`, `/mcp test` and the `auto` decision say the MCP tools cost per request, against the request body pi-ai
 * really sends: real pi in-process, four servers offering the tools real public servers list (their saved
 * `tools/list` answers), and a fake provider on 127.0.0.1 that records each body — OpenAI Chat Completions, Anthropic
 * Messages (another wrapper, and a schema cut down to what Anthropic takes) and OpenAI Responses (`strict` sent by pi
 * 0.73 only). The tokens shown are a quarter
 * of the characters, so the check is on characters: within 2% of the tool entries in the body.
 */
import assert from "node:assert/strict";
import * as path from "node:path";
import { afterEach, describe, test } from "node:test";
import type { Api, Model } from "@mariozechner/pi-ai";
import { startFakeTextModel, type TextModelApi } from "./fixtures/fake-text-model.ts";
import { startFakeOpenAi } from "./fixtures/fake-openai.ts";
import { startBridgeInPi } from "./bridge-in-pi.ts";
import { PI_LINE } from "./pi-line.ts";
import { RecordingUI } from "./recording-ui.ts";
import { REPO_ROOT } from "./helpers.ts";
import { bundledFixture } from "./fixture-bundle.ts";

const SAVED_TOOLS = bundledFixture(path.join(REPO_ROOT, "test", "fixtures", "saved-tools-server.mjs"));
const PUBLIC_TOOLS = path.join(REPO_ROOT, "test", "fixtures", "public-tools");
/** Config name → saved list: GitHub's plain schemas, Notion's `$defs`, Slack's and Puppeteer's small tools. */
const SERVERS = { github: "github", notion: "notion", slack: "slack", puppeteer: "puppeteer" };

interface Provider {
  model: Model<Api>;
  /** The bodies of the requests so far. */
  bodies(): Array<Record<string, unknown>>;
  close(): Promise<void>;
}

async function openAi(): Promise<Provider> {
  const fake = await startFakeOpenAi();
  return { model: fake.model, bodies: () => fake.requests.map((r) => r.body), close: () => fake.close() };
}

function textModel(api: TextModelApi): () => Promise<Provider> {
  return async () => {
    const fake = await startFakeTextModel(api);
    return { model: fake.model, bodies: () => fake.bodies, close: () => fake.close() };
  };
}

/** A tool entry's name, in either wrapper. */
const entryName = (entry: Record<string, unknown>) =>
  String((entry.function as { name?: string } | undefined)?.name ?? entry.name);

/** The characters of the body's entries for the tools of the server `mcp_<server>_…` (all MCP tools without one). */
function bodyChars(body: Record<string, unknown>, server?: string): number {
  const entries = (body.tools ?? []) as Array<Record<string, unknown>>;
  const prefix = server ? `mcp_${server}_` : "mcp_";
  return entries
    .filter((entry) => entryName(entry).startsWith(prefix))
    .reduce((n, entry) => n + JSON.stringify(entry).length, 0);
}

const number = (text: string) => Number(text.replace(/,/g, ""));

function assertWithin2Percent(shown: number, sent: number, what: string): void {
  assert.ok(sent > 1_000, `the body declares the server's tools (${sent} characters)`);
  const off = Math.abs(shown - sent) / sent;
  assert.ok(off <= 0.02, `${what}: ${shown} shown, ${sent} in the request body (${(off * 100).toFixed(1)}% off)`);
}

describe(`what /mcp says MCP tools cost is what the provider receives (pi ${PI_LINE})`, { timeout: 180_000 }, () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  for (const [api, startProvider] of [
    ["openai-completions", openAi],
    ["anthropic-messages", textModel("anthropic-messages")],
    ["openai-responses", textModel("openai-responses")],
  ] as const) {
    test(`${api}: /mcp list, /mcp test and the auto decision count the tool entries of the request body`, async () => {
      const mcpServers = Object.fromEntries(
        Object.entries(SERVERS).map(([server, saved]) => [
          server,
          { command: process.execPath, args: [SAVED_TOOLS, path.join(PUBLIC_TOOLS, `${saved}.json`)] },
        ]),
      );
      const provider = await startProvider();
      cleanups.push(() => provider.close());
      const ui = new RecordingUI();
      // `auto` against half the window keeps every tool direct, and says what it counted.
      const bed = await startBridgeInPi({
        mcpConfig: { approval: "never", exposure: "auto", exposureThreshold: "50%", mcpServers },
        model: provider.model,
        uiContext: ui.context(),
      });
      cleanups.push(() => bed.close());
      const { pi } = bed;
      const run = async (command: string) => {
        const before = ui.notices.length;
        await pi.session.prompt(command);
        return ui.notices.slice(before).join("\n");
      };

      await pi.session.prompt("hello");
      const body = provider.bodies()[0];
      assert.ok(body, "the provider got a request");
      const sent = bodyChars(body);

      const list = await run("/mcp list");
      const auto = /MCP tool definitions of about ([\d,]+) tokens are within the limit/.exec(list);
      assert.ok(auto, list);
      assertWithin2Percent(number(auto[1]!) * 4, sent, "the auto decision");
      let listed = 0;
      for (const server of Object.keys(SERVERS)) {
        const row = new RegExp(`^\\s*${server} .* about ([\\d,]+) tokens per request`, "m").exec(list);
        assert.ok(row, `a row for ${server}: ${list}`);
        listed += number(row[1]!);
      }
      assertWithin2Percent(listed * 4, sent, "/mcp list");

      for (const server of Object.keys(SERVERS)) {
        const tested = await run(`/mcp test ${server}`);
        const total = /declared directly they would add ([\d,]+) characters to each request/.exec(tested);
        assert.ok(total, tested);
        assertWithin2Percent(number(total[1]!), bodyChars(body, server), `/mcp test ${server}`);
      }
    });
  }
});
