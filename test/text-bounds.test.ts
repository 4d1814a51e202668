/**
 * Everything a server or a config supplies reaches the user harmless and bounded, inside real pi (in-process, faux
 * model, a recording UI) with real server processes: a server whose every text is a megabyte of terminal escapes and
 * bidi marks (test/fixtures/long-text-server.mjs), one that writes it to stderr and dies, a config entry whose `url` is
 * 10 MB and one whose `url` is full of escapes, beside a healthy server. Every notice, dialog title and option, `/mcp`
 * view, error and system prompt line is checked: under its bound, and without a raw escape, C1 control or bidi mark.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { SHOWN } from "../src/common/terminal-text.ts";
import { MAX_SERVER_GUIDE_LINE } from "../src/translate/server-guide-text.ts";
import { type InProcessPi, requestSystemPrompt, requestTools, startInProcessPi } from "./pi-harness.ts";
import { RecordingUI } from "./recording-ui.ts";
import { EXTENSION_DIR, REPO_ROOT, tempDir } from "./helpers.ts";
import { bundledFixture } from "./fixture-bundle.ts";

const LONG_TEXT_SERVER = bundledFixture(path.join(REPO_ROOT, "test", "fixtures", "long-text-server.mjs"));
const HEALTHY_SERVER = bundledFixture(path.join(REPO_ROOT, "test", "fixtures", "hostile-stdio.mjs"));
const UNIT = "ab\u202e\u2066\u009b31m\x1b[2J\x1b]0;pwned\x07\u200f ";
/** What no shown text may hold: C0 controls but newline and tab, DEL, C1, bidi embeddings, overrides and isolates (LRM and RLM stay: right-to-left text uses them). */
const RAW = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

interface ToolResult {
  role: "toolResult";
  toolName: string;
  isError: boolean;
  content: Array<{ text?: string }>;
}

function assertHarmless(what: string, text: string, max: number): void {
  assert.ok(text.length <= max, `${what}: ${text.length} characters, over ${max}: ${text.slice(0, 300)}`);
  const raw = RAW.exec(text);
  assert.equal(
    raw,
    null,
    `${what}: a raw U+${raw?.[0].charCodeAt(0).toString(16)} in ${JSON.stringify(text.slice(0, 300))}`,
  );
}

