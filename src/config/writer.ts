/**
 * Edits one MCP config file (`.pi/mcp.json` or `<agent dir>/mcp.json`) in place.
 *
 * The text functions are pure. Each one changes only the bytes it has to: the other entries, their key order, the
 * indentation style, comments, a BOM and the trailing newline stay as written. A new value is printed in the file's
 * own indentation (tabs or N spaces) and line ending, or on one line inside an object that is written on one line.
 * Text that does not parse, or whose top level is not an object, is refused with a `ConfigWriteError`.
 *
 * `updateConfigFile` reads a file, applies one of them and replaces the file by renaming a temp file over it, so a
 * reader never sees half a file. A file that does not parse is never written.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, realpath, rename, stat, unlink, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { applyEdits, createScanner, modify, parseTree, type Edit, type JSONPath, type Node } from "jsonc-parser";
import { extractServerEntries, parseConfigText, SERVER_MAP_KEYS } from "./parse.ts";
import { isObject, type JsonObject } from "../common/values.ts";
import { errorMessage } from "../common/errors.ts";

export type ConfigWriteErrorReason = "unparsable" | "not-object" | "io" | "missing";

export class ConfigWriteError extends Error {
  constructor(
    readonly reason: ConfigWriteErrorReason,
    message: string,
  ) {
    super(message);
    this.name = "ConfigWriteError";
  }
}

/** jsonc-parser's `SyntaxKind` is a const enum, which cannot be imported under per-file transpilation. */
const Token = {
  CloseBrace: 2,
  Comma: 5,
  LineComment: 12,
  BlockComment: 13,
  LineBreak: 14,
  Whitespace: 15,
} as const;

const BOM = "\ufeff";
const DEFAULT_INDENT = "  ";
const DEFAULT_MAP_KEY = "mcpServers";

/** A parsed file: the text without its BOM, its tree, and the style new text is written in. */
interface Doc {
  bom: string;
  body: string;
  root: Node;
  eol: string;
  /** One level of indentation: a tab or N spaces. */
  indent: string;
  /** What goes between a key and its value, as the file writes it (`": "` unless it says otherwise). */
  colon: string;
}



function splitBom(text: string): { bom: string; body: string } {
  return text.startsWith(BOM) ? { bom: BOM, body: text.slice(1) } : { bom: "", body: text };
}

function isBlank(text: string | undefined): boolean {
  return text === undefined || splitBom(text).body.trim() === "";
}

/** The text of a file holding only `value`, in the default style. */
function newFileText(text: string | undefined, value: JsonObject): string {
  const { bom, body } = splitBom(text ?? "");
  const eol = detectEol(body);
  return bom + JSON.stringify(value, null, DEFAULT_INDENT).split("\n").join(eol) + eol;
}

/** Parses `text`; throws for text that does not parse or whose top level is not an object. */
function load(text: string): Doc {
  const parsed = parseConfigText(text);
  if (parsed.error !== undefined) throw new ConfigWriteError("unparsable", `the config is ${parsed.error}`);
  const { bom, body } = splitBom(text);
  const root = parseTree(body, [], { allowTrailingComma: true, disallowComments: false });
  if (!root || root.type !== "object") {
    throw new ConfigWriteError("not-object", "the config must hold a JSON object at the top level");
  }
  return { bom, body, root, eol: detectEol(body), indent: detectIndent(body, root), colon: detectColon(body, root) };
}

function detectEol(body: string): string {
  const i = body.indexOf("\n");
  return i > 0 && body[i - 1] === "\r" ? "\r\n" : "\n";
}

function lineStart(body: string, offset: number): number {
  let i = offset;
  while (i > 0 && body[i - 1] !== "\n" && body[i - 1] !== "\r") i--;
  return i;
}

/** The leading whitespace of the line `offset` is on. */
function lineIndent(body: string, offset: number): string {
  const start = lineStart(body, offset);
  return /^[ \t]*/.exec(body.slice(start, offset))![0];
}

/** True when only whitespace comes before `offset` on its line. */
function startsLine(body: string, offset: number): boolean {
  return /^[ \t]*$/.test(body.slice(lineStart(body, offset), offset));
}

