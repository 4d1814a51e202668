/**
 * The servers users put in `mcp.json`, started as they start them: the MCP project's reference servers through
 * `npx -y <package>`, and local servers that take 2 s, 5 s and 12 s before they read their first message (as an `npx`
 * server does while npm resolves it), all with the default settings, in one real pi session in-process (faux model).
 *
 * `npx` resolves each package from this repository's install (the project's `node_modules`), never from the network:
 * the servers run with npm offline and an empty npm cache, where npx fails rather than download (checked below too),
 * and the process that answers is the installed package's own file.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { processTree } from "../src/connection/local/process-tree.ts";
import { type InProcessPi, startInProcessPi } from "./pi-harness.ts";
import { PI_LINE } from "./pi-line.ts";
import { runPiCli } from "./pi-print.ts";
import { RecordingUI } from "./recording-ui.ts";
import { commandLine, EXTENSION_DIR, fixtureEntry, helloServer, REPO_ROOT, tempDir } from "./helpers.ts";

const HELLO_SERVER = helloServer();

/** A local server that sleeps before it starts serving; meanwhile what the bridge sends waits in its stdin, unread. */
function sleeper(seconds: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: "sh", args: ["-c", `sleep ${seconds}; exec node '${HELLO_SERVER}'`], ...extra };
}

/** npm offline with an empty cache: npx can only run what the project has installed, and fails on anything else. */
function npxOffline(cache: string): Record<string, string> {
  return { npm_config_offline: "true", npm_config_cache: cache };
}

/** `npx -y <package> …args` exactly as a user writes it, with `env` beside it. */
function npxEntry(pkg: string, args: string[], env: Record<string, string>): Record<string, unknown> {
  return { command: "npx", args: ["-y", `@modelcontextprotocol/${pkg}`, ...args], env };
}

