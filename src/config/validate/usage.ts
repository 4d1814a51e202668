/**
 * The fields that say how the agent uses a server: whether at all (`enabled`, `disabled`), under which tool names
 * (`prefix`), and how long one call may wait (`requestTimeout`). Also the warning for `envFile`, which is not read.
 */
import type { JsonObject } from "../../common/values.ts";
import { DEFAULT_REQUEST_TIMEOUT_MS } from "../defaults.ts";
import type { ServerConfig } from "../types.ts";
import { positiveMs } from "./fields.ts";

export type Usage = Pick<ServerConfig, "requestTimeout" | "enabled" | "prefix">;

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

  if (entry.envFile !== undefined) warnings.push("`envFile` is not supported and is ignored; list the variables under `env`");
  return { requestTimeout, enabled, prefix };
}
