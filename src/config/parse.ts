/**
 * Reading a config file's text: JSON with comments, and the server map under any of the keys other clients use.
 * Pure: callers read the files and pass their text in.
 */
import { createScanner, type Node, parseTree, printParseErrorCode, type ParseError, stripComments } from "jsonc-parser";
import { closestMatch, quoteValue } from "../common/text.ts";
import { isObject, type JsonObject } from "../common/values.ts";
import { APPROVAL_KEY } from "./approval-setting.ts";
import { SANDBOX_KEY } from "./sandbox-setting.ts";
import { AUTO_CODEMODE_KEY, EXPOSURE_KEY, THRESHOLD_KEY } from "./exposure-setting.ts";
import { TOOL_CATALOG_KEY } from "./tool-catalog-setting.ts";
import type { ConfigProblem, ConfigSource } from "./types.ts";
import { serverLabel } from "./validate/name.ts";

/** The top-level keys other clients use for their server map. */
export const SERVER_MAP_KEYS = ["mcpServers", "servers", "mcp"] as const;

/**
 * Every top-level key a config file may hold: the server maps, `approval`, `exposure`, `exposureThreshold`, `toolCatalog`, `sandbox`, pi 1.x's
 * `autoEnableCodemode`, and keys of files written for other clients that the bridge reads as they are (`$schema`, VS
 * Code's `inputs`). Any other key gets a warning.
 */
const KNOWN_TOP_LEVEL_KEYS: readonly string[] = [
  ...SERVER_MAP_KEYS,
  APPROVAL_KEY,
  EXPOSURE_KEY,
  THRESHOLD_KEY,
  TOOL_CATALOG_KEY,
  SANDBOX_KEY,
  AUTO_CODEMODE_KEY,
  "$schema",
  "inputs",
];

/**
 * How deep objects and arrays may nest. Real configs use five or six levels; the parser and every reader after it
 * recurse once per level, so a file nested thousands deep would overflow the stack.
 */
export const MAX_NESTING = 64;

/** One server of a file, as written: not validated yet. */
export interface ServerEntryText {
  name: string;
  entry: unknown;
}

/**
 * Fields an entry may set alone to adjust a lower layer's server without redefining it: on or off, and how its tools
 * reach the model (as pi 1.x lets a project do).
 */
const TOGGLE_FIELDS = new Set(["enabled", "disabled", "exposure", "toolExposure"]);

const BOM = "\ufeff";

/** jsonc-parser's `SyntaxKind` is a const enum, which cannot be imported under per-file transpilation. */
export const Token = {
  OpenBrace: 1,
  CloseBrace: 2,
  OpenBracket: 3,
  CloseBracket: 4,
  Comma: 5,
  LineComment: 12,
  BlockComment: 13,
  LineBreak: 14,
  Whitespace: 15,
  EOF: 17,
} as const;

/** A text's UTF-8 byte order mark (or `""`), and the text after it. */
export function splitBom(text: string): { bom: string; body: string } {
  return text.startsWith(BOM) ? { bom: BOM, body: text.slice(1) } : { bom: "", body: text };
}

/**
 * Parses a config file's text: JSON with comments, trailing commas and a UTF-8 BOM tolerated. Objects come back
 * without a prototype, so a key such as `__proto__` is an ordinary key the validators can see and refuse.
 */
export function parseConfigText(text: string): { value?: unknown; error?: string } {
  const { body } = splitBom(text);
  // Only comments: blank, unless a `/*` is never closed (what is added after it would be commented out).
  if (stripComments(body).trim() === "" && !unclosedComment(body)) return { value: Object.create(null) };
  const tooDeep = firstTooDeep(body);
  if (tooDeep !== undefined) {
    const { line, column } = lineAndColumn(body, tooDeep);
    return {
      error: `objects and arrays nest more than ${MAX_NESTING} levels deep (at line ${line}, column ${column})`,
    };
  }
  const errors: ParseError[] = [];
  const tree = parseTree(body, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0 || tree === undefined) {
    const first = errors[0];
    if (!first) return { error: "not valid JSON" };
    const { line, column } = lineAndColumn(body, first.offset);
    return { error: `not valid JSON: ${printParseErrorCode(first.error)} at line ${line}, column ${column}` };
  }
  return { value: valueOf(tree) };
}

