/**
 * Finding out whether a session that looks open still works. Every `interval`, a session that has been quiet that
 * long is probed; a remote stream that reports an error is probed at once. A probe looks at a local server's process
 * and pings the server: no answer within `pingTimeout` (or a dead process) counts as a lost connection.
 */
import { describeError } from "../common/errors.ts";
import { classifyError } from "../common/error-kinds.ts";
import type { LogLevel } from "../common/log-file.ts";
import { seconds } from "../common/text.ts";
import { isUnauthorized } from "../oauth/session.ts";
import type { LifecycleReport } from "./lifecycle-report.ts";
import type { LiveSession } from "./live-session.ts";

export interface HealthCheckOptions {
  /** How long a session may be quiet before it is probed, in ms; 0 turns the periodic checks off. */
  interval: number;
  pingTimeout: number;
  report: LifecycleReport;
  redact(text: string): string;
  /** The probe found the connection gone; `detail` says how. */
  lost(session: LiveSession, detail: string): void;
}

export class HealthChecks {
  private timer?: NodeJS.Timeout;
  private probing?: Promise<void>;
  /** The session being checked. */
  private session?: LiveSession;

  constructor(private readonly options: HealthCheckOptions) {}

  /** Checks `session` from now on (replacing any session checked before). */
  start(session: LiveSession): void {
    this.stop();
    this.session = session;
    const { interval, report } = this.options;
    if (interval <= 0) return;
    this.timer = setInterval(() => {
      const last = report.health.lastHeard ?? 0;
      // A call under way may take its whole `requestTimeout`, silent; its own timeout tells if the server hangs.
      if (!session.isOpen || session.awaiting || this.probing || Date.now() - last < interval) return;
      report.stale(last);
      void this.probe(session, "stale");
    }, interval);
    // A pending check must not keep a pi that is done from exiting.
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.session = undefined;
  }

  /**
   * A remote stream of `session` broke, which says nothing else: probe whether the server still answers. Not for an
   * error that wants credentials: the request that met it signs in, and a ping would only start another sign-in.
   */
  streamError(session: LiveSession, error: Error): void {
    if (session !== this.session || isUnauthorized(error) || classifyError(error) === "auth") return;
    void this.probe(session, `transport error: ${describeError(error)}`);
  }

  /** Probes `session` now, unless a probe is under way already (then waits for that one). `why` goes to the log. */
  private probe(session: LiveSession, why: string): Promise<void> {
    this.probing ??= this.probeNow(session, why).finally(() => (this.probing = undefined));
    return this.probing;
  }

  private async probeNow(session: LiveSession, why: string): Promise<void> {
    const { report, pingTimeout } = this.options;
    const started = Date.now();
    const logPing = (level: LogLevel, ok: boolean, fields: Record<string, unknown> = {}) =>
      report.log(level, "request", { method: "ping", durationMs: Date.now() - started, ok, why, ...fields });
    if (!session.processAlive()) return this.options.lost(session, "the server process is gone");
    try {
      await session.ping(pingTimeout);
      logPing("debug", true);
    } catch (error) {
      const kind = session.classify(error);
      if (kind !== "timeout" && kind !== "transport") {
        // It answered, if only to refuse (no ping support, or it wants credentials: the next call signs in).
        report.health.heard(Date.now());
        return logPing("debug", false, { kind });
      }
      const detail = kind === "timeout" ? `no answer to a ping within ${seconds(pingTimeout)}` : describeError(error);
      logPing("warn", false, { error: this.options.redact(detail) });
      this.options.lost(session, detail);
    }
  }
}
