/**
 * Answers a server's `elicitation/create` through pi's dialogs. Form mode: which server asks and its message first,
 * then one question per field (./elicitation-form.ts), then what will be sent, for the user to send, decline or cancel;
 * only what the user entered (or a default shown to them) is sent. URL mode: the server's message and the page, opened
 * in the browser only on the user's word; the same when a call fails because the server first needs the user on a page
 * (error -32042), after which the call runs again if the user says so. Without a UI everything is declined: nobody can
 * answer.
 */
import type { ExtensionUIContext } from "@mariozechner/pi-coding-agent";
import type { ElicitRequest, ElicitRequestURLParams, ElicitResult } from "@modelcontextprotocol/client";
import { shown, SHOWN } from "../common/terminal-text.ts";
import type { ClientFeatures, Hide } from "../connection/mcp-client.ts";
import { isLoopbackHost } from "../oauth/endpoint-policy.ts";
import { canOpenBrowser, openBrowser } from "../oauth/sign-in.ts";
import { DENY_REST, type DialogBudget } from "./dialog-budget.ts";
import {
  asPicked,
  checkPicks,
  type FieldValue,
  fieldHint,
  type FormField,
  formFields,
  parseTypedAnswer,
} from "./elicitation-form.ts";

export type ElicitationUi = Pick<ExtensionUIContext, "select" | "input" | "notify">;

/** Answers a field may miss before a required one cancels the request and an optional one is left out. */
const MAX_TRIES = 3;
const FILL_IN = "Fill in";
const SEND = "Send";
const DECLINE = "Decline";
const CANCEL = "Cancel";
const SKIP = "(skip)";
const DONE = "Done";
const OPEN = "Open in browser";
const RETRY = "Retry the call";
const DECLINE_REST = DENY_REST.replace("Deny", "Decline");

/** Opens a page the user agreed to; the URL is shown to the user as well. */
export type PageOpener = (url: string) => void;

/** The browser where this machine can show one; elsewhere the URL on screen is all there is. */
const openIfPossible: PageOpener = (url) => {
  if (canOpenBrowser()) openBrowser(url);
};

/**
 * The client features that answer a server's requests for input on `server`'s behalf, through the current UI. Each
 * request that asks the user waits its turn in `budget`, and may be declined there unasked.
 */
export function elicitationFeatures(
  server: string,
  /** The session, where it has a UI; the abort of its turn dismisses the dialogs, as the server's giving up does. */
  session: () => { ui: ElicitationUi; signal?: AbortSignal } | undefined,
  budget: DialogBudget,
): ClientFeatures {
  const ui = () => session()?.ui;
  const ended = (cancelled?: AbortSignal) =>
    AbortSignal.any([cancelled, session()?.signal, budget.ended].filter((s) => s !== undefined));
  const denyRest = () => budget.denyRest(server);
  const declined = (): ElicitResult => ({ action: "decline" });
  /** The pages the user went to, by id, until the server says they are done: it may not say so of any other. */
  const visited = new Set<string>();
  const opener =
    (pages: Array<{ message: string; url?: string; elicitationId?: string }>): PageOpener =>
    (url) => {
      for (const { url: page, elicitationId: id } of pages) if (page === url && id !== undefined) visited.add(id);
      openIfPossible(url);
    };
  return {
    elicitation: (params, cancelled, hide) =>
      ui()
        ? budget.run(
            server,
            () => answerElicitation(server, params, until(ended(cancelled), ui(), hide), opener([params]), denyRest),
            declined,
          )
        : Promise.resolve(declined()),
    urlElicitationRequired: (elicitations, hide) =>
      ui()
        ? budget.run(
            server,
            () => sendToRequiredPages(server, elicitations, until(ended(), ui(), hide), opener(elicitations), denyRest),
            () => false,
          )
        : Promise.resolve(false),
    elicitationComplete: (id) =>
      visited.delete(id) && ui()?.notify(`MCP server '${server}' says the page you were sent to is done.`, "info"),
  };
}

/**
 * `ui` with its dialogs dismissed once `signal` aborts (the server gave up on the request, or pi's turn was aborted),
 * and the server's secrets hidden in all it draws: a choice or a default may be one, and goes back as the server gave it.
 */