/** True when a `/*` is never closed: jsonc-parser's `ScanError.UnexpectedEndOfComment` (1; a const enum, as `Token`'s). */
function unclosedComment(body: string): boolean {
  const scanner = createScanner(body, false);
  while ((scanner.scan() as number) !== Token.EOF) if ((scanner.getTokenError() as number) === 1) return true;
  return false;
}

/** The offset of the first bracket that opens one level too many, found by a flat scan (no recursion). */
function firstTooDeep(body: string): number | undefined {
  const scanner = createScanner(body, true);
  let depth = 0;
  for (let token: number = scanner.scan(); token !== Token.EOF; token = scanner.scan()) {
    if (token === Token.OpenBrace || token === Token.OpenBracket) {
      if (++depth > MAX_NESTING) return scanner.getTokenOffset();
    } else if (token === Token.CloseBrace || token === Token.CloseBracket) depth = Math.max(0, depth - 1);
  }
  return undefined;
}

/** A parsed node as a value; objects have no prototype. Recursion is bounded by {@link MAX_NESTING}. */
function valueOf(node: Node): unknown {
  if (node.type === "object") {
    const out: JsonObject = Object.create(null);
    for (const property of node.children ?? []) {
      const [key, value] = property.children ?? [];
      if (key && value) out[String(key.value)] = valueOf(value);
    }
    return out;
  }
  if (node.type === "array") return (node.children ?? []).map(valueOf);
  return node.value;
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  return { line: before.split("\n").length, column: offset - before.lastIndexOf("\n") };
}

/** Finds the server map(s) in a parsed file, in any of the accepted shapes. */
export function extractServerEntries(
  doc: unknown,
  source: ConfigSource,
): { entries: ServerEntryText[]; problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  const problem = (level: ConfigProblem["level"], message: string) => problems.push({ level, source, message });
  const entries: ServerEntryText[] = [];
  if (!isObject(doc)) {
    problem("error", "the file must hold a JSON object with an `mcpServers` (or `servers`, `mcp`) object");
    return { entries, problems };
  }
  for (const key of Object.keys(doc)) {
    if (KNOWN_TOP_LEVEL_KEYS.includes(key)) continue;
    const guess = closestMatch(key, KNOWN_TOP_LEVEL_KEYS);
    const hint = guess
      ? `did you mean \`${guess}\`?`
      : `the keys read here are ${KNOWN_TOP_LEVEL_KEYS.map((k) => `\`${k}\``).join(", ")}`;
    problem("warning", `unknown top-level key ${quoteValue(key, 60)} is ignored; ${hint}`);
  }
  const seen = new Map<string, string>();
  for (const key of SERVER_MAP_KEYS) {
    if (!(key in doc) || doc[key] === null) continue;
    const map = doc[key];
    if (!isObject(map)) {
      problem("error", `\`${key}\` must be an object mapping server names to their settings`);
      continue;
    }
    for (const [name, entry] of Object.entries(map)) {
      const earlier = seen.get(name);
      if (earlier !== undefined) {
        problems.push({
          level: "warning",
          source,
          server: serverLabel(name),
          message: `defined under both \`${earlier}\` and \`${key}\`; the \`${earlier}\` entry is used`,
        });
        continue;
      }
      seen.set(name, key);
      entries.push({ name, entry });
    }
  }
  return { entries, problems };
}

/** True for an entry that only adjusts a server defined in a lower layer (on or off, its exposure). */
export function isToggleOnly(entry: unknown): entry is JsonObject {
  if (!isObject(entry)) return false;
  const keys = Object.keys(entry);
  return keys.length > 0 && keys.every((k) => TOGGLE_FIELDS.has(k));
}
