/**
 * Bad input and user mistakes: each gets a clear error, and none silently changes what a config means. One
 * `describe` per mistake; the pure rules are also covered in lib.test.ts, these go through the real loader, real
 * processes and pi's command API.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import type { AgentSession } from "@mariozechner/pi-coding-agent";
import { BridgeError } from "../src/common/errors.ts";
import { parseClientConfig } from "../src/config/import/discover.ts";
import { layerConfigs } from "../src/config/layers.ts";
import type { ConfigFileInput, ConfigScope } from "../src/config/types.ts";
import { type InProcessPi, startInProcessPi } from "./pi-harness.ts";
import { PI_CLI } from "./tmux.ts";
import { RecordingUI } from "./recording-ui.ts";
import { connectionFor, EXTENSION_DIR, fixtureEntry, helloServer, readLog, tempDir, waitFor } from "./helpers.ts";

const HELLO = helloServer();
const HELLO_ENTRY = { command: process.execPath, args: [HELLO] };

/** The loader over config texts, one per scope. */
function load(texts: Partial<Record<ConfigScope, string>>) {
  const files: ConfigFileInput[] = Object.entries(texts).map(([scope, text]) => ({
    source: { scope: scope as ConfigScope, path: `/${scope}/mcp.json` },
    text,
  }));
  return layerConfigs(files);
}

/** The reproduction: 10,000 objects nested in one server's `env`, about 60 KB. */
function deeplyNested(levels = 10_000): string {
  return `{"mcpServers":{"x":{"command":"node","env":${'{"a":'.repeat(levels)}1${"}".repeat(levels)}}}}`;
}

/** pi in-process with this extension and a recording UI, in a scratch project, home and agent dir. */
async function startPi(
  files: { project?: string; user?: string; home?: Record<string, string> },
  env: Record<string, string> = {},
) {
  const project = tempDir("mcp-bridge-bad-project-");
  const agentDir = tempDir("mcp-bridge-bad-agent-");
  const home = tempDir("mcp-bridge-bad-home-");
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  };
  if (files.project !== undefined) write(path.join(project.dir, ".pi", "mcp.json"), files.project);
  if (files.user !== undefined) write(path.join(agentDir.dir, "mcp.json"), files.user);
  for (const [file, text] of Object.entries(files.home ?? {})) write(path.join(home.dir, file), text);
  const saved = { cwd: process.cwd(), env: { ...process.env } };
  Object.assign(process.env, {
    HOME: home.dir,
    PI_CODING_AGENT_DIR: agentDir.dir,
    PI_MCP_STARTUP_BUDGET_MS: "60000",
    ...env,
  });
  process.chdir(project.dir);
  const ui = new RecordingUI();
  const pi: InProcessPi = await startInProcessPi({
    cwd: project.dir,
    agentDir: agentDir.dir,
    extensionPaths: [EXTENSION_DIR],
  });
  const extensionErrors: string[] = [];
  await pi.session.bindExtensions({ uiContext: ui.context(), onError: (e) => extensionErrors.push(String(e.error)) });
  const run = async (command: string, answers: unknown[] = []): Promise<string> => {
    ui.answers = [...answers];
    const before = ui.notices.length;
    await pi.session.prompt(command);
    assert.deepEqual(ui.answers, [], `every scripted answer was used by ${command}`);
    return ui.notices.slice(before).join("\n");
  };
  return {
    pi,
    session: pi.session as AgentSession,
    ui,
    run,
    projectConfig: path.join(project.dir, ".pi", "mcp.json"),
    loadErrors: [...pi.loader.getExtensions().errors.map((e) => e.error), ...extensionErrors],
    close: async () => {
      await pi.close();
      process.chdir(saved.cwd);
      for (const key of Object.keys(process.env)) if (!(key in saved.env)) delete process.env[key];
      Object.assign(process.env, saved.env);
      for (const dir of [project, agentDir, home]) dir.cleanup();
    },
  };
}

