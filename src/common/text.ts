/**
 * Wording shared by every message the bridge writes, and the short forms it writes values in (sizes, hashes).
 */
import { createHash } from "node:crypto";
import path from "node:path";
import { shown, visible } from "./terminal-text.ts";

/** `1 tool`, `3 tools`; `word` is the singular, `plural` its irregular plural if it has one. */
export function plural(count: number, word: string, pluralWord = `${word}s`): string {
  return `${count} ${count === 1 ? word : pluralWord}`;
}

/** A duration in ms as seconds for a message: `2 s`, `0.5 s`. */
export function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** A duration measured (not configured), to a tenth of a second: `20 s`, `0.4 s`. */
export function measured(ms: number): string {
  return seconds(Math.max(100, Math.round(ms / 100) * 100));
}

/** How many characters of a value a message quotes at most. */
const QUOTE_LIMIT = 200;

/**
 * A value from a config file or a user, quoted for a message: as JSON, with what JSON leaves raw (C1 controls, bidi
 * marks) escaped too, cut to about `max` characters with an ellipsis and the count of what was cut, so a huge bad value
 * can neither flood a terminal or a log nor reorder the line that quotes it.
 */
export function quoteValue(value: unknown, max = QUOTE_LIMIT): string {
  // Cut a long string before stringifying it: JSON.stringify of a 10 MB string would build another 10 MB one.
  if (typeof value === "string") {
    const quoted = visible(JSON.stringify(value.slice(0, max)));
    return value.length <= max ? quoted : `${quoted.slice(0, -1)}…" (${value.length - max} more characters)`;
  }
  return shown(safeJson(value), max, "visible");
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** How many single-character edits turn `a` into `b` (Levenshtein distance). */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}

/** The candidate `word` was most likely meant to be (case aside, at most a third of its letters off), if any. */
export function closestMatch(word: string, candidates: readonly string[]): string | undefined {
  // Long words cost length² to compare; no real key is anywhere near this long.
  if (word.length > 64) return undefined;
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(word.length / 3)) + 1;
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** `512 B`, `2.0 KB`, `3.0 MB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** Eight hex digits of the text's SHA-256: stable across runs, short enough for a name or a file name. */
export function shortHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 8);
}

/** One word of a command line, quoted when it would not read back as one word. */
export function shellWord(word: string): string {
  return word !== "" && /^[\w@%+=:,./${}-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The program a command runs, as a name: `/usr/bin/npx` and `C:\\node\\npx.cmd` are both `npx`. */
export function programName(command: string): string {
  // Both separators, so that a Windows path is read anywhere.
  return path.win32.basename(command.trim()).replace(/\.(cmd|exe)$/i, "");
}

/** A server's message without its leading `MCP server 'x' at URL:`, where what says it names the server already. */
export function withoutServerName(message: string): string {
  return message.replace(/^MCP server '[^']*'( at \S+)?:? ?/, "");
}

/**
 * A text up to its first full stop, question or exclamation mark, or line break, without it: what a tool does, before
 * how and when. Chinese and Japanese marks (。！？) end a sentence with no space after them.
 */
export function firstSentence(text: string): string {
  const end = text.search(/[.!?](?=\s|$)|[。！？]|\n/);
  return end < 0 ? text : text.slice(0, end);
}

/**
 * `text` cut to at most `max` characters, before the word (or JSON string) the cut would split if a space, quote or
 * comma is near: text is redacted after its cut, and a secret the cut split would show its beginning.
 */
export function cutBetweenWords(text: string, max: number): string {
  if (text.length <= max) return text;
  const from = Math.max(0, max - 256);
  const space = text.slice(from, max + 1).search(/[\s"',][^\s"',]*$/);
  return text.slice(0, space < 0 ? max : from + space);
}

/** A MIME type without its parameters and case (`Image/PNG; charset=binary` is `image/png`). */
export function mediaType(mime: string): string {
  return mime.split(";")[0]!.trim().toLowerCase();
}
