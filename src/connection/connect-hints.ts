/**
 * What a failure to connect usually means, by the words it was reported in: a refused connection, an address that
 * serves nothing, a name that does not resolve, a web page where MCP was meant, a certificate Node does not trust or a
 * server that speaks no TLS (a remote server), an answer the MCP schema refuses, a host the server itself could not
 * reach (any), a proxy of pi's that refused (read from pi's environment).
 */
import { unreachableAdvice, unreachableHost } from "./local/unreachable-host.ts";

const CONNECT_HINTS: readonly (readonly [RegExp, string])[] = [
  // The SDK checks every answer against the MCP schema; one that misses it cannot be used by any client.
  [
    /^Invalid result for /,
    "the server's answer does not follow the MCP schema: a fault of the server or of its version, which a newer one may fix",
  ],
  [/ECONNREFUSED/, "connection refused: is the server running?"],
  // undici's words for a proxy (../common/env-proxy.ts) that answered its CONNECT with 407. (No example URL with
  // credentials: it would be redacted wherever the message is shown.)
  [
    /Proxy response \(407\)/,
    "pi's proxy asks for credentials: put them in the variable that names it (HTTPS_PROXY or HTTP_PROXY), as user:password@ before its host",
  ],
  // The SDK's words for a JSON answer that is no JSON-RPC message (`{"status":"ok"}`): a health check, an API, not MCP.
  [
    /^Invalid input$/,
    "an answer that is no MCP message: check that `url` is the server's MCP endpoint, which often ends in /mcp, or /sse for a legacy server",
  ],
  // An `https://` address of a server that speaks plain HTTP (as local ones often do): its answer is no TLS record.
  [/wrong version number/i, "the server did not answer in TLS: if it serves plain HTTP, write `http://` in `url`"],
  // A website, or a proxy's sign-in page, where the MCP endpoint was meant.
  [
    /content type: text\/html/i,
    "a web page, not MCP: check that `url` is the server's MCP endpoint, which often ends in /mcp, or /sse for a legacy server; a sign-in page of a proxy in between answers like this too",
  ],
  // The same where a legacy SSE stream was meant; the SDK does not say what came instead.
  [
    /Invalid content type, expected "text\/event-stream"/,
    "no SSE stream: check that `url` is the server's SSE endpoint, which often ends in /sse; a web page, or a sign-in page of a proxy in between, answers like this too",
  ],
  // Node trusts its own list of CAs, not the system's: an organisation's CA (or its TLS-inspecting proxy) is not in it.
  [
    /self[- ]signed certificate|unable to get local issuer certificate|unable to verify the first certificate/i,
    "the server's certificate is not signed by a CA Node trusts: if it comes from your organisation's CA or proxy, or is self-signed for development, start pi with NODE_EXTRA_CA_CERTS set to that CA's PEM file",
  ],
];

/** The bridge could not look up the host of a remote server's `url`. */
const UNRESOLVED = /\bgetaddrinfo (ENOTFOUND|EAI_AGAIN)\b/;

/**
 * The hint for a failure to connect, if its words (or the HTTP `status` of a remote server's answer: a local server
 * has no `url`; `legacySse`: it was asked for a legacy SSE stream, as its `type` says) have one. `answeredBy`: they are a server's own answer, not the bridge's failure to reach it; a host
 * that a local server's answer names as out of reach is one the server needs (its API, to list its tools), from here.
 */
export function connectHint(
  detail: string,
  answeredBy?: "local" | "remote",
  status?: number,
  legacySse = false,
): string | undefined {
  // A server that moved on to Streamable HTTP refuses the legacy stream's GET (400 without a session, or 405).
  if (legacySse && (status === 400 || status === 405))
    return 'the server refuses a legacy SSE stream: if it speaks Streamable HTTP, as most servers now do, remove `"type": "sse"` from its entry';
  if (status === 404 && answeredBy !== "local")
    return "nothing is served at this address: check that `url` is the server's MCP endpoint, which often ends in /mcp, or /sse for a legacy server";
  const unreachable = answeredBy === "local" ? unreachableHost([detail]) : undefined;
  const advice = unreachable && unreachableAdvice(unreachable);
  if (advice) return `the server ${advice.what}: ${advice.why}`;
  const proxy = answeredBy ? undefined : refusingProxy(detail);
  if (proxy) return `connection refused by the proxy ${proxy} names: is it running, and is that setting still meant?`;
  if (!answeredBy && UNRESOLVED.test(detail))
    return "its host name did not resolve: check `url` for a typo, and that this machine reaches it (network, DNS, VPN or proxy)";
  // A remote server's own answer tells of its side (its upstream refused it), not of how this machine reaches it.
  return CONNECT_HINTS.slice(0, answeredBy === "remote" ? 1 : undefined).find(([pattern]) => pattern.test(detail))?.[1];
}

/**
 * The variable naming pi's proxy (../common/env-proxy.ts) when `detail` says a connection to its port was refused:
 * then the proxy refused, not the server, which it never reached.
 */
function refusingProxy(detail: string, env = process.env): string | undefined {
  const port = /\bECONNREFUSED \S+:(\d+)/.exec(detail)?.[1];
  const names = ["https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY"];
  return names.find((name) => port && URL.canParse(env[name] ?? "") && new URL(env[name]!).port === port);
}
