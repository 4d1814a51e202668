/**
 * The fields that say how the agent uses a server: whether at all (`enabled`, `disabled`), under which tool names
 * (`prefix`), how long one call may wait (`requestTimeout`), and which tools run without asking (`autoApprove`,
 * `autoApproveReadOnly`). Also the warning for `envFile`, which is not read.
 */
import type { JsonObject } from "../../common/values.ts";
import { DEFAULT_REQUEST_TIMEOUT_MS } from "../defaults.ts";
import type { ServerConfig } from "../types.ts";
import { booleanField, positiveMs } from "./fields.ts";

export type Usage = Pick<ServerConfig, "requestTimeout" | "enabled" | "prefix" | "autoApprove" | "autoApproveReadOnly">;

export function validateUsage(entry: JsonObject, errors: string[], warnings: string[]): Usage {
  const requestTimeout = positiveMs(entry.requestTimeout, "requestTimeout", DEFAULT_REQUEST_TIMEOUT_MS, errors);

  let enabled = true;
  if (entry.enabled !== undefined) {
    if (typeof entry.enabled !== "boolean") errors.push("`enabled` must be true or false");
    else enabled = entry.enabled;
  }
  if (entry.disabled !== undefined) {
    if (typeof entry.disabled !== "boolean") errors.push("`disabled` must be true or false");
    else if (entry.disabled) enabled = false;
  }

  let prefix: string | undefined;
  if (entry.prefix !== undefined && entry.prefix !== null) {
    if (typeof entry.prefix !== "string") errors.push("`prefix` must be a string (\"\" for bare tool names)");
    else prefix = entry.prefix;
  }

  const autoApprove = toolPatterns(entry.autoApprove, errors);
  const autoApproveReadOnly = booleanField(entry, "autoApproveReadOnly", false, errors);

  if (entry.envFile !== undefined) warnings.push("`envFile` is not supported and is ignored; list the variables under `env`");
  return { requestTimeout, enabled, prefix, autoApprove, autoApproveReadOnly };
}

/** `autoApprove`: tool names or `*`/`?` patterns. */
function toolPatterns(value: unknown, errors: string[]): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string" && item.trim() !== "")) {
    errors.push('`autoApprove` must be an array of tool names (patterns with `*` and `?` allowed), e.g. ["search_*", "get_issue"]');
    return [];
  }
  return value as string[];
}
