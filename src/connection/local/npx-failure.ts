/**
 * Why an `npx` start failed, from what npm left behind. When an install script of the package (or of one of its
 * dependencies) fails under npx, npm 11 prints nothing: the process exits with code 1 and an empty stderr after a minute
 * of downloading; its debug log (`<cache>/_logs/<time>-debug-0.log`) still names the script. And a module missing from
 * npx's copy of a package (`…/_npx/<hash>/node_modules`) means one of two things: an install stopped partway (the copy
 * is incomplete, npx never repairs it, and deleting the folder fixes it), or a package whose code imports what it does
 * not ship (deleting the folder would only install the same fault again). npm writes the copy's lockfiles when an
 * install completes, which tells the two apart.
 */
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync } from "node:fs";
import path from "node:path";
import { programName, shellWord } from "../../common/text.ts";
import { NPM_VALUE_FLAG } from "./npm-flags.ts";
import { npmHome, type NpmRun, type NpmSetting, npmSettings } from "./npm-settings.ts";

/** An `npx …` (or `npm exec …`) start: the package it runs, and the same command showing install scripts' output. */
export interface NpxLaunch {
  spec: string;
  rerun: string;
}

/** An install script that failed: `puppeteer@24.43.1`'s `postinstall` (`node install.mjs`) exited with code 1. */
export interface NpmScriptFailure extends NpxLaunch {
  kind: "script";
  /** The package whose script failed, with its version. */
  pkg: string;
  /** Which script: `install`, `postinstall`, … */
  event: string;
  /** The script's command line, as npm logged it. */
  command: string;
  /** How it ended: `exited with code 1`, `was killed by SIGKILL`. */
  ending: string;
  /** The log it was read from. */
  log: string;
  /** Whether npm left the package out as an optional dependency and went on installing. */
  optional: boolean;
}

/** What an `npx …` or `npm exec …` command line runs, if it is one. */
export function npxLaunch(command: string, args: readonly string[]): NpxLaunch | undefined {
  const base = programName(command);
  const exec = base === "npm" && (args[0] === "exec" || args[0] === "x");
  if (base !== "npx" && !exec) return undefined;
  const rest = exec ? args.slice(1) : args;
  // `--package=<package>` names the package; the program after it is not one.
  const spec = rest
    .map((arg) => arg.replace(/^--package=/, ""))
    .find((arg, i) => arg !== "--" && !arg.startsWith("-") && !NPM_VALUE_FLAG.test(rest[i - 1] ?? ""));
  if (!spec) return undefined;
  // npm's own flags go before the package.
  const words = [base, ...(exec ? [args[0]!] : []), "--foreground-scripts", ...rest];
  return { spec, rerun: words.map(shellWord).join(" ") };
}

const ARGV = /^\d+ verbose argv (.*)$/m;
const EXIT = /^\d+ verbose exit (\d+)$/m;
const RUN_END = /^\d+ info run (\S+) (\S+) \{ code: (-?\d+|null), signal: (\S+) \}$/gm;

/**
 * The first failed install script in the text of an npm debug log of a failed run of `launch`; else undefined. A
 * script of an optional dependency fails the install only when nothing else did: npm leaves that package out and goes
 * on, so the run failed for another reason (an `optional` result is said only when it is the one failure).
 */
