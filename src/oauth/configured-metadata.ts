/**
 * Kept here: the SDK discovers metadata, but cannot be given a document to use instead.
 *
 * The authorization server's metadata from the document a config names (`authServerMetadataUrl`, pi 1.x's), used
 * instead of discovery for servers that advertise the wrong authorization server or none. It is trusted as
 * configured: its issuer is not checked against the URL (RFC 8414 discovery would), only the address itself against
 * the endpoint policy. Read with the SDK's schemas, as discovery reads what it finds.
 */
import type { FetchLike, OAuthDiscoveryState } from "@modelcontextprotocol/client";
import { OAuthMetadataSchema, OpenIdProviderDiscoveryMetadataSchema } from "@modelcontextprotocol/core";
import { BridgeError, describeError } from "../common/errors.ts";
import { refuseEndpoints } from "./endpoint-policy.ts";

/** Fetches and reads the document; an auth error saying what is wrong when it cannot be used. */
async function configuredDiscovery(
  server: string,
  metadataUrl: string,
  fetchFn: FetchLike = fetch,
): Promise<OAuthDiscoveryState> {
  const fail = (why: string) =>
    new BridgeError(
      "auth",
      server,
      `MCP server '${server}': the authorization server metadata at \`authServerMetadataUrl\` ${why}.`,
    );
  let response: Response;
  try {
    response = await fetchFn(metadataUrl, { headers: { Accept: "application/json" } });
  } catch (error) {
    throw fail(`could not be fetched (${describeError(error)})`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw fail(`answered HTTP ${response.status}`);
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw fail("is not JSON");
  }
  // An OpenID Connect document (`.well-known/openid-configuration`) is read as such; anything else as RFC 8414's.
  const parsed = OAuthMetadataSchema.safeParse(body);
  const metadata = parsed.success ? parsed.data : OpenIdProviderDiscoveryMetadataSchema.safeParse(body).data;
  if (!metadata)
    throw fail(
      "is not an OAuth or OpenID Connect metadata document (it lacks `issuer`, `authorization_endpoint` or `token_endpoint`)",
    );
  return { authorizationServerUrl: metadata.issuer, authorizationServerMetadata: metadata };
}

/**
 * What a provider's `discoveryState()` starts from: what discovery already found, or else the document the config
 * names (its address checked against the endpoint policy first), or nothing.
 */
export async function knownDiscovery(
  found: OAuthDiscoveryState | undefined,
  server: string,
  metadataUrl: string | undefined,
  fetchFn?: FetchLike,
): Promise<OAuthDiscoveryState | undefined> {
  if (found || !metadataUrl) return found;
  refuseEndpoints(server, { "authorization server metadata URL": metadataUrl });
  return configuredDiscovery(server, metadataUrl, fetchFn);
}
