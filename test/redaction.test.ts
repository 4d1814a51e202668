/**
 * Secrets and terminal escapes from servers never leave the bridge. Real pi in-process with the faux model and
 * user-level servers that plant a unique value (inline in `env`, and through a `${VAR}`) and terminal escapes in
 * their stderr, tool names, descriptions and error results; and real `pi -p "/mcp list"` children for the issue's two
 * reproductions. Everything that leaves is checked: the startup notice, `/mcp list`, events on pi's bus, `mcp.log`,
 * the servers' own logs, the tool definitions the model sees and the tool error it gets.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import type { ToolResultMessage } from "@mariozechner/pi-ai";
import { type InProcessPi, startInProcessPi } from "./pi-harness.ts";
import { PI_CLI } from "./tmux.ts";
import { EXTENSION_DIR, FAST_RECONNECT, fixtureEntry, readLog, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";

/** A value no test or tool would write by chance. */
function planted(label: string): string {
  return `${label}-${randomBytes(6).toString("hex")}`;
}

/** Terminal control characters, raw or as JSON escapes (a log line holds them escaped). */
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]|\\u00(?:0[0-8bcef]|1[0-9a-f]|7f|[89][0-9a-f])|\\[abfrv]/i;

function assertClean(where: string, text: string, secrets: string[]): void {
  for (const secret of secrets)
    assert.ok(!text.includes(secret), `${where} shows the planted secret:\n${text.slice(0, 2000)}`);
  const control = CONTROLS.exec(text);
  assert.equal(
    control,
    null,
    `${where} has a control character or escape ${JSON.stringify(control?.[0])} at ${control?.index}:\n${text.slice(0, 2000)}`,
  );
}

function allLogs(agentDir: string): Array<[string, string]> {
  const dir = path.join(agentDir, "mcp-bridge");
  const files = [
    path.join(dir, "mcp.log"),
    ...readdirSync(path.join(dir, "servers")).map((f) => path.join(dir, "servers", f)),
  ];
  return files.filter((f) => existsSync(f)).map((f) => [f, readFileSync(f, "utf8")]);
}

