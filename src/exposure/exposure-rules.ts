/**
 * Which exposure a tool gets: its exact name in the server's `toolExposure` first, then the first pattern that matches
 * it, then the server's `exposure`, then the top-level default. And what `"auto"` becomes: direct while the MCP tool
 * definitions of all servers stay under the threshold, deferred beyond it. Pure.
 */
import type { Exposure, ExposureSetting, ExposureThreshold, ToolExposureRule } from "../config/types.ts";
import { estimatedTokens } from "./definition-cost.ts";
import { isExactName, matchesToolPattern } from "../common/tool-pattern.ts";

/** The context window assumed when pi has no model yet (print mode without one, a command before any model is set). */
export const FALLBACK_CONTEXT_WINDOW = 128_000;

/** The exposure a tool's settings give it, `"auto"` left for the session to decide. */
export function exposureSetting(
  tool: string,
  rules: readonly ToolExposureRule[],
  serverSetting: ExposureSetting | undefined,
  defaultSetting: ExposureSetting,
): ExposureSetting {
  const matched =
    rules.find((rule) => isExactName(rule.pattern) && rule.pattern === tool) ??
    rules.find((rule) => !isExactName(rule.pattern) && matchesToolPattern(rule.pattern, tool));
  return matched?.exposure ?? serverSetting ?? defaultSetting;
}

/** The most tokens of MCP tool definitions `auto` keeps direct. */
export function autoLimitTokens(threshold: ExposureThreshold, contextWindow: number | undefined): number {
  if ("tokens" in threshold) return threshold.tokens;
  const window = contextWindow && contextWindow > 0 ? contextWindow : FALLBACK_CONTEXT_WINDOW;
  return Math.floor(window * threshold.share);
}

/** What `auto` means this session, from the characters the tools it covers would add to each request. */
export function decideAuto(
  chars: number,
  limitTokens: number,
): { exposure: Exposure; tokens: number; limitTokens: number } {
  const tokens = estimatedTokens(chars);
  return { exposure: tokens > limitTokens ? "deferred" : "direct", tokens, limitTokens };
}