export function failedScriptIn(text: string, launch: NpxLaunch, log: string): NpmScriptFailure | undefined {
  const argv = ARGV.exec(text)?.[1] ?? "";
  if (!argv.split(" ").includes(JSON.stringify(launch.spec)) || Number(EXIT.exec(text)?.[1] ?? 0) === 0)
    return undefined;
  const leftOut = new Set([...text.matchAll(OPTIONAL_LEFT_OUT)].map(([, folder]) => packageIn(folder!)));
  let optional: NpmScriptFailure | undefined;
  for (const [, pkg, event, code, signal] of text.matchAll(RUN_END)) {
    if (code === "0" && signal === "null") continue;
    const start = text.split("\n").find((line) => line.includes(` info run ${pkg} ${event} `) && !line.includes(" { "));
    const command = start?.replace(/^\d+ info run \S+ \S+ \S+ /, "") ?? "";
    const ending = signal !== "null" ? `was killed by ${signal}` : `exited with code ${code}`;
    // The launch's words only: what is passed in may be the whole start, its `env` (secrets) included.
    const { spec, rerun } = launch;
    const failure = { kind: "script" as const, spec, rerun, pkg: pkg!, event: event!, command, ending, log };
    if (!leftOut.has(specName(pkg!))) return { ...failure, optional: false };
    optional ??= { ...failure, optional: true };
  }
  return optional;
}

/** `verbose reify failed optional dependency /home/u/.npm/_npx/<hash>/node_modules/better-sqlite3`. */
const OPTIONAL_LEFT_OUT = /^\d+ verbose reify failed optional dependency (.+)$/gm;

/** The package a `node_modules` folder holds: `…/node_modules/@scope/name` → `@scope/name`. */
function packageIn(folder: string): string {
  return folder
    .split(/[\\/]node_modules[\\/]/)
    .at(-1)!
    .replaceAll("\\", "/");
}

/** A package's name without its version or range: `pkg@1.0.0` → `pkg`, `@scope/pkg@latest` → `@scope/pkg`. */
function specName(spec: string): string {
  return spec.replace(/(.)@[^/]*$/, "$1");
}

/** npm's cache for a run (npx's copies of packages are in its `_npx`). */
function cacheDir(run: NpmRun): string {
  const inherited = (name: string) => run.env[name] ?? process.env[name];
  const localAppData = process.platform === "win32" ? inherited("LOCALAPPDATA") : undefined;
  const fallback = localAppData ? path.join(localAppData, "npm-cache") : path.join(npmHome(run.env), ".npm");
  // npm takes a relative folder (a variable it kept unexpanded) from where it runs.
  return path.resolve(run.cwd ?? "", npmSettings(run)("cache") ?? fallback);
}

function logsDir(run: NpmRun): string {
  return path.resolve(run.cwd ?? "", npmSettings(run)("logs-dir") ?? path.join(cacheDir(run), "_logs"));
}

/**
 * npx's copies of the package of `launch` in the cache of its run whose install completed at `since` (epoch ms) or
 * later, each with when. npm writes a copy's hidden lockfile last, in a folder whose `package.json` names the
 * package; only the manifests of copies recent enough are read (a cache may hold hundreds).
 */
function npxCopies(launch: NpxLaunch & NpmRun, since = 0): { folder: string; installedAt: number }[] {
  const name = specName(launch.spec);
  const dir = path.join(cacheDir(launch), "_npx");
  // No npx folder there (another cache, set in a file), or a copy being written: nothing to say of it.
  let hashes: string[] = [];
  try {
    hashes = readdirSync(dir);
  } catch {}
  const copies: { folder: string; installedAt: number }[] = [];
  for (const hash of hashes) {
    const folder = path.join(dir, hash);
    try {
      const at = statSync(path.join(folder, "node_modules", ".package-lock.json"), { throwIfNoEntry: false });
      // By name, or by the spec npm keeps in `_npx.packages` (a tarball's path is no package name).
      const asked = () => (packagesIn(folder, "_npx") as { packages?: unknown[] }).packages?.includes(launch.spec);
      if (at && at.mtimeMs >= since && (Object.hasOwn(packagesIn(folder), name) || asked()))
        copies.push({ folder, installedAt: at.mtimeMs });
    } catch {}
  }
  return copies;
}

/**
 * A field of the `package.json` in `folder` that maps package names to versions (npx's copy names the packages it holds
 * in its `dependencies`); {} where there is none.
 */
