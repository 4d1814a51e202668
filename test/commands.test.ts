/**
 * Every `/mcp` subcommand through pi's own command API, in-process, with a recording UI whose select/input/confirm
 * answers are scripted, against real fixture servers and real config files on disk.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import type { AgentSession } from "@mariozechner/pi-coding-agent";
import { visibleWidth } from "@mariozechner/pi-tui";
import { type InProcessPi, startInProcessPi } from "./pi-harness.ts";
import { startBridgeInPi } from "./bridge-in-pi.ts";
import { PI_LINE } from "./pi-line.ts";
import { RecordingUI } from "./recording-ui.ts";
import { type RunningServer, startStreamableHttp } from "./fixtures/http-servers.ts";
import {
  EXTENSION_DIR,
  fixtureEntry,
  isAlive,
  readLog,
  REPO_ROOT,
  tempDir,
  trustProjectServers,
  waitFor,
} from "./helpers.ts";

const HELLO = path.join(REPO_ROOT, "examples", "hello-server.mjs");

describe("/mcp subcommands (pi's command API, scripted UI)", { timeout: 120_000 }, () => {
  const project = tempDir("mcp-bridge-cmd-project-");
  const agentDir = tempDir("mcp-bridge-cmd-agent-");
  const home = tempDir("mcp-bridge-cmd-home-");
  const log = path.join(project.dir, "events.jsonl");
  const projectConfig = path.join(project.dir, ".pi", "mcp.json");
  const userConfig = path.join(agentDir.dir, "mcp.json");
  const originalCwd = process.cwd();
  const originalHome = process.env.HOME;
  const ui = new RecordingUI();
  let remote: RunningServer;
  let pi: InProcessPi;
  let session: AgentSession;

  before(async () => {
    remote = await startStreamableHttp();
    mkdirSync(path.dirname(projectConfig), { recursive: true });
    // Key order and 4-space indentation on purpose: edits must keep them.
    writeFileSync(
      projectConfig,
      `{\n    "mcpServers": {\n        "local": ${JSON.stringify({ ...fixtureEntry(), env: { FIXTURE_LOG: log } })},\n        "web": {"url": "${remote.url}"}\n    }\n}\n`,
    );
    // `auto`, the default on pi 0.73, on both pi lines: these tests watch tools enter and leave the model's view.
    writeFileSync(
      userConfig,
      JSON.stringify(
        { exposure: "auto", mcpServers: { shared: { command: process.execPath, args: [HELLO] } } },
        null,
        2,
      ),
    );
    // Another client's config for /mcp import, in Cursor's documented format.
    mkdirSync(path.join(home.dir, ".cursor"));
    writeFileSync(
      path.join(home.dir, ".cursor", "mcp.json"),
      JSON.stringify({
        mcpServers: {
          fromcursor: { command: process.execPath, args: [HELLO] },
          leaky: { command: "x", args: ["--api-key", "argsecret-98765"], env: { API_TOKEN: "sk-live-abcdef123456" } },
        },
      }),
    );
    process.env.HOME = home.dir;
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    // The project's servers are the test's own: trusted, as "trust all" would record it.
    await trustProjectServers(project.dir, agentDir.dir);
    pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
    ({ session } = pi);

    await session.bindExtensions({ uiContext: ui.context() });
  });

  after(async () => {
    await pi?.close();
    process.chdir(originalCwd);
    process.env.HOME = originalHome;
    await remote?.close();
    for (const dir of [project, agentDir, home]) dir.cleanup();
  });

  async function run(command: string, answers: unknown[] = []): Promise<string> {
    ui.answers = [...answers];
    const before = ui.notices.length;
    await session.prompt(command);
    assert.deepEqual(ui.answers, [], `every scripted answer was used by ${command}`);
    return ui.notices.slice(before).join("\n");
  }

  const tools = () => session.getAllTools().map((t) => t.name);

  test("argument completion offers subcommands, then server names, then flags", async () => {
    const command = session.extensionRunner.getCommand("mcp")!;
    // The first completion loads the command's code (pi awaits a completion).
    const subs = ((await command.getArgumentCompletions?.("re")) ?? []) as Array<{ value: string }>;
    assert.deepEqual(subs.map((s) => s.value).sort(), ["reconnect", "remove", "resources"]);
    const servers = ((await command.getArgumentCompletions?.("test lo")) ?? []) as Array<{ value: string }>;
    assert.deepEqual(
      servers.map((s) => s.value),
      ["test local"],
    );
    // `trust` takes a flag, once typed or after a server (and the other project servers, as it takes several).
    for (const [typed, ...completed] of [
      ["trust --s", "trust --sandboxed"],
      ["trust local ", "trust local web", "trust local --sandboxed"],
      ["add fs --cw", "add fs --cwd"],
      ["import --a", "import --all"],
      // Only a server that may use OAuth can be signed in to or out of: not a local one.
      ["auth ", "auth web"],
      ["logout ", "logout web"],
    ]) {
      const offered = ((await command.getArgumentCompletions?.(typed!)) ?? []) as Array<{ value: string }>;
      assert.deepEqual(
        offered.map((s) => s.value),
        completed,
        typed,
      );
    }
  });

  test("the footer shows MCP up/total", () => {
    assert.equal(ui.statuses.get("mcp"), "MCP 3/3");
  });

  test("/mcp opens the live dashboard: the table, a server's tools, metrics and log, Esc closes", async () => {
    ui.keys = ["\x1b[B", "\r", "\x1b", "\x1b"];
    await run("/mcp");
    const [table, moved, detail, back] = ui.screens.slice(-4);
    assert.equal(table![0], "MCP Server Status");
    assert.ok(
      table!.some((l) => /^> local +🟢/.test(l)),
      table!.join("\n"),
    );
    assert.ok(
      moved!.some((l) => /^> web +🟢/.test(l)),
      "↓ moved the cursor",
    );
    assert.match(detail!.join("\n"), /web {2}connected {2}http/);
    assert.match(detail!.join("\n"), /- mcp_web_echo {2}\(echo\)/);
    assert.ok(
      back!.some((l) => /^> web/.test(l)),
      "Esc went back to the table",
    );
    const localDetail = ui.screens.length;
    ui.keys = ["\r", "\x1b", "\x1b"];
    await run("/mcp");
    assert.match(
      ui.screens[localDetail + 1]!.join("\n"),
      /Last lines of its log:[\s\S]*fixture server starting/,
      "the server's stderr log tail",
    );
  });

  test("a server's details in the dashboard wrap to a narrow terminal: read whole, never cut", async () => {
    ui.width = 40;
    ui.keys = ["\x1b[B", "\r", "\x1b", "\x1b"];
    try {
      await run("/mcp");
    } finally {
      ui.width = 200;
    }
    const [table, , detail] = ui.screens.slice(-4);
    assert.ok(table!.every((l) => visibleWidth(l) <= 40) && detail!.every((l) => visibleWidth(l) <= 40));
    assert.ok(
      table!.some((l) => l.includes("...")),
      "the table's rows are cut to the width",
    );
    const words = (lines: string[]) => lines.join(" ").split(/\s+/).join(" ");
    assert.match(
      words(detail!),
      /^web connected http MCP [\d-]+ \d+ tools? about [\d,]+ tokens per request \(project\)/,
    );
    assert.match(words(detail!), / Esc: back to the table$/);
    assert.ok(detail!.includes(""), "blank lines between the parts are kept");
  });

  test("/mcp in a UI without custom components (pi's RPC mode) shows the table as text", async () => {
    ui.noCustom = true;
    try {
      assert.match(await run("/mcp"), /^MCP Server Status\n/);
    } finally {
      ui.noCustom = false;
    }
  });

  test("/mcp list and /mcp tools as text", async () => {
    const list = await run("/mcp list");
    assert.match(list, /^ {2}3 servers configured \| 3 connected/m);
    const all = await run("/mcp tools");
    assert.match(all, /mcp_local_echo {2}· {2}mcp:local\/echo {2}· {2}project {2}· {2}direct \(auto\)/);
    const one = await run("/mcp tools shared");
    assert.match(one, /mcp_shared_greet/);
    assert.doesNotMatch(one, /mcp_local_echo/);
  });

  test("/mcp logs: a local server's stderr and what the bridge logged about it, with each file; a remote one has no stderr", async () => {
    const local = await run("/mcp logs local");
    const stderrLog = path.join(agentDir.dir, "mcp-bridge", "servers", "local.log");
    const bridgeLog = path.join(agentDir.dir, "mcp-bridge", "mcp.log");
    assert.match(
      local,
      new RegExp(
        `^MCP server 'local': the last \\d+ lines? it wrote to stderr \\(${stderrLog}\\):\n {4}\\d\\d:\\d\\d:\\d\\d fixture server starting`,
      ),
    );
    // The bridge's records of this server only, each an event with its plain fields on one line.
    const records = local.slice(local.indexOf("What the bridge logged")).split("\n");
    assert.match(
      records[0]!,
      new RegExp(`^What the bridge logged about it, the last \\d+ records? \\(${bridgeLog}\\):$`),
    );
    assert.ok(
      records.some((r) =>
        /^ {4}(?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d connected attempt=0 transport=stdio durationMs=\d+ toolCount=\d+$/.test(
          r,
        ),
      ),
      local,
    );
    const web = await run("/mcp logs web");
    assert.match(web, /^MCP server 'web' is remote: it has no stderr\.\nWhat the bridge logged about it/);
    assert.doesNotMatch(web, /transport=stdio/, "another server's records are not shown");
  });

  test("/mcp test connects afresh, lists tools with sizes, registers nothing; a broken server gets its classified error", async () => {
    const before = readLog(log).filter((e) => e.event === "start").length;
    const toolsBefore = tools().length;
    const ok = await run("/mcp test", ["local"]);
    const total =
      /MCP server 'local' works: connected in \d+ ms over stdio, \d+ tools; declared directly they would add ([\d,]+) characters to each request \(about ([\d,]+) tokens\)/.exec(
        ok,
      );
    assert.ok(total, ok);
    // The estimate counts each tool's entry in a request, exactly: pi's own name, description and parameters in the
    // wrapper of the API pi-ai would use (the faux model's API is none it lists, so OpenAI Chat Completions', whose
    // `strict: false` only pi 0.73 sends). test/request-cost.test.ts checks it against real request bodies.
    const strict = PI_LINE === "0.73" ? { strict: false } : {};
    const sent = session
      .getAllTools()
      .filter((t) => t.name.startsWith("mcp_local_"))
      .reduce((n, t) => {
        const entry = { name: t.name, description: t.description, parameters: t.parameters, ...strict };
        return n + JSON.stringify({ type: "function", function: entry }).length;
      }, 0);
    assert.equal(Number(total[1]!.replace(/,/g, "")), sent);
    assert.equal(Number(total[2]!.replace(/,/g, "")), Math.ceil(sent / 4));
    assert.match(ok, /^ {2}echo {2}[\d,]+ characters \(about [\d,]+ tokens\)$/m);
    const starts = readLog(log).filter((e) => e.event === "start");
    assert.equal(starts.length, before + 1, "a process of its own");
    await waitFor(() => !isAlive(starts.at(-1)!.pid), "the test connection's process to end");
    assert.equal(tools().length, toolsBefore, "nothing registered");
    await remote.close();
    const failed = await run("/mcp test web");
    assert.match(failed, /MCP server 'web' failed the test \[transport\]: .*(ECONNREFUSED|connection refused)/);
    remote = await startStreamableHttp({ port: remote.port });
    // The live connection dropped with the server: the next tests start from all three connected again.
    const webConnected = async () => /^ {2}web +🟢/m.test(await run("/mcp list"));
    await waitFor(webConnected, "'web' to reconnect to its restarted server", 60_000, 250);
  });

  test("/mcp reconnect starts a server afresh", async () => {
    const starts = () => readLog(log).filter((e) => e.event === "start").length;
    const before = starts();
    const text = await run("/mcp reconnect local");
    assert.match(text, /Reconnected to MCP server 'local': \d+ tools/);
    assert.equal(starts(), before + 1);
  });

  test("/mcp enable of a server enabled and running already: it keeps running, not restarted", async () => {
    const starts = () => readLog(log).filter((e) => e.event === "start").length;
    const before = starts();
    const file = readFileSync(projectConfig, "utf8");
    assert.match(await run("/mcp enable local"), /Enabled MCP server 'local' in .*mcp\.json: \d+ tools\./);
    assert.equal(starts(), before, "no second start of its process");
    // A project file is often committed: enabling what is enabled leaves it as it was, not a diff to commit.
    assert.equal(readFileSync(projectConfig, "utf8"), file);
  });

  test("/mcp disable and enable: saved in the defining file, or as this project's override of a user server; tools leave at once", async () => {
    const text = await run("/mcp disable web");
    assert.match(text, /Disabled MCP server 'web' in .*\.pi\/mcp\.json; its tools are gone/);
    const saved = readFileSync(projectConfig, "utf8");
    assert.match(saved, /"web": \{\s*"url": "[^"]+",\s*"enabled": false\s*\}/);
    assert.match(saved, /^ {8}"local": /m, "the rest of the file kept its indentation");
    assert.equal(session.getActiveToolNames().includes("mcp_web_echo"), false);
    // Its Details say why it is ⚫ (disabled, not off for this session), as for a server disabled at load.
    assert.match(await run("/mcp list"), /^ {2}web +⚫ .*disabled$/m);

    await run("/mcp disable shared", ["Only in this project"]);
    assert.match(readFileSync(projectConfig, "utf8"), /"shared": \{\s*"enabled": false\s*\}/);
    assert.doesNotMatch(readFileSync(userConfig, "utf8"), /enabled/, "the user file is untouched");

    const enabled = await run("/mcp enable web");
    assert.match(enabled, /Enabled MCP server 'web' in .*mcp\.json: \d+ tools\./);
    assert.match(readFileSync(projectConfig, "utf8"), /"enabled": true/);
    assert.ok(session.getActiveToolNames().includes("mcp_web_echo"), "its tools are back, without a reload");
    assert.match(await run("/mcp list"), /web +🟢/);
  });

  test('/mcp enable of a server its file switches off with `"disabled": true`: saved so that it loads enabled', async () => {
    await run("/mcp disable web");
    writeFileSync(projectConfig, readFileSync(projectConfig, "utf8").replace('"enabled": false', '"disabled": true'));
    assert.match(await run("/mcp enable web"), /Enabled MCP server 'web'/);
    const saved = JSON.parse(readFileSync(projectConfig, "utf8")) as {
      mcpServers: Record<string, Record<string, unknown>>;
    };
    assert.equal(saved.mcpServers.web!.disabled, undefined, JSON.stringify(saved.mcpServers.web));
    assert.equal(saved.mcpServers.web!.enabled, true);
  });

  test("/mcp enable of a user server this project's file switched off: switched on there, where the switch decides", async () => {
    const text = await run("/mcp enable shared");
    assert.match(text, /Enabled MCP server 'shared' in .*\.pi\/mcp\.json: \d+ tools\./);
    assert.match(readFileSync(projectConfig, "utf8"), /"shared": \{\s*"enabled": true\s*\}/);
    assert.doesNotMatch(readFileSync(userConfig, "utf8"), /enabled/, "the user file is untouched");
  });

  test("/mcp remove deletes the entry from its file (confirmed) and the tools leave", async () => {
    const declined = await run("/mcp remove local", [false]);
    assert.match(declined, /Nothing removed/);
    const text = await run("/mcp remove", ["local", true]);
    assert.match(text, /Removed MCP server 'local' from .*mcp\.json; its tools are gone/);
    assert.doesNotMatch(readFileSync(projectConfig, "utf8"), /"local"/);
    assert.equal(session.getActiveToolNames().includes("mcp_local_echo"), false);
    assert.equal((await run("/mcp list")).includes("local"), false);
  });

  test("/mcp import: finds Cursor's servers, imports the chosen ones and starts them at once, and keeps inline secrets out of the project file", async () => {
    const text = await run("/mcp import", ["Choose one by one", true, true, "This project", "No"]);
    assert.match(text, /Found 2 MCP servers in other clients/);
    assert.match(text, /inline secrets: env\.API_TOKEN/);
    assert.doesNotMatch(text, /sk-live/, "never the secret's value");
    assert.match(text, /x --api-key \*\*\*/, "nor a key on its command line");
    assert.match(text, /Imported 'fromcursor' \(cursor\) into .*\.pi\/mcp\.json: connected, 2 tools\./);
    assert.ok(tools().includes("mcp_fromcursor_greet"), "its tools are there without a reload");
    assert.ok(!ui.asked.some((question) => /Reload/.test(question)), ui.asked.join("\n"));
    assert.match(text, /Skipped leaky: has inline secrets/);
    const saved = JSON.parse(readFileSync(projectConfig, "utf8")) as {
      mcpServers: Record<string, Record<string, unknown>>;
    };
    assert.equal(saved.mcpServers.fromcursor!.importedFrom, "cursor");
    assert.equal(saved.mcpServers.leaky, undefined);
  });

  test("/mcp import with words asks nothing: names or --all, --local, --replace; a wrong word says how", async () => {
    const asked = ui.asked.length;
    const replaced = await run("/mcp import fromcursor --local --replace");
    assert.deepEqual(ui.asked.slice(asked), [], "no question");
    assert.match(replaced, /Imported 'fromcursor' \(cursor\) into .*\.pi\/mcp\.json: connected, 2 tools\./);
    // Into the project's file, without --replace now, and with inline secrets: each skipped, saying why.
    const skipped = await run("/mcp import --all -l");
    assert.match(
      skipped,
      /Nothing imported\.\nSkipped fromcursor: already configured \(--replace replaces it\)\.\nSkipped leaky: has inline secrets/,
    );
    assert.doesNotMatch(readFileSync(projectConfig, "utf8"), /sk-live/);
    assert.match(
      await run("/mcp import nosuch"),
      /Not found in other clients' configs: nosuch\. Found: fromcursor, leaky\./,
    );
    assert.match(
      await run("/mcp import --all fromcursor"),
      /Name the servers to import, or say --all \(not both\)\.\nUsage:/,
    );
    assert.match(await run("/mcp import --sideways"), /Unknown option '--sideways'/);
    assert.match(await run("/mcp import --local"), /Name the servers to import, or say --all \(not both\)\./);
  });

  // `/mcp add` refuses the two options that name different files; import took the project's file without a word.
  test("/mcp import with --local and --scope user is refused, as /mcp add refuses them, not imported into one of them", async () => {
    assert.match(
      await run("/mcp import fromcursor --local --scope user"),
      /^--local and --scope user say different files\.\nUsage:/,
    );
  });

  test("/mcp import with words says what it could not import: a server named that cannot be is not 'not found'", async () => {
    const vscode = path.join(project.dir, ".vscode", "mcp.json");
    mkdirSync(path.dirname(vscode), { recursive: true });
    writeFileSync(vscode, JSON.stringify({ servers: { broken: { url: "wss://mcp.example.com/mcp" } } }));
    try {
      const text = await run("/mcp import broken");
      assert.match(text, /server "broken": `url` must use http or https \(got wss\); not imported/);
    } finally {
      rmSync(path.dirname(vscode), { recursive: true });
    }
  });

  test("/mcp import's list hides every argument it flags as an inline secret, whatever the flag before it", async () => {
    const vscode = path.join(project.dir, ".vscode", "mcp.json");
    mkdirSync(path.dirname(vscode), { recursive: true });
    const args = [
      "-y",
      "@smithery/cli@latest",
      "run",
      "@upstash/context7-mcp",
      "--key",
      "1f2e3d4c-5b6a-4789-9abc-def012345678",
    ];
    // Zapier's URL holds its key in its path.
    const zapier = {
      url: "https://mcp.zapier.com/api/mcp/s/NjNkNTc4ZDMtMjA0Zi00MjEzLWJhMmEtODJhZjRkNjU4NDI2OjE2Yzk0Zm==/mcp",
    };
    writeFileSync(vscode, JSON.stringify({ servers: { smithery: { command: "npx", args }, zapier } }));
    try {
      const text = await run("/mcp import", ["Cancel"]);
      assert.match(text, /inline secrets: args\[5\]/);
      assert.doesNotMatch(text, /1f2e3d4c/, "never the secret's value");
      assert.match(text, /zapier .* https:\/\/mcp\.zapier\.com\/api\/mcp\/s\/\*\*\*\/mcp\n/);
    } finally {
      rmSync(path.dirname(vscode), { recursive: true });
    }
  });

  test("/mcp add: a stdio server, step by step; started at once, its tools are there without a reload", async () => {
    const text = await run("/mcp add", ["A local command", `${process.execPath} ${HELLO}`, "", "", "This project"]);
    assert.match(text, /Added MCP server 'hello' to .*\.pi\/mcp\.json: connected, 2 tools\./);
    assert.match(
      ui.asked.join("\n"),
      /input: A name for it \(Enter for 'hello'\)/,
      "a name suggested from the script's file name",
    );
    const saved = JSON.parse(readFileSync(projectConfig, "utf8")) as {
      mcpServers: Record<string, Record<string, unknown>>;
    };
    assert.deepEqual(saved.mcpServers.hello, { command: process.execPath, args: [HELLO] });
    assert.ok(session.getActiveToolNames().includes("mcp_hello_greet"), "its tools, without a reload");
  });

  test("/mcp add step by step: Escape at the name ends it, asking nothing more and adding nothing", async () => {
    const before = readFileSync(projectConfig, "utf8");
    const text = await run("/mcp add", ["A local command", `${process.execPath} ${HELLO}`, undefined]);
    assert.equal(text, "No server added.");
    assert.equal(readFileSync(projectConfig, "utf8"), before);
  });

  test("/mcp add step by step: a secret typed into the command is not written into the project file", async () => {
    const before = readFileSync(projectConfig, "utf8");
    const command = `${process.execPath} ${HELLO} --api-key argsecret-98765`;
    const text = await run("/mcp add", ["A local command", command, "keyedhere", "", "This project"]);
    assert.match(text, /Not added: 'keyedhere' would write secrets into the project file .* \(args\[2\]\)/);
    assert.equal(readFileSync(projectConfig, "utf8"), before);
  });

  // A README's server that needs a key (BRAVE_API_KEY): a local server gets only the variables its `env` names.
  test("/mcp add: a stdio server's variables, by name: its env passes each from pi's, no value is written", async () => {
    const text = await run("/mcp add", [
      "A local command",
      `${process.execPath} ${HELLO}`,
      "keyed",
      "2KEY",
      "MCP_TEST_BRAVE_KEY, MCP_TEST_REGION=eu-west-1 HOME",
      "All projects",
    ]);
    assert.match(text, /'2KEY' is not an environment variable name/);
    assert.match(text, /'keyed' needs MCP_TEST_BRAVE_KEY, MCP_TEST_REGION, which are not set/);
    const saved = JSON.parse(readFileSync(userConfig, "utf8")) as {
      mcpServers: Record<string, Record<string, unknown>>;
    };
    assert.deepEqual(saved.mcpServers.keyed, {
      command: process.execPath,
      args: [HELLO],
      env: { MCP_TEST_BRAVE_KEY: "${MCP_TEST_BRAVE_KEY}", MCP_TEST_REGION: "${MCP_TEST_REGION}", HOME: "${HOME}" },
    });
    assert.doesNotMatch(readFileSync(userConfig, "utf8"), /eu-west-1/, "a value typed with a name is not written");
  });

  test("/mcp add: for a server named with a digit first, the variable suggested is one Enter can take", async () => {
    const text = await run("/mcp add", ["A URL", "https://mcp.linear.app/mcp", "1pass", "Bearer", "", "All projects"]);
    assert.doesNotMatch(text, /is not an environment variable name/);
    const saved = JSON.parse(readFileSync(userConfig, "utf8")) as { mcpServers: Record<string, { headers?: object }> };
    assert.deepEqual(saved.mcpServers["1pass"]?.headers, { Authorization: "Bearer ${MCP_1PASS_TOKEN}" });
  });

  test("/mcp add: a remote server with a token from a variable that is not set says how to set it", async () => {
    const text = await run("/mcp add", [
      "A URL",
      "https://mcp.linear.app/mcp",
      "",
      "Bearer",
      "LINEAR_TOKEN_FOR_TEST",
      "All projects",
    ]);
    assert.match(
      text,
      /'linear' needs LINEAR_TOKEN_FOR_TEST, which is not set\. Set LINEAR_TOKEN_FOR_TEST in the environment/,
    );
    const saved = JSON.parse(readFileSync(userConfig, "utf8")) as {
      mcpServers: Record<string, Record<string, unknown>>;
    };
    assert.deepEqual(saved.mcpServers.linear, {
      url: "https://mcp.linear.app/mcp",
      headers: { Authorization: "Bearer ${LINEAR_TOKEN_FOR_TEST}" },
    });
    assert.match(await run("/mcp add", ["A URL", "not a url"]), /The URL is not a valid URL/);
  });

  test("/mcp add: Enter at the header and the variable takes what each suggests, as at the name", async () => {
    await run("/mcp add", ["A URL", remote.url, "suggested", "API key header", "", "", "All projects"]);
    const saved = JSON.parse(readFileSync(userConfig, "utf8")) as { mcpServers: Record<string, unknown> };
    assert.deepEqual(saved.mcpServers.suggested, {
      url: remote.url,
      headers: { "X-API-Key": "${SUGGESTED_API_KEY}" },
    });
  });

  test("/mcp add: an API key's header name typed as a docs page writes it ('X-API-Key:') is asked again", async () => {
    const text = await run("/mcp add", [
      "A URL",
      remote.url,
      "keyedweb",
      "API key header",
      "X-API-Key:",
      "X-API-Key",
      "KEYEDWEB_KEY",
      "All projects",
    ]);
    assert.match(text, /'X-API-Key:' is not a header name/);
    const saved = JSON.parse(readFileSync(userConfig, "utf8")) as { mcpServers: Record<string, unknown> };
    assert.deepEqual(saved.mcpServers.keyedweb, { url: remote.url, headers: { "X-API-Key": "${KEYEDWEB_KEY}" } });
  });

  test("/mcp add: a command line that runs mcp-remote adds the remote server it reaches, asking how it signs in", async () => {
    const asked = ui.asked.length;
    const text = await run("/mcp add", [
      "A local command",
      "npx -y mcp-remote https://mcp.example.com/sse --header X-Team:blue",
      "",
      "OAuth",
      "All projects",
    ]);
    assert.match(
      text,
      /mcp-remote reaches https:\/\/mcp\.example\.com\/sse: it is added as that remote server, .* \(its --header and OAuth flags are not: answer below how it signs in\)/,
    );
    assert.ok(
      ui.asked.slice(asked).some((q) => q.includes("How does it authenticate?")),
      ui.asked.slice(asked).join("\n"),
    );
    const saved = JSON.parse(readFileSync(userConfig, "utf8")) as { mcpServers: Record<string, { url?: string }> };
    const added = Object.values(saved.mcpServers).find((entry) => entry.url === "https://mcp.example.com/sse");
    assert.deepEqual(added, { url: "https://mcp.example.com/sse", auth: "oauth" });
  });

  test("/mcp add on one line: written and started at once, no reload; an entry of that name is replaced only when asked", async () => {
    const projectEntries = () =>
      (JSON.parse(readFileSync(projectConfig, "utf8")) as { mcpServers: Record<string, unknown> }).mcpServers;
    const hello = `-- ${process.execPath} ${HELLO}`;
    const text = await run(`/mcp add -l oneline --description 'Greets people' ${hello}`);
    assert.match(
      text,
      /^Starting MCP server 'oneline'…\nAdded MCP server 'oneline' to .*\.pi\/mcp\.json: connected, 2 tools\.$/,
    );
    const entry = { command: process.execPath, args: [HELLO], description: "Greets people" };
    assert.deepEqual(projectEntries().oneline, entry);
    assert.ok(tools().includes("mcp_oneline_greet"), "its tools are there without a reload");
    // The same name again: asked, and No keeps the entry and the server.
    assert.equal(await run(`/mcp add -l oneline -- node elsewhere.mjs`, [false]), "No server added.");
    assert.match(ui.asked.at(-1)!, /'oneline' is in .*mcp\.json already\. Replace its entry\?/);
    assert.deepEqual(projectEntries().oneline, entry);
    // --replace asks nothing: the new entry's server takes the old one's place.
    const replaced = await run(`/mcp add oneline --scope project --replace --description 'Says hello' ${hello}`);
    assert.match(replaced, /\nAdded MCP server 'oneline' to .*: connected, 2 tools\.$/);
    assert.deepEqual(projectEntries().oneline, { ...entry, description: "Says hello" });
    assert.ok(tools().includes("mcp_oneline_greet"));
    // A project file is often committed: a literal secret is not written into it.
    const leaky = await run(`/mcp add -l leaky2 --env API_TOKEN=sk-live-abcdef1234567890abcd ${hello}`);
    assert.match(leaky, /^Not added: 'leaky2' would write secrets into the project file .* \(env\.API_TOKEN\)/);
    assert.doesNotMatch(readFileSync(projectConfig, "utf8"), /leaky2|sk-live/);
    assert.doesNotMatch(leaky, /sk-live/, "the value is not shown");
    assert.match(await run("/mcp add oneline --cwd"), /^--cwd needs a value\.\nUsage: \/mcp add <server>/);
    // The filesystem server keeps to the directories named (the hello server stands in for it, ignoring them).
    await run(`/mcp add -l notes ${hello} @modelcontextprotocol/server-filesystem /srv/notes`);
    assert.equal((projectEntries().notes as { roots?: boolean }).roots, false);
  });

  test("/mcp auth and /mcp logout on a server without OAuth say so; unknown names and subcommands are explained", async () => {
    assert.match(await run("/mcp auth shared"), /MCP server 'shared' does not use OAuth \(it is a local server\)/);
    assert.match(await run("/mcp logout shared"), /Nothing stored for MCP server 'shared'/);
    assert.match(await run("/mcp reconnect nosuch"), /No MCP server named 'nosuch'\. Configured: /);
    assert.match(await run("/mcp tools nosuch"), /^No MCP server named 'nosuch'\. Configured: /);
    const unknown = await run("/mcp frobnicate");
    assert.match(unknown, /^Unknown \/mcp subcommand 'frobnicate'\. Subcommands:\n {2}list {7}Every server's state/);
    assert.match(await run("/mcp lst"), /^Unknown \/mcp subcommand 'lst'\. Did you mean 'list'\? Subcommands:\n/);
    const help = await run("/mcp help");
    assert.match(help, /^\/mcp alone shows the servers\. Subcommands:\n/);
    const listed = [...help.matchAll(/^ {2}(\S+) +\S/gm)].map(([, name]) => name);
    assert.deepEqual(
      listed,
      ["list", "tools", "prompts", "resources", "logs", "add", "remove", "test", "reconnect", "enable"].concat([
        "disable",
        "off",
        "on",
        "import",
        "auth",
        "logout",
        "trust",
        "untrust",
        "doctor",
      ]),
    );
    assert.equal(unknown.split("\n").slice(1).join("\n"), help.split("\n").slice(1).join("\n"), "the same table");
  });

  test("/mcp remove of a user server this project's file switches: the switch goes too, not left to fail the next load", async () => {
    assert.match(readFileSync(projectConfig, "utf8"), /"shared": \{\s*"enabled": true\s*\}/);
    assert.match(await run("/mcp remove shared", [true]), /Removed MCP server 'shared' from .*mcp\.json/);
    assert.doesNotMatch(readFileSync(userConfig, "utf8"), /"shared"/);
    assert.doesNotMatch(readFileSync(projectConfig, "utf8"), /"shared"/);
  });
});

describe("/mcp test when the session ends while it connects", { timeout: 60_000 }, () => {
  test("/reload ends the test's own server too, and the command ends without a stale-context error", async () => {
    const logs = tempDir("mcp-bridge-test-reload-");
    const log = path.join(logs.dir, "slow.jsonl");
    // Deaf until a file that never comes: the test's connect waits for it.
    const args = [path.join(REPO_ROOT, "test", "fixtures", "slow-start.mjs"), "--until", path.join(logs.dir, "never")];
    const slow = { command: process.execPath, args, env: { FIXTURE_LOG: log } };
    const run = await startBridgeInPi({
      mcpConfig: { mcpServers: { slow } },
      uiContext: new RecordingUI().context(),
      startupBudgetMs: 100,
    });
    const starts = () => readLog(log).filter((e) => e.event === "start");
    try {
      await waitFor(() => starts().length === 1, "the configured server to start");
      const testing = run.pi.session.prompt("/mcp test slow");
      await waitFor(() => starts().length === 2, "the test's own server to start");
      await run.pi.session.reload();
      await waitFor(() => !isAlive(starts()[1]!.pid), "the test's server to end with the session");
      await testing;
    } finally {
      await run.close();
      logs.cleanup();
    }
  });
});
