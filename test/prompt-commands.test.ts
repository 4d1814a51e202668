/**
 * Prompts as commands: names, argument hints, reading the argument line, what to complete and the messages as user
 * content (pure); then through pi in-process with the faux model and a recording UI: server-everything's prompts run
 * as `/mcp:everything:<prompt>` (arguments named, positional, asked for, missing without a UI; an embedded resource
 * kept), argument completion (names, and values through `completion/complete`), and a server whose prompts change
 * (`notifications/prompts/list_changed`): the new prompt's command appears and the removed one's says it is gone. Last,
 * prompt lists that answer out of turn (a server over Streamable HTTP on 127.0.0.1 that holds each answer until the test
 * releases it): each answer registers its commands at once, and an older one that comes late does not undo a newer one.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { type GetPromptResult, ListPromptsRequestSchema, type Prompt } from "@modelcontextprotocol/sdk/types.js";
import type { ServerConnection } from "../src/connection/server-connection.ts";
import { listPrompts } from "../src/connection/server-prompts.ts";
import { PromptCommands, type PromptCommandsDeps } from "../src/pi/prompt-commands.ts";
import {
  argumentHint,
  completionTarget,
  missingArguments,
  parsePromptArguments,
  promptCommandDescription,
  promptCommandName,
  promptMessageContent,
} from "../src/translate/prompt-text.ts";
import {
  busRecorder,
  connectionFor,
  EVERYTHING_SERVER,
  EXTENSION_DIR,
  REPO_ROOT,
  tempDir,
  waitFor,
} from "./helpers.ts";
import { type InProcessPi, startInProcessPi } from "./pi-harness.ts";
import { startBridgeInPi } from "./bridge-in-pi.ts";
import { PI_LINE } from "./pi-line.ts";
import { RecordingUI } from "./recording-ui.ts";
import { bundledFixture } from "./fixture-bundle.ts";

const ARGS = [
  { name: "city", description: "Name of the city", required: true },
  { name: "state", description: "Name of the state" },
];

describe("prompt commands (pure)", () => {
  test("names: mcp:<server>:<prompt>, with what pi cannot take in a command word made safe", () => {
    assert.equal(promptCommandName("everything", "args-prompt"), "mcp:everything:args-prompt");
    assert.equal(promptCommandName("my server", "do it\x1b[2J/now"), "mcp:my_server:do_it__2J_now");
  });

  test("the description has the argument hints, required bare and optional in brackets, without escapes", () => {
    assert.equal(argumentHint(ARGS), "city=<Name of the city> [state=<Name of the state>]");
    // A name with a space is written as it must be typed, quoted: bare, its two words would be two arguments.
    assert.equal(argumentHint([{ name: "first name", required: true }]), '"first name="<value>');
    const description = promptCommandDescription("everything", {
      name: "args-prompt",
      description: "Two \x1b]0;x\x07args",
      arguments: ARGS,
    });
    assert.equal(
      description,
      "Two args — city=<Name of the city> [state=<Name of the state>] (MCP server 'everything')",
    );
  });

  test("arguments: named, positional in declared order, quoted, and too many", () => {
    assert.deepEqual(parsePromptArguments('state=TX "city=El Paso"', ARGS), {
      ok: true,
      values: { state: "TX", city: "El Paso" },
    });
    assert.deepEqual(parsePromptArguments("Paris 'Île de France'", ARGS), {
      ok: true,
      values: { city: "Paris", state: "Île de France" },
    });
    assert.deepEqual(parsePromptArguments("state=TX Austin", ARGS), {
      ok: true,
      values: { state: "TX", city: "Austin" },
    });
    assert.deepEqual(parsePromptArguments("a=b", ARGS), { ok: true, values: { city: "a=b" } });
    // A Windows path keeps its backslashes, quoted or not; a backslash still escapes a quote, a space or itself.
    assert.deepEqual(parsePromptArguments('C:\\Users\\me "state=D:\\My Files\\x"', ARGS), {
      ok: true,
      values: { city: "C:\\Users\\me", state: "D:\\My Files\\x" },
    });
    assert.deepEqual(parsePromptArguments('El\\ Paso "say \\"hi\\" \\\\"', ARGS), {
      ok: true,
      values: { city: "El Paso", state: 'say "hi" \\' },
    });
    const tooMany = parsePromptArguments("a b c", ARGS);
    assert.ok(!tooMany.ok && /too many arguments: 'c'/.test(tooMany.error));
    assert.ok(!parsePromptArguments("x", []).ok);
    assert.deepEqual(
      missingArguments(ARGS, { state: "TX" }).map((a) => a.name),
      ["city"],
    );
    assert.deepEqual(
      missingArguments(ARGS, { city: "" }).map((a) => a.name),
      ["city"],
    );
    assert.deepEqual(
      missingArguments(ARGS, { city: " \t " }).map((a) => a.name),
      ["city"],
    );
    // Arguments named as every JavaScript object's own fields are arguments like any other.
    const js = [{ name: "constructor", required: true }, { name: "toString" }];
    assert.deepEqual(parsePromptArguments("a b", js), { ok: true, values: { constructor: "a", toString: "b" } });
    assert.deepEqual(
      missingArguments(js, {}).map((a) => a.name),
      ["constructor"],
    );
    const proto = [{ name: "__proto__", required: true }, { name: "b" }];
    const named = parsePromptArguments("__proto__=a", proto);
    assert.deepEqual(named.ok && JSON.stringify(named.values), '{"__proto__":"a"}');
    assert.deepEqual(named.ok && missingArguments(proto, named.values), []);
    // A name with `=` in it (as a server may declare: `a=b`) is given by name as it is described, `a=b=<value>`.
    const withEq = [{ name: "a=b" }, { name: "c" }];
    assert.deepEqual(parsePromptArguments("c=1 a=b=2", withEq), { ok: true, values: { c: "1", "a=b": "2" } });
    const value = completionTarget("c=1 a=b=x", withEq);
    assert.deepEqual(value?.kind === "value" && [value.name, value.prefix, value.before], ["a=b", "x", "c=1 a=b="]);
    const inOrder = parsePromptArguments("a c", proto);
    assert.deepEqual(inOrder.ok && JSON.stringify(inOrder.values), '{"__proto__":"a","b":"c"}');
    const offered = completionTarget("", js);
    assert.deepEqual(offered?.kind === "name" && offered.candidates.map((a) => a.name), ["constructor", "toString"]);
  });

  test("completion: names not yet given, or the value of a named one with the others as context", () => {
    assert.deepEqual(completionTarget("", ARGS), { kind: "name", before: "", prefix: "", candidates: ARGS });
    assert.deepEqual(completionTarget("city=Paris s", ARGS), {
      kind: "name",
      before: "city=Paris ",
      prefix: "s",
      candidates: [ARGS[1]],
    });
    assert.deepEqual(completionTarget("city=Paris state=Te", ARGS), {
      kind: "value",
      before: "city=Paris state=",
      name: "state",
      prefix: "Te",
      given: { city: "Paris" },
    });
    assert.equal(completionTarget("city=Paris state=TX x", ARGS), undefined);
    assert.equal(completionTarget("", []), undefined);
    // Inside a quoted value still open (a space typed in it), nothing is completed: a name would land in the value.
    assert.equal(completionTarget('city="El ', ARGS), undefined);
    assert.equal(completionTarget("'El ", ARGS), undefined);
    assert.equal(completionTarget("city=El\\ ", ARGS), undefined, "after an escaped space, the value goes on");
    assert.deepEqual(completionTarget('city="El Paso" ', ARGS)?.kind, "name");
  });

  test("messages: text, images and embedded resources in one user message; roles named when an assistant speaks", () => {
    const result: GetPromptResult = {
      messages: [
        { role: "user", content: { type: "text", text: "Look at this" } },
        { role: "user", content: { type: "image", data: "aGk=", mimeType: "image/png" } },
        {
          role: "user",
          content: { type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "alpha" } },
        },
        { role: "user", content: { type: "resource_link", uri: "file:///b.txt", name: "b" } },
      ],
    };
    assert.deepEqual(promptMessageContent(result, "srv"), [
      {
        type: "text",
        text: "Look at this\n\n[resource] file:///a.txt (text/plain)\nalpha\n\n[resource link] file:///b.txt (b) (MCP server 'srv': read it with read_mcp_resource)",
      },
      { type: "image", data: "aGk=", mimeType: "image/png" },
    ]);
    const dialogue: GetPromptResult = {
      messages: [
        { role: "user", content: { type: "text", text: "Hi" } },
        { role: "assistant", content: { type: "text", text: "Hello" } },
      ],
    };
    assert.deepEqual(promptMessageContent(dialogue, "srv"), [
      { type: "text", text: "[user]\nHi\n\n[assistant]\nHello" },
    ]);
  });

  test("images in several messages, each within a provider's bound but too many for one request: those past it are described", () => {
    const data = Buffer.from("\x89PNG\r\n\x1a\n").toString("base64") + "A".repeat(4 * 1024 * 1024);
    const image = { role: "user" as const, content: { type: "image" as const, data, mimeType: "image/png" } };
    const content = promptMessageContent({ messages: [image, image, image, image] }, "srv");
    assert.equal(content.filter((part) => part.type === "image").length, 3);
    assert.match((content[0] as { text: string }).text, /\[image: image\/png, 3\.0 MB, not shown: .*over the 13\.5 MB/);
  });
});

/** An inline env value of the prompt fixture, which its greet prompt quotes: a secret of that server's config. */
const PROMPT_SECRET = "sk-prompt-planted-5f1c0a7e";

