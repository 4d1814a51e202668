/**
 * The real `pi` command line with the extension: the README's demo command (`npm run demo`), print mode's wait for
 * servers, `/mcp prompts`, `/mcp test`, `/mcp auth` and `--help`. Projects are in ./pi-cli-projects.test.ts, rpc mode
 * in ./pi-rpc.test.ts.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { automaticSignIn } from "../src/oauth/sign-in.ts";
import { startOAuthServer } from "./fixtures/oauth-server.ts";
import {
  EXTENSION_DIR,
  fixtureEntry,
  freePort,
  helloServer,
  isAlive,
  muteServer,
  readLog,
  REPO_ROOT,
  tempDir,
  waitFor,
} from "./helpers.ts";
import { PI_LINE } from "./pi-line.ts";
import { GENEROUS_BUDGET, piCliIn, runPiCli } from "./pi-print.ts";
import { PI_CLI } from "./tmux.ts";

const home = tempDir("mcp-bridge-home-");
const { run: runPi, env: piEnv } = piCliIn(home.dir);

/** `pi -p <command>` on `config` with no browser to open: a sign-in prints its page. Its output as it comes. */
function signingIn(config: string, command: string, cwd: string) {
  const pi = spawn(process.execPath, [PI_CLI, "-e", EXTENSION_DIR, "--mcp-config", config, "-p", command], {
    cwd,
    env: { ...piEnv(), PI_MCP_NO_BROWSER: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  pi.stdout.on("data", (d) => (output += d));
  pi.stderr.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => pi.once("exit", (code) => resolve(code)));
  return { pi, output: () => output, exited };
}

// Only a bound on a hang: about twenty real pi runs, each waited for on its own terms, take 2-3 minutes in CI and past
// five with another suite running beside them on the same two cores.
describe("pi command line", { timeout: 600_000 }, () => {
  after(() => home.cleanup());

  test("the README demo: `pi -e . --mcp-config examples/demo.json -p /mcp` shows both servers and their tools", async () => {
    const { code, output } = await runPi(["-e", ".", "--mcp-config", "examples/demo.json", "-p", "/mcp"]);
    assert.equal(code, 0, output);
    assert.match(
      output,
      /hello {2}connected {2}stdio {2}MCP 2025-11-25 {2}2 tools {2}about \d+ tokens per request {2}\(flag\)/,
    );
    // The demo leaves hello's exposure to the default: `auto` (direct here) on pi 0.73, `deferred` on pi 1.x.
    assert.match(
      output,
      PI_LINE === "1.x"
        ? /- mcp_hello_greet {2}\(greet\) {2}· deferred\n/
        : /- mcp_hello_greet {2}\(greet\) {2}· direct \(auto\)/,
    );
    // Its tools are deferred: what it adds to each request is its line of the tool catalog, no tool definition.
    const everything =
      /everything {2}connected {2}stdio {2}MCP 2025-11-25 {2}17 tools {2}about (\d+) tokens per request/.exec(output);
    assert.ok(everything, output);
    assert.ok(Number(everything[1]) > 50 && Number(everything[1]) < 300, everything[0]);
    assert.match(output, /- ev_get-sum {2}\(get-sum\) {2}· deferred/);
    // Roots are declared in print mode too, so the reference server lists the tool it keeps for clients with roots.
    assert.match(output, /- ev_get-roots-list {2}\(get-roots-list\) {2}· deferred/);
    assert.match(output, /2 servers configured \| 2 connected/);
    // pi 1.x has MCP and tool_search built in: an extension that registers /mcp and tool_search replaces both.
    if (PI_LINE === "1.x")
      assert.match(output, /registers command `\/mcp`, so built-in extension `mcp` was not loaded/);
    if (PI_LINE === "1.x")
      assert.match(output, /registers tool `tool_search`, so built-in extension `tool-search` was not loaded/);
    // The README shows this run's output (on the pi line its `npx pi` installs): every line it shows is one pi printed.
    if (PI_LINE === "0.73") {
      const readme = readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
      // The README's first command is `npm run demo`, and that script is the command this test runs.
      assert.match(readme, /\nnpm ci && npm run demo\n/);
      type Package = { scripts: Record<string, string> };
      const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as Package;
      assert.equal(pkg.scripts.demo, "pi -e . --mcp-config examples/demo.json -p /mcp");
      const start = readme.indexOf("```\n", readme.indexOf("The first prints")) + 4;
      const shown = readme.slice(start, readme.indexOf("```", start)).split("\n");
      const ago = (line: string) => line.replace(/\d+s ago/g, "Ns ago").trimEnd();
      const printed = new Set(output.split("\n").map(ago));
      for (const line of shown)
        if (line !== "…")
          assert.ok(printed.has(ago(line)), `the README shows a line pi did not print: ${JSON.stringify(line)}`);
    }
  });

  test('`pi -p "/mcp prompts"` lists each server\'s prompts with the commands that run them', async () => {
    const { code, output } = await runPi(["-e", ".", "--mcp-config", "examples/demo.json", "-p", "/mcp prompts"]);
    assert.equal(code, 0, output);
    assert.match(
      output,
      /^MCP server 'hello': offers no prompts\nMCP server 'everything': 4 prompts\n {2}\/mcp:everything:simple-prompt {2}· {2}A prompt with no arguments\n/m,
    );
    assert.match(
      output,
      /\n {2}\/mcp:everything:args-prompt {2}· {2}A prompt with two arguments, one required and one optional\n {6}city \(required\) {2}· {2}Name of the city\n {6}state \(optional\)\n/,
    );
    assert.doesNotMatch(output, /no command/, "every prompt listed has its command by the time the list is shown");
  });

  test("print mode waits for every server, each within its own timeout: a slow one connects, a mute one fails naming its timer; logs are written", async () => {
    const tmp = tempDir();
    const log = path.join(tmp.dir, "events.jsonl");
    const config = path.join(tmp.dir, "mcp.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          quick: { command: "node", args: [helloServer()] },
          // Slower than the startup budget and than the revision probe's window, with the default settings.
          slow: {
            command: "node",
            args: [path.join(REPO_ROOT, "test", "fixtures", "slow-start.mjs"), "--delay", "4000"],
          },
          mute: { ...muteServer(log), initTimeout: 3000, maxRestarts: 0 },
        },
      }),
    );
    try {
      const { code, output } = await runPi(
        ["-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp"],
        60_000,
        REPO_ROOT,
        {
          PI_MCP_STARTUP_BUDGET_MS: "500",
        },
      );
      assert.equal(code, 0, output);
      assert.match(output, /quick +🟢/);
      assert.match(output, /slow +🟢 +stdio +2025-11-25 +1 /);
      assert.match(output, /mute +🔴/);
      assert.match(
        output,
        /✕ mute: MCP server 'mute': no answer to the MCP handshake after [\d.]+ s, when its `initTimeout` of 3 s ran out/,
      );
      assert.doesNotMatch(
        output,
        /still connecting|shut down while connecting|failed to start/,
        "nothing is left connecting, and nothing pi stopped itself is reported",
      );
      const starts = readLog(log);
      assert.equal(starts.length, 1);
      await waitFor(() => !isAlive(starts[0]!.pid), "the mute server to be stopped");
      const logged = readFileSync(path.join(home.dir, "agent", "mcp-bridge", "mcp.log"), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { server?: string; event: string });
      assert.ok(logged.some((l) => l.server === "quick" && l.event === "connected"));
      assert.ok(logged.some((l) => l.server === "mute" && l.event === "closed"));
      const stderr = readFileSync(path.join(home.dir, "agent", "mcp-bridge", "servers", "mute.log"), "utf8");
      assert.match(stderr, /"event":"stderr".*mute server starting/, "the server's stderr is in its own log");
    } finally {
      tmp.cleanup();
    }
  });

  test("print mode learns a lazy server's tools the cache does not know yet; the next run starts nothing and has them", async () => {
    const tmp = tempDir();
    const log = path.join(tmp.dir, "events.jsonl");
    const config = path.join(tmp.dir, "mcp.json");
    // Slower than pi takes to list it: before, the run ended while the server started, so its tools were never learnt.
    const args = [path.join(REPO_ROOT, "test", "fixtures", "slow-start.mjs"), "--delay", "1500"];
    writeFileSync(
      config,
      JSON.stringify({ mcpServers: { idle: { command: "node", args, env: { FIXTURE_LOG: log }, lazy: true } } }),
    );
    try {
      const first = await runPi(["-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp list"], 60_000, REPO_ROOT);
      assert.equal(first.code, 0, first.output);
      assert.match(first.output, /idle +🟢 +stdio +2025-11-25 +1 /);
      const second = await runPi(["-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp list"], 60_000, REPO_ROOT);
      assert.equal(second.code, 0, second.output);
      assert.match(second.output, /idle +⚪ +stdio +— +1 /, "not started, its tool from the cache");
      assert.equal(readLog(log).filter((e) => e.event === "start").length, 1, "started by the first run only");
    } finally {
      tmp.cleanup();
    }
  });

  test('`pi -p "/mcp test <server>"` exits 1 when the server fails the test, 0 when it works', async () => {
    const tmp = tempDir();
    const config = path.join(tmp.dir, "mcp.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          quick: { command: "node", args: [helloServer()] },
          broken: { command: "sh", args: ["-c", "echo 'cannot open the database' >&2; exit 3"] },
        },
      }),
    );
    try {
      const failing = await runPi(["-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp test broken"]);
      assert.equal(failing.code, 1, failing.output);
      assert.match(
        failing.output,
        /MCP server 'broken' failed the test \[transport\]: MCP server 'broken': the process exited with code 3 after [\d.]+ s/,
      );
      const working = await runPi(["-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp test quick"]);
      assert.equal(working.code, 0, working.output);
      assert.match(working.output, /MCP server 'quick' works: connected in \d+ ms over stdio, 2 tools/);
      // A mistyped name tests nothing: a script is not told it passed.
      const mistyped = await runPi(["-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp test quik"]);
      assert.equal(mistyped.code, 1, mistyped.output);
      assert.match(mistyped.output, /quick/);
      const typo = await runPi(["-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp tesst quick"]);
      assert.equal(typo.code, 1, typo.output);
      assert.match(typo.output, /Unknown \/mcp subcommand 'tesst'\. Did you mean 'test'\?/);
      const reconnected = await runPi(["-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp reconnect broken"]);
      assert.equal(reconnected.code, 1, reconnected.output);
      const signIn = await runPi(["-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp auth quick"]);
      assert.equal(signIn.code, 1, signIn.output);
      // No server named, no UI to pick one: the usage names the subcommand typed, as it must be typed.
      const unnamed = await runPi(["-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp logs", "/mcp off"]);
      assert.equal(unnamed.code, 1, unnamed.output);
      assert.match(unnamed.output, /Usage: \/mcp logs <server>\. Configured: quick, broken\./);
      assert.match(unnamed.output, /Usage: \/mcp off <server>\./);
      // Enabled but not started: as /mcp add, a script is told by the exit status.
      writeFileSync(config, JSON.stringify({ mcpServers: { off: { command: "false", enabled: false } } }));
      const enabled = await runPi(["-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp enable off"]);
      assert.equal(enabled.code, 1, enabled.output);
      assert.match(enabled.output, /Enabled MCP server 'off' in .*, but it did not start/);
    } finally {
      tmp.cleanup();
    }
  });

  test('`pi -p "/mcp on|enable|remove <server>"` exits 1 when the server does not start again or its file cannot be saved', async () => {
    const tmp = tempDir();
    const config = path.join(tmp.dir, "mcp.json");
    const server = (script: string) => ({ command: "sh", args: ["-c", script, "sh", config, helloServer()] });
    try {
      // Starts once: /mcp on after /mcp off finds it failing.
      const marker = path.join(tmp.dir, "started");
      writeFileSync(
        config,
        JSON.stringify({ mcpServers: { once: server(`[ -e ${marker} ] && exit 3; : > ${marker}; exec node "$2"`) } }),
      );
      const on = await runPi(["-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp off once", "/mcp on once"]);
      assert.equal(on.code, 1, on.output);
      assert.match(on.output, /Switched on MCP server 'once', but it did not start/);
      // Disabled in its file: /mcp on does not start it (/mcp enable does), and a script is told so.
      writeFileSync(config, JSON.stringify({ mcpServers: { off: { command: "false", enabled: false } } }));
      const disabled = await runPi(["-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp on off"]);
      assert.equal(disabled.code, 1, disabled.output);
      assert.match(disabled.output, /MCP server 'off' is disabled in its config; \/mcp enable off turns it on/);
      // Its start leaves a directory where its file was (as a file made read-only would): saving there fails.
      const spoiling = JSON.stringify({ mcpServers: { spoil: server(`rm "$1" && mkdir "$1" && exec node "$2"`) } });
      for (const command of ["/mcp enable spoil", "/mcp remove spoil"]) {
        rmSync(config, { recursive: true, force: true });
        writeFileSync(config, spoiling);
        const run = await runPi(["-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp list", command]);
        assert.equal(run.code, 1, `${command}: ${run.output}`);
        assert.match(run.output, /Could not (save it in|remove 'spoil' from) .*mcp\.json/);
      }
    } finally {
      tmp.cleanup();
    }
  });

  // `/mcp reconnect` of a server disabled in its config exits 1 (it did not reconnect): so does one of a server off for
  // the session, which it does not reconnect either; `/mcp off` of one off already did what was asked.
  test('`pi -p "/mcp reconnect <server>"` of a server off for the session exits 1: nothing was reconnected', async () => {
    const tmp = tempDir();
    const config = path.join(tmp.dir, "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { quick: { command: "node", args: [helloServer()] } } }));
    try {
      const args = ["-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp off quick"];
      const reconnected = await runPi([...args, "/mcp reconnect quick"]);
      assert.equal(reconnected.code, 1, reconnected.output);
      assert.match(reconnected.output, /MCP server 'quick' is off for this session; \/mcp on quick turns it on\./);
      const offAgain = await runPi([...args, "/mcp off quick"]);
      assert.equal(offAgain.code, 0, offAgain.output);
    } finally {
      tmp.cleanup();
    }
  });

  test('`pi -p "/mcp add <server> -- <command>"` writes the entry and starts the server in that run; a refusal exits 1', async () => {
    // A home of its own: the entry goes to the user's mcp.json, which the other tests' runs would load.
    const own = tempDir("mcp-bridge-add-home-");
    const hello = helloServer();
    const run = (...messages: string[]) =>
      runPiCli(["-e", EXTENSION_DIR, "-p", ...messages], { home: own.dir, cwd: own.dir, env: GENEROUS_BUDGET });
    try {
      // The step-by-step form, in the same run: without a UI it says what to do instead.
      const added = await run(`/mcp add hello -- ${process.execPath} ${hello}`, "/mcp list", "/mcp add");
      assert.equal(added.code, 0, added.output);
      assert.match(added.output, /\/mcp add asks its questions in pi's interactive mode/);
      // The one-line form works here: it is what to do instead, not only editing the file by hand.
      assert.match(added.output, /Without it, give them on one line: \/mcp add <server> \[options\] -- <command>/);
      assert.match(added.output, /Added MCP server 'hello' to .*\/agent\/mcp\.json: connected, 2 tools\.\n/);
      assert.match(added.output, /hello {2}connected {2}stdio {2}MCP 2025-11-25 {2}2 tools/, "listed in the same run");
      const saved = JSON.parse(readFileSync(path.join(own.dir, "agent", "mcp.json"), "utf8")) as unknown;
      assert.deepEqual(saved, { mcpServers: { hello: { command: process.execPath, args: [hello] } } });
      const again = await run("/mcp add hello -- node elsewhere.mjs");
      assert.equal(again.code, 1, again.output);
      assert.match(
        again.output,
        /Not added: 'hello' is in .*mcp\.json already; \/mcp add --replace replaces its entry\./,
      );
    } finally {
      own.cleanup();
    }
  });

  test('`pi -p "/mcp import --all"` copies other clients\' servers and starts them in that run; nothing imported exits 1', async () => {
    const own = tempDir("mcp-bridge-import-home-");
    const hello = helloServer();
    mkdirSync(path.join(own.dir, ".cursor"));
    writeFileSync(
      path.join(own.dir, ".cursor", "mcp.json"),
      JSON.stringify({ mcpServers: { fromcursor: { command: process.execPath, args: [hello] } } }),
    );
    const run = (...messages: string[]) =>
      runPiCli(["-e", EXTENSION_DIR, "-p", ...messages], { home: own.dir, cwd: own.dir, env: GENEROUS_BUDGET });
    try {
      const imported = await run("/mcp import --all", "/mcp list");
      assert.equal(imported.code, 0, imported.output);
      assert.match(
        imported.output,
        /Imported 'fromcursor' \(cursor\) into .*\/agent\/mcp\.json: connected, 2 tools\.\n/,
      );
      assert.match(imported.output, /fromcursor {2}connected {2}stdio/, "listed in the same run");
      const again = await run("/mcp import fromcursor");
      assert.equal(again.code, 1, again.output);
      assert.match(
        again.output,
        /Nothing imported\.\nSkipped fromcursor: already configured \(--replace replaces it\)\./,
      );
    } finally {
      own.cleanup();
    }
  });

  test("print mode with 20 local servers started at once lists all 20 connected, with the default settings", async () => {
    const tmp = tempDir();
    const config = path.join(tmp.dir, "mcp.json");
    const hello = { command: "node", args: [helloServer()] };
    writeFileSync(
      config,
      JSON.stringify({ mcpServers: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`s${i + 1}`, hello])) }),
    );
    try {
      // The default startup budget: the listing itself waits for the servers.
      const { code, output } = await runPi(
        ["-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp list"],
        120_000,
        REPO_ROOT,
        {
          PI_MCP_STARTUP_BUDGET_MS: "3000",
        },
      );
      assert.equal(code, 0, output);
      assert.match(output, /20 servers configured \| 20 connected \| 40 tools available/);
    } finally {
      tmp.cleanup();
    }
  });

  test('`pi -p "/mcp auth <server>"` signs in to an OAuth server: the URL is printed, the redirect completes it, the tokens are kept', async () => {
    const fixture = await startOAuthServer();
    const tmp = tempDir();
    const port = await freePort();
    const config = path.join(tmp.dir, "mcp.json");
    writeFileSync(
      config,
      JSON.stringify({ mcpServers: { secure: { url: fixture.url, auth: { callbackPort: port } } } }),
    );
    const { pi, output, exited } = signingIn(config, "/mcp auth secure", tmp.dir);
    try {
      // Startup has no one to sign in: the server waits for /mcp auth, which prints the page to open.
      await waitFor(() => /http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+/.test(output()), "the sign-in URL", 30_000);
      const url = /http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+/.exec(output())![0];
      assert.match(output(), /Sign in to MCP server 'secure' by opening this URL/);
      // What a browser would do: the authorization server redirects to pi's callback server.
      await automaticSignIn()({ server: "secure", url: new URL(url), callback: undefined as never });
      assert.equal(await exited, 0, output());
      assert.match(output(), /Signed in to MCP server 'secure': \d+ tools/);
      const tokens = path.join(home.dir, "agent", "mcp-auth", "secure.json");
      assert.equal(statSync(tokens).mode & 0o777, 0o600);
      // The client id is public (it is in the URL shown to the user); tokens and codes are not.
      for (const secret of fixture.issued.filter((s) => !s.startsWith("client-")))
        assert.equal(output().includes(secret), false, "no token in pi's output()");

      // A second run has the tokens: /mcp shows the server connected without a sign-in; then it signs out.
      const again = await runPi(
        ["-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp", "/mcp logout secure"],
        60_000,
        tmp.dir,
      );
      assert.match(again.output, /secure +🟢 +http[^]*Signed out of MCP server 'secure'/);
      assert.equal(fixture.authorizations.length, 1);
      assert.equal(existsSync(tokens), false);
    } finally {
      pi.kill("SIGKILL");
      await fixture.close();
      tmp.cleanup();
    }
  });

  test('`pi -p "/mcp auth"` with no server named signs in to each server that waits for a sign-in, one after the other', async () => {
    const fixtures = [await startOAuthServer(), await startOAuthServer()];
    const tmp = tempDir();
    const [one, two] = [await freePort(), await freePort()];
    const config = path.join(tmp.dir, "mcp.json");
    const servers = {
      first: { url: fixtures[0]!.url, auth: { callbackPort: one } },
      second: { url: fixtures[1]!.url, auth: { callbackPort: two } },
      local: fixtureEntry(),
    };
    writeFileSync(config, JSON.stringify({ mcpServers: servers }));
    const { pi, output, exited } = signingIn(config, "/mcp auth", tmp.dir);
    const signInUrl =
      /Sign in to MCP server '(\w+)' by opening this URL[^]*?(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)/g;
    try {
      const signedIn: string[] = [];
      for (let n = 1; n <= 2; n++) {
        await waitFor(() => [...output().matchAll(signInUrl)].length >= n, `sign-in page ${n}`, 30_000);
        const [, server, url] = [...output().matchAll(signInUrl)][n - 1]!;
        signedIn.push(server!);
        await automaticSignIn()({ server: server!, url: new URL(url!), callback: undefined as never });
      }
      assert.equal(await exited, 0, output());
      assert.deepEqual(signedIn.sort(), ["first", "second"]);
      assert.match(output(), /Signed in to MCP server 'first': \d+ tools/);
      assert.match(output(), /Signed in to MCP server 'second': \d+ tools/);
      assert.doesNotMatch(output(), /MCP server 'local'.*OAuth/, "a server that waits for no sign-in is left alone");
      for (const name of ["first", "second"])
        assert.ok(existsSync(path.join(home.dir, "agent", "mcp-auth", `${name}.json`)), `${name}'s tokens kept`);
    } finally {
      pi.kill("SIGKILL");
      await Promise.all(fixtures.map((fixture) => fixture.close()));
      tmp.cleanup();
    }
  });

  test("`pi --no-mcp` starts no server and registers no MCP tool; /mcp says so (pi 1.x's flag, on both pi lines)", async () => {
    const tmp = tempDir();
    const log = path.join(tmp.dir, "events.jsonl");
    const config = path.join(tmp.dir, "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { fx: { ...fixtureEntry(), env: { FIXTURE_LOG: log } } } }));
    try {
      const { code, output } = await runPi(["-e", EXTENSION_DIR, "--mcp-config", config, "--no-mcp", "-p", "/mcp"]);
      assert.equal(code, 0, output);
      assert.match(output, /MCP is off for this run \(--no-mcp\): no server was started/);
      assert.doesNotMatch(output, /mcp_fx_|MCP Server Status/);
      assert.deepEqual(readLog(log), [], "the server never started");
    } finally {
      tmp.cleanup();
    }
  });

  const codemodeOnly = { skip: PI_LINE === "1.x" ? false : "pi 0.73 has no codemode" };
  const hello = { command: "node", args: [helloServer()] };

  test(
    "pi 1.x's codemode scripts call the bridge's MCP tools, deferred ones too, through the approval check",
    codemodeOnly,
    async () => {
      // Codemode is turned on in pi's settings, as its docs say to.
      const pi = scriptedPi({ defaultTools: ["+codemode"] });
      try {
        pi.config({ mcpServers: { hello: { ...hello, exposure: "deferred", autoApprove: ["greet", "word_count"] } } });
        const both = await pi.run(
          'codemode const [a, b] = await Promise.all([tools.mcp_hello_greet({name: "Ada"}), tools.mcp_hello_word_count({text: "one two three"})]); return {a: a.content[0].text, b: b.structuredContent.words};',
        );
        assert.equal(both.code, 0, both.output);
        assert.match(both.output, /codemode returned: Script completed/, both.output);
        assert.match(both.output, /\{"a":"Hello, Ada!","b":3\}/, both.output);
        // Without autoApprove the call still asks first, and with no UI to ask in it is refused.
        pi.config({ mcpServers: { hello } });
        const asked = await pi.run('codemode return await tools.mcp_hello_greet({name: "Ada"});');
        assert.match(asked.output, /needs approval, and there is no UI to ask in/, asked.output);
      } finally {
        pi.cleanup();
      }
    },
  );

  test(
    "pi 1.x's codemode scripts get an MCP tool's whole result, as from pi's built-in MCP (its content, structured content, and an error result instead of a rejection), and its server's namespace",
    codemodeOnly,
    async () => {
      const pi = scriptedPi({ defaultTools: ["+codemode"] });
      try {
        pi.config({ mcpServers: { fx: { ...fixtureEntry(), exposure: "deferred", autoApprove: ["add", "fail"] } } });
        const run = await pi.run(
          "codemode const a = await tools.mcp_fx_add({a: 2, b: 3}); const f = await tools.mcp_fx_fail({}); return {sum: a.structuredContent.sum, text: a.content[0].text, failed: f.isError, why: f.content[0].text, meta: '_meta' in a};",
        );
        assert.equal(run.code, 0, run.output);
        assert.match(
          run.output,
          /\{"sum":5,"text":"5","failed":true,"why":"it failed on purpose","meta":false\}/,
          run.output,
        );
        // The server's namespace, as pi 1.x's built-in MCP gives its tools one: found by the server's name.
        const fx = fixtureEntry();
        const said = { description: "Sums and echoes", args: [...fx.args, "--instructions", "Add before you echo."] };
        pi.config({ mcpServers: { fx: { ...fx, ...said, exposure: "deferred" } } });
        const described = await pi.run(
          'codemode const ns = await describeNamespace("fx"); const found = await searchTools("add numbers", {namespace: "fx"}); const builtin = await describeNamespace("mcp__fx"); return {name: ns.name, description: ns.description, instructions: ns.instructions, tools: ns.tools.length, first: found[0].name, asBuiltin: builtin.name};',
        );
        assert.match(
          described.output,
          /\{"name":"mcp_fx","description":"Sums and echoes","instructions":"Add before you echo\.","tools":\d+,"first":"mcp_fx_add","asBuiltin":"mcp_fx"\}/,
          described.output,
        );
      } finally {
        pi.cleanup();
      }
    },
  );

  test(
    "pi 1.x: a server whose exposure is `codemode` turns pi's codemode tool on, as the built-in does; autoEnableCodemode: false keeps it off",
    codemodeOnly,
    async () => {
      const pi = scriptedPi();
      const server = { ...hello, exposure: "codemode", autoApprove: ["greet"] };
      try {
        pi.config({ mcpServers: { hello: server } });
        const on = await pi.run('codemode return await tools.mcp_hello_greet({name: "Ada"});');
        assert.equal(on.code, 0, on.output);
        assert.match(on.output, /codemode returned: Script completed[\s\S]*Hello, Ada!/, on.output);
        pi.config({ autoEnableCodemode: false, mcpServers: { hello: server } });
        const off = await pi.run("which tools");
        const offered = /Tools offered: (.*)\./.exec(off.output)?.[1];
        assert.ok(offered?.includes("tool_search") && !offered.includes("codemode"), off.output);
      } finally {
        pi.cleanup();
      }
    },
  );

  test("--mcp-config is listed in pi --help, which starts no server", async () => {
    const tmp = tempDir();
    const log = path.join(tmp.dir, "events.jsonl");
    const config = path.join(tmp.dir, "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { fx: { ...fixtureEntry(), env: { FIXTURE_LOG: log } } } }));
    try {
      const { code, output } = await runPi(["-e", EXTENSION_DIR, "--mcp-config", config, "--help"]);
      assert.equal(code, 0, output);
      assert.match(output, /--mcp-config/);
      assert.deepEqual(readLog(log), []);
    } finally {
      tmp.cleanup();
    }
  });
});

/**
 * pi -p in a home of its own (with `settings` as pi's settings.json), the bridge and the scripted model of
 * examples/scripted-model.ts, on the config `config` last wrote.
 */
function scriptedPi(settings?: Record<string, unknown>) {
  const own = tempDir("mcp-bridge-scripted-");
  const file = path.join(own.dir, "mcp.json");
  if (settings) {
    mkdirSync(path.join(own.dir, "agent"));
    writeFileSync(path.join(own.dir, "agent", "settings.json"), JSON.stringify(settings));
  }
  const model = ["-e", "examples/scripted-model.ts", "--provider", "scripted", "--model", "demo", "--no-session"];
  return {
    config: (config: unknown) => writeFileSync(file, JSON.stringify(config)),
    run: (prompt: string) =>
      runPiCli(["-e", EXTENSION_DIR, ...model, "--mcp-config", file, "-p", prompt], {
        home: own.dir,
        env: { PI_MCP_STARTUP_BUDGET_MS: "60000" },
      }),
    cleanup: own.cleanup,
  };
}