describe(
  "a megabyte of escapes and bidi marks from a server and a config, everywhere it reaches the user",
  { timeout: 240_000 },
  () => {
    const project = tempDir("mcp-bridge-bounds-project-");
    const agentDir = tempDir("mcp-bridge-bounds-agent-");
    const originalCwd = process.cwd();
    const ui = new RecordingUI();
    let pi: InProcessPi;
    const seen: Context[] = [];

    before(async () => {
      writeFileSync(
        path.join(agentDir.dir, "mcp.json"),
        JSON.stringify({
          exposure: "direct",
          mcpServers: {
            text: {
              command: process.execPath,
              args: [LONG_TEXT_SERVER],
              maxSchemaBytes: 16_000_000,
              description: "Long text \u202eof sdrawkcab\u2066 tools",
            },
            dies: { command: process.execPath, args: [LONG_TEXT_SERVER, "--exit-at-start"], maxRestarts: 0 },
            huge: { url: `http://127.0.0.1:9/${"a".repeat(10 * 1024 * 1024)}` },
            odd: { url: `http://127.0.0.1:9/${UNIT.repeat(100)}`, reconnect: false },
            good: { command: process.execPath, args: [HEALTHY_SERVER, "--mode", "healthy"], autoApprove: ["echo"] },
          },
        }),
      );
      process.env.PI_CODING_AGENT_DIR = agentDir.dir;
      process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
      process.chdir(project.dir);
      pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
      await pi.session.bindExtensions({ uiContext: ui.context() });
    });

    after(async () => {
      await pi?.close();
      process.chdir(originalCwd);
      project.cleanup();
      agentDir.cleanup();
    });

    const toolNamed = (prefix: string) => {
      const name = pi.session.getAllTools().find((t) => t.name.startsWith(prefix))?.name;
      assert.ok(name, `${prefix}: ${pi.session.getAllTools().map((t) => t.name)}`);
      return name;
    };

    /** The faux model calls each tool in turn, then ends; what each call returned. */
    async function callInTurn(calls: Array<[string, Record<string, unknown>]>): Promise<ToolResult[]> {
      const record = (reply: ReturnType<typeof fauxAssistantMessage>) => (context: Context) => {
        seen.push(context);
        return reply;
      };
      pi.faux.setResponses([
        ...calls.map(([tool, args]) =>
          record(fauxAssistantMessage([fauxToolCall(tool, args)], { stopReason: "toolUse" })),
        ),
        record(fauxAssistantMessage("done")),
      ]);
      const before = pi.session.messages.length;
      await pi.session.prompt("use the tools");
      return pi.session.messages
        .slice(before)
        .filter((m) => (m as { role: string }).role === "toolResult") as unknown as ToolResult[];
    }

    test("the healthy server beside a 10 MB url connects, and its tool works", async () => {
      const [result] = await callInTurn([[toolNamed("mcp_good_echo"), { text: "still here" }]]);
      assert.equal(result!.isError, false, JSON.stringify(result));
      assert.equal(result!.content[0]!.text, "still here");
    });

    test("the startup notice: the config errors and the dead server's stderr, harmless and bounded", () => {
      const startup = ui.notices.find((n) => n.includes("'huge'"));
      assert.ok(startup, ui.notices.map((n) => n.slice(0, 200)).join("\n---\n"));
      assert.match(startup, /`url` is \d+ characters long; at most \d+ are taken/);
      assert.match(startup, /dies/);
      for (const notice of ui.notices) assertHarmless("notice", notice, SHOWN.notice);
    });

    test("approval dialogs: a tool name and arguments with U+202E and C1 controls shown as \\uXXXX, and cut", async () => {
      ui.answers = ["Allow once", "Allow once", "Allow once", "Decline", "Allow once", "Cancel", "Allow once", "Deny"];
      const asked = ui.asked.length;
      const results = await callInTurn([
        // Long enough to be cut; not so long that pi compacts the conversation.
        [toolNamed("mcp_text_named"), { text: UNIT.repeat(2000) }],
        [toolNamed("mcp_text_fail"), {}],
        [toolNamed("mcp_text_ask"), {}],
        [toolNamed("mcp_text_page"), {}],
        [toolNamed("mcp_text_sample"), {}],
      ]);
      assert.deepEqual(
        ui.answers,
        [],
        `every scripted answer was used: ${ui.asked.slice(asked).map((a) => a.slice(0, 120))}`,
      );
      const dialogs = ui.asked.slice(asked);
      const approvals = dialogs.filter((d) => d.startsWith("select: Allow MCP tool"));
      assert.equal(approvals.length, 5, dialogs.map((d) => d.slice(0, 120)).join("\n"));
      for (const dialog of dialogs) assertHarmless("dialog", dialog, SHOWN.body * 2 + 500);
      // The arguments the model sent carry U+202E and 8-bit CSI, which JSON leaves as they are: the dialog escapes them.
      assert.match(approvals[0]!, /\nArguments: \{"text":"ab\\u202e\\u2066\\u009b31m\\u001b\[2J/);
      assert.match(approvals[0]!, /more characters\)$/);
      for (const options of ui.offered) for (const option of options) assertHarmless("option", option, SHOWN.body);
      // The error, the declined elicitations and the refused sampling, as the model got them.
      assert.equal(results.length, 5);
      assert.equal(results[1]!.isError, true);
      for (const result of results)
        assertHarmless("tool result", result.content.map((c) => c.text ?? "").join("\n"), SHOWN.body + 500);
    });

    test("the elicitation (form and URL) and sampling dialogs show the server's message and prompt cut and stripped", () => {
      const form = ui.asked.find((a) => a.includes("asks for input:"));
      const page = ui.asked.find((a) => a.includes("asks you to open a page:"));
      const sampling = ui.asked.find((a) => a.includes("System prompt:"));
      for (const [what, dialog] of [
        ["form", form],
        ["page", page],
        ["sampling", sampling],
      ] as const) {
        assert.ok(dialog, `${what}: ${ui.asked.map((a) => a.slice(0, 80)).join("\n")}`);
        assert.match(dialog, /ab\u200f ab\u200f ab/, `${what} shows the text without its escapes`);
        assert.match(dialog, /more characters\)/, `${what} says how much was cut`);
      }
    });

    test("/mcp views: the dashboard with each server's details and log, list, tools and test", async () => {
      const notices = ui.notices.length;
      const screens = ui.screens.length;
      // Into each server's details and back; the table lists five.
      ui.keys = ["\r", "\x1b", "\x1b[B", "\r", "\x1b", "\x1b[B", "\r", "\x1b", "\x1b[B", "\r", "\x1b", "\x1b"];
      await pi.session.prompt("/mcp");
      for (const command of ["/mcp list", "/mcp tools", "/mcp test text", "/mcp test odd"])
        await pi.session.prompt(command);
      const views = ui.notices.slice(notices);
      assert.ok(views.length >= 4, views.map((v) => v.slice(0, 100)).join("\n"));
      for (const view of views) {
        assertHarmless("view", view, SHOWN.view);
        // A listing may be long; no line of it is.
        for (const line of view.split("\n")) assert.ok(line.length <= SHOWN.body + 300, `a line of ${line.length}`);
      }
      const drawn = ui.screens.slice(screens);
      assert.ok(drawn.length >= 8, `${drawn.length} screens`);
      assert.ok(drawn.some((lines) => lines.some((l) => l.includes("Last lines of its log:"))));
      // pi ends a line it cuts to the width with its own reset sequence.
      for (const lines of drawn)
        for (const line of lines) assertHarmless("screen", line.replaceAll("\x1b[0m", ""), 400);
      const list = views.find((v) => v.includes("odd")) ?? "";
      assert.match(list, /127\.0\.0\.1:9/, "the list names the odd server's address");
    });

    test("what the model reads: the system prompt line and each tool's description, harmless and bounded", () => {
      assert.ok(seen.length > 0);
      const prompt = requestSystemPrompt(seen.at(-1)!) ?? "";
      const line = prompt.split("\n").find((l) => l.startsWith("- text "));
      assert.ok(line, prompt.slice(-1000));
      assertHarmless("system prompt line", line, MAX_SERVER_GUIDE_LINE);
      assertHarmless("system prompt", prompt, 100_000);
      const tools = requestTools(seen.at(-1)!).filter((t) => t.name.startsWith("mcp_text_"));
      assert.equal(tools.length, 6);
      for (const tool of tools) {
        assertHarmless("tool name", tool.name, 64);
        assertHarmless("tool description", tool.description, SHOWN.description + 500);
        assertHarmless("tool parameters", JSON.stringify(tool.parameters), 4 * SHOWN.body);
      }
    });
  },
);