/** Where the installed package's entry point really is (node_modules may be a link). */
function installedEntry(pkg: string): string {
  return realpathSync(path.join(REPO_ROOT, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js"));
}

interface BusEvent {
  channel: string;
  payload: Record<string, unknown>;
}

interface ToolResult {
  role: "toolResult";
  toolName: string;
  isError: boolean;
  content: Array<{ type: string; text?: string }>;
}

const NPX_SERVERS = {
  memory: "server-memory",
  filesystem: "server-filesystem",
  "sequential-thinking": "server-sequential-thinking",
  everything: "server-everything",
};
/** The longest any of them may take to connect here: the 12 s sleeper, plus room for a busy 2-core machine. */
const CONNECT_BOUND_MS = 60_000;

describe(
  "servers users run, started as they start them, with the default settings, in one pi session",
  { timeout: 180_000 },
  () => {
    const project = tempDir("mcp-bridge-real-project-");
    const agentDir = tempDir("mcp-bridge-real-agent-");
    const npmCache = tempDir("mcp-bridge-real-npm-cache-");
    const memoryFile = path.join(agentDir.dir, "memory.jsonl");
    const originalCwd = process.cwd();
    const ui = new RecordingUI();
    const events: BusEvent[] = [];
    /** Re-checks of what tests wait for, run on every bus event and every notice. */
    const watchers = new Set<() => void>();
    let pi: InProcessPi;
    let projectDir: string;

    const poke = () => {
      for (const watcher of [...watchers]) watcher();
    };

    /** Resolves with `check`'s first defined answer, checked now and after each event or notice; rejects after `ms`. */
    function until<T>(check: () => T | undefined, what: string, ms = CONNECT_BOUND_MS): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const done = () => {
          clearTimeout(timer);
          watchers.delete(watch);
        };
        const watch = () => {
          const value = check();
          if (value === undefined) return;
          done();
          resolve(value);
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`timed out after ${ms} ms waiting for ${what}; notices so far:\n${ui.notices.join("\n")}`));
        }, ms);
        watchers.add(watch);
        watch();
      });
    }

    /**
     * Why a server is known to have failed: a failed retry (`mcp.error`), or a notice (a first connect that fails has no
     * event of its own).
     */
    function failure(server: string): string | undefined {
      const retry = events.find((e) => e.channel === "mcp.error" && e.payload.serverId === server);
      if (retry) return String(retry.payload.error);
      return ui.notices
        .flatMap((n) => n.split("\n"))
        .find((line) => line.includes(`✕ ${server}:`) || line.includes(`MCP server '${server}' failed to start`));
    }

    /** Waits for the server's `mcp.connected`; fails at once, with the reason, if the server is reported failed. */
    async function connected(server: string): Promise<BusEvent> {
      const outcome = await until(
        () => events.find((e) => e.channel === "mcp.connected" && e.payload.serverId === server) ?? failure(server),
        `'${server}' to connect`,
      );
      if (typeof outcome === "string") assert.fail(`'${server}' did not connect: ${outcome}`);
      return outcome;
    }

    /** pi's name for a server's tool, as the bridge registered it. */
    function toolName(server: string, original: string): string {
      const registered = events.filter((e) => e.channel.startsWith("tools.") && e.payload.serverId === server);
      const tools = registered.flatMap((e) => e.payload.tools as Array<{ name: string; originalName: string }>);
      const tool = tools.find((t) => t.originalName === original);
      assert.ok(tool, `'${server}' registered '${original}'`);
      return tool.name;
    }

    /**
     * The model calls each tool given (each list is one turn), then ends; the results, in order. On pi 1.x, where MCP tools
     * wait behind `tool_search` by default (as pi's own MCP keeps them out of the request), it finds them there first.
     */
    async function modelCalls(...turns: Array<Array<[string, Record<string, unknown>]>>): Promise<ToolResult[]> {
      const start = pi.session.messages.length;
      const search: Array<Array<[string, Record<string, unknown>]>> =
        PI_LINE === "1.x" ? [turns.flat().map(([name]) => ["tool_search", { query: name }])] : [];
      pi.faux.setResponses([
        ...[...search, ...turns].map((calls) =>
          fauxAssistantMessage(
            calls.map(([name, args]) => fauxToolCall(name, args)),
            { stopReason: "toolUse" },
          ),
        ),
        fauxAssistantMessage("done"),
      ]);
      await pi.session.prompt("use the tools");
      return pi.session.messages
        .slice(start)
        .filter((m) => (m as { role: string }).role === "toolResult") as unknown as ToolResult[];
    }

    const text = (result: ToolResult | undefined) => result?.content.map((c) => c.text ?? "").join("\n") ?? "";

    function resultOf(results: ToolResult[], name: string): string {
      const result = results.find((r) => r.toolName === name);
      assert.ok(result, `a result for ${name}`);
      assert.equal(result.isError, false, `${name}: ${text(result)}`);
      return text(result);
    }

    before(async () => {
      // A project that has the servers installed, as `npm install` leaves one: npx finds them in its node_modules.
      projectDir = realpathSync(project.dir);
      symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(projectDir, "node_modules"));
      const offline = npxOffline(npmCache.dir);
      const servers: Record<string, Record<string, unknown>> = {
        memory: npxEntry("server-memory", [], { ...offline, MEMORY_FILE_PATH: memoryFile }),
        // The bridge gives every server the project root as its root, which this server takes in place of its arguments.
        filesystem: npxEntry("server-filesystem", [projectDir], offline),
        "sequential-thinking": npxEntry("server-sequential-thinking", [], offline),
        everything: npxEntry("server-everything", [], offline),
        "slow2-auto": sleeper(2),
        "slow2-pinned": sleeper(2, { protocolVersion: "2025-11-25" }),
        "slow5-auto": sleeper(5),
        "slow5-pinned": sleeper(5, { protocolVersion: "2025-11-25" }),
        // Past what initTimeout was by default before (10 s); now within it (60 s).
        "slow12-auto": sleeper(12),
        "slow12-pinned": sleeper(12, { protocolVersion: "2025-11-25" }),
        mute: { ...fixtureEntry("never-init"), initTimeout: 1500 },
      };
      // User-level, so no project trust. Approval prompts are off, as a user may set them (approval has its own tests).
      writeFileSync(path.join(agentDir.dir, "mcp.json"), JSON.stringify({ approval: "never", mcpServers: servers }));
      // What the bridge tells other extensions, as one loaded before it hears it.
      const recorder = path.join(projectDir, "bus-recorder.ts");
      writeFileSync(
        recorder,
        `export default function (pi) {
        for (const channel of ["mcp.connected", "mcp.error", "mcp.local.spawned", "tools.registered", "tools.updated"]) {
          pi.events.on(channel, (payload) => globalThis.__realServersEvent?.(channel, payload));
        }
      }`,
      );
      (
        globalThis as { __realServersEvent?: (channel: string, payload: Record<string, unknown>) => void }
      ).__realServersEvent = (channel, payload) => {
        events.push({ channel, payload });
        poke();
      };
      process.env.PI_CODING_AGENT_DIR = agentDir.dir;
      // The default startup budget: servers slower than it connect after the session has started.
      delete process.env.PI_MCP_STARTUP_BUDGET_MS;
      process.chdir(projectDir);
      pi = await startInProcessPi({
        cwd: projectDir,
        agentDir: agentDir.dir,
        extensionPaths: [recorder, EXTENSION_DIR],
      });
      const context = ui.context();
      const notify = context.notify.bind(context);
      context.notify = (message, type) => {
        notify(message, type);
        poke();
      };
      await pi.session.bindExtensions({ uiContext: context });
    });

    after(async () => {
      await pi?.close();
      process.chdir(originalCwd);
      for (const dir of [project, agentDir, npmCache]) dir.cleanup();
    });

    test("the four reference servers connect through `npx -y`, each running this repository's installed copy", async () => {
      for (const [server, pkg] of Object.entries(NPX_SERVERS)) {
        await connected(server);
        const spawned = events.find((e) => e.channel === "mcp.local.spawned" && e.payload.serverId === server);
        assert.equal(spawned?.payload.command, "npx");
        // npx runs the package's bin below itself; the script that process runs is the installed package's file.
        const scripts = processTree(spawned!.payload.pid as number).flatMap((p) =>
          commandLine(p.pid)
            .split(" ")
            .filter((arg) => arg.includes("node_modules")),
        );
        assert.ok(
          scripts.some((arg) => realpathSync(arg) === installedEntry(pkg)),
          `${server} runs ${installedEntry(pkg)}; the processes under npx run: ${scripts.join(", ") || "nothing from node_modules"}`,
        );
      }
    });

    test("the model calls a real tool of each: memory stores and reads an entity, filesystem writes and reads a file, one thought, a sum", async () => {
      for (const server of Object.keys(NPX_SERVERS)) await connected(server);
      const file = path.join(projectDir, "note.txt");
      const memoryCreate = toolName("memory", "create_entities");
      const memoryRead = toolName("memory", "read_graph");
      const write = toolName("filesystem", "write_file");
      const read = toolName("filesystem", "read_text_file");
      const think = toolName("sequential-thinking", "sequentialthinking");
      const sum = toolName("everything", "get-sum");
      const results = await modelCalls(
        [
          [
            memoryCreate,
            { entities: [{ name: "Ada", entityType: "person", observations: ["wrote the first program"] }] },
          ],
          [write, { path: file, content: "written through pi\n" }],
          [
            think,
            { thought: "Two and forty make forty-two.", thoughtNumber: 1, totalThoughts: 1, nextThoughtNeeded: false },
          ],
          [sum, { a: 2, b: 40 }],
        ],
        [
          [memoryRead, {}],
          [read, { path: file }],
        ],
      );
      assert.match(resultOf(results, memoryCreate), /"name": ?"Ada"/);
      const graph = JSON.parse(resultOf(results, memoryRead)) as {
        entities: Array<{ name: string; observations: string[] }>;
      };
      assert.deepEqual(graph.entities.find((e) => e.name === "Ada")?.observations, ["wrote the first program"]);
      assert.ok(readFileSync(memoryFile, "utf8").includes('"Ada"'), "the server kept it in its memory file");
      assert.match(resultOf(results, write), /Successfully wrote to/);
      assert.equal(readFileSync(file, "utf8"), "written through pi\n");
      assert.equal(resultOf(results, read), "written through pi\n");
      const thought = JSON.parse(resultOf(results, think)) as {
        thoughtNumber: number;
        nextThoughtNeeded: boolean;
        thoughtHistoryLength: number;
      };
      assert.deepEqual([thought.thoughtNumber, thought.nextThoughtNeeded, thought.thoughtHistoryLength], [1, false, 1]);
      assert.equal(resultOf(results, sum), "The sum of 2 and 40 is 42.");
    });

    for (const seconds of [2, 5, 12]) {
      for (const protocol of ["auto", "pinned"]) {
        const server = `slow${seconds}-${protocol}`;
        const how = protocol === "auto" ? "protocolVersion unset (auto)" : "protocolVersion 2025-11-25";
        test(`a server that starts serving after ${seconds} s connects, ${how}; the model calls its tool`, async () => {
          await connected(server);
          const greet = toolName(server, "greet");
          const results = await modelCalls([[greet, { name: server }]]);
          assert.equal(resultOf(results, greet), `Hello, ${server}!`);
        });
      }
    }

    test("a server that never answers fails at its initTimeout (1.5 s) and is retried; the error names the setting and its value", async () => {
      const retry = await until(
        () => events.find((e) => e.channel === "mcp.error" && e.payload.serverId === "mute"),
        "a failed retry of 'mute'",
      );
      const reason = String(retry.payload.error);
      assert.match(reason, /initTimeout/);
      assert.match(reason, /1\.5 s/);
      assert.equal(
        events.some((e) => e.channel === "mcp.connected" && e.payload.serverId === "mute"),
        false,
      );
      // /mcp lists it as not connected, with the reason.
      const before = ui.notices.length;
      await pi.session.prompt("/mcp list");
      const section = ui.notices
        .slice(before)
        .join("\n")
        .split("\n\n")
        .find((part) => part.startsWith("mute  "));
      assert.ok(section, "/mcp list has a section for 'mute'");
      assert.doesNotMatch(section, /^mute {2}connected/);
      assert.match(section, /initTimeout/);
    });
  },
);

