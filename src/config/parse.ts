/**
 * Reading a config file's text: JSON with comments, and the server map under any of the keys other clients use.
 * Pure: callers read the files and pass their text in.
 */
import { parse as parseJsonc, printParseErrorCode, type ParseError } from "jsonc-parser";
import { isObject, type JsonObject } from "../common/values.ts";
import type { ConfigProblem, ConfigSource } from "./types.ts";

/** The top-level keys other clients use for their server map. */
export const SERVER_MAP_KEYS = ["mcpServers", "servers", "mcp"] as const;

/** One server of a file, as written: not validated yet. */
export interface ServerEntryText {
  name: string;
  entry: unknown;
}

/** Fields that only toggle a lower layer's server on or off. */
const TOGGLE_FIELDS = new Set(["enabled", "disabled"]);

const BOM = "\ufeff";

/** A text's UTF-8 byte order mark (or `""`), and the text after it. */
export function splitBom(text: string): { bom: string; body: string } {
  return text.startsWith(BOM) ? { bom: BOM, body: text.slice(1) } : { bom: "", body: text };
}

/** Parses a config file's text: JSON with comments, trailing commas and a UTF-8 BOM tolerated. */
export function parseConfigText(text: string): { value?: unknown; error?: string } {
  const { body } = splitBom(text);
  if (body.trim() === "") return { value: {} };
  const errors: ParseError[] = [];
  const value = parseJsonc(body, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const first = errors[0]!;
    const { line, column } = lineAndColumn(body, first.offset);
    return { error: `not valid JSON: ${printParseErrorCode(first.error)} at line ${line}, column ${column}` };
  }
  return { value };
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === "\n") {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** Finds the server map(s) in a parsed file, in any of the accepted shapes. */
export function extractServerEntries(doc: unknown, source: ConfigSource): { entries: ServerEntryText[]; problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  const entries: ServerEntryText[] = [];
  if (!isObject(doc)) {
    problems.push({ level: "error", source, message: "the file must hold a JSON object with an `mcpServers` (or `servers`, `mcp`) object" });
    return { entries, problems };
  }
  const seen = new Map<string, string>();
  for (const key of SERVER_MAP_KEYS) {
    if (!(key in doc)) continue;
    const map = doc[key];
    if (!isObject(map)) {
      problems.push({ level: "error", source, message: `\`${key}\` must be an object mapping server names to their settings` });
      continue;
    }
    for (const [name, entry] of Object.entries(map)) {
      const earlier = seen.get(name);
      if (earlier !== undefined) {
        problems.push({ level: "warning", source, server: name, message: `defined under both \`${earlier}\` and \`${key}\`; the \`${earlier}\` entry is used` });
        continue;
      }
      seen.set(name, key);
      entries.push({ name, entry });
    }
  }
  return { entries, problems };
}

/** True for an entry that only switches a server defined in a lower layer on or off. */
export function isToggleOnly(entry: unknown): entry is JsonObject {
  if (!isObject(entry)) return false;
  const keys = Object.keys(entry);
  return keys.length > 0 && keys.every((k) => TOGGLE_FIELDS.has(k));
}
