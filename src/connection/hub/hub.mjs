// @ts-check
/**
 * The shared-server hub: one process per user that runs the local servers marked `"shared": true` and lets many pi
 * sessions use each of them at once, each session an ordinary MCP client of it over a Unix socket (a named pipe on
 * Windows). pi starts it detached (./hub-launch.ts), so it outlives the session that started it; it stops a server
 * `idleMs` after its last session left, and exits once it runs none.
 *
 * Plain JavaScript: it runs under `node` alone, without the TypeScript loader pi uses for the extension, on Node's own
 * modules (and the sandbox library, loaded for a sandboxed server only). It never writes a server's environment (it
 * holds secrets) to its log.
 *
 * Usage: node hub.mjs <hub dir>   (the socket, the lock and the log are in that directory)
 *
 * The wire (one JSON value per line both ways): a session's first line is `{"hub":"attach", spec, idleMs,
 * maxLineBytes, sandbox?}` (`sandbox`: the rules pi computed, when the server runs in one); the hub answers
 * `{"hub":"attached", pid, sessions}` or `{"hub":"error", message, code?}`. From then on the lines are the session's
 * MCP messages, and the hub's own lines (`hub` key first, no `jsonrpc`): `sessions` (how many use the server), `stderr`
 * (a line the server wrote), `violation` (a host its sandbox's proxy denied), `too_long` (it wrote a line over the
 * limit, and is being stopped for it), and `exit` (the server ended, or is
 * being restarted; the socket closes after). A session may send `{"hub":"restart"}`: the server is restarted for all.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { lines, OWNER_ENV, ownerToken, send, SharedServer, STOP_GRACE_MS } from "./hub-server.mjs";
import { HubWatchdog } from "./hub-watchdog.mjs";
import { sandboxedStart, sandboxIdle } from "../../sandbox/sandbox-runtime.mjs";

const dir = process.argv[2];
if (!dir) {
  process.stderr.write("usage: node hub.mjs <hub dir>\n");
  process.exit(2);
}
const SOCKET = socketPath(dir);
const LOCK = path.join(dir, "hub.lock");
const LOG = path.join(dir, "hub.log");
/**
 * How long the hub waits, with no server left, for a session to come (back) before it exits; after its last server
 * stopped for want of sessions, no longer than that server's idle time, which was the wait for one already.
 */
const EMPTY_LINGER_MS = 3000;
/** A session's own line (its tool arguments): `maxMessageBytes` bounds what the server sends, not this; kept in a string. */
const SESSION_LINE_MAX = 256 * 1024 * 1024;
/** The socket's path: in the hub dir, or a named pipe on Windows (must match ./hub-launch.ts). */
function socketPath(hubDir) {
  if (process.platform !== "win32") return path.join(hubDir, "hub.sock");
  return `\\\\.\\pipe\\mcp-bridge-hub-${createHash("sha256").update(hubDir).digest("hex").slice(0, 16)}`;
}

function log(event, fields = {}) {
  try {
    fs.appendFileSync(LOG, `${JSON.stringify({ time: new Date().toISOString(), event, ...fields })}\n`, {
      mode: 0o600,
    });
  } catch {
    // A log that cannot be written loses a line, nothing else.
  }
}

/**
 * One hub at a time: the lock file holds the pid of the hub that owns it. A lock whose hub is gone is taken over by
 * moving it aside first, so of two hubs that found it stale only the one that moved it takes over; a lock still being
 * written (empty, and young) counts as held.
 */
function takeLock() {
  for (let tries = 0; tries < 3; tries++) {
    try {
      fs.writeFileSync(LOCK, String(process.pid), { flag: "wx", mode: 0o600 });
      return true;
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== "EEXIST") throw error;
    }
    const seen = readLock(LOCK);
    if (seen === undefined) continue;
    if (seen.pid > 0 ? isHub(seen.pid) : Date.now() - seen.mtimeMs < 5000) return false;
    const aside = `${LOCK}.${process.pid}`;
    try {
      fs.renameSync(LOCK, aside);
    } catch {
      continue;
    }
    const moved = readLock(aside);
    if (moved?.pid === seen.pid) {
      fs.rmSync(aside, { force: true });
      continue;
    }
    // Another hub took the stale lock over in between, and this one moved that live lock aside: it goes back, and this
    // hub steps back.
    try {
      fs.linkSync(aside, LOCK);
    } catch {
      // A third took it meanwhile: that one holds it.
    }
    fs.rmSync(aside, { force: true });
    return false;
  }
  return false;
}

