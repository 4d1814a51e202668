import { stemmer } from "stemmer";

/**
 * Words a model uses for what tool descriptions say in other words ("folder" for "directory", "PR" for "pull
 * request"), as data. The tool search (./tool-search-index.ts) reads both a tool's text and a request through
 * `canonicalWords`, so each word of a group meets every other as one term, counted once. Only general words of
 * files, code, browsers and services. Pure.
 */

/** Each group: words that mean the same in a request for a tool. A group's words may be phrases ("pull request"). */
const SYNONYM_GROUPS: readonly (readonly string[])[] = [
  // verbs
  ["create", "new"],
  ["update", "modify", "change", "edit", "set", "switch", "up to date"],
  ["delete", "remove", "erase", "drop"],
  ["get", "fetch", "retrieve", "read"],
  ["search", "find", "lookup", "look up", "locate", "query"],
  ["execute", "run", "exec", "launch", "invoke"],
  ["terminate", "kill", "stop", "end"],
  ["list", "show", "enumerate"],
  ["move", "rename"],
  ["navigate", "go to", "visit", "browse"],
  ["select", "dropdown", "choose", "pick"],
  ["resolve", "resolved", "fix", "fixed"],
  ["fork", "copy", "clone", "duplicate"],
  ["count", "number", "how many"],
  // nouns
  ["directory", "folder", "dir"],
  ["mongodb", "mongo"],
  ["image", "picture", "photo", "png", "jpg", "jpeg", "media"],
  ["repository", "repo"],
  ["pull request", "pr"],
  ["issue", "bug", "ticket"],
  ["web", "internet"],
  ["page", "webpage", "website", "site", "tab"],
  ["url", "http", "https", "link", "address"],
  ["dialog", "popup", "modal"],
  ["request", "call"],
  ["log", "logged", "logging"],
  ["process", "program"],
  ["permission", "permitted", "allowed"],
  ["tree", "nested", "hierarchy", "recursive"],
  ["size", "big", "large"],
  ["window", "viewport"],
  ["document", "record", "row"],
  ["schema", "fields", "columns"],
  ["modified", "changed", "updated"],
  ["environment", "env"],
  ["message", "dm", "direct message"],
  ["instance", "vm", "virtual machine"],
  ["error", "exception", "crash"],
  ["screenshot", "screen capture"],
  ["javascript", "js"],
  ["command", "shell"],
];

/** Words Porter's stemmer would take for others ("terminal" for "terminate", "news" for "new"), kept whole. */
const KEPT_WHOLE = new Set(["terminal", "terminals", "news"]);

/** A word's stem as the tool search compares words: Porter's, but for the words it would confuse. */
export function stem(word: string): string {
  return KEPT_WHOLE.has(word) ? word : stemmer(word);
}

/** Marks a group's token, so it is never taken for a word (nor stemmed, nor matched by prefix). */
export const GROUP_MARK = "~";

/** The stems of each group member (a phrase as its words' stems), with the group's token. */
const MEMBERS: readonly { stems: string[]; token: string }[] = SYNONYM_GROUPS.flatMap((group) =>
  group.map((member) => ({ stems: member.split(" ").map(stem), token: `${GROUP_MARK}${group[0]}` })),
);

/** A text's words with each word or phrase of a group replaced by the group's token (the first group that has it). */
export function canonicalWords(words: readonly string[]): string[] {
  const stems = words.map(stem);
  const out: string[] = [];
  for (let i = 0; i < words.length;) {
    let best: { length: number; token: string } | undefined;
    for (const member of MEMBERS)
      if (member.stems.length > (best?.length ?? 0) && member.stems.every((stem, j) => stems[i + j] === stem))
        best = { length: member.stems.length, token: member.token };
    out.push(best?.token ?? (words[i] as string));
    i += best?.length ?? 1;
  }
  return out;
}
