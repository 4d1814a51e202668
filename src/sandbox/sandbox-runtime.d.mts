/** The types of ./sandbox-runtime.mjs (plain JavaScript, so that the shared-server hub runs the same code). */
import type { SandboxManager } from "@anthropic-ai/sandbox-runtime";
import type { SandboxPolicy } from "./sandbox-policy.ts";

export interface SpawnSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

/** A server's start inside its sandbox: what to spawn, and what to let go of when its process has ended. */
export interface SandboxedStart extends SpawnSpec {
  /** The id the library files this server's refusals under. */
  commandId: string;
  /** The empty files and directories made on the host for this start (by this module, bubblewrap or the library). */
  mountPoints: string[];
  /** The server's own temp directory (its `TMPDIR`), removed with what it holds by `release`. */
  tempDir: string;
  release(keepTempDir?: boolean): void;
}

/** Throws (naming what to install) for what the sandbox lacks here, if anything. */
export function unavailable(problems: readonly string[]): void;
/** What to install, in the words of the user's platform; empty where no tool is missing. */
export function installHint(problems: readonly string[], platform?: NodeJS.Platform): string;
/** What the sandbox lacks on this machine (nothing: it can run), and what the library warns of. Starts nothing. */
export function sandboxProblems(): Promise<string[] & { warnings?: string[] }>;
/** The library, set up (its proxies listening); rejects where it cannot run. */
export function sandboxManager(): Promise<typeof SandboxManager>;
/** A private temp dir for one server start (removed by `release`). */
export function privateTempDir(server: string): string;
/** The command line that runs `spec` inside `policy`. */
export function sandboxedStart(
  spec: SpawnSpec,
  policy: SandboxPolicy,
  onViolation?: (line: string) => void,
): Promise<SandboxedStart>;
/** Stops the library's proxies once no sandboxed server runs; true when it did. */
export function sandboxIdle(): Promise<boolean>;