const until = (signal: AbortSignal, ui: ElicitationUi | undefined, hide: Hide = (t) => t): ElicitationUi | undefined =>
  ui && {
    select: async (title, options) => {
      // Two secrets hidden alike would read as one choice, and the first be sent for either: each is numbered apart.
      const seen = new Map<string, number>();
      const drawn = options
        .map(hide)
        .map((o) => (seen.set(o, (seen.get(o) ?? 0) + 1).get(o)! > 1 ? `${o} (${seen.get(o)})` : o));
      const answer = await ui.select(hide(title), drawn, { signal });
      return answer === undefined ? undefined : options[drawn.indexOf(answer)];
    },
    input: (title, placeholder) => ui.input(hide(title), placeholder && hide(placeholder), { signal }),
    notify: (message, type) => ui.notify(hide(message), type),
  };

/** Stands for Escape (or a closed dialog) anywhere in the form: the user cancelled. */
class Cancelled extends Error {}

function picked<T>(answer: T | undefined): T {
  if (answer === undefined) throw new Cancelled();
  return answer;
}

/** `denyRest`, when given, is offered in the first dialog: the user declines this and every later request. */
export async function answerElicitation(
  server: string,
  params: ElicitRequest["params"],
  ui: ElicitationUi | undefined,
  open: PageOpener = openIfPossible,
  denyRest?: () => void,
): Promise<ElicitResult> {
  if (!ui) return { action: "decline" };
  const { rest, first } = firstDialog(denyRest);
  if (params.mode === "url") return answerUrl(server, params, ui, open, rest, first);
  if (!("requestedSchema" in params)) return { action: "decline" };
  const { fields, unsupported } = formFields(params);
  const who = `MCP server '${server}'`;
  const intro = `${who} asks for input:\n${shown(params.message, SHOWN.body)}`;
  try {
    if (unsupported.length) {
      ui.notify(
        `${who} asked for fields pi cannot show (${shown(unsupported.join(", "), SHOWN.line, "line")}); the request is declined.`,
        "warning",
      );
      return { action: "decline" };
    }
    const start = picked(first(await ui.select(intro, [FILL_IN, DECLINE, CANCEL, ...rest])));
    if (start !== FILL_IN) return { action: start === DECLINE ? "decline" : "cancel" };
    const given: Array<[string, FieldValue]> = [];
    for (const field of fields) {
      const value = await ask(
        field,
        `${who}: ${field.label}${fieldHint(field)}${field.description ? `\n${field.description}` : ""}`,
        ui,
      );
      if (value !== undefined) given.push([field.key, value]);
    }
    // From entries: a field named `__proto__` is one like any other (assigning it would set the prototype instead).
    const content: Record<string, FieldValue> = Object.fromEntries(given);
    const summary = fields
      .map((f) => `${f.label}: ${Object.hasOwn(content, f.key) ? show(asPicked(f, content[f.key]!)) : "(not given)"}`)
      .join("\n");
    const end = picked(await ui.select(`Send this to ${who}?\n${shown(summary, SHOWN.body)}`, [SEND, DECLINE, CANCEL]));
    if (end === SEND) return { action: "accept", content };
    return { action: end === DECLINE ? "decline" : "cancel" };
  } catch (error) {
    if (error instanceof Cancelled) return { action: "cancel" };
    throw error;
  }
}

/** `denyRest` offered in the first dialog, and that dialog's answer: declining the rest declines this one too. */
function firstDialog(denyRest?: () => void) {
  const first = (answer: string | undefined) => {
    if (answer === DECLINE_REST) denyRest?.();
    return answer === DECLINE_REST ? DECLINE : answer;
  };
  return { rest: denyRest ? [DECLINE_REST] : [], first };
}

function show(value: FieldValue): string {
  return Array.isArray(value) ? value.join(", ") || "(none)" : String(value);
}

/** One field's answer; when an optional field is skipped, its default (the SDK would send it), or `undefined`. */
async function ask(field: FormField, title: string, ui: ElicitationUi): Promise<FieldValue | undefined> {
  const skip = field.required ? [] : [SKIP];
  switch (field.kind) {
    case "boolean": {
      const yes = "Yes";
      const no = "No";
      const options = field.default === false ? [no, yes] : [yes, no];
      const answer = picked(await ui.select(title, [...options, ...skip]));
      return answer === SKIP ? field.default : answer === yes;
    }
    case "choice": {
      // The default first, so Enter takes it.
      const choices = [...field.choices].sort(
        (a, b) => Number(b.value === field.default) - Number(a.value === field.default),
      );
      const answer = picked(await ui.select(title, [...choices.map((c) => c.title), ...skip]));
      return answer === SKIP ? field.default : choices.find((c) => c.title === answer)?.value;
    }
    case "multi":
      return askPicks(field, title, ui);
    default:
      for (let tries = 0; tries < MAX_TRIES; tries++) {
        const placeholder = field.default === undefined ? undefined : shown(String(field.default), SHOWN.line, "line");
        const { value, error } = parseTypedAnswer(field, picked(await ui.input(title, placeholder)));
        if (!error) return value;
        const empty = field.default !== undefined ? "for its default" : field.required ? "" : "to skip it";
        ui.notify(empty ? `${error} Leave it empty ${empty}.` : error, "warning");
      }
      if (field.required) throw new Cancelled();
      ui.notify(`${field.label} ${field.default === undefined ? "is left out" : "takes its default"}.`, "warning");
      return field.default;
  }
}

