/** mcp-bridge: MCP servers' tools as native pi tools. Wiring only; the parts live beside it in src/. */
import * as os from "node:os";
import * as path from "node:path";
import { type ExtensionAPI, type ExtensionContext, getAgentDir } from "@mariozechner/pi-coding-agent";
import { hubDir } from "./connection/hub/hub-launch.ts";
import { DEFAULT_STARTUP_BUDGET_MS, McpBridge } from "./bridge/mcp-bridge.ts";
import { NoticeMemory } from "./bridge/notice-memory.ts";
import { onceNotices } from "./pi/once-notices.ts";
import { isSessionServer, SessionServers } from "./bridge/session-servers.ts";
import { ProjectTrust } from "./trust/project-trust.ts";
import { ToolCache } from "./bridge/tool-cache.ts";
import { LogFile, readLogTail } from "./common/log-file.ts";
import { packageFile } from "./common/package-files.ts";
import { routeSdkConsole } from "./common/sdk-console.ts";
import { configFlagFromArgv, isInfoOnlyInvocation, noMcpInArgv } from "./config/argv.ts";
import { exposureDefaultsOr } from "./config/exposure-setting.ts";
import { TrustStore } from "./trust/trust-store.ts";
import { interactiveSignIn } from "./oauth/sign-in.ts";
import { piAuthFile } from "./oauth/pi-sign-in-import.ts";
import { AuthStore, authDir } from "./oauth/storage.ts";
import { MCP_COMMAND_DESCRIPTION, registerFlags, registerMcpOff } from "./pi/command-context.ts";
import { registerLazyCommand } from "./pi/lazy-command.ts";
import { PromptCommands } from "./pi/prompt-commands.ts";
import { ResourceTools } from "./pi/resource-tools.ts";
import { DENIED_ENTRY, DialogBudget } from "./pi/dialog-budget.ts";
import { elicitationFeatures } from "./pi/elicitation-dialog.ts";
import { samplingHandler } from "./pi/sampling.ts";
import { waitForStartingServers } from "./pi/starting-waits.ts";
import {
  callableFromScripts,
  scriptsGetResults,
  codemodeSwitch,
  deferredToolsInactive,
  followRegisteredServers,
  piDecidesProjectTrust,
  piMeansTimeoutInSeconds,
  piTrustsProject,
  redrawsAfterSessionStart,
  requestToolWire,
  unsetExposure,
} from "./pi/pi-line.ts";
import { guardExit } from "./pi/exit-guard.ts";
import { startTelemetry, stopTelemetry } from "./telemetry/telemetry-setup.ts";
import { observeServerCounters } from "./telemetry/server-counters.ts";
import { serverGuideHandler } from "./pi/server-guide-prompt.ts";
import { serverRows } from "./pi/server-rows.ts";
import { rollbackNote } from "./pi/status-format.ts";
import { NPM_ROLLBACK_MS } from "./connection/local/process-tree.ts";
import { ExtensionApi, ownedBus } from "./pi/extension-api.ts";
import { PiRegisteredServers } from "./pi/pi-registered-servers.ts";
import { installedPackages } from "./pi/pi-packages.ts";
import { SessionNotices } from "./pi/session-notices.ts";
import { SERVERS_OFF_ENTRY, ServersOff } from "./pi/servers-off.ts";
import { ALLOWED_ENTRY, ToolApproval } from "./trust/tool-approval.ts";
import { LOADED_TOOLS_ENTRY, ToolExposure } from "./exposure/tool-exposure.ts";
import { ToolRegistry } from "./pi/tool-registry.ts";
import { ToolSearch } from "./exposure/tool-search.ts";
import { catalogPrompt, catalogShares } from "./exposure/tool-catalog.ts";
import { DEFAULT_TOOL_CATALOG } from "./config/tool-catalog-setting.ts";
import { withoutTools } from "./exposure/payload-tools.ts";
import { serverLogFileName } from "./translate/naming.ts";

