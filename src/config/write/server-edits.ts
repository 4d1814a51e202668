/**
 * The server-level changes `/mcp add`, `remove`, `enable`, `disable` and `import` (and "Always allow" of a tool) make
 * to a config file's text: set or remove a server's entry, set one of its fields, add to a list field, list the servers. Servers are found where config loading finds
 * them, under any of the map keys. Pure; text that does not parse, or whose top level is not an object, is refused
 * with a `ConfigWriteError`.
 */
import type { Node } from "jsonc-parser";
import { extractServerEntries, parseConfigText, SERVER_MAP_KEYS } from "../parse.ts";
import { ConfigWriteError } from "./error.ts";
import { type Doc, isBlank, load, newFileText } from "./jsonc-doc.ts";
import { appendElement, finish, insertProperty, property, removeProperty, replaceValue } from "./jsonc-edit.ts";

/** The map key a file without one gets. */
const DEFAULT_MAP_KEY = "mcpServers";

/** The map objects of the file, in `SERVER_MAP_KEYS` order (the order config loading gives them priority in). */
function serverMaps(doc: Doc): Array<{ key: string; map: Node }> {
  return SERVER_MAP_KEYS.flatMap((key) => {
    const map = property(doc.root, key)?.children?.[1];
    return map?.type === "object" ? [{ key, map }] : [];
  });
}

/** Where the file defines server `name`: the first map holding it, as config loading reads it. */
function findServer(doc: Doc, name: string): { key: string; map: Node; prop: Node } | undefined {
  for (const { key, map } of serverMaps(doc)) {
    const prop = property(map, name);
    if (prop) return { key, map, prop };
  }
  return undefined;
}

/** The map a new server goes in; throws when the file has a map key whose value is not an object. */
function targetMap(doc: Doc): { key: string; map: Node } | undefined {
  const maps = serverMaps(doc);
  if (maps.length > 0) return maps[0];
  for (const key of SERVER_MAP_KEYS) {
    const value = property(doc.root, key)?.children?.[1];
    // `null`, which loading reads as no servers: a map takes its place.
    if (value?.type === "null") return { key, map: value };
    if (value) throw new ConfigWriteError("not-object", `\`${key}\` in the config must be an object`);
  }
  return undefined;
}

/**
 * Adds server `name` or replaces its entry. It goes under the map key that already holds it, else the file's map key
 * (mcpServers, servers or mcp), else a new `mcpServers`. Empty or missing text gives a new file.
 */
export function setServerEntry(text: string | undefined, name: string, entry: Record<string, unknown>): string {
  if (isBlank(text)) return newFileText(text, { [DEFAULT_MAP_KEY]: { [name]: entry } });
  const doc = load(text!);
  const found = findServer(doc, name);
  if (found) return finish(doc, replaceValue(doc, found.map, found.prop, entry));
  const target = targetMap(doc);
  if (target?.map.type === "null")
    return finish(doc, replaceValue(doc, doc.root, property(doc.root, target.key)!, { [name]: entry }));
  if (target) return finish(doc, insertProperty(doc, target.map, name, entry));
  return finish(doc, insertProperty(doc, doc.root, DEFAULT_MAP_KEY, { [name]: entry }));
}

/** Removes server `name` (from every map that holds it). Throws `ConfigWriteError("missing")` if the file has none. */
export function removeServerEntry(text: string, name: string): string {
  if (isBlank(text)) throw new ConfigWriteError("missing", `the config has no server "${name}"`);
  let doc = load(text);
  let found = findServer(doc, name);
  if (!found) throw new ConfigWriteError("missing", `the config has no server "${name}"`);
  let result = text;
  while (found) {
    result = finish(doc, removeProperty(doc, found.map, found.prop, [found.key, name]));
    doc = load(result);
    found = findServer(doc, name);
  }
  return result;
}

/**
 * Sets one field of server `name`'s entry, e.g. `("github", "enabled", false)`. A server this file does not define
 * gets an entry holding only that field (a toggle-only override for `enabled`). `value` undefined removes the field.
 */
export function setServerField(text: string | undefined, name: string, field: string, value: unknown): string {
  if (value === undefined) {
    if (isBlank(text)) return text ?? "";
    const doc = load(text!);
    const found = findServer(doc, name);
    const entry = found?.prop.children?.[1];
    const prop = entry?.type === "object" ? property(entry, field) : undefined;
    if (!found || !entry || !prop) return text!;
    return finish(doc, removeProperty(doc, entry, prop, [found.key, name, field]));
  }
  if (isBlank(text)) return setServerEntry(text, name, { [field]: value });
  const doc = load(text!);
  const found = findServer(doc, name);
  if (!found) return setServerEntry(text, name, { [field]: value });
  const entry = found.prop.children?.[1];
  if (entry?.type !== "object")
    throw new ConfigWriteError("not-object", `server "${name}" in the config is not an object`);
  const existing = property(entry, field);
  if (existing) return finish(doc, replaceValue(doc, entry, existing, value));
  return finish(doc, insertProperty(doc, entry, field, value));
}

/**
 * Adds `item` to the list `field` of server `name` (e.g. a tool to `autoApprove`), creating the list if the entry has
 * none; the text is returned unchanged if the list holds it already. Throws `ConfigWriteError` when the file does not
 * define the server, or the field is not a list.
 */
export function addToServerList(text: string | undefined, name: string, field: string, item: string): string {
  const doc = isBlank(text) ? undefined : load(text!);
  const found = doc && findServer(doc, name);
  const entry = found?.prop.children?.[1];
  if (!doc || !found || !entry) throw new ConfigWriteError("missing", `the config has no server "${name}"`);
  if (entry.type !== "object")
    throw new ConfigWriteError("not-object", `server "${name}" in the config is not an object`);
  const list = property(entry, field)?.children?.[1];
  if (!list) return finish(doc, insertProperty(doc, entry, field, [item]));
  if (list.type !== "array")
    throw new ConfigWriteError("not-object", `\`${field}\` of server "${name}" in the config is not a list`);
  if (list.children?.some((element) => element.value === item)) return text!;
  return finish(doc, appendElement(doc, list, item));
}

/** The server names the file defines, in file order (a name under two map keys once). Empty text has none. */
export function serverNames(text: string): string[] {
  if (isBlank(text)) return [];
  const doc = load(text);
  const value = parseConfigText(doc.bom + doc.body).value;
  return extractServerEntries(value, { scope: "project", path: "" }).entries.map((e) => e.name);
}
