/**
 * Checks on values whose shape is not known yet: parsed JSON from a file or a server.
 */

/** A JSON object: string keys, values still unchecked. */
export type JsonObject = Record<string, unknown>;

/** A plain object (not null, not an array): what a JSON object parses to. */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