describe("npx under the settings the servers above run with", { timeout: 60_000 }, () => {
  test("a package the project has not installed fails at once (ENOTCACHED) rather than being downloaded", async () => {
    const empty = tempDir("mcp-bridge-npx-nowhere-");
    const cache = tempDir("mcp-bridge-npx-cache-");
    try {
      const child = spawn("npx", ["-y", "@modelcontextprotocol/server-memory"], {
        cwd: empty.dir,
        env: { ...process.env, ...npxOffline(cache.dir) },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      child.stdout.on("data", (d) => (output += d));
      child.stderr.on("data", (d) => (output += d));
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      assert.notEqual(code, 0, output);
      assert.match(output, /ENOTCACHED/);
    } finally {
      empty.cleanup();
      cache.cleanup();
    }
  });
});

describe("the real pi command line", { timeout: 120_000 }, () => {
  test("`pi -p /mcp` with an npx server and one that starts after 5 s, default settings: both connected", async () => {
    const home = tempDir("mcp-bridge-real-home-");
    const cache = tempDir("mcp-bridge-real-cli-cache-");
    try {
      const config = path.join(home.dir, "mcp.json");
      writeFileSync(
        config,
        JSON.stringify({
          mcpServers: {
            memory: npxEntry("server-memory", [], {
              ...npxOffline(cache.dir),
              MEMORY_FILE_PATH: path.join(home.dir, "memory.jsonl"),
            }),
            slow5: sleeper(5),
          },
        }),
      );
      const { code, output } = await runPiCli(["-e", EXTENSION_DIR, "--mcp-config", config, "-p", "/mcp"], {
        home: home.dir,
      });
      assert.equal(code, 0, output);
      assert.match(output, /memory {2}connected {2}stdio/, output);
      assert.match(output, /slow5 {2}connected {2}stdio/, output);
      assert.match(output, /2 servers configured \| 2 connected/, output);
    } finally {
      home.cleanup();
      cache.cleanup();
    }
  });
});
