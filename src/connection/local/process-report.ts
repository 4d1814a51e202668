/**
 * What a local server's process has told its session: the last lines it wrote to stderr, and how and when it ended.
 * Error messages quote it, and whether a failed start is worth retrying is judged from it.
 */
import { plural } from "../../common/text.ts";
import type { StdioHooks } from "../transports.ts";
import type { NpmRun } from "./npm-settings.ts";
import {
  type NpxFailure,
  npxInstalledAt,
  type NpxLaunch,
  npxModuleMissing,
  npxOptionalMissing,
  npxScriptFailure,
} from "./npx-failure.ts";

const STDERR_TAIL_LINES = 40;
/** A program that stops for want of a key often says so first and then prints its usage, longer than the tail. */
const STDERR_HEAD_LINES = 10;
const STRAY_LINES = 5;
/** A stray line may be a whole message's worth of bytes; a few lines of it say what it is. */
const STRAY_LINE_CHARS = 4096;

export class ProcessReport {
  /** How the process ended, once it has: `exited with code 1`. */
  exitDescription?: string;
  /** Its exit code, if it exited (rather than being killed by a signal). */
  exitCode?: number | null;
  /** How long after its start it ended, in ms. */
  exitedAfterMs?: number;
  private readonly stderr: string[] = [];
  /** The first lines of this start's stderr, and how many it wrote in all. */
  private stderrHead: string[] = [];
  private stderrCount = 0;
  private npx?: NpxLaunch & NpmRun & { since: number };
  /** What npm's files and the copy of its package say about this start's failure, once read (after its end). */
  private npxRead?: { failure?: NpxFailure };
  /** When npx finished installing the package in this start (epoch ms), once read after its end. */
  private installed?: { at?: number };

  /** The last `n` lines it wrote to stderr (not redacted). */
  stderrTail(n = STDERR_TAIL_LINES): string[] {
    return this.stderr.slice(-n);
  }

  /** Its first and last lines of stderr, each once (not redacted): what to read for why it stopped. */
  stderrKept(): string[] {
    const unseen = Math.max(0, this.stderrCount - this.stderr.length);
    return [...this.stderrHead.slice(0, unseen), ...this.stderr];
  }

  /**
   * The last `n` lines of stderr to show someone, its JavaScript stacks shortened (see {@link foldStackFrames}), without
   * npm's notice that a newer npm is out: said after a failed `npx` install, it would push out the lines that say why.
   */
  shownStderr(n: number): string[] {
    return foldStackFrames(this.stderr.filter((line) => !NPM_NOTICE.test(line))).slice(-n);
  }

  /** The last few lines it wrote to stdout that are not JSON-RPC (not redacted): a server may print its error there. */
  readonly strayLines: string[] = [];

  /**
   * Why a start that exited with an error failed, from what npm left behind: its copy of a package that stderr says is
   * missing a module, or (for an `npx` start) its log. Asked once the process has ended and its stderr has arrived.
   */
  get npxFailure(): NpxFailure | undefined {
    if (!this.exitCode) return undefined;
    return (this.npxRead ??= { failure: this.readNpxFailure() }).failure;
  }

  private readNpxFailure(): NpxFailure | undefined {
    const missing = npxModuleMissing(this.stderr.join("\n"));
    if (missing?.kind === "incomplete") return missing;
    const script = this.npx && npxScriptFailure(this.npx, this.npx.since);
    if (script && !script.optional) return script;
    // The line that names it may come first, above a long tail (`Skipping SQLite connector: driver package …`).
    return npxOptionalMissing(this.stderrKept().join("\n"), this.npx, script) ?? missing;
  }

  /** How long of this start npx spent installing its package, if it installed it (read once the process ended). */
  get npxInstallMs(): number | undefined {
    if (this.exitDescription === undefined || !this.npx) return undefined;
    const { at } = (this.installed ??= { at: npxInstalledAt(this.npx, this.npx.since) });
    return at === undefined ? undefined : at - this.npx.since;
  }

  /**
   * The hooks of one start (what the previous start's exit said is forgotten); each stderr line also goes to `line`.
   * `npx` is what an npx start runs, with its configured environment, to read npm's log if the start fails.
   */
  started(line: (text: string) => void, refused: (error: Error) => void, npx?: NpxLaunch & NpmRun): StdioHooks {
    this.exitDescription = this.exitCode = this.exitedAfterMs = this.npxRead = this.installed = undefined;
    this.strayLines.length = this.stderrHead.length = this.stderrCount = 0;
    const startedAt = Date.now();
    this.npx = npx && { ...npx, since: startedAt };
    return {
      onStderrLine: (text) => {
        if (this.stderrCount++ < STDERR_HEAD_LINES) this.stderrHead.push(text);
        this.stderr.push(text);
        if (this.stderr.length > STDERR_TAIL_LINES) this.stderr.shift();
        line(text);
      },
      onExit: (description, code) => {
        this.exitDescription = description;
        this.exitCode = code;
        this.exitedAfterMs = Date.now() - startedAt;
      },
      onRefused: refused,
      onStrayLine: (text) => this.stray(text),
      onForeignMessage: (method, params) => this.stray(`${method}: ${foreignText(params)}`),
    };
  }

  private stray(text: string): void {
    this.strayLines.push(text.slice(0, STRAY_LINE_CHARS));
    if (this.strayLines.length > STRAY_LINES) this.strayLines.shift();
  }
}

/** What a message of a method MCP does not have says: its `message` (or `msg`, `text`), else its params as JSON. */
function foreignText(params: unknown): string {
  const fields = typeof params === "object" && params !== null ? (params as Record<string, unknown>) : {};
  const text = [fields.message, fields.msg, fields.text].find((value) => typeof value === "string");
  try {
    return (text as string | undefined) ?? JSON.stringify(params ?? null).slice(0, STRAY_LINE_CHARS);
  } catch {
    return "(params that cannot be shown)";
  }
}

/** npm's word that a newer npm is out (not its other notices: an expired token may say why an install failed). */
const NPM_NOTICE =
  /^npm notice(?:\s*$| New \w+ version of npm available| Changelog: | To update run: | Run `?npm install -g npm)/;

/** A JavaScript stack frame as Node prints it: `    at main (file:///…/index.js:18:41)`. */
const STACK_FRAME = /^\s+at\s/;

/**
 * `lines` with each run of stack frames cut to its first: Node prints an error's message above its stack, so the last
 * lines of a crash are frames, and the message would be left out of a short tail.
 */
function foldStackFrames(lines: readonly string[]): string[] {
  const out: string[] = [];
  let run = 0;
  const flush = () => {
    if (run > 1) out.push(`    … ${plural(run - 1, "more stack frame", "more stack frames")}`);
    run = 0;
  };
  for (const line of lines) {
    if (!STACK_FRAME.test(line)) flush();
    else if (run++ > 0) continue;
    out.push(line);
  }
  flush();
  return out;
}
