/**
 * This package's own files (mcp.json, the scripts it runs as processes of their own), by their path from the package's
 * root. The same code runs from src/ and bundled into dist/mcp-bridge.js, so a path relative to the importing module's
 * `import.meta.url` would be right in one of them only.
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE_NAME = "mcp-bridge";
let root: string | undefined;

/** The absolute path of `relative` (a path from the package's root, such as "src/connection/hub/hub.mjs"). */
export function packageFile(relative: string): string {
  root ??= findRoot(path.dirname(fileURLToPath(import.meta.url)));
  return path.join(root, relative);
}

/** The first directory up from `start` holding this package's package.json (a dependency's own does not count). */
function findRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (nameIn(path.join(dir, "package.json")) === PACKAGE_NAME) return dir;
    if (path.dirname(dir) === dir) throw new Error(`No package.json of ${PACKAGE_NAME} in ${start} or above it.`);
  }
}

function nameIn(file: string): unknown {
  try {
    return (JSON.parse(readFileSync(file, "utf8")) as { name?: unknown }).name;
  } catch {
    return undefined;
  }
}