/** A multi-select as a list to toggle: each pick flips one choice, "Done" ends it once the count is allowed. */
async function askPicks(
  field: Extract<FormField, { kind: "multi" }>,
  title: string,
  ui: ElicitationUi,
): Promise<string[] | undefined> {
  const chosen = new Set(field.default ?? []);
  // Each choice can be flipped on and off a few times; a form is not a place to stay forever.
  for (let round = 0; round < field.choices.length * 2 + MAX_TRIES; round++) {
    const options = field.choices.map((c) => `${chosen.has(c.value) ? "[x]" : "[ ]"} ${c.title}`);
    const answer = picked(await ui.select(title, [DONE, ...options, ...(field.required ? [] : [SKIP])]));
    if (answer === SKIP) return field.default;
    if (answer === DONE) {
      const values = field.choices.map((c) => c.value).filter((v) => chosen.has(v));
      const error = checkPicks(field, values);
      if (!error) return values;
      ui.notify(error, "warning");
      continue;
    }
    const choice = field.choices[options.indexOf(answer)];
    if (choice) chosen.has(choice.value) ? chosen.delete(choice.value) : chosen.add(choice.value);
  }
  ui.notify(`${field.label}: too many tries; the form is cancelled.`, "warning");
  throw new Cancelled();
}

/** Why a server's page may not be opened: only https, or http on this machine (never `javascript:` or `file:`). */
function pageProblem(url: string): string | undefined {
  if (!URL.canParse(url)) return "its address is not a valid URL";
  const { protocol, hostname, username, password } = new URL(url);
  // A user name reads as the host to the eye: `https://accounts.google.com@evil.example`.
  if (username || password) return `its address names a user before its host (${hostname})`;
  if (protocol === "https:" || (protocol === "http:" && isLoopbackHost(hostname))) return undefined;
  return `its address uses ${protocol === "http:" ? `plain http to ${hostname}` : `the \`${protocol}\` scheme`} (only https is opened)`;
}

/** URL mode: which server, its message and the page; the browser is opened only when the user says so. */
async function answerUrl(
  server: string,
  params: ElicitRequestURLParams,
  ui: ElicitationUi,
  open: PageOpener,
  rest: string[] = [],
  first = (answer: string | undefined) => answer,
): Promise<ElicitResult> {
  const who = `MCP server '${server}'`;
  const problem = pageProblem(params.url);
  if (problem) {
    ui.notify(`${who} wanted to send you to a page, but ${problem}; declined.`, "warning");
    return { action: "decline" };
  }
  // As the browser goes there: a host in look-alike letters (a Cyrillic 'а' in 'аccounts.google.com') in punycode.
  const address = shown(new URL(params.url).href, SHOWN.body, "visible");
  const answer = first(
    await ui.select(`${who} asks you to open a page:\n${shown(params.message, SHOWN.body)}\n${address}`, [
      OPEN,
      DECLINE,
      CANCEL,
      ...rest,
    ]),
  );
  if (answer === undefined || answer === CANCEL) return { action: "cancel" };
  if (answer === DECLINE) return { action: "decline" };
  open(params.url);
  ui.notify(`Opening the page of ${who} (if no browser appears, open it yourself):\n${address}`, "info");
  return { action: "accept" };
}

/**
 * A call needs the user on these pages first: each is asked for as in URL mode, then whether to run the call again.
 * `denyRest`, when given, is offered in the first dialog.
 */
export async function sendToRequiredPages(
  server: string,
  elicitations: ElicitRequestURLParams[],
  ui: ElicitationUi | undefined,
  open: PageOpener = openIfPossible,
  denyRest?: () => void,
): Promise<boolean> {
  if (!ui || elicitations.length === 0) return false;
  const { rest, first } = firstDialog(denyRest);
  for (const [i, params] of elicitations.entries()) {
    if ((await answerUrl(server, params, ui, open, i === 0 ? rest : [], first)).action !== "accept") return false;
  }
  const again = await ui.select(
    `MCP server '${server}' needs that done before the call can run. Retry it once you have finished in the browser.`,
    [RETRY, CANCEL],
  );
  return again === RETRY;
}
