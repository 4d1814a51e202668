/**
 * `/mcp auth` and `/mcp logout`: signing in to a server that uses OAuth, and forgetting its tokens. Without a server
 * named, `/mcp auth` signs in to every server that waits for a sign-in, one after the other (several OAuth servers
 * after a fresh install, or after a provider revoked every token), or in pi's UI offers that beside each server.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { errorMessage } from "../common/errors.ts";
import { plural } from "../common/text.ts";
import type { ServerConnection } from "../connection/server-connection.ts";
import { interactiveSignIn } from "../oauth/sign-in.ts";
import { type CommandDeps, failed, show } from "./command-context.ts";
import { saysOff, switchOnCommand } from "./command-off.ts";

export async function signIn(deps: CommandDeps, connection: ServerConnection, ctx: ExtensionContext): Promise<void> {
  // Disabled in its config: not started by a sign-in, and told how to enable it, as /mcp reconnect does.
  if (connection.status === "disabled") return switchOnCommand(deps, connection, ctx);
  if (saysOff(deps.serversOff, connection, ctx)) return;
  try {
    await connection.signIn(
      interactiveSignIn({
        notify: (text) => show(ctx, text),
        input: ctx.hasUI ? (prompt, signal) => ctx.ui.input(prompt, undefined, { signal }) : undefined,
      }),
    );
    show(ctx, `Signed in to MCP server '${connection.name}': ${plural(connection.tools.length, "tool")}.`);
  } catch (error) {
    failed(ctx, errorMessage(error));
  }
}

/**
 * `/mcp auth` with no server named, where some wait for a sign-in: all of them in turn (asked first in pi's UI, where
 * the user may pick one instead). Undefined where none waits, for the caller to ask which server.
 */
export async function signInToWaiting(deps: CommandDeps, ctx: ExtensionContext): Promise<true | undefined> {
  const waiting = [...deps.bridge.connections.values()].filter(
    (connection) => connection.needsSignIn && !deps.serversOff.isOff(connection),
  );
  if (!waiting.length) return undefined;
  const names = waiting.map((connection) => connection.name);
  const all = `All that wait for a sign-in (${names.join(", ")})`;
  const others = [...deps.bridge.connections.keys()].filter((name) => !names.includes(name));
  const choice =
    ctx.hasUI && (waiting.length > 1 || others.length)
      ? await ctx.ui.select("Which server to sign in to?", [...(waiting.length > 1 ? [all] : []), ...names, ...others])
      : all;
  if (choice === undefined) return true;
  const chosen = choice === all ? waiting : [deps.bridge.connection(choice)!];
  for (const connection of chosen) {
    if (ctx.signal?.aborted) break;
    await signIn(deps, connection, ctx);
  }
  return true;
}

export async function logout(connection: ServerConnection, ctx: ExtensionContext): Promise<void> {
  const { removed, piFileKept: kept } = await connection.logout();
  // Only the bridge's copy goes: pi 1.x's file is pi's.
  const inPi = kept
    ? ` The sign-in pi 1.x stored in ${kept} stays there (pi's own /mcp logout removes it); it is not taken over again.`
    : "";
  const outcome = removed
    ? `Signed out of MCP server '${connection.name}': its tokens and client registration are deleted.`
    : `Nothing stored for MCP server '${connection.name}'.`;
  show(ctx, outcome + inPi);
}
