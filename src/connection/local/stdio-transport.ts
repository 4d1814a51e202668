/**
 * A stdio client transport that runs an MCP server in a process group of its own.
 *
 * The SDK's StdioClientTransport spawns a server in pi's own process group: Ctrl+C in pi's terminal reaches every
 * server, and ending a server means hunting down its descendants one by one. Here the server is spawned `detached`
 * (on POSIX a new session and process group whose id is the server's pid), so a signal to the group reaches
 * everything the server started that did not leave the group. The SDK's message framing (`serializeMessage`, and
 * `deserializeMessage` through ./stdio-framing.ts, which bounds one line) and its safe default environment are used.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { getDefaultEnvironment } from "@modelcontextprotocol/client/stdio";
import {
  type JSONRPCMessage,
  type MessageExtraInfo,
  serializeMessage,
  type Transport,
} from "@modelcontextprotocol/client";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../../config/defaults.ts";
import type { Watch } from "./orphan-watchdog.ts";
import {
  endMarked,
  groupHasLiveMember,
  newOwnerMark,
  NPM_ROLLBACK_MS,
  npxInstalling,
  OWNER_ENV,
} from "./process-tree.ts";
import { asError } from "../../common/errors.ts";
import { InOrderDelivery, LineFraming, NonJsonLine } from "./stdio-framing.ts";
import { StderrLines } from "./stderr-lines.ts";
import type { Launch, PreparedSpawn, ProcessEnding, ProcessGroupStdioOptions } from "./stdio-options.ts";

export type { ProcessEnding } from "./stdio-options.ts";

const DEFAULT_CLOSE_GRACE_MS = 2000;
/** How often close() looks at a state no event announces (the rest of the group being gone). */
const POLL_MS = 25;
/** How long close() lets output written before the exit arrive, once the process has ended. */
const STREAM_DRAIN_MS = 250;
const IS_WINDOWS = process.platform === "win32";
const QUEUED = Promise.resolve();
/** A burst's held messages leave this many at a time, so that the server answers the first while the rest are made. */
export const BURST_WRITE = 32;

type Child = ChildProcessByStdio<Writable, Readable, Readable>;

/**
 * A Transport over a child process's stdin/stdout, the child leading its own process group (POSIX).
 *
 * `onclose` fires once: when the process has exited and its stdout and stderr have closed (so every message and
 * stderr line comes first), or `closeGraceMs` after the exit if something outside the process still holds them open,
 * or when close() finishes, or after a failed start.
 */
