/**
 * Tools that call other tools wait for the servers they may reach. A server still making its first connect has no
 * tools registered yet, so a pi 1.x `codemode` script that calls one fails as if the tool did not exist (and
 * `tool_search` would not find it: ../exposure/tool-search.ts waits the same way). So, as pi 1.x's built-in MCP does, a
 * call of a tool that says what it may reach (pi 1.x's `reachesTools`) first waits for the first connects of those
 * servers, each within its own timeout; Escape ends the wait.
 */
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { toolNameStem } from "../translate/naming.ts";

/** What a tool may reach, as pi 1.x's `reachesTools` says: every tool, or the words of its input that may name them. */
export type Reach = "all" | readonly string[];

/** Whether a call that reaches `reach` may call tools of `server`, whose tools' names start as `prefix` makes them. */
export function reachesServer(reach: Reach, server: string, prefix?: string): boolean {
  if (reach === "all") return true;
  // With an empty prefix its tools have their bare names, which any word may be (every word includes "").
  const stem = toolNameStem(server, prefix);
  return reach.some((word) => word.includes(stem));
}

interface Starting {
  /** Whether a server's first connect is under way. */
  readonly starting: boolean;
  untilStarted(reached: (server: string) => boolean, signal?: AbortSignal): Promise<void>;
  connection(server: string): { config: { prefix?: string } } | undefined;
}

/**
 * Makes each call wait for the servers it may reach before it runs: a `tool_call` step of its own, registered before
 * the approval check's, which pi runs after it (so a tool is not approved for a call that then waits).
 */
export function waitForReachedServers(pi: ExtensionAPI, bridge: Starting): void {
  pi.on("tool_call", async (event, ctx) => {
    if (!bridge.starting) return;
    type Reaching = { name: string; reachesTools?: (input: Record<string, unknown>) => Reach };
    const tool = (pi.getAllTools() as Reaching[]).find((candidate) => candidate.name === event.toolName);
    const reach = tool?.reachesTools?.(event.input);
    if (reach === undefined) return;
    const reached = (server: string) => reachesServer(reach, server, bridge.connection(server)?.config.prefix);
    await bridge.untilStarted(reached, ctx.signal);
  });
}