/** The first property that starts a line, at any depth, tells the indentation unit: tabs, or its spaces / its depth. */
function detectIndent(body: string, root: Node): string {
  let found: string | undefined;
  const walk = (node: Node, depth: number): void => {
    for (const child of node.children ?? []) {
      if (found !== undefined) return;
      if (node.type === "object" || node.type === "array") {
        const item = child;
        if (startsLine(body, item.offset)) {
          const ws = lineIndent(body, item.offset);
          if (ws !== "" && /^\t+$/.test(ws)) found = "\t";
          else if (ws !== "" && /^ +$/.test(ws) && ws.length % depth === 0) found = " ".repeat(ws.length / depth);
          if (found !== undefined) return;
        }
        walk(item, depth + 1);
      } else {
        // A property: its children are the key and the value; the value's children are one level deeper.
        walk(child, depth);
      }
    }
  };
  walk(root, 1);
  return found ?? DEFAULT_INDENT;
}

/** The key/value separator of the first property in the file, if it is plain (`:` with spaces around, on one line). */
function detectColon(body: string, root: Node): string {
  const first = findFirstProperty(root);
  if (first?.children?.length === 2) {
    const [key, value] = first.children as [Node, Node];
    const gap = body.slice(key.offset + key.length, value.offset);
    if (/^[ \t]*:[ \t]*$/.test(gap)) return gap;
  }
  return ": ";
}

function findFirstProperty(node: Node): Node | undefined {
  if (node.type === "property") return node;
  for (const child of node.children ?? []) {
    const found = findFirstProperty(child);
    if (found) return found;
  }
  return undefined;
}

function hasLineBreak(text: string): boolean {
  return /[\r\n]/.test(text);
}

/**
 * An object written on one line gets new members on that line too. An empty one does only in a file written on one
 * line that holds more than `{}`: a bare `{}` file grows into the usual multi-line layout.
 */
function isInline(doc: Doc, obj: Node): boolean {
  if (hasLineBreak(doc.body.slice(obj.offset, obj.offset + obj.length))) return false;
  if ((obj.children?.length ?? 0) > 0) return true;
  return !hasLineBreak(doc.body.trim()) && (doc.root.children?.length ?? 0) > 0;
}

function formatValue(doc: Doc, value: unknown, baseIndent: string, inline: boolean): string {
  const json = inline ? JSON.stringify(value) : JSON.stringify(value, null, doc.indent);
  if (json === undefined) throw new TypeError(`cannot write ${typeof value} as a JSON value`);
  // JSON escapes line breaks inside strings, so every "\n" here is one the printer put between members.
  return inline ? json : json.split("\n").join(doc.eol + baseIndent);
}

function propertyText(doc: Doc, key: string, value: unknown, indent: string, inline: boolean): string {
  return `${JSON.stringify(key)}${doc.colon}${formatValue(doc, value, indent, inline)}`;
}

function property(obj: Node, key: string): Node | undefined {
  return obj.children?.find((p) => p.children?.[0]?.value === key);
}

/** Reads the trivia after `offset` on the same line: an optional comma, then comments (unless `inline`). */
function scanLineTail(body: string, offset: number, inline: boolean): { comma: boolean; end: number; lineBreak?: number } {
  const scanner = createScanner(body, false);
  scanner.setPosition(offset);
  let comma = false;
  let end = offset;
  for (;;) {
    const token = scanner.scan() as number;
    const tokenEnd = scanner.getTokenOffset() + scanner.getTokenLength();
    if (token === Token.Whitespace) continue;
    if (token === Token.Comma && !comma) {
      comma = true;
      end = tokenEnd;
    } else if (!inline && (token === Token.LineComment || token === Token.BlockComment)) {
      if (hasLineBreak(body.slice(scanner.getTokenOffset(), tokenEnd))) return { comma, end };
      end = tokenEnd;
    } else if (token === Token.LineBreak) {
      return { comma, end, lineBreak: tokenEnd };
    } else {
      return { comma, end };
    }
  }
}