const CLIENT_INFO = { name: "pi-mcp-bridge", version: "0.1.0" };
/** Where the bridge keeps its log and tool cache, inside pi's agent dir. */
const DATA_DIR = "mcp-bridge";
/** Overrides how long pi's startup waits for servers, in ms. */
const STARTUP_BUDGET_ENV = "PI_MCP_STARTUP_BUDGET_MS";
/** Each local server's stderr log is kept small: it is for the last things a server said. */
const SERVER_LOG_MAX_BYTES = 1024 * 1024;
/** Bus events kept while no session has started yet (see `emit`). */
const HELD_EVENTS_MAX = 1000;
/** How long pi's exit waits for the last spans to reach the OTLP receiver. */
const TELEMETRY_FLUSH_MS = 5000;

export default async function mcpBridge(pi: ExtensionAPI): Promise<void> {
  registerFlags(pi);
  if (isInfoOnlyInvocation(process.argv)) return;
  if (noMcpInArgv(process.argv)) return registerMcpOff(pi);
  const env = process.env;
  const bus = ownedBus(pi.events); // pi's bus outlives a /reload: this bridge stops listening when its session ends
  /** The running session's context, once there is one (for notices and sign-ins). */
  let sessionCtx: ExtensionContext | undefined;
  // pi 1.x's own answer on trusting this project, once a session tells it (see `projectTrust` below).
  let piTrust: boolean | undefined;
  const dataDir = path.join(getAgentDir(), DATA_DIR);
  const logger = new LogFile(path.join(dataDir, "mcp.log"));
  routeSdkConsole(logger);
  // Before any server starts, so its first request is traced too.
  const tracing = await startTelemetry(env);
  if (tracing.problem) logger.log({ level: "warn", event: "telemetry.off", message: tracing.problem });
  const serverLogs: LogFile[] = [];
  const serverLogPath = (server: string) => path.join(dataDir, "servers", serverLogFileName(server));
  const logPathOf = (server: string, log: "stderr" | "bridge") =>
    log === "bridge" ? logger.path : serverLogPath(server);
  const serverLogFor = (server: string) => {
    const log = new LogFile(serverLogPath(server), { maxBytes: SERVER_LOG_MAX_BYTES, keep: 1 });
    serverLogs.push(log);
    return log;
  };
  // The servers start while this factory runs, before extensions loaded after it have subscribed to pi's bus: what
  // they did until the session starts (`mcp.*`) is held and then published in order, so no subscriber misses a first
  // connect. Tool events go out at once: an extension loaded earlier may act on the tools before the session starts.
  let held: Array<[string, Record<string, unknown>]> | undefined = [];
  const emit = (channel: string, payload: Record<string, unknown>) => {
    if (!held || !channel.startsWith("mcp.")) return pi.events.emit(channel, payload);
    // Bounded for a host that never starts a session: the oldest go first.
    if (held.push([channel, payload]) > HELD_EVENTS_MAX) held.shift();
  };
  const tell = (text: string, level: "info" | "warning", event: string) => {
    if (sessionCtx?.hasUI) sessionCtx.ui.notify(text, level);
    else logger.log({ level: level === "info" ? "info" : "warn", event, message: text });
  };
  const dialogBudget = new DialogBudget(
    (text) => tell(text, "warning", "dialogs.refused"),
    (server) => sessionCtx && pi.appendEntry(DENIED_ENTRY, { server }), // an ended session's pi takes no entry
  );
  const budget = Number(env[STARTUP_BUDGET_ENV]);
  // pi gives a factory no working directory; in its CLI that is the process's own.
  const projectRoot = process.cwd();
  const bridge = new McpBridge({
    projectRoot,
    agentDir: getAgentDir(),
    hubDir: hubDir(getAgentDir()),
    bundledPath: packageFile("mcp.json"),
    packages: installedPackages(projectRoot, getAgentDir()),
    extraPath: configFlagFromArgv(process.argv),
    env,
    clientInfo: CLIENT_INFO,
    events: emit,
    logger,
    toolCache: new ToolCache(path.join(dataDir, "tool-cache.json")),
    startupBudgetMs: Number.isFinite(budget) && budget >= 0 ? budget : DEFAULT_STARTUP_BUDGET_MS,
    serverLogFor,
    // A server with no sign-in of its own takes over the one pi 1.x's built-in MCP stored, where it can.
    authStore: new AuthStore(authDir(getAgentDir()), { piAuthFile: piAuthFile(getAgentDir()) }),
    // A server asking for input (a form, a page to open) gets pi's dialogs, naming it; without a UI it is declined. One
    // asking for a model's answer (sampling) gets it with the user's approval unless its `sampling` says otherwise; each
    // waits its turn, and a server may ask only so often (./pi/dialog-budget.ts).
    featuresFor: (server) => ({
      ...elicitationFeatures(server.name, () => (sessionCtx?.hasUI ? sessionCtx : undefined), dialogBudget),
      ...(server.sampling === "off"
        ? {}
        : { sampling: samplingHandler(server.name, server.sampling, () => sessionCtx, dialogBudget) }),
    }),
    // Project servers run only once the user trusts them. pi 1.x decides project trust itself, so there its answer on
    // the project stands for every server the user has not answered about in the bridge, and nobody is asked twice.
    // It is known once the session starts; until then only the user's answers to the bridge count.
    projectTrust: new ProjectTrust(
      projectRoot,
      new TrustStore(path.join(dataDir, "trust.json")),
      piDecidesProjectTrust(pi) ? () => piTrust : undefined,
    ),
    // A server's resource or prompt list changed, a resource it was asked to watch, or it closed for good.
    onServerChange: (connection, change) => {
      resourceTools.changed(connection, change);
      // The resource tools may reach other servers now, and so take another exposure.
      toolSearch.sync();
      declareTools();
      void promptCommands.changed(connection, change);
      if (change.kind === "closed") notices.updateFooter(); // one that never connected says nothing on the bus
    },
    // A sign-in starts by itself only where someone can do it: in the TUI, once the session runs. Elsewhere the server
    // reports that it needs one, and /mcp auth starts it.
    signIn: () => {
      const ctx = sessionCtx;
      if (!ctx?.hasUI) return undefined;
      return interactiveSignIn({
        notify: (text) => ctx.ui.notify(text, "info"),
        input: (prompt, signal) => ctx.ui.input(prompt, undefined, { signal }),
      });
    },
  });
  observeServerCounters({
    metrics: () => bridge.metrics(),
    isLocal: (server) => bridge.connection(server)?.config.transport === "stdio",
    refused: (server) => approval.refused(server),
  });
  // If pi ends without a session_shutdown, the server processes go with it (and the logs are flushed, and the files
  // binary resources were saved to are removed).
  const exitGuard = guardExit(() => {
    bridge.killNow();
    for (const log of [logger, ...serverLogs]) log.flush();
    resourceTools.removeFiles();
  });

  // Which tools the model is told about: direct ones, and deferred ones once tool_search has loaded them. Where no
  // config sets the default, this pi line's applies.
  const defaultExposure = unsetExposure(pi);
  const exposure = new ToolExposure(
    () => exposureDefaultsOr(bridge.exposureDefaults, defaultExposure),
    (server) => bridge.connection(server)?.config,
  );
  const registry = new ToolRegistry(
    (tool) => pi.registerTool(callableFromScripts(pi, tool)),
    (server) => bridge.connection(server),
    {
      events: emit,
      // Colliding names go by config order; the bridge keeps its servers in that order.
      serverOrder: () => [...bridge.connections.keys()],
      isHidden: (server, tool) => exposure.exposureOf(server, tool) === "hidden",
      logger,
      scriptResults: scriptsGetResults(pi),
    },
  );
  const toolSearch = new ToolSearch({
    registerTool: (tool) => pi.registerTool(tool),
    registry,
    exposure,
    sharedTools: () => resourceTools.tools(),
    serverDescription: (server) => bridge.description(server),
    starting: bridge,
    record: (tools) => {
      pi.appendEntry(LOADED_TOOLS_ENTRY, { tools });
      declareTools();
    },
    serverOrder: () => [...bridge.connections.keys()],
  });
  // pi 1.x: a deferred tool is inactive until tool_search loads it; pi declares the active set from the next request on.
  const inactiveDeferred = deferredToolsInactive(pi);
  const turnOnCodemode = codemodeSwitch(pi, bridge, (name) => registry.activate(name, true));
  if (!inactiveDeferred) pi.on("agent_start", () => toolSearch.runStarted());
  function declareTools(): void {
    if (inactiveDeferred) registry.activateAll(toolSearch.declarations());
    if (sessionCtx) turnOnCodemode(); // pi 1.x lists its tools only while a session runs, not while extensions load
  }
  toolSearch.register();
  // The resource tools, shared by every server that offers resources; they exist while one does.
  const resourceTools = new ResourceTools({
    registerTool: (tool) => pi.registerTool(tool),
    activate: (name, on) => registry.activate(name, on),
    connections: () => bridge.connections.values(),
    notify: (text) => tell(text, "info", "resources.updated"),
    events: emit,
  });
  // Each server's prompts as `/mcp:<server>:<prompt>` commands, registered as they arrive.
  const turnEnds: Array<() => void> = [];
  const endTurns = () => turnEnds.splice(0).forEach((ended) => ended());
  pi.on("agent_end", endTurns);
  const promptCommands = new PromptCommands({
    registerCommand: (name, options) => pi.registerCommand(name, options),
    sendUserMessage: (content, options) => pi.sendUserMessage(content, options),
    nextTurnEnd: () => new Promise((resolve) => turnEnds.push(resolve)),
    connection: (server) => bridge.connection(server),
    // The TUI builds its list of commands once; a command that arrives later needs it built again.
    commandsAdded: () => sessionCtx?.hasUI && sessionCtx.ui.addAutocompleteProvider((provider) => provider),
    events: emit,
    warn: (server, error) => logger.log({ level: "warn", event: "prompts.list.failed", server, error }),
  });
  // Every tool list (startup, a late or lazy server, a reconnect, list_changed) goes through one place.
  // The resource tools first: their exposure follows the servers they reach, and tool search decides it with the rest.
  bridge.onTools((connection, tools) => {
    registry.syncServer(connection, tools);
    resourceTools.sync(connection);
    toolSearch.sync();
    declareTools();
    void promptCommands.refresh(connection);
  });
  bridge.onStartFailed(() => declareTools()); // a server still starting kept `tool_search` offered: maybe no more
  // Each MCP tool call is checked before it runs: the user (or another extension) approves it unless the config does.
  const approval = new ToolApproval({
    find: (name) => registry.find(name),
    configOf: (server) => bridge.connection(server)?.config,
    approvalMode: () => bridge.approval,
    userConfigPath: () => bridge.sourceOf("user")?.path,
    emit: (channel, payload) => pi.events.emit(channel, payload),
    writeConfig: (file, change) => bridge.writeConfig(file, change),
    remember: (allowed) => sessionCtx && pi.appendEntry(ALLOWED_ENTRY, allowed),
    logger,
  });
  waitForStartingServers(pi, bridge, (server, setting) => exposure.mayHave(server, setting));
  pi.on("tool_call", (event, ctx) => approval.check(event, ctx));
  // Servers added for this session only, by code: over pi's bus (below), or with pi 1.x's pi.registerMcpServer().
  const sessionServers = new SessionServers(bridge, syncRegistered, (connection) => {
    registry.syncServer(connection, []);
    toolSearch.sync();
    declareTools();
  });
  // Other extensions list and call MCP tools and add servers on pi's bus (docs/api.md). Calls wait for the session:
  // their approval may ask the user. Replies go out at once, never held like the events above.
  let sessionStarted = () => {};
  const sessionReady = new Promise<void>((resolve) => (sessionStarted = resolve));
  new ExtensionApi({
    events: bus,
    connections: () => bridge.connections.values(),
    tools: () => registry.tools.filter((tool) => exposure.exposureOf(tool.server, tool.originalName) !== "hidden"),
    definition: (name) => registry.definition(name),
    approve: (call, ctx) => approval.check(call, ctx),
    session: async () => {
      await sessionReady;
      if (!sessionCtx) throw new Error("pi's session has ended.");
      return sessionCtx;
    },
    sessionServers,
    metrics: () => bridge.metrics(),
  }).listen();
  const piRegistered = new PiRegisteredServers({
    servers: sessionServers,
    configured: (name) => {
      const connection = bridge.connection(name);
      return connection !== undefined && !isSessionServer(connection.config);
    },
    problem: (text, warning) => {
      logger.log({ level: "warn", event: `registered.server.${warning ? "warning" : "skipped"}`, message: text });
      if (sessionCtx?.hasUI) sessionCtx.ui.notify(text, "warning");
    },
  });
  const readRegistered = followRegisteredServers(pi, (servers) => void piRegistered.sync(servers));
  // A name freed (a session server removed, a config server taken out by /mcp remove): a registration left out for it.
  function syncRegistered(): void {
    if (readRegistered) void piRegistered.sync(readRegistered());
  }
  const catalogSetting = () => bridge.exposureDefaults.catalog ?? DEFAULT_TOOL_CATALOG;
  const catalogCharacters = () => catalogShares(toolSearch.catalog(), catalogSetting());
  // What each server is for (its config's `description`, its own `instructions`) goes into the system prompt.
  pi.on(
    "before_agent_start",
    serverGuideHandler(bridge, registry, {
      isDeclared: (tool) => exposure.isDeclared(tool.server, tool.originalName),
      deferredLine: () => catalogPrompt(toolSearch.catalog(), toolSearch.deferredServers(), catalogSetting()),
    }),
  );
  // pi 0.73: deferred tools stay in pi's tool set, so one loaded mid-run can be called at once; each request to the
  // model leaves out the ones not loaded yet (and tool_search while nothing is deferred). pi 1.x: see `declareTools`.
  if (!inactiveDeferred) {
    pi.on("before_provider_request", (event) => {
      const undeclared = toolSearch.undeclared();
      return undeclared.size ? withoutTools(event.payload, (name) => undeclared.has(name)) : undefined;
    });
  }

  // Servers switched off for this session (`/mcp off`), recorded in the session so /reload keeps them off.
  const serversOff = new ServersOff({
    bridge,
    registry,
    record: (servers) => pi.appendEntry(SERVERS_OFF_ENTRY, { servers }),
  });

  const notices = new SessionNotices(bus, bridge, () =>
    serverRows(
      bridge,
      registry,
      env,
      { exposure, wire: requestToolWire(sessionCtx?.model), catalog: catalogCharacters() },
      (c) => serversOff.isOff(c),
    ),
  );
  await bridge.start();
  // /mcp's code (the dashboard, its dialogs, config import and its TOML parser) loads when /mcp is first used.
  const loadMcpCommand = async (pi: ExtensionAPI) =>
    (await import("./pi/command.ts")).registerMcpCommand({
      pi,
      bridge,
      registry,
      serversOff,
      exposure,
      catalogShares: catalogCharacters,
      promptCommands: () => promptCommands.commands(),
      resourceServers: () => resourceTools.offering().map((c) => c.name),
      fetchPrompts: (connection, signal) => promptCommands.refresh(connection, signal),
      env,
      logFile: logPathOf,
      logTail: (server, lines, log = "stderr") => {
        const file = logPathOf(server, log);
        // Lines still waiting for their batch belong in the view too.
        for (const open of [logger, ...serverLogs]) if (open.path === file) open.flush();
        return readLogTail(file, lines, log === "bridge" ? server : undefined);
      },
      importLocations: () => ({ home: os.homedir(), projectRoot: bridge.projectRoot, platform: process.platform, env }),
      syncRegistered,
    });
  registerLazyCommand(pi, "mcp", MCP_COMMAND_DESCRIPTION, loadMcpCommand);
  const noticeMemory = new NoticeMemory(path.join(dataDir, "notices.json"));
  const givenOnce = async () => {
    const configs = [...bridge.connections.values()].map((c) => c.config);
    const schema = (server: string) => registry.notesFor(server).schema;
    const once = await onceNotices(noticeMemory, configs, piMeansTimeoutInSeconds(pi), schema);
    if (noticeMemory.error) logger.log({ level: "warn", event: "notices.write.failed", error: noticeMemory.error });
    return once;
  };

  pi.on("session_start", async (event, ctx) => {
    const early = held ?? [];
    held = undefined;
    for (const [channel, payload] of early) pi.events.emit(channel, payload);
    exitGuard.sessionStarted();
    sessionCtx = ctx;
    // A denied server may ask again in a new session, not after a reload; one that asked too often, after either.
    dialogBudget.reset(event.reason === "reload" ? ctx.sessionManager.getEntries() : []);
    // pi 1.x's answer on trusting the project now decides: the project servers it trusts start (as the others did at
    // load), and those it does not are stopped.
    piTrust = piTrustsProject(ctx);
    if (piTrust !== undefined) for (const stopped of await bridge.trust.followHost()) registry.syncServer(stopped, []);
    // Servers this session switched off (before a /reload, or when it ran before) go off again: pi started them with
    // the others while it loaded the extension, before the session could be read.
    await serversOff.restore(ctx.sessionManager.getEntries());
    // Without a UI (print mode, JSON mode, an embedding) nobody would see a late server's tools arrive: the session
    // runs once every server has connected or failed, each within its own timeout. With a UI, startup never waits.
    if (!ctx.hasUI) await bridge.settled();
    approval.sessionStarted(event.reason === "reload" ? ctx.sessionManager.getEntries() : []);
    // Tools loaded on this branch earlier (before a /reload, a resume or a fork) are loaded again; `auto` is decided
    // once, from the tools known now, against the model's context window.
    exposure.restore(ctx.sessionManager.getBranch());
    toolSearch.decideAuto(requestToolWire(ctx.model), ctx.model?.contextWindow);
    registry.bindActivation(pi);
    registry.resolveShadowed(pi.getAllTools());
    // After the moves: tool_search gives their new names, and pi 1.x activates the tools registered anew.
    toolSearch.sync();
    declareTools();
    sessionStarted();
    // pi 1.x: servers other extensions registered while pi loaded them; as at startup, only a session without a UI waits.
    const registered = readRegistered && piRegistered.sync(readRegistered());
    if (registered && !ctx.hasUI) await registered;
    const once = await givenOnce();
    // The question about new or changed project servers waits for the user, and pi's startup must not: it runs on its
    // own, and the startup notice follows the answer.
    const startupNotice = () => notices.sessionStarted(ctx, registry.warnings, once.problems, once.told);
    if (ctx.hasUI && bridge.trust.asks && bridge.trust.untrusted().length) {
      void import("./pi/command-trust.ts")
        .then(({ askTrust }) => askTrust({ bridge, registry }, ctx))
        .catch((error: unknown) => logger.log({ level: "warn", event: "trust.ask.failed", error: String(error) }))
        .then(startupNotice)
        // A context from a session that ended while the question was open.
        .catch(() => undefined);
    } else if (event.reason === "startup" || !redrawsAfterSessionStart(pi)) {
      startupNotice();
    } else {
      setImmediate(() => new Promise<void>((resolve) => resolve(startupNotice())).catch(() => undefined));
    }
  });
  // Another point of the session's tree (`/tree`): the tools loaded on that branch, and no others.
  pi.on("session_tree", (_event, ctx) => (exposure.restore(ctx.sessionManager.getBranch()), declareTools()));
  pi.on("session_shutdown", async (event, ctx) => {
    sessionCtx = undefined; // what comes later (a notice's timer, a server's question) is for no one: pi 1.x refuses it
    exitGuard.release();
    bus.off();
    sessionStarted(); // an API call still waiting for a session that never started is told it ended, not kept 60 s
    endTurns();
    const installing = [...bridge.connections.values()].filter((c) => c.installing).map((c) => c.name);
    const note = rollbackNote(installing, NPM_ROLLBACK_MS / 1000);
    // After a quit pi's screen is gone, and the line goes to the terminal it leaves behind.
    if (note && event.reason !== "quit" && ctx.hasUI) ctx.ui.notify(note, "info");
    else if (note) process.stderr.write(`${note}\n`);
    await bridge.shutdown({ quitting: event.reason === "quit" });
    await stopTelemetry(TELEMETRY_FLUSH_MS);
    pi.events.emit("mcp.metrics", { servers: bridge.metrics() });
    await Promise.all([logger, ...serverLogs].map((log) => log.close()));
    // A reload goes on with the same session, which may still read them.
    if (event.reason !== "reload") resourceTools.removeFiles(ctx.sessionManager.getSessionId());
  });
}
