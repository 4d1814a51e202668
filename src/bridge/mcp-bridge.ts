/**
 * All configured servers together: load the layered config, start the servers that are not lazy in parallel (pi waits
 * for them only up to a startup budget), give lazy servers their tools from the cache, keep the cache current, and
 * shut every server down. A project server the user has not trusted is held: listed, never started or connected
 * (`bridge-trust.ts` decides which, and carries out the answers).
 */
import { EventEmitter, once } from "node:events";
import type { Tool } from "@modelcontextprotocol/client";
import type {
  ApprovalMode,
  ConfigProblem,
  ConfigScope,
  ConfigSource,
  ConfiguredExposure,
  ServerConfig,
} from "../config/types.ts";
import { NO_CONFIGURED_EXPOSURE } from "../config/exposure-setting.ts";
import { MAX_TIMER_MS } from "../config/validate/fields.ts";
import { type ConfigLocations, configSources, loadLayeredConfig } from "../config/files.ts";
import { updateConfigFile } from "../config/write/update-file.ts";
import type { ServerMetrics } from "../connection/health.ts";
import type { ClientFeatures } from "../connection/mcp-client.ts";
import type { ConnectionOptions, ServerConnection } from "../connection/server-connection.ts";
import type { Logger } from "../common/log-file.ts";
import { shutDownError, untrustedError } from "../connection/stop-errors.ts";
import { ShutDownError } from "../common/errors.ts";
import { lazy } from "../common/lazy.ts";
import { within } from "../common/wait.ts";
import { INSTALL_LIMIT_MS } from "../connection/connect-deadline.ts";
import { orphanWatchdog } from "../connection/local/orphan-watchdog.ts";
import { pendingWrites } from "../common/atomic-file.ts";
import type { SignInHandler } from "../oauth/provider.ts";
import type { ProjectTrust } from "../trust/project-trust.ts";
import { BridgeTrust, type Launcher } from "./bridge-trust.ts";
import { type CachedTools, cacheKey, type ToolCache } from "./tool-cache.ts";
import { effectiveSandbox, type SandboxSetting } from "../config/sandbox-setting.ts";
import { stdioSandbox } from "../sandbox/server-sandbox.ts";
import { sandboxIdle } from "../sandbox/sandbox-runtime.mjs";
import { forgetSandboxLeftovers } from "../sandbox/sandbox-leftovers.ts";
import { DevRestarts, type DevWatchStatus } from "./dev-restarts.ts";

/** How long pi's startup waits for servers; slower ones register their tools when they connect. */
export const DEFAULT_STARTUP_BUDGET_MS = 3000;
/** A bound over the first connects' own: an npx install may hold one that long (../connection/connect-deadline.ts). */
const FIRST_CONNECT_WAIT_MS = INSTALL_LIMIT_MS + 60_000;

/** The connection code and the MCP SDK under it load with the first server: a start with none pays for neither. */
const connectionCode = lazy(() => import("../connection/server-connection.ts"));

export interface BridgeOptions
  extends ConfigLocations, Omit<ConnectionOptions, "projectRoot" | "onTools" | "features"> {
  toolCache?: ToolCache;
  startupBudgetMs?: number;
  /** A server's own log (its stderr), made when the server is configured. */
  serverLogFor?: (server: string) => Logger;
  /** What the client answers when a server asks it something (elicitation, sampling, …), per server: its settings decide. */
  featuresFor?: (server: ServerConfig) => ClientFeatures;
  /** Which project servers the user trusts. Without it every server may run (a bridge used as a library). */
  projectTrust?: ProjectTrust;
}

export type ToolsListener = (connection: ServerConnection, tools: Tool[]) => void;
export type StartFailedListener = (connection: ServerConnection, error: unknown) => void;

