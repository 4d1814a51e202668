/**
 * A config file's text parsed for editing: its JSONC tree, and the style new text must be written in to look like
 * the rest of the file (line ending, one level of indentation, the key/value separator). Pure.
 */
import { parseTree, stripComments, type Node } from "jsonc-parser";
import type { JsonObject } from "../../common/values.ts";
import { parseConfigText, splitBom } from "../parse.ts";
import { ConfigWriteError } from "./error.ts";

const DEFAULT_INDENT = "  ";

/** A parsed file: the text without its BOM, its tree, and the style new text is written in. */
export interface Doc {
  bom: string;
  body: string;
  root: Node;
  eol: string;
  /** One level of indentation: a tab or N spaces. */
  indent: string;
  /** What goes between a key and its value, as the file writes it (`": "` unless it says otherwise). */
  colon: string;
}

/** True for missing text, or text holding nothing but white space and comments (and a BOM). */
export function isBlank(text: string | undefined): boolean {
  return text === undefined || stripComments(splitBom(text).body).trim() === "";
}

/** The text of a file holding only `value`, in the default style, after the comments the file has. */
export function newFileText(text: string | undefined, value: JsonObject): string {
  const { bom, body } = splitBom(text ?? "");
  const eol = detectEol(body);
  const comments = body.trim() === "" ? "" : body.trimEnd() + eol;
  return bom + comments + JSON.stringify(value, null, DEFAULT_INDENT).split("\n").join(eol) + eol;
}

/** Parses `text`; throws for text that does not parse or whose top level is not an object. */
export function load(text: string): Doc {
  const parsed = parseConfigText(text);
  if (parsed.error !== undefined) throw new ConfigWriteError("unparsable", `the config is ${parsed.error}`);
  const { bom, body } = splitBom(text);
  const root = parseTree(body, [], { allowTrailingComma: true, disallowComments: false });
  if (!root || root.type !== "object")
    throw new ConfigWriteError("not-object", "the config must hold a JSON object at the top level");
  return { bom, body, root, eol: detectEol(body), indent: detectIndent(body, root), colon: detectColon(body, root) };
}

function detectEol(body: string): string {
  const i = body.indexOf("\n");
  return i > 0 && body[i - 1] === "\r" ? "\r\n" : "\n";
}

/** The offset the line holding `offset` starts at. */
export function lineStart(body: string, offset: number): number {
  let i = offset;
  while (i > 0 && body[i - 1] !== "\n" && body[i - 1] !== "\r") i--;
  return i;
}

/** The leading whitespace of the line `offset` is on. */
export function lineIndent(body: string, offset: number): string {
  const start = lineStart(body, offset);
  return /^[ \t]*/.exec(body.slice(start, offset))![0];
}

/** True when only whitespace comes before `offset` on its line. */
export function startsLine(body: string, offset: number): boolean {
  return /^[ \t]*$/.test(body.slice(lineStart(body, offset), offset));
}

/** The first property that starts a line, at any depth, tells the indentation unit: tabs, or its spaces / its depth. */
function detectIndent(body: string, root: Node): string {
  let found: string | undefined;
  const walk = (node: Node, depth: number): void => {
    for (const child of node.children ?? []) {
      if (found !== undefined) return;
      if (node.type === "object" || node.type === "array") {
        if (startsLine(body, child.offset)) {
          const ws = lineIndent(body, child.offset);
          if (/^\t+$/.test(ws)) found = "\t";
          else if (/^ +$/.test(ws) && ws.length % depth === 0) found = " ".repeat(ws.length / depth);
          if (found !== undefined) return;
        }
        walk(child, depth + 1);
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
