/**
 * The clock of one connect attempt. The first start of an `npx` server downloads it, which on a slow network or a busy
 * machine can take longer than `initTimeout`; stopping npm partway leaves its copy of the package incomplete, and npx
 * never repairs it (every later start fails with "Cannot find module"). So an install found under way at the deadline
 * holds the clock (up to {@link INSTALL_LIMIT_MS}), and the server gets the attempt's whole time once its program runs;
 * so it does after an install that ended before the deadline, which would otherwise leave it what the install left.
 */
import type { NpxInstall } from "./local/process-tree.ts";

/** How long after an attempt starts an install may still hold it. */
export const INSTALL_LIMIT_MS = 10 * 60_000;
const INSTALL_POLL_MS = 1000;

export interface ConnectClock {
  /** Epoch ms the attempt ends at; moved on when an install held it. */
  deadline: number;
  /** The time the server gets once an install that held the clock is over. */
  span: number;
  /** npx's install of the server's package, if any: asked at the deadline, then every second. */
  install?: () => NpxInstall | undefined;
  /** An install began (true) or stopped (false) holding the clock. */
  onHold?: (holding: boolean) => void;
}

/** When an open must be done by, and the server's time once an install that held it is over. */
export type OpenTime = Pick<ConnectClock, "deadline" | "span">;

/** `work`, or `late()` once the clock has run out. */
export function untilDeadline<T>(work: Promise<T>, clock: ConnectClock, late: () => Error): Promise<T> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  let holding = false;
  let ranOut = false;
  // The install is over: the server gets its whole time from now.
  const release = () => {
    clock.deadline = Math.max(clock.deadline, Date.now() + clock.span);
    clock.onHold?.((holding = false));
  };
  const timedOut = new Promise<never>((_, reject) => {
    const check = () => {
      const now = Date.now();
      const install = clock.install?.();
      if (install?.underWay) {
        if (!holding) clock.onHold?.((holding = true));
        if (now - started < INSTALL_LIMIT_MS) return void (timer = setTimeout(check, INSTALL_POLL_MS));
        ranOut = true;
        return reject(late());
      }
      if (holding) release();
      // An install found over (before the deadline, or by a check that came late on a busy machine): the server's
      // time began when its program started, not when npx did.
      else if (install) clock.deadline = Math.max(clock.deadline, install.endedAt + clock.span);
      if (clock.deadline > now) timer = setTimeout(check, clock.deadline - now);
      else reject(late());
    };
    timer = setTimeout(check, Math.max(1, clock.deadline - started));
  });
  return Promise.race([work, timedOut]).finally(() => {
    clearTimeout(timer);
    // The work ended during an install (npm failed, or the server started between two looks, and failed or answered):
    // nothing holds the clock any more. A clock that ran out while holding stays held, as its error message reports.
    if (holding && !ranOut) release();
  });
}
