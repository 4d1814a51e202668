/**
 * What the user sees of sandboxed local servers: `/mcp` marks one that runs sandboxed with 🛡 and, in its details, says
 * what its sandbox allows and what it refused. Real pi (in-process, faux model) starts the real probe server, whose
 * tool tries to read a planted `~/.ssh` key, write outside its working directory, connect to a port on 127.0.0.1 and
 * CONNECT through the sandbox's proxy to a host nobody allowed; each refusal must reach `/mcp` and the server's log. The
 * same server with `"sandbox": false` shows no mark and records no refusal. Needs bubblewrap, socat and ripgrep.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, symlinkSync } from "node:fs";
import { EXTENSION_DIR, REPO_ROOT, tempDir } from "./helpers.ts";
import { loopbackListener, PLANTED_KEY, PROBE, sandboxBed } from "./sandbox-bed.ts";
import { startInProcessPi } from "./pi-harness.ts";
import { PI_CLI } from "./tmux.ts";

/** A host no sandbox here allows; the proxy refuses it without looking it up. */
const DENIED_HOST = "denied.example.com:443";

describe("sandboxed servers in /mcp", { timeout: 180_000 }, () => {
  const bed = sandboxBed("sandbox-show");
  const { project, outside, agentDir, secret } = bed;
  let listener: Awaited<ReturnType<typeof loopbackListener>>;
  let port = 0;

  before(async () => {
    bed.setUp();
    listener = await loopbackListener();
    port = listener.port;
  });

  after(async () => {
    await listener.close();
    bed.tearDown();
  });

  /** Calls the probe tool in a fresh pi, then runs `/mcp`: the tool's answer and what `/mcp` printed. */
  async function probeThenList(
    sandbox: boolean,
    tag: string,
  ): Promise<{ result: string; listing: string; tested: string }> {
    writeFileSync(
      path.join(agentDir, "mcp.json"),
      JSON.stringify({
        exposure: "direct",
        mcpServers: { probe: { command: process.execPath, args: [PROBE], sandbox, autoApprove: ["*"] } },
      }),
    );
    const pi = await startInProcessPi({ cwd: project, agentDir, extensionPaths: [EXTENSION_DIR] });
    try {
      await pi.session.bindExtensions({});
      const args = { read: secret, write: [path.join(outside, `${tag}.txt`)], port, proxy: DENIED_HOST };
      pi.faux.setResponses([
        fauxAssistantMessage([fauxToolCall("mcp_probe_probe", args)], { stopReason: "toolUse" }),
        fauxAssistantMessage("done"),
      ]);
      await pi.session.prompt("call the probe");
      const message = pi.session.messages.filter((m) => (m as { role: string }).role === "toolResult").at(-1);
      const result = ((message as unknown as { content: Array<{ text?: string }> })?.content ?? [])
        .map((c) => c.text ?? "")
        .join("\n");
      const printed: string[] = [];
      const { log } = console;
      console.log = (...parts: unknown[]) => printed.push(parts.join(" "));
      try {
        await pi.session.prompt("/mcp");
      } finally {
        console.log = log;
      }
      const listing = printed.join("\n");
      printed.length = 0;
      console.log = (...parts: unknown[]) => printed.push(parts.join(" "));
      try {
        await pi.session.prompt("/mcp test probe");
      } finally {
        console.log = log;
      }
      return { result, listing, tested: printed.join("\n") };
    } finally {
      await pi.close();
    }
  }

  const serverLog = () => readFileSync(path.join(agentDir, "mcp-bridge", "servers", "probe.log"), "utf8");

  /** What `/mcp` prints in a fresh pi with these servers configured. */
  async function listingOf(mcpServers: Record<string, unknown>): Promise<string> {
    writeFileSync(path.join(agentDir, "mcp.json"), JSON.stringify({ mcpServers }));
    const pi = await startInProcessPi({ cwd: project, agentDir, extensionPaths: [EXTENSION_DIR] });
    const printed: string[] = [];
    const { log } = console;
    try {
      await pi.session.bindExtensions({});
      console.log = (...parts: unknown[]) => printed.push(parts.join(" "));
      await pi.session.prompt("/mcp");
    } finally {
      console.log = log;
      await pi.close();
    }
    return printed.join("\n");
  }

  test("a sandboxed server: 🛡 in the table, its sandbox's rules and each refusal in its details and its log", async () => {
    const { result, listing, tested } = await probeThenList(true, "boxed");
    assert.match(tested, /MCP server 'probe' works: .*\n(.*\n)* {2}sandboxed: The sandbox can run here/, tested);
    assert.match(result, /^read: failed/m, result);
    assert.match(result, /^connect: failed/m, result);
    assert.match(result, /^proxy: HTTP\/1\.1 403/m, result);
    assert.match(listing, /^ {2}probe 🛡 +🟢/m, listing);
    assert.match(listing, /🛡 sandboxed\n/, listing);
    assert.match(listing, new RegExp(`writes: ${project}, /tmp/mcp-sandbox-probe-`), listing);
    assert.match(listing, /denied reads: ~\/\.ssh, ~\/\.aws/, listing);
    assert.match(listing, /network hosts: none/, listing);
    assert.match(listing, /refused \d+ times; the last:/, listing);
    assert.match(listing, new RegExp(`refused a read of ${secret}`), listing);
    assert.match(
      listing,
      new RegExp(`refused a write to ${outside}/boxed\\.txt; to allow it, add it to sandbox\\.filesystem\\.allowWrite`),
      listing,
    );
    assert.match(
      listing,
      new RegExp(`refused a connection to 127\\.0\\.0\\.1:${port}; a sandboxed server reaches only the hosts in`),
      listing,
    );
    assert.match(
      listing,
      /refused a connection to denied\.example\.com:443; to allow it, add "denied\.example\.com" to sandbox\.network\.allowedDomains/,
      listing,
    );
    assert.doesNotMatch(listing, new RegExp(PLANTED_KEY));
    if (process.env.SHOW_LISTING) console.error(listing);
    const log = serverLog();
    for (const kind of ["read", "write", "network"])
      assert.match(log, new RegExp(`"event":"sandbox\\.refused".*"kind":"${kind}"`), log);
  });

  test("a host another sandboxed server denies: the refusal says so, not to add the host to allowedDomains", async () => {
    const probe = (network: Record<string, unknown>) => ({
      command: process.execPath,
      args: [PROBE],
      autoApprove: ["*"],
      sandbox: { network },
    });
    const mcpServers = {
      guard: probe({ deniedDomains: ["*.example.com"] }),
      probe: probe({ allowedDomains: [DENIED_HOST.replace(/:\d+$/, "")] }),
    };
    writeFileSync(path.join(agentDir, "mcp.json"), JSON.stringify({ exposure: "direct", mcpServers }));
    const pi = await startInProcessPi({ cwd: project, agentDir, extensionPaths: [EXTENSION_DIR] });
    const printed: string[] = [];
    const { log } = console;
    try {
      await pi.session.bindExtensions({});
      pi.faux.setResponses([
        fauxAssistantMessage([fauxToolCall("mcp_probe_probe", { proxy: DENIED_HOST })], { stopReason: "toolUse" }),
        fauxAssistantMessage("done"),
      ]);
      await pi.session.prompt("call the probe");
      console.log = (...parts: unknown[]) => printed.push(parts.join(" "));
      await pi.session.prompt("/mcp");
    } finally {
      console.log = log;
      await pi.close();
    }
    const listing = printed.join("\n");
    assert.match(listing, /refused a connection to denied\.example\.com:443 \(host is on the deny list\)/, listing);
    assert.doesNotMatch(listing, /add "denied\.example\.com" to sandbox\.network\.allowedDomains/, listing);
  });

  test("a sandboxed server that exits when it cannot reach a host: its error names the sandbox, not the network", async () => {
    const fetcher = {
      command: process.execPath,
      args: ["--input-type=module", "-e", `await fetch("http://127.0.0.1:${port}/")`],
      sandbox: true,
      maxRestarts: 0,
    };
    const listing = await listingOf({ fetcher });
    assert.match(
      listing,
      new RegExp(
        `could not reach 127\\.0\\.0\\.1:${port} \\([^)]*\\), as its output says, .*: the sandbox refused a connection to 127`,
      ),
      listing,
    );
    assert.doesNotMatch(listing, /check that this machine reaches it/, listing);
  });

  test("a directory allowWrite lists that is not there yet: the refusal says to make it, not to add it to allowWrite", async () => {
    const cache = path.join(bed.home, ".cache", "made-later");
    mkdirSync(path.dirname(cache), { recursive: true });
    const maker = {
      command: process.execPath,
      args: ["-e", `require("fs").mkdirSync(${JSON.stringify(cache)})`],
      sandbox: { filesystem: { allowWrite: ["~/.cache/made-later"] } },
      maxRestarts: 0,
    };
    const listing = await listingOf({ maker });
    assert.match(
      listing,
      /refused a write to \S+made-later, which sandbox\.filesystem\.allowWrite lets it write but/,
      listing,
    );
    assert.doesNotMatch(listing, /made-later; to allow it, add it to sandbox\.filesystem\.allowWrite/, listing);
  });

  test("a sandboxed server whose script the sandbox hides: told so, not that the script does not exist", async () => {
    // The script is there, under ~/.ssh, which a sandbox does not let a server read.
    const script = path.join(path.dirname(secret), "server.mjs");
    writeFileSync(script, "process.exit(0);\n");
    const hidden = { command: process.execPath, args: [script], sandbox: true, maxRestarts: 0 };
    const listing = await listingOf({ hidden });
    assert.match(
      listing,
      /the script it runs, .*server\.mjs, cannot be found inside its sandbox .*under a path the sandbox denies .*or set "sandbox": false for 'hidden' in /,
      listing,
    );
    assert.doesNotMatch(listing, /does not exist/, listing);
  });

  test('"sandbox": false: no 🛡, no sandbox lines, no refusal recorded (the same calls succeed)', async () => {
    const refusals = () =>
      serverLog()
        .split("\n")
        .filter((line) => line.includes('"sandbox.refused"')).length;
    const before = refusals();
    const { result, listing, tested } = await probeThenList(false, "open");
    assert.doesNotMatch(tested, /sandbox/, tested);
    assert.match(result, new RegExp(`^read: ok ${PLANTED_KEY}`, "m"), result);
    assert.match(listing, /^ {2}probe +🟢/m, listing);
    assert.doesNotMatch(listing, /🛡|sandbox/, listing);
    assert.equal(refusals(), before, "no refusal logged");
  });
});