/** Edits that add `"key": value` as the last member of `obj`. */
function insertProperty(doc: Doc, obj: Node, key: string, value: unknown): Edit[] {
  const { body } = doc;
  const props = obj.children ?? [];
  const inline = isInline(doc, obj);
  const space = doc.colon.endsWith(" ") ? " " : "";
  const open = obj.offset + 1;
  const close = obj.offset + obj.length - 1;
  if (props.length === 0) {
    if (inline) return [{ offset: open, length: close - open, content: `${space}${propertyText(doc, key, value, "", true)}${space}` }];
    const objIndent = lineIndent(body, obj.offset);
    const childIndent = objIndent + doc.indent;
    const text = propertyText(doc, key, value, childIndent, false);
    if (body.slice(open, close).trim() === "") {
      return [{ offset: open, length: close - open, content: `${doc.eol}${childIndent}${text}${doc.eol}${objIndent}` }];
    }
    // Only comments inside: keep them after the new member.
    return [{ offset: open, length: 0, content: `${doc.eol}${childIndent}${text}` }];
  }
  const last = props[props.length - 1]!;
  const lastEnd = last.offset + last.length;
  const tail = scanLineTail(body, lastEnd, inline);
  let prefix: string;
  let text: string;
  if (inline) {
    prefix = space;
    text = propertyText(doc, key, value, "", true);
  } else {
    const aligned = [...props].reverse().find((p) => startsLine(body, p.offset));
    const childIndent = aligned ? lineIndent(body, aligned.offset) : lineIndent(body, obj.offset) + doc.indent;
    prefix = doc.eol + childIndent;
    text = propertyText(doc, key, value, childIndent, false);
  }
  // A trailing comma stays a trailing comma, now after the new member.
  if (tail.comma) return [{ offset: tail.end, length: 0, content: `${prefix}${text},` }];
  if (tail.end === lastEnd) return [{ offset: lastEnd, length: 0, content: `,${prefix}${text}` }];
  // The last member's line ends in a comment: the comma goes before it, the new member after it.
  return [
    { offset: lastEnd, length: 0, content: "," },
    { offset: tail.end, length: 0, content: `${prefix}${text}` },
  ];
}

/** Edits that replace the value of `prop` (at `propPath`) with `value`. */
function replaceValue(doc: Doc, obj: Node, prop: Node, propPath: JSONPath, value: unknown): Edit[] {
  const valueNode = prop.children![1]!;
  // modify finds the value's range; only the text that goes there is ours, so nothing else is reformatted.
  const [edit] = modify(doc.body, propPath, value, {});
  if (!edit || edit.offset !== valueNode.offset || edit.length !== valueNode.length) {
    throw new Error(`internal error: cannot locate ${JSON.stringify(propPath)} in the config`);
  }
  const content = formatValue(doc, value, lineIndent(doc.body, valueNode.offset), isInline(doc, obj));
  return [{ offset: valueNode.offset, length: valueNode.length, content }];
}

/** Edits that remove `prop` from `obj`: its whole line(s) where it has them to itself; an only member leaves `{}`. */
function removeProperty(doc: Doc, obj: Node, prop: Node, propPath: JSONPath): Edit[] {
  const { body } = doc;
  const props = obj.children!;
  const index = props.indexOf(prop);
  const open = obj.offset + 1;
  const close = obj.offset + obj.length - 1;
  const propEnd = prop.offset + prop.length;
  if (props.length === 1) {
    const after = body.slice(propEnd, close).trim();
    if (body.slice(open, prop.offset).trim() === "" && (after === "" || after === ",")) {
      return [{ offset: open, length: close - open, content: "" }];
    }
  }
  const tail = scanLineTail(body, propEnd, false);
  // Only whitespace and block comments (`/* about it */ "name": …`) before it on its line: the line is all its own.
  const ownsLine = /^[ \t]*(?:\/\*(?:(?!\*\/)[^\r\n])*\*\/[ \t]*)*$/.test(body.slice(lineStart(body, prop.offset), prop.offset));
  if (ownsLine && tail.lineBreak !== undefined) {
    const start = lineStart(body, prop.offset);
    const edits: Edit[] = [{ offset: start, length: tail.lineBreak - start, content: "" }];
    if (index === props.length - 1 && index > 0 && !tail.comma) {
      // The member before becomes the last one: drop the comma that separated it from this one.
      const previous = props[index - 1]!;
      const scanner = createScanner(body, true);
      scanner.setPosition(previous.offset + previous.length);
      if ((scanner.scan() as number) === Token.Comma && scanner.getTokenOffset() < start) {
        edits.push({ offset: scanner.getTokenOffset(), length: 1, content: "" });
      }
    }
    return edits;
  }
  // Not on lines of its own (e.g. a one-line object): jsonc-parser's removal, which takes the separating comma.
  return modify(body, propPath, undefined, {});
}

