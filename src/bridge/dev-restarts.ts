/**
 * The restarts of local servers whose files changed (`dev.watch`, ../connection/local/dev-watch.ts): one watch per
 * connection, from its creation until it is replaced, removed or shut down. A change restarts a server that runs, or
 * one that failed (the edit may be its fix); one not started yet (lazy) starts with the new files anyway.
 */
import type { Logger } from "../common/log-file.ts";
import { lazy } from "../common/lazy.ts";
import { plural } from "../common/text.ts";
import { type Environment, substituteVars } from "../config/substitute.ts";
import type { ServerConnection } from "../connection/server-connection.ts";

const watchCode = lazy(() => import("../connection/local/dev-watch.ts"));
/** The states a change restarts the server from. */
const RESTARTED = new Set(["live", "retrying", "gaveUp"]);

/** What `/mcp` says of a server's watch. */
export interface DevWatchStatus {
  globs: readonly string[];
  /** How many folders are watched, once they have been walked. */
  folders?: number;
  restarts: number;
  /** The file whose change restarted it last. */
  lastFile?: string;
  /** Why watching stopped, if it did. */
  failed?: string;
}

export class DevRestarts {
  private readonly watches = new Map<ServerConnection, { stop: () => void; status: DevWatchStatus }>();

  constructor(
    private readonly projectRoot: string,
    private readonly env: Environment,
    private readonly logger?: Logger,
  ) {}

  /** Starts watching the connection's `dev.watch` files, if it has any. */
  async watch(connection: ServerConnection): Promise<void> {
    const { name, watch, transport } = connection.config;
    if (!watch?.length || transport !== "stdio") return;
    const { watchFiles } = await watchCode();
    const log = (level: "info" | "warn", event: string, message: string, fields: Record<string, unknown> = {}) =>
      this.logger?.log({ level, event, server: name, ...fields, message });
    // `${PROJECT_ROOT}/src/**` (VS Code's `${workspaceFolder}`) reads as the files under the project root.
    const globs = watch.map((glob) => substituteVars(glob, this.env, this.projectRoot).value);
    const status: DevWatchStatus = { globs: watch, restarts: 0 };
    const stop = watchFiles(globs, this.projectRoot, {
      changed: (file) => {
        if (!RESTARTED.has(connection.state.kind)) return;
        Object.assign(status, { restarts: status.restarts + 1, lastFile: file });
        log("info", "dev.restart", `${file} changed: restarting`, { file });
        void connection.reconnect().catch(() => undefined);
      },
      // Says the globs took hold: a glob that names no existing folder watches nothing.
      ready: (folders) => {
        status.folders = folders;
        log("info", "dev.watch", `watching ${watch.join(", ")} (${plural(folders, "folder")})`, { folders });
      },
      failed: (error) => {
        status.failed = error.message;
        log("warn", "dev.watch.failed", `watching its files: ${error.message}`);
      },
    });
    this.watches.set(connection, { stop, status });
  }

  /** The connection's watch as it stands, if it has one. */
  status(connection: ServerConnection): DevWatchStatus | undefined {
    return this.watches.get(connection)?.status;
  }

  /** Stops watching for `connection` (all connections when none is named). */
  stop(connection?: ServerConnection): void {
    for (const [watched, { stop }] of this.watches)
      if (!connection || watched === connection) {
        stop();
        this.watches.delete(watched);
      }
  }
}
