/**
 * Text that came from a server, made harmless before it reaches the terminal, a notice, a log line or the model. A
 * server can write anything to stderr or into a tool's description: an escape sequence that clears the screen, moves
 * the cursor over what pi printed, retitles the window or writes the clipboard (OSC 52). Whole sequences are removed
 * (7-bit `ESC …` and their 8-bit C1 forms), then every remaining control character; newlines (and tabs, in text that
 * keeps its lines) stay. Pure.
 */

// The sequence families, each removed whole: CSI `ESC [ params intermediates final` (8-bit: 0x9B); OSC `ESC ] … BEL
// or ST` (8-bit: 0x9D … 0x9C), whose unterminated form runs to the end like a terminal would take it; DCS, SOS, PM and
// APC strings `ESC P|X|^|_ … ST` (8-bit: 0x90, 0x98, 0x9E, 0x9F); and two-character `ESC x` sequences.
const ESCAPE_SEQUENCES = new RegExp(
  [
    "(?:\\x1b\\[|\\x9b)[0-?]*[ -/]*[@-~]?",
    "(?:\\x1b\\]|\\x9d)[^\\x07\\x1b\\x9c]*(?:\\x07|\\x1b\\\\|\\x9c)?",
    "(?:\\x1b[PX^_]|[\\x90\\x98\\x9e\\x9f])[^\\x1b\\x9c]*(?:\\x1b\\\\|\\x9c)?",
    "\\x1b[ -/]*[0-~]?",
  ].join("|"),
  "g",
);

/**
 * C0 controls but tab and newline, DEL, and the C1 range (0x80-0x9F) — what is left once sequences are gone — and the
 * explicit bidi embeddings, overrides and isolates (U+202A-202E, U+2066-2069), with which text can be shown in an order
 * other than the one it is read in ("Trojan Source"). Natural right-to-left text needs none of them.
 */
const CONTROL_CHARS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Whether `text` has anything `stripControls` removes. Every escape sequence starts with ESC or a C1 character, both
 * in CONTROL_CHARS, so text without one of those is left as it is: most text has none, and one test is cheaper than
 * two replacements (this runs on every string of every tool result and log line).
 */
const ANY_CONTROL = new RegExp(CONTROL_CHARS.source);

/** `text` without terminal escape sequences or control characters; newlines and tabs stay. */
export function stripControls(text: string): string {
  if (!ANY_CONTROL.test(text)) return text;
  return text.replace(ESCAPE_SEQUENCES, "").replace(CONTROL_CHARS, "");
}

/** For a name, a title or a one-line label: `stripControls`, with line breaks and tabs as single spaces, trimmed. */
export function stripControlsLine(text: string): string {
  // From a run of white space's start only: tried from each of a long run's spaces, each try ran to its end.
  return stripControls(text)
    .replace(/(?<!\s)\s*[\n\t]+\s*/g, " ")
    .trim();
}

/**
 * For text the user must judge before saying yes (a command line to trust, the arguments of a call to approve):
 * control characters and Unicode format characters (bidi overrides, zero-width) written as `\uXXXX` escapes, not
 * removed, so the text can neither rewrite the line that shows it nor hide part of itself behind a reordering.
 */
export function visible(text: string): string {
  return text.replace(
    /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/**
 * How much of one server's or config's text each place shows at most, in characters, ellipsis and count included: a
 * name (MCP allows tool names of 128 characters: a valid one is never cut), a one-line field, the body of a dialog or
 * one error, a tool's description, a notice, and what a `/mcp` command lists.
 */
export const SHOWN = { name: 128, line: 300, body: 4000, description: 10_000, notice: 16_000, view: 200_000 } as const;

/**
 * How a text is made harmless: `text` keeps its lines, `line` folds them, `prompt` folds them and runs of spaces too (for
 * the model), and `visible` writes controls and format characters as `\uXXXX` (for text the user must judge).
 */
const CLEANERS = {
  text: stripControls,
  line: stripControlsLine,
  prompt: (text: string) => stripControlsLine(text).replace(/\s+/g, " ").trim(),
  visible,
};

/**
 * Text a server or a config supplied, as it may reach the user or the model: made harmless in `form`, and at most `max`
 * characters long. What is cut ends in `…` and says how many characters were left out (the model gets the `…` only).
 * Only about `max` characters of the input are ever worked on, so a 10 MB value costs what a short one does.
 */
export function shown(text: string, max: number, form: keyof typeof CLEANERS = "text"): string {
  const clean = CLEANERS[form];
  let end = Math.min(text.length, max);
  let kept = "";
  let tail = "";
  // Each round cuts the input by what the last one was over; `visible` can grow text sixfold, so a few rounds at most.
  for (let round = 0; round < 8; round++) {
    if (/[\ud800-\udbff]/.test(text[end - 1] ?? "")) end--;
    kept = clean(text.slice(0, end));
    tail = end < text.length ? (form === "prompt" ? "…" : `… (${text.length - end} more characters)`) : "";
    const over = kept.length + tail.length - max;
    if (over <= 0) return `${kept}${tail}`;
    end = Math.max(0, end - over);
  }
  return `${kept.slice(0, Math.max(0, max - tail.length))}${tail}`;
}
