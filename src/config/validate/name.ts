/**
 * What a server may be called. A name is how `/mcp` subcommands, tool names and messages address the server, so it
 * must be something a user can type (quoted, if it has spaces) and that reads the same everywhere.
 */
import { quoteValue } from "../../common/text.ts";
import { RESERVED_KEYS } from "../../common/values.ts";

/** Longer names are typos or attacks: tool names keep only 64 characters anyway. */
const MAX_SERVER_NAME_LENGTH = 100;

/** Control characters (C0, DEL, C1) and the Unicode line and paragraph separators: nothing a user can type in `/mcp`. */
const UNTYPABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** Why `name` cannot name a server, or undefined when it can. */
export function serverNameProblem(name: string): string | undefined {
  if (name.trim() === "") return "a server name must not be empty";
  if (name.length > MAX_SERVER_NAME_LENGTH)
    return `a server name must be at most ${MAX_SERVER_NAME_LENGTH} characters (got ${quoteValue(name, 40)})`;
  if (RESERVED_KEYS.has(name))
    return `${quoteValue(name)} cannot be a server name: JavaScript objects reserve it; rename the server`;
  if (UNTYPABLE.test(name))
    return `a server name must not contain control characters or line breaks (got ${quoteValue(name)})`;
  if (name !== name.trim()) return `a server name must not start or end with a space (got ${quoteValue(name)})`;
  return undefined;
}

/** A name as messages show it: as it is, or escaped and cut short when it is no server name (escape codes, 10 MB). */
export function serverLabel(name: string): string {
  return serverNameProblem(name) ? quoteValue(name, 60) : name;
}

/** A server name as `/mcp` takes it: as it is, or in double quotes when it holds spaces or quotes. */
export function commandArgument(name: string): string {
  return /^[^\s"'\\]+$/.test(name) ? name : `"${name.replace(/(["\\])/g, "\\$1")}"`;
}
