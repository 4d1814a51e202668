/**
 * An entry that runs `mcp-remote`, a stdio proxy to a remote server from another client's README. mcp-remote signs in
 * in a browser pi cannot show, and meanwhile answers nothing; the bridge reaches the server itself, and signs in
 * itself where the server asks.
 */
import { remoteOfProxy } from "../../config/import/mcp-remote.ts";
import type { ServerConfig } from "../../config/types.ts";

/** The entry that reaches the server directly, as advice; undefined for an entry that does not run mcp-remote. */
export function proxyHint(config: ServerConfig): string | undefined {
  const { command, args, env } = config;
  const remote = command === undefined ? undefined : remoteOfProxy({ command, args, env }, { add() {} });
  if (typeof remote?.url !== "string") return undefined;
  const headers = remote.headers ? ", with its `--header` values as `headers`" : "";
  return `It runs mcp-remote to reach ${remote.url}, which mcp-bridge connects to itself (and signs in to with \`/mcp auth\` where it asks): write the entry as ${JSON.stringify({ url: remote.url })}${headers}`;
}

/**
 * The page mcp-remote's output says it waits on for a sign-in (`Please authorize this client by visiting:` and the URL
 * on the next line), without its query; undefined when it says none. Each start of it begins another sign-in.
 */
export function signInWaitIn(text: string): string | undefined {
  const url = /authorize this client[^\n]*\n\s*(https?:\/\/\S+)/i.exec(text)?.[1];
  if (!url || !URL.canParse(url)) return undefined;
  const page = new URL(url);
  return `${page.origin}${page.pathname}`;
}
