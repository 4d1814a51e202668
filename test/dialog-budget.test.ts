/**
 * How much of the user's attention a server's requests may take, through pi in-process with a recording UI and the
 * asking fixture (a real server process whose tools send 30 sampling requests or elicitations at once): at most 5
 * dialogs a minute per server, shown one at a time, the rest refused unasked with one notice that counts them; and
 * "deny the rest" in a first dialog, after which the server's requests are refused without asking.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { type Api, fauxAssistantMessage, fauxToolCall, type Model } from "@mariozechner/pi-ai";
import { DialogBudget } from "../src/pi/dialog-budget.ts";
import { elicitationFeatures } from "../src/pi/elicitation-dialog.ts";
import { samplingHandler } from "../src/pi/sampling.ts";
import { EXTENSION_DIR, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";
import { startInProcessPi } from "./pi-harness.ts";
import { RecordingUI } from "./recording-ui.ts";
import { bundledFixture } from "./fixture-bundle.ts";
import { apiClient, setUpApiClient } from "./fixtures/api-client-extension.ts";

const ASKING_SERVER = bundledFixture(path.join(REPO_ROOT, "test", "fixtures", "asking-server.mjs"));

interface Run {
  /** Each request's outcome as the server saw it, in its order. */
  outcomes: string[];
  ui: RecordingUI;
  /** The most dialogs open at once. */
  mostOpen: number;
}

