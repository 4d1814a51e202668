/**
 * A local server whose entry names a script that is not there: `"args": ["build/index.js"]`, taken from the project
 * root where the server starts, or a server from source not built yet. Node or Python says so and exits, and every
 * restart would too. This finds that path in what it printed, where it is one of the entry's arguments (not a module
 * the script itself imports). Pure.
 */
import path from "node:path";
import { shellVariables } from "../../config/substitute.ts";

/** Node's `Error: Cannot find module '/p/build/index.js'`, Python's `can't open file '/p/server.py': [Errno 2] …`. */
const NOT_FOUND = /Cannot find module '([^']+)'|can't open file '([^']+)': \[Errno 2\]/;

/** The script, as the process looked for it, and the argument that named it. */
export interface MissingScript {
  file: string;
  arg: string;
  cwd: string;
  /** The server runs in a sandbox, which hides what its rules deny (a denied directory looks empty). */
  sandboxed?: boolean;
}

/** The script an argument names that the output says is not there, if it says so. */
export function missingScript(
  lines: readonly string[],
  args: readonly string[],
  cwd: string,
): MissingScript | undefined {
  for (const line of lines) {
    const found = NOT_FOUND.exec(line);
    const file = found?.[1] ?? found?.[2];
    const arg = file && args.find((a) => path.resolve(cwd, a) === file);
    if (file && arg) return { file, arg, cwd };
  }
  return undefined;
}

/** Why the start failed, and the change to the server's entry. */
export function missingScriptAdvice(
  missing: MissingScript,
  server: { name: string; source: { path: string } },
): { reason: string; fix: string } {
  const { file, arg, cwd } = missing;
  const entry = `'${server.name}' in ${server.source.path}`;
  if (missing.sandboxed)
    return {
      reason: `the script it runs, ${file}, cannot be found inside its sandbox`,
      fix: `if it is there, it is under a path the sandbox denies (a denied directory looks empty inside; /mcp lists the server's refusals): move it out of that path, or set "sandbox": false for ${entry}`,
    };
  const reason = `the script it runs, ${file}, does not exist`;
  const shellWords = shellVariables(arg);
  if (shellWords.length) {
    const meant = shellWords.reduce((text, v) => text.replace(v.written, `\${${v.name}}`), arg);
    const written = shellWords.map((v) => v.written).join(", ");
    return {
      reason,
      fix: `${written} reached it as written (no shell reads the entry): write ${JSON.stringify(meant)} in \`args\` of ${entry}`,
    };
  }
  if (path.isAbsolute(arg))
    return {
      reason,
      fix: `check \`args\` of ${entry} (a server run from its source is built first, as its README says)`,
    };
  return {
    reason,
    fix: `${JSON.stringify(arg)} is taken from ${cwd}, where the server starts (the project root, or its \`cwd\`): write the script's absolute path in \`args\` of ${entry}`,
  };
}
