#!/usr/bin/env node
/**
 * Runs the scenarios a spec revision requires (the harness's `--requirements <revision>`, frozen at the revision's
 * release) against conformance/driver.ts: for 2025-11-25 by default, or for the revisions given as arguments. The
 * harness that has requirement sets needs Node 22, so it is installed in ./harness from its own lockfile and run on
 * the Node 22 the pi 1.x tests install (../scripts/node22.mjs); the driver runs on this Node.
 */
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { ensureInstalled, node22, PI1X_DIR, run } from "../scripts/node22.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const harness = path.join(here, "harness");
const revisions = process.argv.length > 2 ? process.argv.slice(2) : ["2025-11-25"];

ensureInstalled(harness, "the conformance harness");
ensureInstalled(PI1X_DIR, "pi 1.x and Node 22");
const node = node22();
if (!node) {
  console.log(`conformance requirement sets skipped: the harness needs Node >= 22.19, and none is installed for ${process.platform}-${process.arch}`);
  process.exit(0);
}
const cli = path.join(harness, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
const driver = `${JSON.stringify(process.execPath)} --import tsx conformance/driver.ts`;
for (const revision of revisions) {
  console.log(`conformance: the requirement set of ${revision}`);
  const status = run(node, [cli, "client", "--command", driver, "--timeout", "90000", "--requirements", revision], { cwd: path.resolve(here, "..") });
  if (status !== 0) process.exit(status);
}
