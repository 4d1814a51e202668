/**
 * What the process-group stdio transport (./stdio-transport.ts) is given and tells: how to start the server, the hooks
 * it reports on, and how the process ended.
 */
import type { OrphanWatchdog } from "./orphan-watchdog.ts";

export interface ProcessExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** `exited with code 1`, `killed by SIGKILL`. */
  description: string;
}

/** How a process the bridge stopped ended: the last step taken before it exited, and how long after the first. */
export interface ProcessEnding {
  by: "stdin" | "SIGTERM" | "SIGKILL";
  durationMs: number;
}

export interface ProcessGroupStdioOptions {
  command: string;
  args: string[];
  /** Added to the SDK's safe defaults (HOME, PATH, SHELL, TERM, USER, LOGNAME), winning over them; the rest of the host environment is not passed. */
  env: Record<string, string>;
  cwd?: string;
  /** Each stderr line (split at `\r?\n`), cut at 4096 characters with `…`; a final line without a newline comes at stream end. */
  onStderrLine?(line: string): void;
  /** Called once, when the process exits. Not called when it could not be started (start() rejects instead). */
  onExit?(info: ProcessExitInfo): void;
  /** How long close() waits after ending stdin, and again after SIGTERM. Default 2 s. */
  closeGraceMs?: number;
  /** Told about the process group as soon as it exists, and when close() has ended it, so it ends if pi is killed. */
  watchdog?: Pick<OrphanWatchdog, "watch" | "takesOver">;
  /** The longest stdout line accepted; a longer one is reported (`MessageTooLargeError`) and the server stopped. */
  maxMessageBytes?: number;
  /** Told of a line over the limit first: `onerror` may not reach the owner during the SDK's revision probe. */
  onRefused?(error: Error): void;
  /** Each stdout line that is not a JSON-RPC message: what a server that prints its error there said. */
  onStrayLine?(line: string): void;
  /**
   * Gives the command line to spawn instead of `command`/`args`/`env` (a sandbox wraps them), once, before the
   * spawn; a rejection fails the start. `release` is called once the process has ended.
   */
  prepare?(): Promise<PreparedSpawn>;
}

export type Launch = Pick<ProcessGroupStdioOptions, "command" | "args" | "env">;
/** A command line to spawn in place of the configured one, and what to let go of once its process has ended. */
export type PreparedSpawn = Launch & { release(): void };