export class McpBridge implements Launcher {
  /** In config order: highest-priority file first. */
  readonly connections = new Map<string, ServerConnection>();
  /** Which servers may run, and the user's or the host's answers on trust carried out. */
  readonly trust: BridgeTrust;
  problems: ConfigProblem[] = [];
  /** Whether MCP tools ask before they run: `"never"` only from the user-level file. */
  approval: ApprovalMode = "ask";
  /** The user's top-level `sandbox`: the default of every local server. */
  sandboxDefault?: SandboxSetting;
  /** The top-level `exposure` default (undefined where no file sets it) and its `auto` threshold. */
  exposureDefaults: ConfiguredExposure = NO_CONFIGURED_EXPOSURE;
  private shuttingDown?: Promise<void>;
  private readonly listeners = new Set<ToolsListener>();
  private readonly startFailedListeners = new Set<StartFailedListener>();
  /** Each connection's key in the tool cache: by connection, since a new definition under the same name has its own. */
  private readonly cacheKeys = new WeakMap<ServerConnection, string>();
  /** Tool lists still being written to the cache: shutdown waits for them, so none lands after it. */
  private readonly cacheWrites = new Set<Promise<void>>();
  /** First connects under way (at load, or since: trust given, a server enabled), until each has settled: by server. */
  private readonly firstConnects = new Map<Promise<void>, string>();
  /** Says a server's name when a sign-in page opens for it: a wait for its first connect then stops waiting for it. */
  private readonly signInPages = new EventEmitter().setMaxListeners(0);
  /** Servers whose first connect under way opened a sign-in page: it waits for the user. */
  private readonly pageOpen = new Set<string>();
  private readonly scratches = new Set<ServerConnection>(); // `/mcp test`'s, open: the session's end closes them too
  /** Each server's latest renewal (see `inTurn`). */
  private readonly renewals = new Map<string, Promise<unknown>>();

  /** Local servers restarted when their watched files change (`dev.watch`). */
  private readonly devRestarts: DevRestarts;

  constructor(private readonly options: BridgeOptions) {
    this.trust = new BridgeTrust(this, options.projectTrust);
    this.devRestarts = new DevRestarts(options.projectRoot, options.env, options.logger);
  }

  get projectRoot(): string {
    return this.options.projectRoot;
  }

  connection(name: string): ServerConnection | undefined {
    return this.connections.get(name);
  }

  /** The server's `description` from its config, redacted (what the model is shown of it). */
  description(name: string): string | undefined {
    const connection = this.connections.get(name);
    const description = connection?.config.description;
    return description && connection.redact(description);
  }