describe("secrets and terminal escapes in pi (in-process, faux model)", { timeout: 180_000 }, () => {
  const project = tempDir("mcp-bridge-redaction-project-");
  const agentDir = tempDir("mcp-bridge-redaction-agent-");
  const callLog = path.join(project.dir, "calls.jsonl");
  const inline = planted("INLINE");
  const viaVar = planted("VIAVAR");
  const crashSecret = planted("CRASHY");
  // Its beginning too: an overlong stderr line is cut, and a cut must not leave the start of a secret.
  // And a token it logs in a JSON line that the cut ends in, known to nobody.
  const secrets = [inline, viaVar, crashSecret, crashSecret.slice(0, 15), "ya29-unkn"];
  const originalCwd = process.cwd();
  const output: string[] = [];
  let pi: InProcessPi;

  /** Runs `fn` with console.log/error captured into `output` (print-mode notices and /mcp go there). */
  async function capturing<T>(fn: () => Promise<T>): Promise<T> {
    const { log, error } = console;
    console.log = (...args: unknown[]) => output.push(args.join(" "));
    console.error = (...args: unknown[]) => output.push(args.join(" "));
    try {
      return await fn();
    } finally {
      console.log = log;
      console.error = error;
    }
  }

  /** The event names in the table of events of docs/events-and-logs.md (its first column). */
  function documentedChannels(): string[] {
    const page = readFileSync(path.join(REPO_ROOT, "docs", "events-and-logs.md"), "utf8");
    const table = page.split("\n## Events")[1]!.split("\n## ")[0]!;
    const channels = table
      .split("\n")
      .filter((line) => line.startsWith("| `"))
      .flatMap((line) => [...line.split(" | ")[0]!.matchAll(/`([a-z.]+)`/g)].map((m) => m[1]!));
    assert.ok(channels.includes("mcp.local.crashed") && channels.length > 15, channels.join(", "));
    return channels;
  }

  function busEvents(): Array<{ channel: string; payload: unknown }> {
    return (globalThis as { __redactionEvents?: Array<{ channel: string; payload: unknown }> }).__redactionEvents ?? [];
  }

  function toolResults(): ToolResultMessage[] {
    return pi.session.messages.filter(
      (m) => (m as { role: string }).role === "toolResult",
    ) as unknown as ToolResultMessage[];
  }

  before(async () => {
    process.env.MCP_BRIDGE_TEST_PLANTED = viaVar;
    // User-level servers: they need no project trust. Approval prompts are turned off: calls here run without a UI,
    // made by the model directly.
    writeFileSync(
      path.join(agentDir.dir, "mcp.json"),
      JSON.stringify({
        approval: "never",
        exposure: "direct",
        mcpServers: {
          hostile: { ...fixtureEntry("hostile-text"), env: { FIXTURE_SECRET: inline, FIXTURE_LOG: callLog } },
          viavar: { ...fixtureEntry("hostile-text"), env: { FIXTURE_SECRET: "${MCP_BRIDGE_TEST_PLANTED}" } },
          // Connects, leaks its secret to stderr, and dies on its first call: `mcp.local.crashed` carries its stderr.
          dies: {
            ...fixtureEntry("hostile-text"),
            env: { FIXTURE_SECRET: inline, FIXTURE_CRASH_ON_CALL: "1" },
            reconnect: FAST_RECONNECT,
          },
          // Never starts: its stderr is in every retry's `mcp.error` and in the notice.
          crashy: {
            command: "sh",
            args: [
              "-c",
              [
                "echo the key is $API_KEY >&2",
                // Lines over 4096 characters, cut in the middle of a secret: known (after a space, in JSON) or not.
                `printf '%4080s %s\\n' x "$API_KEY" >&2`,
                `printf '{"pad":"%s","key":"%s"}\\n' $(head -c 4062 /dev/zero | tr '\\0' a) "$API_KEY" >&2`,
                `printf '{"pad":"%s","access_token":"ya29-unknown-4d1f7a"}\\n' $(head -c 4060 /dev/zero | tr '\\0' a) >&2`,
                "printf 'boom \\033]52;c;cHduZWQ=\\007 \\033[2J\\n' >&2",
                "exit 1",
              ].join("; "),
            ],
            env: { API_KEY: crashSecret },
            reconnect: { ...FAST_RECONNECT, maxAttempts: 2 },
          },
        },
      }),
    );
    // Another extension that records every event docs/events-and-logs.md lists, as any subscriber on pi's bus gets it.
    writeFileSync(
      path.join(project.dir, "bus-recorder.ts"),
      `export default function (pi) {
        const seen = (globalThis.__redactionEvents = []);
        for (const channel of ${JSON.stringify(documentedChannels())}) pi.events.on(channel, (payload) => seen.push({ channel, payload }));
      }`,
    );
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    mkdirSync(path.join(project.dir, ".pi"), { recursive: true });
    pi = await startInProcessPi({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [path.join(project.dir, "bus-recorder.ts"), EXTENSION_DIR],
    });
    await capturing(() => pi.session.bindExtensions({ onError: (e) => output.push(`extension error: ${e.error}`) }));
  });

  after(async () => {
    await pi?.close();
    process.chdir(originalCwd);
    delete process.env.MCP_BRIDGE_TEST_PLANTED;
    project.cleanup();
    agentDir.cleanup();
  });

  test("tool names, titles, descriptions and parameter descriptions reach the model without escapes; calls use the server's name", async () => {
    const tools = pi.session.getAllTools().filter((t) => /^mcp_(hostile|viavar)_/.test(t.name));
    const evil = tools.find((t) => t.name === "mcp_hostile_eviltool");
    assert.ok(evil, `tools: ${tools.map((t) => t.name).join(", ")}`);
    assertClean(
      "the tool definitions",
      JSON.stringify(tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }))),
      secrets,
    );
    assert.match(evil.description, /things/);
    pi.faux.setResponses([
      fauxAssistantMessage([fauxToolCall("mcp_hostile_eviltool", { q: "x" })], { stopReason: "toolUse" }),
      fauxAssistantMessage("ok"),
    ]);
    await pi.session.prompt("call the evil tool");
    const result = toolResults().at(-1)!;
    assert.equal(result.isError, false, JSON.stringify(result.content));
    assert.ok(
      readLog(callLog).some((e) => e.event === "call" && e.name === "evil\x1b[2Jtool"),
      "the server got the call under its own name",
    );
  });

  test("a tool error quoting the inline secret and a clipboard write reaches the model redacted and stripped", async () => {
    pi.faux.setResponses([
      fauxAssistantMessage([fauxToolCall("mcp_hostile_leak_env", {}), fauxToolCall("mcp_viavar_leak_env", {})], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("ok"),
    ]);
    await pi.session.prompt("leak");
    for (const name of ["mcp_hostile_leak_env", "mcp_viavar_leak_env"]) {
      const result = toolResults().find((r) => r.toolName === name)!;
      assert.equal(result.isError, true);
      const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
      assert.match(text, /failed with key \*\*\*/);
      assertClean(`the tool error of ${name}`, text, secrets);
    }
  });

  test("a server that dies on a call: its crash event, the retries of one that never starts, the logs and /mcp list show no secret and no escape", async () => {
    pi.faux.setResponses([
      fauxAssistantMessage([fauxToolCall("mcp_dies_echo", { text: "hi" })], { stopReason: "toolUse" }),
      fauxAssistantMessage("ok"),
    ]);
    await pi.session.prompt("make it die");
    await waitFor(
      () =>
        busEvents().some(
          (e) => e.channel === "mcp.local.crashed" && (e.payload as { serverId?: string }).serverId === "dies",
        ),
      "the crash event",
    );
    await waitFor(
      () =>
        busEvents().some(
          (e) => e.channel === "mcp.error" && (e.payload as { serverId?: string }).serverId === "crashy",
        ),
      "a failed retry",
    );
    const crashed = busEvents().find((e) => e.channel === "mcp.local.crashed")!;
    assert.ok(JSON.stringify(crashed.payload).includes("key is ***"), JSON.stringify(crashed.payload));
    await capturing(() => pi.session.prompt("/mcp list"));
    const listing = output.join("\n");
    assert.match(listing, /the key is \*\*\*/, "the notice and /mcp list quote the stderr, redacted");
    assert.match(listing, /boom/);
    assertClean("the notice and /mcp list", listing, secrets);
    assertClean("the events on pi's bus", JSON.stringify(busEvents()), secrets);
    const logs = allLogs(agentDir.dir);
    assert.ok(logs.some(([file]) => file.endsWith(path.join("servers", "crashy.log"))));
    for (const [file, text] of logs) assertClean(file, text, secrets);
  });
});

