/**
 * Project trust across the bridge's own writes to the project's file, in real pi in-process (faux model, recording
 * UI): "Always allow" on a trusted server's tool, `/mcp disable`/`enable`, `/mcp add` and `/mcp import` keep the next
 * session from asking; an outside edit of the same file — before the next session or in the middle of this one — asks
 * again. On pi 0.73 the bridge asks; on pi 1.x pi's answer on the project decides what the user has not answered in
 * the bridge, so there the "trusted server" is one trusted with `/mcp trust` in a project pi does not trust.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, beforeEach, describe, test } from "node:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { TRUST_ALL, TRUST_NONE } from "../src/pi/command-trust.ts";
import { type InProcessPi, startInProcessPi } from "./pi-harness.ts";
import { PI_LINE } from "./pi-line.ts";
import { RecordingUI } from "./recording-ui.ts";
import { EXTENSION_DIR, helloServer, tempDir, trustFile, trustProjectServers, waitFor } from "./helpers.ts";

const HELLO = helloServer();
const PI_1X = PI_LINE === "1.x";
/** pi 1.x's own answer on the project: "not trusted", so only the bridge's own answers let a project server run. */
const PI_TRUSTS = PI_1X ? false : undefined;

interface ToolResultMessage {
  role: "toolResult";
  toolName: string;
  isError: boolean;
  content: Array<{ type: string; text?: string }>;
}

