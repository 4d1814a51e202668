/**
 * Searching an MCP registry (the official one at registry.modelcontextprotocol.io, or the one `MCP_REGISTRY_URL`
 * names, as an organisation may run its own) through its REST API: `GET /v0.1/servers?search=…&version=latest`. Its
 * answer is bounded in time and size, and servers it marks deleted or deprecated are left out.
 */
import { errorMessage } from "../../common/errors.ts";
import { isObject } from "../../common/values.ts";
import type { Environment } from "../substitute.ts";
import { readRegistryServer, type RegistryServer } from "./server-json.ts";

const DEFAULT_REGISTRY_URL = "https://registry.modelcontextprotocol.io";
/** A page of 30 servers is a few dozen KB; a registry that sends more than this is not read. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
const SEARCH_TIMEOUT_MS = 15_000;
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

/** The latest version of each active server whose name matches `query`; throws with what went wrong, in words. */
export async function searchRegistry(base: string, query: string, signal?: AbortSignal): Promise<RegistryServer[]> {
  const url = `${base}/v0.1/servers?search=${encodeURIComponent(query)}&version=latest&limit=30`;
  const timeout = AbortSignal.timeout(SEARCH_TIMEOUT_MS);
  let body: unknown;
  try {
    const response = await fetch(url, {
      headers: { accept: "application/json" },
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    if (!response.ok) throw new Error(`it answered HTTP ${response.status}`);
    body = JSON.parse(await boundedText(response));
  } catch (error) {
    const why = timeout.aborted ? `no answer within ${SEARCH_TIMEOUT_MS / 1000} s` : errorMessage(error);
    throw new Error(`The MCP registry at ${base} could not be searched: ${why}`);
  }
  const listed = isObject(body) && Array.isArray(body.servers) ? body.servers : [];
  const servers = new Map<string, RegistryServer>();
  for (const item of listed) {
    const meta =
      isObject(item) && isObject(item._meta) && isObject(item._meta[STATUS_KEY]) ? item._meta[STATUS_KEY] : {};
    if (meta.status === "deleted" || meta.status === "deprecated" || meta.isLatest === false) continue;
    const server = readRegistryServer(item);
    if (server && !servers.has(server.name)) servers.set(server.name, server);
  }
  return [...servers.values()];
}