describe("server-everything's prompts through pi", { timeout: 180_000 }, () => {
  const project = tempDir("mcp-bridge-prompts-project-");
  const agentDir = tempDir("mcp-bridge-prompts-agent-");
  const originalCwd = process.cwd();
  const ui = new RecordingUI();
  const resourceBus = busRecorder(project.dir, ["mcp.resources.changed"]);
  let pi: InProcessPi;
  /** The last message the faux model was given, per turn. */
  const seen: Context["messages"] = [];

  const command = (name: string) => pi.session.extensionRunner.getCommand(name);

  /** Runs the command line as the user typed it; returns what the model got as the user's message. */
  async function run(line: string): Promise<string> {
    const before = seen.length;
    pi.faux.setResponses([
      (context: Context) => {
        seen.push(context.messages.at(-1)!);
        return fauxAssistantMessage("noted");
      },
    ]);
    await pi.session.prompt(line);
    await waitFor(() => seen.length > before, `the model's turn after ${line}`, 30_000);
    await pi.session.agent.waitForIdle();
    const message = seen.at(-1) as { role: string; content: Array<{ type: string; text?: string }> };
    assert.equal(message.role, "user");
    return message.content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("|");
  }

  before(async () => {
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    const everything = { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] };
    // The model calls this one's tool directly.
    const changing = {
      command: process.execPath,
      args: [bundledFixture(path.join(REPO_ROOT, "test", "fixtures", "prompt-server.ts"))],
      autoApprove: ["*"],
      exposure: "direct",
      env: { PROMPT_SECRET: PROMPT_SECRET },
    };
    writeFileSync(path.join(agentDir.dir, "mcp.json"), JSON.stringify({ mcpServers: { everything, changing } }));
    const extensionPaths = [EXTENSION_DIR, resourceBus.path];
    pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths });
    await pi.session.bindExtensions({ uiContext: ui.context() });
    await waitFor(
      () => command("mcp:everything:args-prompt") !== undefined && command("mcp:changing:greet") !== undefined,
      "the prompt commands",
      30_000,
    );
  });
  after(async () => {
    await pi?.close();
    process.chdir(originalCwd);
    project.cleanup();
    agentDir.cleanup();
  });

  test("simple-prompt and args-prompt are commands, described with their arguments, listed with provenance by /mcp tools", async () => {
    ui.notices = [];
    await pi.session.prompt("/mcp tools everything");
    assert.match(
      ui.notices.join("\n"),
      /\nPrompt commands {2}· {2}provenance\n(?: {2}.+\n)* {2}\/mcp:everything:args-prompt {2}· {2}mcp:everything\/args-prompt\n/,
    );
    // server-everything offers resources too: the bridge's resource tools reach it.
    // Their exposure is the server's: the default, `auto` (direct here) on pi 0.73, `deferred` on pi 1.x.
    const resources = PI_LINE === "1.x" ? "deferred" : "direct";
    assert.match(
      ui.notices.join("\n"),
      new RegExp(
        `\nResource tools {2}· {2}servers they reach {2}· {2}exposure\n {2}list_mcp_resources {2}· {2}mcp:everything/resources {2}· {2}${resources}\n`,
      ),
    );
    assert.ok(command("mcp:everything:simple-prompt"));
    // The SDK server drops the description of an optional argument.
    assert.equal(
      command("mcp:everything:args-prompt")!.description,
      "A prompt with two arguments, one required and one optional — city=<Name of the city> [state=<value>] (MCP server 'everything')",
    );
  });

  test("a resource link from a server without resources does not point the model at read_mcp_resource", async () => {
    assert.equal(await run("/mcp:changing:linked"), "[resource link] https://example.com/page (page)");
  });

  test("simple-prompt sends the prompt's text as the user's message", async () => {
    assert.equal(await run("/mcp:everything:simple-prompt"), "This is a simple prompt without arguments.");
  });

  test("args-prompt with its arguments given, named or positional", async () => {
    assert.equal(
      await run('/mcp:everything:args-prompt city=Paris "state=Île de France"'),
      "What's weather in Paris, Île de France?",
    );
    assert.equal(await run("/mcp:everything:args-prompt Austin"), "What's weather in Austin?");
  });

  test("args-prompt asks for its missing required argument through pi's dialog", async () => {
    ui.asked = [];
    ui.answers = ["Lyon"];
    assert.equal(await run("/mcp:everything:args-prompt state=Rhône"), "What's weather in Lyon, Rhône?");
    assert.deepEqual(ui.asked, ["input: MCP server 'everything', prompt args-prompt: city (Name of the city)"]);
  });

  test("an embedded resource is kept: its text goes with the prompt", async () => {
    const text = await run("/mcp:everything:resource-prompt resourceType=Text resourceId=1");
    assert.match(
      text,
      /^This prompt includes the Text resource with id: 1\. Please analyze the following resource:\n\n\[resource\] demo:\/\/resource\/dynamic\/text\/1 \(text\/plain\)\n\S/,
    );
  });

  test("completion: args-prompt offers its argument names; values come from the server's completion/complete", async () => {
    const names = await command("mcp:everything:args-prompt")!.getArgumentCompletions!("");
    assert.deepEqual(
      names?.map((item) => item.value),
      ["city=", "state="],
    );
    const completable = command("mcp:everything:completable-prompt")!;
    const departments = await completable.getArgumentCompletions!("department=Eng");
    assert.deepEqual(
      departments?.map((item) => item.value),
      ["department=Engineering"],
    );
    // The department given narrows the names the server suggests.
    const people = await completable.getArgumentCompletions!("department=Sales name=");
    assert.deepEqual(
      people?.map((item) => item.label),
      ["David", "Eve", "Frank"],
    );
  });

  test("a prompt's messages reach the model with the server's secrets hidden and control sequences stripped", async () => {
    assert.equal(await run("/mcp:changing:greet who=Ann"), "Say hello to Ann with ***");
  });

  test("prompts/list_changed: a new prompt becomes a command; a removed one's command says it is gone", async () => {
    // The model calls the fixture's tool, which swaps its prompts; the server then announces its new prompt list.
    pi.faux.setResponses([
      fauxAssistantMessage([fauxToolCall("mcp_changing_swap_prompts", {})], { stopReason: "toolUse" }),
      fauxAssistantMessage("done"),
    ]);
    await pi.session.prompt("swap the prompts");
    await waitFor(() => command("mcp:changing:farewell") !== undefined, "the farewell command", 15_000);
    assert.equal(await run("/mcp:changing:farewell"), "Say goodbye");
    assert.match(command("mcp:changing:greet")!.description!, /no longer offered by MCP server 'changing'/);
    ui.notices = [];
    await pi.session.prompt("/mcp:changing:greet someone");
    assert.deepEqual(ui.notices, ["/mcp:changing:greet: MCP server 'changing' no longer offers this prompt."]);
    assert.deepEqual(resourceBus.events(), [], "a prompt list that changed is no resource list that changed");
  });
});

