/**
 * A local server that exits before its handshake twice in a row the same way (the same exit, the same last words)
 * fails on something a restart does not change: a setting, a file, its own bug. Restarting it three more times only
 * keeps the user waiting on "retrying" and, for an `npx` server, runs npm each time. What counts as the same: how the
 * process ended, and what it printed with the numbers in it (times, process ids, ports, durations) left out; for a
 * server that answered wrongly, what was wrong with its answer. A failure that may pass by itself is never the same: a
 * handshake that ran out of time (a slow start), a host the server could not reach (its output says so), a port
 * another process holds (it may be its own last run, still ending), a limit the bridge stopped it for. Pure.
 */
import { kindOf, serverAnswered } from "../../common/error-kinds.ts";
import { describeError } from "../../common/errors.ts";
import type { ErrorContext } from "../error-messages.ts";
import { unreachableHost } from "./unreachable-host.ts";

/** What identifies this failed start, for comparing with the next; undefined where no restart is ruled out by it. */
export function startFailureKey(ctx: ErrorContext, error: unknown): string | undefined {
  if (ctx.config.transport !== "stdio" || ctx.violation) return undefined;
  // A wrong answer (the same invalid tool list at every start) is told apart by what was wrong with it; an error
  // answered because a host the server needs was out of reach may pass by itself.
  if (serverAnswered(error)) {
    const said = describeError(error);
    return unreachableHost([said]) ? undefined : said.replace(/\d+/g, "#");
  }
  if (!ctx.exitDescription) return undefined;
  const kind = kindOf(error);
  if (kind === "timeout" || kind === "auth" || ctx.unreachable) return undefined;
  const printed = ctx.stderr();
  if (/\bEADDRINUSE\b|address already in use/i.test(printed)) return undefined;
  return `${ctx.exitDescription}\n${printed.replace(/\d+/g, "#")}`;
}
