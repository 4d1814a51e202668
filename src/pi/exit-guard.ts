/**
 * No server process outlives pi. pi runs `session_shutdown` (where the servers are closed properly) on a normal exit
 * and on the SIGTERM/SIGHUP handlers it installs once its session has started. Two cases are left, and handled here:
 * pi's process ending without a shutdown (`exit`: what is left is killed, synchronously), and a signal that comes
 * while servers are still connecting, before pi's own handlers exist (the servers are killed, then the signal takes
 * its course). When pi is killed outright (SIGKILL, or SIGINT in print and RPC modes) nothing of pi runs: the watchdog
 * of ../connection/local/orphan-watchdog.ts ends the servers then.
 */

const STARTUP_SIGNALS: NodeJS.Signals[] = process.platform === "win32" ? ["SIGTERM"] : ["SIGTERM", "SIGHUP"];

export interface ExitGuard {
  /** pi's session runs: its own signal handlers take over. */
  sessionStarted(): void;
  /** The servers were shut down properly: nothing is left to guard. */
  release(): void;
}

/** Calls `killNow` (synchronous) if pi's process ends, or is signalled during startup, before `release`. */
export function guardExit(killNow: () => void): ExitGuard {
  const onStartupSignal = (signal: NodeJS.Signals) => {
    killNow();
    stopGuardingStartup();
    process.kill(process.pid, signal);
  };
  const stopGuardingStartup = () => STARTUP_SIGNALS.forEach((signal) => process.off(signal, onStartupSignal));
  process.once("exit", killNow);
  for (const signal of STARTUP_SIGNALS) process.on(signal, onStartupSignal);
  return {
    sessionStarted: stopGuardingStartup,
    release: () => {
      process.off("exit", killNow);
      stopGuardingStartup();
    },
  };
}
