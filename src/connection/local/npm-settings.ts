/**
 * npm's own settings for a server that runs through npx, read as npm reads them: from the server's `env` (of pi's own
 * environment, a server gets only the safe few such as HOME, so an `npm_config_*` counts only when configured there),
 * then from the project's `.npmrc` (in the folder the server starts in, or the nearest above it with a `package.json`
 * or `node_modules`, as npm finds its project), the user's npmrc (`npm config set …` writes there) and npm's global one
 * (beside the Node that runs pi: the npx on PATH may belong to another, whose own global file is not read).
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { getDefaultEnvironment } from "@modelcontextprotocol/client/stdio";
import { npmFlag } from "./npm-flags.ts";

export type NpmEnv = Readonly<Record<string, string>>;

/** The value of one of npm's settings by name (`cache`, `logs-dir`, `registry`), undefined if unset. */
export type NpmSetting = (name: string) => string | undefined;

/** The home directory npm of a server with `env` uses. */
export function npmHome(env: NpmEnv): string {
  return env.HOME ?? process.env.HOME ?? homedir();
}

/** A run of npm: the environment it gets, and the folder it starts in. */
export interface NpmRun {
  env: NpmEnv;
  cwd?: string;
  /** npx's arguments: npm's flags before the package win over the rest (`--registry <url>`). */
  args?: readonly string[];
}

/**
 * npm's settings for a run (see {@link NpmSetting}). The npmrc files are read once, when this is called; as in npm, a
 * key written twice has its last value, a file nearer the run wins over a farther one, and `${NAME}` is expanded.
 */
export function npmSettings({ env, cwd, args = [] }: NpmRun): NpmSetting {
  const home = npmHome(env);
  const rc = new Map<string, string>();
  // npm expands from its own environment: pi's few safe variables and the server's `env`, not the rest of pi's. One
  // unset is kept as written (a folder named `${XDG_CACHE_HOME}`), or dropped where written `${NAME?}`.
  const own: NpmEnv = { ...getDefaultEnvironment(), ...env };
  const expand = (written: string, name: string, optional?: string) =>
    (Object.hasOwn(own, name) ? own[name] : undefined) ?? (optional ? "" : written);
  // npm's prefix holds node itself on Windows, and `bin/node` elsewhere.
  const node = path.dirname(process.execPath);
  const prefix = fromEnv(env, "prefix") ?? (process.platform === "win32" ? node : path.dirname(node));
  const files = [
    fromEnv(env, "globalconfig") ?? path.join(prefix, "etc", "npmrc"),
    fromEnv(env, "userconfig") ?? path.join(home, ".npmrc"),
    ...(cwd ? [path.join(projectOf(cwd), ".npmrc")] : []),
  ];
  for (const file of files) {
    try {
      const text = readFileSync(file, "utf8");
      for (const [, key = "", written = ""] of text.matchAll(/^[ \t]*([\w-]+)[ \t]*=[ \t]*(.*?)[ \t]*$/gm)) {
        // As npm's ini reads a value: a quoted one whole, another up to a comment (`;` or `#`).
        const value = /^(["'])(.*)\1$/.exec(written)?.[2] ?? written.replace(/[;#].*/, "").trim();
        if (value) rc.set(key, value.replace(/^~(?=$|[\\/])/, home).replace(/\$\{([^${}?]+)(\?)?\}/g, expand));
      }
    } catch {
      // No such npmrc: the others, or npm's defaults.
    }
  }
  // No shell expands a `~` in `args`: npm does, for a path.
  return (name) => npmFlag(args, name)?.replace(/^~(?=$|[\\/])/, home) ?? fromEnv(env, name) ?? rc.get(name);
}

/** The project npm finds for a run in `cwd`: the nearest folder up with a `package.json` or `node_modules`, else `cwd`. */
function projectOf(cwd: string): string {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json")) || existsSync(path.join(dir, "node_modules"))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(cwd);
  }
}

/** npm takes `npm_config_logs_dir` and `NPM_CONFIG_LOGS-DIR` alike. */
function fromEnv(env: NpmEnv, name: string): string | undefined {
  const wanted = `npm_config_${name}`.replace(/-/g, "_");
  return Object.entries(env).find(([key, value]) => key.toLowerCase().replace(/-/g, "_") === wanted && value)?.[1];
}
