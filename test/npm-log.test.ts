/**
 * Reading npm's debug log for the install script that ended an npx start. The log lines are as npm 11 writes them; the
 * whole path (a real npx, a real failing script) is tested in hostile.test.ts.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { failedScriptIn, npxLaunch } from "../src/connection/local/npm-log.ts";

const log = (argv: string, runs: string[], exit: number) =>
  [
    "0 verbose cli /usr/bin/node /usr/lib/node_modules/npm/bin/npm-cli.js",
    `7 verbose argv ${argv}`,
    "4179 info run sharp@0.34.5 install node_modules/sharp node install/check.js || npm run build",
    "4180 info run sharp@0.34.5 install { code: 0, signal: null }",
    ...runs,
    `4195 verbose exit ${exit}`,
    `4196 verbose code ${exit}`,
  ].join("\n");

describe("npxLaunch", () => {
  test("npx and npm exec name their package; the command to rerun shows install scripts, quoted for a shell", () => {
    assert.deepEqual(npxLaunch("npx", ["-y", "@wonderwhy-er/desktop-commander"]), {
      spec: "@wonderwhy-er/desktop-commander",
      rerun: "npx --foreground-scripts -y @wonderwhy-er/desktop-commander",
    });
    assert.deepEqual(npxLaunch("/usr/bin/npm", ["exec", "--yes", "--", "pkg@1", "--dir", "my files"]), {
      spec: "pkg@1",
      rerun: "npm exec --foreground-scripts --yes -- pkg@1 --dir 'my files'",
    });
    assert.equal(npxLaunch("C:\\node\\npx.cmd", ["-y", "pkg"])?.spec, "pkg");
    for (const [command, args] of [
      ["node", ["server.js"]],
      ["npm", ["start"]],
      ["npx", ["-y"]],
    ] as const)
      assert.equal(npxLaunch(command, args), undefined, `${command} ${args.join(" ")}`);
  });
});

describe("failedScriptIn", () => {
  const launch = npxLaunch("npx", ["-y", "@wonderwhy-er/desktop-commander"])!;
  const argv = `"exec" "--yes" "--" "@wonderwhy-er/desktop-commander"`;
  const puppeteer = [
    "4183 info run puppeteer@24.43.1 postinstall node_modules/puppeteer node install.mjs",
    "4184 info run puppeteer@24.43.1 postinstall { code: 1, signal: null }",
  ];

  test("names the first script that failed, its command and how it ended", () => {
    assert.deepEqual(failedScriptIn(log(argv, puppeteer, 1), launch, "/l.log"), {
      ...launch,
      ...{ pkg: "puppeteer@24.43.1", event: "postinstall", command: "node install.mjs", ending: "exited with code 1" },
      log: "/l.log",
    });
    const killed = ["9 info run canvas@3.0.0 install node_modules/canvas node-gyp rebuild"];
    killed.push("10 info run canvas@3.0.0 install { code: null, signal: SIGKILL }");
    assert.equal(failedScriptIn(log(argv, killed, 1), launch, "/l.log")?.ending, "was killed by SIGKILL");
  });

  test("nothing from a log of another package, of a run that succeeded, or without a failed script", () => {
    assert.equal(failedScriptIn(log(`"exec" "--yes" "--" "other"`, puppeteer, 1), launch, "/l.log"), undefined);
    assert.equal(failedScriptIn(log(argv, puppeteer, 0), launch, "/l.log"), undefined);
    assert.equal(failedScriptIn(log(argv, [], 1), launch, "/l.log"), undefined);
  });
});
