/**
 * A local server whose entry names a script that is not there: `"args": ["build/index.js"]`, taken from the project
 * root where the server starts, or a server from source not built yet. Node or Python says so and exits, and every
 * restart would too. This finds that path in what it printed, where it is one of the entry's arguments; or a package
 * the script imports that is not installed for it (a server cloned without `npm install`, a Python server started
 * with a Python that lacks its packages).
 */
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { shellVariables } from "../../config/substitute.ts";

/** Node's `Error: Cannot find module '/p/build/index.js'`, Python's `can't open file '/p/server.py': [Errno 2] …`. */
const NOT_FOUND = /Cannot find module '([^']+)'|can't open file '([^']+)': \[Errno 2\]/;

/** Node's `Cannot find package 'x' imported from /p/server.mjs` (or a bare `Cannot find module 'x'`), Python's. */
const NO_PACKAGE =
  /Cannot find (?:package|module) '([^'./][^']*)'(?: imported from (\S+))?|No module named '?([^'\s]+)/;

/** The script, as the process looked for it, and the argument that named it; or the package it lacks. */
export type MissingScript = (
  { file: string; arg: string; cwd: string; package?: undefined } | { package: string; python: boolean; from?: string }
) & {
  /** The server runs in a sandbox, which hides what its rules deny (a denied directory looks empty). */
  sandboxed?: boolean;
};

/** The script an argument names, or a package it imports, that the output says is not there, if it says so. */
export function missingScript(
  lines: readonly string[],
  args: readonly string[],
  cwd: string,
): MissingScript | undefined {
  let lacks: MissingScript | undefined;
  // The process knows its folder by its real path (a project under macOS's /tmp is in /private/tmp).
  const real = existsSync(cwd) ? realpathSync(cwd) : cwd;
  for (const line of lines) {
    const found = NOT_FOUND.exec(line);
    const file = found?.[1] ?? found?.[2];
    const arg = file && args.find((a) => path.resolve(cwd, a) === file || path.resolve(real, a) === file);
    if (file && arg) return { file, arg, cwd };
    const none = NO_PACKAGE.exec(line);
    // npx's own copy of a package lacking a module is npm's matter (./npx-failure.ts).
    if (none && !none[2]?.includes("/_npx/"))
      lacks ??= { package: (none[1] ?? none[3])!, python: !!none[3], from: none[2] };
  }
  return lacks;
}

/**
 * What is wrong with a command written as a path, where its start failed: a folder, or a text file without a `#!` line
 * (the system hands such a file to sh, execvp's fallback, rather than to its runtime).
 */
export function commandFault(command: string, cwd: string): "folder" | "shebangless" | undefined {
  if (!/[\\/]/.test(command) || process.platform === "win32") return undefined;
  try {
    const file = path.resolve(cwd, command);
    const stat = statSync(file);
    if (stat.isDirectory()) return "folder";
    const head = stat.size < 1 << 20 ? readFileSync(file).subarray(0, 512) : Buffer.from("#!");
    return head.includes(0) || head.toString("latin1").startsWith("#!") ? undefined : "shebangless";
  } catch {
    return undefined;
  }
}

/** Why the start failed, and the change to the server's entry. */
export function missingScriptAdvice(
  missing: MissingScript,
  server: { name: string; source: { path: string } },
): { reason: string; fix: string } {
  const entry = `'${server.name}' in ${server.source.path}`;
  if (missing.package !== undefined) return packageAdvice(missing, entry);
  const { file, arg, cwd } = missing;
  if (missing.sandboxed)
    return {
      reason: `the script it runs, ${file}, cannot be found inside its sandbox`,
      fix: `if it is there, it is under a path the sandbox denies (a denied directory looks empty inside; /mcp lists the server's refusals): move it out of that path, or set "sandbox": false for ${entry}`,
    };
  const shell = shellVariables(arg);
  const fix = shell
    ? `${shell.written.join(", ")} reached it as written (no shell reads the entry): write ${JSON.stringify(shell.meant)} in \`args\` of ${entry}`
    : path.isAbsolute(arg)
      ? `check \`args\` of ${entry} (a server run from its source is built first, as its README says)`
      : `${JSON.stringify(arg)} is taken from ${cwd}, where the server starts (the project root, or its \`cwd\`): write the script's absolute path in \`args\` of ${entry}`;
  return { reason: `the script it runs, ${file}, does not exist`, fix };
}

/** A package the server's code imports that is not installed where it runs. */
function packageAdvice(missing: MissingScript & { package: string }, entry: string): { reason: string; fix: string } {
  const { package: name, python, from } = missing;
  if (python)
    return {
      reason: `the Python it runs lacks the module '${name}' the server imports`,
      fix: `start it with the Python of the environment its packages are installed in (its virtualenv's python, or \`uv run\` as its README says): \`command\` and \`args\` of ${entry}`,
    };
  const script = from ? `${from.replace(/^file:\/\//, "")} imports` : "its code imports";
  return {
    reason: `${script} the package '${name}', which is not installed for it`,
    fix: `run \`npm install\` in the server's folder (where its package.json is), and build it if its README says so; or check \`args\` of ${entry}`,
  };
}
