/**
 * Runs the `!command` values of a server's config (./command-value.ts) when it connects: each bounded in time and in
 * how much it may print, its stdin closed and its stderr dropped. A command that fails, hangs or prints nothing is a
 * problem naming the field, never what it printed (that may be half a secret). Commands from a project's config run
 * only once the user trusts its servers. What they print is a secret: the caller adds it to the server's redaction.
 */
import {
  type ChildProcessByStdio,
  spawn,
  type SpawnOptionsWithStdioTuple,
  type StdioNull,
  type StdioPipe,
} from "node:child_process";
import type { Readable } from "node:stream";
import { plural, seconds } from "../common/text.ts";
import { type CommandValue, commandValues, invocationOf, outputSecrets } from "./command-value.ts";
import type { Environment } from "./substitute.ts";
import { describeSource, type ServerConfig } from "./types.ts";
import { commandArgument } from "./validate/name.ts";

/** How long one command may run. */
const COMMAND_TIMEOUT_MS = 10_000;
/** How much one command may print: a token or a header value, not a file. */
const COMMAND_MAX_OUTPUT_BYTES = 64 * 1024;

export interface CommandRunOptions {
  env: Environment;
  cwd: string;
  timeoutMs?: number;
  maxBytes?: number;
}

export type CommandOutcome = { value: string } | { problem: string };

/** Runs one command; its trimmed output, or what went wrong (never the output). Never throws. */
export function runCommand(command: string, options: CommandRunOptions): Promise<CommandOutcome> {
  const timeoutMs = options.timeoutMs ?? COMMAND_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? COMMAND_MAX_OUTPUT_BYTES;
  const invocation = invocationOf(command);
  const env = Object.fromEntries(
    Object.entries(options.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const posix = process.platform !== "win32";
  return new Promise((resolve) => {
    // A process group of its own, so that a shell's children end with it when the command is stopped.
    const spawnOptions: SpawnOptionsWithStdioTuple<StdioNull, StdioPipe, StdioNull> = {
      cwd: options.cwd,
      env,
      stdio: ["ignore", "pipe", "ignore"],
      detached: posix,
      windowsHide: true,
    };
    const child: ChildProcessByStdio<null, Readable, null> = invocation.shell
      ? posix
        ? spawn("/bin/sh", ["-c", invocation.line], spawnOptions)
        : spawn(invocation.line, [], { ...spawnOptions, shell: true })
      : spawn(invocation.file, invocation.args, spawnOptions);
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (outcome: CommandOutcome, stop = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (stop) stopGroup(child.pid, posix, () => child.kill("SIGKILL"));
      resolve(outcome);
    };
    const timer = setTimeout(
      () => finish({ problem: `its command did not finish within ${seconds(timeoutMs)}` }, true),
      timeoutMs,
    );
    child.stdout.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) finish({ problem: `its command printed more than ${plural(maxBytes, "byte")}` }, true);
      else chunks.push(chunk);
    });
    child.on("error", (error: NodeJS.ErrnoException) => {
      const program = invocation.shell ? "/bin/sh" : invocation.file;
      finish({
        problem:
          error.code === "ENOENT"
            ? `its command's program '${program}' was not found`
            : `its command could not be started (${error.code ?? "error"})`,
      });
    });
    // A background child the command left may hold its stdout open for long after the command exited: what was
    // printed by then is its output (waiting for the pipe's end would report a timeout).
    child.on("exit", (code) => code === 0 && setTimeout(() => child.stdout.destroy(), 100));
    child.on("close", (code, signal) => {
      if (code !== 0) {
        finish({ problem: signal ? `its command was ended by ${signal}` : `its command exited with code ${code}` });
        return;
      }
      const value = Buffer.concat(chunks).toString("utf8").trim();
      finish(value === "" ? { problem: "its command printed nothing" } : { value });
    });
  });
}

/** Ends the command's whole process group (where there is one), or the command alone. */
function stopGroup(pid: number | undefined, posix: boolean, fallback: () => void): void {
  try {
    if (posix && pid !== undefined) process.kill(-pid, "SIGKILL");
    else fallback();
  } catch {
    // Already gone.
  }
}

export interface CommandValuesRun {
  /** Each field's value (`env.TOKEN` → what its command printed). */
  outputs: Map<string, string>;
  /** What went wrong, a sentence per field: the server should not connect. */
  errors: string[];
  /** The outputs, to redact wherever the server's text goes. */
  secrets: string[];
}

export interface CommandValuesOptions extends CommandRunOptions {
  /** False for a server from a project's config the user has not trusted: nothing of it runs. */
  allowed: boolean;
}

/** Runs every `!command` value of `config` (all at once), when it may run any. */
export async function runCommandValues(config: ServerConfig, options: CommandValuesOptions): Promise<CommandValuesRun> {
  const values = commandValues(config);
  const run: CommandValuesRun = { outputs: new Map(), errors: [], secrets: [] };
  if (values.length === 0) return run;
  if (!options.allowed) {
    run.errors.push(notAllowed(config, values));
    return run;
  }
  const outcomes = await Promise.all(values.map((value) => runCommand(value.command, options)));
  outcomes.forEach((outcome, i) => {
    const { field } = values[i]!;
    if ("value" in outcome) {
      run.outputs.set(field, outcome.value);
      run.secrets.push(...outputSecrets(outcome.value));
    } else {
      run.errors.push(
        `\`${field}\` is a \`!command\` value, and ${outcome.problem} (what it printed is not shown); fix the command in ${describeSource(config.source)}`,
      );
    }
  });
  return run;
}

function notAllowed(config: ServerConfig, values: readonly CommandValue[]): string {
  const fields = values.map((v) => `\`${v.field}\``).join(", ");
  return (
    `${fields} ${values.length === 1 ? "is a `!command` value" : "are `!command` values"} from ${describeSource(config.source)}, and commands in a ` +
    `project's config run only once you trust its servers, so ${values.length === 1 ? "it was" : "they were"} not run; ` +
    `run /mcp trust ${commandArgument(config.name)} to trust it`
  );
}
