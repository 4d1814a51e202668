#!/usr/bin/env node
/**
 * `npm test`'s first pass: lib.test.ts and every test/*.test.ts on pi 0.73 and this Node, bundled first
 * (./bundle-tests.mjs says why). Arguments, if any, replace the list of test files. One file without bundling:
 * `node --import tsx --test test/<file>.test.ts`.
 */
import { readdirSync } from "node:fs";
import { runBundled } from "./bundle-tests.mjs";

const files =
  process.argv.length > 2
    ? process.argv.slice(2)
    : [
        "lib.test.ts",
        ...readdirSync(new URL(".", import.meta.url))
          .filter((name) => name.endsWith(".test.ts"))
          .sort()
          .map((name) => `test/${name}`),
      ];
process.exit(await runBundled(process.execPath, files, { pass: "pi 0.73" }));
