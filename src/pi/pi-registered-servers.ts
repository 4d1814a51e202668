/**
 * pi 1.x's `pi.registerMcpServer()` servers as the bridge's session-only servers: each registered one added (its entry
 * read by the bridge's own validator, which takes pi 1.x's shape), each unregistered one removed, one registered again
 * with another entry replaced. As pi 1.x's own MCP does, a server of a config file keeps its name and the registered
 * one is left out. The registrations stay pi's: nothing is written to a file.
 */
import type { SessionServers } from "../bridge/session-servers.ts";
import type { PiRegisteredServer } from "./pi-line.ts";

export interface RegisteredServersDeps {
  servers: SessionServers;
  /** Whether a server of this name comes from a config file (it wins over a registered one). */
  configured(name: string): boolean;
  /** A registration the bridge could not follow (or, `warning`, took with a warning), in a sentence for the user. */
  problem(text: string, warning?: boolean): void;
}

export class PiRegisteredServers {
  /** The registrations added, by name: their entries as JSON, to tell a new entry from the same one. */
  private readonly added = new Map<string, string>();
  /** Registrations left out for a config file's (or another session) server of the same name, told once each. */
  private readonly leftOut = new Set<string>();
  /** One sync at a time, in the order the changes came. */
  private queue: Promise<void> = Promise.resolve();
  /** The start of each server added, by name. */
  private readonly starting = new Map<string, Promise<void>>();

  constructor(private readonly deps: RegisteredServersDeps) {}

  /** Brings the bridge's servers in line with pi's registrations (all of them, as pi lists them). Never throws. */
  sync(registered: readonly PiRegisteredServer[]): Promise<void> {
    this.queue = this.queue.then(() => this.apply(registered)).catch(() => undefined);
    // Resolves once the servers added have connected; the next sync waits only for the changes, not the connects.
    return this.queue.then(() => Promise.allSettled(this.starting.values())).then(() => undefined);
  }

  private async apply(registered: readonly PiRegisteredServer[]): Promise<void> {
    const wanted = new Map(registered.map((server) => [server.name, server]));
    for (const [name, entry] of this.added) {
      if (JSON.stringify(wanted.get(name)?.config) === entry) continue;
      this.added.delete(name);
      this.starting.delete(name); // its connect, if under way, ends with it, and is not told as a failure
      await this.deps.servers.remove(name);
    }
    for (const server of registered) {
      if (this.added.has(server.name)) continue;
      if (this.deps.configured(server.name)) {
        if (this.leftOut.has(server.name)) continue;
        this.leftOut.add(server.name);
        this.deps.problem(
          `MCP server '${server.name}' registered by ${server.extensionPath} is left out: a config file defines a server of that name.`,
        );
        continue;
      }
      // Marked before it starts, so a change that comes while it connects sees it.
      this.added.set(server.name, JSON.stringify(server.config));
      const options = { by: server.extensionPath, keepIfFailed: true };
      const start = this.deps.servers.add(server.name, server.config, options).then((added) => {
        const by = `MCP server '${server.name}' registered by ${server.extensionPath}`;
        if (this.starting.get(server.name) !== start) return;
        if (added.ok) return added.warnings.forEach((warning) => this.deps.problem(`${by}: ${warning}`, true));
        // An entry refused as invalid stays marked, so that it is told once, not again at every change.
        if (added.kind !== "invalid-entry") this.added.delete(server.name);
        // A name another session server has is tried again at each change (it may be free then), but told once.
        if (added.kind === "name-taken" && this.leftOut.has(server.name)) return;
        if (added.kind === "name-taken") this.leftOut.add(server.name);
        this.deps.problem(`${by}: ${added.message}`);
      });
      // Each connects on its own (one that never answers holds back no other).
      this.starting.set(server.name, start);
    }
  }
}