describe("a missing ${VAR} in a local server's command line", { timeout: 60_000 }, () => {
  test("stops the server with an error naming the variable, and starts no process", async () => {
    const tmp = tempDir();
    const log = path.join(tmp.dir, "events.jsonl");
    const fixture = fixtureEntry();
    const env: Record<string, string | undefined> = { ...process.env, FIXTURE_LOG: log };
    delete env.MCP_BRIDGE_TEST_FS_ROOT;
    const connection = connectionFor(
      "fs",
      { ...fixture, args: [...fixture.args, "--root", "${MCP_BRIDGE_TEST_FS_ROOT}"], env: { FIXTURE_LOG: log } },
      { env },
    );
    try {
      await assert.rejects(connection.connect(), (error: unknown) => {
        assert.ok(error instanceof BridgeError);
        assert.equal(error.kind, "config");
        assert.match(error.message, /environment variable \$\{MCP_BRIDGE_TEST_FS_ROOT\} in `args\[\d+\]` is not set/);
        return true;
      });
      assert.equal(connection.status, "error");
      // The fixture logs "start" as its first act: no file means no process was started.
      assert.equal(
        existsSync(log),
        false,
        `the server started: ${JSON.stringify(existsSync(log) ? readLog(log) : [])}`,
      );
    } finally {
      await connection.close();
      tmp.cleanup();
    }
  });
});

describe("config text nested thousands deep", { timeout: 60_000 }, () => {
  test("the loader reports one error for that file and keeps the other files' servers", () => {
    const { servers, problems } = load({
      project: deeplyNested(),
      user: JSON.stringify({ mcpServers: { hello: HELLO_ENTRY } }),
    });
    assert.deepEqual(
      servers.map((s) => s.name),
      ["hello"],
    );
    assert.equal(problems.length, 1, JSON.stringify(problems));
    assert.equal(problems[0]!.source.scope, "project");
    assert.match(
      problems[0]!.message,
      /nest more than 64 levels deep \(at line 1, column \d+\); its servers are skipped/,
    );
  });

  test("pi starts: no extension error, the user file's server connects, and the startup notice names the file", async () => {
    const run = await startPi({
      project: deeplyNested(),
      user: JSON.stringify({ mcpServers: { hello: HELLO_ENTRY } }),
    });
    try {
      assert.deepEqual(run.loadErrors, []);
      // Registered: connected (whether the model is sent them is the default exposure's business).
      await waitFor(
        () => run.session.getAllTools().some((t) => t.name === "mcp_hello_greet"),
        "the user server's tools",
        30_000,
      );
      assert.match(run.ui.notices.join("\n"), /project config .*\.pi\/mcp\.json.*nest more than 64 levels deep/);
    } finally {
      await run.close();
    }
  });
});

describe("timeouts and delays over 2^31-1 ms", () => {
  test("are rejected with the limit named, in every ms field; the limit itself is accepted", () => {
    const fields: Array<[string, Record<string, unknown>]> = [
      ["initTimeout", { command: "node" }],
      ["timeout", { url: "https://example.com/mcp" }],
      ["requestTimeout", { command: "node" }],
      ["healthCheckInterval", { command: "node" }],
      ["pingTimeout", { command: "node" }],
      ["reconnect.initialDelay", { url: "https://example.com/mcp" }],
      ["reconnect.maxDelay", { url: "https://example.com/mcp" }],
    ];
    for (const [field, base] of fields) {
      const entry = (value: number) => {
        const [outer, inner] = field.split(".");
        return { ...base, [outer!]: inner ? { [inner]: value } : value };
      };
      const over = load({ project: JSON.stringify({ mcpServers: { s: entry(2 ** 31) } }) });
      assert.deepEqual(over.servers, [], field);
      assert.match(
        over.problems[0]!.message,
        new RegExp(`\`${field.replace(".", "\\.")}\` must be at most 2147483647 ms.*\\(got 2147483648\\)`),
        field,
      );
      assert.equal(
        load({ project: JSON.stringify({ mcpServers: { s: entry(2 ** 31 - 1) } }) }).servers.length,
        1,
        field,
      );
    }
  });
});

