/**
 * Recall of `tool_search` measured the way the model meets it: real pi in-process with the bridge loaded, every saved
 * server (test/fixtures/public-tools and the work hub) started as a real process behind `"exposure": "deferred"`, and a
 * scripted model that sends each request as a `tool_search` call. A request counts as found within k when one of its
 * answers is among the first k tools the call loaded, in the order it loaded them.
 */
import { readdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { TOOL_SEARCH_NAME } from "../src/exposure/tool-search-text.ts";
import { startFakeOpenAi } from "../test/fixtures/fake-openai.ts";
import { REPO_ROOT, tempDir } from "../test/helpers.ts";
import { startInProcessPi } from "../test/pi-harness.ts";
import { answerToolName, type RelevanceQuery } from "./tool-search-recall.ts";

const SERVER = path.join(REPO_ROOT, "test", "fixtures", "saved-tools-server.ts");

/** A saved tools/list answer to serve, under the server name the relevance sets use. */
export interface SavedServer {
  server: string;
  file: string;
}

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

interface Loaded {
  details?: { loaded?: { server: string; tool: string }[] };
}

/** Runs every request of each set through `tool_search` in one pi session; the ranking is read from what it loaded. */
export async function recallThroughPi(
  servers: readonly SavedServer[],
  sets: Record<string, readonly RelevanceQuery[]>,
): Promise<Record<string, PiRecall>> {
  const project = tempDir("mcp-bridge-recall-");
  const agentDir = tempDir("mcp-bridge-recall-agent-");
  const tsx = import.meta.resolve("tsx");
  const mcpServers = Object.fromEntries(
    servers.map(({ server, file }) => [
      server,
      { command: process.execPath, args: ["--import", tsx, SERVER, file], exposure: "deferred" },
    ]),
  );
  writeFileSync(path.join(agentDir.dir, "mcp.json"), JSON.stringify({ approval: "never", mcpServers }));
  const saved = {
    cwd: process.cwd(),
    agentDir: process.env.PI_CODING_AGENT_DIR,
    budget: process.env.PI_MCP_STARTUP_BUDGET_MS,
  };
  process.env.PI_CODING_AGENT_DIR = agentDir.dir;
  process.env.PI_MCP_STARTUP_BUDGET_MS = "120000";
  process.chdir(project.dir);
  const model = await startFakeOpenAi();
  const pi = await startInProcessPi({
    cwd: project.dir,
    agentDir: agentDir.dir,
    extensionPaths: [REPO_ROOT],
    model: model.model,
  });
  try {
    await pi.session.bindExtensions({
      onError: (error) => {
        throw new Error(`extension error: ${JSON.stringify(error)}`);
      },
    });
    const results: Record<string, PiRecall> = {};
    for (const [name, queries] of Object.entries(sets)) {
      const found = new Map<number, number>([
        [1, 0],
        [3, 0],
        [5, 0],
      ]);
      const misses: PiRecall["misses"] = [];
      for (const { query, answers } of queries) {
        model.script([{ toolCalls: [{ name: TOOL_SEARCH_NAME, args: { query, limit: 5 } }] }, { text: "ok" }]);
        const before = pi.session.messages.length;
        await pi.session.prompt(query);
        const result = pi.session.messages
          .slice(before)
          .find(
            (m) =>
              (m as { role: string; toolName?: string }).role === "toolResult" &&
              (m as { toolName?: string }).toolName === TOOL_SEARCH_NAME,
          ) as Loaded | undefined;
        const got = (result?.details?.loaded ?? []).map(({ server, tool }) => answerToolName(`${server}/${tool}`));
        const wanted = new Set(answers.map(answerToolName));
        const rank = got.findIndex((tool) => wanted.has(tool));
        for (const k of found.keys()) if (rank >= 0 && rank < k) found.set(k, found.get(k)! + 1);
        if (rank < 0 || rank >= 3) misses.push({ query, answers, got: got.slice(0, 3) });
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
    await pi.close();
    await model.close();
    process.chdir(saved.cwd);
    if (saved.agentDir === undefined) delete process.env.PI_CODING_AGENT_DIR;
    else process.env.PI_CODING_AGENT_DIR = saved.agentDir;
    if (saved.budget === undefined) delete process.env.PI_MCP_STARTUP_BUDGET_MS;
    else process.env.PI_MCP_STARTUP_BUDGET_MS = saved.budget;
    project.cleanup();
    agentDir.cleanup();
  }
}
