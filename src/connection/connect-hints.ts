/**
 * What a failure to connect usually means, by the words it was reported in: a refused connection, a web page where
 * MCP was meant, a certificate Node does not trust (a remote server), an answer the MCP schema refuses (any). Pure.
 */
const CONNECT_HINTS: readonly (readonly [RegExp, string])[] = [
  [/ECONNREFUSED/, "connection refused: is the server running?"],
  // A website, or a proxy's sign-in page, where the MCP endpoint was meant.
  [
    /content type: text\/html/i,
    "a web page, not MCP: check that `url` is the server's MCP endpoint, which often ends in /mcp, or /sse for a legacy server; a sign-in page of a proxy in between answers like this too",
  ],
  // Node trusts its own list of CAs, not the system's: an organisation's CA (or its TLS-inspecting proxy) is not in it.
  [
    /self[- ]signed certificate|unable to get local issuer certificate|unable to verify the first certificate/i,
    "the server's certificate is not signed by a CA Node trusts: if it comes from your organisation's CA or proxy, or is self-signed for development, start pi with NODE_EXTRA_CA_CERTS set to that CA's PEM file",
  ],
  // The SDK checks every answer against the MCP schema; one that misses it cannot be used by any client.
  [
    /^Invalid result for /,
    "the server's answer does not follow the MCP schema: a fault of the server or of its version, which a newer one may fix",
  ],
];

/** The hint for a failure to connect, if its words have one. */
export function connectHint(detail: string): string | undefined {
  return CONNECT_HINTS.find(([pattern]) => pattern.test(detail))?.[1];
}