/** Applies `edits` and checks the result still parses, so a bug here can never write a broken file. */
function finish(doc: Doc, edits: Edit[]): string {
  const text = doc.bom + applyEdits(doc.body, edits);
  const check = parseConfigText(text);
  if (check.error !== undefined || !isObject(check.value)) throw new Error(`internal error: the edited config does not parse (${check.error})`);
  return text;
}

/** The map objects of the file, in `SERVER_MAP_KEYS` order (the order config loading gives them priority in). */
function serverMaps(doc: Doc): Array<{ key: string; map: Node }> {
  const maps: Array<{ key: string; map: Node }> = [];
  for (const key of SERVER_MAP_KEYS) {
    const map = property(doc.root, key)?.children?.[1];
    if (map?.type === "object") maps.push({ key, map });
  }
  return maps;
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
    if (property(doc.root, key)) throw new ConfigWriteError("not-object", `\`${key}\` in the config must be an object`);
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
  if (found) return finish(doc, replaceValue(doc, found.map, found.prop, [found.key, name], entry));
  const target = targetMap(doc);
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
  if (entry?.type !== "object") throw new ConfigWriteError("not-object", `server "${name}" in the config is not an object`);
  const existing = property(entry, field);
  if (existing) return finish(doc, replaceValue(doc, entry, existing, [found.key, name, field], value));
  return finish(doc, insertProperty(doc, entry, field, value));
}

/** The server names the file defines, in file order (a name under two map keys once). Empty text has none. */
export function serverNames(text: string): string[] {
  if (isBlank(text)) return [];
  const doc = load(text);
  const value = parseConfigText(doc.bom + doc.body).value;
  return extractServerEntries(value, { scope: "project", path: "" }).entries.map((e) => e.name);
}

/** Per-path queues, so that two updates of one file in this process never interleave their read-change-write. */
const queues = new Map<string, Promise<unknown>>();

/**
 * Reads `file` (missing: `undefined`), applies `change` and replaces the file atomically; returns the new text.
 * A file that does not parse is left untouched (`ConfigWriteError("unparsable")`); nothing is written when the text
 * does not change. An existing file keeps its mode; a new one gets 0600, and its directory is created.
 */
export function updateConfigFile(file: string, change: (text: string | undefined) => string): Promise<string> {
  const key = path.resolve(file);
  const previous = queues.get(key) ?? Promise.resolve();
  const run = previous.then(() => update(key, change));
  const settled = run.then(
    () => {},
    () => {},
  );
  queues.set(key, settled);
  void settled.then(() => {
    if (queues.get(key) === settled) queues.delete(key);
  });
  return run;
}

function ioError(action: string, file: string, error: unknown): ConfigWriteError {
  const code = (error as NodeJS.ErrnoException).code;
  const reason = code === "EACCES" || code === "EPERM" ? "permission denied" : code === "EISDIR" ? "is a directory" : errorMessage(error);
  return new ConfigWriteError("io", `cannot ${action} ${file}: ${reason}`);
}

async function update(file: string, change: (text: string | undefined) => string): Promise<string> {
  // Write through a symlink to the file it points at, rather than replacing the link with a plain file.
  let target = file;
  try {
    target = await realpath(file);
  } catch {
    // Missing (or a dangling link): written at the path as given.
  }
  let text: string | undefined;
  let mode = 0o600;
  try {
    text = await readFile(target, "utf8");
    mode = (await stat(target)).mode & 0o7777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw ioError("read", file, error);
    text = undefined;
  }
  if (text !== undefined) {
    const parsed = parseConfigText(text);
    if (parsed.error !== undefined) throw new ConfigWriteError("unparsable", `${file} is ${parsed.error}; fix it by hand first`);
  }
  const next = change(text);
  if (next === text) return next;
  const dir = path.dirname(target);
  const temp = path.join(dir, `.${path.basename(target)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(temp, next, { mode });
    // writeFile's mode is masked by the umask; the file must end up with exactly the old (or the private) mode.
    await chmod(temp, mode);
    await rename(temp, target);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw ioError("write", file, error);
  }
  return next;
}
