/**
 * Whether a call of an MCP tool may run without asking the user, from the server's `autoApprove` and
 * `autoApproveReadOnly`, the tool's annotations and name, and what the user allowed earlier in the session. Pure.
 */
import type { ToolAnnotations } from "@modelcontextprotocol/client";
import { isExactName, matchesToolPattern } from "../common/tool-pattern.ts";
import type { ServerConfig } from "../config/types.ts";

export interface ApprovalQuestion {
  /** The tool's name on its MCP server. */
  tool: string;
  /** The server's approval settings. */
  rules: Pick<ServerConfig, "autoApprove" | "autoApproveReadOnly">;
  /** The annotations of the tool that matter here, as its server sent them (hints, not guarantees). */
  hints?: Pick<ToolAnnotations, "destructiveHint" | "readOnlyHint">;
  /** The user allowed this tool for the rest of the session. */
  allowedForSession: boolean;
  /** The user turned approval off (`"approval": "never"` in the user-level file). */
  approvalOff?: boolean;
}

export type ApprovalDecision =
  | { action: "allow"; reason: string }
  /** `everyTime`: a destructive tool; "for this session" is not offered, and it asks again next time. */
  | { action: "ask"; everyTime: boolean; reason: string };

/** Verbs in a tool's name that make it ask every time, as the words a name may contain. */
const DESTRUCTIVE_WORDS = new Set([
  ...["delete", "remove", "drop", "deploy", "destroy", "purge"].flatMap(inflections),
  ...["deletion", "removal", "deployment", "destruction"],
]);

function inflections(verb: string): string[] {
  const stem = verb.endsWith("e") ? verb.slice(0, -1) : verb;
  const doubled = verb === "drop" ? "dropp" : stem;
  return [verb, `${verb}s`, `${doubled}ed`, `${doubled}ing`];
}

/** The words of a tool name: split at anything but letters and digits, and where camelCase starts a word (`XMLNode` too). */
export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])|([A-Z])([A-Z][a-z])/g, "$1$3 $2$4")
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word !== "")
    .map((word) => word.toLowerCase());
}

/** The word of a tool's name that says it deletes, removes, drops, deploys, destroys or purges, if there is one. */
export function destructiveWord(name: string): string | undefined {
  return nameWords(name).find((word) => DESTRUCTIVE_WORDS.has(word));
}

/**
 * The rules, in order: with approval off everything runs; a tool `autoApprove` names exactly runs; a destructive one (by its server's `destructiveHint`
 * or by its name) asks every time; a tool an `autoApprove` pattern matches runs; with `autoApproveReadOnly`, a tool
 * marked `readOnlyHint` runs; one the user allowed for the session runs; any other asks, this first time.
 */
export function decideApproval(question: ApprovalQuestion): ApprovalDecision {
  const { tool, rules, hints } = question;
  if (question.approvalOff) return { action: "allow", reason: 'approval is off ("approval": "never")' };
  if (rules.autoApprove.some((pattern) => isExactName(pattern) && pattern === tool))
    return { action: "allow", reason: "listed by name in autoApprove" };
  const word = destructiveWord(tool);
  if (hints?.destructiveHint === true || word !== undefined) {
    const why = hints?.destructiveHint === true ? "its server marks it destructive" : `its name says '${word}'`;
    const reason = `${why}; it asks every time unless autoApprove lists its exact name`;
    return { action: "ask", everyTime: true, reason };
  }
  const pattern = rules.autoApprove.find((p) => !isExactName(p) && matchesToolPattern(p, tool));
  if (pattern !== undefined) return { action: "allow", reason: `matches "${pattern}" in autoApprove` };
  if (rules.autoApproveReadOnly && hints?.readOnlyHint === true)
    return { action: "allow", reason: "its server marks it read-only, and autoApproveReadOnly is on" };
  if (question.allowedForSession) return { action: "allow", reason: "allowed for this session" };
  return { action: "ask", everyTime: false, reason: "first use in this session" };
}
