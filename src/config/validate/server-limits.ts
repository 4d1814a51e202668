/**
 * The bounds on what a server may send: how many tools it registers (`maxTools`), how large one tool's input schema
 * may be (`maxSchemaBytes`), and how large one message may be (`maxMessageBytes`: a local server's stdout line, a
 * remote server's JSON response or SSE event).
 */
import { quoteValue } from "../../common/text.ts";
import type { JsonObject } from "../../common/values.ts";
import { DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_SCHEMA_BYTES, DEFAULT_MAX_TOOLS } from "../defaults.ts";
import type { ServerLimits } from "../types.ts";

/** A whole number, 1 or more. */
function positiveCount(value: unknown, field: string, fallback: number, errors: string[]): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    errors.push(`\`${field}\` must be a whole number, 1 or more (got ${quoteValue(value)})`);
    return fallback;
  }
  return value;
}

export function validateLimits(entry: JsonObject, errors: string[]): ServerLimits {
  const maxTools = positiveCount(entry.maxTools, "maxTools", DEFAULT_MAX_TOOLS, errors);
  const maxSchemaBytes = positiveCount(entry.maxSchemaBytes, "maxSchemaBytes", DEFAULT_MAX_SCHEMA_BYTES, errors);
  const maxMessageBytes = positiveCount(entry.maxMessageBytes, "maxMessageBytes", DEFAULT_MAX_MESSAGE_BYTES, errors);
  return { maxTools, maxSchemaBytes, maxMessageBytes };
}
