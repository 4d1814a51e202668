/**
 * What the sandbox tests share: the probe server (test/fixtures/sandbox-probe-server.mjs), a home directory with a
 * planted `~/.ssh/id_test`, pi's agent dir in it, a project and a directory outside it, and pi's environment pointed at
 * them for the suite (put back after it). Also a listener on 127.0.0.1 that counts the connections it gets.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import * as path from "node:path";
import { bundledFixture } from "./fixture-bundle.ts";
import { REPO_ROOT, restoreEnv, tempDir } from "./helpers.ts";

export const PROBE = bundledFixture(path.join(REPO_ROOT, "test", "fixtures", "sandbox-probe-server.mjs"));
export const PLANTED_KEY = "PLANTED-KEY";

export interface SandboxBed {
  home: string;
  project: string;
  outside: string;
  agentDir: string;
  /** The planted key's path. */
  secret: string;
  /** Makes the directories and points pi (HOME, its agent dir, cwd) at them; call in `before`. */
  setUp(): void;
  /** Puts pi's environment and cwd back and removes the directories; call in `after`. */
  tearDown(): void;
}

export function sandboxBed(name: string): SandboxBed {
  const home = tempDir(`mcp-bridge-${name}-home-`);
  const project = tempDir(`mcp-bridge-${name}-project-`);
  const outside = tempDir(`mcp-bridge-${name}-outside-`);
  const agentDir = path.join(home.dir, ".pi", "agent");
  const secret = path.join(home.dir, ".ssh", "id_test");
  const saved = { cwd: process.cwd(), env: { ...process.env } };
  return {
    home: home.dir,
    project: project.dir,
    outside: outside.dir,
    agentDir,
    secret,
    setUp() {
      mkdirSync(path.dirname(secret), { recursive: true });
      writeFileSync(secret, `${PLANTED_KEY}\n`);
      mkdirSync(agentDir, { recursive: true });
      process.env.HOME = home.dir;
      process.env.PI_CODING_AGENT_DIR = agentDir;
      process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
      process.chdir(project.dir);
    },
    tearDown() {
      process.chdir(saved.cwd);
      restoreEnv(saved.env);
      for (const dir of [home, project, outside]) dir.cleanup();
    },
  };
}

/** A listener on 127.0.0.1: its port, how many connections reached it, and how to close it. */
export async function loopbackListener(): Promise<{ port: number; connections(): number; close(): Promise<void> }> {
  let connections = 0;
  const listener = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  return {
    port: (listener.address() as { port: number }).port,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => listener.close(() => resolve())),
  };
}
