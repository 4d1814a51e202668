/**
 * All configured servers together: load the layered config, start the servers that are not lazy in parallel (pi waits
 * for them only up to a startup budget), give lazy servers their tools from the cache, keep the cache current, and
 * shut every server down.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ApprovalMode, ConfigProblem, ConfigScope, ConfigSource, ServerConfig } from "../config/types.ts";
import { type ConfigLocations, configSources, loadLayeredConfig } from "../config/files.ts";
import type { ServerMetrics } from "../connection/health.ts";
import type { EventSink } from "../common/events.ts";
import { type ConnectionOptions, ServerConnection } from "../connection/server-connection.ts";
import type { Logger } from "../common/log-file.ts";
import { cacheKey, type ToolCache } from "./tool-cache.ts";

/** How long pi's startup waits for servers; slower ones register their tools when they connect. */
export const DEFAULT_STARTUP_BUDGET_MS = 3000;

export interface BridgeOptions extends ConfigLocations, Omit<ConnectionOptions, "projectRoot" | "onTools"> {
  events?: EventSink;
  logger?: Logger;
  toolCache?: ToolCache;
  startupBudgetMs?: number;
  /** A server's own log (its stderr), made when the server is configured. */
  serverLogFor?: (server: string) => Logger;
}

export type ToolsListener = (connection: ServerConnection, tools: Tool[]) => void;
export type StartFailedListener = (connection: ServerConnection, error: unknown) => void;

export class McpBridge {
  /** In config order: highest-priority file first. */
  readonly connections = new Map<string, ServerConnection>();
  problems: ConfigProblem[] = [];
  /** Whether MCP tools ask before they run: `"never"` only from the user-level file. */
  approval: ApprovalMode = "ask";
  private shuttingDown?: Promise<void>;
  private readonly listeners: ToolsListener[] = [];
  private readonly startFailedListeners: StartFailedListener[] = [];
  private readonly cacheKeys = new Map<string, string>();
  /** Tool lists still being written to the cache: shutdown waits for them, so none lands after it. */
  private readonly cacheWrites = new Set<Promise<void>>();

  constructor(private readonly options: BridgeOptions) {}

  get projectRoot(): string {
    return this.options.projectRoot;
  }

  connection(name: string): ServerConnection | undefined {
    return this.connections.get(name);
  }

  /** Called with a server's tool list whenever it is known or changes (including from the cache). */
  onTools(listener: ToolsListener): void {
    this.listeners.push(listener);
  }

  /**
   * Called when a server started by {@link start} fails its first connect, also after the startup budget: the only
   * word of a server that was still connecting when the startup notice was shown.
   */
  onStartFailed(listener: StartFailedListener): void {
    this.startFailedListeners.push(listener);
  }

  private toolsArrived(connection: ServerConnection, tools: Tool[], fromCache = false): void {
    if (!fromCache) {
      const key = this.cacheKeyOf(connection);
      const write = key ? this.options.toolCache?.set(key, { server: connection.name, tools }) : undefined;
      if (write) {
        this.cacheWrites.add(write);
        void write.finally(() => this.cacheWrites.delete(write));
      }
    }
    for (const listener of this.listeners) listener(connection, tools);
  }

  private cacheKeyOf(connection: ServerConnection): string | undefined {
    let key = this.cacheKeys.get(connection.name);
    if (key === undefined) {
      const identity = connection.identity();
      if (identity === undefined) return undefined;
      key = cacheKey(identity);
      this.cacheKeys.set(connection.name, key);
    }
    return key;
  }

