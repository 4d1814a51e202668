/**
 * A local server under development restarts when its files change (`"dev": { "watch": "src/**\/*.ts" }`, as VS Code
 * reads it): pi is often the agent that edits the server, and its next call should meet the new code, not the process
 * started before the edit. The globs are relative to the project root (VS Code's workspace folder); each is watched from
 * the folder before its first wildcard (recursively: Linux, macOS and Windows watch a tree natively), and a burst of
 * changes (a save, a build writing many files) restarts the server once.
 */
import { type FSWatcher, watch } from "node:fs";
import * as path from "node:path";

/** Changes this close together are one edit. */
const SETTLE_MS = 300;
/** Folders whose changes never restart a server: dependencies and version control churn on their own. */
const IGNORED = /(^|\/)(node_modules|\.git)\//;

/** `src/**\/*.ts` as a test of a path relative to the root, with `/` between folders. Pure. */
export function globTest(glob: string): (file: string) => boolean {
  const normalized = glob.replace(/\\/g, "/").replace(/^\.\//, "");
  let source = "";
  for (let i = 0; i < normalized.length; i++) {
    const char = normalized[i]!;
    if (char === "*" && normalized[i + 1] === "*") {
      // `**/` is any run of folders, none included; `**` at the end, anything.
      source += normalized[i + 2] === "/" ? "(?:.*/)?" : ".*";
      i += normalized[i + 2] === "/" ? 2 : 1;
    } else if (char === "*") source += "[^/]*";
    else if (char === "?") source += "[^/]";
    else source += char.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  const pattern = new RegExp(`^${source}$`);
  return (file) => pattern.test(file);
}

/** The folder a glob is watched from: its path up to the first segment with a wildcard. Pure. */
export function globBase(glob: string): string {
  const segments = glob.replace(/\\/g, "/").split("/");
  const fixed = segments.findIndex((segment) => /[*?]/.test(segment));
  return fixed < 0 ? segments.slice(0, -1).join("/") || "." : segments.slice(0, fixed).join("/") || ".";
}

/**
 * Watches `globs` under `root`; `changed` gets a changed file once its burst of changes settles, `failed` an error the
 * watching stopped on (a folder that went away, the system's limit on watches). Returns what stops it.
 */
export function watchFiles(
  globs: readonly string[],
  root: string,
  changed: (file: string) => void,
  failed: (error: Error) => void,
): () => void {
  const tests = globs.map(globTest);
  const watchers: FSWatcher[] = [];
  let timer: NodeJS.Timeout | undefined;
  let last = "";
  const stop = () => {
    clearTimeout(timer);
    for (const watcher of watchers.splice(0)) watcher.close();
  };
  for (const base of new Set(globs.map(globBase))) {
    const folder = path.resolve(root, base);
    try {
      const watcher = watch(folder, { recursive: true }, (_event, name) => {
        if (!name) return;
        const file = path.relative(root, path.join(folder, name.toString())).split(path.sep).join("/");
        if (IGNORED.test(file) || !tests.some((test) => test(file))) return;
        last = file;
        clearTimeout(timer);
        timer = setTimeout(() => changed(last), SETTLE_MS);
        timer.unref();
      });
      watcher.on("error", (error) => {
        stop();
        failed(error);
      });
      watcher.unref();
      watchers.push(watcher);
    } catch (error) {
      failed(error as Error);
    }
  }
  return stop;
}
