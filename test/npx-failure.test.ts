/**
 * Why an npx start failed: npm's debug log names the install script that failed (the lines are as npm 11 writes them),
 * and a module missing from npx's copy of a package is an install stopped partway or a fault of the package. The whole
 * path (a real npx, a real failing script) is tested in hostile.test.ts.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, realpathSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { permanentLaunchFailure } from "../src/connection/local/launch-failure.ts";
import {
  failedScriptIn,
  keptNpmLogs,
  npxCopyIn,
  npxLaunch,
  npxModuleMissing,
} from "../src/connection/local/npx-failure.ts";
import { npmSettings } from "../src/connection/local/npm-settings.ts";
import { connectFailure, connectionFor, tempDir } from "./helpers.ts";

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
    // A flag of npm's with its value apart: the value is no package.
    assert.equal(npxLaunch("npx", ["-y", "--registry", "https://npm.example.com/", "pkg"])?.spec, "pkg");
    assert.equal(npxLaunch("npx", ["--cache", "/tmp/npm-cache", "-y", "pkg"])?.spec, "pkg");
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
      kind: "script",
      ...launch,
      ...{ pkg: "puppeteer@24.43.1", event: "postinstall", command: "node install.mjs", ending: "exited with code 1" },
      log: "/l.log",
      optional: false,
    });
    const killed = ["9 info run canvas@3.0.0 install node_modules/canvas node-gyp rebuild"];
    killed.push("10 info run canvas@3.0.0 install { code: null, signal: SIGKILL }");
    assert.equal(failedScriptIn(log(argv, killed, 1), launch, "/l.log")?.ending, "was killed by SIGKILL");
  });

  test("a script of an optional dependency npm left out is said only where nothing else failed", () => {
    const sqlite = [
      "1809 info run better-sqlite3@11.10.0 install node_modules/better-sqlite3 prebuild-install || node-gyp rebuild --release",
      "1810 info run better-sqlite3@11.10.0 install { code: 1, signal: null }",
      "1811 verbose reify failed optional dependency /home/u/.npm/_npx/e23b069b9efbbb8f/node_modules/better-sqlite3",
    ];
    const optional = failedScriptIn(log(argv, sqlite, 1), launch, "/l.log");
    assert.equal(optional?.pkg, "better-sqlite3@11.10.0");
    assert.equal(optional?.optional, true);
    const both = failedScriptIn(log(argv, [...sqlite, ...puppeteer], 1), launch, "/l.log");
    assert.deepEqual([both?.pkg, both?.optional], ["puppeteer@24.43.1", false]);
  });

  test("nothing from a log of another package, of a run that succeeded, or without a failed script", () => {
    assert.equal(failedScriptIn(log(`"exec" "--yes" "--" "other"`, puppeteer, 1), launch, "/l.log"), undefined);
    assert.equal(failedScriptIn(log(argv, puppeteer, 0), launch, "/l.log"), undefined);
    assert.equal(failedScriptIn(log(argv, [], 1), launch, "/l.log"), undefined);
  });
});

describe("keptNpmLogs", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  test("more logs kept than npm's 10, unless the server's env or the user's npmrc says how many", () => {
    const home = tmp.dir;
    const kept = (env: Record<string, string>) => keptNpmLogs(npmSettings({ env }));
    assert.deepEqual(kept({ HOME: home }), { npm_config_logs_max: "100" });
    assert.deepEqual(kept({ HOME: home, npm_config_logs_max: "3" }), {});
    writeFileSync(path.join(home, ".npmrc"), "logs-max=5\n");
    assert.deepEqual(kept({ HOME: home }), {});
  });
});

describe("a module missing from npx's copy of a package", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  // The last lines Node printed for two servers whose npx install had been stopped partway.
  const dir = "/home/u/.npm/_npx/92668d6008b43da4";
  const required = [
    "    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)",
    "  code: 'MODULE_NOT_FOUND',",
    "  requireStack: [",
    `    '${dir}/node_modules/@opentelemetry/sdk-node/build/src/index.js'`,
    "  ]",
    "}",
    "Node.js v20.20.2",
  ].join("\n");
  const imported = [
    "    at ModuleJob._link (node:internal/modules/esm/module_job:168:49) {",
    "  code: 'ERR_MODULE_NOT_FOUND',",
    `  url: 'file://${dir}/node_modules/jose/jwe/compact/decrypt'`,
    "}",
    "Node.js v20.20.2",
  ].join("\n");

  test("a module missing from npx's copy of the package names the folder to delete, not the entry", () => {
    for (const stderr of [required, imported]) {
      const failure = permanentLaunchFailure(1, stderr, npxModuleMissing(stderr));
      assert.ok(failure, stderr);
      assert.match(failure.reason, new RegExp(`npx's copy of its package in ${dir} is missing a module`));
      assert.match(failure.fix ?? "", /delete that folder, then reconnect/);
    }
    // A module missing from a project's own node_modules is the project's to install, not npx's cache.
    const own = "Error: Cannot find module 'zod'\nRequire stack:\n- /work/app/node_modules/x/index.js";
    assert.equal(npxModuleMissing(own), undefined);
    assert.equal(permanentLaunchFailure(1, own), undefined);
  });

  test("a module missing from npx's complete copy is the package's fault: deleting the folder is not the advice", () => {
    // @heroku/mcp-server 1.2.8 imports '@modelcontextprotocol/sdk/server/mcp' (no `.js`), which ESM does not resolve.
    const folder = path.join(tmp.dir, ".npm", "_npx", "909ffbc9d45b7a62");
    mkdirSync(path.join(folder, "node_modules"), { recursive: true });
    writeFileSync(path.join(folder, "node_modules", ".package-lock.json"), "{}");
    const sdk = `${folder}/node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp`;
    const stderr = `Fatal error in main(): Cannot find module '${sdk}' imported from ${folder}/node_modules/@heroku/mcp-server/dist/index.js`;
    const missing = npxModuleMissing(stderr);
    assert.deepEqual(missing, {
      kind: "missingModule",
      folder,
      module: "@modelcontextprotocol/sdk/dist/esm/server/mcp",
    });
    const failure = permanentLaunchFailure(1, stderr, missing)!;
    assert.equal(
      failure.reason,
      `its package's code needs '@modelcontextprotocol/sdk/dist/esm/server/mcp', which npx's complete copy of it in ` +
        `${folder} does not have: a fault of the package or of its dependencies' versions, which reinstalling repeats`,
    );
    assert.doesNotMatch(failure.fix ?? "", /delete/);
  });

  // @winor30/mcp-server-datadog at its first start: "exited … after 29.1 s", of which the server ran one.
  test("a start that npx installed first: how long of its run that took, and only when it installed", async () => {
    const tmp = tempDir();
    try {
      const npx = path.join(tmp.dir, "npx");
      writeFileSync(
        npx,
        [
          "#!/bin/sh",
          'd="$HOME/.npm/_npx/0123456789abcdef"',
          'if [ ! -d "$d" ]; then',
          '  mkdir -p "$d/node_modules" && echo \'{"dependencies":{"@acme/mcp":"^1.0.0"}}\' > "$d/package.json"',
          // An install takes its time, as npm's does: a file written within a millisecond or two of the start can be
          // stamped earlier than the start's clock read (the kernel stamps files from a coarse clock).
          "  sleep 0.2",
          '  echo "{}" > "$d/node_modules/.package-lock.json"',
          "fi",
          'echo "Error: MCP_TEST_KEY environment variable is required" >&2',
          "exit 1",
        ].join("\n"),
        { mode: 0o755 },
      );
      const entry = { command: npx, args: ["-y", "@acme/mcp@latest"], env: { HOME: tmp.dir } };
      const first = await connectFailure(connectionFor("acme", entry));
      assert.match(
        first.message,
        /\(the process exited with code 1 after [\d.]+ s, [\d.]+ s of it npx installing its package, saying so\)/,
      );
      const again = await connectFailure(connectionFor("acme", entry));
      assert.match(
        again.message,
        /\(the process exited with code 1 after [\d.]+ s, saying so\)/,
        "installed before it",
      );
      // The package named by `--package=`, as the error for a package with several programs advises, and its program.
      rmSync(path.join(tmp.dir, ".npm"), { recursive: true });
      const named = { ...entry, args: ["-y", "--package=@acme/mcp", "acme-mcp"] };
      const { message } = await connectFailure(connectionFor("acme", named));
      assert.match(message, /after [\d.]+ s, [\d.]+ s of it npx installing its package, saying so\)/);
      // The cache moved in the user's npmrc by way of a variable, which npm expands.
      writeFileSync(npx, readFileSync(npx, "utf8").replace("/.npm/_npx/", "/moved/_npx/"));
      writeFileSync(path.join(tmp.dir, ".npmrc"), "cache=${HOME}/moved\n");
      const moved = await connectFailure(connectionFor("acme", entry));
      assert.match(moved.message, /after [\d.]+ s, [\d.]+ s of it npx installing its package, saying so\)/);
    } finally {
      tmp.cleanup();
    }
  });

  // The XDG Base Directory advice writes `cache=${XDG_CACHE_HOME}/npm` in ~/.npmrc. A server gets only a few of pi's
  // variables, so its npm finds that one unset and, as npm does, keeps the words and takes them from where it runs.
  test("an npmrc's cache named by a variable the server does not get: npm's folder, not the one pi's variable names", async () => {
    const tmp = tempDir();
    const before = process.env.XDG_CACHE_HOME;
    try {
      process.env.XDG_CACHE_HOME = path.join(tmp.dir, "xdg");
      const cwd = path.join(tmp.dir, "server");
      mkdirSync(cwd);
      writeFileSync(path.join(tmp.dir, ".npmrc"), "cache=${XDG_CACHE_HOME}/npm\n");
      const env = { HOME: tmp.dir, PATH: process.env.PATH ?? "" };
      const cache = execFileSync("npm", ["config", "get", "cache"], { cwd, env, encoding: "utf8" }).trim();
      // npm knows its folder by its real path (macOS's /tmp is /private/tmp).
      assert.equal(cache, path.join(realpathSync(cwd), "${XDG_CACHE_HOME}", "npm"), "real npm");
      const npx = path.join(tmp.dir, "npx");
      const install = `d='${cache}/_npx/0123456789abcdef'; mkdir -p "$d/node_modules"`;
      const manifest = `echo '{"dependencies":{"@acme/mcp":"^1.0.0"}}' > "$d/package.json"`;
      const done = `sleep 0.2; echo '{}' > "$d/node_modules/.package-lock.json"; echo 'Error: MCP_TEST_KEY environment variable is required' >&2; exit 1`;
      writeFileSync(npx, `#!/bin/sh\n${install}\n${manifest}\n${done}\n`, { mode: 0o755 });
      const entry = { command: npx, args: ["-y", "@acme/mcp"], cwd, env: { HOME: tmp.dir } };
      const { message } = await connectFailure(connectionFor("acme", entry));
      assert.match(message, /after [\d.]+ s, [\d.]+ s of it npx installing its package, saying so\)/);
    } finally {
      if (before === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = before;
      tmp.cleanup();
    }
  });

  // @bytebase/dbhub, started again after npx installed it without better-sqlite3: no install, so no script in the log.
  test("an optional dependency missing from npx's copy, which the server's output names, is found in the copy itself", async () => {
    const tmp = tempDir();
    try {
      const npx = path.join(tmp.dir, "npx");
      const copy = path.join(tmp.dir, ".npm", "_npx", "e23b069b9efbbb8f");
      const modules = path.join(copy, "node_modules");
      mkdirSync(path.join(modules, "@acme", "db"), { recursive: true });
      writeFileSync(path.join(copy, "package.json"), JSON.stringify({ dependencies: { "@acme/db": "^1.0.0" } }));
      writeFileSync(path.join(modules, ".package-lock.json"), "{}");
      const optionalDependencies = { "better-sqlite3": "^11.9.0", mysql2: "^3.0.0" };
      writeFileSync(path.join(modules, "@acme", "db", "package.json"), JSON.stringify({ optionalDependencies }));
      mkdirSync(path.join(modules, "mysql2"));
      const says = (line: string) => writeFileSync(npx, `#!/bin/sh\necho '${line}' >&2\nexit 1\n`, { mode: 0o755 });
      const entry = { command: npx, args: ["-y", "@acme/db", "--demo"], env: { HOME: tmp.dir } };
      // The server's stack names the copy in a file: URL, which is where the folder is then read from.
      const stack = `    at connect (file://${modules}/@acme/db/dist/main.js:12:7)`;
      says(`Skipping SQLite connector: driver package "better-sqlite3" not installed.\n${stack}`);
      const { message, state } = await connectFailure(connectionFor("db", entry));
      assert.match(
        message,
        new RegExp(
          `^MCP server 'db': its output names 'better-sqlite3', an optional dependency of its package that npx's copy ` +
            `of it in ${copy} does not have: npm leaves out .*; delete that folder, run \`npx --foreground-scripts -y ` +
            `@acme/db --demo\` in a terminal to see why 'better-sqlite3' does not install`,
        ),
      );
      assert.equal(state, "gaveUp");
      // A name it only contains, or an optional dependency the copy has, says nothing of the kind.
      for (const line of ["no driver for better-sqlite3-multiple", `driver package "mysql2" failed to connect`]) {
        says(line);
        const other = await connectFailure(connectionFor("db", entry));
        assert.doesNotMatch(other.message, /optional dependency/, line);
      }
    } finally {
      tmp.cleanup();
    }
  });

  test("npx's copy named in a stack's file: URL is its path, on Windows too", () => {
    const posix = "    at main (file:///home/u/.npm/_npx/0123456789abcdef/node_modules/x/index.js:1:1)";
    assert.equal(npxCopyIn(posix), "/home/u/.npm/_npx/0123456789abcdef");
    const windows =
      "    at main (file:///C:/Users/u/AppData/Local/npm-cache/_npx/0123456789abcdef/node_modules/x/i.js:1:1)";
    assert.equal(npxCopyIn(windows), "C:/Users/u/AppData/Local/npm-cache/_npx/0123456789abcdef");
    const required = "- C:\\Users\\u\\AppData\\Local\\npm-cache\\_npx\\0123456789abcdef\\node_modules\\x\\i.js";
    assert.equal(npxCopyIn(required), "C:\\Users\\u\\AppData\\Local\\npm-cache\\_npx\\0123456789abcdef");
  });

  test("a copy changed after its last complete install (an update stopped partway) is incomplete again", () => {
    const folder = path.join(tmp.dir, ".npm", "_npx", "0123456789abcdef");
    const modules = path.join(folder, "node_modules");
    mkdirSync(modules, { recursive: true });
    writeFileSync(path.join(modules, ".package-lock.json"), "{}");
    const stderr = `Error: Cannot find package 'zod' imported from ${modules}/x/index.js`;
    assert.equal(npxModuleMissing(stderr)?.kind, "missingModule");
    const later = new Date(Date.now() + 60_000);
    utimesSync(modules, later, later);
    assert.deepEqual(npxModuleMissing(stderr), { kind: "incomplete", folder, module: "zod" });
  });
});
