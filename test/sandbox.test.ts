/**
 * Sandboxed local servers (`"sandbox": true`): a real server process, started by real pi, tries to read a planted
 * `~/.ssh` key, write outside its working directory, and connect to a port listening on 127.0.0.1. Sandboxed, each is
 * refused and a write inside its working directory works, but not to what another program there would run
 * (pi's `.pi`, a git hook); the same server with `"sandbox": false` succeeds at all of
 * it, so the test fails where the sandbox does not hold. Needs bubblewrap, socat and ripgrep (.ci/run installs them).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { commandLine, EXTENSION_DIR, isAlive, killIfAlive, REPO_ROOT, restoreEnv, waitFor } from "./helpers.ts";
import { callOnceInPi } from "./pi-harness.ts";
import { loopbackListener, PLANTED_KEY, PROBE, sandboxBed } from "./sandbox-bed.ts";
import { processTree, sandboxTempDirs } from "./tmux.ts";

/** pi's environment behind a company proxy that inspects TLS, as its users set it in their shell. */
const COMPANY_NETWORK = {
  https_proxy: "http://proxy.example.invalid:3128",
  npm_config_https_proxy: "http://proxy.example.invalid:3128",
  NODE_EXTRA_CA_CERTS: "/etc/company/ca.pem",
};