function readLock(file) {
  try {
    return { pid: Number(fs.readFileSync(file, "utf8")) || 0, mtimeMs: fs.statSync(file).mtimeMs };
  } catch {
    return undefined;
  }
}

/** Whether `pid` is a hub: alive, and (Linux) running hub.mjs, not a process that was given the pid of a hub gone since. */
function isHub(pid) {
  try {
    return alive(pid) && fs.readFileSync(`/proc/${pid}/cmdline`, "latin1").includes("hub.mjs");
  } catch {
    return process.platform !== "linux";
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return /** @type {NodeJS.ErrnoException} */ (error).code === "EPERM";
  }
}

/** @type {Map<string, SharedServer>} */
const servers = new Map();
let sessionCount = 0;
let lingerTimer;

/**
 * Two definitions are one server when these are the same: what is started, where, with what, in which sandbox, and
 * the revision asked for (the server is initialized once: a session pinned to an older one could not take its answer).
 */
function keyOf(spec, sandbox, protocol) {
  const canonical = JSON.stringify([
    spec.command,
    spec.args,
    Object.entries(spec.env).sort(),
    spec.cwd ?? null,
    sandbox ?? null,
    ...(typeof protocol === "string" && protocol !== "auto" ? [protocol] : []),
  ]);
  return createHash("sha256").update(canonical).digest("hex");
}

async function attach(session, line) {
  const { spec, idleMs, maxLineBytes, sandbox, protocol } = line;
  if (!spec || typeof spec.command !== "string" || !Array.isArray(spec.args) || typeof spec.env !== "object")
    throw new Error("the attach request names no command");
  session.idleMs = Number.isFinite(idleMs) && idleMs >= 0 ? idleMs : session.idleMs;
  session.maxLineBytes = Number.isFinite(maxLineBytes) && maxLineBytes > 0 ? maxLineBytes : session.maxLineBytes;
  const server = await serverFor(keyOf(spec, sandbox, protocol), spec, sandbox, session.idleMs);
  const pid = await server.spawned;
  // The session left while the server started: it is not kept for nobody.
  if (session.socket.destroyed) return server.idleIfUnused();
  session.server = server;
  server.attach(session);
  send(session.socket, { hub: "attached", pid, sessions: server.sessions.size });
}

/** Servers being started (their sandbox being set up): every session that asks meanwhile gets the same one. */
const starting = new Map();

/** The running server of `key`, or a new one, started in its sandbox (its rules, as the session sent them) if any. */
function serverFor(key, spec, sandbox, idleMs) {
  const current = servers.get(key);
  if (current && !current.stopping) return Promise.resolve(current);
  let pending = starting.get(key);
  if (pending) return pending;
  pending = (async () => {
    const violation = (text) => servers.get(key)?.broadcast({ hub: "violation", line: text });
    const launch = sandbox ? await sandboxedStart(spec, sandbox, violation) : { ...spec, release() {} };
    for (const file of launch.mountPoints ?? []) watchdog?.watchPath(file);
    const onEnded = (ended) => {
      // A new process of the same definition, started while this one ended, has the same temp dir.
      launch.release(starting.has(key) || (servers.get(key) ?? ended) !== ended);
      // The sandbox library's proxies stop once no sandboxed server runs here.
      if (sandbox)
        sandboxIdle()
          .then((reset) => reset && watchdog?.forgetPaths())
          .catch(() => undefined);
      forget(ended);
    };
    const server = new SharedServer(key, launch, idleMs, { log, onEnded, watchdog });
    servers.set(key, server);
    log("server.start", { key, command: path.basename(spec.command), sandboxed: !!sandbox });
    return server;
  })().finally(() => starting.delete(key));
  starting.set(key, pending);
  return pending;
}

