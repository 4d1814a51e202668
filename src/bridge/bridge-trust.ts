/**
 * Project trust applied to the bridge's servers (`bridge.trust`): which may run, those held for want of trust, and the
 * user's or the host's answers carried out: kept by `ProjectTrust` (../trust/), servers started or stopped by them.
 */
import * as path from "node:path";
import type { ConfigSource, ServerConfig } from "../config/types.ts";
import { layerConfigs } from "../config/layers.ts";
import type { ServerConnection } from "../connection/server-connection.ts";
import { needsTrust, type TrustState } from "../trust/trust-rules.ts";
import type { ProjectTrust } from "../trust/project-trust.ts";

/** What of `McpBridge` trust needs: its servers, replacing one (`renew`), and starting them as startup does. */
export interface Launcher {
  readonly connections: ReadonlyMap<string, ServerConnection>;
  renew(config: ServerConfig): Promise<ServerConnection>;
  launch(connection: ServerConnection): Promise<void> | undefined;
  launchWithinBudget(connections: readonly ServerConnection[]): Promise<void>;
}

export class BridgeTrust {
  /** Enabled servers that were not started for want of trust, until trust lets them start (`followHost`). */
  private readonly held = new Set<ServerConnection>();

  /** Without `store` every server may run (a bridge used as a library). */
  constructor(
    private readonly bridge: Launcher,
    private readonly store?: ProjectTrust,
  ) {}

  /** Whether a server may run: it needs no trust, or the user trusts its current definition. */
  allows(config: ServerConfig): boolean {
    return this.store?.allows(config) ?? true;
  }

  /** Whether a server may start now; one that may not is held until trust lets it (`followHost`). */
  admit(connection: ServerConnection): boolean {
    const allowed = this.allows(connection.config);
    if (allowed) this.held.delete(connection);
    else this.held.add(connection);
    return allowed;
  }

  /** A connection being replaced is held no more. */
  release(connection: ServerConnection): void {
    this.held.delete(connection);
  }

  /** Where a server stands on trust; `undefined` when it needs none. */
  stateOf(name: string): TrustState | undefined {
    const connection = this.bridge.connections.get(name);
    return connection && this.store?.stateOf(connection.config);
  }

  /** Whether the user trusted this server to run in a sandbox only. */
  sandboxed(config: ServerConfig): boolean {
    return this.store?.sandboxed(config) ?? false;
  }

  /** Enabled project servers not trusted yet, in config order. */
  untrusted(): ServerConnection[] {
    return [...this.bridge.connections.values()].filter((c) => c.config.enabled && !this.allows(c.config));
  }

  /** Whether the user should be asked about servers (not when the host decides trust). */
  get asks(): boolean {
    return this.store?.asks ?? false;
  }

  /**
   * The user trusts these servers (`sandboxed`: in a sandbox only): remembered, each started as at startup. Resolves
   * with those that failed to start and why; throws only when the answer could not be saved (it holds this session).
   */
  async trust(
    connections: readonly ServerConnection[],
    sandboxed = false,
  ): Promise<Array<{ connection: ServerConnection; error?: unknown }>> {
    const saved = this.remember(connections, true, sandboxed);
    const results = await Promise.all(
      connections.map(async (old) => {
        try {
          const connection = await this.bridge.renew(old.config);
          await this.bridge.launch(connection);
          return { connection };
        } catch (error) {
          return { connection: old, error };
        }
      }),
    );
    await saved;
    return results;
  }

  /**
   * Trust has just been decided by the host (pi 1.x, which decides it itself, at session start): servers held for
   * want of trust that it allows now start as at load, within the startup budget; running project servers it does not
   * allow are stopped and returned (their tools are the caller's to withdraw). The answer is the host's to keep.
   */
  async followHost(): Promise<ServerConnection[]> {
    const current = [...this.bridge.connections.values()];
    const refused = current.filter((c) => needsTrust(c.config) && !this.allows(c.config) && c.status !== "not started");
    await Promise.all(refused.map((c) => this.bridge.renew(c.config).catch(() => undefined)));
    await this.bridge.launchWithinBudget(current.filter((c) => this.held.has(c) && this.allows(c.config)));
    return refused;
  }

  /** The user does not trust these servers: remembered, and each is stopped (its tools are the caller's to withdraw). */
  async distrust(connections: readonly ServerConnection[]): Promise<void> {
    const saved = this.remember(connections, false);
    await Promise.all(connections.map((c) => this.bridge.renew(c.config)));
    await saved;
  }

  /**
   * A config file changed from `before` to `after` (`McpBridge.writeConfig`). When it is the project's, trust follows
   * (`ProjectTrust.written`): the servers named in `authored` the user wrote whole and trusts as written; any other
   * server the change touched keeps the trust it had. The error of recording trust comes back as a value.
   */
  async written(
    project: ConfigSource | undefined,
    file: string,
    before: string | undefined,
    after: string,
    authored: readonly string[],
  ): Promise<{ trustError?: unknown }> {
    if (!this.store || !project || path.resolve(project.path) !== path.resolve(file)) return {};
    // The definitions as the next session will load them from this file.
    const definitions = (text: string | undefined) => layerConfigs([{ source: project, text }]).servers;
    try {
      await this.store.written(definitions(before), definitions(after), new Set(authored));
      return {};
    } catch (error) {
      return { trustError: error };
    }
  }

  /**
   * Records the user's answer: in effect at once, saved for later sessions in the background. Rejects with the error
   * of saving, if any (marked handled here, so it cannot go unhandled while the servers start).
   */
  private remember(connections: readonly ServerConnection[], trusted: boolean, sandboxed = false): Promise<void> {
    const configs = connections.map((c) => c.config);
    const saving = this.store?.answer(configs, trusted, sandboxed) ?? Promise.resolve();
    saving.catch(() => {});
    return saving;
  }
}
