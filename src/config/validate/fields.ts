/**
 * Readers for one field of a server entry, shared by the validators: each returns the value, or its fallback after
 * adding an error that says what the field must hold. An absent (or null) field is not an error.
 */
import { shown } from "../../common/terminal-text.ts";
import { quoteValue } from "../../common/text.ts";
import { isObject, type JsonObject } from "../../common/values.ts";

/**
 * The longest time a timeout or delay may be: Node's timers hold a signed 32-bit count of ms (about 24.8 days), and a
 * longer one fires at once, which would make a timeout of "forever" time out immediately.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

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
    else errors.push(`\`${field}.${shown(k, 60, "line")}\` must be a string`);
  }
  return out;
}

export function booleanField(entry: JsonObject, field: string, fallback: boolean, errors: string[]): boolean {
  const value = entry[field];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "boolean") {
    errors.push(`\`${field}\` must be true or false (got ${quoteValue(value)})`);
    return fallback;
  }
  return value;
}

/** A whole number, `min` or more: attempt counts from 0, limits from 1. */
export function countField(value: unknown, field: string, fallback: number, errors: string[], min = 0): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    errors.push(`\`${field}\` must be a whole number, ${min} or more (got ${quoteValue(value)})`);
    return fallback;
  }
  return value;
}

/** Milliseconds where 0 means "off". */
export function nonNegativeMs(value: unknown, field: string, fallback: number, errors: string[]): number {
  return boundedMs(value, field, fallback, 0, "a number of milliseconds, 0 or more", errors);
}

/** Milliseconds that must be more than 0 (timeouts, delays). */
export function positiveMs(value: unknown, field: string, fallback: number, errors: string[]): number {
  return boundedMs(value, field, fallback, Number.MIN_VALUE, "a positive number of milliseconds", errors);
}

/** The one check behind every ms field: a finite number from `min` up to {@link MAX_TIMER_MS}. */
function boundedMs(
  value: unknown,
  field: string,
  fallback: number,
  min: number,
  what: string,
  errors: string[],
): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < min) {
    errors.push(`\`${field}\` must be ${what} (got ${quoteValue(value)})`);
    return fallback;
  }
  if (value > MAX_TIMER_MS) {
    errors.push(`\`${field}\` must be at most ${MAX_TIMER_MS} ms, about 24.8 days (got ${quoteValue(value)})`);
    return fallback;
  }
  return value;
}
