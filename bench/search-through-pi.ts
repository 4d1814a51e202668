/**
 * Recall of `tool_search` measured the way the model meets it: real pi in-process with the bridge loaded, every saved
 * server (test/fixtures/public-tools and the work hub) started as a real process behind `"exposure": "deferred"`, and a
 * scripted model that sends each request as a `tool_search` call. A request counts as found within k when one of its
 * answers is among the first k tools the call loaded, in the order it loaded them.
 *
 * The model sends PER_TURN requests in one turn, as that many `tool_search` calls side by side. Every turn starts from
 * the same empty context: after it, the session goes back (pi's `/tree`) to the point before its prompt, so the tools
 * it loaded are unloaded again. In one growing conversation every request carried all the history and every tool
 * loaded so far, and the run slowed from about 65 ms a request to over 200 ms. The ranking never reads which tools are
 * loaded, so the calls of one turn do not change each other's results (one request a turn gives the same figures).
 */
import { readdirSync } from "node:fs";
import * as path from "node:path";
import { TOOL_SEARCH_NAME } from "../src/exposure/tool-search-text.ts";
import { startFakeOpenAi } from "../test/fixtures/fake-openai.ts";
import { type BridgeInPi, startBridgeInPi } from "../test/bridge-in-pi.ts";
import { REPO_ROOT } from "../test/helpers.ts";
import { answerToolName, type RelevanceQuery } from "./tool-search-recall.ts";
import { bundledFixture } from "../test/fixture-bundle.ts";

const SERVER = bundledFixture(path.join(REPO_ROOT, "test", "fixtures", "saved-tools-server.mjs"));

/** A saved tools/list answer to serve, under the server name the relevance sets use. */
export interface SavedServer {
  server: string;
  file: string;
}

/**
 * Requests a turn. A turn's own cost (two model requests, pi's bookkeeping, going back) was most of a request's: the
 * 718 requests of both runs took 26 s of this process's CPU one to a turn, 11 s at 25 and 8 s at 100.
 */
const PER_TURN = 100;

const PUBLIC_TOOLS = path.join(REPO_ROOT, "test", "fixtures", "public-tools");

/** The 16 public servers of test/fixtures/public-tools. */
export function publicSavedServers(): SavedServer[] {
  return readdirSync(PUBLIC_TOOLS)
    .filter((file) => file.endsWith(".json"))
    .sort()
    .map((file) => ({ server: file.slice(0, -".json".length), file: path.join(PUBLIC_TOOLS, file) }));
}

/** The work hub: 246 tools of GitHub, Jira, Slack and a cloud API, in those APIs' own words. */
export const WORK_HUB: SavedServer = {
  server: "hub",
  file: path.join(REPO_ROOT, "test", "fixtures", "work-hub", "tools.json"),
};

export interface PiRecall {
  total: number;
  /** k → share of the requests with an answer among the first k loaded. */
  recall: Record<number, number>;
  /** The requests not answered within 3, with what was loaded instead. */
  misses: { query: string; answers: string[]; got: string[] }[];
}

interface SearchResult {
  role: string;
  toolName?: string;
  details?: { query?: string; loaded?: { server: string; tool: string }[] };
}

/** What each `tool_search` call of the turn loaded, by its request. */
function loadedByQuery(messages: readonly object[]): Map<string, { server: string; tool: string }[]> {
  const loaded = new Map<string, { server: string; tool: string }[]>();
  for (const message of messages as SearchResult[])
    if (message.role === "toolResult" && message.toolName === TOOL_SEARCH_NAME && message.details?.query !== undefined)
      loaded.set(message.details.query, message.details.loaded ?? []);
  return loaded;
}

/**
 * Takes the session back to before the request just sent, as `/tree` on its prompt does: the leaf goes to the prompt's
 * parent (the empty root here), and the bridge unloads what that branch did not load.
 */
async function backToStart(pi: BridgeInPi["pi"]): Promise<void> {
  const prompt = pi.session.sessionManager
    .getBranch()
    .find((entry) => entry.type === "message" && entry.message.role === "user");
  if (!prompt) throw new Error("the request left no prompt in the session");
  await pi.session.navigateTree(prompt.id);
  // pi 1.x keeps its system prompt among the session's messages.
  if (pi.session.messages.some((m) => (m as { role: string }).role !== "system"))
    throw new Error("the session did not go back to an empty context");
}

/**
 * Runs every request of each set through `tool_search` in one pi session, each from an empty context; the ranking is
 * read from what it loaded.
 */
export async function recallThroughPi(
  servers: readonly SavedServer[],
  sets: Record<string, readonly RelevanceQuery[]>,
): Promise<Record<string, PiRecall>> {
  const mcpServers = Object.fromEntries(
    servers.map(({ server, file }) => [
      server,
      { command: process.execPath, args: [SERVER, file], exposure: "deferred" },
    ]),
  );
  const model = await startFakeOpenAi();
  let bed: BridgeInPi | undefined;
  try {
    bed = await startBridgeInPi({
      mcpConfig: { approval: "never", mcpServers },
      model: model.model,
      startupBudgetMs: 120_000,
    });
    const { pi } = bed;
    const results: Record<string, PiRecall> = {};
    for (const [name, queries] of Object.entries(sets)) {
      const found = new Map<number, number>([
        [1, 0],
        [3, 0],
        [5, 0],
      ]);
      const misses: PiRecall["misses"] = [];
      for (let start = 0; start < queries.length; start += PER_TURN) {
        const turn = queries.slice(start, start + PER_TURN);
        model.script([
          { toolCalls: turn.map(({ query }) => ({ name: TOOL_SEARCH_NAME, args: { query, limit: 5 } })) },
          { text: "ok" },
        ]);
        await pi.session.prompt(`requests ${start + 1} to ${start + turn.length}`);
        const loaded = loadedByQuery(pi.session.messages);
        await backToStart(pi);
        for (const { query, answers } of turn) {
          const got = (loaded.get(query) ?? []).map(({ server, tool }) => answerToolName(`${server}/${tool}`));
          const wanted = new Set(answers.map(answerToolName));
          const rank = got.findIndex((tool) => wanted.has(tool));
          for (const k of found.keys()) if (rank >= 0 && rank < k) found.set(k, found.get(k)! + 1);
          if (rank < 0 || rank >= 3) misses.push({ query, answers, got: got.slice(0, 3) });
        }
      }
      const total = queries.length;
      results[name] = {
        total,
        recall: Object.fromEntries([...found].map(([k, n]) => [k, total ? n / total : 0])),
        misses,
      };
    }
    return results;
  } finally {
    await bed?.close();
    await model.close();
  }
}
