/**
 * What a request for a tool asks for, as the tool search ranks it: a list of concepts, one per word of the request
 * (its own term, and the words of the related groups it belongs to, ./search-related.ts, and those learnt to go with it
 * from labelled requests, ./search-learned.ts) and one per value the request carries (an issue key, a host name, a
 * duration…: ./search-values.ts), which says what it acts on whatever words come with it.
 * The values themselves are taken out of the words: "api.example.com" is not a request about APIs. Pure.
 */
import { learnedRelated } from "./search-learned.ts";
import { RELATED_GROUPS } from "./search-related.ts";
import { termsOf } from "./search-terms.ts";
import { QUOTED, VALUES } from "./search-values.ts";

/** One thing a request asks for: its own terms (a word's, or what a value means) and the words related to them. */
export interface Concept {
  own: string[];
  /** 1 for a word the request says; less for what a value is taken to mean. */
  weight: number;
  related: string[];
}

/** What a value's meaning counts against a word the request says. */
const VALUE_WEIGHT = 0.6;

/** Each related group as index terms: a member is the terms of its words, in order. */
const RELATED = RELATED_GROUPS.map((group) =>
  group.split(", ").flatMap((words) => [termsOf(words)].filter((t) => t.length)),
);

/**
 * Where a request's own words end and the text it carries begins: after a colon (an emoji's, ":eyes:", is none), or
 * after "saying", "asking" and the like ("add a comment on INFRA-9 saying the fix is deployed"); after "that" when the
 * request starts, politely or not, by saying something ("post in #deploys that the release is going out"), after
 * "about" when it starts by writing something ("open an issue about the broken signup link"), after "at" where a name
 * is pointed ("point api.example.com at the new load balancer"), and where the request says why ("want to know if 4.12
 * is open", "need to ask about release cadence", "so they know"). The carried text says what to write (or where to, or
 * why), not which tool.
 */
const CARRIED_TEXT =
  /(?<!(?:^|\s):[\w+-]+):\s|\b(?:saying|asking|telling|reading|with the (?:text|message|body)|and (?:tell|show|let|give) me|(?<=^(?:create|file|open|raise|write|post|send|make|draft|start|add|leave|log|message|dm|email|ping|tell)\b.*?|\b(?:remember|know|recall|stored|saved|noted)\b.*?)about|(?:i |we )?(?:want|need|wanted|trying) to (?:know|see|check|find out|figure out) (?:if|whether|who|what|when|why|how)\b|(?:i |we )?(?:want|need|wanted|trying) to ask\b|so (?:that )?(?:i|we|they|you|it|he|she|people|everyone|folks)\b|(?<=^\s*point\s+\S+\s+)(?:at|to))\b|(?<=^(?:(?:can|could|would) you (?:please )?|please )?(?:post|say|tell|announce|message|dm|email|notify|ping|let|write|reply|comment|note|remember|memorize)\b.*?)\bthat\b/i;

/**
 * Names of things in a request (a repository "acme/infra", a host "build-agent-3", a path "2024/06/"): they tell which
 * thing, not what kind of thing or what to do with it, and their parts are words that mislead. Words joined by "/" or
 * "_", or holding digits; words joined by "-" ("the logs-archive bucket", "roll back search-indexer"), unless English
 * writes them so ("force-push", "on-call"), and before the values are read, so that "docs-site" is not read as docs (a
 * file's name and a @group are left to the values).
 */
