/**
 * The bridge as a whole: config files on disk in every layer, parallel connects, what is reported, and shutdown.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import * as path from "node:path";
import { describe, test } from "node:test";
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import { type BridgeOptions, McpBridge } from "../src/bridge/mcp-bridge.ts";
import { loadLayeredConfig } from "../src/config/files.ts";
import { orphanWatchdog, WATCHDOG_SCRIPT } from "../src/connection/local/orphan-watchdog.ts";
import { processTree } from "../src/connection/local/process-tree.ts";
import { ToolCache } from "../src/bridge/tool-cache.ts";
import { TrustStore } from "../src/trust/trust-store.ts";
import { ProjectTrust } from "../src/trust/project-trust.ts";
import type { SignInHandler } from "../src/oauth/provider.ts";
import { AuthStore } from "../src/oauth/storage.ts";
import { automaticSignIn } from "../src/oauth/sign-in.ts";
import { startOAuthServer } from "./fixtures/oauth-server.ts";
import { serverRows } from "../src/pi/server-rows.ts";
import { trustCommand, untrustCommand } from "../src/pi/command-trust.ts";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { RecordingUI } from "./recording-ui.ts";
import { formatStartupSummary } from "../src/pi/status-format.ts";
import { ToolRegistry } from "../src/pi/tool-registry.ts";
import { startHanging } from "./fixtures/http-servers.ts";
import {
  commandLine,
  connectionFor,
  FAST_RECONNECT,
  fixtureEntry,
  isAlive,
  killIfAlive,
  readLog,
  REPO_ROOT,
  tempDir,
  testBridge,
  waitFor,
} from "./helpers.ts";
import { runTool } from "./pi-tools.ts";

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

function makeBridge(root: string, extraPath?: string, options: Partial<BridgeOptions> = {}): McpBridge {
  return testBridge(path.join(root, "project"), {
    agentDir: path.join(root, "agent"),
    bundledPath: path.join(root, "bundled", "mcp.json"),
    extraPath,
    ...options,
  });
}

/** A bridge whose tool lists go to a registry, as src/extension.ts wires them. */
/** A bridge whose one server, `secure`, needs a sign-in: its page "opens" and the user never comes. */
async function bridgeWaitingForSignIn(root: string) {
  const fixture = await startOAuthServer();
  write(
    path.join(root, "project", ".pi", "mcp.json"),
    JSON.stringify({ mcpServers: { secure: { url: fixture.url } } }),
  );
  const opened = { pages: 0 };
  const { bridge } = registeredBridge(root, {
    authStore: new AuthStore(path.join(root, "agent", "mcp-auth")),
    // The sign-in would wait its whole timeout.
    signIn: () => () => void opened.pages++,
    signInTimeoutMs: 30 * 60_000,
  });
  return { bridge, fixture, opened };
}

function registeredBridge(root: string, options: Partial<BridgeOptions> = {}) {
  const tools = new Map<string, ToolDefinition>();
  const bridge = makeBridge(root, undefined, options);
  const registry = new ToolRegistry(
    (def) => tools.set(def.name, def as ToolDefinition),
    (name) => bridge.connection(name),
  );
  bridge.onTools((connection, list) => registry.syncServer(connection, list));
  return { bridge, registry, tools };
}

/** Processes this test process has started that are still running. */
/** Server processes under this test process (the orphan watchdog that comes with them is not one). */
function childCount(): number {
  return processTree(process.pid).filter(
    (p) => p.pid !== process.pid && isAlive(p.pid) && !commandLine(p.pid).includes(WATCHDOG_SCRIPT),
  ).length;
}

