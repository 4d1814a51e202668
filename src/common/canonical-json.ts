/**
 * One JSON form per value, whatever the order its object keys were written in, and a hash of it: what identifies a
 * server's definition in the tool cache and in the project-trust record.
 */
import { createHash } from "node:crypto";

/** A plain-data copy of `value` with object keys sorted recursively and undefined (or unserialisable) members dropped. */
function canonicalize(value: unknown): unknown {
  if (value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function")
    value = (value as { toJSON: () => unknown }).toJSON();
  // As JSON.stringify does: a hole in an array becomes null, so positions keep their meaning.
  if (Array.isArray(value)) return value.map((item) => canonicalize(item) ?? null);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const c = canonicalize((value as Record<string, unknown>)[key]);
      if (c !== undefined) out[key] = c;
    }
    return out;
  }
  if (typeof value === "function" || typeof value === "symbol") return undefined;
  if (typeof value === "bigint") return value.toString();
  return value;
}

export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonicalize(value)) ?? "null";
}

/** sha256 hex of the canonical JSON form of `value`. */
export function canonicalHash(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value)).digest("hex");
}
