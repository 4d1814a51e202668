/**
 * Servers added for this session only, by code instead of a config file: another extension over pi's bus
 * (docs/api.md), or pi 1.x's `pi.registerMcpServer()`. An entry is checked by the same validator as an mcp.json entry,
 * runs with the user's rights like a server of the user's own file (it needs no project trust: code that can add it
 * can run the same command itself), and is written to no file. Removing one stops it.
 */
import { describeError } from "../common/errors.ts";
import { redactShapes } from "../common/redact.ts";
import type { ServerConfig } from "../config/types.ts";
import { validateServerEntry } from "../config/validate/entry.ts";
import type { ServerConnection } from "../connection/server-connection.ts";
import type { McpBridge } from "./mcp-bridge.ts";

/** Why an entry was not added or a server not removed, in a word for code and a sentence for people. */
export type SessionServerRefusal = {
  ok: false;
  kind: "invalid-entry" | "name-taken" | "start-failed" | "unknown-server" | "not-session";
  message: string;
};

export type SessionServerAdded = { ok: true; connection: ServerConnection; warnings: string[] };

function refusal(kind: SessionServerRefusal["kind"], message: string): SessionServerRefusal {
  return { ok: false, kind, message };
}

export interface AddOptions {
  /** Who adds it (an extension's path, `pi.events`): named wherever the server's origin is shown. */
  by: string;
  /** Keep the server when its first connect fails (it retries as any server does) instead of removing it again. */
  keepIfFailed?: boolean;
}

/** Whether a server was added for this session only, by code. */
export function isSessionServer(config: ServerConfig): boolean {
  return config.source.scope === "session";
}

export class SessionServers {
  /**
   * Names whose adding is under way (a second add of one at the same time is refused, not put in its place): when its
   * connection is in place, and when the add is done. Removing one waits for the first and ends its connect.
   */
  private readonly adding = new Map<string, { placed: Promise<unknown>; done: Promise<void> }>();

  constructor(
    private readonly bridge: McpBridge,
    /** After one was removed: its name is free (for a registration left out for it). */
    private readonly removed: () => void,
    /** Takes a server's tools out of pi before it stops (the tool registry's part). */
    private readonly withdraw: (connection: ServerConnection) => void,
  ) {}

  /** Validates the entry, then starts the server; its tools reach pi as any server's do. Never throws. */
  async add(name: string, entry: unknown, options: AddOptions): Promise<SessionServerAdded | SessionServerRefusal> {
    const taken = this.bridge.connection(name);
    if (taken || this.adding.has(name)) {
      const how =
        !taken || isSessionServer(taken.config)
          ? "already added for this session; remove it first to add it again"
          : `already configured in ${taken.config.source.path}; pick another name`;
      return refusal("name-taken", `MCP server '${name}' is ${how}.`);
    }
    const source = { scope: "session" as const, path: `the entry added by ${options.by}` };
    const { config, errors, warnings: found } = validateServerEntry(name, entry, source);
    // Redacted as a config file's problems are: what it quotes may be a credential in the wrong field.
    const invalid = `MCP server entry '${name}' is not valid: ${redactShapes(errors.join("; "))}`;
    const warnings = found.map(redactShapes);
    if (!config) return refusal("invalid-entry", invalid);
    const placed = this.bridge.renew(config);
    let added = () => {};
    const done = new Promise<void>((resolve) => (added = resolve));
    this.adding.set(name, { placed: placed.catch(() => undefined), done });
    try {
      const connection = await placed;
      await this.bridge.launch(connection);
      return { ok: true, connection, warnings };
    } catch (error) {
      const connection = this.bridge.connection(name);
      if (connection && options.keepIfFailed) return { ok: true, connection, warnings };
      if (connection) this.withdraw(connection);
      if (connection) await this.bridge.remove(name);
      return refusal("start-failed", `MCP server '${name}' did not start: ${describeError(error)}`);
    } finally {
      this.adding.delete(name);
      added();
    }
  }

  /** Takes a server added for this session out of pi and stops it; a server from a config file is refused. */
  async remove(name: string): Promise<{ ok: true } | SessionServerRefusal> {
    const adding = this.adding.get(name);
    await adding?.placed;
    const connection = this.bridge.connection(name);
    if (!connection) return refusal("unknown-server", `There is no MCP server '${name}' in this session.`);
    if (!isSessionServer(connection.config))
      return refusal(
        "not-session",
        `MCP server '${name}' comes from ${connection.config.source.path}, not from code: only servers added for this session can be removed this way (/mcp remove takes it out of its file).`,
      );
    this.withdraw(connection);
    await this.bridge.remove(name);
    await adding?.done; // its connect ended with it: the name is free for the next add
    this.removed();
    return { ok: true };
  }
}