describe("prompt commands without a UI", { timeout: 120_000 }, () => {
  const project = tempDir("mcp-bridge-prompts-noui-project-");
  const agentDir = tempDir("mcp-bridge-prompts-noui-agent-");
  const originalCwd = process.cwd();

  before(() => {
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    writeFileSync(
      path.join(agentDir.dir, "mcp.json"),
      JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] } } }),
    );
  });
  after(() => {
    process.chdir(originalCwd);
    project.cleanup();
    agentDir.cleanup();
  });

  test("a missing required argument is an error naming it, and nothing is sent; a complete command ends with its turn", async () => {
    const pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
    try {
      await pi.session.bindExtensions({});
      await waitFor(
        () => pi.session.extensionRunner.getCommand("mcp:everything:args-prompt") !== undefined,
        "the prompt commands",
        30_000,
      );
      const errors: string[] = [];
      pi.session.extensionRunner.onError((error) => errors.push(error.error));
      await pi.session.prompt("/mcp:everything:args-prompt state=TX");
      assert.deepEqual(errors, [
        "/mcp:everything:args-prompt: missing required argument city (give them as name=value).",
      ]);
      assert.equal(pi.session.messages.length, 0);

      // Without a UI the command ends with the turn it starts, as a typed prompt does: print mode prints its answer.
      pi.faux.setResponses([fauxAssistantMessage("the answer")]);
      await pi.session.prompt("/mcp:everything:simple-prompt");
      const last = pi.session.messages.at(-1) as { role: string; content: Array<{ text?: string }> } | undefined;
      assert.equal(last?.role, "assistant");
      assert.equal(last?.content[0]?.text, "the answer");
    } finally {
      await pi.close();
    }
  });
});

