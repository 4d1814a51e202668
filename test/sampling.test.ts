/**
 * Sampling: the request as the model's context, the model a server's hints pick, what the user is shown (pure), and the
 * reference server's `trigger-sampling-request` through pi in-process, answered by the faux model: approved and sent,
 * edited, denied, refused without a UI, and answered without asking where the server's setting allows it.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { type Api, type Context, fauxAssistantMessage, fauxToolCall, type Model } from "@mariozechner/pi-ai";
import type { CreateMessageRequest } from "@modelcontextprotocol/client";
import { DialogBudget } from "../src/pi/dialog-budget.ts";
import { describeSamplingRequest, pickModel, samplingContext, samplingHandler } from "../src/pi/sampling.ts";
import { connectionFor, EVERYTHING_SERVER, EXTENSION_DIR, REPO_ROOT, restoreEnv, tempDir, waitFor } from "./helpers.ts";
import { bundledFixture } from "./fixture-bundle.ts";
import { startFakeOpenAi } from "./fixtures/fake-openai.ts";
import { callOnceInPi, type InProcessPi, requestSystemPrompt, startInProcessPi } from "./pi-harness.ts";
import { RecordingUI } from "./recording-ui.ts";
import type { ExtensionUIContext } from "@mariozechner/pi-coding-agent";

const ASKING_SERVER = bundledFixture(path.join(REPO_ROOT, "test", "fixtures", "asking-server.mjs"));
const model = (id: string) => ({ id, api: "faux", provider: "faux" }) as unknown as Model<Api>;
const params = (extra: Partial<CreateMessageRequest["params"]> = {}): CreateMessageRequest["params"] => ({
  messages: [
    { role: "user", content: { type: "text", text: "Summarise \x1b[2Jthis" } },
    { role: "assistant", content: { type: "text", text: "Which part?" } },
    {
      role: "user",
      content: [
        { type: "text", text: "All of it" },
        { type: "image", data: "aGk=", mimeType: "image/png" },
      ],
    },
  ],
  systemPrompt: "Be brief",
  maxTokens: 64,
  ...extra,
});

describe("sampling requests (pure)", () => {
  test("the messages become the model's context: text and images, both roles, the system prompt", () => {
    const context = samplingContext(params(), model("m1"), 5);
    assert.equal(requestSystemPrompt(context), "Be brief");
    assert.deepEqual(context.messages[0], {
      role: "user",
      content: [{ type: "text", text: "Summarise \x1b[2Jthis" }],
      timestamp: 5,
    });
    assert.equal(context.messages[1]!.role, "assistant");
    assert.deepEqual((context.messages[1] as { content: unknown }).content, [{ type: "text", text: "Which part?" }]);
    assert.deepEqual(context.messages[2], {
      role: "user",
      content: [
        { type: "text", text: "All of it" },
        { type: "image", data: "aGk=", mimeType: "image/png" },
      ],
      timestamp: 5,
    });
  });

  test("tool use inside sampling is refused; audio is named, not sent", () => {
    const withTool = params({
      messages: [{ role: "assistant", content: { type: "tool_use", id: "t", name: "x", input: {} } } as never],
    });
    assert.throws(() => samplingContext(withTool, model("m1")), /not supported by this client/);
    // Tools offered to the model are tool use too: refused before anyone is asked, not answered as if there were none.
    const tools = params({
      tools: [{ name: "search", inputSchema: { type: "object" } }],
      toolChoice: { mode: "required" },
    });
    assert.throws(() => samplingContext(tools, model("m1")), /not supported by this client/);
    const audio = samplingContext(
      params({ messages: [{ role: "user", content: { type: "audio", data: "AA==", mimeType: "audio/wav" } }] }),
      model("m1"),
    );
    assert.match(JSON.stringify(audio.messages[0]), /audio left out/);
    // An image of a type no provider takes would fail the model's request after the user allowed it: it is named too.
    const svg = samplingContext(
      params({ messages: [{ role: "user", content: { type: "image", data: "PHN2Zy8+", mimeType: "image/svg+xml" } }] }),
      model("m1"),
    );
    assert.deepEqual((svg.messages[0] as { content: unknown }).content, [
      { type: "text", text: "[image left out: the model here takes no image/svg+xml]" },
    ]);
  });

  test("an image is sent as the tool results' images are: image/jpg and any case taken, base64 in lines made one", () => {
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]).toString("base64");
    const image = (mimeType: string, data = jpeg) =>
      (
        samplingContext(
          params({ messages: [{ role: "user", content: { type: "image", data, mimeType } }] }),
          model("m1"),
        ).messages[0] as { content: unknown }
      ).content;
    const sent = [{ type: "image", data: jpeg, mimeType: "image/jpeg" }];
    assert.deepEqual(image("image/jpg"), sent);
    assert.deepEqual(image("IMAGE/JPEG"), sent);
    assert.deepEqual(image("image/jpeg", `${jpeg.slice(0, 4)}\n${jpeg.slice(4)}\n`), sent);
  });

  test("the images of one request are bounded together, as a tool result's are: a provider refuses a request past it", () => {
    // Five PNGs of 4.4 MB of base64 each, every one within a provider's bound for one image: 22 MB in one request.
    const png = Buffer.from("\x89PNG\r\n\x1a\n\0", "latin1")
      .toString("base64")
      .padEnd(4.4 * 1024 * 1024, "A");
    const image = { type: "image" as const, data: png, mimeType: "image/png" };
    const context = samplingContext(
      params({
        messages: [{ role: "user", content: [image, image, image, { type: "text", text: "and" }, image, image] }],
      }),
      model("m1"),
    );
    const parts = (context.messages[0] as { content: Array<{ type: string; text?: string }> }).content;
    assert.deepEqual(
      parts.map((p) => p.text ?? p.type),
      [
        "image",
        "image",
        "image",
        "and",
        "[image left out: with it, the request's images would be over the 13.5 MB of base64 one request takes]",
        "[image left out: with it, the request's images would be over the 13.5 MB of base64 one request takes]",
      ],
    );
  });

  test("an image left out for its size or its data says so, not that the model takes no PNG", () => {
    const note = (data: string) =>
      (
        samplingContext(
          params({ messages: [{ role: "user", content: { type: "image", data, mimeType: "image/png" } }] }),
          model("m1"),
        ).messages[0] as { content: unknown }
      ).content;
    assert.deepEqual(note("A".repeat(5 * 1024 * 1024)), [
      { type: "text", text: "[image left out: 5.0 MB as base64, over the 4.5 MB providers take]" },
    ]);
    assert.deepEqual(note("https://example.com/cat.png"), [
      { type: "text", text: "[image left out: its data is not base64]" },
    ]);
  });

  test("an image in an earlier answer of the model (which pi's answers cannot hold) is named, not dropped unsaid", () => {
    const image = { type: "image" as const, data: "aGk=", mimeType: "image/png" };
    const context = samplingContext(
      params({ messages: [{ role: "assistant", content: [{ type: "text", text: "Here:" }, image] }] }),
      model("m1"),
    );
    assert.deepEqual((context.messages[0] as { content: unknown }).content, [
      { type: "text", text: "Here:" },
      { type: "text", text: "[image left out: the model here takes images only in the user's messages]" },
    ]);
  });

  test("a hint picks a configured model; none that matches leaves the current one", () => {
    const current = model("faux-1");
    const available = [current, model("claude-sonnet-9"), model("gpt-9-mini")];
    assert.equal(
      pickModel(params({ modelPreferences: { hints: [{ name: "sonnet" }] } }), current, available)?.id,
      "claude-sonnet-9",
    );
    assert.equal(
      pickModel(params({ modelPreferences: { hints: [{ name: "gemini" }, { name: "gpt" }] } }), current, available)?.id,
      "gpt-9-mini",
    );
    assert.equal(
      pickModel(params({ modelPreferences: { hints: [{ name: "llama" }] } }), current, available)?.id,
      "faux-1",
    );
    assert.equal(pickModel(params(), current, available)?.id, "faux-1");
  });

  test("the approval text names the server, the model and the limit, and strips escapes", () => {
    const text = describeSamplingRequest("notes", params(), model("m1"));
    assert.match(
      text,
      /^MCP server 'notes' wants m1 to answer it \(at most 64 tokens\)\.\nSystem prompt: Be brief\nuser: Summarise this\nassistant: Which part\?\nuser: All of it \[image\]$/,
    );
    // A long conversation: the last messages, which the model answers, are the ones shown.
    const turn = (i: number) => ({ role: "user" as const, content: { type: "text" as const, text: `message ${i}` } });
    const long = describeSamplingRequest(
      "notes",
      params({ messages: Array.from({ length: 9 }, (_, i) => turn(i + 1)) }),
      model("m1"),
    );
    assert.match(long, /\(3 earlier messages\)\nuser: message 4\n[^]*\nuser: message 9$/);
    const seven = params({ messages: Array.from({ length: 7 }, (_, i) => turn(i + 1)) });
    assert.match(describeSamplingRequest("notes", seven, model("m1")), /\n\(1 earlier message\)\nuser: message 2\n/);
  });

  test("the limit shown is the one the model is asked with: the server's, within what the model can write", () => {
    const small = { ...model("m1"), maxTokens: 100 } as Model<Api>;
    const text = describeSamplingRequest("notes", params({ maxTokens: 1_000_000 }), small);
    assert.match(text, /^MCP server 'notes' wants m1 to answer it \(at most 100 tokens\)\./);
  });
});

describe("requests refused before any dialog", () => {
  test("take none of the server's 5 dialogs a minute: with no model, or asking for tool use", async () => {
    const ui = new RecordingUI();
    ui.answers = ["Deny"];
    const session = { hasUI: true, ui: ui.context(), model: undefined as Model<Api> | undefined };
    const ctx = () => ({ ...session, modelRegistry: { getAvailable: () => [] }, signal: undefined }) as never;
    const handler = samplingHandler("srv", "ask", ctx, new DialogBudget(() => undefined));
    for (let i = 0; i < 6; i++) await assert.rejects(handler(params()), /pi has no model selected/);
    session.model = model("m1");
    const tools = params({ tools: [{ name: "t", inputSchema: { type: "object" } }] });
    for (let i = 0; i < 6; i++) await assert.rejects(handler(tools), /sampling with tools is not supported/);
    await assert.rejects(handler(params()), /The user declined MCP server 'srv''s sampling request/);
    assert.equal(ui.asked.length, 1);
  });

  test("a limit of no tokens (0, or below) is refused unasked: pi's providers would take it for no limit at all", async () => {
    const ui = new RecordingUI();
    const session = { hasUI: true, ui: ui.context(), model: model("m1"), modelRegistry: { getAvailable: () => [] } };
    const handler = samplingHandler("srv", "ask", () => session as never, new DialogBudget(() => undefined));
    for (const maxTokens of [0, -5])
      await assert.rejects(handler(params({ maxTokens })), { code: -32602, message: /maxTokens must be at least 1/ });
    assert.deepEqual(ui.asked, []);
  });

  test("a model call that throws (no key, network) is an internal error to the server, not the user's refusal", async () => {
    const fail = async () => Promise.reject(new Error("No key for faux: not signed in"));
    const session = { hasUI: false, model: model("m1"), modelRegistry: { getAvailable: () => [], complete: fail } };
    const handler = samplingHandler("srv", "allow", () => session as never, new DialogBudget(() => undefined));
    await assert.rejects(handler(params()), { code: -32603, message: /The model failed: No key for faux/ });
  });
});

describe("server-everything's sampling through pi", { timeout: 120_000 }, () => {
  const project = tempDir("mcp-bridge-sampling-project-");
  const agentDir = tempDir("mcp-bridge-sampling-agent-");
  const originalCwd = process.cwd();
  const tool = "mcp_everything_trigger-sampling-request";

  function writeConfig(sampling?: string): void {
    // The model calls the server's tool directly.
    const entry = {
      command: process.execPath,
      args: [EVERYTHING_SERVER, "stdio"],
      autoApprove: ["*"],
      exposure: "direct",
      ...(sampling ? { sampling } : {}),
    };
    writeFileSync(path.join(agentDir.dir, "mcp.json"), JSON.stringify({ mcpServers: { everything: entry } }));
  }

  before(() => {
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
  });
  after(() => {
    process.chdir(originalCwd);
    project.cleanup();
    agentDir.cleanup();
  });

  /** The model calls the tool; the sampling request, if it reaches the model, gets the faux model's second answer. */
  async function sample(
    ui: RecordingUI | undefined,
    reply = "Autumn moon rising",
  ): Promise<{ text: string; asked: Context[] }> {
    const asked: Context[] = [];
    const { text, offered } = await callOnceInPi({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [EXTENSION_DIR],
      uiContext: ui?.context(),
      tool,
      args: { prompt: "a haiku", maxTokens: 50 },
      meanwhile: [
        // The sampling request, if the model is asked; else the agent's next turn takes this answer.
        (context: Context) => {
          if (requestSystemPrompt(context) === "You are a helpful test server.") asked.push(context);
          return fauxAssistantMessage(reply);
        },
      ],
    });
    assert.ok(offered, "offered: the bridge declares sampling");
    return { text, asked };
  }

  test("approved and sent: the server gets the faux model's answer; the model got the server's prompt", async () => {
    writeConfig();
    const ui = new RecordingUI();
    ui.answers = ["Allow", "Send"];
    const { text, asked } = await sample(ui);
    assert.match(
      ui.asked[0]!,
      /^select: MCP server 'everything' wants .+ to answer it \(at most 50 tokens\)\.\nSystem prompt: You are a helpful test server\.\nuser: Resource trigger-sampling-request context: a haiku$/,
    );
    assert.match(ui.asked[1]!, /answered MCP server 'everything':\nAutumn moon rising$/);
    assert.equal(asked.length, 1);
    assert.equal(requestSystemPrompt(asked[0]!), "You are a helpful test server.");
    assert.match(text, /"text": "Autumn moon rising"/);
    assert.match(text, /"stopReason": "endTurn"/);
  });

  test("the model's answer, which the server's prompt steers, is shown without the terminal escapes it carries", async () => {
    writeConfig();
    const ui = new RecordingUI();
    ui.answers = ["Allow", "Refuse"];
    await sample(ui, "Autumn\x1b]52;c;cm0gLXJmIH4=\x07 moon\x1b[2J rising");
    assert.match(ui.asked[1]!, /answered MCP server 'everything':\nAutumn moon rising$/);
  });

  test("edited before it is sent", async () => {
    writeConfig();
    const ui = new RecordingUI();
    ui.answers = ["Allow", "Edit", "Winter sun setting"];
    const { text } = await sample(ui);
    assert.match(text, /"text": "Winter sun setting"/);
  });

  test("denied: the model is never asked, and the server hears the user declined", async () => {
    writeConfig();
    const ui = new RecordingUI();
    ui.answers = ["Deny"];
    const { text, asked } = await sample(ui);
    assert.equal(asked.length, 0);
    assert.match(text, /declined MCP server 'everything''s sampling request/);
  });

  test('without a UI it is refused with the setting that allows it; with "sampling": "allow" it is answered', async () => {
    writeConfig();
    const refused = await sample(undefined);
    assert.equal(refused.asked.length, 0);
    assert.match(refused.text, /needs the user's approval and there is no UI to ask in; set "sampling": "allow"/);
    writeConfig("allow");
    const allowed = await sample(undefined);
    assert.match(allowed.text, /"text": "Autumn moon rising"/);
  });

  test("a limit above the model's own is sent as the model's: a provider refuses a request past it", async () => {
    writeConfig("allow");
    const limits: unknown[] = [];
    await callOnceInPi({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [EXTENSION_DIR],
      tool,
      args: { prompt: "a haiku", maxTokens: 1_000_000 },
      meanwhile: [
        (_context: Context, options?: { maxTokens?: number }) => {
          limits.push(options?.maxTokens);
          return fauxAssistantMessage("ok");
        },
      ],
    });
    assert.deepEqual(limits, [16_384]); // the faux model's maxTokens
  });

  test("a reasoning model, which providers refuse a temperature for, is asked without the server's", async () => {
    writeConfig("allow");
    const fake = await startFakeOpenAi();
    const pi = await startInProcessPi({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [EXTENSION_DIR],
      model: { ...fake.model, reasoning: true },
    });
    try {
      await pi.session.bindExtensions({});
      fake.script([{ toolCalls: [{ name: tool, args: { prompt: "a haiku", maxTokens: 50 } }] }, { text: "a haiku" }]);
      await pi.session.prompt(`call ${tool}`);
      const asked = fake.requests.filter((r) => JSON.stringify(r.body.messages).includes("helpful test server"));
      assert.equal(asked.length, 1);
      assert.equal(asked[0]!.body.temperature, undefined); // server-everything asks for 0.7
    } finally {
      await pi.close();
      await fake.close();
    }
  });

  test('"sampling": "off": not declared, so the server does not offer its sampling tool', async () => {
    writeConfig("off");
    const pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
    try {
      await pi.session.bindExtensions({});
      assert.ok(
        pi.session.getAllTools().some((t) => t.name === "mcp_everything_echo"),
        "the server is up",
      );
      assert.equal(
        pi.session.getAllTools().some((t) => t.name === tool),
        false,
      );
    } finally {
      await pi.close();
    }
  });
});

