/**
 * The servers switched off for this pi session (`/mcp off`, ./command-off.ts), with no config file written. Off is the
 * stop `/mcp disable` makes (its tools leave pi at once, its connection closes, a local server's process ends); on
 * starts a fresh connection as `/mcp enable` does, so trust still decides whether it may run.
 *
 * The switch is kept in pi's session as an entry of its own, since pi loads the extension afresh for `/reload`: the
 * servers it names are switched off again when that session starts (after `/reload`, or when it is resumed), and a new
 * session (`/new`) starts with every server on. A server stays off only while the connection that was closed is still
 * its own: `/mcp enable`, `/mcp trust` or a removal that puts another in its place lifts the switch.
 */
import type { McpBridge } from "../bridge/mcp-bridge.ts";
import { isSessionServer } from "../bridge/session-servers.ts";
import { isObject } from "../common/values.ts";
import type { ServerConnection } from "../connection/server-connection.ts";
import type { ToolRegistry } from "./tool-registry.ts";

/** The session entry that records which servers are off: the last one in the session holds. */
export const SERVERS_OFF_ENTRY = "mcp-bridge.servers-off";

/** The servers the session's last record names as off (none without a record). */
function serversOffIn(entries: readonly unknown[]): string[] {
  const entry = entries.findLast((e) => isObject(e) && e.type === "custom" && e.customType === SERVERS_OFF_ENTRY);
  const servers = isObject(entry) && isObject(entry.data) ? entry.data.servers : undefined;
  return Array.isArray(servers) ? servers.filter((s): s is string => typeof s === "string") : [];
}

export interface ServersOffDeps {
  bridge: McpBridge;
  registry: ToolRegistry;
  /** Saves the names of the servers that are off in the session (pi's `appendEntry`). */
  record: (servers: string[]) => void;
}

export class ServersOff {
  /** Each server switched off, with the connection that was closed for it. */
  private readonly off = new Map<string, ServerConnection>();
  /** What the session's last record says, so a change is recorded once. */
  private recorded: readonly string[] = [];

  /** Servers added by code the session recorded as off, not there yet at its start: off again once they connect. */
  private readonly awaited = new Set<string>();

  constructor(private readonly deps: ServersOffDeps) {
    deps.bridge.onTools((connection) => {
      if (isSessionServer(connection.config) && this.awaited.delete(connection.name)) void this.stop(connection);
    });
  }

  isOff(connection: ServerConnection): boolean {
    return this.off.get(connection.name) === connection;
  }

  /** The servers that are off now, in config order. */
  names(): string[] {
    return [...this.deps.bridge.connections.values()].filter((c) => this.isOff(c)).map((c) => c.name);
  }

  /** Withdraws the server's tools at once, then closes its connection (its process ends with it). */
  async switchOff(connection: ServerConnection): Promise<void> {
    const closing = this.stop(connection);
    this.recordChanges();
    await closing;
  }

  private stop(connection: ServerConnection): Promise<void> {
    this.off.set(connection.name, connection);
    this.deps.registry.syncServer(connection, []);
    return connection.close();
  }

  /** A fresh connection in the closed one's place, started as at load; throws when it may not or could not start. */
  async switchOn(connection: ServerConnection): Promise<ServerConnection> {
    this.off.delete(connection.name);
    this.recordChanges();
    return this.deps.bridge.replace(connection.config);
  }

  /** At session start: the servers the session recorded as off go off again (those still configured and running). */
  async restore(entries: readonly unknown[]): Promise<void> {
    this.recorded = serversOffIn(entries);
    const closing = this.recorded.map((name) => {
      const connection = this.deps.bridge.connection(name);
      if (!connection) this.awaited.add(name);
      return connection && connection.status !== "disabled" ? this.stop(connection) : undefined;
    });
    // A server disabled in its config since leaves the record; one not there may be a server code adds again later.
    this.recordChanges();
    await Promise.all(closing);
  }

  /** Records the servers that are off when they differ from the last record (another command lifted a switch). */
  recordChanges(): void {
    const names = [...this.names(), ...this.awaited];
    if (names.length === this.recorded.length && names.every((name, i) => name === this.recorded[i])) return;
    this.recorded = names;
    this.deps.record(names);
  }
}