/** `pi --no-session -e . --mcp-config <config> -p "/mcp list"` with a scratch HOME; its stdout and stderr together. */
function piList(home: string, config: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [PI_CLI, "--no-session", "-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp list"],
      {
        cwd: home,
        env: {
          ...process.env,
          HOME: home,
          PI_CODING_AGENT_DIR: path.join(home, "agent"),
          PI_OFFLINE: "1",
          PI_MCP_STARTUP_BUDGET_MS: "60000",
          ...env,
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`pi did not finish within 60 s:\n${output}`));
    }, 60_000);
    child.on("exit", () => {
      clearTimeout(timer);
      resolve(output);
    });
  });
}

describe('the issue\'s reproductions with real `pi -p "/mcp list"`', { timeout: 180_000 }, () => {
  test("an inline `env` secret is hidden like a ${VAR} one: output, mcp.log and the server's log", async () => {
    const home = tempDir("mcp-bridge-redaction-home-");
    try {
      const inline = planted("PLANTED");
      const viaVar = planted("VIAVAR");
      const config = path.join(home.dir, "c.json");
      const leak = "echo API_KEY=$API_KEY; echo the value $API_KEY >&2; exit 1";
      writeFileSync(
        config,
        JSON.stringify({
          mcpServers: {
            crashy: { command: "sh", args: ["-c", leak], env: { API_KEY: inline } },
            viavar: { command: "sh", args: ["-c", leak], env: { API_KEY: "${MY_KEY}" } },
          },
        }),
      );
      const output = await piList(home.dir, config, { MY_KEY: viaVar });
      assert.match(output, /crashy +error/);
      assert.match(output, /the value \*\*\*/);
      assertClean("pi's output", output, [inline, viaVar]);
      const logs = allLogs(path.join(home.dir, "agent"));
      assert.ok(logs.some(([file]) => file.endsWith(path.join("servers", "crashy.log"))));
      for (const [file, text] of logs) assertClean(file, text, [inline, viaVar]);
    } finally {
      home.cleanup();
    }
  });

  test("a server's stderr with OSC 52, a screen clear and 8-bit CSI shows as plain text", async () => {
    const home = tempDir("mcp-bridge-escapes-home-");
    try {
      const config = path.join(home.dir, "c.json");
      writeFileSync(
        config,
        JSON.stringify({
          mcpServers: {
            esc: {
              command: "sh",
              args: ["-c", "printf 'boom \\033]52;c;cHduZWQ=\\007 \\033[2J \\233 31m\\r\\n' >&2; exit 3"],
            },
          },
        }),
      );
      const output = await piList(home.dir, config);
      assert.match(output, /esc +error/);
      assert.match(output, /boom/);
      assert.ok(!output.includes("cHduZWQ="), "the clipboard payload is gone with its sequence");
      assertClean("pi's output", output, []);
      for (const [file, text] of allLogs(path.join(home.dir, "agent"))) assertClean(file, text, []);
    } finally {
      home.cleanup();
    }
  });
});