describe("McpBridge", { timeout: 120_000 }, () => {
  test("layers real files, starts enabled servers only, reports each problem once, and shuts everything down", async () => {
    const tmp = tempDir();
    const log = path.join(tmp.dir, "events.jsonl");
    const server = (extra: Record<string, unknown> = {}) => ({
      ...fixtureEntry(),
      env: { FIXTURE_LOG: log },
      ...extra,
    });
    // Bundled: one server the user file overrides and one it does not.
    write(
      path.join(tmp.dir, "bundled", "mcp.json"),
      JSON.stringify({ mcpServers: { shared: { command: "bundled-only" }, fromBundle: server() } }),
    );
    // User: comments and a BOM; a server the project switches off; a broken entry.
    write(
      path.join(tmp.dir, "agent", "mcp.json"),
      `\uFEFF{\n  // user servers\n  "servers": {\n    "shared": ${JSON.stringify(server())},\n    "switchedOff": ${JSON.stringify(server())},\n    "broken": { "url": "not a url" },\n  },\n}`,
    );
    // Project: opencode's shape, switching the user server off.
    write(
      path.join(tmp.dir, "project", ".pi", "mcp.json"),
      JSON.stringify({ mcp: { switchedOff: { enabled: false }, local: { type: "local", ...server() } } }),
    );
    // --mcp-config file, relative to the project root.
    write(path.join(tmp.dir, "project", "extra.json"), JSON.stringify({ mcpServers: { fromFlag: server() } }));

    const bridge = makeBridge(tmp.dir, "extra.json");
    try {
      await bridge.start();
      const byName = Object.fromEntries([...bridge.connections.values()].map((c) => [c.name, c]));
      // Highest-priority file first, each in its own order.
      assert.deepEqual(Object.keys(byName), ["fromFlag", "switchedOff", "local", "shared", "fromBundle"]);
      assert.equal(byName.fromFlag!.config.source.scope, "flag");
      assert.equal(byName.local!.config.source.scope, "project");
      assert.equal(byName.shared!.config.source.scope, "user");
      assert.equal(byName.fromBundle!.config.source.scope, "bundled");
      for (const name of ["fromFlag", "local", "shared", "fromBundle"])
        assert.equal(byName[name]!.status, "connected", name);
      assert.equal(byName.switchedOff!.status, "disabled");
      assert.equal(readLog(log).filter((e) => e.event === "start").length, 4, "the disabled server was never started");

      assert.equal(bridge.problems.length, 1);
      assert.equal(bridge.problems[0]!.server, "broken");
      assert.match(bridge.problems[0]!.source.path, /agent\/mcp\.json$/);

      const registry = new ToolRegistry(
        () => {},
        (name) => bridge.connection(name),
      );
      for (const c of bridge.connections.values()) if (c.status === "connected") registry.registerServer(c);
      const rows = serverRows(bridge, registry, process.env);
      // The user's file, where it is on, is not where to look for why it is off.
      assert.equal(rows.find((r) => r.name === "switchedOff")!.source, "user, switched in project");
      const summary = formatStartupSummary(rows, bridge.problems, registry.warnings);
      assert.match(summary!, /MCP: 4 of 4 servers connected/);
      assert.match(summary!, /server 'broken' in user config .*: `url` is not a valid URL/);
    } finally {
      await bridge.shutdown();
      tmp.cleanup();
    }
    const pids = readLog(log).map((e) => e.pid);
    await waitFor(() => pids.every((pid) => !isAlive(pid)), "every server to stop");
  });

  test("servers connect in parallel: a hung server does not hold up the others", async () => {
    const tmp = tempDir();
    // When the second hung server receives its request, the first must still be waiting: connects overlap. Both
    // requests have to go out within the `timeout`: 1.5 s did not hold on a loaded machine.
    const first = await startHanging();
    let firstStillWaiting: boolean | undefined;
    const second = await startHanging(() => {
      firstStillWaiting ??= first.openSockets() > 0 && first.requests.length === 1;
    });
    const log = path.join(tmp.dir, "events.jsonl");
    write(
      path.join(tmp.dir, "project", ".pi", "mcp.json"),
      JSON.stringify({
        mcpServers: {
          hung1: { url: first.url, timeout: 5000, reconnect: false },
          hung2: { url: second.url, timeout: 5000, reconnect: false },
          crashes: { ...fixtureEntry("crash-on-start"), env: { FIXTURE_LOG: log }, maxRestarts: 0 },
          works: { ...fixtureEntry(), env: { FIXTURE_LOG: log } },
        },
      }),
    );
    const bridge = makeBridge(tmp.dir);
    try {
      await bridge.start();
      assert.equal(firstStillWaiting, true);
      assert.equal(bridge.connection("works")!.status, "connected");
      for (const name of ["hung1", "hung2", "crashes"]) assert.equal(bridge.connection(name)!.status, "error", name);
      assert.match(
        bridge.connection("hung1")!.lastError!,
        /no answer to the MCP handshake after [\d.]+ s, when its `timeout` of 5 s ran out/,
      );
      assert.match(bridge.connection("crashes")!.lastError!, /exited with code 3/);
      await waitFor(
        () => first.openSockets() === 0 && second.openSockets() === 0,
        "no socket left to the hung servers",
      );
    } finally {
      await bridge.shutdown();
      await first.close();
      await second.close();
      tmp.cleanup();
    }
  });

  test("a missing --mcp-config file, a directory in place of a file, and invalid JSON are reported, not fatal", async () => {
    const tmp = tempDir();
    mkdirSync(path.join(tmp.dir, "agent", "mcp.json"), { recursive: true });
    write(path.join(tmp.dir, "project", ".pi", "mcp.json"), "{ not json");
    const bridge = makeBridge(tmp.dir, "missing.json");
    try {
      await bridge.start();
      assert.equal(bridge.connections.size, 0);
      const messages = bridge.problems.map((p) => `${p.source.scope}: ${p.message}`);
      assert.equal(messages.length, 3, messages.join("\n"));
      assert.match(messages.join("\n"), /flag: cannot read the file: file not found/);
      assert.match(messages.join("\n"), /user: cannot read the file: is a directory/);
      assert.match(messages.join("\n"), /project: not valid JSON/);
    } finally {
      await bridge.shutdown();
      tmp.cleanup();
    }
  });

  test("--mcp-config=~/team.json (a ~ no shell expands after =) is the file in the home directory", async () => {
    const tmp = tempDir();
    const home = process.env.HOME;
    process.env.HOME = path.join(tmp.dir, "home");
    try {
      write(path.join(tmp.dir, "home", "team.json"), JSON.stringify({ mcpServers: { team: { command: "x" } } }));
      const locations = { projectRoot: path.join(tmp.dir, "project"), agentDir: path.join(tmp.dir, "agent") };
      const config = await loadLayeredConfig({ ...locations, bundledPath: "/none.json", extraPath: "~/team.json" });
      assert.deepEqual(config.problems, []);
      assert.deepEqual(
        config.servers.map((s) => [s.name, s.source.path]),
        [["team", path.join(tmp.dir, "home", "team.json")]],
      );
    } finally {
      process.env.HOME = home;
      tmp.cleanup();
    }
  });

  /** A bridge in a project and agent dir of its own, with only the bundled config (no servers). */
  function bundledOnly() {
    const project = tempDir();
    const agent = tempDir();
    const bridge = new McpBridge({
      projectRoot: project.dir,
      agentDir: agent.dir,
      bundledPath: path.join(REPO_ROOT, "mcp.json"),
      env: process.env,
      clientInfo: { name: "test", version: "0" },
    });
    return { project, agent, bridge };
  }

  // A trust answer, a sign-in's tokens or a notice given is saved in the background; a quit right after must not lose it.
  test("shutdown waits for the files being written: a trust answer saved as pi quits is on disk", async () => {
    const { project, agent, bridge } = bundledOnly();
    const file = path.join(agent.dir, "mcp-bridge", "trust.json");
    try {
      await bridge.start();
      const saving = new TrustStore(file).save(project.dir, new Map([["db", { hash: "h1", trusted: true }]]));
      await bridge.shutdown();
      assert.match(readFileSync(file, "utf8"), /"h1"/, "written before shutdown ended");
      await saving;
    } finally {
      project.cleanup();
      agent.cleanup();
    }
  });

  test("the bundled mcp.json ships with no servers", async () => {
    const { project, agent, bridge } = bundledOnly();
    try {
      await bridge.start();
      assert.equal(bridge.connections.size, 0);
      assert.deepEqual(bridge.problems, []);
    } finally {
      await bridge.shutdown();
      project.cleanup();
      agent.cleanup();
    }
  });

  test("a lazy server: tools from the cache without a process, started on the first call; the cache is filled in the background once", async (t) => {
    const tmp = tempDir();
    // Removed however the test ends.
    t.after(() => tmp.cleanup());
    const log = path.join(tmp.dir, "events.jsonl");
    const cacheFile = path.join(tmp.dir, "agent", "mcp-bridge", "tool-cache.json");
    write(
      path.join(tmp.dir, "project", ".pi", "mcp.json"),
      JSON.stringify({ mcpServers: { db: { ...fixtureEntry(), env: { FIXTURE_LOG: log }, lazy: true } } }),
    );
    const starts = () => readLog(log).filter((e) => e.event === "start");
    // First session: nothing cached, so the server starts once in the background and its tools arrive late.
    const first = registeredBridge(tmp.dir, { toolCache: new ToolCache(cacheFile) });
    try {
      await first.bridge.start();
      await waitFor(() => first.tools.has("mcp_db_echo"), "the tools of the background start");
    } finally {
      await first.bridge.shutdown();
    }
    assert.equal(starts().length, 1);
    await waitFor(() => {
      const entries = Object.values(
        (JSON.parse(readFileSync(cacheFile, "utf8")) as { entries: Record<string, { server: string }> }).entries,
      );
      return entries.some((e) => e.server === "db");
    }, "the cache entry");

    // Second session: the cache has the tools; nothing starts until a call.
    const childrenBefore = childCount();
    const second = registeredBridge(tmp.dir, { toolCache: new ToolCache(cacheFile) });
    try {
      await second.bridge.start();
      const db = second.bridge.connection("db")!;
      assert.equal(db.status, "not started");
      assert.ok(second.tools.has("mcp_db_echo"), "registered from the cache");
      assert.equal(second.registry.toolsOf("db").length, db.tools.length);
      assert.equal(starts().length, 1, "no new process");
      assert.equal(childCount(), childrenBefore, "no child process either");
      const woken = await runTool(second.tools.get("mcp_db_echo"), { text: "wake" });
      assert.equal(woken.text, "wake");
      assert.deepEqual(
        woken.updates,
        ["MCP server 'db' is connecting; 'echo' runs once it is ready"],
        "the wait is told",
      );
      assert.equal(starts().length, 2, "started by the call");
      assert.equal(db.status, "connected");
      assert.equal(childCount(), childrenBefore + 1);
    } finally {
      await second.bridge.shutdown();
    }
    for (const start of starts()) assert.equal(isAlive(start.pid), false);

    // A project with a different definition under the same name gets its own entry instead of evicting this one.
    write(
      path.join(tmp.dir, "project", ".pi", "mcp.json"),
      JSON.stringify({ mcpServers: { db: { ...fixtureEntry(), env: { FIXTURE_LOG: log, OTHER: "1" }, lazy: true } } }),
    );
    const third = registeredBridge(tmp.dir, { toolCache: new ToolCache(cacheFile) });
    try {
      await third.bridge.start();
      assert.equal(
        third.bridge.connection("db")!.status === "not started",
        false,
        "a new definition is not in the cache: it starts",
      );
      await waitFor(() => third.bridge.connection("db")!.status === "connected", "the background start");
    } finally {
      await third.bridge.shutdown();
    }
    await waitFor(() => {
      const entries = Object.values(
        (JSON.parse(readFileSync(cacheFile, "utf8")) as { entries: Record<string, { server: string }> }).entries,
      );
      return entries.filter((e) => e.server === "db").length === 2;
    }, "two cache entries for two definitions of 'db'");
  });

  test("a lazy server's cached tools are registered within its limits as they are now (maxTools lowered since)", async (t) => {
    const tmp = tempDir();
    t.after(() => tmp.cleanup());
    const cacheFile = path.join(tmp.dir, "agent", "mcp-bridge", "tool-cache.json");
    const config = (entry: object) =>
      write(path.join(tmp.dir, "project", ".pi", "mcp.json"), JSON.stringify({ mcpServers: { db: entry } }));
    config({ ...fixtureEntry(), lazy: true });
    const first = registeredBridge(tmp.dir, { toolCache: new ToolCache(cacheFile) });
    try {
      await first.bridge.start();
      await waitFor(() => first.registry.toolsOf("db").length > 1, "the tools of the background start");
    } finally {
      await first.bridge.shutdown();
    }
    config({ ...fixtureEntry(), lazy: true, maxTools: 1 });
    const second = registeredBridge(tmp.dir, { toolCache: new ToolCache(cacheFile) });
    try {
      await second.bridge.start();
      const db = second.bridge.connection("db")!;
      assert.equal(db.status, "not started", "registered from the cache");
      assert.equal(db.tools.length, 1);
      assert.deepEqual(
        second.registry.toolsOf("db").map((tool) => tool.originalName),
        db.tools.map((tool) => tool.name),
      );
    } finally {
      await second.bridge.shutdown();
    }
  });

  test("a definition replaced in the session (/mcp add over an entry) gets its own cache entry, not the old one's", async () => {
    const tmp = tempDir();
    const cacheFile = path.join(tmp.dir, "agent", "mcp-bridge", "tool-cache.json");
    write(path.join(tmp.dir, "project", ".pi", "mcp.json"), JSON.stringify({ mcpServers: { db: fixtureEntry() } }));
    const { bridge } = registeredBridge(tmp.dir, { toolCache: new ToolCache(cacheFile) });
    try {
      await bridge.start();
      const first = bridge.connection("db")!;
      await waitFor(() => first.status === "connected", "the first definition to connect");
      const second = await bridge.replace({ ...first.config, env: { ...first.config.env, OTHER: "1" } });
      await waitFor(() => second.status === "connected", "the second definition to connect");
    } finally {
      await bridge.shutdown();
    }
    const entries = (JSON.parse(readFileSync(cacheFile, "utf8")) as { entries: Record<string, { server: string }> })
      .entries;
    assert.equal(Object.values(entries).filter((e) => e.server === "db").length, 2, "one entry per definition");
    tmp.cleanup();
  });

  test("a server replaced twice at once (/mcp on typed twice): both succeed, the second's runs, none is left after", async () => {
    const tmp = tempDir();
    const log = path.join(tmp.dir, "events.jsonl");
    const entries = { twice: { ...fixtureEntry(), env: { FIXTURE_LOG: log } } };
    write(path.join(tmp.dir, "project", ".pi", "mcp.json"), JSON.stringify({ mcpServers: entries }));
    const { bridge } = registeredBridge(tmp.dir);
    try {
      await bridge.start();
      const config = bridge.connection("twice")!.config;
      const [, second] = await Promise.all([bridge.replace(config), bridge.replace(config)]);
      assert.equal(bridge.connection("twice"), second);
      assert.equal(second.status, "connected");
    } finally {
      await bridge.shutdown();
    }
    const left = readLog(log).filter((e) => e.event === "start" && isAlive(e.pid));
    assert.deepEqual(left, [], "no server process left once the bridge has shut down");
    tmp.cleanup();
  });

  test("shutdown returns only once the tool lists that arrived are in the cache file", async () => {
    const tmp = tempDir();
    const cacheFile = path.join(tmp.dir, "agent", "mcp-bridge", "tool-cache.json");
    write(path.join(tmp.dir, "project", ".pi", "mcp.json"), JSON.stringify({ mcpServers: { s: fixtureEntry() } }));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    /** The real cache, but each write waits until the test lets it go: a write still under way at shutdown. */
    class HeldCache extends ToolCache {
      override async set(key: string, entry: Parameters<ToolCache["set"]>[1]): Promise<void> {
        await gate;
        return super.set(key, entry);
      }
    }
    const { bridge } = registeredBridge(tmp.dir, { toolCache: new HeldCache(cacheFile) });
    try {
      await bridge.start();
      let finished = false;
      const shutdown = bridge.shutdown().then(() => {
        finished = true;
      });
      await waitFor(() => bridge.connection("s")!.status === "disconnected", "the server to be closed");
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(finished, false, "the servers are closed, but a tool list is still being written");
      release();
      await shutdown;
      const { entries } = JSON.parse(readFileSync(cacheFile, "utf8")) as {
        entries: Record<string, { server: string }>;
      };
      assert.deepEqual(
        Object.values(entries).map((e) => e.server),
        ["s"],
      );
    } finally {
      release();
      await bridge.shutdown();
      tmp.cleanup();
    }
  });

  test("a tools listener that was disposed is not called; the others still are", async () => {
    const tmp = tempDir();
    write(path.join(tmp.dir, "project", ".pi", "mcp.json"), JSON.stringify({ mcpServers: { s: fixtureEntry() } }));
    const bridge = makeBridge(tmp.dir);
    const heard: string[] = [];
    const dispose = bridge.onTools((connection) => heard.push(`disposed ${connection.name}`));
    bridge.onTools((connection) => heard.push(`kept ${connection.name}`));
    dispose();
    try {
      await bridge.start();
      assert.deepEqual(heard, ["kept s"]);
    } finally {
      await bridge.shutdown();
      tmp.cleanup();
    }
  });

  test("startup waits for servers only up to its budget; a slow server's tools are registered when it connects", async () => {
    const tmp = tempDir();
    const log = path.join(tmp.dir, "events.jsonl");
    write(
      path.join(tmp.dir, "project", ".pi", "mcp.json"),
      JSON.stringify({
        mcpServers: {
          quick: fixtureEntry(),
          slow: {
            command: process.execPath,
            args: [path.join(REPO_ROOT, "bench", "slow-start-server.mjs")],
            env: { START_DELAY_MS: "4000" },
          },
          mute: { ...fixtureEntry("never-init"), env: { FIXTURE_LOG: log }, initTimeout: 5000 },
        },
      }),
    );
    const { bridge, tools } = registeredBridge(tmp.dir, { startupBudgetMs: 1000 });
    try {
      await bridge.start();
      assert.equal(
        bridge.connection("slow")!.status,
        "connecting",
        "start() returned before the slow server was ready",
      );
      assert.equal(bridge.connection("mute")!.status, "connecting", "… and before the mute one's initTimeout");
      assert.equal(tools.has("mcp_slow_echo"), false);
      // On a loaded machine even the quick one may need longer than the budget; it registers when it is ready.
      await waitFor(() => tools.has("mcp_quick_echo"), "the quick server's tools", 15_000);
      await waitFor(() => tools.has("mcp_slow_echo"), "the slow server's tools", 15_000);
      assert.equal((await runTool(tools.get("mcp_slow_echo"), { text: "late" })).text, "late");
      await waitFor(() => bridge.connection("mute")!.status === "error", "the mute server's initTimeout", 15_000);
      assert.equal(isAlive(readLog(log)[0]!.pid), false, "killed at its initTimeout");
    } finally {
      await bridge.shutdown();
      tmp.cleanup();
    }
  });

  test("a startup budget longer than a timer holds (PI_MCP_STARTUP_BUDGET_MS=3000000000) waits, not 1 ms", async () => {
    const tmp = tempDir();
    write(
      path.join(tmp.dir, "project", ".pi", "mcp.json"),
      JSON.stringify({
        mcpServers: {
          slow: {
            command: process.execPath,
            args: [path.join(REPO_ROOT, "bench", "slow-start-server.mjs")],
            env: { START_DELAY_MS: "300" },
          },
        },
      }),
    );
    const { bridge, tools } = registeredBridge(tmp.dir, { startupBudgetMs: 3_000_000_000 });
    try {
      await bridge.start();
      assert.equal(bridge.connection("slow")!.status, "connected", "start() waited for it");
      assert.ok(tools.has("mcp_slow_echo"));
    } finally {
      await bridge.shutdown();
      tmp.cleanup();
    }
  });

  test("/mcp's row of an untrusted project server whose name has a space quotes it in the /mcp trust it shows", async () => {
    const tmp = tempDir();
    write(
      path.join(tmp.dir, "project", ".pi", "mcp.json"),
      JSON.stringify({ mcpServers: { "my db": fixtureEntry() } }),
    );
    const trust = new TrustStore(path.join(tmp.dir, "agent", "mcp-bridge", "trust.json"));
    const { bridge, registry } = registeredBridge(tmp.dir, {
      projectTrust: new ProjectTrust(path.join(tmp.dir, "project"), trust),
    });
    try {
      await bridge.start();
      const [row] = serverRows(bridge, registry, process.env);
      assert.deepEqual([row?.status, row?.detail], ["not trusted", '/mcp trust "my db" runs it']);
    } finally {
      await bridge.shutdown();
      tmp.cleanup();
    }
  });

  test("/mcp trust and /mcp untrust of a server whose name has a space quote it in the command they suggest", async () => {
    const tmp = tempDir();
    const entries = { "my db": { ...fixtureEntry(), enabled: false } };
    write(path.join(tmp.dir, "project", ".pi", "mcp.json"), JSON.stringify({ mcpServers: entries }));
    const trust = new TrustStore(path.join(tmp.dir, "agent", "mcp-bridge", "trust.json"));
    const deps = registeredBridge(tmp.dir, { projectTrust: new ProjectTrust(path.join(tmp.dir, "project"), trust) });
    const ui = new RecordingUI();
    const ctx = { hasUI: true, ui: ui.context() } as ExtensionContext;
    try {
      await deps.bridge.start();
      await trustCommand(deps, ["my db"], ctx);
      assert.match(ui.notices.at(-1)!, /it is disabled; \/mcp enable "my db" starts it/);
      await untrustCommand(deps, ["my db"], ctx);
      assert.match(ui.notices.at(-1)!, /\/mcp trust "my db" runs it again/);
    } finally {
      await deps.bridge.shutdown();
      tmp.cleanup();
    }
  });

  test("/mcp trust naming a server twice trusts and starts it once", async () => {
    const tmp = tempDir();
    const log = path.join(tmp.dir, "events.jsonl");
    const entries = { twice: { ...fixtureEntry(), env: { FIXTURE_LOG: log } } };
    write(path.join(tmp.dir, "project", ".pi", "mcp.json"), JSON.stringify({ mcpServers: entries }));
    const trust = new TrustStore(path.join(tmp.dir, "agent", "mcp-bridge", "trust.json"));
    const deps = registeredBridge(tmp.dir, { projectTrust: new ProjectTrust(path.join(tmp.dir, "project"), trust) });
    const ui = new RecordingUI();
    try {
      await deps.bridge.start();
      await trustCommand(deps, ["twice", "twice"], { hasUI: true, ui: ui.context() } as ExtensionContext);
      assert.match(ui.notices.at(-1)!, /^Trusted 1 MCP server of .*:\n {2}twice: trusted, connected, \d+ tools$/);
      assert.equal(readLog(log).filter((e) => e.event === "start").length, 1, "one process");
    } finally {
      await deps.bridge.shutdown();
      tmp.cleanup();
    }
  });

  test("an npx install that outlasts initTimeout: /mcp and a waiting call say so, and the server connects after it", async () => {
    const tmp = tempDir();
    const installed = path.join(tmp.dir, "installed");
    const npx = path.join(REPO_ROOT, "test", "fixtures", "fake-npx.sh");
    const server = [process.execPath, path.join(REPO_ROOT, "test", "fixtures", "slow-start.mjs")];
    const entry = { command: npx, args: [installed, ...server], initTimeout: 1500 };
    write(path.join(tmp.dir, "project", ".pi", "mcp.json"), JSON.stringify({ mcpServers: { kube: entry } }));
    const { bridge, registry } = registeredBridge(tmp.dir, { startupBudgetMs: 0 });
    try {
      await bridge.start();
      const kube = bridge.connection("kube")!;
      await waitFor(() => kube.installing, "initTimeout to find npx still installing", 30_000);
      const row = serverRows(bridge, registry, process.env).find((r) => r.name === "kube")!;
      assert.deepEqual([row.status, row.detail], ["connecting", "npx is installing its package"]);
      const updates: unknown[] = [];
      const call = kube.callTool("hello", {}, { onProgress: (update) => updates.push(update) });
      writeFileSync(installed, "");
      await call;
      assert.deepEqual(updates, ["MCP server 'kube' is waiting for npx to install it; 'hello' runs once it is ready"]);
      assert.deepEqual([kube.status, kube.installing], ["connected", false]);
    } finally {
      await bridge.shutdown();
      tmp.cleanup();
    }
  });

  test("after shutdown no process of any server remains: plain, wrapped, with children, restarted, lazily started", async (t) => {
    const tmp = tempDir();
    // Removed however the test ends.
    t.after(() => tmp.cleanup());
    const log = path.join(tmp.dir, "events.jsonl");
    const env = { FIXTURE_LOG: log };
    const { command, args } = fixtureEntry("grandchild");
    const wrapped = `${[command, ...args].map((a) => `'${a}'`).join(" ")}; exit $?`;
    write(
      path.join(tmp.dir, "project", ".pi", "mcp.json"),
      JSON.stringify({
        mcpServers: {
          plain: { ...fixtureEntry(), env },
          parent: { ...fixtureEntry("grandchild"), env },
          wrapper: { command: "sh", args: ["-c", wrapped], env },
          flaky: {
            ...fixtureEntry(),
            env: { ...env, FIXTURE_CRASH_MARKER: path.join(tmp.dir, "crashed") },
            reconnect: FAST_RECONNECT,
            resendAfterDrop: ["crash_once"],
          },
          lazy: { ...fixtureEntry(), env, lazy: true },
        },
      }),
    );
    const { bridge, tools } = registeredBridge(tmp.dir);
    try {
      await bridge.start();
      // Past the startup budget on a busy machine, servers still connect and register in the background.
      await waitFor(
        () => ["plain", "parent", "wrapper", "flaky", "lazy"].every((s) => tools.has(`mcp_${s}_echo`)),
        "every server's tools",
        20_000,
      );
      assert.equal((await runTool(tools.get("mcp_flaky_crash_once"))).text, "survived", "restarted once");
      await runTool(tools.get("mcp_lazy_echo"), { text: "x" });
    } finally {
      await bridge.shutdown();
    }
    const pids = readLog(log).flatMap((e) => (e.event === "grandchild" ? [e.pid, e.childPid as number] : [e.pid]));
    assert.equal(new Set(pids).size >= 8, true, `servers, a restart and two grandchildren: ${pids.length}`);
    await waitFor(() => pids.every((pid) => !isAlive(pid)), "every server process to be gone", 5000);
  });

  // A scan reads every process's files (tens of ms on a desktop); pi with 20 servers spent over a second quitting on them.
  test("a server's close reads the whole process table once, and none when pi quits and leaves it to the watchdog", async (t) => {
    const tmp = tempDir();
    t.after(() => tmp.cleanup());
    const scans = { count: 0 };
    const readdir = fs.readdirSync;
    t.after(() => ((fs.readdirSync = readdir), syncBuiltinESMExports()));
    fs.readdirSync = ((dir: string, ...rest: []) => (dir === "/proc" && scans.count++, readdir(dir, ...rest))) as never;
    syncBuiltinESMExports();
    // Servers that end on their input's end; then ones that outlive it, which a quitting pi leaves to its watchdog.
    for (const quitting of [false, true]) {
      const servers = Object.fromEntries(
        ["a", "b", "c"].map((name) => [name, fixtureEntry(quitting ? "lingering" : "normal")]),
      );
      write(path.join(tmp.dir, "project", ".pi", "mcp.json"), JSON.stringify({ mcpServers: servers }));
      const bridge = makeBridge(tmp.dir);
      await bridge.start();
      const pids = [...bridge.connections.values()].map((c) => c.pid);
      assert.equal(pids.filter(Boolean).length, 3);
      scans.count = 0;
      await bridge.shutdown({ quitting });
      assert.ok(scans.count <= (quitting ? 0 : 3), `${scans.count} scans of /proc (quitting: ${quitting})`);
      orphanWatchdog.takeBack();
      for (const pid of pids) killIfAlive(pid!);
    }
  });

  test(
    "a first connect whose sign-in page waits for the user is not waited for by a search or a script",
    { timeout: 120_000 },
    async () => {
      const tmp = tempDir();
      const { bridge, fixture, opened } = await bridgeWaitingForSignIn(tmp.dir);
      try {
        void bridge.start();
        await waitFor(() => bridge.starting, "the first connect to begin");
        // A wait ends when the page opens (or, begun once it is open, does not wait); so does the next one.
        await bridge.untilStarted(() => true);
        assert.equal(opened.pages, 1);
        assert.deepEqual(bridge.signingIn, ["secure"]);
        assert.deepEqual(bridge.startingServers, ["secure"], "its first connect still waits for the sign-in");
        await bridge.untilStarted(() => true);
      } finally {
        await bridge.shutdown();
        await fixture.close();
        tmp.cleanup();
      }
    },
  );

  test(
    "a first connect that ends while another of the same server waits on its sign-in page leaves that one's page open",
    { timeout: 120_000 },
    async () => {
      const tmp = tempDir();
      const { bridge, fixture, opened } = await bridgeWaitingForSignIn(tmp.dir);
      // An earlier first connect of a server of the same name that is still under way (as when one is replaced
      // during a slow start): a local server that never answers.
      const never = path.join(tmp.dir, "never");
      const earlier = connectionFor("secure", {
        command: process.execPath,
        args: [path.join(REPO_ROOT, "test", "fixtures", "slow-start.mjs"), "--until", never],
        initTimeout: 600_000,
      });
      try {
        const earlierSettled = bridge.launch(earlier)?.catch(() => undefined);
        void bridge.start();
        await waitFor(() => opened.pages === 1, "the sign-in page to open");
        assert.deepEqual(bridge.signingIn, ["secure"]);
        // The earlier connect ends; the later one still waits for the user on its page.
        await earlier.close();
        await earlierSettled;
        // The bridge hears of the end in a callback of its own: let it run.
        await new Promise((resolve) => setImmediate(resolve));
        assert.deepEqual(bridge.startingServers, ["secure"], "the later first connect still waits");
        assert.deepEqual(bridge.signingIn, ["secure"], "and its page is still open");
      } finally {
        await earlier.close();
        await bridge.shutdown();
        await fixture.close();
        tmp.cleanup();
      }
    },
  );

  test("a server that waits for a sign-in keeps its cached tools, and calling one signs in once someone can", async () => {
    const tmp = tempDir();
    const fixture = await startOAuthServer();
    const cacheFile = path.join(tmp.dir, "agent", "mcp-bridge", "tool-cache.json");
    const authDir = path.join(tmp.dir, "agent", "mcp-auth");
    write(
      path.join(tmp.dir, "project", ".pi", "mcp.json"),
      JSON.stringify({ mcpServers: { secure: { url: fixture.url } } }),
    );
    let handler: SignInHandler | undefined = automaticSignIn();
    const options = () => ({
      toolCache: new ToolCache(cacheFile),
      authStore: new AuthStore(authDir),
      signIn: () => handler,
    });
    const bridges: McpBridge[] = [];
    try {
      const first = registeredBridge(tmp.dir, options());
      bridges.push(first.bridge);
      await first.bridge.start();
      assert.ok(first.tools.has("mcp_secure_echo"));
      await first.bridge.connection("secure")!.logout();
      await first.bridge.shutdown();

      // A new session: no one can sign in at startup; the tools from last time are registered anyway.
      handler = undefined;
      const second = registeredBridge(tmp.dir, options());
      bridges.push(second.bridge);
      await second.bridge.start();
      const secure = second.bridge.connection("secure")!;
      assert.equal(secure.needsSignIn, true);
      assert.ok(second.tools.has("mcp_secure_echo"), "registered from the cache");
      handler = automaticSignIn(); // the session runs now, with a UI
      assert.equal(
        (await runTool(second.tools.get("mcp_secure_echo"), { text: "signed in by calling" })).text,
        "signed in by calling",
      );
      assert.equal(fixture.authorizations.length, 2);
    } finally {
      // Also when an assertion failed half-way: no bridge outlives the test.
      await Promise.all(bridges.map((bridge) => bridge.shutdown()));
      await fixture.close();
      tmp.cleanup();
    }
  });
});
