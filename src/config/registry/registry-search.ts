/**
 * Searching an MCP registry (the official one at registry.modelcontextprotocol.io, or the one `MCP_REGISTRY_URL`
 * names, as an organisation may run its own) through its REST API: `GET /v0.1/servers?search=…&version=latest`. Its
 * answer is bounded in time and size, and servers it marks deleted or deprecated are left out.
 */
import { errorMessage } from "../../common/errors.ts";
import { readPages } from "../../common/paged-list.ts";
import { isObject } from "../../common/values.ts";
import type { Environment } from "../substitute.ts";
import { readRegistryServer, type RegistryServer } from "./server-json.ts";

const DEFAULT_REGISTRY_URL = "https://registry.modelcontextprotocol.io";
/** A page of 100 servers is a few hundred KB; a registry that sends more than this is not read. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
const SEARCH_TIMEOUT_MS = 15_000;
/** Pages read, and servers offered: a common word matches hundreds of names. */
const PAGE_SIZE = 100;
const MAX_PAGES = 3;
const MAX_SHOWN = 30;
const STATUS_KEY = "io.modelcontextprotocol.registry/official";

/** The registry to search: `MCP_REGISTRY_URL` where set, else the official one. */
export function registryUrl(env: Environment): string {
  return (env.MCP_REGISTRY_URL?.trim() || DEFAULT_REGISTRY_URL).replace(/\/+$/, "");
}

async function boundedText(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    size += read.value.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel();
      throw new Error(`its answer is over ${MAX_ANSWER_BYTES / 1024 / 1024} MB`);
    }
    chunks.push(read.value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** A page of the registry's answer: its servers (as listed) and the cursor of the next page, if any. */
async function searchPage(base: string, query: string, cursor: string | undefined, signal: AbortSignal) {
  const params = new URLSearchParams({ search: query, version: "latest", limit: String(PAGE_SIZE) });
  if (cursor) params.set("cursor", cursor);
  const response = await fetch(`${base}/v0.1/servers?${params}`, { headers: { accept: "application/json" }, signal });
  if (!response.ok) throw new Error(`it answered HTTP ${response.status}`);
  const body: unknown = JSON.parse(await boundedText(response));
  const items: unknown[] = isObject(body) && Array.isArray(body.servers) ? body.servers : [];
  const next = isObject(body) && isObject(body.metadata) ? body.metadata.nextCursor : undefined;
  return { items, nextCursor: typeof next === "string" && next ? next : undefined };
}

/** Where the query stands in a server's name: its own part (after the namespace) first, as `github` is in every
 * `io.github.…` namespace. */
function rank(server: RegistryServer, query: string): number {
  const own = server.name.slice(server.name.indexOf("/") + 1).toLowerCase();
  const about = `${server.title ?? ""} ${server.description ?? ""}`.toLowerCase();
  return own === query ? 0 : own.startsWith(query) ? 1 : own.includes(query) ? 2 : about.includes(query) ? 3 : 4;
}

/**
 * The latest version of each active server whose name matches `query`, the best matches first (a few pages are read,
 * as the registry matches anywhere in the name); throws with what went wrong, in words.
 */
export async function searchRegistry(base: string, query: string, signal?: AbortSignal): Promise<RegistryServer[]> {
  const timeout = AbortSignal.timeout(SEARCH_TIMEOUT_MS);
  const servers = new Map<string, RegistryServer>();
  const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
  try {
    const { items } = await readPages({ maxPages: MAX_PAGES }, (cursor) => searchPage(base, query, cursor, both));
    for (const item of items) {
      const meta =
        isObject(item) && isObject(item._meta) && isObject(item._meta[STATUS_KEY]) ? item._meta[STATUS_KEY] : {};
      if (meta.status === "deleted" || meta.status === "deprecated" || meta.isLatest === false) continue;
      const server = readRegistryServer(item);
      if (server && !servers.has(server.name)) servers.set(server.name, server);
    }
  } catch (error) {
    const why = timeout.aborted ? `no answer within ${SEARCH_TIMEOUT_MS / 1000} s` : errorMessage(error);
    throw new Error(`The MCP registry at ${base} could not be searched: ${why}`);
  }
  const wanted = query.toLowerCase();
  return [...servers.values()].sort((a, b) => rank(a, wanted) - rank(b, wanted)).slice(0, MAX_SHOWN);
}
