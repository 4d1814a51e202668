/**
 * Text as the tool search reads it, the same for a tool's texts and a request: words split the way tool names are
 * written (`_`, `-`, camelCase), common words dropped, each word or phrase of a synonym group as its group's token
 * (./search-synonyms.ts), the rest reduced to their stems (Porter's stemmer), so "listing files" meets `list_files`.
 * Pure.
 */
import { canonicalWords, GROUP_MARK, stem } from "./search-synonyms.ts";

/** Words too common in requests and descriptions to tell tools apart. */
const STOP_WORDS = new Set(
  (
    "a an and any are as at be by can could do does for from get has have how i if in into is it its me my of on or " +
    "please should some that the their them then there these this to tool tools use using want was we what when " +
    "which will with would you your who whom whose where they he she only against been being had having did doing " +
    "during each few further here more most nor once other same such than too under until while both through again " +
    "am were his her hers him himself herself itself themselves ourselves yourself myself ours yours theirs those " +
    "because much got gotten whatever whoever whichever " +
    // words of a request that say nothing of the tool it wants
    "about all also anything else every everything just let need now our own right see someone something so us very " +
    "why "
  ).split(" "),
);

/** Chinese, Japanese and Korean letters. */
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;

/**
 * Chinese and Japanese are written without spaces between words, and a Korean word carries its endings: a run of their
 * letters is read as its overlapping pairs, as search engines read them, so "查询北京的天气" meets "查询指定城市的天气"
 * by 查询 and 天气 ("weather" and "look up"), where the whole run would meet nothing.
 */
function cjkPairs(run: string): string {
  const letters = [...run];
  if (letters.length < 3) return ` ${run} `;
  const pairs = letters.slice(1).map((letter, i) => letters[i] + letter);
  return ` ${pairs.join(" ")} `;
}

/**
 * Splits text into lower-case words at `_`, `-`, spaces and punctuation; a word written in camelCase also gives its
 * parts (`getHTTPStatus` → gethttpstatus get http status), so both "GitHub" and "github" find it.
 */
function splitWords(text: string): string[] {
  const words: string[] = [];
  for (const chunk of text.replace(CJK_RUN, cjkPairs).split(/[^\p{L}\p{N}]+/u)) {
    if (chunk.length === 0) continue;
    words.push(chunk.toLowerCase());
    const parts = chunk
      .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, "$1 $2")
      .replace(/(\p{Lu}+)(\p{Lu}(?!s(?![\p{L}\p{N}]))\p{Ll})/gu, "$1 $2")
      .toLowerCase()
      .split(" ");
    if (parts.length > 1) words.push(...parts);
  }
  return words;
}

/** A text's words, each word or phrase of a synonym group as its group's token (./search-synonyms.ts). */
export function wordsWithSynonyms(text: string): string[] {
  return canonicalWords(splitWords(text));
}

/** A word as the index stores it, or null for a word that does not count. */
export function indexTerm(word: string): string | null {
  if (word.startsWith(GROUP_MARK)) return word;
  if (STOP_WORDS.has(word) || /^\p{L}$/u.test(word)) return null;
  return /^\p{L}+$/u.test(word) ? stem(word) : word;
}

/** A text's words as the index stores them, in order. */
export function termsOf(text: string): string[] {
  return wordsWithSynonyms(text).flatMap((word) => indexTerm(word) ?? []);
}