describe("the prompts of a server whose exposure is `codemode` (pi 1.x's own default)", { timeout: 60_000 }, () => {
  test("are commands once it connects while pi loads, as any server's are", async () => {
    const server = {
      command: process.execPath,
      args: [bundledFixture(path.join(REPO_ROOT, "test", "fixtures", "prompt-server.ts"))],
    };
    const run = await startBridgeInPi({ mcpConfig: { mcpServers: { coded: { ...server, exposure: "codemode" } } } });
    try {
      const command = () => run.pi.session.extensionRunner.getCommand("mcp:coded:greet");
      await waitFor(() => command() !== undefined, "the server's prompt command");
    } finally {
      await run.close();
    }
  });
});

describe("/mcp test of a server with prompts", { timeout: 60_000 }, () => {
  test("leaves its prompt commands offered: the test's own connection closing is not the server going away", async () => {
    const server = {
      command: process.execPath,
      args: [bundledFixture(path.join(REPO_ROOT, "test", "fixtures", "prompt-server.ts"))],
    };
    const ui = new RecordingUI();
    const run = await startBridgeInPi({ mcpConfig: { mcpServers: { pr: server } }, uiContext: ui.context() });
    try {
      const command = () => run.pi.session.extensionRunner.getCommand("mcp:pr:greet");
      await waitFor(() => command() !== undefined, "the server's prompt command");
      await run.pi.session.prompt("/mcp test pr");
      assert.match(ui.notices.at(-1) ?? "", /^MCP server 'pr' works/);
      assert.equal(command()?.description, "Greets someone — who=<Whom to greet> (MCP server 'pr')");
    } finally {
      await run.close();
    }
  });
});

