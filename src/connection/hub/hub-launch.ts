/**
 * Finding the shared-server hub (./hub.mjs), and starting it when it is not there: a pi session connects to the
 * hub's socket; when nobody listens, it starts the hub detached from pi (a session and process group of its own, no
 * terminal, outliving this pi) and connects once it listens. Two sessions that start one at the same moment both
 * connect to the one that won the hub's lock; the other exits at once.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { packageFile } from "../../common/package-files.ts";

const HUB_SCRIPT = packageFile("src/connection/hub/hub.mjs");
/** The hub's directory under pi's agent dir. */
const HUB_DIR_NAME = "mcp-hub";
/** A Unix socket's path must fit in `sun_path` (108 bytes on Linux, 104 on macOS). */
const SOCKET_PATH_MAX = 100;
/** How long a started hub may take to listen before it is started again (it may have lost a race for its lock). */
const RESTART_AFTER_MS = 2000;
const POLL_MS = 20;

/**
 * The hub's directory for this agent dir: in it, or, where the socket's path would be too long for the system, a
 * directory of this user's in the temp dir named after it.
 */
export function hubDir(agentDir: string): string {
  const inAgentDir = path.join(agentDir, HUB_DIR_NAME);
  if (process.platform === "win32" || Buffer.byteLength(hubSocket(inAgentDir)) <= SOCKET_PATH_MAX) return inAgentDir;
  const id = createHash("sha256").update(agentDir).digest("hex").slice(0, 16);
  return path.join("/tmp", `mcp-bridge-hub-${process.getuid?.() ?? 0}-${id}`);
}

/** The hub's socket in `dir` (a named pipe on Windows); ./hub.mjs computes the same. */
function hubSocket(dir: string): string {
  if (process.platform !== "win32") return path.join(dir, "hub.sock");
  return `\\\\.\\pipe\\mcp-bridge-hub-${createHash("sha256").update(dir).digest("hex").slice(0, 16)}`;
}

/**
 * A connection to the hub in `dir`, which is started if it does not answer; rejects once `deadline` (epoch ms) has
 * passed, or when the directory is not this user's alone.
 */
export async function connectHub(dir: string, deadline: number): Promise<net.Socket> {
  let startedAt: number | undefined;
  let started: ChildProcess | undefined;
  if (fs.existsSync(dir)) ownedPrivately(dir);
  for (;;) {
    try {
      const socket = net.connect(hubSocket(dir));
      await once(socket, "connect");
      return socket;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ECONNREFUSED") throw error;
    }
    // A hub that failed (a hub that lost the lock to another exits with 0): said now, not as a timeout at the deadline.
    const log = path.join(dir, "hub.log");
    if (started?.exitCode)
      throw new Error(`the shared-server hub exited with code ${started.exitCode} (its log: ${log})`);
    if (Date.now() >= deadline) throw new Error(`the shared-server hub did not start in time (its log: ${log})`);
    if (startedAt === undefined || Date.now() - startedAt > RESTART_AFTER_MS) {
      started = startHub(dir);
      startedAt = Date.now();
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Starts the hub, detached: it has no terminal, and pi's exit (or a signal to pi's group) does not reach it. */
function startHub(dir: string): ChildProcess {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  ownedPrivately(dir);
  const child = spawn(process.execPath, [HUB_SCRIPT, dir], {
    detached: true,
    stdio: "ignore",
    // Not the project's directory: the hub outlives the session, and would keep it in use.
    cwd: dir,
    // The hub passes each server the environment its session sent; it needs none of pi's.
    env: { PATH: process.env.PATH ?? "" },
    windowsHide: true,
  });
  child.on("error", () => undefined);
  child.unref();
  return child;
}

/** Refuses a hub directory another user owns or others can read: its socket would let them run this user's servers. */
function ownedPrivately(dir: string): void {
  if (process.platform === "win32") return;
  // The link itself, where it is one: another user's symlink to a directory of this user's could be turned to theirs.
  const stat = fs.lstatSync(dir);
  if (stat.uid !== process.getuid?.())
    throw new Error(`${dir} belongs to another user; the shared-server hub cannot use it`);
  if ((stat.mode & 0o077) !== 0) fs.chmodSync(dir, 0o700);
}
