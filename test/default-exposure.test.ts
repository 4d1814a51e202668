/**
 * What the model is sent when no config sets `exposure`, counted in the real request bodies of the real `pi` command
 * line (a fake OpenAI-compatible model on 127.0.0.1 records them), for the same two servers: the repo's hello server
 * and the MCP reference server `server-everything` (which also offers resources). On pi 1.x the bridge is set against
 * pi's own built-in MCP, run the same way: it must send no more tool definitions than the built-in does (its default,
 * code mode, declares none of the servers' tools), and `tool_search` must still reach an MCP tool and a resource tool.
 * On pi 0.73, which has no MCP of its own, the default stays `auto`: under its threshold every tool is declared.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { TOOL_SEARCH_NAME } from "../src/exposure/tool-search-text.ts";
import { type FakeOpenAi, type RecordedRequest, type ScriptStep, startFakeOpenAi } from "./fixtures/fake-openai.ts";
import { EVERYTHING_SERVER, EXTENSION_DIR, helloServer, tempDir } from "./helpers.ts";
import { PI_LINE } from "./pi-line.ts";
import { PI_CLI } from "./tmux.ts";

const RESOURCE_TOOLS = ["list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"];
const SERVERS = {
  hello: { command: process.execPath, args: [helloServer()] },
  everything: { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] },
};

/** The MCP tools a request declares, by either side's names (`mcp_<server>_…` here, `mcp__<server>__…` built in). */
const mcpTools = (request: RecordedRequest) =>
  request.tools.filter((name) => name.startsWith("mcp_") || RESOURCE_TOOLS.includes(name));

/** The request's system prompt, where the bridge names the servers whose tools wait behind tool_search. */
function systemPrompt(request: RecordedRequest): string {
  const messages = request.body.messages as Array<{ role: string; content: unknown }>;
  return messages
    .filter((m) => m.role === "system" || m.role === "developer")
    .map((m) => JSON.stringify(m.content))
    .join("\n");
}

describe(
  "with no `exposure` set: the tool definitions the model is sent (real pi, a fake OpenAI-compatible model)",
  { timeout: 240_000 },
  () => {
    const scratch = tempDir("mcp-bridge-default-exposure-");
    const models: FakeOpenAi[] = [];
    after(async () => {
      for (const model of models) await model.close();
      scratch.cleanup();
    });

    /**
     * One `pi -p` run in a fresh HOME whose agent dir has these servers in `mcp.json` (read by the built-in and by the
     * bridge alike) and the fake model in `models.json`; the bridge loaded with `-e` unless `builtIn`. Returns the
     * requests the model received.
     */
    async function runPi(name: string, builtIn: boolean, script: ScriptStep[]): Promise<RecordedRequest[]> {
      const model = await startFakeOpenAi();
      models.push(model);
      model.script(script);
      const home = path.join(scratch.dir, name);
      const agentDir = path.join(home, "agent");
      mkdirSync(agentDir, { recursive: true });
      writeFileSync(
        path.join(agentDir, "mcp.json"),
        JSON.stringify({ approval: "never", mcpServers: SERVERS }, null, 2),
      );
      const { id, contextWindow } = model.model;
      const provider = {
        baseUrl: model.model.baseUrl,
        api: "openai-completions",
        apiKey: "test-key",
        models: [{ id, contextWindow }],
      };
      writeFileSync(path.join(agentDir, "models.json"), JSON.stringify({ providers: { [model.provider]: provider } }));
      const args = [
        PI_CLI,
        ...(builtIn ? [] : ["-e", EXTENSION_DIR]),
        "--model",
        `${model.provider}/${id}`,
        "-p",
        "what can you do?",
      ];
      // Every server connected before the first request, so a default that declared their tools would show it.
      const env = {
        ...process.env,
        HOME: home,
        PI_CODING_AGENT_DIR: agentDir,
        PI_OFFLINE: "1",
        PI_MCP_STARTUP_BUDGET_MS: "60000",
      };
      const output = await new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, args, { cwd: home, env, stdio: ["ignore", "pipe", "pipe"] });
        let text = "";
        child.stdout.on("data", (d) => (text += d));
        child.stderr.on("data", (d) => (text += d));
        const timer = setTimeout(() => {
          child.kill("SIGKILL");
          reject(new Error(`pi did not finish within 120 s:\n${text}`));
        }, 120_000);
        child.on("exit", (code) => {
          clearTimeout(timer);
          if (code === 0) resolve(text);
          else reject(new Error(`pi exited with ${code}:\n${text}`));
        });
      });
      assert.ok(model.requests.length > 0, `the model got a request:\n${output}`);
      return model.requests;
    }

    test(
      "pi 1.x: no more tool definitions than its built-in MCP sends; tool_search loads an MCP tool and a resource tool",
      { skip: PI_LINE !== "1.x" && "pi 0.73 has no MCP of its own to compare with" },
      async () => {
        const [builtIn] = await runPi("built-in", true, [{ text: "done" }]);
        // The premise: the built-in declares none of the servers' tools by default (code mode), only `codemode`.
        assert.deepEqual(
          builtIn!.tools.filter((name) => name.startsWith("mcp__") || RESOURCE_TOOLS.includes(name)),
          [],
          "the built-in declares no MCP tool",
        );
        assert.ok(builtIn!.tools.includes("codemode"), `the built-in declares codemode: ${builtIn!.tools.join(", ")}`);

        const bridge = await runPi("bridge", false, [
          { toolCalls: [{ name: TOOL_SEARCH_NAME, args: { query: "read a resource by its URI", limit: 1 } }] },
          { toolCalls: [{ name: TOOL_SEARCH_NAME, args: { query: "greet someone by name", limit: 1 } }] },
          { text: "done" },
        ]);
        const [first, second, third] = bridge;
        assert.ok(first && second && third, "three requests");
        assert.ok(
          first.tools.length <= builtIn!.tools.length,
          `the bridge sends ${first.tools.length} tool definitions (${first.tools.join(", ")}), the built-in ${builtIn!.tools.length} (${builtIn!.tools.join(", ")})`,
        );
        assert.deepEqual(mcpTools(first), [], "no MCP or resource tool is declared until tool_search loads it");
        assert.ok(first.tools.includes(TOOL_SEARCH_NAME));
        // Both servers connected and wait behind tool_search: the system prompt's catalog lists their tools.
        assert.match(systemPrompt(first), /\\n- hello: greet, word_count(\\n|")/);
        assert.match(systemPrompt(first), /\\n- everything: [\w, -]*\becho\b/);
        assert.deepEqual(mcpTools(second), ["read_mcp_resource"], "the resource tool found is declared next");
        assert.deepEqual(
          mcpTools(third).sort(),
          ["mcp_hello_greet", "read_mcp_resource"],
          "and the MCP tool found after it",
        );
      },
    );

    test(
      "pi 0.73: the default is auto, and under its threshold every MCP tool is declared",
      { skip: PI_LINE !== "0.73" && "pi 1.x: see the test above" },
      async () => {
        const [first] = await runPi("bridge", false, [{ text: "done" }]);
        assert.equal(mcpTools(first!).filter((name) => name.startsWith("mcp_hello_")).length, 2);
        assert.ok(
          mcpTools(first!).filter((name) => name.startsWith("mcp_everything_")).length >= 13,
          mcpTools(first!).join(", "),
        );
        for (const name of RESOURCE_TOOLS) assert.ok(first!.tools.includes(name), `${name} is declared`);
        assert.ok(!first!.tools.includes(TOOL_SEARCH_NAME), "nothing is deferred");
      },
    );
  },
);