export class ProcessGroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  /** Lines the server wrote to stdout that are not JSON-RPC messages. */
  nonJsonLines = 0;
  /** Lines the server wrote to stdout, messages or not. */
  linesRead = 0;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  sessionId?: string;
  /** The server's value of `MCP_BRIDGE_OWNER`, which its descendants inherit: how they are found when it ends. */
  readonly ownerMark = newOwnerMark();

  private readonly graceMs: number;
  private readonly readBuffer: LineFraming;
  private child?: Child;
  /** The process group, as the watchdog watches it. */
  private watched?: Watch;
  private started = false;
  private spawned = false;
  /** The process has exited, or never started. */
  private ended = false;
  private openStreams = 0;
  private closeFired = false;
  private closing?: Promise<void>;
  /** When the bridge began to stop the process, the last signal it sent the group before it exited, why if unasked. */
  private stopping?: { at: number; signal?: "SIGTERM" | "SIGKILL"; why?: string };
  /** Set when the process exits after the bridge began to stop it. */
  ending?: ProcessEnding;
  /** close() has finished: the group is not signalled any more (its id could be reused). */
  private finished = false;
  private afterExitTimer?: NodeJS.Timeout;
  private readonly wakers = new Set<() => void>();
  private readonly delivery = new InOrderDelivery({
    next: () => this.nextMessage(),
    deliver: (message) => this.onmessage?.(message),
    onError: (error) => this.reportError(error),
  });
  /** The server wrote something over a limit: the rest of its stdout is ignored. */
  private refused = false;
  /** Writes to stdin made and finished, and the sends that wait for theirs (past the high-water mark). */
  private writesIssued = 0;
  private writesDone = 0;
  private readonly writesWaiting: { seq: number; resolve(): void; reject(error: Error): void }[] = [];
  /** Messages sent in this turn of the event loop: the first is written at once, the others are held (corked). */
  private burst = 0;
  private prepared?: PreparedSpawn;
  /** pi quits, close() left the server to the watchdog (`leftToWatchdog`): the rest of the close, not holding pi. */
  handedOver?: Promise<void>;

  constructor(private readonly options: ProcessGroupStdioOptions) {
    this.graceMs = options.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS;
    this.readBuffer = new LineFraming(options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES);
  }

  /** The server's pid; on POSIX also its process group id. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * The SDK tells a stdio transport from an HTTP one by its `pid` and `stderr`, as its own stdio transport has them,
   * and judges a revision probe's silence by that (on stdio: an older server; on HTTP: an outage). stderr is read
   * here line by line (`onStderrLine`), so no stream is handed out.
   */
  get stderr(): null {
    return null;
  }

  async start(): Promise<void> {
    if (this.started) throw new Error("ProcessGroupStdioTransport already started");
    if (this.closing) throw new Error("ProcessGroupStdioTransport is closed");
    this.started = true;
    let launch: Launch = this.options;
    if (this.options.prepare) {
      try {
        launch = this.prepared = await this.options.prepare();
      } catch (error) {
        this.ended = true;
        process.nextTick(() => this.fireClose());
        throw error;
      }
      // Closed while the command line was being made: nothing is spawned (close() has fired onclose, or will).
      if (this.closing) {
        this.ended = true;
        this.prepared.release();
        throw new Error("ProcessGroupStdioTransport is closed");
      }
    }
    return this.spawnChild(launch);
  }

  private spawnChild(launch: Launch): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const fail = (error: unknown) => {
        this.ended = true;
        this.wake();
        reject(error);
        this.destroyStreams();
        // As the SDK's transport does: a failed start also closes the transport.
        process.nextTick(() => this.fireClose());
      };
      let child: Child;
      try {
        child = spawn(launch.command, launch.args, {
          env: { ...getDefaultEnvironment(), ...launch.env, [OWNER_ENV]: this.ownerMark },
          cwd: this.options.cwd,
          stdio: ["pipe", "pipe", "pipe"],
          // POSIX: setsid(), so the server leads a new session and process group, away from pi's terminal.
          // (On Windows it would open a console window instead.)
          detached: !IS_WINDOWS,
          windowsHide: true,
          shell: false,
        });
      } catch (error) {
        fail(error);
        return;
      }
      this.child = child;
      // At once, in the same tick as the spawn: there is no moment in which pi could die with the group unwatched.
      if (child.pid !== undefined && !IS_WINDOWS) this.watched = this.options.watchdog?.watch("group", child.pid);
      child.once("spawn", () => {
        this.spawned = true;
        resolve();
      });
      child.on("error", (error) => {
        if (!this.spawned && !this.ended) fail(error);
        else this.reportError(error);
      });
      child.once("exit", (code, signal) => this.handleExit(code, signal));
      child.stdin.on("error", (error) => this.reportError(error));
      child.stdout.on("data", (chunk: Buffer) => this.handleStdout(chunk));
      child.stdout.on("error", (error) => this.reportError(error));
      child.stdout.on("close", async () => {
        this.readBuffer.end();
        this.delivery.drain();
        this.streamClosed();
        // Closed while the process runs on, it can answer nothing more: it is stopped, its exit saying why.
        if (this.ended || (await this.waitUntil(() => this.ended || !!this.closing, this.graceMs))) return;
        this.stopping = { at: Date.now(), why: "closed its stdout but kept running, so it was stopped" };
        void this.close();
      });
      child.stderr.setEncoding("utf8");
      const stderr = new StderrLines((line) => this.options.onStderrLine?.(line));
      child.stderr.on("data", (text: string) => stderr.push(text));
      child.stderr.on("error", (error) => this.reportError(error));
      child.stderr.on("close", () => {
        stderr.flush();
        this.streamClosed();
      });
      this.openStreams = 2;
    });
  }

  /** A message sent now is written to the server's stdin (its process is running and stdin open). */
  get accepting(): boolean {
    const stdin = this.child?.stdin;
    return !!stdin && !this.ended && !this.closing && !stdin.destroyed && !stdin.writableEnded;
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || !this.accepting) {
      // The process is gone, its output maybe not read to the end (Node may tell of the exit first): fail once it is,
      // so that a failed start's error, built from that output, has all the server wrote.
      const reading = this.ended && !this.closeFired ? this.waitUntil(() => this.closeFired, this.graceMs) : QUEUED;
      return reading.then(() => Promise.reject(new Error("Not connected")));
    }
    // Resolved as soon as the data is queued (as the SDK does); past the stream's high-water mark the send waits for
    // its own write to finish or fail (EPIPE also reaches onerror); all writes share one callback. A burst's first
    // message is written at once, the rest sent before the event loop moves on are held and leave BURST_WRITE at a
    // time: a few system calls and wake-ups of the server instead of one of each a message.
    const seq = ++this.writesIssued;
    if (this.burst === 0) process.nextTick(this.endBurst, stdin);
    else if (this.burst === 1) stdin.cork();
    else if (this.burst % BURST_WRITE === 0) {
      stdin.uncork();
      stdin.cork();
    }
    this.burst++;
    if (stdin.write(serializeMessage(message), this.written)) return QUEUED;
    return new Promise<void>((resolve, reject) => this.writesWaiting.push({ seq, resolve, reject }));
  }

  private readonly endBurst = (stdin: Writable) => {
    if (this.burst > 1) stdin.uncork();
    this.burst = 0;
  };

  /**
   * Node calls a stream's write callbacks once each, in the order of the writes. A write that failed (EPIPE: the server
   * closed its input, most often by exiting) fails its send once the process has ended, as a send after the end does:
   * else a start whose first message failed so would be described by EPIPE, not by the exit and what it printed.
   */
  private readonly written = (error?: Error | null) => {
    const waiting = this.writesWaiting[0];
    if (waiting?.seq !== ++this.writesDone) return;
    this.writesWaiting.shift();
    if (error) void this.waitUntil(() => this.closeFired, this.graceMs).then(() => waiting.reject(error));
    else waiting.resolve();
  };

  /**
   * Ends stdin and waits up to `closeGraceMs` for the process to exit; then SIGTERMs the group (also when only
   * leftovers of an exited server remain) and waits up to `closeGraceMs` for the process and the rest of the group;
   * then SIGKILLs the group. Resolves once the process has exited (or `closeGraceMs` after the SIGKILL). Idempotent.
   */
  close(): Promise<void> {
    this.stopping ??= { at: Date.now() };
    this.closing ??= this.shutdown();
    return this.closing;
  }

  /**
   * Synchronous SIGKILL of the whole group, for a process 'exit' handler; not while npm installs for npx (killed
   * partway, it breaks npx's copy): the orphan watchdog, which outlives pi, ends it after npm's rollback time.
   */
  killNow(): void {
    this.stopping ??= { at: Date.now() };
    if (!this.finished && !npxInstalling(this.child?.pid)) this.signalGroup("SIGKILL");
  }

  private async shutdown(): Promise<void> {
    const child = this.child;
    if (child && !this.ended) {
      try {
        child.stdin.end();
      } catch {
        // Already closed.
      }
      await this.waitUntil(() => this.ended || this.options.watchdog?.takesOver === true, this.graceMs);
      if (!this.ended && this.leftToWatchdog(child)) return;
    }
    await this.escalate(child);
  }

  /**
   * pi is quitting (or quit during the grace of a close begun earlier, `/mcp test`'s), and its watchdog takes the server
   * over once pi's process has ended (not while npm installs for npx: pi says it waits for the rollback). pi's exit
   * does not wait for the server then: nothing of it holds pi's event loop, the session is over for the client
   * (`onclose` now), and if pi lives on after all, the close goes on as usual in the background.
   */
  private leftToWatchdog(child: Child): boolean {
    if (!this.options.watchdog?.takesOver || !this.watched || npxInstalling(child.pid)) return false;
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr] as Array<{ unref?(): void }>) stream.unref?.();
    this.handedOver = Promise.resolve().then(async () => {
      // Five graces: the watchdog's starts at pi's exit, and a pi slow to exit must not cut it short.
      await this.waitUntil(() => this.ended, 5 * this.graceMs);
      await this.escalate(child);
    });
    this.fireClose();
    return true;
  }

  /** SIGTERM, then SIGKILL, to what is left of the group; then lets go of the streams and fires `onclose`. */
  private async escalate(child: Child | undefined): Promise<void> {
    if (child?.pid !== undefined) {
      if (this.groupAlive()) {
        const grace = npxInstalling(child.pid) ? NPM_ROLLBACK_MS : this.graceMs;
        this.signalGroup("SIGTERM");
        await this.waitUntil(() => this.ended && !this.groupAlive(), grace);
      }
      if (!this.ended || this.groupAlive()) {
        this.signalGroup("SIGKILL");
        await this.waitUntil(() => this.ended, this.graceMs);
      }
    }
    this.finished = true;
    // A daemon (double-forked out of group and tree) goes before the watchdog may let go of the mark that finds it.
    if (child?.pid !== undefined) await endMarked(this.ownerMark);
    this.watched?.forget();
    // Let what the process wrote before it ended arrive; then let go of pipes that a process outside the group holds.
    await this.waitUntil(() => this.openStreams === 0, Math.min(this.graceMs, STREAM_DRAIN_MS));
    this.destroyStreams();
    this.fireClose();
  }

  private handleExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.ended = true;
    if (this.stopping) this.ending = { by: this.stopping.signal ?? "stdin", durationMs: Date.now() - this.stopping.at };
    this.wake();
    const description = signal ? `killed by ${signal}` : `exited with code ${code}`;
    this.options.onExit?.({ code, signal, description: this.stopping?.why ?? description });
    if (this.openStreams === 0) this.fireClose();
    // Something that outlived the process (a child that left the group) may hold stdout open indefinitely.
    else if (!this.closing) this.afterExitTimer = setTimeout(() => this.fireClose(), this.graceMs).unref();
  }

  private streamClosed(): void {
    this.openStreams = Math.max(0, this.openStreams - 1);
    this.wake();
    if (this.openStreams === 0 && this.ended) this.fireClose();
  }

  private fireClose(): void {
    if (this.closeFired) return;
    this.closeFired = true;
    clearTimeout(this.afterExitTimer);
    this.prepared?.release();
    this.readBuffer.clear();
    this.onclose?.();
  }

  private handleStdout(chunk: Buffer): void {
    if (this.closeFired || this.refused) return;
    try {
      this.readBuffer.append(chunk);
    } catch (error) {
      // A line over the limit: nothing after it can be trusted to be framed right, so the server is stopped and
      // nothing more it writes is read.
      this.refused = true;
      this.options.onRefused?.(asError(error));
      this.reportError(error);
      void this.close();
      return;
    }
    this.delivery.drain();
  }

  /** The next buffered message, counting what is read; a line that is not JSON-RPC is counted, reported and skipped. */
  private nextMessage(): JSONRPCMessage | null | undefined {
    if (this.closeFired || this.refused) return null;
    try {
      const message = this.readBuffer.readMessage();
      if (message !== null) this.linesRead++;
      return message;
    } catch (error) {
      this.nonJsonLines++;
      this.linesRead++;
      if (error instanceof NonJsonLine) this.options.onStrayLine?.(error.line);
      this.reportError(error);
      return undefined;
    }
  }

  private reportError(error: unknown): void {
    this.onerror?.(asError(error));
  }

  private destroyStreams(): void {
    for (const stream of this.child ? [this.child.stdin, this.child.stdout, this.child.stderr] : []) stream.destroy();
  }

  /** Whether anything of the server is still running: the process itself, or (POSIX) another live member of its group. */
  private groupAlive(): boolean {
    const pid = this.child?.pid;
    if (pid === undefined) return false;
    if (!this.ended) return true;
    if (IS_WINDOWS) return false;
    try {
      process.kill(-pid, 0);
    } catch {
      // ESRCH: the group is empty. EPERM: nothing in it can be signalled by us.
      return false;
    }
    return process.platform === "linux" ? groupHasLiveMember(pid) : true;
  }

  private signalGroup(signal: "SIGTERM" | "SIGKILL"): void {
    const child = this.child;
    const pid = child?.pid;
    if (!child || pid === undefined) return;
    if (this.stopping && !this.ended) this.stopping.signal = signal;
    try {
      if (!IS_WINDOWS) process.kill(-pid, signal);
      else if (!this.ended) child.kill(signal);
    } catch {
      // Already gone (ESRCH on POSIX: the whole group is).
    }
  }

  /** Waits until `done()` holds or `ms` pass; looks again on every exit or stream close, and every POLL_MS. */
  private async waitUntil(done: () => boolean, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.wakers.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(left, POLL_MS));
        if (this.handedOver) timer.unref();
        this.wakers.add(wake);
      });
    }
    return true;
  }

  private wake(): void {
    for (const wake of [...this.wakers]) wake();
  }
}
