/**
 * What the user is told about a server's tools as a whole: names another server's tools already have, and schema rules
 * the model's copy leaves out. One sentence per server (and per other server) for the startup notice and `/mcp`,
 * where each tool is one line in the log. Pure.
 */
import type { LogRecord } from "../common/log-file.ts";
import type { Tool } from "@modelcontextprotocol/client";
import { listedNames } from "../translate/tool-list-limits.ts";
import { SCHEMA_WITHOUT_TYPE } from "../connection/tool-list-repair.ts";

/** A tool that did not get the name it wanted. */
export interface Collision {
  server: string;
  tool: string;
  wanted: string;
  name: string;
  /** Who has the name: `pi's built-in tool 'read'`, `tool 'echo' of MCP server 'alpha'`. */
  owner: string;
  /** The other MCP server that has the name, when it is one. */
  ownerServer?: string;
}

export function takenWarning({ wanted, server, tool, owner, name }: Collision): string {
  return `Tool name '${wanted}' of MCP server '${server}' (tool '${tool}') is already taken by ${owner}; registered as '${name}'`;
}

/** Whether another MCP server has the name (not pi, another extension, or the server itself). */
export function isClash(c: Collision): boolean {
  return c.ownerServer !== undefined && c.ownerServer !== c.server;
}

/** The log's line for one clash between two servers, in the words of the tool conversion spec. */
export function clashRecord(c: Collision): LogRecord {
  const message = `Tool name conflict: '${c.wanted}' provided by both '${c.ownerServer}' and '${c.server}'; '${c.server}''s is registered as '${c.name}'`;
  return { level: "warn", event: "tools.name.conflict", server: c.server, tool: c.tool, message };
}

/** One notice per other server whose tools have names `server`'s wanted: which keeps them, and how to avoid it. */
export function clashNotes(server: string, collisions: Iterable<Collision>): string[] {
  const byOwner = new Map<string, Collision[]>();
  for (const c of collisions)
    if (c.server === server && isClash(c)) byOwner.set(c.ownerServer!, [...(byOwner.get(c.ownerServer!) ?? []), c]);
  return [...byOwner].map(([owner, clashes]) => clashNote(server, owner, clashes));
}

function clashNote(server: string, owner: string, clashes: readonly Collision[]): string {
  const them = clashes.length === 1 ? "it" : "them";
  return (
    `Tool name conflict: ${listedNames(clashes.map((c) => ({ name: c.wanted })))} provided by both '${owner}' and ` +
    `'${server}'; '${owner}' keeps ${them}, and '${server}''s ${clashes.length === 1 ? "is" : "are"} registered as ` +
    `${listedNames(clashes.map((c) => ({ name: c.name })))}. Set "prefix" on one of the servers (e.g. ` +
    `"prefix": "${server}") to name ${them} apart`
  );
}

/** The log's line for a tool whose schema uses rule keywords the model's copy leaves out. */
export function uncarriedRecord(server: string, tool: string, keywords: readonly string[]): LogRecord {
  const message = `tool '${tool}' uses schema keywords the model cannot see (${keywords.join(", ")}); the server's own schema still checks the arguments`;
  return { level: "warn", event: "tool.schema.uncarried", server, tool, message };
}

/** The notice for a server's tools whose schemas use rule keywords the model's copy leaves out (by tool, if any). */
export function uncarriedNote(tools: ReadonlyArray<readonly string[] | undefined>): string[] {
  const perTool = tools.filter((keywords) => keywords !== undefined);
  if (perTool.length === 0) return [];
  const keywords = [...new Set(perTool.flat())].join(", ");
  return [
    `${perTool.length === 1 ? "1 tool uses" : `${perTool.length} tools use`} schema keywords the model cannot see ` +
      `(${keywords}); the server's own schema still checks the arguments (mcp.log names each tool)`,
  ];
}

/** The notice for a server's tools whose input schema had no `type` (../connection/tool-list-repair.ts), if any. */
export function typelessNote(tools: readonly Tool[]): string[] {
  const typeless = tools.filter((tool) => tool._meta?.[SCHEMA_WITHOUT_TYPE]);
  if (typeless.length === 0) return [];
  const names = typeless.map((tool) => tool.name);
  const listed = names.length > 5 ? `${names.slice(0, 5).join(", ")}, …` : names.join(", ");
  const bare = typeless.filter((tool) => Object.keys(tool.inputSchema.properties ?? {}).length === 0).length;
  const none = bare
    ? `; ${bare === typeless.length ? "they list" : `${bare} list`} no parameters, which the model then learns only from the server's errors`
    : "";
  return [
    `${names.length === 1 ? "1 tool has an input schema" : `${names.length} tools have input schemas`} without \`type\`, ` +
      `which MCP requires: read as object schemas${none} (${listed})`,
  ];
}