  /**
   * Loads the config and starts every enabled server that is not lazy, all at once, each bounded by its own timeout;
   * returns when they are all done or the startup budget is spent, whichever is first. Lazy servers get their tools
   * from the cache; one the cache does not know yet starts in the background to fill it. Never throws for a server.
   */
  async start(): Promise<void> {
    const config = await loadLayeredConfig(this.options);
    this.problems = config.problems;
    this.approval = config.approval;
    for (const server of config.servers) this.connections.set(server.name, this.newConnection(server));
    const enabled = [...this.connections.values()].filter((c) => c.config.enabled);
    const waitFor: Promise<unknown>[] = [];
    for (const connection of enabled) {
      if (connection.config.lazy) {
        if (this.registerCached(connection)) continue;
        // Nothing known about its tools yet: start it once, in the background, to learn them.
        connection.connect().catch(() => undefined);
        continue;
      }
      waitFor.push(
        connection.connect().catch((error: unknown) => {
          // A server waiting for a sign-in keeps the tools an earlier session saw: calling one starts the sign-in.
          if (connection.needsSignIn) this.registerCached(connection);
          for (const listener of this.startFailedListeners) listener(connection, error);
          throw error;
        }),
      );
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(waitFor),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.options.startupBudgetMs ?? DEFAULT_STARTUP_BUDGET_MS);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
  }

  /** The config files, highest priority first (whether or not they exist). */
  sources(): ConfigSource[] {
    return configSources(this.options);
  }

  /** The file of a scope (`project`, `user`, …), if that scope has one. */
  sourceOf(scope: ConfigScope): ConfigSource | undefined {
    return this.sources().find((s) => s.scope === scope);
  }

  /** A connection for a config that is not (or not yet) one of the bridge's: `/mcp test`. Publishes and registers nothing. */
  scratchConnection(config: ServerConfig): ServerConnection {
    return new ServerConnection(config, this.baseOptions());
  }

  /** Stops a server and forgets it (its entry was removed). */
  async remove(name: string): Promise<void> {
    const connection = this.connections.get(name);
    this.connections.delete(name);
    await connection?.close();
  }

  /** What every connection needs: where it runs, and how it signs in. */
  private baseOptions(): ConnectionOptions {
    const { projectRoot, env, clientInfo, authStore, signIn, signInTimeoutMs } = this.options;
    return { projectRoot, env, clientInfo, authStore, signIn, signInTimeoutMs };
  }

  private newConnection(server: ServerConfig): ServerConnection {
    const serverLog = server.enabled && server.transport === "stdio" ? this.options.serverLogFor?.(server.name) : undefined;
    return new ServerConnection(server, {
      ...this.baseOptions(),
      events: this.options.events,
      logger: this.options.logger,
      serverLog,
      onTools: (connection, tools) => this.toolsArrived(connection, tools),
    });
  }

  /**
   * Replaces a server's connection with one for `config` and starts it (`/mcp enable` without a reload). Its tools
   * are registered as they arrive; the error of a failed start is thrown.
   */
  async replace(config: ServerConfig): Promise<ServerConnection> {
    await this.connections.get(config.name)?.close();
    const connection = this.newConnection(config);
    this.connections.set(config.name, connection);
    if (config.enabled && !config.lazy) await connection.connect();
    else if (config.lazy) this.registerCached(connection);
    return connection;
  }

  /** Registers a server's tools from the cache, if it has them there; true if it did. */
  private registerCached(connection: ServerConnection): boolean {
    const key = this.cacheKeyOf(connection);
    const cached = key ? this.options.toolCache?.get(key) : undefined;
    if (!cached) return false;
    connection.primeTools(cached.tools);
    this.toolsArrived(connection, cached.tools, true);
    return true;
  }

  metrics(now = Date.now()): ServerMetrics[] {
    return [...this.connections.values()].map((c) => c.metrics(now));
  }

  /** Closes every server, then waits for the tool lists still being written to the cache. */
  async shutdown(): Promise<void> {
    this.shuttingDown ??= (async () => {
      await Promise.allSettled([...this.connections.values()].map((c) => c.close()));
      await Promise.allSettled([...this.cacheWrites]);
    })();
    await this.shuttingDown;
  }

  /** For `process.on("exit")`: synchronous, kills what is left. */
  killNow(): void {
    for (const connection of this.connections.values()) connection.killNow();
  }
}