describe("prompt lists that answer out of turn", { timeout: 60_000 }, () => {
  /** Each `prompts/list` waiting for the test to answer it, in the order they came. */
  const held: Array<(prompts: Prompt[]) => void> = [];
  const registered = new Map<string, string>();
  let http: HttpServer;
  let connection: ServerConnection;
  let commands: PromptCommands;

  before(async () => {
    http = createServer(async (req, res) => {
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      const server = new Server({ name: "held", version: "1.0.0" }, { capabilities: { prompts: {} } });
      server.setRequestHandler(
        ListPromptsRequestSchema,
        () => new Promise((resolve) => held.push((prompts) => resolve({ prompts }))),
      );
      res.on("close", () => void server.close());
      await server.connect(transport);
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    connection = connectionFor("held", { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp` });
    await connection.connect();
    commands = new PromptCommands({
      registerCommand: (name, options) => void registered.set(name, options.description ?? ""),
      sendUserMessage: () => undefined,
      connection: () => connection,
    });
  });
  after(async () => {
    await connection?.close();
    await new Promise((resolve) => http?.close(resolve));
  });

  const prompt = (name: string): Prompt => ({ name, description: `the ${name} prompt` });
  const listed = (listing: Awaited<ReturnType<PromptCommands["refresh"]>>) =>
    "error" in listing ? [listing.error] : listing.prompts.map((p) => `${p.prompt.name} ${p.command ?? "-"}`);

  test("an answer that comes while a newer fetch is under way registers its commands at once", async () => {
    const first = commands.refresh(connection);
    const second = commands.refresh(connection);
    await waitFor(() => held.length === 2, "both prompts/list requests at the server");
    held.shift()!([prompt("greet")]);
    assert.deepEqual(listed(await first), ["greet mcp:held:greet"]);
    assert.ok(registered.has("mcp:held:greet"));
    held.shift()!([prompt("greet"), prompt("farewell")]);
    assert.deepEqual(listed(await second), ["greet mcp:held:greet", "farewell mcp:held:farewell"]);
  });

  test("an older answer that comes after a newer one does not undo it", async () => {
    const older = commands.refresh(connection);
    const newer = commands.refresh(connection);
    await waitFor(() => held.length === 2, "both prompts/list requests at the server");
    const [answerOlder, answerNewer] = held.splice(0, 2);
    answerNewer!([prompt("greet")]);
    assert.deepEqual(listed(await newer), ["greet mcp:held:greet"]);
    answerOlder!([prompt("greet"), prompt("farewell")]);
    // The older list still has farewell; the newer one, applied, does not: farewell has no command now.
    assert.deepEqual(listed(await older), ["greet mcp:held:greet", "farewell -"]);
    assert.deepEqual(
      commands.commands().map((c) => c.name),
      ["mcp:held:greet"],
    );
    assert.match(registered.get("mcp:held:farewell")!, /no longer offered by MCP server 'held'/);
  });

  test("a prompt a server lists twice is one command, however often the list is read", async () => {
    for (let round = 0; round < 2; round++) {
      const listing = commands.refresh(connection);
      await waitFor(() => held.length === 1, "the prompts/list request at the server");
      held.shift()!([prompt("twice"), prompt("twice")]);
      await listing;
    }
    assert.deepEqual(
      commands.commands().map((c) => c.name),
      ["mcp:held:twice"],
    );
  });
});

describe("a prompt list that pages without end", { timeout: 60_000 }, () => {
  test("is read as far as the bridge's bound (50 pages), not refused whole", async () => {
    // Each page names the next, for ever.
    const script = `let lists = 0;
    const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n");
    require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
      const { id, method } = JSON.parse(line);
      if (id === undefined) return;
      if (method === "initialize")
        return send({ id, result: { protocolVersion: "2025-06-18", capabilities: { prompts: {} }, serverInfo: { name: "s", version: "1" } } });
      if (method !== "prompts/list") return send({ id, result: {} });
      lists++;
      send({ id, result: { prompts: [{ name: "prompt_" + lists }], nextCursor: "page-" + (lists + 1) } });
    });`;
    const connection = connectionFor("endless", {
      command: process.execPath,
      args: ["-e", script],
      protocolVersion: "2025-06-18",
    });
    try {
      await connection.connect();
      assert.equal((await listPrompts(connection)).length, 50);
    } finally {
      await connection.close();
    }
  });
});

describe("an argument asked for in a dialog", { timeout: 60_000 }, () => {
  // Echoes the arguments `prompts/get` was given.
  const script = `const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n");
    require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
      const { id, method, params } = JSON.parse(line);
      if (id === undefined) return;
      if (method === "initialize")
        return send({ id, result: { protocolVersion: "2025-06-18", capabilities: { prompts: {} }, serverInfo: { name: "s", version: "1" } } });
      if (method === "prompts/list")
        return send({ id, result: { prompts: [{ name: "p", arguments: [{ name: "__proto__", required: true }] }, { name: "q", arguments: [{ name: "first name", required: true }] }] } });
      if (method === "prompts/get")
        return send({ id, result: { messages: [{ role: "user", content: { type: "text", text: JSON.stringify(params.arguments) } }] } });
      send({ id, result: {} });
    });`;
  const connection = connectionFor("echo", {
    command: process.execPath,
    args: ["-e", script],
    protocolVersion: "2025-06-18",
  });
  const commands = new Map<string, Parameters<PromptCommandsDeps["registerCommand"]>[1]>();
  let sent: unknown[] = [];
  let notices: string[] = [];
  const prompts = new PromptCommands({
    registerCommand: (name, options) => void commands.set(name, options),
    sendUserMessage: (content) => void sent.push(content),
    connection: () => connection,
  });
  /** Runs the command with `answer` typed into each dialog; what it sent and said. */
  async function run(name: string, line: string, answer: string) {
    [sent, notices] = [[], []];
    const ui = { input: async () => answer, notify: (text: string) => void notices.push(text) };
    await commands.get(name)!.handler(line, { hasUI: true, ui, isIdle: () => true, signal: undefined } as never);
    return { sent, notices };
  }
  before(async () => {
    await connection.connect();
    await prompts.refresh(connection);
  });
  after(() => connection.close());

  test("reaches the server under its own name, `__proto__` too", async () => {
    assert.deepEqual(await run("mcp:echo:p", "", "given"), {
      sent: [[{ type: "text", text: '{"__proto__":"given"}' }]],
      notices: [],
    });
  });

  test("an argument whose name has a space: the name its completion offers, a value typed after it, runs", async () => {
    const [offered] = (await commands.get("mcp:echo:q")!.getArgumentCompletions!("fi")) ?? [];
    assert.deepEqual(await run("mcp:echo:q", `${offered!.value}Ann`, "asked"), {
      sent: [[{ type: "text", text: '{"first name":"Ann"}' }]],
      notices: [],
    });
  });

  test("a required argument answered with spaces only is missing: nothing is sent", async () => {
    assert.deepEqual(await run("mcp:echo:p", "", "   "), {
      sent: [],
      notices: ["/mcp:echo:p cancelled: no value for __proto__."],
    });
  });
});
