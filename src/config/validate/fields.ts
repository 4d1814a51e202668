/**
 * Readers for one field of a server entry, shared by the validators: each returns the value, or its fallback after
 * adding an error that says what the field must hold. An absent (or null) field is not an error.
 */
import { isObject, type JsonObject } from "../../common/values.ts";

/** An object of names to strings (`env`, `headers`). Numbers and booleans become their string form. */
export function stringMap(value: unknown, field: string, errors: string[]): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) {
    errors.push(`\`${field}\` must be an object of names to string values`);
    return {};
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === "string") out[k] = v;
    // Numbers and booleans are common in hand-written env blocks; their string form is what a process sees anyway.
    else if (typeof v === "number" || typeof v === "boolean") out[k] = String(v);
    else errors.push(`\`${field}.${k}\` must be a string`);
  }
  return out;
}

export function booleanField(entry: JsonObject, field: string, fallback: boolean, errors: string[]): boolean {
  const value = entry[field];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "boolean") {
    errors.push(`\`${field}\` must be true or false (got ${JSON.stringify(value)})`);
    return fallback;
  }
  return value;
}

/** A whole number, 0 or more (attempt counts). */
export function countField(value: unknown, field: string, fallback: number, errors: string[]): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    errors.push(`\`${field}\` must be a whole number, 0 or more (got ${JSON.stringify(value)})`);
    return fallback;
  }
  return value;
}

/** Milliseconds where 0 means "off". */
export function nonNegativeMs(value: unknown, field: string, fallback: number, errors: string[]): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    errors.push(`\`${field}\` must be a number of milliseconds, 0 or more (got ${JSON.stringify(value)})`);
    return fallback;
  }
  return value;
}

/** Milliseconds that must be more than 0 (timeouts, delays). */
export function positiveMs(value: unknown, field: string, fallback: number, errors: string[]): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    errors.push(`\`${field}\` must be a positive number of milliseconds (got ${JSON.stringify(value)})`);
    return fallback;
  }
  return value;
}
