/**
 * `npm run demo:agent`: real pi with the bridge, the demo config and the scripted model of examples/scripted-model.ts,
 * its JSON events printed by examples/transcript.mjs. The script's own command line runs (with this test's pi line in
 * place of `pi`), and its output must show the MCP tool call and the server's own result. The script's choices
 * (tool, arguments, the search for a deferred tool) are checked without pi too.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import type { Tool } from "@mariozechner/pi-ai";
import { demoStep, pickToolCall, type ScriptedRequest } from "../examples/scripted-model.ts";
import { REPO_ROOT, tempDir } from "./helpers.ts";
import { PI_LINE } from "./pi-line.ts";
import { PI_CLI } from "./tmux.ts";

const SCRIPT = (
  JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }
).scripts["demo:agent"]!;
const DEMO_PROMPT = '-p "greet Ada"';

/** The npm script's command, run by the shell as npm runs it, on this test's pi line; its exit code, stdout and stderr. */
function runDemo(home: string, prompt = DEMO_PROMPT): Promise<{ code: number | null; output: string }> {
  assert.ok(
    SCRIPT.startsWith("pi ") && SCRIPT.includes(DEMO_PROMPT),
    `demo:agent is not the command this test expects: ${SCRIPT}`,
  );
  const command = `"${process.execPath}" "${PI_CLI}" ${SCRIPT.slice("pi ".length).replace(DEMO_PROMPT, prompt)}`;
  const env = {
    ...process.env,
    HOME: home,
    PI_CODING_AGENT_DIR: path.join(home, "agent"),
    PI_MCP_STARTUP_BUDGET_MS: "60000",
  };
  // Its own process group, so a timeout stops both sides of the pipe. No stdin: pi -p would wait for an open one to end.
  const child = spawn(command, { shell: true, cwd: REPO_ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.kill(-child.pid!, "SIGKILL");
      reject(new Error(`the demo did not finish within 90 s:\n${output}`));
    }, 90_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe(`npm run demo:agent (pi ${PI_LINE})`, { timeout: 240_000 }, () => {
  const home = tempDir("mcp-bridge-demo-agent-");
  after(() => home.cleanup());

  test("shows the scripted model calling the hello server's greet through pi, and the server's answer", async () => {
    const { code, output } = await runDemo(home.dir);
    assert.equal(code, 0, output);
    assert.match(output, /^prompt +greet Ada$/m, output);
    assert.match(output, /^tool call +mcp_hello_greet \{"name":"Ada"\}$/m, output);
    assert.match(output, /^tool result +Hello, Ada!$/m, output);
    assert.match(output, /^answer +mcp_hello_greet returned: Hello, Ada!$/m, output);
  });

  test("a deferred tool of the reference server is found with tool_search first, then called", async () => {
    const { code, output } = await runDemo(home.dir, '-p "echo hello from pi"');
    assert.equal(code, 0, output);
    const lines = output.split("\n").filter((line) => /^(tool call|tool result|answer) /.test(line));
    assert.equal(lines[0], 'tool call    tool_search {"query":"echo hello from pi"}', output);
    assert.match(lines[1]!, /^tool result +Loaded (?:1 tool; call it|\d+ tools; call them) by name:$/, output);
    assert.deepEqual(
      lines.slice(2),
      [
        'tool call    ev_echo {"message":"hello from pi"}',
        "tool result  Echo: hello from pi",
        "answer       ev_echo returned: Echo: hello from pi",
      ],
      output,
    );
  });
});

describe("the demo's script", () => {
  const tool = (name: string, properties: Record<string, unknown> = {}, required: string[] = []): Tool =>
    ({ name, description: name, parameters: { type: "object", properties, required } }) as unknown as Tool;
  const greet = tool("mcp_hello_greet", { name: { type: "string" } }, ["name"]);
  const sum = tool("ev_get-sum", { a: { type: "number" }, b: { type: "number" } }, ["a", "b"]);
  const user = (text: string) => ({ role: "user" as const, content: text, timestamp: 0 });
  const result = (toolName: string, text: string, isError = false) => ({
    role: "toolResult" as const,
    toolCallId: "1",
    toolName,
    content: [{ type: "text" as const, text }],
    isError,
    timestamp: 0,
  });

  test("picks the offered tool by its name on the server, and passes the rest of the prompt as its text parameter or as JSON", () => {
    assert.deepEqual(pickToolCall("please greet Ada Lovelace", [sum, greet]), {
      tool: "mcp_hello_greet",
      args: { name: "Ada Lovelace" },
    });
    assert.deepEqual(pickToolCall('get-sum {"a": 2, "b": 3}', [greet, sum]), {
      tool: "ev_get-sum",
      args: { a: 2, b: 3 },
    });
    assert.deepEqual(pickToolCall("ev_get-sum", [sum]), { tool: "ev_get-sum", args: {} });
    assert.equal(pickToolCall("greet Ada", [sum]), undefined);
    // A text parameter that may be null too, as tool_search's query.
    const search = tool("tool_search", { query: { anyOf: [{ type: "string" }, { type: "null" }] } }, []);
    assert.deepEqual(pickToolCall("search the web", [search]), { tool: "tool_search", args: { query: "the web" } });
  });

  test("searches once when nothing offered matches, answers from the tool result, and names the offered tools when stuck", () => {
    const search = tool("tool_search", { query: { type: "string" } }, ["query"]);
    const request = (messages: ScriptedRequest["messages"], tools: Tool[]): ScriptedRequest => ({ messages, tools });
    assert.deepEqual(demoStep(request([user("greet Ada")], [search])), {
      tool: "tool_search",
      args: { query: "greet Ada" },
    });
    assert.deepEqual(demoStep(request([user("greet Ada"), result("tool_search", "Loaded 1 tool")], [search, greet])), {
      tool: "mcp_hello_greet",
      args: { name: "Ada" },
    });
    assert.deepEqual(demoStep(request([user("greet Ada"), result("mcp_hello_greet", "Hello, Ada!")], [greet])), {
      text: "mcp_hello_greet returned: Hello, Ada!",
    });
    assert.deepEqual(demoStep(request([user("greet Ada"), result("mcp_hello_greet", "denied", true)], [greet])), {
      text: "mcp_hello_greet failed: denied",
    });
    const stuck = demoStep(request([user("greet Ada"), result("tool_search", "No tool matched")], [search]));
    assert.ok("text" in stuck && stuck.text.includes("Tools offered: tool_search."), JSON.stringify(stuck));
  });

  test("a prompt that asks for tool_search itself gets its result, not another search (the agent's turns would not end)", () => {
    const search = tool("tool_search", { query: { type: "string" } }, ["query"]);
    const prompt = user('tool_search {"query":"greet someone"}');
    assert.deepEqual(demoStep({ messages: [prompt], tools: [search] }), {
      tool: "tool_search",
      args: { query: "greet someone" },
    });
    const searched = [prompt, result("tool_search", "Loaded mcp_hello_greet")];
    assert.deepEqual(demoStep({ messages: searched, tools: [search, greet] }), {
      text: "tool_search returned: Loaded mcp_hello_greet",
    });
  });
});