describe("a server that asks the user too often", { timeout: 180_000 }, () => {
  const project = tempDir("mcp-bridge-dialogs-project-");
  const agentDir = tempDir("mcp-bridge-dialogs-agent-");
  const originalCwd = process.cwd();

  before(() => {
    const entry = { command: process.execPath, args: [ASKING_SERVER], autoApprove: ["*"], exposure: "direct" };
    writeFileSync(path.join(agentDir.dir, "mcp.json"), JSON.stringify({ mcpServers: { asking: entry } }));
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
  });
  after(() => {
    process.chdir(originalCwd);
    project.cleanup();
    agentDir.cleanup();
  });

  /**
   * One pi session with a UI answering `answers`, in which the model calls the tool for each entry of `calls` (one
   * call per turn); the outcomes of the last call, once the notices `notices` expects have come.
   */
  async function session(answers: unknown[], calls: Array<[tool: string, count: number]>, notices = 1): Promise<Run> {
    const ui = new RecordingUI();
    ui.answers = answers;
    const context = ui.context();
    // Each dialog stays open for a turn of the event loop, so dialogs shown together would be seen together.
    let open = 0;
    let mostOpen = 0;
    const select = context.select;
    context.select = async (...args) => {
      mostOpen = Math.max(mostOpen, ++open);
      await new Promise((resolve) => setImmediate(resolve));
      try {
        return await select(...args);
      } finally {
        open--;
      }
    };
    const pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
    try {
      await pi.session.bindExtensions({ uiContext: context });
      for (const [tool, count] of calls) {
        pi.faux.setResponses([
          fauxAssistantMessage([fauxToolCall(`mcp_asking_${tool}`, { count })], { stopReason: "toolUse" }),
          fauxAssistantMessage("done"),
        ]);
        await pi.session.prompt(`call ${tool}`);
      }
      const refusals = () => ui.notices.filter((n) => n.startsWith("Refused "));
      await waitFor(() => refusals().length >= notices, "the notice of the refused requests");
      const result = pi.session.messages
        .filter((m) => (m as { role: string }).role === "toolResult")
        .at(-1) as unknown as { content: Array<{ text?: string }> };
      return {
        outcomes: result.content
          .map((c) => c.text ?? "")
          .join("\n")
          .split("\n"),
        ui,
        mostOpen,
      };
    } finally {
      await pi.close();
    }
  }

  const count = (outcomes: string[], pattern: RegExp) => outcomes.filter((o) => pattern.test(o)).length;

  test("30 sampling requests at once: 5 dialogs, one at a time; the other 25 refused unasked, in one notice", async () => {
    const { outcomes, ui, mostOpen } = await session(Array(5).fill("Deny"), [["ask_sampling", 30]]);
    assert.equal(ui.asked.length, 5, ui.asked.join("\n"));
    assert.ok(ui.asked.every((a) => a.startsWith("select: MCP server 'asking' wants")));
    assert.equal(mostOpen, 1, "one dialog at a time");
    assert.equal(outcomes.length, 30);
    assert.equal(count(outcomes, /declined MCP server 'asking''s sampling request/), 5);
    assert.equal(
      count(outcomes, /sent more than 5 requests for the user in a minute; this one was refused without asking/),
      25,
    );
    assert.deepEqual(
      ui.notices.filter((n) => n.startsWith("Refused ")),
      [
        "Refused 25 requests from MCP server 'asking' without asking you: 25 as it sent more than 5 in a minute, the most pi puts to you from one server.",
      ],
    );
  });

  test("30 elicitations at once: 5 dialogs, the other 25 declined unasked, in one notice", async () => {
    const { outcomes, ui, mostOpen } = await session(Array(5).fill("Decline"), [["ask_elicitation", 30]]);
    assert.equal(ui.asked.length, 5, ui.asked.join("\n"));
    assert.ok(ui.asked.every((a) => a.startsWith("select: MCP server 'asking' asks for input")));
    assert.equal(mostOpen, 1, "one dialog at a time");
    assert.deepEqual(outcomes, Array(30).fill("declined"));
    assert.match(
      ui.notices.find((n) => n.startsWith("Refused "))!,
      /^Refused 25 requests from MCP server 'asking'/,
    );
  });

  test("deny the rest in the first sampling dialog: no other dialog, now or in the next call", async () => {
    const { outcomes, ui } = await session(
      ["Deny the rest"],
      [
        ["ask_sampling", 3],
        ["ask_sampling", 2],
      ],
    );
    assert.deepEqual(ui.offered[0], ["Allow", "Deny", "Deny the rest from this server for this session"]);
    assert.equal(ui.asked.length, 1, ui.asked.join("\n"));
    assert.deepEqual(outcomes, [
      "error: MCP error -1: The user denied the rest of MCP server 'asking''s requests for this session; this one was refused without asking",
      "error: MCP error -1: The user denied the rest of MCP server 'asking''s requests for this session; this one was refused without asking",
    ]);
    // One notice: for both calls' four, or (when the second call came more than a second later) for the first call's
    // two, the next call's waiting for the next minute.
    const refusals = ui.notices.filter((n) => n.startsWith("Refused "));
    assert.equal(refusals.length, 1, refusals.join("\n"));
    assert.match(
      refusals[0]!,
      /^Refused ([24]) requests from MCP server 'asking' without asking you: \1 as you chose to deny the rest of its requests for this session \(a new session, \/new, lets it ask again\)\.$/,
    );
  });

  test("decline the rest in the first elicitation dialog: the others are declined unasked", async () => {
    const { outcomes, ui } = await session(["Decline the rest"], [["ask_elicitation", 4]]);
    assert.deepEqual(ui.offered[0], [
      "Fill in",
      "Decline",
      "Cancel",
      "Decline the rest from this server for this session",
    ]);
    assert.equal(ui.asked.length, 1, ui.asked.join("\n"));
    assert.deepEqual(outcomes, Array(4).fill("declined"));
    assert.match(
      ui.notices.find((n) => n.startsWith("Refused "))!,
      /^Refused 3 requests .*as you chose to deny the rest/,
    );
  });

  test("a burst refused just before /reload: the notice due after it throws nothing into pi", async () => {
    const ui = new RecordingUI();
    ui.answers = Array(5).fill("Decline");
    const pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
    // On pi 1.x the old session's context refuses everything once the reload is done: a throw in a timer is uncaught.
    const uncaught: unknown[] = [];
    const record = (error: unknown) => void uncaught.push(error);
    process.on("uncaughtException", record);
    try {
      await pi.session.bindExtensions({ uiContext: ui.context() });
      pi.faux.setResponses([
        fauxAssistantMessage([fauxToolCall("mcp_asking_ask_elicitation", { count: 30 })], { stopReason: "toolUse" }),
        fauxAssistantMessage("done"),
      ]);
      const burst = Date.now();
      await pi.session.prompt("call ask_elicitation");
      await pi.session.reload();
      // The burst's notice was due a second after it (NOTICE_DELAY_MS); nothing can be awaited of a bridge that ended.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, burst + 1500 - Date.now())));
      assert.deepEqual(uncaught.map(String), []);
    } finally {
      process.off("uncaughtException", record);
      await pi.close();
    }
  });

  test("declined the rest, then /reload: pi's reload goes on with the same session, and the server still asks no more", async () => {
    setUpApiClient({});
    const ui = new RecordingUI();
    ui.answers = ["Decline the rest"];
    const extensionPaths = [EXTENSION_DIR, path.join(REPO_ROOT, "test", "fixtures", "api-client-extension.ts")];
    const pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths });
    // Another extension's call runs the tool without the model (pi 0.73's reload drops the faux one).
    const ask = async (id: string) => {
      const args = { count: 1 };
      const reply = await apiClient().request("mcp.api.call", { id, server: "asking", tool: "ask_elicitation", args });
      return (reply.content as Array<{ text: string }>)[0]?.text;
    };
    try {
      await pi.session.bindExtensions({ uiContext: ui.context() });
      assert.equal(await ask("before"), "declined");
      await pi.session.reload();
      assert.equal(await ask("after"), "declined");
      assert.equal(ui.asked.length, 1, ui.asked.join("\n"));
    } finally {
      await pi.close();
    }
  });
});

