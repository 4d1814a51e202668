/**
 * What a local server's process has told its session: the last lines it wrote to stderr, and how and when it ended.
 * Error messages quote it, and whether a failed start is worth retrying is judged from it.
 */
import type { StdioHooks } from "../transports.ts";
import { type NpmScriptFailure, type NpxLaunch, npxScriptFailure } from "./npm-log.ts";

const STDERR_TAIL_LINES = 40;

export class ProcessReport {
  /** How the process ended, once it has: `exited with code 1`. */
  exitDescription?: string;
  /** Its exit code, if it exited (rather than being killed by a signal). */
  exitCode?: number | null;
  /** How long after its start it ended, in ms. */
  exitedAfterMs?: number;
  /** The install script whose failure ended an `npx` start, from npm's log (npm itself printed nothing). */
  installFailure?: NpmScriptFailure;
  private readonly stderr: string[] = [];

  /** The last `n` lines it wrote to stderr (not redacted). */
  stderrTail(n = STDERR_TAIL_LINES): string[] {
    return this.stderr.slice(-n);
  }

  /**
   * The hooks of one start (what the previous start's exit said is forgotten); each stderr line also goes to `line`.
   * `npx` is what an npx start runs, with its configured environment, to read npm's log if the start fails.
   */
  started(
    line: (text: string) => void,
    refused: (error: Error) => void,
    npx?: NpxLaunch & { env: Readonly<Record<string, string>> },
  ): StdioHooks {
    this.exitDescription = this.exitCode = this.exitedAfterMs = this.installFailure = undefined;
    const startedAt = Date.now();
    return {
      onStderrLine: (text) => {
        this.stderr.push(text);
        if (this.stderr.length > STDERR_TAIL_LINES) this.stderr.shift();
        line(text);
      },
      onExit: (description, code) => {
        this.exitDescription = description;
        this.exitCode = code;
        this.exitedAfterMs = Date.now() - startedAt;
        if (npx && code !== 0 && code !== null) this.installFailure = npxScriptFailure(npx, npx.env, startedAt);
      },
      onRefused: refused,
    };
  }
}
