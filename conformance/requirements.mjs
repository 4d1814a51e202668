#!/usr/bin/env node
/**
 * Runs the MCP project's conformance harness against conformance/driver.ts in the two ways that need Node 22:
 *
 * - `[revision…]`: the scenarios each spec revision requires (the harness's `--requirements <revision>`, frozen at the
 *   revision's release); 2025-11-25 and 2026-07-28 when none is given, and then each extension scenario the bridge
 *   supports on its own (a requirement set runs them but does not score them, so a regression would pass unseen).
 * - `--suite-all`: every scenario of the last 0.1 release (`--suite all`), the extensions included, with the scenarios
 *   docs/lifecycle-and-protocol.md lists as unsupported in ./expected-failures-release.yml.
 *
 * Both harness releases are installed in ./harness from its own lockfile and run on the Node 22 the pi 1.x tests
 * install (../scripts/node22.mjs); the driver runs on this Node.
 */
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { ensureInstalled, node22, PI1X_DIR, run } from "../scripts/node22.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const harness = path.join(here, "harness");
const args = process.argv.slice(2);
const suiteAll = args.includes("--suite-all");
const named = args.filter((arg) => arg !== "--suite-all");
const revisions = named.length > 0 ? named : suiteAll ? [] : ["2025-11-25", "2026-07-28"];
/** The OAuth extensions docs/oauth.md says are supported: machine clients, enterprise-managed, workload identity, DPoP. */
const EXTENSIONS = [
  "auth/client-credentials-basic",
  "auth/client-credentials-jwt",
  "auth/enterprise-managed-authorization",
  "auth/wif-jwt-bearer",
  "auth/dpop",
  "auth/dpop-nonce",
];
const extensions = named.length === 0 && !suiteAll ? EXTENSIONS : [];

ensureInstalled(harness, "the conformance harness");
ensureInstalled(PI1X_DIR, "pi 1.x and Node 22");
const node = node22();
if (!node) {
  console.log(
    `conformance on Node 22 skipped: the harness needs Node >= 22.19, and none is installed for ${process.platform}-${process.arch}`,
  );
  process.exit(0);
}
const cliOf = (pkg) => path.join(harness, "node_modules", ...pkg.split("/"), "dist", "index.js");
const driver = `${JSON.stringify(process.execPath)} --import tsx conformance/driver.ts`;
const common = ["client", "--command", driver, "--timeout", "90000"];
const cwd = path.resolve(here, "..");
/**
 * The scored scenarios a requirement set's run failed, read from what the harness printed: `✗ <scenario>: …` lines,
 * less those it lists as not scored (`  ✗ <scenario> (…)`).
 */
function failedScenarios(output) {
  const failed = [...output.matchAll(/^✗ (\S+): /gm)].map((m) => m[1]);
  const unscored = new Set([...output.matchAll(/^ {2}✗ (\S+) \(/gm)].map((m) => m[1]));
  return failed.filter((name) => !unscored.has(name));
}

for (const revision of revisions) {
  console.log(`conformance: the requirement set of ${revision}`);
  const set = spawnSync(node, [cliOf("@modelcontextprotocol/conformance"), ...common, "--requirements", revision], {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 64 * 1024 * 1024,
  });
  process.stdout.write(set.stdout ?? "");
  if (set.status === 0) continue;
  // The harness starts all of a set's clients at once and times them closely: on a busy 2-core machine a scenario
  // can fail for want of CPU. Each failed one runs once more on its own, under the same revision; that decides.
  const failed = failedScenarios(set.stdout ?? "");
  if (failed.length === 0) process.exit(set.status ?? 1);
  for (const scenario of failed) {
    console.log(`conformance: ${scenario} (${revision}) once more, on its own`);
    const args = [...common, "--scenario", scenario, "--spec-version", revision];
    const status = run(node, [cliOf("@modelcontextprotocol/conformance"), ...args], { cwd });
    if (status !== 0) process.exit(status);
  }
}
for (const scenario of extensions) {
  console.log(`conformance: the extension scenario ${scenario}`);
  const status = run(node, [cliOf("@modelcontextprotocol/conformance"), ...common, "--scenario", scenario], { cwd });
  if (status !== 0) process.exit(status);
}
if (suiteAll) {
  console.log("conformance: every scenario of the 0.1.16 release");
  const expected = path.join("conformance", "expected-failures-release.yml");
  const status = run(
    node,
    [cliOf("conformance-release"), ...common, "--suite", "all", "--expected-failures", expected],
    { cwd },
  );
  if (status !== 0) process.exit(status);
}
