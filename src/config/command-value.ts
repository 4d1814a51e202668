/**
 * `!command` values, as pi 1.x writes them in `env`, `headers` and an OAuth client secret: a value that starts with `!` is a command, and what
 * it prints (trimmed) is the value — `"Authorization": "!echo Bearer $(gh auth token)"`. This file says which values
 * are commands and how one is run; ./command-runner.ts runs them. A command without shell syntax runs as it is
 * (split into words, no shell); one with any (`$`, quotes, pipes, `&&`, redirections, globs, `~` …) runs under
 * `/bin/sh -c`, as pi 1.x runs every one. Pure.
 */
import type { ServerConfig } from "./types.ts";

const COMMAND_MARK = "!";

/** Characters a command may hold and still run without a shell: words of these, separated by spaces or tabs. */
const PLAIN_COMMAND = /^[A-Za-z0-9_@%+=:,./-]+(?:[ \t]+[A-Za-z0-9_@%+=:,./-]+)*$/;

/** True for a value that is a command. */
export function isCommandValue(value: string): boolean {
  return value.startsWith(COMMAND_MARK);
}

/** A value's command, `!` taken off and trimmed. */
export function commandText(value: string): string {
  return value.slice(COMMAND_MARK.length).trim();
}

/** One `!command` value of a server: where it is (`env.TOKEN`, `headers.Authorization`) and what it runs. */
export interface CommandValue {
  field: string;
  command: string;
}

/** Where a remote server's OAuth client secret is written: `oauth.clientSecret` (pi 1.x) or `auth.clientSecret`. */
export function clientSecretField(config: ServerConfig): string {
  return `${config.raw.oauth !== undefined ? "oauth" : "auth"}.clientSecret`;
}

/**
 * The command values a server's connection needs: a local server's `env`; a remote server's `headers` and OAuth
 * client secret (each server reads only its own kind, as ./substitute.ts does).
 */
export function commandValues(config: ServerConfig): CommandValue[] {
  const [group, values] = config.transport === "stdio" ? ["env", config.env] : ["headers", config.headers];
  const found = Object.entries(values)
    .filter(([, value]) => isCommandValue(value))
    .map(([key, value]) => ({ field: `${group}.${key}`, command: commandText(value) }));
  const secret = config.transport === "stdio" ? undefined : config.oauth?.clientSecret;
  if (secret !== undefined && isCommandValue(secret))
    found.push({ field: clientSecretField(config), command: commandText(secret) });
  return found;
}

/** How a command is started: its program and arguments, or a command line for the shell. */
export type Invocation = { shell: false; file: string; args: string[] } | { shell: true; line: string };

/**
 * Without a shell when the command has no shell syntax; under the shell otherwise, and always on Windows, where a
 * program may be a `.cmd` shim (`az`, `gcloud`, npm's) that Node starts only through a shell.
 */
export function invocationOf(command: string, platform: NodeJS.Platform = process.platform): Invocation {
  const line = command.trim();
  const words = line.split(/[ \t]+/);
  // `NAME=value command` sets a variable in a shell; run as a program it would look for a file named `NAME=value`.
  if (platform !== "win32" && PLAIN_COMMAND.test(line) && !words[0]!.includes("="))
    return { shell: false, file: words[0]!, args: words.slice(1) };
  return { shell: true, line };
}

/**
 * The secrets in a header value (or a command's output): the whole of it, and without its scheme (`Bearer …`, `ApiKey …`,
 * `SSWS …`: one word before the one token).
 */
export function outputSecrets(output: string): string[] {
  const bare = output.replace(/^[A-Za-z][\w-]*\s+(?=\S+$)/, "");
  return bare === output ? [output] : [output, bare];
}