describe("two servers asking at once", () => {
  /** A UI whose dialogs each stay open for a turn of the event loop, counting the most open at once. */
  function countingUi(answers: unknown[]) {
    const ui = new RecordingUI();
    ui.answers = answers;
    const context = ui.context();
    const seen = { open: 0, most: 0 };
    const select = context.select;
    context.select = async (...args) => {
      seen.most = Math.max(seen.most, ++seen.open);
      await new Promise((resolve) => setImmediate(resolve));
      try {
        return await select(...args);
      } finally {
        seen.open--;
      }
    };
    return { ui, context, seen };
  }
  const form = { message: "m", requestedSchema: { type: "object" as const, properties: {} } };

  test("one dialog at a time on screen: pi shows one, a second would replace the first and leave it unanswerable", async () => {
    const { context, seen } = countingUi(["Decline", "Decline"]);
    const budget = new DialogBudget(() => undefined);
    const [a, b] = ["a", "b"].map((server) => elicitationFeatures(server, () => ({ ui: context }), budget));
    assert.deepEqual(await Promise.all([a!.elicitation!(form), b!.elicitation!(form)]), [
      { action: "decline" },
      { action: "decline" },
    ]);
    assert.equal(seen.most, 1);
  });

  test("a new session shows its dialogs though pi took an old one away unanswered (it does on /new), never ended", async () => {
    const { ui, context } = countingUi(["Decline"]);
    const select = context.select;
    let calls = 0;
    context.select = (...args) => (calls++ === 0 ? new Promise(() => undefined) : select(...args));
    const budget = new DialogBudget(() => undefined);
    const [a, b] = ["a", "b"].map((server) => elicitationFeatures(server, () => ({ ui: context }), budget));
    void a!.elicitation!(form);
    await waitFor(() => calls === 1, "the first dialog");
    budget.reset();
    const answer = b!.elicitation!(form);
    await waitFor(() => ui.asked.length === 1, "the new session's dialog");
    assert.deepEqual(await answer, { action: "decline" });
  });

  test("a dialog pi took away with the old session (on /new) is ended: its server hears 'cancel' at once", async () => {
    const { context } = countingUi([]);
    // As pi's TUI: the dialog ends only when answered or when its signal aborts.
    context.select = (_title, _options, opts) =>
      new Promise((resolve) => opts?.signal?.addEventListener("abort", () => resolve(undefined)));
    const budget = new DialogBudget(() => undefined);
    const answer = elicitationFeatures("a", () => ({ ui: context }), budget).elicitation!(form);
    await new Promise((resolve) => setImmediate(resolve));
    budget.reset();
    const late = new Promise((resolve) => setTimeout(resolve, 5000, "still waiting").unref());
    assert.deepEqual(await Promise.race([answer, late]), { action: "cancel" });
  });

  test("a sampling request's model call holds no other server's dialog", async () => {
    const { ui, context } = countingUi(["Allow", "Decline", "Send"]);
    const budget = new DialogBudget(() => undefined);
    let answer: ((reply: unknown) => void) | undefined;
    const complete = () => new Promise((resolve) => (answer = resolve));
    const model = { id: "m1", api: "faux", provider: "faux" } as unknown as Model<Api>;
    const session = { hasUI: true, ui: context, model, modelRegistry: { getAvailable: () => [], complete } };
    const sampling = samplingHandler("s", "ask", () => session as never, budget);
    const messages = [{ role: "user" as const, content: { type: "text" as const, text: "hi" } }];
    const sampled = sampling({ messages, maxTokens: 10 });
    await waitFor(() => ui.asked.length === 1, "the sampling request's approval");
    // The other server's form is asked while the model answers.
    const elicitation = elicitationFeatures("e", () => ({ ui: context }), budget).elicitation!(form);
    assert.deepEqual(await elicitation, { action: "decline" });
    await waitFor(() => answer !== undefined, "the model call");
    answer!({ role: "assistant", content: [{ type: "text", text: "hello" }], stopReason: "stop" });
    assert.equal(((await sampled).content as { text: string }).text, "hello");
  });
});