const NAME_LIKE = /(?<!\S)(?=\S*[\p{L}\p{N}][/_][\p{L}\p{N}]|\S*\p{L}\S*\p{N}|\S*\p{N}\S*\p{L})[^\s,;:!?()"']+/gu;
const NAME_WORDS = String.raw`\p{L}[\p{L}\p{N}]*(?:-\p{L}[\p{L}\p{N}]*)+(?![\p{L}\p{N}]|\.\p{L})`;
/** First words of words joined by "-" that English writes so ("re-run", "on-call", "force-push"): no names. */
const WORD_BEFORE_HYPHEN =
  "port|re|sub|co|pre|non|multi|self|de|un|e|x|on|off|in|out|up|down|over|under|auto|cross|long|short|high|low|read|" +
  "write|force|follow|sign|log|check|opt|set|built|third|real|end|dry|roll|cherry|pull|merge|hot|dead|key|time|full|" +
  "two|single|front|back|day|top|bottom|left|right|first|last|one|all|case|well|old|new|half|semi|anti|mid|post|" +
  "open|closed|close|run|squash|rebase";
const HYPHENED_NAME = new RegExp(String.raw`(?<![@#\w/:.-])(?!(?:${WORD_BEFORE_HYPHEN})-)${NAME_WORDS}`, "giu");

/**
 * Who is asking, or what kind of request follows, in a few words ("support lead question:", "QA here -", "quick one:"):
 * the request is what comes after.
 */
const PREAMBLE = /^\s*(?:[\w'-]+\s+){0,2}?(?:question|q|here|fyi|urgent|quick one|heads up)\s*(?::|\s-)\s/i;

/**
 * What a request is about, named in a word before a colon ("Prisma: how do I…"): the request follows, not carried text
 * (but "remember:" or "note:" is the request, and what follows is what to keep).
 */
const TOPIC = /^\s*(?!(?:remember|note|memorize|forget|record|todo)\s*:)([\p{L}\p{N}.'-]+):\s+(.*)$/su;

/** The request itself: without who asks, and with what it is about after it. */
function asked(request: string): string {
  return request.replace(PREAMBLE, "").replace(TOPIC, "$2 $1");
}

/** A request that asks a question ("what's in the current sprint", "who approved PR 88") wants to read, not change. */
const QUESTION =
  /^\s*(?:what|what's|whats|who|who's|whos|which|where|when|how|why|is|are|was|were|did|does|do|any|show|list)\b/i;

/**
 * Whether a request asks a question: from its first word, or in a clause it ends with ("the checkout function is
 * throwing timeouts, what do its logs say?").
 */
function asksQuestion(query: string): boolean {
  if (QUESTION.test(query)) return true;
  return /\?\s*$/.test(query) && query.split(/[,;:.!—–]\s+|\s-\s/).some((clause) => QUESTION.test(clause));
}

/** Whether a request or tool reads (lists, gets, searches) or changes something. */
export type Action = "read" | "change";

/** Verbs of each kind; a word in neither leaves the action open. */
const READ_VERBS =
  "get list describe search find show view inspect explain count download export analyze check history retrieve";
const CHANGE_VERBS =
  "create add put post update edit delete remove start stop reboot restart run invoke terminate send upload merge " +
  "move archive invite kick transition assign attach close cancel bounce spin shut grow resize scale give grant " +
  "watch save lock hook cut remember forget reopen rerun deploy rotate restore revert " +
  "enable disable register apply modify write fill click type press drag upsert change rank link vote pin comment";
/** The verbs of each kind as index terms. */
const VERBS: readonly [Action, Set<string>][] = [
  ["read", new Set(termsOf(READ_VERBS))],
  ["change", new Set(termsOf(CHANGE_VERBS))],
];

/**
 * Verbs a request leaves unsaid when it names only a thing ("comment on WEB-118…" adds a comment, "the logs of the
 * checkout service" gets them): a tool named for any other verb (delete, update, rerun…) is not what such a request
 * asks for.
 */
const PLAIN_VERBS = new Set(
  termsOf("get list describe search find show view read fetch add create post send put make"),
);

/** The first verb among `terms`, if it is one a request must say to mean it. */
export function markedVerb(terms: readonly string[]): string | undefined {
  const verb = terms.find((term) => VERBS.some(([, verbs]) => verbs.has(term)));
  return verb && !PLAIN_VERBS.has(verb) ? verb : undefined;
}

/** The action of the first verb among `terms`. */
function actionOf(terms: readonly string[]): Action | undefined {
  for (const term of terms) for (const [action, verbs] of VERBS) if (verbs.has(term)) return action;
  return undefined;
}

/**
 * A plural noun in a tool's name ("pins" of `pins_list`, "Runs" of `listWorkflowRuns`): a thing, not what the tool does,
 * though its stem is a verb ("pin", "run").
 */
const PLURAL_IN_NAME = /(?<=^|[_\s-]|\p{Ll})\p{Lu}?\p{Ll}+[^aisu\W]s(?=$|[_\s\p{Lu}-])/gu;

/** The terms of a tool's name (and title) that may say what it does: its words but its plural nouns. */
export function nameVerbs(name: string): string[] {
  return termsOf(name.replace(PLURAL_IN_NAME, " "));
}

/**
 * A tool's action by the verbs of its name. "post" before another verb is the HTTP method of a tool made from an API's
 * description ("API-post-search" searches), not what it does.
 */
export function toolAction(terms: readonly string[]): Action | undefined {
  const afterMethod = terms.includes("post") ? actionOf(terms.slice(terms.indexOf("post") + 1)) : undefined;
  return afterMethod ?? actionOf(terms);
}

/** What a request wants done: reading for a question, else the action of its first verb. */
export function requestAction(request: string): Action | undefined {
  const query = asked(request);
  if (asksQuestion(query)) return "read";
  // A past participle after the first word describes what is acted on ("bugs assigned to me"): it asks for nothing.
  return actionOf(termsOf(query.replace(/(?<=\S\s+)\p{L}+ed\b/gu, " ")));
}

const PARTICLES = new Set(["up", "down", "off", "out", "over", "back"]);

/**
 * Whether `run` stands in `terms` as consecutive terms; a phrasal verb's particle may come after its object ("bring the
 * database back", "spin the VM up"), up to three words later.
 */
function containsRun(terms: readonly string[], run: readonly string[]): boolean {
  for (let i = 0; i + run.length <= terms.length; i++) if (run.every((term, j) => terms[i + j] === term)) return true;
  const [verb, particle] = run;
  if (run.length !== 2 || !PARTICLES.has(particle!)) return false;
  return terms.some((term, i) => term === verb && terms.slice(i + 2, i + 5).includes(particle!));
}

/** The other words of every related group that has `term` (alone, or as the first word of a phrase in `terms`). */
function relatedTo(term: string, terms: readonly string[]): string[] {
  const related = new Set<string>();
  for (const group of RELATED) {
    if (!group.some((member) => member[0] === term && containsRun(terms, member))) continue;
    for (const member of group) for (const word of member) if (word !== term) related.add(word);
  }
  return [...related];
}

/** Each request word's learnt related words (./search-learned.ts). */
export type LearnedRelated = ReadonlyMap<string, readonly string[]>;

/** The words a request says among its concepts, not what its values are taken to mean. */
export function saidWords(concepts: readonly Concept[]): string[] {
  return concepts
    .filter((concept) => concept.weight === 1 && concept.own.length === 1)
    .map((concept) => concept.own[0]!);
}

/**
 * A request's concepts: one per distinct word (numbers left out), then one per kind of value it carries; `learned` is
 * the table of learnt related words (the shipped one, unless another is being learnt).
 */
export function requestConcepts(request: string, learned: LearnedRelated = learnedRelated()): Concept[] {
  const query = asked(request);
  // Where the carried text begins is looked for outside quotes: "reading" in a quoted error message starts none.
  const carried = CARRIED_TEXT.exec(query.replace(QUOTED, (text) => " ".repeat(text.length)));
  // A name of words joined by "-" ("docs-site") first: its words would read as values' words ("docs").
  let words = (carried ? query.slice(0, carried.index) : query).replace(HYPHENED_NAME, " ");
  // What each value means, and how much that counts (the most any value with that meaning has).
  const meanings = new Map<string, number>();
  const mean = (means: string, weight = VALUE_WEIGHT) =>
    meanings.set(means, Math.max(weight, meanings.get(means) ?? 0));
  for (const { pattern, means, keepsWords, weight } of VALUES)
    words = words.replace(pattern, (text) => {
      mean(means, weight);
      return keepsWords ? ` ${text} ` : " ";
    });
  // Names, and the negations and endings of contractions ("won't", "who's"), say nothing of the tool.
  words = words
    .replace(NAME_LIKE, " ")
    .replace(/\b(\p{L}+)n't\b/gu, " ")
    .replace(/'(?:s|re|ll|ve|d|m)\b/g, "");
  if (/^\s*(?:who|who's|whos)\b/i.test(query)) mean("user");
  if (asksQuestion(query)) mean("list get search");
  const terms = termsOf(words).filter((term) => !/^\d+$/.test(term));
  // A phrasal verb's particle ("spin up", "shut down") tells its phrase apart ("spin up" from "spin down") but is no
  // concept of its own.
  const concepts: Concept[] = [...new Set(terms)]
    .filter((term) => !PARTICLES.has(term))
    .map((own) => ({
      own: [own],
      weight: 1,
      related: [...new Set([...relatedTo(own, terms), ...(learned.get(own) ?? []).filter((word) => word !== own)])],
    }));
  for (const [means, weight] of meanings) {
    const own = termsOf(means);
    if (own.length === 0) continue;
    // A value that means what the request says in words ("the #ops channel") adds nothing.
    if (own.every((term) => terms.includes(term))) continue;
    const related = new Set<string>();
    for (const term of own) for (const word of relatedTo(term, own)) if (!own.includes(word)) related.add(word);
    concepts.push({ own, weight, related: [...related] });
  }
  return concepts;
}
