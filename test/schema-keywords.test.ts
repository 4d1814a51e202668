/**
 * Schema keywords the model's copy of a tool's parameters cannot carry (`not`, `if`/`then`, `dependentSchemas`): each
 * such tool is one line in mcp.log, the server gets one line in `/mcp` and in the first startup notice (nothing is to be
 * done about it, so the next starts do not repeat it), and a call that
 * breaks such a rule is refused by the server's own schema before it is sent; a parameter both required and given a
 * default may be left out, and the server gets the default. Real pi in-process with the faux model, a real MCP server
 * on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { startStreamableHttp } from "./fixtures/http-servers.ts";
import { EXTENSION_DIR, readLog, tempDir, waitFor } from "./helpers.ts";
import { startInProcessPi } from "./pi-harness.ts";
import { RecordingUI } from "./recording-ui.ts";

const RULE_TOOLS: Tool[] = [
  {
    name: "pick",
    inputSchema: {
      type: "object" as const,
      properties: { mode: { type: "string" } },
      not: { properties: { mode: { const: "forbidden" } }, required: ["mode"] },
    },
  },
  {
    name: "ship",
    inputSchema: {
      type: "object" as const,
      properties: { express: { type: "boolean" }, date: { type: "string" } },
      if: { properties: { express: { const: true } }, required: ["express"] },
      then: { required: ["date"] },
    },
  },
  {
    name: "pay",
    inputSchema: {
      type: "object" as const,
      properties: { card: { type: "string" }, cvv: { type: "string" } },
      dependentSchemas: { card: { required: ["cvv"] } },
    },
  },
];

const SUMMARY =
  "3 tools use schema keywords the model cannot see (not, if, then, dependentSchemas); the server's own schema still checks the arguments";

/**
 * Real pi in-process with the faux model and one server, `name`, on 127.0.0.1 offering `tools` (all approved, declared
 * directly); `run` gets pi, its UI and the server, and everything is taken down after it.
 */
async function withServerInPi(
  name: string,
  tools: Tool[],
  run: (
    pi: Awaited<ReturnType<typeof startInProcessPi>>,
    ui: RecordingUI,
    server: Awaited<ReturnType<typeof startStreamableHttp>>,
    agentDir: string,
  ) => Promise<void>,
): Promise<void> {
  const server = await startStreamableHttp({ extraTools: tools });
  const project = tempDir(`mcp-bridge-${name}-project-`);
  const agentDir = tempDir(`mcp-bridge-${name}-agent-`);
  writeFileSync(
    path.join(agentDir.dir, "mcp.json"),
    JSON.stringify({ exposure: "direct", mcpServers: { [name]: { url: server.url, autoApprove: ["*"] } } }),
  );
  const saved = { cwd: process.cwd(), env: { ...process.env } };
  process.env.PI_CODING_AGENT_DIR = agentDir.dir;
  process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
  process.chdir(project.dir);
  const ui = new RecordingUI();
  const pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
  try {
    await pi.session.bindExtensions({ uiContext: ui.context() });
    await run(pi, ui, server, agentDir.dir);
  } finally {
    await pi.close();
    process.chdir(saved.cwd);
    for (const key of Object.keys(process.env)) if (!(key in saved.env)) delete process.env[key];
    Object.assign(process.env, saved.env);
    await server.close();
    project.cleanup();
    agentDir.cleanup();
  }
}

/** The tool results of the session so far. */
function toolResults(pi: Awaited<ReturnType<typeof startInProcessPi>>) {
  return pi.session.messages.filter((m) => (m as { role: string }).role === "toolResult") as unknown as {
    content: { text?: string }[];
    isError: boolean;
  }[];
}

