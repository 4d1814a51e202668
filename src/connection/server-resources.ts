/**
 * A server's resources through its connection: list them and their templates a page at a time, read one, and
 * subscribe to one's updates where the server supports it. Each goes through the connection's one request seam, so it
 * waits for a start or reconnect, is retried once after a lost connection, is bounded by the request timeout and comes
 * back redacted, as a tool call does.
 */
import type { ListResourcesResult, ListResourceTemplatesResult, ReadResourceResult } from "@modelcontextprotocol/client";
import { outsideRequestScope } from "./http-pool.ts";
import type { ServerConnection } from "./server-connection.ts";

/** True when the server's newest session said it offers resources. */
export function offersResources(connection: ServerConnection): boolean {
  return connection.capabilities?.resources !== undefined;
}

/** True when the server can tell the client that a resource it reads changed (`resources/subscribe`). */
export function canSubscribe(connection: ServerConnection): boolean {
  return connection.capabilities?.resources?.subscribe === true;
}

export function listResources(connection: ServerConnection, cursor?: string, signal?: AbortSignal): Promise<ListResourcesResult> {
  return connection.request("resources/list", (client, options) => client.listResources(cursor ? { cursor } : undefined, options), { signal });
}

export function listResourceTemplates(connection: ServerConnection, cursor?: string, signal?: AbortSignal): Promise<ListResourceTemplatesResult> {
  const params = cursor ? { cursor } : undefined;
  return connection.request("resources/templates/list", (client, options) => client.listResourceTemplates(params, options), { signal });
}

export function readResource(connection: ServerConnection, uri: string, signal?: AbortSignal): Promise<ReadResourceResult> {
  return connection.request(`resources/read ${uri}`, (client, options) => client.readResource({ uri }, options), { signal });
}

/**
 * Asks to hear when a resource changes: `resources/subscribe` up to 2025-11-25; on 2026-07-28 a standing
 * `subscriptions/listen` stream for it, which lives as long as the session (it is opened outside the request's scope,
 * which would close it once the request is answered).
 */
export async function subscribeResource(connection: ServerConnection, uri: string): Promise<void> {
  await connection.request(`resources/subscribe ${uri}`, async (client, options) => {
    if (client.getProtocolEra() === "modern") await outsideRequestScope(() => client.listen({ resourceSubscriptions: [uri] }));
    else await client.subscribeResource({ uri }, options);
  });
}
