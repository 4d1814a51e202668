/**
 * Checks on values whose shape is not known yet: parsed JSON from a file or a server.
 */

/** A JSON object: string keys, values still unchecked. */
export type JsonObject = Record<string, unknown>;

/** A plain object (not null, not an array): what a JSON object parses to. */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Keys that mean something to every JavaScript object: written into a plain object they change its prototype or
 * shadow what code expects to find there, so a config may not use them as names or keys.
 */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

/**
 * The path (`env.__proto__`) of the first reserved key anywhere inside `value`, if any. Walks with its own stack, so a
 * deeply nested value cannot overflow the call stack.
 */
export function findReservedKey(value: unknown): string | undefined {
  const stack: Array<{ value: unknown; path: string }> = [{ value, path: "" }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop()!;
    if (Array.isArray(current)) current.forEach((item, i) => stack.push({ value: item, path: `${path}[${i}]` }));
    else if (isObject(current))
      for (const key of Object.keys(current)) {
        const at = path ? `${path}.${key}` : key;
        if (RESERVED_KEYS.has(key)) return at;
        stack.push({ value: current[key], path: at });
      }
  }
  return undefined;
}

/** Sets `key` on `target` as its own property, so a key such as `__proto__` stays a key instead of setting a prototype. */
export function defineOwn(target: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
