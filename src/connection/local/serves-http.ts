/**
 * A program started as a local server that serves MCP over HTTP instead of over stdio, as some do by default
 * (`@modelcontextprotocol/server-pdf` without `--stdio`: "MCP server listening on http://localhost:3001/mcp"). It never
 * answers on stdio, so its start times out, and each restart would wait as long again. Its output says where it
 * listens; this finds that line. Pure.
 */

export interface ServesHttp {
  /** The line that says so, as it was printed. */
  line: string;
  /** Where it listens, if the line has a URL. */
  url?: string;
}

const LISTENS = /\b(?:listening|running|serving|started|available|ready)\b/i;
/** A URL whose path is MCP's or legacy SSE's endpoint; a callback server's (`/oauth/callback`) is not one. */
const MCP_URL = /\bhttps?:\/\/[^\s"'<>]+\/(?:mcp|sse)\/?(?=[\s"'<>.,;)]|$)/i;
/** "Streamable HTTP server listening on port 3000", "MCP server running on http://0.0.0.0:8080". */
const SAYS_MCP_OVER_HTTP = /\b(?:MCP|Streamable HTTP|SSE)\b.*\b(?:on|at) (?:port \d+|https?:\/\/\S+)/i;

/** The first line saying the program serves MCP over HTTP, if one does. */
export function servesHttp(lines: readonly string[]): ServesHttp | undefined {
  let before = "";
  for (const raw of lines) {
    const line = raw.trim();
    // server-everything's `sse`: "Starting SSE server...", then "Server is running on port 3001".
    const said = /\b(?:SSE|Streamable HTTP)\b/i.test(before) ? `${before} ${line}` : line;
    before = line;
    // A line that says it serves on stdio names a port of something else (a browser extension's bridge, a dashboard).
    if (!LISTENS.test(line) || /\b(?:on|over|via) stdio\b/i.test(line)) continue;
    const url = MCP_URL.exec(line)?.[0];
    // Uvicorn, the ASGI server Python's MCP SDK serves HTTP with, names neither MCP nor the path.
    if (url || SAYS_MCP_OVER_HTTP.test(said) || /\bUvicorn running on http/.test(line))
      return url ? { line, url } : { line };
  }
  return undefined;
}
