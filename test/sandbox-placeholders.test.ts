/**
 * The empty files that stand for the denied files a project lacks (`.envrc`, `.mcp.json`, …), made by the bridge before
 * a sandboxed start (src/sandbox/sandbox-runtime.mjs): a second pi's sandbox in the same project mounts on them, and
 * one removed from outside that sandbox's mount namespace would stop being a mount point there, so the server could
 * write the file it is denied. They stay while another sandbox mounts on them; the rest go when the sandbox idles.
 * Needs bubblewrap, socat and ripgrep (.ci/run installs them).
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import * as path from "node:path";
import { describe, test } from "node:test";
import { sandboxPolicy } from "../src/sandbox/sandbox-policy.ts";
import { privateTempDir, sandboxedStart, sandboxIdle } from "../src/sandbox/sandbox-runtime.mjs";
import { isAlive, killIfAlive, tempDir, waitFor } from "./helpers.ts";
import { processTree } from "./tmux.ts";

describe("placeholders of a sandboxed start", { skip: process.platform !== "linux", timeout: 120_000 }, () => {
  test("one another sandbox mounts on outlives the sandbox that made it; the others go when it idles", async () => {
    const tmp = tempDir("mcp-bridge-placeholders-");
    const project = path.join(tmp.dir, "project");
    const at = (name: string) => path.join(project, name);
    mkdirSync(project);
    let other: ChildProcess | undefined;
    try {
      const policy = sandboxPolicy(true, {
        home: homedir(),
        agentDir: path.join(tmp.dir, "agent"),
        cwd: project,
        projectRoot: project,
        tempDir: privateTempDir("placeholders"),
        command: "sh",
        otherSecrets: [],
      });
      const start = await sandboxedStart({ command: "sh", args: ["-c", "exit 0"], env: {}, cwd: project }, policy);
      // Made before the start, empty and read-only, as bubblewrap would make them.
      for (const file of [".envrc", ".mcp.json"])
        assert.equal(statSync(at(file)).mode & 0o222, 0, `${file} is made read-only`);
      const server = spawn(start.command, start.args, { cwd: project, env: { ...process.env, ...start.env } });
      await new Promise((resolve) => server.once("exit", resolve));
      start.release();
      assert.ok(existsSync(at(".vscode")), "bubblewrap made the directory the library leaves to itself");
      // A second pi's sandbox, started now, binds over the file that is there.
      other = spawn("bwrap", ["--dev-bind", "/", "/", "--ro-bind", "/dev/null", at(".envrc"), "sleep", "300"], {
        stdio: "ignore",
      });
      const mounted = () =>
        processTree(other!.pid!).some((pid) => readFileSync(`/proc/${pid}/mountinfo`, "utf8").includes(at(".envrc")));
      await waitFor(() => isAlive(other!.pid!) && mounted(), "the other sandbox's mount");
      // One the user replaced meanwhile with a link to an empty file of theirs is theirs.
      writeFileSync(path.join(tmp.dir, "empty"), "");
      rmSync(at(".gitconfig"));
      symlinkSync(path.join(tmp.dir, "empty"), at(".gitconfig"));
      assert.ok(await sandboxIdle(), "the library was reset");
      assert.ok(lstatSync(at(".gitconfig")).isSymbolicLink(), "the link stays");
      assert.ok(existsSync(at(".envrc")), "the file another sandbox mounts on stays");
      for (const gone of [".mcp.json", ".bashrc", ".vscode"]) assert.equal(existsSync(at(gone)), false, gone);
    } finally {
      if (other?.pid) for (const pid of processTree(other.pid)) killIfAlive(pid);
      tmp.cleanup();
    }
  });

  test("servers started at once in a project without .pi, .vscode, .claude: each starts (one's bubblewrap makes them)", async () => {
    const tmp = tempDir("mcp-bridge-placeholders-race-");
    const project = path.join(tmp.dir, "project");
    mkdirSync(project);
    const failed: string[] = [];
    /** One sandboxed `sleep`, started `delay` ms from now: what bubblewrap said, if it failed. */
    const start = async (delay: number) => {
      await new Promise((resolve) => setTimeout(resolve, delay));
      const policy = sandboxPolicy(true, {
        ...{ home: homedir(), agentDir: path.join(tmp.dir, "agent"), cwd: project, projectRoot: project },
        ...{ tempDir: privateTempDir("placeholders-race"), command: "sh", otherSecrets: [] },
      });
      const started = await sandboxedStart({ command: "sh", args: ["-c", "sleep 1"], env: {}, cwd: project }, policy);
      const server = spawn(started.command, started.args, { cwd: project, env: { ...process.env, ...started.env } });
      let stderr = "";
      server.stderr!.on("data", (d) => (stderr += d));
      const code = await new Promise((resolve) => server.once("exit", resolve));
      started.release();
      if (code !== 0) failed.push(stderr.trim());
    };
    try {
      // Rounds of four, some together, some apart: a start planned while another's bubblewrap makes its mount points.
      for (let round = 0; round < 8; round++) {
        await Promise.all([0, 1, 2, 3].map((i) => start(i * 15 * (round % 4))));
        await sandboxIdle();
      }
      assert.deepEqual(failed, []);
    } finally {
      await sandboxIdle();
      tmp.cleanup();
    }
  });

  test("a launcher's cache kept on another disk by a link (~/.npm -> /data/npm): the server writes it", async () => {
    const tmp = tempDir("mcp-bridge-placeholders-cache-");
    const home = path.join(tmp.dir, "home");
    const elsewhere = path.join(tmp.dir, "data", "npm");
    const project = path.join(tmp.dir, "project");
    mkdirSync(home);
    mkdirSync(project);
    mkdirSync(elsewhere, { recursive: true });
    symlinkSync(elsewhere, path.join(home, ".npm"));
    const saved = process.env.HOME;
    process.env.HOME = home;
    try {
      const policy = sandboxPolicy(true, {
        ...{ home, agentDir: path.join(home, ".pi", "agent"), cwd: project, projectRoot: project, otherSecrets: [] },
        ...{ tempDir: privateTempDir("placeholders-cache"), command: "npx" },
      });
      const write = `echo cached > ${path.join(home, ".npm", "probe")}`;
      const start = await sandboxedStart({ command: "sh", args: ["-c", write], env: {}, cwd: project }, policy);
      const server = spawn(start.command, start.args, { cwd: project, env: { ...process.env, ...start.env } });
      let stderr = "";
      server.stderr!.on("data", (d) => (stderr += d));
      const code = await new Promise((resolve) => server.once("exit", resolve));
      start.release();
      assert.equal(code, 0, stderr);
      assert.equal(readFileSync(path.join(elsewhere, "probe"), "utf8"), "cached\n");
    } finally {
      process.env.HOME = saved;
      await sandboxIdle();
      tmp.cleanup();
    }
  });

  test("pi run in the home directory: an absent ~/.ssh or mcp-auth is held by a directory while a server runs, not a file", async () => {
    const home = tempDir("mcp-bridge-placeholders-home-");
    const agentDir = path.join(home.dir, ".pi", "agent");
    mkdirSync(path.join(agentDir, "mcp-bridge"), { recursive: true });
    let server: ChildProcess | undefined;
    try {
      const policy = sandboxPolicy(true, {
        ...{ home: home.dir, agentDir, cwd: home.dir, projectRoot: home.dir, command: "sh", otherSecrets: [] },
        tempDir: privateTempDir("placeholders-home"),
      });
      const start = await sandboxedStart(
        { command: "sh", args: ["-c", "echo up; read x"], env: {}, cwd: home.dir },
        policy,
      );
      server = spawn(start.command, start.args, { cwd: home.dir, env: { ...process.env, ...start.env } });
      await new Promise((resolve) => server!.stdout!.once("data", resolve));
      // ssh, gpg, docker and the bridge's own sign-ins (mcp-auth) write into these meanwhile: a file there breaks them.
      for (const dir of [".ssh", ".aws", ".gnupg", ".docker", ".kube", path.join(".pi", "agent", "mcp-auth")]) {
        const stat = lstatSync(path.join(home.dir, dir), { throwIfNoEntry: false });
        assert.ok(!stat?.isFile(), `~/${dir} is a file while the server runs`);
      }
      server.stdin!.end();
      await new Promise((resolve) => server!.once("exit", resolve));
      start.release();
    } finally {
      server?.kill("SIGKILL");
      await sandboxIdle();
      home.cleanup();
    }
  });
});
