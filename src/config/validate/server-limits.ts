/**
 * The bounds on what a server may send: how many tools it registers (`maxTools`), how large one tool's input schema
 * may be (`maxSchemaBytes`), and how large one message may be (`maxMessageBytes`: a local server's stdout line, a
 * remote server's JSON response or SSE event).
 */
import type { JsonObject } from "../../common/values.ts";
import { DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_SCHEMA_BYTES, DEFAULT_MAX_TOOLS } from "../defaults.ts";
import type { ServerLimits } from "../types.ts";
import { countField } from "./fields.ts";

export function validateLimits(entry: JsonObject, errors: string[]): ServerLimits {
  const limit = (field: keyof ServerLimits, fallback: number) => countField(entry[field], field, fallback, errors, 1);
  const maxTools = limit("maxTools", DEFAULT_MAX_TOOLS);
  const maxSchemaBytes = limit("maxSchemaBytes", DEFAULT_MAX_SCHEMA_BYTES);
  return { maxTools, maxSchemaBytes, maxMessageBytes: limit("maxMessageBytes", DEFAULT_MAX_MESSAGE_BYTES) };
}
