/**
 * A server's resources through its connection: list them and their templates a page at a time (or all their pages,
 * within bounds), read one, and subscribe to one's updates where the server supports it. Each goes through the
 * connection's one request seam, so it waits for a start or reconnect, is retried once after a lost connection, is
 * bounded by the request timeout and comes back redacted, as a tool call does.
 */
import type {
  ReadResourceResult,
  Resource,
  ResourceTemplateType as ResourceTemplate,
} from "@modelcontextprotocol/client";
import { outsideRequestScope } from "./http/request-scope.ts";
import { type PagedList, readPages } from "../common/paged-list.ts";
import type { ServerConnection } from "./server-connection.ts";

/** True when the server's newest session said it offers resources. */
export function offersResources(connection: ServerConnection): boolean {
  return connection.capabilities?.resources !== undefined;
}

/** True when the server can tell the client that a resource it reads changed (`resources/subscribe`). */
export function canSubscribe(connection: ServerConnection): boolean {
  return connection.capabilities?.resources?.subscribe === true;
}

type ListMethod = "resources/list" | "resources/templates/list";
type Listed<M extends ListMethod> = M extends "resources/list" ? Resource : ResourceTemplate;

/**
 * One page of the server's resources or resource templates, asked for as a request of its own: the SDK's list calls
 * without a cursor read every page in one go (and fail on a list without end), or answer from their cache.
 */
export async function listPage<M extends ListMethod>(
  connection: ServerConnection,
  method: M,
  cursor?: string,
  signal?: AbortSignal,
): Promise<{ items: Listed<M>[]; nextCursor?: string }> {
  const params = cursor ? { params: { cursor } } : {};
  const page = await connection.withSession(
    method,
    (client, options) => client.request({ method: method as ListMethod, ...params }, options),
    { signal },
  );
  const items = "resources" in page ? page.resources : page.resourceTemplates;
  return { items: items as Listed<M>[], nextCursor: page.nextCursor };
}

/** How far a whole list is read: a server that pages without end, or lists very many resources, is cut off here. */
export const WHOLE_LIST_BOUNDS = { maxPages: 20, maxItems: 1_000 };

/** All the server's resources or templates, page after page, as far as {@link WHOLE_LIST_BOUNDS} allow. */
export function listAll<M extends ListMethod>(
  connection: ServerConnection,
  method: M,
  signal?: AbortSignal,
): Promise<PagedList<Listed<M>>> {
  return readPages(WHOLE_LIST_BOUNDS, (cursor) => listPage(connection, method, cursor, signal));
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