describe("sandboxed local servers", { timeout: 180_000 }, () => {
  const bed = sandboxBed("sandbox");
  const { project, outside, agentDir, secret } = bed;
  let listener: Awaited<ReturnType<typeof loopbackListener>>;

  before(async () => {
    bed.setUp();
    // What another program would run later: pi's project config and a git hook, inside the server's working directory.
    mkdirSync(path.join(project, ".pi"));
    mkdirSync(path.join(project, ".git", "hooks"), { recursive: true });
    listener = await loopbackListener();
  });

  after(async () => {
    await listener.close();
    bed.tearDown();
  });

  /** Runs `start` with pi's environment set as behind a company proxy that inspects TLS. */
  async function withCompanyNetwork<T>(start: () => Promise<T>): Promise<T> {
    const saved = { ...process.env };
    Object.assign(process.env, COMPANY_NETWORK);
    try {
      return await start();
    } finally {
      restoreEnv(saved);
    }
  }

  /** The probe server, sandboxed and working in `cwd` (pi's own where unset), called once through pi started in `piCwd`. */
  async function probeOnce(args: Record<string, unknown>, cwd?: string, piCwd = project): Promise<string> {
    const server = { command: process.execPath, args: [PROBE], sandbox: true, autoApprove: ["*"], ...(cwd && { cwd }) };
    writeFileSync(
      path.join(agentDir, "mcp.json"),
      JSON.stringify({ exposure: "direct", mcpServers: { probe: server } }),
    );
    const call = { cwd: piCwd, agentDir, extensionPaths: [EXTENSION_DIR], tool: "mcp_probe_probe", args };
    return (await callOnceInPi(call)).text;
  }

  async function probe(sandbox: boolean, tag: string, more: Record<string, unknown> = {}): Promise<string> {
    writeFileSync(
      path.join(agentDir, "mcp.json"),
      JSON.stringify({
        exposure: "direct",
        mcpServers: { probe: { command: process.execPath, args: [PROBE], sandbox, autoApprove: ["*"], ...more } },
      }),
    );
    const result = await callOnceInPi({
      cwd: project,
      agentDir,
      extensionPaths: [EXTENSION_DIR],
      tool: "mcp_probe_probe",
      args: {
        read: secret,
        write: [
          path.join(outside, `${tag}.txt`),
          path.join(project, `${tag}-inside.txt`),
          path.join(project, ".pi", `${tag}.ts`),
          path.join(project, ".git", "hooks", `${tag}-pre-commit`),
        ],
        port: listener.port,
      },
    });
    assert.equal(result.offered, true, `the probe server connected: ${result.text}`);
    return result.text;
  }

  test('"sandbox": true refuses the secret, the outside write and the loopback port; the inside write works', async () => {
    const before = listener.connections();
    const text = await withCompanyNetwork(() => probe(true, "boxed"));
    assert.match(text, /^read: failed/m, text);
    assert.doesNotMatch(text, new RegExp(PLANTED_KEY), "the key's content never reaches the model");
    assert.match(text, new RegExp(`^write ${outside}/boxed\\.txt: failed`, "m"), text);
    assert.equal(existsSync(path.join(outside, "boxed.txt")), false);
    assert.match(text, new RegExp(`^write ${project}/boxed-inside\\.txt: ok`, "m"), text);
    assert.equal(existsSync(path.join(project, "boxed-inside.txt")), true);
    assert.match(text, new RegExp(`^write ${project}/\\.pi/boxed\\.ts: failed`, "m"), text);
    assert.match(text, new RegExp(`^write ${project}/\\.git/hooks/boxed-pre-commit: failed`, "m"), text);
    assert.match(text, /^connect: failed/m, text);
    assert.equal(listener.connections(), before, "nothing reached the listener on 127.0.0.1");
    // pi's own proxy leads nowhere from inside: the sandbox's proxy is the way out, and npm's proxy setting is dropped.
    assert.match(text, /^https_proxy: http:\/\/\S*localhost:\d+$/m, text);
    assert.match(text, /^npm_config_https_proxy: \(unset\)$/m, text);
    assert.match(text, new RegExp(`^NODE_EXTRA_CA_CERTS: ${COMPANY_NETWORK.NODE_EXTRA_CA_CERTS}$`, "m"), text);
  });

  test('"sandbox": true on a shared server: the hub runs it in the same sandbox, which refuses the same', async () => {
    const before = listener.connections();
    const text = await probe(true, "shared", { shared: { idleSeconds: 1 } });
    assert.match(text, /^read: failed/m, text);
    assert.doesNotMatch(text, new RegExp(PLANTED_KEY));
    assert.match(text, new RegExp(`^write ${outside}/shared\\.txt: failed`, "m"), text);
    assert.equal(existsSync(path.join(outside, "shared.txt")), false);
    assert.match(text, new RegExp(`^write ${project}/shared-inside\\.txt: ok`, "m"), text);
    assert.match(text, new RegExp(`^write ${project}/\\.pi/shared\\.ts: failed`, "m"), text);
    assert.match(text, /^connect: failed/m, text);
    assert.equal(listener.connections(), before, "nothing reached the listener on 127.0.0.1");
    // It ran under the hub, which set its sandbox up; the hub exits once it is idle.
    const hubDir = path.join(agentDir, "mcp-hub");
    // Its temp dir is in the hub's private directory, never at a fixed name another user could make first in /tmp.
    assert.match(text, new RegExp(`^tmpdir: ${hubDir}/tmp/[0-9a-f]{16}$`, "m"), text);
    assert.match(readFileSync(path.join(hubDir, "hub.log"), "utf8"), /"event":"server.start".*"sandboxed":true/);
    await waitFor(() => !existsSync(path.join(hubDir, "hub.lock")), "the hub to exit once idle", 20_000);
  });

  test("while a shared sandboxed server runs, an absent .pi in its directory is held by a directory, so pi's project config still reads", async () => {
    const fresh = path.join(outside, "fresh-project");
    mkdirSync(fresh);
    await probe(true, "fresh", { shared: { idleSeconds: 2 }, cwd: fresh });
    // The server runs on for its idle time: the placeholders bubblewrap made for what it may not create are there now.
    const dotPi = lstatSync(path.join(fresh, ".pi"), { throwIfNoEntry: false });
    assert.ok(dotPi?.isDirectory(), `.pi is ${dotPi ? "a file" : "absent"}`);
    await waitFor(() => !existsSync(path.join(agentDir, "mcp-hub", "hub.lock")), "the hub to exit once idle", 20_000);
    assert.equal(existsSync(path.join(fresh, ".pi")), false, "the placeholder goes with the server");
  });

  test("a hub killed by SIGKILL while a shared sandboxed server runs leaves no relay or mount point; the next hub clears its temp dir", async () => {
    const killed = path.join(outside, "killed-hub-project");
    mkdirSync(killed);
    const hubDir = path.join(agentDir, "mcp-hub");
    await probe(true, "killed", { shared: { idleSeconds: 60 }, cwd: killed });
    const hub = Number(readFileSync(path.join(hubDir, "hub.lock"), "utf8"));
    const relays = processTree(hub).filter((pid) => commandLine(pid).startsWith("socat UNIX-LISTEN:"));
    try {
      assert.ok(relays.length > 0, "the hub's sandbox library relays its proxies");
      assert.ok(existsSync(path.join(killed, ".pi")), "bubblewrap made its mount points");
      const temps = sandboxTempDirs(hub);
      const own = temps.find((dir) => dir.startsWith(path.join(hubDir, "tmp", path.sep)));
      const empty = temps.find((dir) => dir.includes("claude-empty-"));
      assert.ok(own && empty && temps.length === 2, `the server's temp dir and the library's empty one: ${temps}`);
      writeFileSync(path.join(own, "left"), "by the server");
      process.kill(hub, "SIGKILL");
      await waitFor(() => !relays.some(isAlive), "the relays to be gone", 10_000, 100);
      await waitFor(() => readdirSync(killed).length === 0, `no mount point left: ${readdirSync(killed)}`, 10_000, 100);
      await waitFor(() => !existsSync(empty), `${empty} to be gone`, 10_000, 100);
      // The server's temp dir is named after its definition, for a new hub to use again: the next hub clears it.
      const next = spawn(process.execPath, [path.join(REPO_ROOT, "src", "connection", "hub", "hub.mjs"), hubDir], {
        stdio: "ignore",
      });
      await waitFor(() => !existsSync(own), `the next hub to remove ${own}`, 10_000, 100).finally(() => next.kill());
    } finally {
      for (const pid of [hub, ...relays]) killIfAlive(pid);
      rmSync(path.join(hubDir, "hub.lock"), { force: true });
    }
  });

  test("a secret kept elsewhere and linked into a denied directory (dotfiles by stow) is denied where it is kept", async () => {
    const dotfiles = path.join(bed.home, "dotfiles");
    mkdirSync(path.join(dotfiles, "aws"), { recursive: true });
    mkdirSync(path.join(bed.home, ".aws"));
    writeFileSync(path.join(dotfiles, "aws", "credentials"), `${PLANTED_KEY}\n`);
    symlinkSync(path.join(dotfiles, "aws", "credentials"), path.join(bed.home, ".aws", "credentials"));
    const args = { read: path.join(dotfiles, "aws", "credentials") };
    const text = await probeOnce(args);
    assert.match(text, /^read: failed/m, text);
    assert.doesNotMatch(text, new RegExp(PLANTED_KEY), text);
  });

  test("a directory kept elsewhere and linked into a denied directory (~/.aws/sso -> dotfiles) is denied where it is kept", async () => {
    const kept = path.join(bed.home, "dotfiles", "aws-sso");
    mkdirSync(path.join(kept, "cache"), { recursive: true });
    mkdirSync(path.join(bed.home, ".aws"), { recursive: true });
    writeFileSync(path.join(kept, "cache", "token.json"), `${PLANTED_KEY}\n`);
    symlinkSync(kept, path.join(bed.home, ".aws", "sso"));
    // One that leads to a directory holding the server's own is not denied: the server could not read its own files.
    symlinkSync(path.dirname(project), path.join(bed.home, ".aws", "workspaces"));
    const text = await probeOnce({
      read: path.join(kept, "cache", "token.json"),
      write: [path.join(project, "in.txt")],
    });
    assert.match(text, /^read: failed/m, text);
    assert.match(text, /^write \S+\/in\.txt: ok/m, text);
    assert.doesNotMatch(text, new RegExp(PLANTED_KEY), text);
  });

  test("the user's MCP config, which holds other servers' keys and headers as written, is denied", async () => {
    const other = { url: "https://api.example.com/mcp", headers: { Authorization: `Bearer ${PLANTED_KEY}` } };
    const server = { command: process.execPath, args: [PROBE], sandbox: true, autoApprove: ["*"] };
    const config = path.join(agentDir, "mcp.json");
    writeFileSync(config, JSON.stringify({ exposure: "direct", mcpServers: { probe: server, other } }));
    const call = { cwd: project, agentDir, extensionPaths: [EXTENSION_DIR], tool: "mcp_probe_probe" };
    const { text } = await callOnceInPi({ ...call, args: { read: config } });
    assert.doesNotMatch(text, new RegExp(PLANTED_KEY), text);
    assert.match(text, /^read: /m, text);
  });

  test("another tool's token where it exists (Codex's sign-in, ~/.codex/auth.json) is denied", async () => {
    mkdirSync(path.join(bed.home, ".codex"), { recursive: true });
    writeFileSync(path.join(bed.home, ".codex", "auth.json"), `{"OPENAI_API_KEY":"${PLANTED_KEY}"}\n`);
    const text = await probeOnce({ read: path.join(bed.home, ".codex", "auth.json") });
    assert.match(text, /^read: failed/m, text);
    assert.doesNotMatch(text, new RegExp(PLANTED_KEY), text);
  });

  test("other MCP clients' user configs, which hold their servers' keys (~/.claude.json, Windsurf's), are denied", async () => {
    const files = [".claude.json", path.join(".codeium", "windsurf", "mcp_config.json")];
    for (const file of files.map((f) => path.join(bed.home, f))) {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify({ mcpServers: { gh: { env: { GITHUB_TOKEN: PLANTED_KEY } } } }));
      const text = await probeOnce({ read: file });
      assert.match(text, /^read: failed/m, text);
      assert.doesNotMatch(text, new RegExp(PLANTED_KEY), text);
    }
  });

  test("other agents' sign-ins and Gemini CLI's MCP config (~/.gemini, opencode's auth.json, Copilot's) are denied", async () => {
    const files = [
      path.join(".gemini", "settings.json"),
      path.join(".gemini", "oauth_creds.json"),
      path.join(".local", "share", "opencode", "auth.json"),
      path.join(".config", "github-copilot", "apps.json"),
    ];
    for (const file of files.map((f) => path.join(bed.home, f))) {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify({ token: PLANTED_KEY }));
      const text = await probeOnce({ read: file });
      assert.match(text, /^read: failed/m, text);
      assert.doesNotMatch(text, new RegExp(PLANTED_KEY), text);
    }
  });

  test("what git runs of a submodule's (.git/modules) and of a repository below the server's directory cannot be written", async () => {
    const code = path.join(outside, "code");
    const gitDir = (dir: string, hooks = true) => {
      mkdirSync(path.join(dir, hooks ? "hooks" : ""), { recursive: true });
      writeFileSync(path.join(dir, "HEAD"), "ref: refs/heads/main\n");
      writeFileSync(path.join(dir, "config"), "[core]\n");
      return [path.join(dir, "hooks", "pre-commit"), path.join(dir, "config")];
    };
    // A submodule added at libs/ui keeps its git directory at .git/modules/libs/ui; git runs its hooks and obeys its config.
    const inProject = gitDir(path.join(project, ".git", "modules", "libs", "ui"));
    // A server working in a directory of repositories, not where pi runs: the library looks below pi's directory only.
    const inCode = [...gitDir(path.join(code, "app", ".git"), false), ...gitDir(path.join(code, "org", "lib", ".git"))];
    for (const [cwd, files] of [
      [project, inProject],
      [code, inCode],
    ] as const) {
      const args = { write: [...files, path.join(cwd, "inside.txt")] };
      const text = await probeOnce(args, cwd);
      for (const file of files) assert.match(text, new RegExp(`^write ${file}: failed`, "m"), text);
      assert.match(text, /^write \S+\/inside\.txt: ok/m, text);
    }
    assert.equal(readFileSync(inCode[1]!, "utf8"), "[core]\n");
  });

  test("what a package manager obeys in the project (its .npmrc, .yarnrc, .yarnrc.yml) cannot be written, nor made", async () => {
    // npm obeys a project's .npmrc on every install and script (`node-options`, `script-shell`, `registry`); yarn runs
    // the `yarnPath` (`yarn-path`) its rc file names.
    writeFileSync(path.join(project, ".npmrc"), "fund=false\n");
    const files = [".npmrc", ".yarnrc", ".yarnrc.yml"].map((file) => path.join(project, file));
    const text = await probeOnce({ write: [...files, path.join(project, "inside.txt")] });
    for (const file of files) assert.match(text, new RegExp(`^write ${file}: failed`, "m"), text);
    assert.match(text, /^write \S+\/inside\.txt: ok/m, text);
    assert.equal(readFileSync(files[0]!, "utf8"), "fund=false\n");
  });

  test("what cargo, bun and version managers run from the project (.cargo/config.toml, bunfig.toml, .tool-versions) cannot be written, nor made", async () => {
    // cargo runs the `runner` and `rustc-wrapper` its config names, bun the `preload` of bunfig.toml, and asdf or mise
    // put a `path:` version's bin on PATH.
    writeFileSync(path.join(project, "bunfig.toml"), "telemetry = false\n");
    mkdirSync(path.join(project, ".cargo"), { recursive: true });
    const files = [path.join(".cargo", "config.toml"), "bunfig.toml", ".tool-versions"].map((f) =>
      path.join(project, f),
    );
    const text = await probeOnce({ write: [...files, path.join(project, "inside.txt")] });
    for (const file of files) assert.match(text, new RegExp(`^write ${file}: failed`, "m"), text);
    assert.match(text, /^write \S+\/inside\.txt: ok/m, text);
    assert.equal(readFileSync(files[1]!, "utf8"), "telemetry = false\n");
  });

  test("what lefthook runs at a commit and mise at a cd (their configs there, lefthook's local one) cannot be written", async () => {
    // mise trusts a config by its path: a hook written into a trusted one runs at the user's next cd into the project.
    writeFileSync(path.join(project, "lefthook.yml"), "pre-commit:\n");
    writeFileSync(path.join(project, ".mise.toml"), "[tools]\n");
    const files = ["lefthook.yml", "lefthook-local.yml", ".mise.toml"].map((f) => path.join(project, f));
    const text = await probeOnce({ write: [...files, path.join(project, "inside.txt")] });
    for (const file of files) assert.match(text, new RegExp(`^write ${file}: failed`, "m"), text);
    assert.match(text, /^write \S+\/inside\.txt: ok/m, text);
    for (const file of ["lefthook.yml", ".mise.toml"]) rmSync(path.join(project, file));
  });

  test("a project's .pnpmfile.cjs, which pnpm runs at the next install, cannot be written", async () => {
    const file = path.join(project, ".pnpmfile.cjs");
    writeFileSync(file, "module.exports = { hooks: {} };\n");
    const text = await probeOnce({ write: [file, path.join(project, "inside.txt")] });
    assert.match(text, new RegExp(`^write ${file}: failed`, "m"), text);
    assert.match(text, /^write \S+\/inside\.txt: ok/m, text);
    rmSync(file);
  });

  test("a submodule's .git file, which names the git directory git obeys in it, cannot be written", async () => {
    // Pointed at a git directory of the server's own making (its config's core.fsmonitor), it would run at `git status`.
    const dotGit = path.join(project, "libs", "api", ".git");
    mkdirSync(path.dirname(dotGit), { recursive: true });
    writeFileSync(dotGit, "gitdir: ../../.git/modules/libs/api\n");
    const text = await probeOnce({ write: [dotGit] });
    assert.match(text, new RegExp(`^write ${dotGit}: failed`, "m"), text);
    assert.equal(readFileSync(dotGit, "utf8"), "gitdir: ../../.git/modules/libs/api\n");
  });

  test("pi's config and extensions of a package below the server's directory (a monorepo's packages/app/.pi) cannot be written", async () => {
    // pi run in packages/app loads them: the user's next pi there would run what the server wrote.
    const dotPi = path.join(project, "packages", "app", ".pi");
    mkdirSync(path.join(dotPi, "extensions"), { recursive: true });
    const files = [path.join(dotPi, "extensions", "evil.ts"), path.join(dotPi, "settings.json")];
    const text = await probeOnce({ write: [...files, path.join(project, "packages", "app", "index.ts")] });
    for (const file of files) assert.match(text, new RegExp(`^write ${file}: failed`, "m"), text);
    assert.match(text, /^write \S+\/index\.ts: ok/m, text);
  });

  test("the hooks of a repository whose config moves them (core.hooksPath = .githooks) cannot be written", async () => {
    const repo = path.join(outside, "hooked");
    mkdirSync(path.join(repo, ".git"), { recursive: true });
    mkdirSync(path.join(repo, ".githooks"));
    writeFileSync(path.join(repo, ".git", "HEAD"), "ref: refs/heads/main\n");
    writeFileSync(path.join(repo, ".git", "config"), "[core]\n\tbare = false\n\thooksPath = .githooks\n");
    const hook = path.join(repo, ".githooks", "pre-commit");
    const text = await probeOnce({ write: [hook, path.join(repo, "inside.txt")] }, repo);
    assert.match(text, new RegExp(`^write ${hook}: failed`, "m"), text);
    assert.match(text, /^write \S+\/inside\.txt: ok/m, text);
  });

  test("what a hook manager runs at a commit (husky's .husky/pre-commit, pre-commit's config) cannot be written", async () => {
    // husky 9 points core.hooksPath at .husky/_, whose stubs run the scripts in .husky itself.
    const repo = path.join(outside, "husky");
    mkdirSync(path.join(repo, ".git"), { recursive: true });
    mkdirSync(path.join(repo, ".husky", "_"), { recursive: true });
    writeFileSync(path.join(repo, ".git", "config"), "[core]\n\thooksPath = .husky/_\n");
    writeFileSync(path.join(repo, ".husky", "pre-commit"), "npm test\n");
    const files = [path.join(repo, ".husky", "pre-commit"), path.join(repo, ".pre-commit-config.yaml")];
    const text = await probeOnce({ write: [...files, path.join(repo, "inside.txt")] }, repo);
    for (const file of files) assert.match(text, new RegExp(`^write ${file}: failed`, "m"), text);
    assert.match(text, /^write \S+\/inside\.txt: ok/m, text);
  });

  test("other agents' project settings, which start MCP servers and plugins (Gemini CLI's, opencode's, Codex's), cannot be written", async () => {
    const files = [".gemini/settings.json", ".opencode/plugin/evil.ts", ".codex/config.toml"];
    for (const file of files) mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
    const text = await probeOnce({ write: files.map((file) => path.join(project, file)) });
    for (const file of files) assert.match(text, new RegExp(`^write ${path.join(project, file)}: failed`, "m"), text);
  });

  test("a repository's per-worktree config (.git/config.worktree, which a sparse checkout turns on) cannot be written", async () => {
    // With extensions.worktreeConfig set, git obeys it as it obeys .git/config: a core.fsmonitor there runs at `git status`.
    const own = path.join(project, ".git", "config.worktree");
    writeFileSync(own, "[core]\n\tsparseCheckout = true\n");
    const nested = path.join(project, "lib", ".git");
    mkdirSync(nested, { recursive: true });
    writeFileSync(path.join(nested, "HEAD"), "ref: refs/heads/main\n");
    const files = [own, path.join(nested, "config.worktree")];
    const text = await probeOnce({ write: files });
    for (const file of files) assert.match(text, new RegExp(`^write ${file}: failed`, "m"), text);
    assert.equal(readFileSync(own, "utf8"), "[core]\n\tsparseCheckout = true\n");
  });

  test("what git obeys in a linked worktree (.git/worktrees/<name>/config.worktree, commondir) cannot be written", async () => {
    // `git worktree add ../wt` keeps them in the main repository: commondir names the git directory whose config it obeys.
    const linked = path.join(project, ".git", "worktrees", "wt");
    mkdirSync(linked, { recursive: true });
    writeFileSync(path.join(linked, "commondir"), "../..\n");
    const files = [path.join(linked, "config.worktree"), path.join(linked, "commondir")];
    const text = await probeOnce({ write: files });
    for (const file of files) assert.match(text, new RegExp(`^write ${file}: failed`, "m"), text);
  });

  test("pi run in the home directory: what every zsh, login bash and git reads there cannot be written", async () => {
    mkdirSync(path.join(bed.home, ".config", "git"), { recursive: true });
    const files = [".zshenv", ".zlogin", ".bash_login", path.join(".config", "git", "config")];
    const args = { write: [...files, "inside.txt"].map((file) => path.join(bed.home, file)) };
    const text = await probeOnce(args, bed.home, bed.home);
    for (const file of files) assert.match(text, new RegExp(`^write ${path.join(bed.home, file)}: failed`, "m"), text);
    assert.match(text, /^write \S+\/inside\.txt: ok/m, text);
  });

  /** With pi run in the home directory, a server there writes `files` (made below home) and fails; a file of its own it may. */
  async function homeFilesReadOnly(files: string[]): Promise<void> {
    for (const file of files) mkdirSync(path.join(bed.home, path.dirname(file)), { recursive: true });
    const args = { write: [...files, "inside.txt"].map((file) => path.join(bed.home, file)) };
    const text = await probeOnce(args, bed.home, bed.home);
    for (const file of files) assert.match(text, new RegExp(`^write ${path.join(bed.home, file)}: failed`, "m"), text);
    assert.match(text, /^write \S+\/inside\.txt: ok/m, text);
  }

  test("pi run in the home directory: the MCP configs other clients start servers from (Windsurf's, VS Code's, Claude Desktop's, opencode's) cannot be written", async () => {
    const files = [
      path.join(".codeium", "windsurf", "mcp_config.json"),
      path.join(".config", "Code", "User", "mcp.json"),
      path.join(".config", "Claude", "claude_desktop_config.json"),
      path.join(".config", "opencode", "opencode.json"),
    ];
    await homeFilesReadOnly(files);
  });

  test("pi run in the home directory: mise's global config and direnv's direnvrc, which run at every prompt and cd, cannot be written", async () => {
    const files = [path.join(".config", "mise", "config.toml"), path.join(".config", "direnv", "direnvrc")];
    await homeFilesReadOnly(files);
  });

  test("pi run in the home directory: fish's config and the commands of ~/.local/bin (first on PATH) cannot be written", async () => {
    const files = [path.join(".config", "fish", "config.fish"), path.join(".local", "bin", "git")];
    await homeFilesReadOnly(files);
  });

  test("a launcher's cache moved into pi's agent dir (UV_CACHE_DIR, which the trust question does not show): pi's extensions and settings stay read-only", async () => {
    const uvx = path.join(outside, "bin", "uvx");
    mkdirSync(path.dirname(uvx), { recursive: true });
    symlinkSync(process.execPath, uvx);
    mkdirSync(path.join(agentDir, "extensions"), { recursive: true });
    const server = { command: uvx, args: [PROBE], sandbox: true, autoApprove: ["*"], env: { UV_CACHE_DIR: agentDir } };
    writeFileSync(
      path.join(agentDir, "mcp.json"),
      JSON.stringify({ exposure: "direct", mcpServers: { probe: server } }),
    );
    const files = [path.join(agentDir, "extensions", "evil.ts"), path.join(agentDir, "settings.json")];
    const call = { cwd: project, agentDir, extensionPaths: [EXTENSION_DIR], tool: "mcp_probe_probe" };
    const { text } = await callOnceInPi({ ...call, args: { write: [...files, path.join(agentDir, "cache.txt")] } });
    for (const file of files) assert.match(text, new RegExp(`^write ${file}: failed`, "m"), text);
    assert.match(text, /^write \S+\/cache\.txt: ok/m, text);
  });

  test("a launcher's cache moved to the home directory or a parent of the project opens neither (~/.config/autostart, a sibling)", async () => {
    const npx = path.join(outside, "bin", "npx");
    mkdirSync(path.dirname(npx), { recursive: true });
    if (!existsSync(npx)) symlinkSync(process.execPath, npx);
    mkdirSync(path.join(bed.home, ".config", "autostart"), { recursive: true });
    const files = { [bed.home]: path.join(bed.home, ".config", "autostart", "evil.desktop") };
    files[path.dirname(project)] = path.join(outside, "evil.txt");
    for (const [cache, file] of Object.entries(files)) {
      const server = {
        command: npx,
        args: [PROBE],
        sandbox: true,
        autoApprove: ["*"],
        env: { npm_config_cache: cache },
      };
      writeFileSync(
        path.join(agentDir, "mcp.json"),
        JSON.stringify({ exposure: "direct", mcpServers: { probe: server } }),
      );
      const call = { cwd: project, agentDir, extensionPaths: [EXTENSION_DIR], tool: "mcp_probe_probe" };
      const { text } = await callOnceInPi({ ...call, args: { write: [file, path.join(project, "inside.txt")] } });
      assert.match(text, new RegExp(`^write ${file}: failed`, "m"), text);
      assert.match(text, /^write \S+\/inside\.txt: ok/m, text);
    }
  });

  test("what the desktop and systemd start at login (~/.config/autostart, ~/.config/systemd/user) cannot be written, from a cache moved to ~/.config either", async () => {
    const files = [
      path.join(".config", "autostart", "evil.desktop"),
      path.join(".config", "systemd", "user", "evil.service"),
    ];
    await homeFilesReadOnly(files);
    const npx = path.join(outside, "bin", "npx");
    mkdirSync(path.dirname(npx), { recursive: true });
    if (!existsSync(npx)) symlinkSync(process.execPath, npx);
    const env = { npm_config_cache: path.join(bed.home, ".config") };
    const server = { command: npx, args: [PROBE], sandbox: true, autoApprove: ["*"], env };
    writeFileSync(
      path.join(agentDir, "mcp.json"),
      JSON.stringify({ exposure: "direct", mcpServers: { probe: server } }),
    );
    const call = { cwd: project, agentDir, extensionPaths: [EXTENSION_DIR], tool: "mcp_probe_probe" };
    const cache = path.join(bed.home, ".config", "cache.txt");
    const moved = (
      await callOnceInPi({ ...call, args: { write: [...files.map((file) => path.join(bed.home, file)), cache] } })
    ).text;
    for (const file of files)
      assert.match(moved, new RegExp(`^write ${path.join(bed.home, file)}: failed`, "m"), moved);
    assert.match(moved, /^write \S+\/cache\.txt: ok/m, moved);
  });

  test("a launcher's cache moved into pi's agent dir: the fd and rg pi runs from it (bin, and tools, moved to bin) stay read-only", async () => {
    const uvx = path.join(outside, "bin", "uvx");
    mkdirSync(path.dirname(uvx), { recursive: true });
    if (!existsSync(uvx)) symlinkSync(process.execPath, uvx);
    for (const dir of ["bin", "tools"]) mkdirSync(path.join(agentDir, dir), { recursive: true });
    const server = { command: uvx, args: [PROBE], sandbox: true, autoApprove: ["*"], env: { UV_CACHE_DIR: agentDir } };
    writeFileSync(
      path.join(agentDir, "mcp.json"),
      JSON.stringify({ exposure: "direct", mcpServers: { probe: server } }),
    );
    const files = [path.join(agentDir, "bin", "rg"), path.join(agentDir, "tools", "fd")];
    const call = { cwd: project, agentDir, extensionPaths: [EXTENSION_DIR], tool: "mcp_probe_probe" };
    const { text } = await callOnceInPi({ ...call, args: { write: [...files, path.join(agentDir, "cache.txt")] } });
    for (const file of files) assert.match(text, new RegExp(`^write ${file}: failed`, "m"), text);
    assert.match(text, /^write \S+\/cache\.txt: ok/m, text);
  });

  test("a launcher's cache moved into another agent's settings (~/.claude, ~/.cursor): what those run stays read-only", async () => {
    const npx = path.join(outside, "bin", "npx");
    mkdirSync(path.dirname(npx), { recursive: true });
    if (!existsSync(npx)) symlinkSync(process.execPath, npx);
    for (const [dir, file] of [
      [".claude", "settings.json"],
      [".cursor", "mcp.json"],
    ] as const) {
      mkdirSync(path.join(bed.home, dir), { recursive: true });
      const env = { npm_config_cache: path.join(bed.home, dir) };
      const server = { command: npx, args: [PROBE], sandbox: true, autoApprove: ["*"], env };
      writeFileSync(
        path.join(agentDir, "mcp.json"),
        JSON.stringify({ exposure: "direct", mcpServers: { probe: server } }),
      );
      const call = { cwd: project, agentDir, extensionPaths: [EXTENSION_DIR], tool: "mcp_probe_probe" };
      const target = path.join(bed.home, dir, file);
      const { text } = await callOnceInPi({ ...call, args: { write: [target, path.join(project, "inside.txt")] } });
      assert.match(text, new RegExp(`^write ${target}: failed`, "m"), text);
      assert.match(text, /^write \S+\/inside\.txt: ok/m, text);
    }
  });

  test("a working directory reached by a link outside the project (~/code -> /data/code): the server writes there", async () => {
    const real = path.join(outside, "data-code");
    const link = path.join(outside, "linked-code");
    mkdirSync(path.join(real, ".git", "hooks"), { recursive: true });
    symlinkSync(real, link);
    const args = { write: [path.join(link, "a.txt"), "b.txt", path.join(link, ".git", "hooks", "pre-commit")] };
    const text = await probeOnce(args, link);
    assert.match(text, /^write \S+\/a\.txt: ok/m, text);
    assert.match(text, /^write b\.txt: ok/m, text);
    assert.match(text, /^write \S+\/pre-commit: failed/m, text);
    assert.equal(existsSync(path.join(real, "b.txt")), true);
  });

  test('"sandbox": false: the same server reads, writes and connects (so the first test can fail)', async () => {
    const before = listener.connections();
    const text = await withCompanyNetwork(() => probe(false, "open"));
    assert.match(text, new RegExp(`^read: ok ${PLANTED_KEY}`, "m"), text);
    // How pi reaches the network (its proxy, CA and npm's proxy) reaches the server too.
    for (const [name, value] of Object.entries(COMPANY_NETWORK))
      assert.match(text, new RegExp(`^${name}: ${value}$`, "m"), text);
    assert.match(text, new RegExp(`^write ${outside}/open\\.txt: ok`, "m"), text);
    assert.match(text, new RegExp(`^write ${project}/\\.pi/open\\.ts: ok`, "m"), text);
    assert.match(text, /^connect: ok/m, text);
    assert.equal(listener.connections(), before + 1);
  });
});
