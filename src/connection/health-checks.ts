/**
 * Finding out whether a session that looks open still works: every `interval` a session that has been quiet that long
 * is probed, and a probe can also be asked for (a remote stream reported an error). A probe looks at a local server's
 * process and pings the server; no answer within `pingTimeout` (or a dead process) counts as a lost connection.
 */
import { describeError } from "../common/errors.ts";
import { seconds } from "../common/text.ts";
import type { LogLevel } from "../common/log-file.ts";
import type { LiveSession } from "./live-session.ts";

export interface HealthCheckSettings {
  /** How long a session may be quiet before it is probed, in ms; 0 turns the periodic checks off. */
  interval: number;
  pingTimeout: number;
}

export interface HealthCheckHooks {
  /** Epoch ms of the server's last answer or notification. */
  lastHeard(): number | undefined;
  /** The server answered something (if only to refuse the ping). */
  heard(): void;
  /** The session has been quiet for a whole interval; a probe follows. */
  stale(lastHeard: number): void;
  /** The probe found the connection gone. */
  lost(session: LiveSession, detail: string): void;
  log(level: LogLevel, event: string, fields: Record<string, unknown>): void;
}

export class HealthChecks {
  private timer?: NodeJS.Timeout;
  private probing?: Promise<void>;

  constructor(
    private readonly settings: HealthCheckSettings,
    private readonly hooks: HealthCheckHooks,
  ) {}

  /** Checks `session` every interval from now on (replacing any session checked before). */
  start(session: LiveSession): void {
    this.stop();
    const { interval } = this.settings;
    if (interval <= 0) return;
    this.timer = setInterval(() => {
      const last = this.hooks.lastHeard() ?? 0;
      if (!session.isOpen || this.probing || Date.now() - last < interval) return;
      this.hooks.stale(last);
      void this.probe(session, "stale");
    }, interval);
    // A pending check must not keep a pi that is done from exiting.
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Probes `session` now, unless a probe is under way already (then waits for that one). `why` goes to the log. */
  probe(session: LiveSession, why: string): Promise<void> {
    this.probing ??= this.probeNow(session, why).finally(() => {
      this.probing = undefined;
    });
    return this.probing;
  }

  private async probeNow(session: LiveSession, why: string): Promise<void> {
    const { hooks } = this;
    const started = Date.now();
    if (!session.processAlive()) {
      hooks.lost(session, "the server process is gone");
      return;
    }
    try {
      await session.ping(this.settings.pingTimeout);
      hooks.log("debug", "request", { method: "ping", durationMs: Date.now() - started, ok: true, why });
    } catch (error) {
      const kind = session.classify(error);
      if (kind !== "timeout" && kind !== "transport") {
        // It answered, if only to refuse (no ping support, or it wants credentials: the next call signs in).
        hooks.heard();
        hooks.log("debug", "request", { method: "ping", durationMs: Date.now() - started, ok: false, why, kind });
        return;
      }
      const detail = kind === "timeout" ? `no answer to a ping within ${seconds(this.settings.pingTimeout)}` : describeError(error);
      hooks.log("warn", "request", { method: "ping", durationMs: Date.now() - started, ok: false, why, error: detail });
      hooks.lost(session, detail);
    }
  }
}
