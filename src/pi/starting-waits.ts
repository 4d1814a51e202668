/**
 * Waits for servers still making their first connect, whose tools are not registered yet.
 *
 * - A tool that calls other tools waits for the servers it may reach: a pi 1.x `codemode` script that calls a tool of
 *   such a server would fail as if the tool did not exist (and `tool_search` would not find it:
 *   ../exposure/tool-search.ts waits the same way). So, as pi 1.x's built-in MCP does, a call of a tool that says what
 *   it may reach (pi 1.x's `reachesTools`) first waits for the first connects of those servers, each within its own
 *   timeout; Escape ends the wait.
 * - The first prompt of a session waits a little for servers whose tools the model would be given directly, so its
 *   first request has them (an `npx` server often takes longer than the startup budget, and a prompt typed at once
 *   would go without its tools), as pi 1.x's built-in MCP does. Only the first prompt, and not for long: the servers
 *   keep connecting after it, and their tools come with a later request; Escape ends the wait at once. On pi 1.x a
 *   deferred server is not waited for there: `tool_search` waits for it when the model searches.
 */
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { matchesKey } from "@mariozechner/pi-tui";
import type { Exposure } from "../config/types.ts";
import { MAX_TIMER_MS } from "../config/validate/fields.ts";
import { toolNameFor, toolNameStem } from "../translate/naming.ts";
import { deferredToolsInactive } from "./pi-line.ts";

/** How long the first prompt waits at most, as pi 1.x's built-in MCP waits; the variable changes it (0: not at all). */
const FIRST_PROMPT_WAIT_MS = 10_000;
const FIRST_PROMPT_WAIT_ENV = "PI_MCP_FIRST_PROMPT_WAIT_MS";

/** What a tool may reach, as pi 1.x's `reachesTools` says: every tool, or the words of its input that may name them. */
export type Reach = "all" | readonly string[];

/** Whether a call that reaches `reach` may call tools of `server`, whose tools' names start as `prefix` makes them. */
export function reachesServer(reach: Reach, server: string, prefix?: string): boolean {
  if (reach === "all") return true;
  // With an empty prefix its tools have their bare names, which any word may be (every word includes "").
  const stem = toolNameStem(server, prefix);
  // A stem that ends in a hash (a long name, letters no provider takes) is in no tool's name: any call may reach it.
  return !toolNameFor(server, "x", prefix).startsWith(stem) || reach.some((word) => word.includes(stem));
}

interface Starting {
  /** Whether a server's first connect is under way. */
  readonly starting: boolean;
  readonly startingServers: string[];
  untilStarted(
    reached: (server: string) => boolean,
    signal?: AbortSignal,
    waits?: (s: string[]) => void,
  ): Promise<void>;
  connection(server: string): { config: { prefix?: string } } | undefined;
}

/**
 * Makes each call wait for the servers it may reach before it runs: a `tool_call` step of its own, registered before
 * the approval check's, which pi runs after it (so a tool is not approved for a call that then waits); and the first
 * prompt for the servers some of whose tools the model is given directly (`mayHave`), and on pi 0.73 for those with
 * deferred tools too: a run there keeps the tools it began with, so one registered during it comes with the next
 * prompt, and `tool_search` would find it too late for this one.
 */
export function waitForStartingServers(
  pi: ExtensionAPI,
  bridge: Starting,
  mayHave: (server: string, exposure: Exposure) => boolean,
): void {
  pi.on("tool_call", async (event, ctx) => {
    if (!bridge.starting) return;
    type Reaching = { name: string; reachesTools?: (input: Record<string, unknown>) => Reach };
    const tool = (pi.getAllTools() as Reaching[]).find((candidate) => candidate.name === event.toolName);
    const reach = tool?.reachesTools?.(event.input);
    if (reach === undefined) return;
    const reached = (server: string) => reachesServer(reach, server, bridge.connection(server)?.config.prefix);
    await bridge.untilStarted(reached, ctx.signal);
  });
  let waited = false;
  const runKeepsItsTools = !deferredToolsInactive(pi);
  const waitsFor = (server: string) => mayHave(server, "direct") || (runKeepsItsTools && mayHave(server, "deferred"));
  pi.on("before_agent_start", async (_event, ctx) => {
    if (waited) return;
    waited = true;
    const set = Number(process.env[FIRST_PROMPT_WAIT_ENV] || Number.NaN);
    const waitMs = Number.isFinite(set) && set >= 0 ? set : FIRST_PROMPT_WAIT_MS;
    if (!bridge.starting || waitMs === 0) return;
    let waitedFor: string[] = [];
    // The run has no abort signal before it begins, so pi's Escape would not reach the wait: it is heard here.
    const escaped = new AbortController();
    const unlisten = ctx.hasUI
      ? ctx.ui.onTerminalInput((data) => {
          if (!matchesKey(data, "escape")) return undefined;
          escaped.abort();
          return { consume: true };
        })
      : undefined;
    // pi shows nothing of a prompt before its run begins: without a word the prompt would seem lost.
    const seconds = waitMs / 1000;
    // A timer holds at most MAX_TIMER_MS: past it Node would end the wait after 1 ms (or refuse it, past 2^32 ms).
    const timedOut = AbortSignal.timeout(Math.min(waitMs, MAX_TIMER_MS));
    try {
      await bridge.untilStarted(waitsFor, AbortSignal.any([timedOut, escaped.signal]), (servers) => {
        waitedFor = servers;
        if (ctx.hasUI)
          ctx.ui.notify(
            `Waiting up to ${seconds} s for MCP servers still starting: ${servers.join(", ")} (Escape: go on without them)`,
          );
      });
    } finally {
      unlisten?.();
    }
    if (waitedFor.length === 0 || !ctx.hasUI) return;
    const still = waitedFor.filter((server) => bridge.startingServers.includes(server));
    if (still.length > 0)
      ctx.ui.notify(`MCP servers still starting: ${still.join(", ")}; their tools come once each is ready.`, "info");
  });
}
