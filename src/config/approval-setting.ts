/**
 * The top-level `"approval"` key of a config file: `"never"` turns the bridge's approval prompts off, `"ask"` (the
 * default) keeps them. Only the user-level file may set it: a project's file comes with the repository, and the
 * tools it would let run unasked are the user's to allow. Pure.
 */
import { quoteValue } from "../common/text.ts";
import { isObject } from "../common/values.ts";
import type { ApprovalMode, ConfigProblem, ConfigSource } from "./types.ts";

export const APPROVAL_KEY = "approval";
const MODES: readonly ApprovalMode[] = ["ask", "never"];

/** The mode a parsed file sets, if it sets one it may; otherwise why it is ignored. */
export function approvalSetting(doc: unknown, source: ConfigSource): { mode?: ApprovalMode; problem?: ConfigProblem } {
  if (!isObject(doc) || doc[APPROVAL_KEY] === undefined || doc[APPROVAL_KEY] === null) return {};
  const value = doc[APPROVAL_KEY];
  if (!MODES.includes(value as ApprovalMode)) {
    const message = `\`${APPROVAL_KEY}\` must be "ask" or "never" (got ${quoteValue(value)}); MCP tools ask before they run`;
    return { problem: { level: "warning", source, message } };
  }
  if (source.scope !== "user") {
    // "ask" is what happens anyway; only a file that tries to turn approval off hears about it.
    if (value === "ask") return {};
    const message = `\`${APPROVAL_KEY}\` is ignored here: only the user-level file (<agent dir>/mcp.json, e.g. ~/.pi/agent/mcp.json) can turn approval prompts off`;
    return { problem: { level: "warning", source, message } };
  }
  return { mode: value as ApprovalMode };
}