function packagesIn(folder: string, field: "dependencies" | "optionalDependencies" | "_npx" = "dependencies"): object {
  const manifest = JSON.parse(readFileSync(path.join(folder, "package.json"), "utf8")) as Record<string, unknown>;
  const value = manifest[field];
  return typeof value === "object" && value !== null ? value : {};
}

/**
 * When npx finished installing the package of `launch` (epoch ms), if it did so after `since`: the start then spent
 * that long installing before the server ran.
 */
export function npxInstalledAt(launch: NpxLaunch & NpmRun, since: number): number | undefined {
  return npxCopies(launch, since)[0]?.installedAt;
}

/** `2026-12-04T11_21_57_561Z-debug-0.log` → its epoch ms. */
function logTime(name: string): number {
  const m = /^(\d{4}-\d\d-\d\dT\d\d)_(\d\d)_(\d\d)_(\d{3}Z)-debug-\d+\.log$/.exec(name);
  return m ? Date.parse(`${m[1]}:${m[2]}:${m[3]}.${m[4]}`) : NaN;
}

/** The failed script of the npx run of `launch` that began after `since` (epoch ms), if its log names one. */
export function npxScriptFailure(launch: NpxLaunch & NpmRun, since: number): NpmScriptFailure | undefined {
  const dir = logsDir(launch);
  try {
    // npm names a log for the moment it started, after the spawn. Servers starting together write many logs at once:
    // only those whose first lines name this package are read whole.
    const recent = readdirSync(dir)
      .map((name) => ({ file: path.join(dir, name), time: logTime(name) }))
      .filter(({ time }) => time >= since - 1000)
      .sort((a, b) => b.time - a.time)
      .slice(0, MAX_LOGS_READ);
    for (const { file } of recent) {
      if (!logHead(file).includes(JSON.stringify(launch.spec))) continue;
      // Read whole, within reason: a large server's install logs about half a megabyte.
      const failure = statSync(file).size < MAX_LOG_BYTES && failedScriptIn(readFileSync(file, "utf8"), launch, file);
      if (failure) return failure;
    }
  } catch {
    // No log where npm would write it (another cache, set in a file): nothing to add.
  }
  return undefined;
}

/** The first bytes of a log, where npm writes the command line it runs (`verbose argv`, line 8 or so). */
function logHead(file: string): string {
  const fd = openSync(file, "r");
  try {
    const head = Buffer.alloc(LOG_HEAD_BYTES);
    return head.toString("utf8", 0, readSync(fd, head, 0, head.length, 0));
  } finally {
    closeSync(fd);
  }
}

const LOG_HEAD_BYTES = 4096;
const MAX_LOGS_READ = 200;

/**
 * npm keeps its 10 newest logs by default, deleting older ones as each run starts: a dozen npx servers starting
 * together (and restarting) would delete the log of one whose install failed before its exit was looked into. An npx
 * server runs with more kept, unless the user chose how many (`logs-max`).
 */
export function keptNpmLogs(setting: NpmSetting): Record<string, string> {
  return setting("logs-max") === undefined ? { npm_config_logs_max: String(KEPT_LOGS) } : {};
}

const KEPT_LOGS = 100;

const MAX_LOG_BYTES = 8 * 1024 * 1024;

/** A module missing from npx's copy of a package: the copy in `folder` is `incomplete`, or complete without `module`. */
export interface NpxModuleMissing {
  kind: "incomplete" | "missingModule";
  folder: string;
  /** What could not be found, as Node named it (a package, or a file below the folder's `node_modules`), if it did. */
  module?: string;
}

/**
 * An optional dependency of the package that npx's copy of it in `folder` lacks and the server's output names
 * (`driver package "better-sqlite3" not installed`): npm leaves out an optional dependency whose install fails (or that
 * does not support the system) and npx never tries again, so every start of that copy fails the same way.
 */
export interface NpxOptionalMissing {
  kind: "optionalMissing";
  folder: string;
  module: string;
  /** The command that installs the package again showing install scripts' output, for an npx start. */
  rerun?: string;
  /** Its install script that failed, where this start's npm log says so. */
  script?: NpmScriptFailure;
}

