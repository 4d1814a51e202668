/**
 * Format-keeping edits of a parsed config file: add a member to an object or an element to an array, replace a value,
 * remove a member. Each
 * changes only the bytes it has to: the other members, their key order, comments, the indentation style and the line
 * endings stay as written. A new value is printed in the file's own style, or on one line inside an object that is
 * written on one line. Pure.
 */
import { applyEdits, createScanner, modify, type Edit, type JSONPath, type Node } from "jsonc-parser";
import { isObject } from "../../common/values.ts";
import { parseConfigText, Token } from "../parse.ts";
import { type Doc, lineIndent, lineStart, startsLine } from "./jsonc-doc.ts";

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

/** `obj`'s member `key`; the last where the key is written twice, as the loader reads it. */
export function property(obj: Node, key: string): Node | undefined {
  return obj.children?.findLast((p) => p.children?.[0]?.value === key);
}

/** Reads the trivia after `offset` on the same line: an optional comma, then comments (unless `inline`). */
function scanLineTail(
  body: string,
  offset: number,
  inline: boolean,
): { comma: boolean; end: number; lineBreak?: number } {
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
    } else if (token === Token.LineBreak) return { comma, end, lineBreak: tokenEnd };
    else return { comma, end };
  }
}

/** Edits that add `"key": value` as the last member of `obj`. */
export function insertProperty(doc: Doc, obj: Node, key: string, value: unknown): Edit[] {
  const { body } = doc;
  const props = obj.children ?? [];
  const inline = isInline(doc, obj);
  const space = doc.colon.endsWith(" ") ? " " : "";
  const open = obj.offset + 1;
  const close = obj.offset + obj.length - 1;
  if (props.length === 0) {
    if (inline)
      return [
        { offset: open, length: close - open, content: `${space}${propertyText(doc, key, value, "", true)}${space}` },
      ];
    const objIndent = lineIndent(body, obj.offset);
    const childIndent = objIndent + doc.indent;
    const text = propertyText(doc, key, value, childIndent, false);
    if (body.slice(open, close).trim() === "")
      return [{ offset: open, length: close - open, content: `${doc.eol}${childIndent}${text}${doc.eol}${objIndent}` }];
    // Only comments inside: keep them after the new member.
    return [{ offset: open, length: 0, content: `${doc.eol}${childIndent}${text}` }];
  }
  const last = props[props.length - 1]!;
  const lastEnd = last.offset + last.length;
  const tail = scanLineTail(body, lastEnd, inline);
  if (inline) return afterLast(lastEnd, tail, space + propertyText(doc, key, value, "", true));
  const aligned = [...props].reverse().find((p) => startsLine(body, p.offset));
  const childIndent = aligned ? lineIndent(body, aligned.offset) : lineIndent(body, obj.offset) + doc.indent;
  return afterLast(lastEnd, tail, doc.eol + childIndent + propertyText(doc, key, value, childIndent, false));
}

/** Edits that put `text` after the last member or element, which ends at `lastEnd` and is followed by `tail`. */
function afterLast(lastEnd: number, tail: { comma: boolean; end: number }, text: string): Edit[] {
  // A trailing comma stays a trailing comma, now after the new member.
  if (tail.comma) return [{ offset: tail.end, length: 0, content: `${text},` }];
  if (tail.end === lastEnd) return [{ offset: lastEnd, length: 0, content: `,${text}` }];
  // The last member's line ends in a comment: the comma goes before it, the new member after it.
  return [
    { offset: lastEnd, length: 0, content: "," },
    { offset: tail.end, length: 0, content: text },
  ];
}

/**
 * Edits that add `value` as the last element of `array`: on a line of its own where the last element has one (with
 * its indentation), else after it on the same line; a comment after the last element stays with it.
 */
export function appendElement(doc: Doc, array: Node, value: unknown): Edit[] {
  const { body } = doc;
  const items = array.children ?? [];
  const json = JSON.stringify(value);
  if (items.length === 0) {
    const open = array.offset + 1;
    const close = array.offset + array.length - 1;
    // Only whitespace inside: `[]` becomes `["x"]`; with comments inside, they stay after the new element.
    if (body.slice(open, close).trim() === "") return [{ offset: open, length: close - open, content: json }];
    return [{ offset: open, length: 0, content: json }];
  }
  const last = items[items.length - 1]!;
  const lastEnd = last.offset + last.length;
  const ownLine = startsLine(body, last.offset) && hasLineBreak(body.slice(array.offset, last.offset));
  const tail = scanLineTail(body, lastEnd, !ownLine);
  return afterLast(lastEnd, tail, ownLine ? `${doc.eol}${lineIndent(body, last.offset)}${json}` : ` ${json}`);
}

/** Edits that replace the value of `prop` with `value`; nothing else is reformatted. */
export function replaceValue(doc: Doc, obj: Node, prop: Node, value: unknown): Edit[] {
  const valueNode = prop.children![1]!;
  const content = formatValue(doc, value, lineIndent(doc.body, valueNode.offset), isInline(doc, obj));
  return [{ offset: valueNode.offset, length: valueNode.length, content }];
}

/** Edits that remove `prop` from `obj`: its whole line(s) where it has them to itself; an only member leaves `{}`. */
export function removeProperty(doc: Doc, obj: Node, prop: Node, propPath: JSONPath): Edit[] {
  const { body } = doc;
  const props = obj.children!;
  const index = props.indexOf(prop);
  const open = obj.offset + 1;
  const close = obj.offset + obj.length - 1;
  const propEnd = prop.offset + prop.length;
  if (props.length === 1) {
    const after = body.slice(propEnd, close).trim();
    if (body.slice(open, prop.offset).trim() === "" && (after === "" || after === ","))
      return [{ offset: open, length: close - open, content: "" }];
  }
  const tail = scanLineTail(body, propEnd, false);
  // Only whitespace and block comments (`/* about it */ "name": …`) before it on its line: the line is all its own.
  const ownsLine = /^[ \t]*(?:\/\*(?:(?!\*\/)[^\r\n])*\*\/[ \t]*)*$/.test(
    body.slice(lineStart(body, prop.offset), prop.offset),
  );
  if (ownsLine && tail.lineBreak !== undefined) {
    const start = lineStart(body, prop.offset);
    const edits: Edit[] = [{ offset: start, length: tail.lineBreak - start, content: "" }];
    if (index === props.length - 1 && index > 0 && !tail.comma) {
      // The member before becomes the last one: drop the comma that separated it from this one.
      const previous = props[index - 1]!;
      const scanner = createScanner(body, true);
      scanner.setPosition(previous.offset + previous.length);
      if ((scanner.scan() as number) === Token.Comma && scanner.getTokenOffset() < start)
        edits.push({ offset: scanner.getTokenOffset(), length: 1, content: "" });
    }
    return edits;
  }
  // Not on lines of its own (e.g. a one-line object): jsonc-parser's removal, which takes the separating comma.
  return modify(body, propPath, undefined, {});
}

/** Applies `edits` and checks the result still parses, so a bug here can never write a broken file. */
export function finish(doc: Doc, edits: Edit[]): string {
  const text = doc.bom + applyEdits(doc.body, edits);
  const check = parseConfigText(text);
  if (check.error !== undefined || !isObject(check.value))
    throw new Error(`internal error: the edited config does not parse (${check.error})`);
  return text;
}
