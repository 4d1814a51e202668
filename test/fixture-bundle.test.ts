/** The fixture bundles that test processes share: one built from files that changed since is built again. */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { appendFileSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { currentBundle } from "./fixture-bundle.ts";
import { tempDir } from "./helpers.ts";

test("a fixture's bundle is used as it is while its files are unchanged, and built again when one of them changed (also while it was built) or it is gone", () => {
  const tmp = tempDir("mcp-bridge-fixture-bundle-");
  const cleanups: string[] = [];
  try {
    const source = path.join(tmp.dir, "fixture.ts");
    const part = path.join(tmp.dir, "part.ts");
    writeFileSync(source, 'import { word } from "./part.ts";\nconsole.log(word satisfies string);\n');
    writeFileSync(part, 'export const word = "one";\n');
    const run = (bundle: string) => execFileSync(process.execPath, [bundle], { encoding: "utf8" }).trim();
    const bundle = currentBundle(source);
    cleanups.push(bundle, `${bundle}.inputs.json`);
    assert.equal(run(bundle), "one");
    // Nothing it was built from changed: the bundle on disk is used as it is, not built again.
    appendFileSync(bundle, "// left as it was\n");
    assert.equal(currentBundle(source), bundle);
    assert.match(readFileSync(bundle, "utf8"), /\/\/ left as it was\n$/);
    // What the fixture imports changed, same size, a later time of change: the bundle follows.
    writeFileSync(part, 'export const word = "two";\n');
    const later = new Date(statSync(part).mtimeMs + 5_000);
    utimesSync(part, later, later);
    assert.equal(run(currentBundle(source)), "two");
    // A file whose time of change is after the build began (changed while esbuild read it) is not taken as built.
    const meanwhile = new Date(Date.now() + 60_000);
    utimesSync(part, meanwhile, meanwhile);
    currentBundle(source);
    appendFileSync(bundle, "// built before the change\n");
    assert.doesNotMatch(readFileSync(currentBundle(source), "utf8"), /built before the change/);
    // A bundle removed by hand (its list of inputs left behind) is built again.
    rmSync(bundle);
    assert.equal(run(currentBundle(source)), "two");
  } finally {
    for (const file of cleanups) rmSync(file, { force: true });
    tmp.cleanup();
  }
});
