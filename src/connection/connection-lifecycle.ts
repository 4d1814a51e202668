/**
 * The life of one server's connection, apart from the requests sent on it: the first connect that everyone who needs
 * the server up shares, one attempt at a time, a drop and the reconnect (remote) or restart (local) schedule, giving
 * up, and ending on purpose (`/mcp reconnect`, `logout`, `disable`, shutdown). What it is doing is one value
 * (./connection-state.ts) that only `apply` changes; ./lifecycle-report.ts records each change. ./server-connection.ts
 * owns it and sends every request through `ready`.
 */
import { BridgeError } from "../common/errors.ts";
import type { Redactor } from "../common/redact.ts";
import { within } from "../common/wait.ts";
import type { ServerConfig } from "../config/types.ts";
import type { SignInHandler } from "../oauth/provider.ts";
import type { ServerAuth } from "../oauth/server-auth.ts";
import {
  type ConnectionEvent,
  type ConnectionState,
  errorOf,
  inSchedule,
  liveSession,
  ownsAttempt,
  transition,
} from "./connection-state.ts";
import { cancelledError, connectError, disabledError } from "./error-messages.ts";
import { notConnectedError, stillReconnectingError, waitingNote } from "./call-errors.ts";
import { shutDownError, untrustedError } from "./stop-errors.ts";
import { HealthChecks } from "./health-checks.ts";
import type { LifecycleReport } from "./lifecycle-report.ts";
import type { LiveSession } from "./live-session.ts";
import { startFailureKey } from "./local/repeated-failure.ts";
import { RetrySchedule, worthRetrying } from "./retry-schedule.ts";
import type { SessionOpener } from "./session-opener.ts";

export interface LifecycleOptions {
  config: ServerConfig;
  opener: SessionOpener;
  report: LifecycleReport;
  redactor: Redactor;
  auth: ServerAuth;
  /** False while a project server is not trusted: nothing starts or connects it. */
  trusted: () => boolean;
  /** Who can send the user to a sign-in page right now, if anyone. */
  signIn?: () => SignInHandler | undefined;
  stableAfterMs?: number;
  /** A new session opened: its owner takes what it offers, before the state says live. Returns its tool count. */
  adopt: (session: LiveSession) => number;
  /** The state says live now. */
  connected: () => void;
}

export class ConnectionLifecycle {
  /** The reconnect (remote) or restart (local) schedule. */
  private readonly schedule: RetrySchedule;
  private readonly checks: HealthChecks;
  /** What the connection is doing; only `apply` changes it. */
  private current: ConnectionState<LiveSession>;
  /** The first connect of a run (startup, first use, `/mcp reconnect`), shared by everyone who needs the server up. */
  private starting?: Promise<void>;
  /** A `/mcp reconnect` that is ending the old session, before its connect starts; and the latest one. */
  private renewing?: Promise<void>;
  private reconnecting?: Promise<void>;
  /** How the last attempt failed, where a second failure the same way rules out restarting (./local/repeated-failure.ts). */
  private lastFailure?: string;
  /** The failure that was the same as the one before: it ends the schedule. */
  private repeated?: BridgeError;

  constructor(private readonly options: LifecycleOptions) {
    const { config, report } = options;
    this.current = config.enabled ? { kind: "idle" } : { kind: "disabled" };
    this.schedule = new RetrySchedule(
      config.retry,
      {
        attempt: (n) => this.connectOnce(n),
        retryable: (error) => error !== this.repeated && worthRetrying(error, config.transport === "stdio"),
        scheduled: (attempt, at) => this.apply({ type: "scheduled", attempt, at }),
        gaveUp: (error) => this.giveUp(error),
        url: () => (options.opener.endpoint() as { url?: string } | undefined)?.url,
      },
      options.stableAfterMs,
    );
    this.checks = new HealthChecks({
      interval: config.healthCheckInterval,
      pingTimeout: config.pingTimeout,
      report,
      redact: (text) => options.opener.redact(text),
      lost: (session, detail) => this.dropped(session, detail),
    });
  }

  get state(): ConnectionState<LiveSession> {
    return this.current;
  }

  /** The open session, if any. */
  get live(): LiveSession | undefined {
    return liveSession(this.current);
  }

  private get name(): string {
    return this.options.config.name;
  }

  /** The one writer of the state: the report records the change with it. False when `event` changed nothing. */
  private apply(event: ConnectionEvent<LiveSession>): boolean {
    const before = this.current;
    this.current = transition(before, event);
    if (this.current === before) return false;
    this.options.report.record(event, before);
    return true;
  }

  checkTrusted(): void {
    if (!this.options.trusted()) throw untrustedError(this.options.config);
  }

