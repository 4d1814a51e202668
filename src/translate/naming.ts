/**
 * Tool names that every model provider accepts: `[A-Za-z0-9_-]`, a letter first, at most 64 characters.
 */
import { shortHash } from "../common/text.ts";

export const MAX_TOOL_NAME_LENGTH = 64;

/** pi's built-in tools (`powershell` is pi 1.x's); an MCP tool never takes one of these names. */
export const PI_BUILTIN_TOOL_NAMES: readonly string[] = "read bash edit write grep find ls powershell".split(" ");

/** The name before sanitising: `mcp_<server>_<tool>`, `<prefix>_<tool>`, or the bare tool name for `prefix: ""`. */
export function rawToolName(server: string, tool: string, prefix?: string): string {
  if (prefix === undefined) return `mcp_${server}_${tool}`;
  if (prefix === "") return tool;
  return `${prefix}_${tool}`;
}

/**
 * Makes a name provider-safe. Accents are dropped (`café` → `cafe`), other invalid characters become `_`; a name that
 * does not start with a letter gets `mcp_` in front. A name that had letters no provider accepts (`查询天气`, as
 * underscores alone the same as `查询地址`) or is over-long keeps its head and ends in a hash of the full original, so
 * it stays unique and stable.
 */
export function sanitizeToolName(raw: string): string {
  const plain = raw.normalize("NFKD").replace(/\p{M}/gu, "");
  let name = plain.replace(/[^A-Za-z0-9_-]/g, "_");
  if (!/^[A-Za-z]/.test(name)) name = `mcp_${name}`;
  const lost = /[^\p{ASCII}]/u.test(plain);
  if (!lost && name.length <= MAX_TOOL_NAME_LENGTH) return name;
  const hash = shortHash(raw);
  const head = lost ? name.replace(/_{2,}/g, "_").replace(/_$/, "") : name;
  return `${head.slice(0, MAX_TOOL_NAME_LENGTH - hash.length - 1)}_${hash}`;
}

/** How the pi names of a server's tools begin (`mcp_github_`, `gh_`); empty where they are the bare names. */
export function toolNameStem(server: string, prefix?: string): string {
  return prefix === "" ? "" : sanitizeToolName(rawToolName(server, "", prefix));
}

/** The pi tool name for an MCP tool, before collisions are considered. */
export function toolNameFor(server: string, tool: string, prefix?: string): string {
  return sanitizeToolName(rawToolName(server, tool, prefix));
}

/**
 * The first free name among `name`, `name_2`, `name_3`, …, each kept within the length limit by shortening the base.
 */
export function allocateToolName(name: string, isTaken: (candidate: string) => boolean): string {
  if (!isTaken(name)) return name;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const candidate = `${name.slice(0, MAX_TOOL_NAME_LENGTH - suffix.length)}${suffix}`;
    if (!isTaken(candidate)) return candidate;
  }
}

/**
 * A file name for a server's own log: its name where that is safe on every file system, else a safe form with a hash
 * of the original, so `a/b` and `a:b` do not share a file, nor `GitHub` and `github` (one file on macOS and Windows), nor
 * a name that looks hashed (`a_b-1a2b3c4d`) and the name it looks like.
 */
export function serverLogFileName(server: string): string {
  const safe = server
    .replace(/[^A-Za-z0-9_.-]/g, "_")
    .replace(/^\.+/, "_")
    .replace(/^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/i, "_$1$2") // a Windows device, not a file
    .slice(0, 80);
  const plain = safe === server && server === server.toLowerCase() && !/-[0-9a-f]{8}$/.test(server);
  return plain ? `${server}.log` : `${safe}-${shortHash(server)}.log`;
}
