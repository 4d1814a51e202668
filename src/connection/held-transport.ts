/**
 * What one transport holds open, and the one place that lets go of it: the SDK client, its transport, a remote
 * server's own connection pool, and a local server's process tree (those processes that left its group included).
 * Kept apart from the session that opens and uses the transport so that every way a session ends (a failed open, a
 * close, pi exiting without a shutdown) goes through the same steps, and no process or socket outlives a session.
 */
import { type Client, StreamableHTTPClientTransport, type Transport } from "@modelcontextprotocol/client";
import { settleWithin } from "../common/wait.ts";
import type { TransportKind } from "../config/types.ts";
import type { ServerPool } from "./http/http-pool.ts";
import type { Watch } from "./local/orphan-watchdog.ts";
import {
  killProcessesNow,
  markedProcesses,
  mergeProcesses,
  NPM_ROLLBACK_MS,
  npxInstalling,
  type ProcessInfo,
  processTree,
  terminateProcesses,
} from "./local/process-tree.ts";
import type { ProcessGroupStdioTransport } from "./local/stdio-transport.ts";

export interface CloseOptions {
  /** Let a local server exit by itself first (stdin closed), before signals. */
  graceful: boolean;
  /** Tell a Streamable HTTP server to end its session (a DELETE), within a second. */
  terminateSession?: boolean;
}

const SESSION_TERMINATE_TIMEOUT_MS = 1000;
/** As long as a stdio server gets to exit after its stdin closes, before signals. */
const STDIO_CLOSE_GRACE_MS = 2000;

/** What one transport holds open, from its creation until `releaseHeld` has run. */
export interface Held {
  client: Client;
  transport: Transport;
  kind: TransportKind;
  /** A remote server's own connection pool, so closing it closes its sockets at once. */
  pool?: ServerPool;
  /** A local server's process tree as seen after it started, so processes that later left it are still ended. */
  processes: ProcessInfo[];
  /** Those processes as the orphan watchdog watches them. */
  watched: Watch[];
  /** Opened, and not released or dropped since. */
  open: boolean;
  /** Set once release starts, so the transport's `onclose` is not taken for a drop. */
  releasing: boolean;
  released?: Promise<void>;
}

/** A local server's pid, once spawned; undefined for a remote transport. */
export function pidOf(transport: Transport): number | undefined {
  return (transport as Partial<ProcessGroupStdioTransport>).pid ?? undefined;
}

/** A server's processes now: those recorded, its tree (until released: its pid may be reused then), its mark's. */
function serverProcesses(held: Held, marked = true): ProcessInfo[] {
  const { pid, ownerMark } = held.transport as Partial<ProcessGroupStdioTransport>;
  const tree = pid && !held.released ? processTree(pid) : [];
  return mergeProcesses(held.processes, tree, ownerMark && marked ? markedProcesses(ownerMark) : []);
}

/** False once a local server's transport can write nothing more (its process ended); a remote one has no such state. */
export function accepting(transport: Transport): boolean {
  return (transport as Partial<ProcessGroupStdioTransport>).accepting !== false;
}

/**
 * Lets go of what a transport holds: closes the client, and makes sure a local server's process tree is gone.
 * `graceful` runs the transport's close sequence (stdin closed, then signals to the process group); otherwise the group
 * is killed at once. Either way every recorded process still alive is ended after, since a wrapper's child may have
 * left the group. The first call's options win; later calls wait for it.
 */
export function releaseHeld(held: Held, options: CloseOptions): Promise<void> {
  held.released ??= (async () => {
    held.releasing = true;
    held.open = false;
    const { client, transport, pool } = held;
    // A scan of every process for the mark costs tens of ms: a close that runs its course makes the one it needs.
    const processes = serverProcesses(held, !options.graceful);
    if (options.terminateSession && transport instanceof StreamableHTTPClientTransport && transport.sessionId)
      await settleWithin(transport.terminateSession(), SESSION_TERMINATE_TIMEOUT_MS);
    // npm stopped while it installs is given the time to roll the install back (./local/stdio-transport.ts).
    const installing = npxInstalling(pidOf(transport));
    if (!options.graceful && !installing) {
      (transport as Partial<ProcessGroupStdioTransport>).killNow?.();
      await terminateProcesses(processes);
    }
    const closing = client.close().then(() => transport.close());
    const grace = STDIO_CLOSE_GRACE_MS * 2 + 500 + (installing ? NPM_ROLLBACK_MS : 0);
    if (!(await settleWithin(closing, grace))) await terminateProcesses(processes);
    const closed = await closing.then(
      () => true,
      () => false,
    );
    await pool?.destroy();
    // pi is quitting: what is left of the server is its watchdog's, which still watches every process recorded here.
    if ((transport as Partial<ProcessGroupStdioTransport>).handedOver) return;
    // Again with the mark (what was started while the server was being stopped), unless the transport's close did.
    const { ownerMark } = transport as Partial<ProcessGroupStdioTransport>;
    await terminateProcesses(ownerMark && !closed ? mergeProcesses(processes, markedProcesses(ownerMark)) : processes);
    for (const watch of held.watched) watch.forget();
  })();
  return held.released;
}

/** Synchronous last resort when pi exits without a shutdown: SIGKILL to a local server's group and tree. */
export function killHeldNow(held: Held): void {
  (held.transport as Partial<ProcessGroupStdioTransport>).killNow?.();
  killProcessesNow(serverProcesses(held));
}