describe("__proto__, constructor and prototype", () => {
  test("as server names or keys are rejected with a message, and nothing reaches a prototype", () => {
    const text = `{"mcpServers": {
      "__proto__": {"command": "evil-name"},
      "constructor": {"command": "evil-ctor"},
      "smuggled": {"__proto__": {"command": "evil-inherited", "args": ["--all"]}},
      "deep": {"command": "node", "env": {"prototype": "x"}},
      "typed": {"type": "constructor", "command": "node"},
      "fine": {"command": "node"}
    }}`;
    const { servers, problems } = load({ project: text });
    assert.deepEqual(
      servers.map((s) => s.name),
      ["fine"],
    );
    const byServer = new Map(problems.map((p) => [p.server, p.message]));
    assert.match(byServer.get('"__proto__"')!, /"__proto__" cannot be a server name/);
    assert.match(byServer.get('"constructor"')!, /"constructor" cannot be a server name/);
    assert.match(
      byServer.get("smuggled")!,
      /`__proto__`: `__proto__`, `constructor` and `prototype` cannot be used as keys/,
    );
    assert.match(byServer.get("deep")!, /`env\.prototype`/);
    assert.match(byServer.get("typed")!, /unknown `type` "constructor"/);
    assert.equal(({} as Record<string, unknown>).command, undefined);
    assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, "command"), false);
  });

  test("in another client's config (JSON and Codex's TOML), /mcp import refuses them too", () => {
    const loc = { home: "/h", projectRoot: "/p", platform: "linux" as const, env: {} };
    const json = parseClientConfig(
      { client: "cursor", scope: "user", path: "/h/.cursor/mcp.json" },
      '{"mcpServers": {"__proto__": {"command": "a"}, "envy": {"command": "b", "env": {"__proto__": "x"}}, "ok": {"command": "c"}}}',
      loc,
    );
    assert.deepEqual(
      json.servers.map((s) => s.name),
      ["ok"],
    );
    assert.match(json.errors.join("\n"), /server "__proto__": "__proto__" cannot be a server name/);
    assert.match(json.errors.join("\n"), /server "envy": `env\.__proto__`: .* cannot be used as keys/);
    const toml = parseClientConfig(
      { client: "codex", scope: "user", path: "/h/.codex/config.toml" },
      '[mcp_servers.prototype]\ncommand = "a"\n',
      loc,
    );
    assert.deepEqual(toml.servers, []);
    assert.match(toml.errors.join("\n"), /"prototype" cannot be a server name/);
    assert.equal(({} as Record<string, unknown>).command, undefined);
  });
});

