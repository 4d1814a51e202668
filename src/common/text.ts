/**
 * Wording shared by every message the bridge writes.
 */

/** `1 tool`, `3 tools`; `word` is the singular, `plural` its irregular plural if it has one. */
export function plural(count: number, word: string, pluralWord = `${word}s`): string {
  return `${count} ${count === 1 ? word : pluralWord}`;
}

/** A duration in ms as seconds for a message: `2 s`, `0.5 s`. */
export function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