  /** A remote stream reported an error: the health checks decide whether the connection still works. */
  streamError(session: LiveSession, error: Error): void {
    this.checks.streamError(session, error);
  }

  /** Starts the server if nobody has, and waits for that connect; a failure retrying may fix starts the schedule. */
  async connect(): Promise<void> {
    if (this.current.kind === "closed") throw shutDownError(this.name);
    this.checkTrusted();
    this.starting ??= this.connectOnce(0).catch((error: unknown) => {
      // Unless it was closed or stopped meanwhile: then this failure decides nothing (the failure itself was reported).
      if (this.current.kind !== "retrying" && this.current.kind !== "needsSignIn") throw error;
      if (this.schedule.retryIn(error) !== null) void this.schedule.start();
      else this.giveUp(error);
      throw error;
    });
    await this.starting;
  }

  /** One connect attempt: a new live session, open within the server's deadline (signing in on the way if asked). */
  private async connectOnce(attempt: number): Promise<void> {
    const { config, opener, report } = this.options;
    this.checkTrusted();
    const id = Symbol(this.name);
    // Refused once closed, and while another attempt is under way (never, as `endOnPurpose` ends that one first).
    if (!this.apply({ type: "attempt", attempt, id })) throw shutDownError(this.name);
    const started = Date.now();
    let session: LiveSession;
    try {
      session = await opener.open(started + config.timeout, this.schedule.signal);
      // Closed, or stopped on purpose (`/mcp reconnect`, `/mcp logout`), while it opened: what it opened is not kept.
      if (!ownsAttempt(this.current, id)) {
        await session.close({ graceful: false });
        throw shutDownError(this.name, { whileConnecting: true });
      }
    } catch (error) {
      const durationMs = Date.now() - started;
      const wrapped =
        error instanceof BridgeError
          ? error
          : ownsAttempt(this.current, id)
            ? this.failedStart(error, durationMs)
            : shutDownError(this.name, { whileConnecting: true, cause: error });
      const { kind, message } = wrapped;
      const signIn = kind === "auth" && this.options.auth.signInRequired;
      const retryIn = signIn ? null : this.schedule.retryIn(wrapped);
      const said = this.options.redactor.text(message);
      this.apply({ type: "failed", id, error: said, kind, durationMs, signIn, retryIn });
      // Shown as it is by `/mcp auth`, `/mcp reconnect`, …: a sign-in's error quotes the authorization server.
      wrapped.message = said;
      throw wrapped;
    }
    this.schedule.connected();
    this.lastFailure = undefined;
    const toolCount = this.options.adopt(session);
    if (session.pid !== undefined) report.spawned(session.pid, config.command);
    const at = Date.now();
    this.apply({ type: "connected", id, session, at, durationMs: at - started, transport: session.kind, toolCount });
    this.checks.start(session);
    this.options.connected();
  }

  /** The error of a start that failed, said once more plainly (and not retried) when it failed as the one before. */
  private failedStart(error: unknown, durationMs: number): BridgeError {
    const ctx = this.options.opener.errorContext();
    const key = startFailureKey(ctx, error);
    // The start before may be this attempt's own first one, the one that asked with the revision probe.
    const before = this.options.opener.probeStartFailure ?? this.lastFailure;
    const repeated = key !== undefined && key === before;
    this.lastFailure = key;
    const wrapped = connectError(ctx, error, durationMs, repeated);
    if (repeated) this.repeated = wrapped;
    return wrapped;
  }

  /** The live session was lost: release what is left of it and start the schedule. Nothing for a stale session. */
  dropped(session: LiveSession, reason: string): void {
    const { config, opener, report, redactor } = this.options;
    const retry = config.retry.maxAttempts > 0;
    if (!this.apply({ type: "dropped", session, reason: redactor.text(reason), retry })) return;
    this.checks.stop();
    if (session.pid !== undefined) report.crashed(session.pid, reason, opener.stderrTail());
    // A wrapper that exited may have left its real server running; a remote session's sockets must go too.
    void session.close({ graceful: false });
    this.schedule.dropped();
    // With no attempt left since the server was last stable, the schedule gives up at once with this cause.
    if (retry) void this.schedule.start(new Error(reason));
  }

  /** No more attempts: calls now fail with the reason (a remote server's after one more connect each; see `ready`). */
  private giveUp(error: unknown): void {
    const attempts = this.schedule.attemptsMade;
    // A server that failed the same way twice did not run out of retries: they were ruled out, as of no use.
    const exhausted =
      error !== this.repeated && worthRetrying(error, this.options.config.transport === "stdio") && attempts > 0;
    const reason = error instanceof Error ? error.message : errorOf(this.current);
    this.apply({ type: "gaveUp", reason, attempts, exhausted });
  }