describe("project trust across the bridge's own writes (in-process pi, recording UI)", { timeout: 180_000 }, () => {
  const project = tempDir("mcp-bridge-trust-written-project-");
  const agentDir = tempDir("mcp-bridge-trust-written-agent-");
  const home = tempDir("mcp-bridge-trust-written-home-");
  const projectConfig = path.join(project.dir, ".pi", "mcp.json");
  const originalCwd = process.cwd();
  const originalHome = process.env.HOME;
  let pi: InProcessPi | undefined;

  type Entries = Record<string, Record<string, unknown>>;
  const writeProject = (servers: Entries) =>
    writeFileSync(projectConfig, `${JSON.stringify({ mcpServers: servers }, null, 2)}\n`);
  const readProject = () => (JSON.parse(readFileSync(projectConfig, "utf8")) as { mcpServers: Entries }).mcpServers;
  const hello = (args: string[] = []) => ({ command: process.execPath, args: [HELLO, ...args] });

  before(() => {
    mkdirSync(path.dirname(projectConfig));
    // Another client's config for /mcp import, in Cursor's documented format.
    mkdirSync(path.join(home.dir, ".cursor"));
    writeFileSync(
      path.join(home.dir, ".cursor", "mcp.json"),
      JSON.stringify({ mcpServers: { fromcursor: hello(["--from-cursor"]) } }),
    );
    process.env.HOME = home.dir;
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    // The model calls the tools by name, so they are declared to it on both pi lines (pi 1.x defers them otherwise).
    writeFileSync(path.join(agentDir.dir, "mcp.json"), JSON.stringify({ exposure: "direct" }));
    process.chdir(project.dir);
  });

  beforeEach(async () => {
    await closePi();
    rmSync(trustFile(agentDir.dir), { force: true });
    writeProject({ hello: hello() });
  });

  after(async () => {
    await closePi();
    process.chdir(originalCwd);
    process.env.HOME = originalHome;
    for (const dir of [project, agentDir, home]) dir.cleanup();
  });

  async function startPi(ui: RecordingUI, projectTrusted = PI_TRUSTS): Promise<InProcessPi> {
    await closePi();
    pi = await startInProcessPi({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [EXTENSION_DIR],
      projectTrusted,
    });
    await pi.session.bindExtensions({ uiContext: ui.context() });
    return pi;
  }

  async function closePi(): Promise<void> {
    await pi?.close();
    pi = undefined;
  }

  const tools = (current: InProcessPi) => current.session.getAllTools().map((t) => t.name);

  /** The faux model calls `tool` once; the call's result and what the UI was asked meanwhile. */
  async function modelCalls(
    current: InProcessPi,
    ui: RecordingUI,
    tool: string,
    args: Record<string, unknown>,
    answers: unknown[] = [],
  ): Promise<{ text: string; asked: string[] }> {
    ui.answers = [...answers];
    const asked = ui.asked.length;
    current.faux.setResponses([
      fauxAssistantMessage([fauxToolCall(tool, args)], { stopReason: "toolUse" }),
      fauxAssistantMessage("done"),
    ]);
    await current.session.prompt(`call ${tool}`);
    assert.deepEqual(ui.answers, [], "every scripted answer was used");
    const result = (
      current.session.messages.filter(
        (m) => (m as { role: string }).role === "toolResult",
      ) as unknown as ToolResultMessage[]
    ).at(-1)!;
    assert.equal(result.toolName, tool);
    assert.equal(result.isError, false, JSON.stringify(result.content));
    return { text: result.content.map((c) => c.text ?? "").join("\n"), asked: ui.asked.slice(asked) };
  }

  async function command(
    current: InProcessPi,
    ui: RecordingUI,
    text: string,
    answers: unknown[] = [],
  ): Promise<string> {
    ui.answers = [...answers];
    const before = ui.notices.length;
    await current.session.prompt(text);
    assert.deepEqual(ui.answers, [], `every scripted answer was used by ${text}`);
    return ui.notices.slice(before).join("\n");
  }

  /** A session in which the project's servers run without anyone being asked, and `names`' tools are there. */
  async function startsUnasked(names: readonly string[]): Promise<{ current: InProcessPi; ui: RecordingUI }> {
    const ui = new RecordingUI();
    const current = await startPi(ui);
    for (const name of names)
      await waitFor(() => tools(current).includes(`mcp_${name}_greet`), `${name}'s tools, with no question`, 30_000);
    assert.deepEqual(ui.asked, [], "nobody was asked about trust");
    return { current, ui };
  }

  /**
   * The next session after an outside edit: on pi 0.73 the bridge asks about the changed server (declined here); on
   * pi 1.x, where pi's answer on the project ("not trusted") now decides for it, it is held and nobody is asked.
   */
  async function editedIsAskedAbout(edited: RegExp): Promise<void> {
    const ui = new RecordingUI();
    if (!PI_1X) ui.answers = [TRUST_NONE];
    const current = await startPi(ui);
    await waitFor(
      () => ui.notices.some((n) => n.includes("not trusted")),
      "the startup notice naming the untrusted server",
      30_000,
    );
    if (PI_1X) {
      assert.deepEqual(ui.asked, [], "pi 1.x answers for the project; the bridge asks nothing");
    } else {
      assert.equal(ui.asked.length, 1, ui.asked.join("\n"));
      assert.match(ui.asked[0]!, /\nhello {2}\(changed since you last answered\)\n/);
      assert.match(ui.asked[0]!, edited);
    }
    assert.equal(tools(current).includes("mcp_hello_greet"), false, "the edited server did not start");
    await closePi();
  }

  test("'Always allow' on a trusted project server: the next session asks nothing and the tool runs unasked; an outside edit asks again", async () => {
    // Trusted as the user trusts it: in the bridge's question (pi 0.73), or with /mcp trust where pi does not trust the project (pi 1.x).
    const ui = new RecordingUI();
    if (!PI_1X) ui.answers = [TRUST_ALL];
    const first = await startPi(ui);
    if (PI_1X) assert.match(await command(first, ui, "/mcp trust hello"), /hello: trusted, connected/);
    await waitFor(() => tools(first).includes("mcp_hello_greet"), "the trusted server's tools", 30_000);
    const always = await modelCalls(first, ui, "mcp_hello_greet", { name: "one" }, ["Always allow"]);
    assert.equal(always.text, "Hello, one!");
    assert.match(always.asked.join("\n"), /Allow MCP tool 'greet' of server 'hello'/);
    assert.deepEqual(readProject().hello!.autoApprove, ["greet"], "saved in the project's file");
    assert.ok(!ui.notices.some((n) => n.includes("trusted with it")), ui.notices.join("\n"));
    await closePi();

    const { current, ui: again } = await startsUnasked(["hello"]);
    const unasked = await modelCalls(current, again, "mcp_hello_greet", { name: "two" });
    assert.equal(unasked.text, "Hello, two!");
    assert.deepEqual(unasked.asked, [], "autoApprove lets it run without asking");
    await closePi();

    // Someone else changes the same server (an editor, a git pull): that is asked about again.
    writeProject({ hello: { ...readProject().hello!, args: [HELLO, "--edited"] } });
    await editedIsAskedAbout(/runs: .*hello-server\.mjs --edited\n {4}runs without asking: greet/);
  });

  test("a write on top of someone else's change does not bless it: the edit made during the session is asked about next time", async () => {
    await trustProjectServers(project.dir, agentDir.dir);
    const { current, ui } = await startsUnasked(["hello"]);
    // Edited while this session runs the definition the user trusted; then the user says "Always allow" in it.
    writeProject({ hello: hello(["--meanwhile"]) });
    const always = await modelCalls(current, ui, "mcp_hello_word_count", { text: "a b c" }, ["Always allow"]);
    assert.equal(always.text, "3", "this session's call runs: it is the server the user trusted");
    assert.deepEqual(
      readProject().hello,
      { ...hello(["--meanwhile"]), autoApprove: ["word_count"] },
      "written into the file as it is now",
    );
    await closePi();
    await editedIsAskedAbout(/runs: .*hello-server\.mjs --meanwhile\n {4}runs without asking: word_count/);
  });

  test("/mcp disable and enable, /mcp add and /mcp import into the project's file: the next session asks about none of them", async () => {
    await trustProjectServers(project.dir, agentDir.dir);
    const { current, ui } = await startsUnasked(["hello"]);
    assert.match(await command(current, ui, "/mcp disable hello"), /Disabled MCP server 'hello'/);
    assert.match(await command(current, ui, "/mcp enable hello"), /Enabled MCP server 'hello' .*: 2 tools/);
    const added = await command(current, ui, "/mcp add", [
      "A local command",
      `${process.execPath} ${HELLO} --added`,
      "added",
      "",
      "This project",
    ]);
    // Written and started at once: trusted as written, it connects.
    assert.match(added, /Added MCP server 'added' to .*\.pi\/mcp\.json: connected, 2 tools\./);
    const imported = await command(current, ui, "/mcp import", ["Import all", "This project"]);
    // Started at once too: trusted as written, it connects.
    assert.match(imported, /Imported 'fromcursor' \(cursor\) into .*\.pi\/mcp\.json: connected, 2 tools\./);
    assert.deepEqual(Object.keys(readProject()), ["hello", "added", "fromcursor"]);
    assert.ok(!ui.notices.some((n) => n.includes("trusted with it")), ui.notices.join("\n"));
    await closePi();

    await startsUnasked(["hello", "added", "fromcursor"]);
    await closePi();
  });

  test(
    "on pi 1.x, a server trusted only by pi's answer on the project: 'Always allow' records no answer of the bridge's, so pi's answer keeps deciding",
    { skip: PI_1X ? false : "pi 0.73 has no project trust of its own" },
    async () => {
      const ui = new RecordingUI();
      const first = await startPi(ui, true);
      await waitFor(() => tools(first).includes("mcp_hello_greet"), "the server of a project pi trusts", 30_000);
      await modelCalls(first, ui, "mcp_hello_greet", { name: "one" }, ["Always allow"]);
      assert.deepEqual(readProject().hello!.autoApprove, ["greet"]);
      await closePi();

      const again = new RecordingUI();
      const second = await startPi(again, true);
      await waitFor(
        () => tools(second).includes("mcp_hello_greet"),
        "the server, pi still trusting the project",
        30_000,
      );
      assert.deepEqual((await modelCalls(second, again, "mcp_hello_greet", { name: "two" })).asked, []);
      await closePi();

      // An answer recorded in the bridge would outlive pi's: once pi no longer trusts the project, the server stays off.
      const revoked = new RecordingUI();
      const third = await startPi(revoked, false);
      await waitFor(() => revoked.notices.some((n) => n.includes("not trusted")), "the startup notice", 30_000);
      assert.equal(tools(third).includes("mcp_hello_greet"), false);
      assert.deepEqual(revoked.asked, []);
      await closePi();
    },
  );
});
