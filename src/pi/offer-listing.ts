/**
 * `/mcp prompts` and `/mcp resources`: asks each connected server for its prompts or its resources and resource
 * templates (every page, within bounds), all servers at once, each request bounded by the server's request timeout
 * and redacted as a tool call's result is. A server that is not connected is not started for this: its line says
 * why and what starts it. The text is ./offer-format.ts's.
 */
import { describeError } from "../common/errors.ts";
import { isMethodNotFound } from "../common/error-kinds.ts";
import type { ServerConnection } from "../connection/server-connection.ts";
import { offersPrompts } from "../connection/server-prompts.ts";
import { listAll, offersResources } from "../connection/server-resources.ts";
import {
  formatPromptListing,
  formatResourceListing,
  type ListResult,
  type PromptEntry,
  type ResourceListing,
  type ServerOffer,
  whyNotListed,
} from "./offer-format.ts";
import type { PromptListing } from "./prompt-commands.ts";

/** Fetches a server's prompts and brings its prompt commands up to date (`PromptCommands.refresh`). */
export type PromptFetch = (connection: ServerConnection, signal?: AbortSignal) => Promise<PromptListing>;

/** Each server's offer, all at once: fetched with `fetch` where it is connected and `offers` says it has any. */
function offersOf<T>(
  connections: readonly ServerConnection[],
  off: (connection: ServerConnection) => boolean,
  offers: (connection: ServerConnection) => boolean,
  fetch: (connection: ServerConnection) => Promise<ServerOffer<T>>,
): Promise<ServerOffer<T>[]> {
  return Promise.all(
    connections.map(async (connection): Promise<ServerOffer<T>> => {
      const server = connection.name;
      const reason = whyNotListed(connection, off(connection));
      if (reason) return { server, kind: "unavailable", reason };
      if (!offers(connection)) return { server, kind: "none" };
      return fetch(connection);
    }),
  );
}

/** `/mcp prompts` for these servers. */
export async function promptListingText(
  connections: readonly ServerConnection[],
  fetchPrompts: PromptFetch,
  off: (connection: ServerConnection) => boolean,
  signal?: AbortSignal,
): Promise<string> {
  const offers = await offersOf<PromptEntry[]>(connections, off, offersPrompts, async (connection) => {
    const listing = await fetchPrompts(connection, signal);
    if ("error" in listing) return { server: connection.name, kind: "failed", error: listing.error };
    return { server: connection.name, kind: "listed", listing: listing.prompts };
  });
  return formatPromptListing(offers);
}

/** A whole list, or why it could not be read; a server that does not know the method has none. */
async function listResult<T>(list: () => Promise<{ items: T[]; more: boolean }>): Promise<ListResult<T>> {
  try {
    return await list();
  } catch (error) {
    // Templates are optional: a server with resources may not answer `resources/templates/list` at all.
    if (isMethodNotFound(error)) return { items: [], more: false };
    return { error: describeError(error) };
  }
}

/** `/mcp resources` for these servers. */
export async function resourceListingText(
  connections: readonly ServerConnection[],
  off: (connection: ServerConnection) => boolean,
  signal?: AbortSignal,
): Promise<string> {
  const offers = await offersOf<ResourceListing>(connections, off, offersResources, async (connection) => {
    const [resources, templates] = await Promise.all([
      listResult(() => listAll(connection, "resources/list", signal)),
      listResult(() => listAll(connection, "resources/templates/list", signal)),
    ]);
    return { server: connection.name, kind: "listed", listing: { resources, templates } };
  });
  return formatResourceListing(offers);
}