  /**
   * The live session for a request: starts an idle server, waits for a reconnect under way, tries one connect for a
   * remote server that gave up, fails for a local one.
   */
  async ready(toolName: string, signal?: AbortSignal, onWait?: (note: string) => void): Promise<LiveSession> {
    const { config, opener } = this.options;
    const state = this.current;
    if (state.kind === "closed") throw shutDownError(this.name);
    this.checkTrusted();
    if (state.kind === "live") return state.session;
    if (state.kind === "disabled") throw disabledError(config);
    const note = onWait && waitingNote(opener.errorContext(), state, config.retry.maxAttempts, toolName);
    if (note) onWait?.(note);
    if (state.kind === "idle") await this.connect();
    else if (inSchedule(state) && "wasUp" in state && state.wasUp) {
      // A reconnect is under way: wait for it, as long as the call itself could have taken, its next attempt now
      // rather than after the backoff. (A server that never came up this session is not waited for: each call would
      // wait its whole timeout for what may never come.)
      this.schedule.hurry();
      await within(this.schedule.running ?? Promise.resolve(), {
        ms: config.requestTimeout,
        timedOut: () => stillReconnectingError(opener.errorContext(), this.current, config.retry.maxAttempts, toolName),
        signal,
        aborted: () => cancelledError(this.name, toolName),
      });
    } else if (state.kind === "gaveUp" && state.exhausted && config.transport !== "stdio") {
      // A remote server whose attempts ran out (the network was down, it was being redeployed) may be back: a call
      // tries one connect, as the user would with `/mcp reconnect`. A local server's ran out on crashes: not restarted.
      this.starting = undefined;
      await this.connect().catch(() => undefined);
    } else if (!inSchedule(state)) {
      await this.starting?.catch(() => undefined);
      // A server that waited for a sign-in nobody could do (at startup, say) signs in now if someone can.
      if (this.current.kind === "needsSignIn" && this.options.signIn?.()) await this.reconnect();
    }
    // Ended by `/mcp reconnect` meanwhile: its connect (`starting`) is what comes back.
    await this.starting?.catch(() => undefined);
    if (this.live) return this.live;
    throw notConnectedError(opener.errorContext(), this.current, config.retry.maxAttempts);
  }

  /** Starts afresh (`/mcp reconnect`, a reload): ends the session and schedule, connects with a new set of attempts. */
  async reconnect(): Promise<void> {
    if (this.current.kind === "closed") throw shutDownError(this.name);
    this.checkTrusted();
    // Asked again while one still ends the old session: that one's new session is this one's too (a second would
    // find the first's session live and be refused).
    if (this.renewing) return this.renewing;
    // A call made meanwhile waits for the new session (`ready` awaits `starting`) rather than failing as stopped.
    const ended = this.endOnPurpose("reconnect requested");
    const mine =
      (this.starting =
      this.renewing =
      this.reconnecting =
        ended.then(() => {
          this.renewing = undefined;
          this.schedule.reset();
          this.starting = undefined;
          return this.connect();
        }));
    // Its connect ended by a later reconnect: that one's outcome is this one's, not a failure of its own.
    await mine.catch((error: unknown) => {
      if (this.reconnecting === mine) throw error;
      return this.reconnecting;
    });
  }

  /** Ends session, schedule and an attempt under way (waited for, so none runs beside the next) as the user asked. */
  async endOnPurpose(reason: string): Promise<void> {
    const session = this.live;
    this.lastFailure = undefined;
    this.apply({ type: "stopped", reason });
    this.checks.stop();
    const ending = [session?.close({ graceful: false, terminateSession: true }), this.options.opener.abandon(session)];
    await Promise.all([this.schedule.stop(), this.starting?.catch(() => undefined), ...ending]);
  }

  /** After `/mcp logout` ended the connection: says how to sign in again. */
  signedOut(message: string): void {
    this.apply({ type: "signedOut", message });
  }

  /**
   * Closed at once, so nothing starts while the processes end; an attempt under way keeps nothing. Undefined when it
   * was closed already; else resolves once what the connection held has ended.
   */
  close(disabled: boolean): Promise<void> | undefined {
    const live = this.live;
    if (!this.apply({ type: "closed", disabled })) return undefined;
    this.schedule.close();
    this.checks.stop();
    const { opener, report } = this.options;
    const pid = live?.pid;
    return Promise.all([opener.abandon(live), live?.close({ graceful: true, terminateSession: true })]).then(() => {
      // Said once the process has ended, so it says how it ended (not awaited: a quitting pi does not wait for it).
      if (pid !== undefined) void live?.ended().then((ending) => report.shutdown(pid, ending));
    });
  }
}
