#!/usr/bin/env node
/**
 * The end-to-end tests again, on pi 1.x: installs pi 1.x and the Node 22 it needs into this folder from its own
 * lockfile (see ../../scripts/node22.mjs), then runs every test file that starts pi (those importing
 * ../pi-harness.ts, or ../pi-line.ts to say which pi they run) on that Node, with the tests' `@mariozechner/*`
 * imports mapped to pi 1.x's packages (./aliases.mjs). Arguments, if any, replace the list of test files.
 */
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { ensureInstalled, node22, run } from "../../scripts/node22.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");

function endToEndTests() {
  const dir = path.join(root, "test");
  return readdirSync(dir)
    .filter((name) => name.endsWith(".test.ts") && /from "\.\/pi-(harness|line)\.ts"/.test(readFileSync(path.join(dir, name), "utf8")))
    .map((name) => path.join("test", name));
}

ensureInstalled(here, "pi 1.x and Node 22");
const node = node22();
if (!node) {
  console.log(`pi 1.x tests skipped: they need Node >= 22.19, and none is installed for ${process.platform}-${process.arch}. Run them with Node 22: node test/pi1x/run.mjs`);
  process.exit(0);
}
const files = process.argv.length > 2 ? process.argv.slice(2) : endToEndTests();
const status = run(node, ["--import", "tsx", "--import", "./test/pi1x/aliases.mjs", "--test", "--test-reporter=spec", ...files], {
  cwd: root,
  env: { ...process.env, MCP_BRIDGE_TEST_PI: "1.x" },
});
process.exit(status);
