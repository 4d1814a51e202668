/**
 * Roots and server instructions inside real pi 0.73.1, in-process, with the faux model: the MCP project's reference
 * server (`@modelcontextprotocol/server-everything`) answers `get-roots-list` with the project root, and what each
 * server is for (its config's `description`, its own `instructions`) reaches the model in the system prompt, one
 * bounded line per server, and not in the tool descriptions.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, test } from "node:test";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { MAX_SERVER_GUIDE_LINE, SERVER_GUIDE_HEADING } from "../src/translate/server-guide-text.ts";
import { type InProcessPi, requestSystemPrompt, requestTools, startInProcessPi } from "./pi-harness.ts";
import { EVERYTHING_SERVER, EXTENSION_DIR, fixtureEntry, tempDir, trustProjectServers } from "./helpers.ts";

interface ToolResultMessage {
  role: "toolResult";
  toolName: string;
  isError: boolean;
  content: Array<{ type: string; text?: string }>;
}

const GUIDE_INSTRUCTIONS = "Echo is for checking the connection.\nNothing here writes files.";
const SECRET = "fixture-secret-7b1e9c";

function withInstructions(text: string): { command: string; args: string[] } {
  const { command, args } = fixtureEntry();
  return { command, args: [...args, "--instructions", text] };
}

describe("roots and server instructions in pi (in-process, faux model)", { timeout: 120_000 }, () => {
  const project = tempDir("mcp-bridge-guide-");
  const agentDir = tempDir("mcp-bridge-agent-");
  const originalCwd = process.cwd();
  let pi: InProcessPi;
  /** What the model was given on each turn: the system prompt, and each tool's name and description. */
  const seen: Array<{ systemPrompt?: string; tools: Array<{ name: string; description: string }> }> = [];

  before(async () => {
    mkdirSync(path.join(project.dir, ".pi"));
    writeFileSync(
      path.join(project.dir, ".pi", "mcp.json"),
      JSON.stringify({
        mcpServers: {
          everything: { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"], timeout: 60_000 },
          guide: { ...withInstructions(GUIDE_INSTRUCTIONS), description: "The test fixture: echo, add and friends" },
          quiet: fixtureEntry(),
          // A server whose instructions quote a secret of its config: the model gets them redacted.
          leaky: { ...withInstructions(`Sign with ${SECRET} always.`), env: { FIXTURE_SECRET: SECRET } },
        },
      }),
    );
    // No UI to approve calls in: the user has turned approval off. The tools are declared (the guide is for those).
    writeFileSync(
      path.join(agentDir.dir, "mcp.json"),
      JSON.stringify({ approval: "never", exposure: "direct", mcpServers: {} }),
    );
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    await trustProjectServers(project.dir, agentDir.dir);
    pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
    await pi.session.bindExtensions({});
  });

  after(async () => {
    await pi?.close();
    process.chdir(originalCwd);
    project.cleanup();
    agentDir.cleanup();
  });

  const record = (reply: () => ReturnType<typeof fauxAssistantMessage>) => (context: Context) => {
    seen.push({
      systemPrompt: requestSystemPrompt(context),
      tools: requestTools(context).map(({ name, description }) => ({ name, description })),
    });
    return reply();
  };

  test("the model calls get-roots-list and gets the project root", async () => {
    pi.faux.setResponses([
      record(() =>
        fauxAssistantMessage([fauxToolCall("mcp_everything_get-roots-list", {})], { stopReason: "toolUse" }),
      ),
      record(() => fauxAssistantMessage("done")),
    ]);
    await pi.session.prompt("which roots?");
    const results = pi.session.messages.filter(
      (m) => (m as { role: string }).role === "toolResult",
    ) as unknown as ToolResultMessage[];
    assert.equal(results.length, 1);
    const [result] = results;
    assert.equal(result!.isError, false, JSON.stringify(result));
    const text = result!.content.map((c) => c.text ?? "").join("");
    assert.match(text, /Current MCP Roots \(1 total\)/);
    assert.ok(text.includes(`URI: ${pathToFileURL(project.dir).href}\n`), text);
  });

  test("each server with something to say has one bounded line in the system prompt", () => {
    assert.ok(seen.length >= 1);
    const prompt = seen[0]!.systemPrompt ?? "";
    const lines = prompt.split("\n");
    const heading = lines.indexOf(SERVER_GUIDE_HEADING);
    assert.ok(heading >= 0, prompt.slice(-2000));
    const guide = lines.slice(heading + 1).filter((l) => l.startsWith("- "));
    assert.equal(guide.length, 3, guide.join("\n"));
    assert.equal(guide[0]!.startsWith("- everything (tools mcp_everything_*): # Everything Server"), true, guide[0]);
    assert.equal(guide[0]!.length, MAX_SERVER_GUIDE_LINE, "server-everything's long instructions are cut");
    assert.equal(
      guide[1],
      "- guide (tools mcp_guide_*): The test fixture: echo, add and friends — Echo is for checking the connection. Nothing here writes files.",
    );
    assert.ok(!prompt.includes("- quiet"), "a server with nothing to say gets no line");
    assert.equal(guide[2], "- leaky (tools mcp_leaky_*): Sign with *** always.");
    assert.ok(!prompt.includes(SECRET));
    // Every turn gets it, not only the first.
    assert.equal(seen.at(-1)!.systemPrompt, prompt);
  });

  test("the tool descriptions do not carry the instructions", () => {
    const { tools } = seen[0]!;
    assert.ok(tools.some((t) => t.name === "mcp_guide_echo"));
    assert.ok(tools.some((t) => t.name === "mcp_everything_get-roots-list"));
    for (const tool of tools) {
      assert.ok(!tool.description.includes("Echo is for checking"), tool.name);
      assert.ok(!tool.description.includes("The test fixture"), tool.name);
      assert.ok(!tool.description.includes("Everything Server – Server Instructions"), tool.name);
    }
  });
});