describe("a sandboxed server where bubblewrap is missing", { timeout: 180_000 }, () => {
  const home = tempDir("mcp-bridge-sandbox-nobwrap-");
  // A PATH with what pi, the sandbox's check (it asks `which`) and the probe need, but no bwrap.
  const bin = path.join(home.dir, "bin");
  const agentDir = path.join(home.dir, "agent");
  const marker = path.join(home.dir, "probe-started");

  before(() => {
    mkdirSync(bin);
    symlinkSync(process.execPath, path.join(bin, "node"));
    for (const tool of ["which", "socat", "rg", "sh", "bash"]) {
      const found = ["/usr/bin", "/bin", "/usr/local/bin"].map((d) => path.join(d, tool)).find((f) => existsSync(f));
      if (found) symlinkSync(found, path.join(bin, tool));
    }
    mkdirSync(agentDir);
    writeFileSync(
      path.join(agentDir, "mcp.json"),
      JSON.stringify({
        mcpServers: {
          probe: { command: process.execPath, args: [PROBE], sandbox: true, env: { SANDBOX_PROBE_MARKER: marker } },
        },
      }),
    );
  });

  after(() => home.cleanup());

  /** `pi -p <command>` as a child process with that PATH: its exit code and all it wrote. */
  async function piPrint(command: string, ...flags: string[]): Promise<{ code: number | null; output: string }> {
    const child = spawn(process.execPath, [PI_CLI, "--no-session", "-e", EXTENSION_DIR, ...flags, "-p", command], {
      cwd: home.dir,
      env: {
        HOME: home.dir,
        PATH: bin,
        PI_CODING_AGENT_DIR: agentDir,
        PI_OFFLINE: "1",
        PI_MCP_STARTUP_BUDGET_MS: "60000",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    clearTimeout(timer);
    if (process.env.SHOW_LISTING) console.error(output);
    return { code, output };
  }

  test('pi -p "/mcp": the server is not started, the output names bubblewrap, pi exits 0', async () => {
    const { code, output } = await piPrint("/mcp");
    assert.equal(code, 0, output);
    assert.equal(existsSync(marker), false, "the probe server never started");
    assert.match(output, /probe 🛡/, output);
    assert.match(output, /none can be set up here, so it was not started/, output);
    assert.match(output, /bubblewrap \(bwrap\) not installed\. Install bubblewrap/, output);
    assert.doesNotMatch(output, /socat not installed|ripgrep \(rg\) not found/, "only bwrap is missing");
  });

  test("a server sandboxed by the user's default: the message names the file that sets it, not the server's", async () => {
    const flagFile = path.join(home.dir, "flag.json");
    const probe = { command: process.execPath, args: [PROBE], env: { SANDBOX_PROBE_MARKER: marker } };
    writeFileSync(flagFile, JSON.stringify({ mcpServers: { probe } }));
    const userFile = path.join(agentDir, "mcp.json");
    const before = readFileSync(userFile, "utf8");
    writeFileSync(userFile, JSON.stringify({ sandbox: true, mcpServers: {} }));
    try {
      const { output } = await piPrint("/mcp", "--mcp-config", flagFile);
      assert.equal(existsSync(marker), false, "the probe server never started");
      assert.match(output, /none can be set up here/, output);
      assert.doesNotMatch(output, /"sandbox" in flag config/, output);
      assert.match(output, /it asks for a sandbox \(the top-level "sandbox" of your config/, output);
    } finally {
      writeFileSync(userFile, before);
    }
  });

  test("a project's server sandboxed by the user's default: the message does not tell to set the \"sandbox\": false it has", async () => {
    const projectFile = path.join(home.dir, ".pi", "mcp.json");
    mkdirSync(path.dirname(projectFile), { recursive: true });
    const own = { command: process.execPath, args: [PROBE], sandbox: false, env: { SANDBOX_PROBE_MARKER: marker } };
    writeFileSync(projectFile, JSON.stringify({ mcpServers: { own } }));
    const userFile = path.join(agentDir, "mcp.json");
    const before = readFileSync(userFile, "utf8");
    writeFileSync(userFile, JSON.stringify({ sandbox: true, mcpServers: {} }));
    try {
      const { output } = await piPrint("/mcp trust own");
      assert.equal(existsSync(marker), false, "the server never started");
      assert.match(output, /none can be set up here/, output);
      assert.doesNotMatch(output, /set "sandbox": false for it/, output);
      assert.match(output, /top-level "sandbox"/, output);
    } finally {
      writeFileSync(userFile, before);
      rmSync(path.dirname(projectFile), { recursive: true, force: true });
    }
  });

  test('"/mcp test probe" says the sandbox cannot run here before it connects; "/mcp doctor" names bubblewrap', async () => {
    const tested = await piPrint("/mcp test probe");
    assert.equal(tested.code, 1, tested.output);
    assert.match(
      tested.output,
      /MCP server 'probe' runs sandboxed\. The sandbox cannot run here, so sandboxed servers are not started: bubblewrap \(bwrap\) not installed\. Install bubblewrap/,
      tested.output,
    );
    assert.equal(existsSync(marker), false, "the probe server never started");
    const doctor = await piPrint("/mcp doctor");
    assert.equal(doctor.code, 1, doctor.output);
    assert.match(
      doctor.output,
      /The sandbox cannot run here.*bubblewrap \(bwrap\) not installed\. Install bubblewrap/,
      doctor.output,
    );
  });
});

/**
 * `/mcp doctor`'s sandbox check run in a node process of its own, its output: `before` runs first (setpriv), `imports`
 * are loaded before it (a resolve hook), `env` is its environment (a PATH with a stand-in bubblewrap).
 */
async function doctorOutput(options: { before?: string[]; imports?: string[]; env?: NodeJS.ProcessEnv } = {}) {
  const script = `const m = await import("./src/pi/sandbox-check.ts"); console.log((await m.sandboxCheck()).text);`;
  const imports = (options.imports ?? []).flatMap((file) => ["--import", file]);
  const node = [process.execPath, "--import", "tsx", ...imports, "--input-type=module", "-e", script];
  const [command, ...args] = [...(options.before ?? []), ...node];
  const child = spawn(command!, args, {
    cwd: REPO_ROOT,
    env: options.env ?? process.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  await new Promise((resolve) => child.on("exit", resolve));
  clearTimeout(timer);
  return output;
}

test("where the sandbox library cannot be loaded, /mcp doctor says to reinstall the bridge, not to install bubblewrap", async () => {
  const home = tempDir("mcp-bridge-sandbox-nolib-");
  // A resolve hook that finds no sandbox library, as where it is missing from node_modules.
  const hook = path.join(home.dir, "no-library.mjs");
  const resolve = `export async function resolve(s,c,n){if(s==="@anthropic-ai/sandbox-runtime")throw new Error("Cannot find package");return n(s,c)}`;
  writeFileSync(
    hook,
    `import { register } from "node:module";\nregister(${JSON.stringify(`data:text/javascript,${resolve}`)});\n`,
  );
  const output = await doctorOutput({ imports: [hook] });
  home.cleanup();
  assert.match(
    output,
    /the sandbox library could not be loaded \(Cannot find package\)\. Reinstall the MCP bridge/,
    output,
  );
  assert.doesNotMatch(output, /Install bubblewrap/, output);
});

test("/mcp doctor passes on what the sandbox library warns of here (an old bubblewrap), not only that it can run", async () => {
  const dir = tempDir("mcp-bridge-sandbox-oldbwrap-");
  // A bubblewrap that says it is 0.4.0 and is the real one otherwise.
  writeFileSync(
    path.join(dir.dir, "bwrap"),
    `#!/bin/sh\n[ "$1" = --version ] && { echo "bubblewrap 0.4.0"; exit 0; }\nexec /usr/bin/bwrap "$@"\n`,
    { mode: 0o755 },
  );
  const output = await doctorOutput({ env: { ...process.env, PATH: `${dir.dir}:${process.env.PATH}` } });
  dir.cleanup();
  assert.match(output, /The sandbox can run here.*bubblewrap 0\.4\.0 .* is older than 0\.5\.0/, output);
});

test(
  "/mcp doctor as root without CAP_SETFCAP: the library's words on what to do, not to install tools that are there",
  {
    skip:
      process.getuid?.() === 0 && spawnSync("setpriv", ["--version"]).status === 0 ? false : "not root, or no setpriv",
  },
  async () => {
    const output = await doctorOutput({ before: ["setpriv", "--bounding-set", "-setfcap"] });
    assert.match(output, /The sandbox cannot run here.*CAP_SETFCAP.*or run as a non-root user/, output);
    assert.doesNotMatch(output, /Install bubblewrap/, output);
  },
);

test("/mcp doctor where bubblewrap may not make namespaces (Ubuntu 24.04's AppArmor): the sandbox cannot run, said so", async () => {
  const dir = tempDir("mcp-bridge-sandbox-userns-");
  // A bubblewrap that fails as Ubuntu's does where user namespaces are restricted; its version is the real one's.
  writeFileSync(
    path.join(dir.dir, "bwrap"),
    `#!/bin/sh\n[ "$1" = --version ] && exec /usr/bin/bwrap --version\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n`,
    { mode: 0o755 },
  );
  const output = await doctorOutput({ env: { ...process.env, PATH: `${dir.dir}:${process.env.PATH}` } });
  dir.cleanup();
  assert.match(output, /The sandbox cannot run here.*setting up uid map.*user namespaces are restricted/, output);
});