  /** Called with a server's tool list whenever it is known or changes (the cache included); returns the disposer. */
  onTools(listener: ToolsListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Called when a server started by {@link start} fails its first connect, also after the startup budget: the only
   * word of a server that was still connecting when the startup notice was shown.
   */
  onStartFailed(listener: StartFailedListener): () => void {
    this.startFailedListeners.add(listener);
    return () => this.startFailedListeners.delete(listener);
  }

  private toolsArrived(connection: ServerConnection, tools: Tool[], fromCache = false): void {
    if (!fromCache) {
      const key = this.cacheKeyOf(connection);
      const entry = { server: connection.name, tools, protocolVersion: connection.protocolVersion };
      const write = key ? this.options.toolCache?.set(key, entry) : undefined;
      if (write) {
        this.cacheWrites.add(write);
        void write.finally(() => this.cacheWrites.delete(write));
      }
    }
    for (const listener of this.listeners) listener(connection, tools);
  }

  private cacheKeyOf(connection: ServerConnection): string | undefined {
    const known = this.cacheKeys.get(connection);
    if (known !== undefined) return known;
    const identity = connection.identity();
    if (identity === undefined) return undefined;
    const key = cacheKey(identity);
    this.cacheKeys.set(connection, key);
    return key;
  }

  /**
   * Loads the config and starts every enabled server that is not lazy, all at once, each bounded by its own timeout;
   * returns when they are all done or the startup budget is spent, whichever is first. Lazy servers get their tools
   * from the cache; one the cache does not know yet starts in the background to fill it. Never throws for a server.
   */
  async start(): Promise<void> {
    // A session that starts after one quit: the process was not ending after all.
    orphanWatchdog.takeBack(this);
    const [config] = await Promise.all([loadLayeredConfig(this.options), this.options.projectTrust?.load()]);
    this.problems = config.problems;
    this.approval = config.approval;
    this.exposureDefaults = config.exposure;
    this.sandboxDefault = config.sandbox;
    for (const server of config.servers) this.connections.set(server.name, await this.newConnection(server));
    await this.launchWithinBudget([...this.connections.values()]);
  }

  /** Starts these servers at once; returns when they are all done or the startup budget is spent. Never throws. */
  async launchWithinBudget(connections: readonly ServerConnection[]): Promise<void> {
    const waitFor = connections.map((connection) => this.launch(connection, true));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(waitFor),
      new Promise<void>((resolve) => {
        // Past what a timer holds Node would fire it after 1 ms.
        timer = setTimeout(resolve, Math.min(MAX_TIMER_MS, this.options.startupBudgetMs ?? DEFAULT_STARTUP_BUDGET_MS));
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
  }

  /**
   * Starts a server as startup does: not at all if it is disabled or not trusted; a lazy one gets its tools from the
   * cache, or, when the cache does not know it yet, starts once to learn them: a session without a UI waits for that
   * (`settled`), or it would end before they were learnt. Returns the connect startup waits for, if any; one that
   * `startup` began tells `onStartFailed`'s listeners of its failure, a lazy server's learning start too.
   */
  launch(connection: ServerConnection, startup = false): Promise<void> | undefined {
    const { config } = connection;
    if (!config.enabled || !this.trust.admit(connection)) return undefined;
    if (config.lazy && this.registerCached(connection)) return undefined;
    const started = connection.connect().catch((error: unknown) => {
      // A server waiting for a sign-in keeps the tools an earlier session saw: calling one starts the sign-in.
      if (connection.needsSignIn) this.registerCached(connection);
      // A server the bridge stopped itself (the session ended while it connected) did not fail.
      if (startup && !(error instanceof ShutDownError))
        for (const listener of this.startFailedListeners) listener(connection, error);
      throw error;
    });
    const settled = started.catch(() => undefined);
    this.firstConnects.set(settled, connection.name);
    this.pageOpen.delete(connection.name);
    void settled.then(() => {
      this.firstConnects.delete(settled);
      // Another first connect of the server may have begun meanwhile (a replace): its page, if open, stays so.
      if (!this.startingServers.includes(connection.name)) this.pageOpen.delete(connection.name);
    });
    return config.lazy ? undefined : started;
  }

  /**
   * Resolves once every server being started has connected or failed its first connect (each bounded by its own
   * `initTimeout` or `timeout`), servers started while it waits included. Without a UI (print mode, JSON mode, an
   * embedding) nobody sees tools arrive later, so a session waits for this before it runs. Never throws.
   */
  async settled(): Promise<void> {
    while (this.firstConnects.size > 0) await Promise.all([...this.firstConnects.keys()]);
  }

  /** Whether a server's first connect is under way. */
  get starting(): boolean {
    return this.firstConnects.size > 0;
  }

  /** The servers whose first connect is under way. */
  get startingServers(): string[] {
    return [...new Set(this.firstConnects.values())];
  }

  /** The servers whose first connect waits for the user to finish a sign-in on the page that opened. */
  get signingIn(): string[] {
    return this.startingServers.filter((server) => this.pageOpen.has(server));
  }

  /**
   * Waits for the first connects under way of the servers `reached` picks, whose tools are not known before (a
   * script or a search may need them), each bounded by its own timeout, or until `signal` fires; `waits` hears their
   * names first, if there are any.
   */
  async untilStarted(
    reached: (server: string) => boolean,
    signal?: AbortSignal,
    waits?: (servers: string[]) => void,
  ): Promise<void> {
    // A server whose sign-in page is open waits for the user, who may take minutes or never come: not waited for.
    const waiting = [...this.firstConnects].filter(([, server]) => reached(server) && !this.pageOpen.has(server));
    if (!waiting.length) return;
    waits?.(waiting.map(([, server]) => server));
    const done = new AbortController();
    const pageOpens = (server: string) => once(this.signInPages, server, { signal: done.signal }).catch(() => {});
    const all = Promise.all(waiting.map(([settled, server]) => Promise.race([settled, pageOpens(server)])));
    try {
      await within(all, { ms: FIRST_CONNECT_WAIT_MS, timedOut: () => undefined, signal }).catch(() => undefined);
    } finally {
      done.abort();
    }
  }

  /**
   * Changes a config file as the user asked (`/mcp add`, `import`, `enable`, `disable`, `remove`, "Always allow"),
   * keeping the rest of it as written (`updateConfigFile`); trust follows the change (`BridgeTrust.written`, with
   * `authored`). Throws when the file could not be changed, and then records nothing. The error of recording trust
   * comes back as a value: the file is changed either way.
   */
  async writeConfig(
    file: string,
    change: (text: string | undefined) => string,
    authored: readonly string[] = [],
  ): Promise<{ trustError?: unknown }> {
    let before: string | undefined;
    const after = await updateConfigFile(file, (text) => {
      before = text;
      return change(text);
    });
    return this.trust.written(this.sourceOf("project"), file, before, after, authored);
  }

  /** The file of a scope (`project`, `user`, …), if that scope has one (whether or not it exists). */
  sourceOf(scope: ConfigScope): ConfigSource | undefined {
    return configSources(this.options).find((s) => s.scope === scope);
  }

  /** The servers as the files say now, every layer merged: what `/mcp add` and import start after writing entries. */
  async configured(): Promise<ServerConfig[]> {
    return (await loadLayeredConfig(this.options)).servers;
  }

  /** A connection for a config that is not (or not yet) one of the bridge's: `/mcp test`. Publishes and registers nothing. */
  async scratchConnection(config: ServerConfig): Promise<ServerConnection> {
    const { ServerConnection } = await connectionCode();
    if (this.shuttingDown) throw shutDownError(config.name);
    const forget: ConnectionOptions["onServerChange"] = (c, { kind }) => kind === "closed" && this.scratches.delete(c);
    const scratch = new ServerConnection(config, { ...this.baseOptions(config), onServerChange: forget });
    return this.scratches.add(scratch) && scratch;
  }

  /** Stops a server and forgets it (its entry was removed). */
  async remove(name: string): Promise<void> {
    const connection = this.connections.get(name);
    this.connections.delete(name);
    if (connection) this.devRestarts.stop(connection);
    await connection?.close();
  }

  /** What every connection needs: where it runs, how it signs in, and whether it may run at all. */
  private baseOptions(config: ServerConfig): ConnectionOptions {
    const { projectRoot, env, clientInfo, authStore, signIn, signInTimeoutMs, onServerChange, hubDir } = this.options;
    const features = this.options.featuresFor?.(config);
    return {
      ...{ projectRoot, env, clientInfo, authStore, signInTimeoutMs, features, onServerChange, hubDir },
      signIn: signIn && (() => this.announced(config.name, signIn())),
      trusted: () => this.trust.allows(config),
      sandbox: (endpoint) =>
        stdioSandbox(config, this.sandboxOf(config), endpoint, {
          ...this.options,
          servers: [...this.connections.values()].map((c) => c.config),
        }),
    };
  }

  /** `handler`, saying so when it sends the user to a sign-in page for `server`. */
  private announced(server: string, handler: SignInHandler | undefined): SignInHandler | undefined {
    if (!handler) return undefined;
    return (request) => {
      this.pageOpen.add(server);
      this.signInPages.emit(server);
      return handler(request);
    };
  }

  /** A local server's `dev.watch`, as it stands: what is watched, and the restarts it made. */
  devWatchOf(connection: ServerConnection): DevWatchStatus | undefined {
    return this.devRestarts.status(connection);
  }

  /** The sandbox a server runs in: its setting, the user's default, and how the user trusted it. */
  sandboxOf(config: ServerConfig): SandboxSetting {
    return effectiveSandbox(config, this.sandboxDefault, this.trust.sandboxed(config));
  }

  private async newConnection(server: ServerConfig): Promise<ServerConnection> {
    const { ServerConnection } = await connectionCode();
    const { events, logger, serverLogFor } = this.options;
    const serverLog = server.enabled && server.transport === "stdio" ? serverLogFor?.(server.name) : undefined;
    const connection: ServerConnection = new ServerConnection(server, {
      ...{ ...this.baseOptions(server), events, logger, serverLog },
      onTools: (connection, tools) => this.toolsArrived(connection, tools),
      recallProtocol: () => this.cached(connection)?.protocolVersion,
    });
    await this.devRestarts.watch(connection);
    return connection;
  }

  /**
   * Replaces a server's connection with one for `config` and starts it (`/mcp enable` without a reload). Its tools
   * are registered as they arrive; the error of a failed start is thrown.
   */
  replace(config: ServerConfig): Promise<ServerConnection> {
    return this.inTurn(config.name, async () => {
      const connection = await this.renewNow(config);
      if (config.enabled && !this.trust.allows(config)) throw untrustedError(config);
      await this.launch(connection);
      return connection;
    });
  }

  /** Stops a server's connection and puts a new, unstarted one for `config` in its place. */
  renew(config: ServerConfig): Promise<ServerConnection> {
    return this.inTurn(config.name, () => this.renewNow(config));
  }

  /**
   * One renewal of a server at a time (`/mcp on` typed twice): two at once would both close the same old connection,
   * and the first's new one would run on, in nobody's hands, to the end of pi.
   */
  private inTurn<T>(name: string, step: () => Promise<T>): Promise<T> {
    const turn = (this.renewals.get(name) ?? Promise.resolve()).catch(() => undefined).then(step);
    this.renewals.set(name, turn);
    return turn;
  }

  private async renewNow(config: ServerConfig): Promise<ServerConnection> {
    // An answer that comes after the session ended starts nothing.
    if (this.shuttingDown) throw shutDownError(config.name);
    const old = this.connections.get(config.name);
    if (old) {
      this.trust.release(old);
      this.devRestarts.stop(old);
    }
    await old?.close();
    if (this.shuttingDown) throw shutDownError(config.name);
    const connection = await this.newConnection(config);
    if (this.shuttingDown) throw shutDownError(config.name);
    this.connections.set(config.name, connection);
    return connection;
  }

  /** What the tool cache holds for a server. */
  private cached(connection: ServerConnection): CachedTools | undefined {
    const key = this.cacheKeyOf(connection);
    return key ? this.options.toolCache?.get(key) : undefined;
  }

  /** Registers a server's tools from the cache, if it has them there; true if it did. */
  private registerCached(connection: ServerConnection): boolean {
    // Tools of a server that may not run would only fail when called.
    if (!this.trust.allows(connection.config)) return false;
    const cached = this.cached(connection);
    if (!cached) return false;
    connection.primeTools(cached.tools);
    this.toolsArrived(connection, connection.tools, true);
    return true;
  }

  /**
   * Tells every connected server that the roots changed (`notifications/roots/list_changed`), so each asks for them
   * again. pi's project root stays the same for the whole process, so pi never calls this; a host that gives its own
   * roots (`featuresFor`) calls it when what they return changes.
   */
  async rootsChanged(): Promise<void> {
    await Promise.all([...this.connections.values()].map((c) => c.rootsChanged()));
  }

  metrics = (now = Date.now()): ServerMetrics[] => [...this.connections.values()].map((c) => c.health.metrics(now));

  /**
   * Closes every server, then waits for the tool lists still being written to the cache, and every other file write.
   * When pi is `quitting`, a local server that does not exit once its input ends is left to pi's watchdog, which gives
   * it the same grace after pi's exit: pi does not wait for it.
   */
  async shutdown({ quitting = false } = {}): Promise<void> {
    this.shuttingDown ??= (async () => {
      orphanWatchdog.sessionEnded(this, quitting);
      this.devRestarts.stop();
      await Promise.allSettled([...this.connections.values(), ...this.scratches].map((c) => c.close()));
      await Promise.allSettled([...this.cacheWrites]);
      await Promise.allSettled(pendingWrites());
      if (await sandboxIdle()) forgetSandboxLeftovers();
    })();
    await this.shuttingDown;
  }

  /** For `process.on("exit")`: synchronous, kills what is left. */
  killNow = (): void => this.connections.forEach((connection) => connection.killNow());
}
