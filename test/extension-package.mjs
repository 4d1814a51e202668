/**
 * The extension as its published package runs it, for a test pass: a folder with index.ts and dist/ built from the
 * sources as `npm pack` builds it (scripts/build-bundle.mjs), beside links to the package's other files (package.json,
 * mcp.json, src/ for the scripts it starts as processes of their own, examples/). index.ts loads the bundle, as it does
 * for everyone who installs the package.
 *
 * Why a pass loads this rather than the checkout: pi's loader reads the sources' 170-odd modules again for every
 * session an in-process test starts (0.1 s of CPU each; the bundle, imported once, 0.01 s) and for every `pi` command
 * line. Tests that are about the checkout itself (the README's `pi -e .`) still load the sources. Tests find the folder
 * in MCP_BRIDGE_TEST_EXTENSION (`EXTENSION_DIR` in ./helpers.ts); a file run on its own without the runner has the
 * checkout there.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, symlinkSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** The package's files the extension reads or starts, by their path from its root (see src/common/package-files.ts). */
const LINKED = ["package.json", "mcp.json", "src", "examples"];

/** Builds the package into `dir` (which must not exist yet) and returns `dir`. */
export function buildExtensionPackage(dir) {
  mkdirSync(dir, { recursive: true });
  for (const name of LINKED) symlinkSync(path.join(ROOT, name), path.join(dir, name));
  // A copy, not a link: index.ts finds dist/ beside itself, and a link would be followed back to the checkout.
  copyFileSync(path.join(ROOT, "index.ts"), path.join(dir, "index.ts"));
  const built = spawnSync(
    process.execPath,
    [path.join(ROOT, "scripts", "build-bundle.mjs"), "--outdir", path.join(dir, "dist")],
    { cwd: ROOT, encoding: "utf8" },
  );
  if (built.status !== 0) throw new Error(`the extension's bundle was not built:\n${built.stdout}${built.stderr}`);
  return dir;
}
