// @ts-check
/**
 * One shared server under the hub (./hub.mjs): its process, and the sessions that use it. Ids and progress tokens the
 * sessions chose are rewritten to the hub's own, so two sessions never see each other's answers; the server is
 * initialized once; what it sends goes to the session it belongs to, or to all. Node's own modules only.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";

/** How long a server gets after its stdin closes, and again after SIGTERM to its group, before the next step. */
export const STOP_GRACE_MS = 2000;
const STDERR_LINE_MAX = 4096;
/**
 * `line` cut to STDERR_LINE_MAX, before a word or JSON string the cut would split (as `cutBetweenWords` does): pi
 * redacts it after the cut, and a secret split there would show its beginning.
 */
function cutLine(line) {
  if (line.length <= STDERR_LINE_MAX) return line;
  const at = line.slice(STDERR_LINE_MAX - 256, STDERR_LINE_MAX + 1).search(/[\s"',][^\s"',]*$/);
  return line.slice(0, at < 0 ? STDERR_LINE_MAX : STDERR_LINE_MAX - 256 + at);
}
/** Requests of the server's own (elicitation, sampling) go to the session whose call is in flight: these are not calls. */
const BACKGROUND = new Set([
  "ping",
  "initialize",
  "server/discover",
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
  "logging/setLevel",
  // A 2026-07-28 session keeps one open for as long as it lasts.
  "subscriptions/listen",
]);
export const OWNER_ENV = "MCP_BRIDGE_OWNER";
const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";
/** The first part of every server's `MCP_BRIDGE_OWNER` value, as each pi has its own. */
export const ownerToken = randomBytes(16).toString("hex");
/** 0 is the hub's own, for what it starts with its environment. */
let nextOwner = 1;

/** A line-per-message reader over a stream, a line bounded by `max()` bytes. */
export function lines(stream, max, onLine, onTooLong) {
  let partial = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    let text = partial + chunk;
    // A chunk without a line end only lengthens the line: searching all of it at each chunk would be quadratic.
    let newline = chunk.includes("\n") ? text.indexOf("\n") : -1;
    while (newline !== -1) {
      const line = text.slice(0, newline).replace(/\r$/, "");
      text = text.slice(newline + 1);
      if (line.trim()) onLine(line);
      newline = text.indexOf("\n");
    }
    partial = text;
    if (partial.length > max()) {
      partial = "";
      onTooLong();
    }
  });
}

/** What may wait unread for one session before it is let go: a pi that stopped reading (suspended, hung) costs no more. */
const UNREAD_MAX_BYTES = 64 * 1024 * 1024;

export function send(socket, value) {
  if (socket.destroyed || !socket.writable) return;
  // What waited before this message: one message (up to the session's maxMessageBytes) may be larger.
  if (socket.writableLength > UNREAD_MAX_BYTES) return socket.destroy();
  socket.write(`${JSON.stringify(value)}\n`);
}

function errorReply(id, message) {
  return { jsonrpc: "2.0", id, error: { code: -32603, message } };
}

