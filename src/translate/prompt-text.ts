/**
 * MCP prompts as pi slash commands, the pure parts: the command's name (`mcp:<server>:<prompt>`), its description with
 * argument hints, reading the argument line the user typed, what to complete at its end, and the prompt's messages as
 * the content of one user message. Pure.
 *
 * Arguments are named or positional, as the user likes: `city=Paris "state=Île de France"` or `Paris "Île de France"`
 * (positional ones fill the prompt's arguments in the order it declares them); quotes keep spaces in a value.
 */
import type { GetPromptResult, Prompt, PromptArgument } from "@modelcontextprotocol/client";
import { shown, SHOWN } from "../common/terminal-text.ts";
import { formatBytes } from "../common/text.ts";
import { base64Size, MODEL_IMAGES_MAX_BASE64, normalizeToolResult, OVER_TOTAL, type PiContent } from "./output.ts";

/** A name pi can take as one command word: no spaces, no control characters, nothing a shell-like reader trips on. */
function commandPart(name: string): string {
  return name.replace(/[^A-Za-z0-9_.-]/g, "_") || "_";
}

/** `mcp:<server>:<prompt>`, each part made safe; the caller makes it unique. */
export function promptCommandName(server: string, prompt: string): string {
  return `mcp:${commandPart(server)}:${commandPart(prompt)}`;
}

/** `name=` as it is typed: quoted where the name has a space or a quote, so that the value typed after it joins it. */
export const argumentWord = (name: string) => (/[\s"'\\]/.test(name) ? JSON.stringify(`${name}=`) : `${name}=`);

/** `city=<Name of the city> [state=<…>]`: required arguments bare, optional ones in brackets. Empty without arguments. */
export function argumentHint(args: readonly PromptArgument[] | undefined): string {
  return (args ?? [])
    .map((arg) => {
      const about = arg.description ? `<${shown(arg.description, SHOWN.line, "line")}>` : "<value>";
      const word = `${argumentWord(shown(arg.name, SHOWN.line, "line"))}${about}`;
      return arg.required ? word : `[${word}]`;
    })
    .join(" ");
}

/** The command's description as pi lists it: the prompt's title or description, its arguments, its server. */
export function promptCommandDescription(server: string, prompt: Prompt): string {
  const about = shown(prompt.description || prompt.title || prompt.name, SHOWN.line, "line");
  const hint = argumentHint(prompt.arguments);
  return `${about}${hint ? ` — ${hint}` : ""} (MCP server '${shown(server, SHOWN.line, "line")}')`;
}

/** Splits an argument line into words; quotes keep spaces, a backslash escapes a quote, a space or a backslash only. */
function splitWords(line: string): { words: string[]; midWord: boolean } {
  const words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    if (char === "\\" && /["'\\\s]/.test(line[i + 1] ?? "")) word = (word ?? "") + line[++i];
    else if (quote) {
      if (char === quote) quote = undefined;
      else word = (word ?? "") + char;
    } else if (char === '"' || char === "'") {
      quote = char;
      word ??= "";
    } else if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else word = (word ?? "") + char;
  }
  if (word !== undefined) words.push(word);
  return { words, midWord: word !== undefined };
}

/** The name `word` gives a value to: the longest declared name it starts with, then `=` (a name may hold `=`). */
const namedIn = (word: string, args: readonly PromptArgument[]) =>
  args
    .map((arg) => arg.name)
    .filter((n) => n && word.startsWith(`${n}=`))
    .sort((a, b) => b.length - a.length)[0];

export type ParsedArguments = { ok: true; values: Record<string, string> } | { ok: false; error: string };

/** Reads `line` against the prompt's declared arguments: `name=value` words by name, the rest in declared order. */
export function parsePromptArguments(line: string, args: readonly PromptArgument[] | undefined): ParsedArguments {
  const declared = args ?? [];
  // A Map: an argument named `__proto__` is one like any other, not the object's prototype.
  const values = new Map<string, string>();
  const positional: string[] = [];
  for (const word of splitWords(line).words) {
    const name = namedIn(word, declared);
    if (name !== undefined) values.set(name, word.slice(name.length + 1));
    else positional.push(word);
  }
  for (const word of positional) {
    const free = declared.find((arg) => !values.has(arg.name));
    if (!free) {
      if (declared.length === 0) return { ok: false, error: "this prompt takes no arguments" };
      const all = declared.map((a) => a.name).join(", ");
      return { ok: false, error: `too many arguments: '${word}' has no argument left to fill (arguments: ${all})` };
    }
    values.set(free.name, word);
  }
  return { ok: true, values: Object.fromEntries(values) };
}

/** The required arguments `values` lacks (an empty value, or spaces only, counts as missing). */
export function missingArguments(
  args: readonly PromptArgument[] | undefined,
  values: Record<string, string>,
): PromptArgument[] {
  return (args ?? []).filter((arg) => arg.required && !(Object.hasOwn(values, arg.name) && values[arg.name]!.trim()));
}

/** What the end of an argument line asks to complete: an argument's name, or the value of a named one. */
export type CompletionTarget =
  | { kind: "name"; before: string; prefix: string; candidates: PromptArgument[] }
  | { kind: "value"; before: string; name: string; prefix: string; given: Record<string, string> };

/** What to complete at the end of `line` (what pi hands a command's argument completion), if anything. */
export function completionTarget(
  line: string,
  args: readonly PromptArgument[] | undefined,
): CompletionTarget | undefined {
  const declared = args ?? [];
  if (declared.length === 0) return undefined;
  // The word being typed runs from the last space not quoted or escaped; completing inside quotes is left alone.
  const start = line.search(/\S*$/);
  const before = line.slice(0, start);
  const word = line.slice(start);
  if (/["'\\]/.test(word) || splitWords(before).midWord) return undefined;
  const parsed = parsePromptArguments(before, declared);
  const given = parsed.ok ? parsed.values : {};
  const name = namedIn(word, declared);
  if (name !== undefined)
    return { kind: "value", before: `${before}${name}=`, name, prefix: word.slice(name.length + 1), given };
  const candidates = declared.filter((arg) => !Object.hasOwn(given, arg.name) && arg.name.startsWith(word));
  return candidates.length ? { kind: "name", before, prefix: word, candidates } : undefined;
}

/**
 * The prompt's messages as the content of one user message: text, images as images, embedded resources as their text
 * (or image), resource links named with `server` to read them from (none: it offers no resources). With assistant
 * turns among them, each message says whose it is, so the model can tell the example answers from the request.
 */
export function promptMessageContent(result: GetPromptResult, server: string | undefined): PiContent[] {
  const labelled = result.messages.some((message) => message.role !== "user");
  const texts: string[] = [];
  const images: PiContent[] = [];
  let imageBytes = 0;
  for (const message of result.messages) {
    const normalized = normalizeToolResult({ content: [message.content] }, server);
    let text = normalized.text;
    for (const part of normalized.content) {
      if (part.type !== "image") continue;
      // One message's images are bounded, and so are all of them: the provider takes one request's within a bound.
      if (imageBytes + part.data.length <= MODEL_IMAGES_MAX_BASE64) {
        images.push(part);
        imageBytes += part.data.length;
      } else
        text += `${text && "\n"}[image: ${part.mimeType}, ${formatBytes(base64Size(part.data))}, not shown${OVER_TOTAL}]`;
    }
    if (text) texts.push(labelled ? `[${message.role}]\n${text}` : text);
  }
  const text = texts.join("\n\n");
  return [
    ...(text || images.length === 0 ? [{ type: "text" as const, text: text || "(the prompt has no messages)" }] : []),
    ...images,
  ];
}