describe("schema keywords the model cannot see", { timeout: 120_000 }, () => {
  test("one log line per tool, one notice line for the server, and the server's schema still refuses", async () => {
    await withServerInPi("rules", RULE_TOOLS, async (pi, ui, server, agentDir) => {
      const startup = ui.notices.join("\n");
      assert.equal(startup.split(SUMMARY).length - 1, 1, startup);
      assert.match(startup, /! rules: 3 tools use schema keywords/);

      const log = path.join(agentDir, "mcp-bridge", "mcp.log");
      const lines = () => readLog(log).filter((e) => e.event === "tool.schema.uncarried");
      await waitFor(() => lines().length >= 3, "a line per tool in mcp.log");
      assert.deepEqual(
        lines().map((e) => [e.server, e.tool, e.message]),
        [
          [
            "rules",
            "pick",
            "tool 'pick' uses schema keywords the model cannot see (not); the server's own schema still checks the arguments",
          ],
          [
            "rules",
            "ship",
            "tool 'ship' uses schema keywords the model cannot see (if, then); the server's own schema still checks the arguments",
          ],
          [
            "rules",
            "pay",
            "tool 'pay' uses schema keywords the model cannot see (dependentSchemas); the server's own schema still checks the arguments",
          ],
        ],
      );

      // The model's copy has no `not`: pi lets the call through, and the server's own schema refuses it.
      pi.faux.setResponses([
        fauxAssistantMessage(
          [fauxToolCall("mcp_rules_pick", { mode: "forbidden" }), fauxToolCall("mcp_rules_pick", { mode: "fine" })],
          { stopReason: "toolUse" },
        ),
        fauxAssistantMessage("done"),
      ]);
      await pi.session.prompt("pick");
      const results = toolResults(pi);
      assert.equal(results.length, 2);
      assert.equal(results[0]!.isError, true);
      assert.match(
        results[0]!.content[0]?.text ?? "",
        /The arguments do not match the input schema of tool 'pick' \(MCP server 'rules'\): .*must NOT be valid/,
      );
      assert.equal(results[1]!.isError, false, JSON.stringify(results[1]));
      assert.deepEqual(server.calls, [{ name: "pick", args: { mode: "fine" } }], "only the valid call was sent");

      await pi.session.prompt("/mcp list");
      const listing = ui.notices.at(-1) ?? "";
      assert.equal(listing.split(SUMMARY).length - 1, 1, listing);
      // Still one line per tool: nothing registered the tools again.
      assert.equal(lines().length, 3);

      // The next start: nothing to do about it, so the startup notice does not say it again; /mcp still does.
      const next = await startInProcessPi({ cwd: process.cwd(), agentDir, extensionPaths: [EXTENSION_DIR] });
      try {
        const nextUi = new RecordingUI();
        await next.session.bindExtensions({ uiContext: nextUi.context() });
        assert.doesNotMatch(nextUi.notices.join("\n"), /schema keywords/);
        await next.session.prompt("/mcp list");
        assert.equal((nextUi.notices.at(-1) ?? "").split(SUMMARY).length - 1, 1);
      } finally {
        await next.close();
      }
    });
  });
});

describe("a parameter both required and given a default", { timeout: 120_000 }, () => {
  // @kimtaeyoon83/mcp-server-youtube-transcript requires `lang` and gives it the default "en": a model leaves it out.
  test("the model may leave it out: pi lets the call through, and the server gets the default", async () => {
    const transcript: Tool = {
      name: "transcript",
      inputSchema: {
        type: "object" as const,
        properties: { url: { type: "string" }, lang: { type: "string", default: "en" } },
        required: ["url", "lang"],
      },
    };
    await withServerInPi("yt", [transcript], async (pi, _ui, server) => {
      pi.faux.setResponses([
        fauxAssistantMessage(
          [
            fauxToolCall("mcp_yt_transcript", { url: "https://youtu.be/a" }),
            fauxToolCall("mcp_yt_transcript", { url: "https://youtu.be/b", lang: "de" }),
          ],
          { stopReason: "toolUse" },
        ),
        fauxAssistantMessage("done"),
      ]);
      await pi.session.prompt("transcripts");
      const results = toolResults(pi);
      assert.deepEqual(
        results.map((r) => r.isError),
        [false, false],
        JSON.stringify(results),
      );
      assert.deepEqual(server.calls, [
        { name: "transcript", args: { url: "https://youtu.be/a", lang: "en" } },
        { name: "transcript", args: { url: "https://youtu.be/b", lang: "de" } },
      ]);
    });
  });
});
