/**
 * A local server whose command the system refuses to run for good is started once, not restarted: here its command
 * line is longer than the system allows (`spawn E2BIG`). Real pi in-process with the faux model; the real spawn of a
 * real command, counted where the bridge's transport calls it, and the attempts pi's event bus announces.
 */
import assert from "node:assert/strict";
import childProcess, { spawnSync } from "node:child_process";
import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { permanentLaunchFailure } from "../src/connection/local/launch-failure.ts";
import { servesHttp } from "../src/connection/local/serves-http.ts";
import { busRecorder, connectFailure, connectionFor, EXTENSION_DIR, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";
import { stdioSandbox } from "../src/sandbox/server-sandbox.ts";
import { sandboxIdle } from "../src/sandbox/sandbox-runtime.mjs";
import { startInProcessPi } from "./pi-harness.ts";

/** One argument well past Linux's limit of 128 KiB for a single argument (and any system's for the whole line). */
const TOO_LONG = "x".repeat(3 * 1024 * 1024);

describe("permanent launch errors", { timeout: 120_000 }, () => {
  test("an entry written for Windows (`cmd /c npx …`) where there is no cmd: the error gives the entry to use", async () => {
    const connection = connectionFor("win", { command: "cmd", args: ["/c", "npx", "-y", "some-mcp-server"] });
    try {
      await assert.rejects(
        connection.connect(),
        /command 'cmd' was not found .*: the entry is written for Windows \(`cmd \/c`\); here, start the program itself: "command": "npx", "args": \["-y","some-mcp-server"\]/,
      );
      assert.equal(connection.state.kind, "gaveUp");
    } finally {
      await connection.close();
    }
  });

  test("a launcher from a README that is not installed (uvx, docker): the error says what it comes with", async () => {
    // Where none is: the same error as a bare name not on PATH, whatever this machine has installed.
    const tmp = tempDir();
    const nowhere = path.join(tmp.dir, "bin");
    after(() => tmp.cleanup());
    for (const [name, source] of [
      ["uvx", "uvx comes with uv (https://docs.astral.sh/uv/), which runs Python servers"],
      ["docker", "install Docker (https://docs.docker.com/get-docker/)"],
      ["no-such-launcher", undefined],
    ] as const) {
      const command = path.join(nowhere, name);
      const { message, state } = await connectFailure(connectionFor("py", { command, args: ["mcp-server-fetch"] }));
      const notFound = `MCP server 'py': command '${command}' was not found (is it installed and on PATH?)`;
      assert.equal(message, source ? `${notFound}: ${source}` : notFound);
      assert.equal(state, "gaveUp");
    }
  });

  test("a command not found on the `PATH` the entry's own `env` sets: said so, not that pi's PATH lacks it", async () => {
    const env = { PATH: "/nonexistent/bin" };
    const { message, state } = await connectFailure(connectionFor("own", { command: "npx", args: ["-y", "x"], env }));
    assert.equal(
      message,
      "MCP server 'own': command 'npx' was not found (is it installed, in a folder of the `PATH` its `env` sets?)",
    );
    assert.equal(state, "gaveUp");
  });

  test("a command that is a folder (a server's clone, not its program): said so, not that it is not executable", async () => {
    const tmp = tempDir();
    after(() => tmp.cleanup());
    const { message, state } = await connectFailure(connectionFor("folder", { command: tmp.dir }));
    assert.match(message, new RegExp(`^MCP server 'folder': command '${tmp.dir}' is a folder, not a program`));
    assert.equal(state, "gaveUp");
  });

  test("a command that is a script without a `#!` line (a shell runs it): said so, with its runtime to name", async () => {
    const tmp = tempDir();
    after(() => tmp.cleanup());
    const script = path.join(tmp.dir, "index.js");
    writeFileSync(script, 'console.log("started");\n', { mode: 0o755 });
    const { message, state } = await connectFailure(connectionFor("js", { command: script }));
    assert.match(message, /^MCP server 'js': its command is a script without a `#!` line, so a shell ran it/);
    assert.equal(state, "gaveUp");
  });

  test("a `cwd` that does not exist, or is a file: said so, not that the command was not found; not restarted", async () => {
    const tmp = tempDir();
    after(() => tmp.cleanup());
    const cwd = path.join(tmp.dir, "gone");
    const { message, state } = await connectFailure(connectionFor("where", { command: process.execPath, cwd }));
    assert.match(message, new RegExp(`its working directory ${cwd} does not exist: check \`cwd\` of 'where' in `));
    assert.doesNotMatch(message, /was not found/);
    assert.equal(state, "gaveUp");
    // A file where the folder should be (the server's script, say).
    writeFileSync(cwd, "");
    const file = await connectFailure(connectionFor("where", { command: process.execPath, cwd }));
    assert.match(
      file.message,
      new RegExp(`its working directory ${cwd} is not a folder: check \`cwd\` of 'where' in `),
    );
    assert.equal(file.state, "gaveUp");
  });

  const dockerMcp = spawnSync("sh", ["-c", "command -v docker && ! docker mcp version"]).status === 0;
  test(
    "`docker mcp gateway run` with the real docker command line but no MCP Toolkit: said so, with where it comes from; not restarted",
    { skip: dockerMcp ? false : "no docker command here, or one with the docker-mcp plugin" },
    async () => {
      const connection = connectionFor("docker", { command: "docker", args: ["mcp", "gateway", "run"] });
      try {
        const { message, state } = await connectFailure(connection);
        assert.match(
          message,
          /this docker has no `mcp` command: Docker's MCP Toolkit \(its docker-mcp plugin\) is not installed/,
        );
        assert.match(message, /github\.com\/docker\/mcp-gateway/);
        // Given up at once: a restart would fail the same way.
        assert.equal(state, "gaveUp");
      } finally {
        await connection.close();
      }
    },
  );

  test("docker refused its daemon's socket, in docker 29's words too: said so, with the docker group; not restarted", async () => {
    for (const socket of ["Docker daemon socket", "docker API"]) {
      const said = `docker: permission denied while trying to connect to the ${socket} at unix:///var/run/docker.sock`;
      const entry = { command: "sh", args: ["-c", `echo '${said}' >&2; exit 125`] };
      const { message, state } = await connectFailure(connectionFor("docker", entry));
      assert.match(
        message,
        /docker may not use the Docker daemon's socket \(permission denied\); add your user to the docker/,
      );
      assert.equal(state, "gaveUp", socket);
    }
  });

  const docker = spawnSync("sh", ["-c", "command -v docker && command -v bwrap"]).status === 0;
  test(
    'docker refused its daemon\'s socket by the sandbox: said so, with "sandbox": false, not the docker group',
    { skip: docker ? false : "no docker or bubblewrap here" },
    async () => {
      const home = tempDir("mcp-bridge-docker-sandbox-");
      const scope = { servers: [], agentDir: home.dir, projectRoot: REPO_ROOT, env: process.env };
      const connection = connectionFor(
        "boxed",
        { command: "docker", args: ["ps"], sandbox: true },
        {
          sandbox: (endpoint) => stdioSandbox(connection.config, true, endpoint, scope),
        },
      );
      try {
        const { message } = await connectFailure(connection);
        assert.doesNotMatch(message, /docker group/, message);
        assert.match(message, /the sandbox keeps docker from the Docker daemon's socket/, message);
      } finally {
        await sandboxIdle();
        home.cleanup();
      }
    },
  );

  test(
    "bubblewrap refused a namespace (user namespaces restricted): said it is the sandbox, not the entry's command",
    { skip: spawnSync("sh", ["-c", "command -v bwrap"]).status === 0 ? false : "no bubblewrap here" },
    async () => {
      const home = tempDir("mcp-bridge-bwrap-refused-");
      // A bubblewrap that fails as Ubuntu's (24.04 and later) does, where AppArmor restricts user namespaces.
      const fake = `#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n`;
      writeFileSync(path.join(home.dir, "bwrap"), fake, { mode: 0o755 });
      const scope = { servers: [], agentDir: home.dir, projectRoot: REPO_ROOT, env: process.env };
      const env = { PATH: `${home.dir}:${process.env.PATH}` };
      const entry = { command: process.execPath, args: ["-e", "0"], sandbox: true, env };
      const connection = connectionFor("boxed", entry, {
        sandbox: (endpoint) => stdioSandbox(connection.config, true, endpoint, scope),
      });
      try {
        const { message, state } = await connectFailure(connection);
        assert.match(message, /bubblewrap could not set up the sandbox.*user namespaces/, message);
        assert.doesNotMatch(message, /check `command`/, message);
        assert.equal(state, "gaveUp");
        // Bubblewrap's other failures are no restricted namespaces, and may pass (a mount point another start made).
        const other = "bwrap: Can't create file at /p/.pi/extensions: Read-only file system";
        assert.equal(permanentLaunchFailure(1, other, undefined, true), undefined);
      } finally {
        await sandboxIdle();
        home.cleanup();
      }
    },
  );

  test("on Windows, where a command runs through `cmd /c`, cmd's 9009 is a command not found, as a shell's 127", () => {
    const said = "'uvx' is not recognized as an internal or external command,\r\noperable program or batch file.";
    const reason = "the program 'uvx' it runs was not found (exit code 9009)";
    assert.deepEqual(permanentLaunchFailure(9009, said), { reason });
  });

  test("a script whose `#!/usr/bin/env node` finds no node on the PATH its `env` sets: names node, not its command", async () => {
    const tmp = tempDir();
    after(() => tmp.cleanup());
    const script = path.join(tmp.dir, "server");
    writeFileSync(script, "#!/usr/bin/env node\n", { mode: 0o755 });
    const entry = { command: script, env: { PATH: path.join(tmp.dir, "bin") } };
    const { message, state } = await connectFailure(connectionFor("env", entry));
    assert.match(message, /^MCP server 'env': the program 'node' it runs was not found \(exit code 127\)/);
    assert.equal(state, "gaveUp");
  });

  test("an npx package written so npm cannot read it (a scope alone, a version range mistyped): said so, not retried", async () => {
    for (const spec of ["@modelcontextprotocol", "@modelcontextprotocol/server-memory@^^1"]) {
      const { message, state } = await connectFailure(connectionFor("npm", { command: "npx", args: ["-y", spec] }));
      assert.match(message, /^MCP server 'npm': npm cannot read the package it runs .*\(npm EINVALIDTAGNAME\); check/);
      assert.equal(state, "gaveUp");
    }
  });

  // A scope copied without its @ is a GitHub repository to npm: npm 11 runs git, which fails, and exits with git's 128
  // saying nothing, so the error only said to check the entry and run it in a terminal (where it says nothing either).
  test("an npx package written `owner/name` (a scope without its @), which npm takes for a GitHub repository: said so, not retried", async () => {
    const args = ["-y", "modelcontextprotocol/server-memory"];
    const { message, state } = await connectFailure(connectionFor("npm", { command: "npx", args }));
    assert.match(
      message,
      /^MCP server 'npm': npx took its package 'modelcontextprotocol\/server-memory' for the GitHub repository github\.com\/modelcontextprotocol\/server-memory, which git could not fetch \(the process exited with code 128 after [\d.]+ s\)/,
    );
    assert.match(message, /"@modelcontextprotocol\/server-memory"/);
    assert.equal(state, "gaveUp");
  });

  test("an npx package written with its flags in one string: npm takes it for a folder; said so, not retried", async () => {
    const args = ["-y", "@modelcontextprotocol/server-memory --port 3000"];
    const { message, state } = await connectFailure(connectionFor("npm", { command: "npx", args }));
    assert.match(
      message,
      /^MCP server 'npm': npx took its package for a folder, '\S+server-memory --port 3000', which has/,
    );
    assert.match(message, /write the package's name alone as a string of `args`/);
    assert.equal(state, "gaveUp");
  });

  test("`npx <package>` without -y, which npx may not ask to install without a terminal: said so, with the fix", () => {
    const said = `npm error npx canceled due to missing packages and no YES option: ["@modelcontextprotocol/server-gdrive@2025.1.14"]`;
    assert.deepEqual(permanentLaunchFailure(1, said), {
      reason: "npx would install its package only once asked, and without a terminal it cannot ask (no `-y`)",
      fix: 'add "-y" to `args`, before the package',
    });
  });

  test("npx whose npm cache holds files owned by root (after a `sudo npm`): npm's own fix is given; not an ordinary crash", () => {
    const said = [
      "npm error code EACCES",
      "npm error syscall mkdir",
      "npm error path /Users/me/.npm/_cacache/content-v2/sha512/ab",
      "npm error errno -13",
      "npm error",
      "npm error Your cache folder contains root-owned files, due to a bug in previous versions of npm which has since been addressed.",
      "npm error",
      "npm error To permanently fix this problem, please run:",
      'npm error   sudo chown -R 501:20 "/Users/me/.npm"',
    ].join("\n");
    assert.deepEqual(permanentLaunchFailure(243, said), {
      reason: "npx could not install its package: npm's cache folder holds files owned by root (npm EACCES)",
      fix: 'run `sudo chown -R 501:20 "/Users/me/.npm"` in a terminal, as npm says, then reconnect (`/mcp reconnect`)',
    });
  });

  test("npx whose registry refuses the package (npm E401, E403: a private one not signed in to): said so; not retried", async () => {
    const tmp = tempDir();
    after(() => tmp.cleanup());
    for (const status of [401, 403]) {
      const registry = createServer((_req, res) => res.writeHead(status).end("{}"));
      await new Promise<void>((resolve) => registry.listen(0, "127.0.0.1", resolve));
      try {
        const { port } = registry.address() as AddressInfo;
        const env = {
          npm_config_registry: `http://127.0.0.1:${port}/`,
          npm_config_cache: path.join(tmp.dir, `${status}`),
        };
        const entry = { command: "npx", args: ["-y", "@acme/private-mcp"], env };
        const { message, state } = await connectFailure(connectionFor("private", entry));
        assert.match(
          message,
          new RegExp(`^MCP server 'private': the npm registry refused npx its package \\(npm E${status}`),
        );
        assert.match(
          message,
          /`npm login --registry=<its URL>`.*add that variable to `env` \("NPM_TOKEN": "\$\{NPM_TOKEN\}"\)/,
        );
        assert.equal(state, "gaveUp");
      } finally {
        registry.close();
      }
    }
  });

  test("npm E404, which npm also answers for a private package npx is not signed in to see: both causes are named", () => {
    const said = "npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/@acme%2fprivate-mcp";
    assert.match(
      permanentLaunchFailure(1, said)?.fix ?? "",
      /^check the package's name .*; if it is private, sign in .*add that variable to `env`/,
    );
  });

  test("a long line that says it needs a newer Node.js (a JSON log line): quoted within bounds", () => {
    const line = `{"level":60,"msg":"This server requires Node.js 22 or later","stack":"${"at x (/a.js:1:1) ".repeat(200)}"}`;
    const { reason } = permanentLaunchFailure(1, line)!;
    assert.match(reason, /^it needs a newer Node\.js than the one it ran on: it said "\{\\"level\\":60,/);
    assert.ok(reason.length < 600, `${reason.length} characters`);
  });

  test("a script the entry names that is not there (Node, Python): its path, where a relative one was taken from", async () => {
    const tmp = tempDir();
    try {
      const relative = connectionFor(
        "built",
        { command: process.execPath, args: ["build/index.js"] },
        { projectRoot: tmp.dir },
      );
      const { message, state } = await connectFailure(relative);
      assert.match(
        message,
        new RegExp(
          `^MCP server 'built': the script it runs, ${path.join(tmp.dir, "build", "index.js")}, does not exist \\(the process exited with code 1 after [\\d.]+ s\\); "build/index.js" is taken from ${tmp.dir}, where the server starts .*: write the script's absolute path in \`args\` of 'built'`,
        ),
      );
      assert.equal(state, "gaveUp", "not retried: the file will not appear by itself");
      const python = connectionFor("py", { command: "python3", args: [path.join(tmp.dir, "server.py")] });
      assert.match(
        (await connectFailure(python)).message,
        /the script it runs, .*server\.py, does not exist .*check `args` of 'py'/,
      );
      // A shell's `$HOME`, which no shell replaced.
      const shell = connectionFor(
        "home",
        { command: process.execPath, args: ["$HOME/mcp/server.js"] },
        { projectRoot: tmp.dir },
      );
      assert.match(
        (await connectFailure(shell)).message,
        /does not exist .*; \$HOME reached it as written \(no shell reads the entry\): write "\$\{HOME\}\/mcp\/server\.js" in `args` of 'home'/,
      );
      // A project reached through a symlink (macOS's /tmp is /private/tmp): the process names the script by its real path.
      const link = path.join(tmp.dir, "link");
      symlinkSync(tmp.dir, link);
      const linked = connectionFor(
        "built",
        { command: process.execPath, args: ["build/index.js"] },
        { projectRoot: link },
      );
      assert.match(
        (await connectFailure(linked)).message,
        /^MCP server 'built': the script it runs, .*, does not exist/,
      );
    } finally {
      tmp.cleanup();
    }
  });

  test("a server whose code imports a package not installed for it (Node ESM and CommonJS, Python): named, with what to do", async () => {
    const tmp = tempDir();
    try {
      const esm = path.join(tmp.dir, "server.mjs");
      writeFileSync(esm, 'import "@example-not-installed/mcp-sdk";\n');
      const cjs = path.join(tmp.dir, "server.cjs");
      writeFileSync(cjs, 'require("example-not-installed-sdk");\n');
      const py = path.join(tmp.dir, "server.py");
      writeFileSync(py, "import example_not_installed_mcp\n");
      const failure = async (name: string, command: string, script: string) =>
        (await connectFailure(connectionFor(name, { command, args: [script] }))).message;
      assert.match(
        await failure("esm", process.execPath, esm),
        new RegExp(
          `^MCP server 'esm': ${esm} imports the package '@example-not-installed/mcp-sdk', which is not installed for it \\(the process exited .*\\); run \`npm install\` in the server's folder .*Restarting would not help`,
        ),
      );
      assert.match(
        await failure("cjs", process.execPath, cjs),
        /^MCP server 'cjs': its code imports the package 'example-not-installed-sdk', which is not installed for it/,
      );
      assert.match(
        await failure("py", "python3", py),
        /^MCP server 'py': the Python it runs lacks the module 'example_not_installed_mcp' the server imports .*its virtualenv's python/,
      );
      // `python -m <module>` names a module that is not there without quotes.
      assert.match(
        (await connectFailure(connectionFor("pym", { command: "python3", args: ["-m", "example_not_installed_mcp"] })))
          .message,
        /^MCP server 'pym': the Python it runs lacks the module 'example_not_installed_mcp' .*its virtualenv's python/,
      );
    } finally {
      tmp.cleanup();
    }
  });

  // @modelcontextprotocol/server-pdf without `--stdio`: it listens on port 3001 and never answers on stdio. Each restart
  // waited the whole `initTimeout` again, and the error only said to raise it.
  test("a program that serves MCP over HTTP where it was started as a stdio server: said so, with the URL; not restarted", async () => {
    const tmp = tempDir();
    const starts = path.join(tmp.dir, "starts");
    try {
      const { message, state } = await connectFailure(
        connectionFor("pdf", {
          command: "sh",
          args: [
            "-c",
            `echo >> '${starts}'; echo '[pdf] Ready'; echo 'MCP server listening on http://localhost:3001/mcp'; exec sleep 30`,
          ],
          initTimeout: 1000,
        }),
      );
      assert.match(
        message,
        /^MCP server 'pdf': it serves MCP over HTTP, not over stdio where it was started \(it said "MCP server listening on http:\/\/localhost:3001\/mcp"\), and had not answered the handshake after [\d.]+ s, so it was stopped; give it the option that makes it speak over stdio \(its README names it, often `--stdio`\) in `args` of 'pdf' in .*, or start it yourself and connect to it by `"url": "http:\/\/localhost:3001\/mcp"`\. Restarting would not help, so it was not retried/,
      );
      assert.equal(state, "gaveUp");
      assert.equal(readFileSync(starts, "utf8"), "\n", "one start");
    } finally {
      tmp.cleanup();
    }
  });

  // A Python server on the MCP SDK's FastMCP started with its HTTP transport: Uvicorn's own lines, on stderr, name no
  // MCP and no path, and the wait ended as a plain timeout, restarted to wait as long again.
  test("a Python server run by Uvicorn (HTTP) where it was started as a stdio server: said so; not restarted", async () => {
    const uvicorn = [
      "INFO:     Started server process [4242]",
      "INFO:     Waiting for application startup.",
      "INFO:     Application startup complete.",
      "INFO:     Uvicorn running on http://127.0.0.1:8000 (Press CTRL+C to quit)",
    ];
    const script = `${uvicorn.map((line) => `echo '${line}' >&2`).join("; ")}; exec sleep 30`;
    const entry = { command: "sh", args: ["-c", script], initTimeout: 1000 };
    const { message, state } = await connectFailure(connectionFor("py", entry));
    assert.match(
      message,
      /^MCP server 'py': it serves MCP over HTTP, not over stdio where it was started \(it said "INFO: {5}Uvicorn running on http:\/\/127\.0\.0\.1:8000 \(Press CTRL\+C to quit\)"\)/,
    );
    assert.equal(state, "gaveUp");
  });

  // mcp-remote, a stdio proxy to a remote server from another client's README, waits for a sign-in in a browser.
  test("an entry that runs mcp-remote and fails: the error gives the remote entry the bridge reaches itself", async () => {
    const tmp = tempDir();
    try {
      const proxy = path.join(tmp.dir, "mcp-remote");
      writeFileSync(proxy, "#!/bin/sh\necho 'Authentication required. Waiting for authorization...' >&2\nexit 1\n", {
        mode: 0o755,
      });
      const { message } = await connectFailure(
        connectionFor("linear", { command: proxy, args: ["https://mcp.example.com/mcp", "--header", "X-Key: k"] }),
      );
      assert.match(
        message,
        /\. It runs mcp-remote to reach https:\/\/mcp\.example\.com\/mcp, which mcp-bridge connects to itself \(and signs in to with `\/mcp auth` where it asks\): write the entry as \{"url":"https:\/\/mcp\.example\.com\/mcp"\}, with its `--header` values as `headers`\nLast stderr lines:\n {2}Authentication required/,
      );
    } finally {
      tmp.cleanup();
    }
  });

  test("an entry that runs mcp-remote waiting for a browser sign-in: stopped at its initTimeout and not restarted (each start would begin another)", async () => {
    const tmp = tempDir();
    try {
      const proxy = path.join(tmp.dir, "mcp-remote");
      const starts = path.join(tmp.dir, "starts");
      const waits = [
        `echo start >> '${starts}'`,
        "echo 'Please authorize this client by visiting:' >&2",
        "echo 'https://auth.example.com/authorize?response_type=code&client_id=abc&state=s1' >&2",
        "echo 'Could not open a browser automatically. Please copy and paste the URL above into your browser.' >&2",
        "exec sleep 60",
      ];
      writeFileSync(
        proxy,
        `#!/bin/sh
${waits.join("\n")}\n`,
        { mode: 0o755 },
      );
      const entry = { command: proxy, args: ["https://mcp.example.com/mcp"], initTimeout: 1500 };
      const { message, state } = await connectFailure(connectionFor("linear", entry));
      assert.match(
        message,
        /^MCP server 'linear': mcp-remote had waited [\d.]+ s for a sign-in in a browser at https:\/\/auth\.example\.com\/authorize, which pi cannot show, so it was stopped; each start would begin another sign-in, so it was not restarted\. It runs mcp-remote to reach https:\/\/mcp\.example\.com\/mcp, which mcp-bridge connects to itself/,
      );
      assert.doesNotMatch(message.split("\n")[0]!, /state=s1/, "the page, not the sign-in's own query");
      assert.equal(state, "gaveUp");
      assert.equal(readFileSync(starts, "utf8"), "start\n", "started once");
    } finally {
      tmp.cleanup();
    }
  });

  test("what says a program serves MCP over HTTP, and what does not (a sign-in's callback server, a port for something else)", () => {
    assert.deepEqual(servesHttp(["Streamable HTTP server listening on port 3000"]), {
      line: "Streamable HTTP server listening on port 3000",
    });
    assert.equal(servesHttp(["  MCP SSE server running at http://0.0.0.0:8808/sse."])?.url, "http://0.0.0.0:8808/sse");
    assert.equal(servesHttp(["OAuth callback server running at http://127.0.0.1:5678/oauth/callback"]), undefined);
    assert.equal(servesHttp(["Dashboard listening on http://localhost:9000"]), undefined);
    assert.equal(servesHttp(["Connecting to remote server: https://example.com/mcp"]), undefined);
    // server-everything's `sse` mode says what it serves on one line and its port on the next.
    const everything = ["Starting SSE server...", "Server is running on port 3001"];
    assert.deepEqual(servesHttp(everything), { line: "Server is running on port 3001" });
    assert.equal(servesHttp(["Starting SSE server...", "Server is running on stdio"]), undefined);
    assert.equal(servesHttp(["MCP server starting...", "Dashboard running on port 8080"]), undefined);
  });

  test("a server that says it serves MCP on stdio, and names a port of something else, is not one that serves HTTP", async () => {
    const said = "MCP server running on stdio, waiting for the browser extension on port 9009";
    const entry = {
      command: "sh",
      args: ["-c", `echo '${said}' >&2; exec sleep 30`],
      initTimeout: 1000,
      maxRestarts: 0,
    };
    const { message } = await connectFailure(connectionFor("browser", entry));
    assert.match(message, /^MCP server 'browser': no answer to the MCP handshake after/);
  });

  test("a command line longer than the system allows (E2BIG) is spawned once and not retried", async () => {
    const project = tempDir("mcp-bridge-e2big-project-");
    const agentDir = tempDir("mcp-bridge-e2big-agent-");
    // Restarts quick and many, so a retry would show within the wait below.
    writeFileSync(
      path.join(agentDir.dir, "mcp.json"),
      JSON.stringify({
        mcpServers: {
          huge: {
            command: process.execPath,
            args: ["-e", "setInterval(() => {}, 1000)", TOO_LONG],
            maxRestarts: 5,
            reconnect: { initialDelay: 10, maxDelay: 20 },
          },
        },
      }),
    );
    // Another extension, loaded first: what the bridge announces on pi's bus about the server.
    const recorder = busRecorder(project.dir, ["mcp.connecting", "mcp.error", "mcp.disconnected", "mcp.local.spawned"]);
    const { events } = recorder;
    // The transport's spawn, counted and passed through: each call is one launch of the server's command.
    const realSpawn = childProcess.spawn;
    let launches = 0;
    childProcess.spawn = ((command: string, ...rest: unknown[]) => {
      if (command === process.execPath && JSON.stringify(rest[0] ?? []).includes("setInterval")) launches++;
      return (realSpawn as (...args: unknown[]) => unknown)(command, ...rest);
    }) as typeof childProcess.spawn;
    syncBuiltinESMExports();
    const originalCwd = process.cwd();
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    const pi = await startInProcessPi({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [recorder.path, EXTENSION_DIR],
    });
    try {
      await pi.session.bindExtensions({});
      // Without a UI pi's session starts once every server has connected or failed; the failure is announced with
      // the wait before the next attempt (none, here).
      await waitFor(
        () => events().some((e) => e.channel === "mcp.error"),
        "the bridge to report the failure",
        30_000,
      ).catch((error: Error) => assert.fail(`${error.message}; events: ${JSON.stringify(events()).slice(0, 3000)}`));
      const errors = events().filter((e) => e.channel === "mcp.error");
      assert.equal(errors.length, 1, JSON.stringify(errors));
      assert.match(String(errors[0]!.payload.error), /E2BIG/);
      assert.equal(errors[0]!.payload.retryIn, null, "no attempt follows");
      assert.equal(events().filter((e) => e.channel === "mcp.connecting").length, 1, "one attempt announced");
      assert.equal(events().filter((e) => e.channel === "mcp.local.spawned").length, 0, "nothing ran");
      assert.equal(launches, 1, "the command was launched once");
    } finally {
      await pi.close();
      childProcess.spawn = realSpawn;
      syncBuiltinESMExports();
      process.chdir(originalCwd);
      project.cleanup();
      agentDir.cleanup();
    }
  });
});