export class SharedServer {
  /**
   * Starts the server of `spec` (command, args, env, cwd). `log` writes the hub's log; `onEnded` is told once its
   * process has exited (or could not be started), after every session was told and let go; `watchdog` (the hub's
   * ./hub-watchdog.mjs) watches its process group while it runs.
   */
  constructor(key, spec, idleMs, { log, onEnded, watchdog }) {
    this.log = log;
    this.onEnded = onEnded;
    this.key = key;
    this.idleMs = idleMs;
    /** @type {Set<{ socket: import("node:net").Socket, idleMs: number, maxLineBytes: number }>} */
    this.sessions = new Set();
    this.nextId = 1;
    /** hub id → { session, id the session chose, method } */
    this.pending = new Map();
    /** hub progress token → { session, token the session chose } */
    this.progress = new Map();
    /** id of a request the server sent → the session it was given to */
    this.asked = new Map();
    /** The server's answer to the first `initialize`, given again to every later session. */
    this.initialized = undefined;
    /** Sessions waiting for that first answer. */
    this.initWaiters = [];
    this.initSent = false;
    this.initializedNotified = false;
    this.ended = false;
    const mark = `${ownerToken}-${nextOwner++}`;
    const child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: { ...spec.env, [OWNER_ENV]: mark },
      stdio: ["pipe", "pipe", "pipe"],
      detached: process.platform !== "win32",
      windowsHide: true,
    });
    this.child = child;
    this.spawned = once(child, "spawn").then(() => child.pid);
    child.on("error", (error) => {
      this.log("server.error", { key, message: error.message });
      // Never started (a command not found): forgotten at once, so the next attach tries afresh and the hub can exit.
      if (child.pid === undefined && !this.ended) this.exited(null, null);
    });
    child.stdin.on("error", () => undefined);
    lines(
      child.stdout,
      () => Math.max(0, ...[...this.sessions].map((s) => s.maxLineBytes)) || 4 * 1024 * 1024,
      (line) => this.fromServer(line),
      () => {
        this.log("server.too_long", { key });
        this.broadcast({ hub: "too_long" });
        this.stop();
      },
    );
    child.stderr.setEncoding("utf8");
    let stderrPartial = "";
    child.stderr.on("data", (chunk) => {
      const parts = (stderrPartial + chunk).split(/\r?\n/);
      stderrPartial = parts.pop()?.slice(0, STDERR_LINE_MAX) ?? "";
      for (const line of parts) this.broadcast({ hub: "stderr", line: cutLine(line) });
    });
    child.stderr.on("end", () => stderrPartial && this.broadcast({ hub: "stderr", line: stderrPartial }));
    // At once, in the tick of the spawn: there is no moment in which the hub could die with the group unwatched.
    if (child.pid !== undefined) watchdog?.watch(child.pid);
    child.on("exit", (code, signal) => {
      // What is left of its group (a daemon it started, a wrapper's server) goes with it, a crash too, as unshared.
      this.signal("SIGKILL");
      if (child.pid !== undefined) watchdog?.forget(child.pid);
      this.exited(code, signal);
    });
  }

  broadcast(value) {
    for (const session of this.sessions) send(session.socket, value);
  }

  toServer(message) {
    if (!this.ended && this.child.stdin.writable) this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  attach(session) {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.sessions.add(session);
    this.idleMs = session.idleMs;
    this.broadcast({ hub: "sessions", count: this.sessions.size });
  }

  detach(session) {
    if (!this.sessions.delete(session)) return;
    for (const [hubId, request] of this.pending) {
      if (request.session !== session) continue;
      this.pending.delete(hubId);
      this.toServer({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: hubId, reason: "the pi session left" },
      });
    }
    for (const [token, entry] of this.progress) if (entry.session === session) this.progress.delete(token);
    for (const [id, asked] of this.asked) {
      if (asked !== session) continue;
      this.asked.delete(id);
      this.toServer(errorReply(id, "the pi session this was asked of has left"));
    }
    this.initWaiters = this.initWaiters.filter((w) => w.session !== session);
    this.broadcast({ hub: "sessions", count: this.sessions.size });
    this.idleIfUnused();
  }

  /** With no session left (or none that stayed for its start), the server stops after its idle time. */
  idleIfUnused() {
    if (this.sessions.size > 0 || this.ended || this.idleTimer) return;
    this.idleTimer = setTimeout(() => this.stop(), this.idleMs);
    this.log("server.idle", { key: this.key, stopInMs: this.idleMs });
  }

  fromSession(session, message) {
    if (message.method === undefined) {
      // An answer to a request the server sent this session.
      if (this.asked.get(message.id) === session) {
        this.asked.delete(message.id);
        this.toServer(message);
      }
      return;
    }
    if (message.id === undefined) return this.notificationFromSession(session, message);
    if (message.method === "initialize") return this.initialize(session, message);
    const hubId = this.nextId++;
    this.pending.set(hubId, { session, id: message.id, method: message.method });
    const token = message.params?._meta?.progressToken;
    let params = message.params;
    if (token !== undefined) {
      const hubToken = `hub-${hubId}`;
      this.progress.set(hubToken, { session, token });
      params = { ...params, _meta: { ...params._meta, progressToken: hubToken } };
    }
    this.toServer({ ...message, id: hubId, ...(params ? { params } : {}) });
  }

  notificationFromSession(session, message) {
    if (message.method === "notifications/initialized") {
      if (this.initializedNotified) return;
      this.initializedNotified = true;
      return this.toServer(message);
    }
    if (message.method === "notifications/cancelled") {
      for (const [hubId, request] of this.pending) {
        if (request.session !== session || request.id !== message.params?.requestId) continue;
        // No longer in flight: a server need not answer a cancelled request.
        this.pending.delete(hubId);
        this.progress.delete(`hub-${hubId}`);
        return this.toServer({ ...message, params: { ...message.params, requestId: hubId } });
      }
      return;
    }
    this.toServer(message);
  }

  /** The server is initialized once; every later session gets the same answer, to its own request id. */
  initialize(session, message) {
    if (this.initialized) return send(session.socket, { jsonrpc: "2.0", id: message.id, result: this.initialized });
    this.initWaiters.push({ session, id: message.id });
    if (this.initSent) return;
    this.initSent = true;
    const hubId = this.nextId++;
    this.pending.set(hubId, { session: undefined, id: undefined, method: "initialize" });
    this.toServer({ ...message, id: hubId });
  }

  fromServer(line) {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      return this.broadcast({ hub: "stderr", line: `(not JSON-RPC on stdout) ${cutLine(line)}` });
    }
    if (message === null || typeof message !== "object") return;
    if (message.method === undefined) return this.answer(message);
    if (message.id === undefined) return this.notification(message);
    this.request(message);
  }

  answer(message) {
    // The hub's ids are numbers; one a server echoes as a string ("1") is the same, as the SDK's client takes it.
    const hubId = Number(message.id);
    const request = this.pending.get(hubId);
    if (!request) return;
    this.pending.delete(hubId);
    this.progress.delete(`hub-${hubId}`);
    if (request.method === "initialize") {
      if (message.result) this.initialized = message.result;
      else this.initSent = false;
      const waiters = this.initWaiters;
      this.initWaiters = [];
      for (const waiter of waiters) send(waiter.session.socket, { ...message, id: waiter.id });
      return;
    }
    send(request.session.socket, { ...message, id: request.id });
  }

  notification(message) {
    if (message.method === "notifications/progress") {
      const entry = this.progress.get(message.params?.progressToken);
      if (entry) send(entry.session.socket, { ...message, params: { ...message.params, progressToken: entry.token } });
      return;
    }
    if (message.method === "notifications/cancelled") {
      const session = this.asked.get(message.params?.requestId);
      if (session) send(session.socket, message);
      return;
    }
    // 2026-07-28: what a `subscriptions/listen` request asked for names that request's id; it goes to the session
    // whose request that is, under the id it chose.
    const meta = message.params?._meta;
    if (meta && meta[SUBSCRIPTION_ID] !== undefined) {
      const listen = this.pending.get(meta[SUBSCRIPTION_ID]);
      if (!listen?.session) return;
      const params = { ...message.params, _meta: { ...meta, [SUBSCRIPTION_ID]: listen.id } };
      return send(listen.session.socket, { ...message, params });
    }
    // List changes, resource updates, log messages of the handshake revisions: every session.
    this.broadcast(message);
  }

  /** A request of the server's own goes to the one session with a call in flight; refused when there is none, or several. */
  request(message) {
    if (message.method === "ping") return this.toServer({ jsonrpc: "2.0", id: message.id, result: {} });
    const calling = new Set();
    for (const request of this.pending.values())
      if (request.session && !BACKGROUND.has(request.method)) calling.add(request.session);
    let target;
    if (calling.size === 1) target = [...calling][0];
    else if (calling.size === 0 && message.method === "roots/list") target = this.sessions.values().next().value;
    if (!target) {
      const why =
        calling.size === 0
          ? `no pi session has a call in flight on this shared server, so none can answer ${message.method}`
          : `${calling.size} pi sessions have calls in flight on this shared server, and which one this ${message.method} is for cannot be told`;
      return this.toServer(errorReply(message.id, why));
    }
    this.asked.set(message.id, target);
    send(target.socket, message);
  }

  /** Ends the server: stdin closed, then SIGTERM and SIGKILL to its process group, each after a grace. */
  stop() {
    if (this.stopping) return;
    this.stopping = true;
    const { child } = this;
    child.stdin.end();
    const term = setTimeout(() => this.signal("SIGTERM"), STOP_GRACE_MS);
    const kill = setTimeout(() => this.signal("SIGKILL"), STOP_GRACE_MS * 2);
    child.once("exit", () => {
      clearTimeout(term);
      clearTimeout(kill);
    });
  }

  /** Sends `name` to the server's process group. */
  signal(name) {
    try {
      if (process.platform === "win32") this.child.kill(name);
      else process.kill(-(/** @type {number} */ (this.child.pid)), name);
    } catch {
      // Gone already.
    }
  }

  exited(code, signal) {
    this.ended = true;
    clearTimeout(this.idleTimer);
    const description = signal ? `killed by ${signal}` : `exited with code ${code}`;
    this.log("server.exit", { key: this.key, description, stopped: !!this.stopping });
    this.letGo({ hub: "exit", code, signal, description });
    this.onEnded(this);
  }

  /**
   * Restarts the server for every session (one of them asked): each is let go at once, told why, and reconnects to the
   * new process while this one is being stopped (so no request reaches a server on its way out).
   */
  restart() {
    this.letGo({
      hub: "exit",
      code: null,
      signal: null,
      description: "was restarted for every pi session using it (/mcp reconnect in one of them)",
    });
    this.stop();
  }

  /** Tells every session `last` and closes its connection. */
  letGo(last) {
    for (const session of this.sessions) {
      send(session.socket, last);
      session.socket.end();
    }
    this.sessions.clear();
  }
}