function control(session, line) {
  if (line.hub === "restart" && session.server && !session.server.stopping) {
    log("server.restart", { key: session.server.key });
    session.server.restart();
  }
}

/** A server that has exited: forgotten (unless another took its place already), and the hub may be done. */
function forget(server) {
  if (servers.get(server.key) === server) servers.delete(server.key);
  lingerIfEmpty(Math.min(EMPTY_LINGER_MS, server.idleMs));
}

function lingerIfEmpty(ms = EMPTY_LINGER_MS) {
  clearTimeout(lingerTimer);
  if (servers.size > 0 || sessionCount > 0) return;
  log("hub.empty", { exitInMs: ms });
  lingerTimer = setTimeout(() => {
    if (servers.size > 0 || sessionCount > 0) return;
    log("hub.exit", {});
    shutdown(0);
  }, ms);
}

let listener;
/** @type {HubWatchdog | undefined} */
let watchdog;
function shutdown(code) {
  listener?.close();
  watchdog?.release();
  if (process.platform !== "win32") fs.rmSync(SOCKET, { force: true });
  if (fs.existsSync(LOCK) && fs.readFileSync(LOCK, "utf8") === String(process.pid)) fs.rmSync(LOCK, { force: true });
  process.exit(code);
}

function serve() {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  if (!takeLock()) return process.exit(0);
  // What a killed hub's servers left in their temp dirs (named after their definitions, so a new start of one would
  // reuse its dir): no server of this hub runs yet. The watchdog cannot remove them, as a new hub may be starting them.
  fs.rmSync(path.join(dir, "tmp"), { recursive: true, force: true });
  watchdog = new HubWatchdog(ownerToken);
  // What the hub starts with its own environment (the sandbox library's relays) carries its mark, and ends with it.
  process.env[OWNER_ENV] = `${ownerToken}-0`;
  if (process.platform !== "win32") fs.rmSync(SOCKET, { force: true });
  listener = net.createServer((socket) => {
    sessionCount++;
    clearTimeout(lingerTimer);
    // One connected pi session: the server it attached to, and the limits it asked for (until then, these).
    /** @type {{ socket: net.Socket, server?: SharedServer, idleMs: number, maxLineBytes: number }} */
    const session = { socket, server: undefined, idleMs: 30_000, maxLineBytes: 4 * 1024 * 1024 };
    socket.on("error", () => undefined);
    socket.on("close", () => {
      sessionCount--;
      session.server?.detach(session);
      lingerIfEmpty();
    });
    lines(
      socket,
      () => SESSION_LINE_MAX,
      (text) => {
        let message;
        try {
          message = JSON.parse(text);
        } catch {
          return socket.destroy();
        }
        if (message && typeof message.hub === "string" && message.jsonrpc === undefined) {
          if (message.hub === "attach" && !session.server)
            attach(session, message).catch((error) => {
              const { code } = /** @type {NodeJS.ErrnoException} */ (error);
              send(socket, { hub: "error", message: error instanceof Error ? error.message : String(error), code });
              socket.end();
            });
          else control(session, message);
          return;
        }
        if (session.server) session.server.fromSession(session, message);
      },
      () => socket.destroy(),
    );
  });
  // Only this user may connect: the socket is made in a 0700 directory, and itself 0600.
  const mask = process.umask(0o177);
  listener.listen(SOCKET, () => {
    process.umask(mask);
    log("hub.start", { pid: process.pid });
    lingerIfEmpty();
  });
  listener.on("error", (error) => {
    log("hub.error", { message: error.message });
    shutdown(1);
  });
  for (const name of ["SIGTERM", "SIGINT", "SIGHUP"]) {
    process.on(name, () => {
      // No session joins a hub that is ending: they start the next one.
      listener?.close();
      for (const server of servers.values()) server.stop();
      setTimeout(() => shutdown(0), STOP_GRACE_MS * 2 + 500).unref();
    });
  }
}

// A throw (at its start, say) is logged with why: the pi that started it names this log.
process.on("uncaughtException", (error) => {
  log("hub.crash", { message: error.message });
  process.exit(1);
});
serve();
