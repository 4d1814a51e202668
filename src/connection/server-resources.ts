/**
 * A server's resources through its connection: list them and their templates a page at a time (or all their pages,
 * within bounds), read one, and subscribe to one's updates where the server supports it. Each goes through the
 * connection's one request seam, so it waits for a start or reconnect, is retried once after a lost connection, is
 * bounded by the request timeout and comes back redacted, as a tool call does.
 */
import type {
  ListResourcesResult,
  ListResourceTemplatesResult,
  ReadResourceResult,
  Resource,
  ResourceTemplateType as ResourceTemplate,
} from "@modelcontextprotocol/client";
import { outsideRequestScope } from "./http/request-scope.ts";
import { type PagedList, readPages } from "./paged-list.ts";
import type { ServerConnection } from "./server-connection.ts";

/** True when the server's newest session said it offers resources. */
export function offersResources(connection: ServerConnection): boolean {
  return connection.capabilities?.resources !== undefined;
}

/** True when the server can tell the client that a resource it reads changed (`resources/subscribe`). */
export function canSubscribe(connection: ServerConnection): boolean {
  return connection.capabilities?.resources?.subscribe === true;
}

export function listResources(
  connection: ServerConnection,
  cursor?: string,
  signal?: AbortSignal,
): Promise<ListResourcesResult> {
  return connection.withSession(
    "resources/list",
    (client, options) => client.listResources(cursor ? { cursor } : undefined, options),
    { signal },
  );
}

export function listResourceTemplates(
  connection: ServerConnection,
  cursor?: string,
  signal?: AbortSignal,
): Promise<ListResourceTemplatesResult> {
  const params = cursor ? { cursor } : undefined;
  return connection.withSession(
    "resources/templates/list",
    (client, options) => client.listResourceTemplates(params, options),
    { signal },
  );
}

/** How far a whole list is read: a server that pages without end, or lists very many resources, is cut off here. */
export const WHOLE_LIST_BOUNDS = { maxPages: 20, maxItems: 1_000 };

/**
 * The server's resources, page after page, as far as {@link WHOLE_LIST_BOUNDS} allow. Each page is its own request:
 * the SDK's `listResources()` without a cursor reads every page in one go, and fails on a list without end.
 */
export function listAllResources(connection: ServerConnection, signal?: AbortSignal): Promise<PagedList<Resource>> {
  return readPages(async (cursor) => {
    const params = cursor ? { params: { cursor } } : {};
    const result = await connection.withSession(
      "resources/list",
      (client, options) => client.request({ method: "resources/list", ...params }, options),
      { signal },
    );
    return { items: result.resources, nextCursor: result.nextCursor };
  }, WHOLE_LIST_BOUNDS);
}

/** The server's resource templates, page after page, as `listAllResources` reads resources. */
export function listAllResourceTemplates(
  connection: ServerConnection,
  signal?: AbortSignal,
): Promise<PagedList<ResourceTemplate>> {
  return readPages(async (cursor) => {
    const params = cursor ? { params: { cursor } } : {};
    const result = await connection.withSession(
      "resources/templates/list",
      (client, options) => client.request({ method: "resources/templates/list", ...params }, options),
      { signal },
    );
    return { items: result.resourceTemplates, nextCursor: result.nextCursor };
  }, WHOLE_LIST_BOUNDS);
}

export function readResource(
  connection: ServerConnection,
  uri: string,
  signal?: AbortSignal,
): Promise<ReadResourceResult> {
  return connection.withSession(`resources/read ${uri}`, (client, options) => client.readResource({ uri }, options), {
    signal,
  });
}

/**
 * Asks to hear when a resource changes: `resources/subscribe` up to 2025-11-25; on 2026-07-28 a standing
 * `subscriptions/listen` stream for it, which lives as long as the session (it is opened outside the request's scope,
 * which would close it once the request is answered).
 */
export async function subscribeResource(connection: ServerConnection, uri: string): Promise<void> {
  await connection.withSession(`resources/subscribe ${uri}`, async (client, options) => {
    if (client.getProtocolEra() === "modern")
      await outsideRequestScope(() => client.listen({ resourceSubscriptions: [uri] }));
    else await client.subscribeResource({ uri }, options);
  });
}
