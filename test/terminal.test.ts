/**
 * The real pi TUI (interactive mode) in tmux, with the extension and a faux model: what a user sees when typing /mcp.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { helloServer, isAlive, REPO_ROOT, tempDir } from "./helpers.ts";
import { type PiInTmux, processesWithEnv, startPiInTmux, TMUX_UNSUPPORTED_PLATFORM } from "./tmux.ts";

/** The footer shows the selected model once the TUI is up and the editor takes input. */
const READY = /faux-1\s*$/m;

// Skipped only where they cannot work. On Linux a missing tmux fails each test (startPiInTmux says how to install
// it), so a CI image without tmux is noticed instead of passing silently.
describe("pi's terminal UI in tmux", { timeout: 120_000, skip: TMUX_UNSUPPORTED_PLATFORM ?? false }, () => {
  const running: PiInTmux[] = [];
  const temps: Array<{ cleanup: () => void }> = [];
  after(async () => {
    await Promise.allSettled(running.map((pi) => pi.stop()));
    for (const temp of temps) temp.cleanup();
  });

  test("/mcp lists a connected server and a failing one, with the totals; no server process outlives pi", async () => {
    const tmp = tempDir();
    temps.push(tmp);
    // A value only the hello server's environment holds: how the test finds its process.
    const marker = `good-${process.pid}-${Date.now()}`;
    const config = path.join(tmp.dir, "mcp.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          good: {
            command: process.execPath,
            args: [helloServer()],
            env: { MCP_TMUX_TEST_SERVER: marker },
          },
          bad: { command: "mcp-bridge-no-such-command" },
        },
      }),
    );
    const pi = startPiInTmux({
      args: ["--mcp-config", config],
      cwd: tmp.dir,
      env: { PI_MCP_STARTUP_BUDGET_MS: "60000" },
    });
    running.push(pi);

    await pi.waitForScreen(READY, 60_000);
    const servers = processesWithEnv("MCP_TMUX_TEST_SERVER", marker);
    assert.equal(servers.length, 1, `one hello server runs:\n${pi.capture()}`);

    // A turn of the faux model first: its answer marks where the /mcp output starts (pi's startup notices above it
    // name the servers too).
    pi.type("before mcp");
    pi.press("Enter");
    await pi.waitForScreen(/^ *faux: before mcp *$/m, 20_000);
    pi.type("/mcp");
    pi.press("Enter");
    const screen = await pi.waitForScreen(/2 servers configured \| 1 connected/, 30_000);
    // The layout of /mcp may change (a table, a list); these facts should not. Emoji may come with padding in
    // capture-pane, so each fact is a line that holds the name and one of the marks.
    const all = screen.split("\n");
    const lines = all.slice(all.findIndex((l) => /^ *faux: before mcp *$/.test(l)) + 1);
    assert.ok(
      lines.some((l) => /\bgood\b/.test(l) && /🟢|\bconnected\b/u.test(l)),
      `a line shows good as connected:\n${screen}`,
    );
    assert.ok(
      lines.some((l) => /\bbad\b/.test(l) && /🔴|✕|\berror\b|\bfailed\b|not found/iu.test(l)),
      `a line shows bad with an error:\n${screen}`,
    );
    assert.ok(!lines.some((l) => /\bbad\b/.test(l) && /🟢/u.test(l)), `bad is not shown as connected:\n${screen}`);

    await pi.stop();
    assert.deepEqual(servers.filter(isAlive), [], "the hello server ended with pi");
    assert.deepEqual(processesWithEnv("MCP_TMUX_TEST_SERVER", marker), []);
  });

  test("the faux model calls a server's tool from the TUI and the result is shown", async () => {
    const tmp = tempDir();
    temps.push(tmp);
    const config = path.join(tmp.dir, "mcp.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          good: { command: process.execPath, args: [helloServer()] },
        },
      }),
    );
    const pi = startPiInTmux({
      args: ["--mcp-config", config],
      cwd: tmp.dir,
      env: { PI_MCP_STARTUP_BUDGET_MS: "60000" },
    });
    running.push(pi);

    await pi.waitForScreen(READY, 60_000);
    pi.type('call mcp_good_greet {"name":"Terminal"}');
    pi.press("Enter");
    // The first call of an MCP tool asks: pi's select dialog, whose first choice is "Allow once".
    await pi.waitForScreen(/Allow MCP tool 'greet' of server 'good'[\s\S]*Allow for this session/, 30_000);
    pi.press("Enter");
    // The tool's output in pi's tool box, then the model's answer built from the tool result.
    const screen = await pi.waitForScreen(/faux: tool result: Hello, Terminal!/, 30_000);
    assert.match(screen, /mcp_good_greet/);
    await pi.stop();
  });

  // pi 0.73 draws its chat anew from the session once a reload's session_start is done: a notice given in it was
  // wiped, so a server added with /mcp add that failed after the reload said nothing.
  test("after /reload the startup notice is shown again: a server that fails says why", async () => {
    const tmp = tempDir();
    temps.push(tmp);
    const config = path.join(tmp.dir, "mcp.json");
    const asks = "echo 'Error: MCP_TEST_KEY environment variable is required' >&2; exit 1";
    writeFileSync(config, JSON.stringify({ mcpServers: { keyless: { command: "sh", args: ["-c", asks] } } }));
    const pi = startPiInTmux({ args: ["--mcp-config", config], cwd: tmp.dir });
    running.push(pi);
    const notice = /keyless: MCP server 'keyless': it needs MCP_TEST_KEY/;
    await pi.waitForScreen(READY, 60_000);
    await pi.waitForScreen(notice, 30_000);
    pi.type("/reload");
    pi.press("Enter");
    await pi.waitForScreen(/Reloaded keybindings/, 60_000);
    const screen = await pi.waitForScreen(notice, 30_000);
    assert.match(screen, /Reloaded keybindings[\s\S]*keyless: MCP server 'keyless': it needs MCP_TEST_KEY/);
    await pi.stop();
  });

  test("/mcp add completes a stdio server, step by step; started at once, the model uses its tool", async () => {
    const tmp = tempDir();
    temps.push(tmp);
    const pi = startPiInTmux({ args: [], cwd: tmp.dir, env: { PI_MCP_STARTUP_BUDGET_MS: "60000" } });
    running.push(pi);
    await pi.waitForScreen(READY, 60_000);
    const dialog = /Add an MCP server: how does pi reach it\?/;
    // pi offers "add" as a completion while it is typed (its menu shows the subcommand's description). Enter with that
    // menu open takes the completion; the command runs on the Enter after it.
    const completionMenu = /Add a server: step by step, or on one line/;
    pi.type("/mcp add");
    await pi.waitForScreen(completionMenu, 20_000);
    pi.press("Enter");
    const afterEnter = await pi.waitForScreen(
      {
        test: (screen) => dialog.test(screen) || !completionMenu.test(screen),
        toString: () => "the dialog, or the completion menu to close",
      },
      20_000,
    );
    if (!dialog.test(afterEnter)) pi.press("Enter");
    await pi.waitForScreen(dialog, 20_000);
    pi.press("Enter"); // the first choice: a local command
    await pi.waitForScreen(/The command that starts the server/, 20_000);
    // The example's own path: the name offered comes from its file name.
    pi.type(`${process.execPath} ${path.join(REPO_ROOT, "examples", "hello-server.mjs")}`);
    pi.press("Enter");
    await pi.waitForScreen(/A name for it \(Enter for 'hello'\)/, 20_000);
    pi.press("Enter");
    await pi.waitForScreen(/Environment variables it needs, by name \(Enter for none\)/, 20_000);
    pi.press("Enter");
    await pi.waitForScreen(/Save it where\?/, 20_000);
    pi.press("Enter"); // the first choice: this project
    // Started at once, no reload: the footer counts it.
    await pi.waitForScreen(/Added MCP server 'hello' to [\s\S]*connected, 2 tools/, 60_000);
    await pi.waitForScreen(/MCP 1\/1/, 60_000);
    const saved = JSON.parse(readFileSync(path.join(tmp.dir, ".pi", "mcp.json"), "utf8")) as {
      mcpServers: Record<string, unknown>;
    };
    assert.deepEqual(Object.keys(saved.mcpServers), ["hello"]);
    pi.type('call mcp_hello_greet {"name":"Added"}');
    pi.press("Enter");
    await pi.waitForScreen(/Allow MCP tool 'greet' of server 'hello'/, 60_000);
    pi.press("Enter"); // Allow once
    await pi.waitForScreen(/faux: tool result: Hello, Added!/, 60_000);
    await pi.stop();
  });
});