describe("a request the server gives up on (sampling, elicitation)", { timeout: 60_000 }, () => {
  /** pi in-process with the asking fixture and `context` as its UI; the model calls `tool`, then says `replies`. */
  async function askingPi(
    context: ExtensionUIContext,
    tool: string,
    args: Record<string, unknown>,
    replies: string[],
    meanwhile: (result: string) => Promise<void>,
    during?: (pi: InProcessPi) => Promise<void>,
  ): Promise<void> {
    const project = tempDir("mcp-bridge-sampling-cancel-project-");
    const agentDir = tempDir("mcp-bridge-sampling-cancel-agent-");
    const entry = { command: process.execPath, args: [ASKING_SERVER], autoApprove: ["*"], exposure: "direct" };
    writeFileSync(path.join(agentDir.dir, "mcp.json"), JSON.stringify({ mcpServers: { asking: entry } }));
    const saved = { cwd: process.cwd(), env: { ...process.env } };
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    const pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
    try {
      await pi.session.bindExtensions({ uiContext: context });
      pi.faux.setResponses([
        fauxAssistantMessage([fauxToolCall(tool, args)], { stopReason: "toolUse" }),
        ...replies.map((reply) => fauxAssistantMessage(reply)),
      ]);
      await Promise.all([pi.session.prompt("ask"), during?.(pi)]);
      const result = pi.session.messages.find((m) => (m as { role: string }).role === "toolResult") as unknown as {
        content: Array<{ text?: string }>;
      };
      await meanwhile(result?.content[0]?.text ?? "");
    } finally {
      await pi.close();
      process.chdir(saved.cwd);
      restoreEnv(saved.env);
      project.cleanup();
      agentDir.cleanup();
    }
  }

  /** A UI whose dialogs the user never answers: each stays open until it is dismissed, as `dialogs` records. */
  function unansweredDialogs() {
    const context = new RecordingUI().context();
    const dialogs: string[] = [];
    context.select = (_title, _options, opts) =>
      new Promise((resolve) => {
        dialogs.push("open");
        opts?.signal?.addEventListener("abort", () => resolve(void dialogs.push("dismissed")));
      });
    return { context, dialogs };
  }

  for (const tool of ["mcp_asking_ask_sampling", "mcp_asking_ask_elicitation"])
    test(`${tool}: its dialog is dismissed once the server has given up on it`, async () => {
      // The user does not answer: the dialog stays until it is dismissed.
      const { context, dialogs } = unansweredDialogs();
      await askingPi(context, tool, { count: 1, timeoutMs: 500 }, ["done"], async (result) => {
        assert.match(result, /^error: .*timed out/i, "the server gave up");
        await waitFor(() => dialogs.includes("dismissed"), "the dialog dismissed", 10_000);
        assert.deepEqual(dialogs, ["open", "dismissed"]);
      });
    });

  for (const tool of ["mcp_asking_ask_sampling", "mcp_asking_ask_elicitation"])
    test(`${tool}: its dialog is dismissed when pi's turn is aborted, as the model's answer to it is ended`, async () => {
      const { context, dialogs } = unansweredDialogs();
      const abort = async (pi: InProcessPi) => {
        await waitFor(() => dialogs.includes("open"), "the dialog open", 10_000);
        await pi.session.abort();
      };
      await askingPi(
        context,
        tool,
        { count: 1 },
        ["done"],
        async () => {
          await waitFor(() => dialogs.includes("dismissed"), "the dialog dismissed", 10_000);
          assert.deepEqual(dialogs, ["open", "dismissed"]);
        },
        abort,
      );
    });

  test("an answer the user is editing when the server gives up: they are told at once that it will not be sent", async () => {
    // pi's editor cannot be dismissed: the user edits on until told.
    const ui = new RecordingUI();
    ui.answers = ["Allow", "Edit"];
    const context = ui.context();
    let edit = (_text: string) => {};
    const editing: string[] = [];
    context.editor = (title) => new Promise((resolve) => (editing.push(title), (edit = resolve)));
    const args = { count: 1, timeoutMs: 3000 };
    await askingPi(context, "mcp_asking_ask_sampling", args, ["a draft", "done"], async (result) => {
      assert.match(result, /^error: .*timed out/i, "the server gave up");
      assert.deepEqual(editing, ["The answer MCP server 'asking' will get"]);
      await waitFor(() => ui.notices.some((n) => n.includes("gave up")), "the user told", 10_000);
      assert.deepEqual(ui.notices, [
        "MCP server 'asking' gave up on its request: the answer you are editing will not be sent.",
      ]);
      edit("my answer");
    });
  });
});

describe("a sampling request that quotes the server's secret", { timeout: 60_000 }, () => {
  test("reaches pi's model and the user's screen with it hidden, as a tool result does", async () => {
    const secret = "sk-sampling-secret-0123456789";
    const asked: string[] = [];
    const connection = connectionFor(
      "quoting",
      // Its tool `quote_secret` has the client's model answer a request that quotes the API key it was given.
      { command: process.execPath, args: [ASKING_SERVER], env: { API_KEY: secret }, protocolVersion: "2025-06-18" },
      {
        features: {
          sampling: async (request) => {
            asked.push(JSON.stringify(request));
            return { role: "assistant", content: { type: "text", text: "ok" }, model: "m1" };
          },
        },
      },
    );
    try {
      await connection.connect();
      const { content } = await connection.callTool("quote_secret", { kind: "sampling" });
      assert.deepEqual(content, [{ type: "text", text: "ok" }], "the answer reached the server");
      assert.equal(asked.length, 1);
      assert.ok(!asked[0]!.includes(secret), asked[0]);
      assert.match(asked[0]!, /the key is \*\*\*/);
    } finally {
      await connection.close();
    }
  });
});