describe("a huge bad value", () => {
  test("is quoted at most about 200 characters, with how much was cut", () => {
    const huge = "x".repeat(10 * 1024 * 1024);
    const text = JSON.stringify({
      mcpServers: { big: { command: "node", timeout: huge }, url: { url: huge }, kind: { type: huge, command: "x" } },
    });
    const { problems } = load({ project: text });
    assert.equal(problems.length, 3, JSON.stringify(problems).slice(0, 2000));
    for (const problem of problems) {
      assert.ok(problem.message.length < 600, `${problem.message.length} characters: ${problem.message.slice(0, 300)}`);
      assert.match(problem.message, /…" \(\d{8} more characters\)/);
    }
  });
});

describe("server names /mcp cannot address", () => {
  test("a name with control characters or outer spaces is rejected, escaped in the message", () => {
    const { servers, problems } = load({
      project: JSON.stringify({
        mcpServers: { "evil\u001b[2J": HELLO_ENTRY, " padded ": HELLO_ENTRY, "": HELLO_ENTRY },
      }),
    });
    assert.deepEqual(servers, []);
    const text = problems.map((p) => `${p.server}: ${p.message}`).join("\n");
    assert.doesNotMatch(text, /\u001b/, "no raw escape code");
    assert.match(text, /"evil\\u001b\[2J": a server name must not contain control characters/);
    assert.match(text, /a server name must not start or end with a space/);
    assert.match(text, /a server name must not be empty/);
  });

  test("a name with spaces is addressed in quotes by /mcp subcommands, and completion quotes it", async () => {
    const run = await startPi({ user: JSON.stringify({ mcpServers: { "my server": HELLO_ENTRY } }) });
    try {
      await waitFor(
        () => run.session.getAllTools().some((t) => t.name === "mcp_my_server_greet"),
        "the server's tools",
        30_000,
      );
      assert.match(
        await run.run('/mcp test "my server"'),
        /MCP server 'my server' works: connected in \d+ ms over stdio, 2 tools/,
      );
      assert.match(await run.run("/mcp reconnect 'my server'"), /Reconnected to MCP server 'my server': 2 tools/);
      assert.match(await run.run("/mcp tools my\\ server"), /mcp_my_server_greet {2}· {2}mcp:my server\/greet {2}· /);
      const command = run.session.extensionRunner.getCommand("mcp")!;
      for (const typed of ["test my", 'test "my s', "test ", 'test "my ', "test my\\ "]) {
        const offered = ((await command.getArgumentCompletions?.(typed)) ?? []) as Array<{ value: string }>;
        assert.deepEqual(
          offered.map((o) => o.value),
          ['test "my server"'],
          typed,
        );
      }
    } finally {
      await run.close();
    }
  });
});

describe("an unknown top-level key", () => {
  test("gets a warning with a guess, and the file's servers still load", () => {
    const { servers, problems } = load({
      project: JSON.stringify({ mcpservers: { lost: HELLO_ENTRY }, mcpServers: { kept: HELLO_ENTRY }, zzz: 1 }),
    });
    assert.deepEqual(
      servers.map((s) => s.name),
      ["kept"],
    );
    assert.deepEqual(
      problems.map((p) => [p.level, p.message]),
      [
        ["warning", 'unknown top-level key "mcpservers" is ignored; did you mean `mcpServers`?'],
        [
          "warning",
          'unknown top-level key "zzz" is ignored; the keys read here are `mcpServers`, `servers`, `mcp`, `approval`, `exposure`, `exposureThreshold`, `toolCatalog`, `sandbox`, `autoEnableCodemode`, `$schema`, `inputs`',
        ],
      ],
    );
  });
});

describe("/mcp import", { timeout: 120_000 }, () => {
  test("the secrets question defaults to No, and an imported server that fails to start is reported", async () => {
    const cursor = {
      mcpServers: {
        leaky: { command: "x", env: { API_TOKEN: "sk-live-abcdef123456" } },
        // Outlasts the startup budget, then fails: only a notice after the startup notice can tell the user.
        slowfail: { command: process.execPath, args: ["-e", "setTimeout(() => process.exit(3), 1500)"] },
      },
    };
    const run = await startPi(
      { project: "{}", home: { ".cursor/mcp.json": JSON.stringify(cursor) } },
      { PI_MCP_STARTUP_BUDGET_MS: "200" },
    );
    try {
      // Import all, into this project, the default (first) answer to the secrets question.
      const text = await run.run("/mcp import", ["Import all", "This project", 0]);
      const question = run.ui.offered.find((options) => options.some((o) => o.startsWith("Yes, copy")));
      assert.ok(question, run.ui.asked.join("\n"));
      assert.match(question[0]!, /^No/, "the first option, which Enter picks, is No");
      assert.match(text, /Skipped leaky: has inline secrets/);
      const saved = JSON.parse(readFileSync(run.projectConfig, "utf8")) as { mcpServers: Record<string, unknown> };
      assert.deepEqual(Object.keys(saved.mcpServers), ["slowfail"]);
      assert.doesNotMatch(readFileSync(run.projectConfig, "utf8"), /sk-live/);
      // Started at once and waited for, past the startup budget: its failure is the import's answer.
      assert.match(text, /Imported 'slowfail' \(cursor\) into .*, but it did not start: .*exited with code 3/s);
    } finally {
      await run.close();
    }
  });
});

describe("/mcp import's preview", { timeout: 120_000 }, () => {
  test("hides a URL's query values and password, which may be keys, as it hides a flag's", async () => {
    const url = "https://u:pass-0123456789@mcp.example.com/mcp?profile=prof-secret-0123456789";
    const cursor = { mcpServers: { remote: { url } } };
    const run = await startPi({ project: "{}", home: { ".cursor/mcp.json": JSON.stringify(cursor) } });
    try {
      const asked = await run.run("/mcp import", [undefined]);
      assert.match(asked, /remote .*https:\/\/\*\*\*@mcp\.example\.com\/mcp\?profile=\*\*\*/);
      assert.doesNotMatch(asked, /prof-secret|pass-0123/);
    } finally {
      await run.close();
    }
  });
});

describe("print mode", { timeout: 120_000 }, () => {
  test('`pi -p "/mcp list"` writes the listing to stdout, so `> out.txt` captures it', async () => {
    const tmp = tempDir();
    const config = path.join(tmp.dir, "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { hello: HELLO_ENTRY } }));
    const env = {
      ...process.env,
      HOME: tmp.dir,
      PI_CODING_AGENT_DIR: path.join(tmp.dir, "agent"),
      PI_OFFLINE: "1",
      PI_MCP_STARTUP_BUDGET_MS: "60000",
    };
    try {
      const child = spawn(
        process.execPath,
        [PI_CLI, "--no-session", "-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp list"],
        { cwd: tmp.dir, env, stdio: ["ignore", "pipe", "pipe"] },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
      const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
      clearTimeout(timer);
      assert.equal(code, 0, stderr);
      assert.match(stdout, /MCP Server Status/);
      assert.match(
        stdout,
        /hello {2}connected {2}stdio {2}MCP 2025-11-25 {2}2 tools {2}about \d+ tokens per request {2}\(flag\)/,
      );
      assert.doesNotMatch(stderr, /MCP Server Status/);
    } finally {
      tmp.cleanup();
    }
  });
});
