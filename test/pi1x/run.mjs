#!/usr/bin/env node
/**
 * The end-to-end tests again, on pi 1.x: installs pi 1.x and the Node 22 it needs into this folder from its own
 * lockfile (see ../../scripts/node22.mjs), then runs every test file that starts pi (those importing
 * ../pi-harness.ts or ../bridge-in-pi.ts, or ../pi-line.ts to say which pi they run) on that Node, with the tests'
 * `@mariozechner/*` imports mapped to pi 1.x's packages (./alias-hooks.mjs), bundled first (../bundle-tests.mjs).
 * Arguments, if any, replace the list of test files.
 * Without a Node that can run pi 1.x it skips, saying why; in CI (`CI` set) it fails instead.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { ensureInstalled, node22 } from "../../scripts/node22.mjs";
import { runBundled } from "../bundle-tests.mjs";
import { ALIASES } from "./alias-hooks.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");

function endToEndTests() {
  const dir = path.join(root, "test");
  return readdirSync(dir)
    .filter(
      (name) =>
        name.endsWith(".test.ts") &&
        /from "\.\/(pi-harness|pi-line|bridge-in-pi)\.ts"/.test(readFileSync(path.join(dir, name), "utf8")),
    )
    .map((name) => path.join("test", name));
}

/**
 * Why `node` cannot run pi 1.x (missing, not runnable, or older than 22.19), or undefined when it can.
 * `MCP_BRIDGE_PI1X_NODE` names the Node to use instead of the one found.
 */
function unusable(node) {
  if (!node) return `they need Node >= 22.19, and none is installed for ${process.platform}-${process.arch}`;
  const probe = spawnSync(node, ["-p", "process.versions.node"], { encoding: "utf8" });
  if (probe.error || probe.status !== 0)
    return `${node} does not run (${probe.error?.message ?? `exit ${probe.status}`})`;
  const [major, minor] = probe.stdout.trim().split(".").map(Number);
  return major > 22 || (major === 22 && minor >= 19)
    ? undefined
    : `${node} is Node ${probe.stdout.trim()}; they need >= 22.19`;
}

ensureInstalled(here, "pi 1.x and Node 22");
const node = process.env.MCP_BRIDGE_PI1X_NODE || node22();
const why = unusable(node);
if (why) {
  // In CI (`CI` set, as CI services and .ci/run do) a pass that cannot run fails the run; a skip there would go unseen.
  const ci = !/^(|0|false)$/i.test(process.env.CI ?? "");
  if (ci) console.error(`pi 1.x tests cannot run: ${why}. CI is set, so this fails the run.`);
  else console.log(`pi 1.x tests skipped: ${why}. Run them with Node 22: node test/pi1x/run.mjs`);
  process.exit(ci ? 1 : 0);
}
const files = process.argv.length > 2 ? process.argv.slice(2) : endToEndTests();
if (files.length === 0) {
  console.error(
    "pi 1.x tests: no test file imports ./pi-harness.ts, ./bridge-in-pi.ts or ./pi-line.ts; nothing would run.",
  );
  process.exit(1);
}
const status = await runBundled(node, files, {
  pass: "pi 1.x",
  aliases: ALIASES,
  aliasRoot: here,
  // Node 22 keeps what it compiled, so the pass's many pi starts (test processes and pi command lines) compile less.
  env: { NODE_COMPILE_CACHE: path.join(root, ".tmp", "compile-cache"), ...process.env, MCP_BRIDGE_TEST_PI: "1.x" },
});
process.exit(status);
