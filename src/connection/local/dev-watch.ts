/**
 * A local server under development restarts when its files change (`"dev": { "watch": "src/**\/*.ts" }`, as VS Code
 * reads it): pi is often the agent that edits the server, and its next call should meet the new code, not the process
 * started before the edit. The globs are relative to the project root (VS Code's workspace folder); each is watched from
 * the folder before its first wildcard, and a burst of changes (a save, a build writing many files) restarts the server
 * once. chokidar watches: Node's own recursive watch on Linux reads the whole tree at once, synchronously, and watches
 * every file in it, `node_modules` included (a `**\/*.py` at the root of a JavaScript project held pi for seconds);
 * chokidar walks it asynchronously and skips what we tell it to.
 */
import { existsSync } from "node:fs";
import * as path from "node:path";
import { watch } from "chokidar";
import { asError } from "../../common/errors.ts";

/** Changes this close together are one edit. */
const SETTLE_MS = 300;
/** Folders whose changes never restart a server: dependencies and version control churn on their own. */
const IGNORED = /(^|\/)(node_modules|\.git)(\/|$)/;

/** `src/**\/*.ts` as a test of a path relative to the root, with `/` between folders. Pure. */
export function globTest(glob: string): (file: string) => boolean {
  const normalized = glob.replace(/\\/g, "/").replace(/^\.\//, "");
  let source = "";
  let groups = 0;
  for (let i = 0; i < normalized.length; i++) {
    const char = normalized[i]!;
    if (char === "*" && normalized[i + 1] === "*") {
      // `**/` is any run of folders, none included; `**` at the end, anything.
      source += normalized[i + 2] === "/" ? "(?:.*/)?" : ".*";
      i += normalized[i + 2] === "/" ? 2 : 1;
    } else if (char === "*") source += "[^/]*";
    else if (char === "?") source += "[^/]";
    // `{ts,js}`: one of the choices, as VS Code reads it.
    else if (char === "{" && normalized.includes("}", i)) source += (groups++, "(?:");
    else if ((char === "}" || char === ",") && groups) source += char === "," ? "|" : (groups--, ")");
    else source += char.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  const pattern = new RegExp(`^${source}${")".repeat(groups)}$`);
  return (file) => pattern.test(file);
}

/** The folder a glob is watched from: its path up to the first segment with a wildcard. Pure. */
export function globBase(glob: string): string {
  const segments = glob.replace(/\\/g, "/").split("/");
  const fixed = segments.findIndex((segment) => /[*?{]/.test(segment));
  const base = (fixed < 0 ? segments.slice(0, -1) : segments.slice(0, fixed)).join("/");
  return base || (glob.startsWith("/") ? "/" : ".");
}

/** What a watch tells while it runs. */
export interface WatchEvents {
  /** A changed file (relative to the root, `/` between folders), once its burst of changes settles. */
  changed(file: string): void;
  /** The first walk is done: how many folders are watched. */
  ready(folders: number): void;
  /** An error the watching met (a folder that went away, the system's limit on watches). */
  failed(error: Error): void;
}

/** `folder`, or the nearest folder above it that exists. */
function nearestFolder(folder: string): string {
  let nearest = folder;
  while (!existsSync(nearest) && path.dirname(nearest) !== nearest) nearest = slashed(path.dirname(nearest));
  return nearest;
}

/** A path with `/` between folders, as globs are written. */
const slashed = (file: string) => file.split(path.sep).join("/");

/**
 * Watches `globs` (relative to `root`, or absolute) until the function it returns is called. Paths are compared
 * absolute, so a glob may reach outside the root (`../shared/**\/*.ts`); files are reported relative to it.
 */
export function watchFiles(globs: readonly string[], root: string, events: WatchEvents): () => void {
  const absolute = globs.map((glob) => slashed(path.resolve(root, glob)));
  const tests = absolute.map(globTest);
  const full = (file: string) => slashed(path.resolve(root, file));
  const relative = (file: string) => slashed(path.relative(root, path.resolve(root, file)));
  const wanted = (file: string) => tests.some((test) => test(full(file)));
  const bases = [...new Set(absolute.map(globBase))];
  // A folder is walked if a base is in it or it is in a base; of the files, only those a glob takes are watched.
  const onTheWay = (file: string) =>
    bases.some((base) => file === base || file.startsWith(`${base}/`) || base.startsWith(`${file}/`) || file === "/");
  let timer: NodeJS.Timeout | undefined;
  // A base in the project is watched from its root, so that one deleted and made again (a clean build) is walked again
  // (chokidar stops watching a folder it was given once it is deleted); one outside, from the nearest folder there.
  const top = slashed(path.resolve(root));
  const watcher = watch([...new Set(bases.map((b) => (b.startsWith(`${top}/`) ? top : nearestFolder(b))))], {
    cwd: root,
    ignoreInitial: true,
    // Not a reason to keep pi running.
    persistent: false,
    ignored: (file, stats) =>
      IGNORED.test(relative(file)) || !onTheWay(full(file)) || (stats?.isFile() === true && !wanted(file)),
  });
  const onChange = (file: string) => {
    if (!wanted(file)) return;
    clearTimeout(timer);
    timer = setTimeout(() => events.changed(relative(file)), SETTLE_MS);
    timer.unref();
  };
  watcher.on("add", onChange).on("change", onChange).on("unlink", onChange);
  // chokidar also lists the folders above each base, which are not walked.
  const under = (folder: string) => bases.some((base) => folder === base || folder.startsWith(`${base}/`));
  watcher.once("ready", () => events.ready(Object.keys(watcher.getWatched()).map(full).filter(under).length));
  watcher.on("error", (error) => events.failed(asError(error)));
  return () => {
    clearTimeout(timer);
    void watcher.close();
  };
}