export type NpxFailure = NpmScriptFailure | NpxModuleMissing | NpxOptionalMissing;

/** npx's copy of a package, as a path in a stack trace or an error names it: `/home/u/.npm/_npx/92668d6008b43da4`. */
const NPX_COPY = String.raw`((?:\/|[A-Za-z]:[\\/])[^\s'"]*?[\\/]_npx[\\/][0-9a-f]{8,})[\\/]`;
/** What comes before a path in a `file:` URL, which the path does not include: `file://`, `file:///` before `C:/`. */
const FILE_URL = String.raw`(?:file:\/\/(?:\/(?=[A-Za-z]:))?)?`;
/** Node's words for a module it could not find in npx's copy of a package, CommonJS (a require stack) or ESM (a URL). */
const NPX_MODULE_MISSING = new RegExp(
  String.raw`(?:MODULE_NOT_FOUND|Cannot find (?:module|package))\b[\s\S]*?${FILE_URL}${NPX_COPY}node_modules`,
);

/** The folder of npx's copy of a package that `text` names first, if it names one. */
export function npxCopyIn(text: string): string | undefined {
  return new RegExp(FILE_URL + NPX_COPY).exec(text)?.[1];
}

/**
 * Whether an install into an npx folder completed. npm writes the copy's hidden lockfile last; without one, or with
 * `node_modules` changed after it (an update of a `@latest` copy stopped partway), the copy is incomplete.
 */
function completeCopy(folder: string): boolean {
  const modules = path.join(folder, "node_modules");
  try {
    return statSync(modules).mtimeMs <= statSync(path.join(modules, ".package-lock.json")).mtimeMs + 2000;
  } catch {
    return false;
  }
}

/** The module a server's stderr says is missing from npx's copy of a package, and whether that copy is complete. */
export function npxModuleMissing(stderr: string): NpxModuleMissing | undefined {
  const folder = NPX_MODULE_MISSING.exec(stderr)?.[1];
  if (!folder) return undefined;
  const complete = completeCopy(folder);
  const named = /Cannot find (?:module|package) '([^']+)'/.exec(stderr)?.[1];
  const module = named?.split(/[\\/]node_modules[\\/]/).at(-1);
  return { kind: complete ? "missingModule" : "incomplete", folder, ...(module ? { module } : {}) };
}

/**
 * The optional dependency missing from npx's copy of a package that `stderr` names, if any: the copy is the one the
 * output's paths are in, else the newest copy of `launch`'s package. `script` is the failed install script this start's
 * npm log names, if any.
 */
export function npxOptionalMissing(
  stderr: string,
  launch?: NpxLaunch & NpmRun,
  script?: NpmScriptFailure,
): NpxOptionalMissing | undefined {
  const folder =
    npxCopyIn(stderr) ?? (launch && npxCopies(launch).sort((a, b) => b.installedAt - a.installedAt)[0]?.folder);
  if (!folder) return undefined;
  try {
    for (const pkg of Object.keys(packagesIn(folder))) {
      for (const module of Object.keys(packagesIn(path.join(folder, "node_modules", pkg), "optionalDependencies"))) {
        if (existsSync(path.join(folder, "node_modules", module)) || !namesPackage(stderr, module)) continue;
        const own = script?.optional && specName(script.pkg) === module ? { script } : {};
        return { kind: "optionalMissing", folder, module, ...(launch ? { rerun: launch.rerun } : {}), ...own };
      }
    }
  } catch {
    // A copy without a readable manifest: nothing to say of it.
  }
  return undefined;
}

/** Whether `text` names the package `name` as a whole word (`"better-sqlite3"`, not `better-sqlite3-multiple`). */
function namesPackage(text: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?<![\\w@/.-])${escaped}(?![\\w-])`).test(text);
}
