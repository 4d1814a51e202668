/**
 * Kept here: the SDK checks only the token endpoint (`assertSecureTokenEndpoint`), not what a browser is sent to.
 *
 * Which URLs OAuth may use: every endpoint an authorization server or a protected resource names (authorization,
 * token, registration, the metadata documents), and every address a browser is sent to. A hostile or mistaken
 * server could name `javascript:` or `file:` for the page a browser opens, or plain `http:` to another host for the
 * token endpoint, where an authorization code or a refresh token would travel unencrypted. Only `https:` is allowed,
 * and `http:` to this machine (127.0.0.0/8, ::1, localhost), where nothing crosses the network. Pure.
 */
import type { OAuthDiscoveryState } from "@modelcontextprotocol/client";
import { BridgeError } from "../common/errors.ts";

/** Why `url` may not be used for `what` (a name like `token_endpoint`), or undefined when it may. */
export function endpointProblem(what: string, url: string | URL): string | undefined {
  if (typeof url === "string" && !URL.canParse(url)) return `the OAuth ${what} is not a valid URL`;
  const parsed = typeof url === "string" ? new URL(url) : url;
  if (parsed.protocol === "https:") return undefined;
  if (parsed.protocol === "http:" && isLoopbackHost(parsed.hostname)) return undefined;
  // The scheme and host only: the rest of the address may carry a secret (a code, a client id in a query).
  const where = parsed.protocol === "http:" ? `plain http to ${parsed.hostname}` : `the \`${parsed.protocol}\` scheme`;
  return `the OAuth ${what} uses ${where}; OAuth endpoints must be https (or http on 127.0.0.1, ::1 or localhost), so it was refused`;
}

/** 127.0.0.0/8, ::1 and localhost: addresses that never leave the machine. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Throws an auth error for `server` naming the first of `endpoints` (name → URL, if set) that may not be used. */
export function refuseEndpoints(server: string, endpoints: Record<string, string | URL | undefined>): void {
  for (const [what, url] of Object.entries(endpoints)) {
    const problem = url === undefined ? undefined : endpointProblem(what, url);
    if (problem) throw new BridgeError("auth", server, `MCP server '${server}': ${problem}.`);
  }
}

/** Every endpoint discovery found (or the config named), by name, for `refuseEndpoints`. */
export function discoveryEndpoints(state: OAuthDiscoveryState): Record<string, string | undefined> {
  const metadata = state.authorizationServerMetadata;
  const servers = state.resourceMetadata?.authorization_servers ?? [];
  return {
    "authorization server": String(state.authorizationServerUrl),
    "resource metadata URL": state.resourceMetadataUrl,
    ...Object.fromEntries(servers.map((url, i) => [`authorization_servers[${i}]`, url])),
    authorization_endpoint: metadata?.authorization_endpoint,
    token_endpoint: metadata?.token_endpoint,
    registration_endpoint: metadata?.registration_endpoint,
  };
}
