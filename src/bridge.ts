/**
 * All configured servers together: load the layered config, connect the enabled servers in parallel, report what
 * failed, and shut every one down.
 */
import type { ConfigProblem } from "./config.ts";
import { type ConfigLocations, loadLayeredConfig } from "./config-files.ts";
import { type ConnectionOptions, ServerConnection } from "./server-connection.ts";

export interface BridgeOptions extends ConfigLocations, Omit<ConnectionOptions, "projectRoot"> {}

export class McpBridge {
  /** In config order: highest-priority file first. */
  readonly connections = new Map<string, ServerConnection>();
  problems: ConfigProblem[] = [];
  private shuttingDown?: Promise<void>;

  constructor(private readonly options: BridgeOptions) {}

  get projectRoot(): string {
    return this.options.projectRoot;
  }

  connection(name: string): ServerConnection | undefined {
    return this.connections.get(name);
  }

  /** Loads the config and connects every enabled server at once; each is bounded by its own timeout. Never throws for a server. */
  async start(): Promise<void> {
    const config = await loadLayeredConfig(this.options);
    this.problems = config.problems;
    const connectionOptions: ConnectionOptions = {
      projectRoot: this.options.projectRoot,
      env: this.options.env,
      clientInfo: this.options.clientInfo,
    };
    for (const server of config.servers) this.connections.set(server.name, new ServerConnection(server, connectionOptions));
    const enabled = [...this.connections.values()].filter((c) => c.config.enabled);
    await Promise.allSettled(enabled.map((c) => c.connect()));
  }

  async shutdown(): Promise<void> {
    this.shuttingDown ??= Promise.allSettled([...this.connections.values()].map((c) => c.close())).then(() => undefined);
    await this.shuttingDown;
  }

  /** For `process.on("exit")`: synchronous, kills what is left. */
  killNow(): void {
    for (const connection of this.connections.values()) connection.killNow();
  }
}
