/**
 * Answers a server's `elicitation/create` through pi's dialogs: which server asks and its message first, then one
 * question per field (./elicitation-form.ts), then what will be sent, for the user to send, decline or cancel. Only
 * what the user entered (or a default shown to them) is sent. Without a UI the request is declined: nobody can answer.
 */
import type { ExtensionUIContext } from "@mariozechner/pi-coding-agent";
import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { stripControls } from "../common/terminal-text.ts";
import { checkPicks, type FieldValue, fieldHint, type FormField, formFields, parseTypedAnswer } from "./elicitation-form.ts";

export type ElicitationUi = Pick<ExtensionUIContext, "select" | "input" | "notify">;

/** How often a field is asked again after an answer it cannot take, before the whole request is cancelled. */
const MAX_TRIES = 3;
const FILL_IN = "Fill in";
const SEND = "Send";
const DECLINE = "Decline";
const CANCEL = "Cancel";
const SKIP = "(skip)";
const DONE = "Done";

/** Stands for Escape (or a closed dialog) anywhere in the form: the user cancelled. */
class Cancelled extends Error {}

function picked<T>(answer: T | undefined): T {
  if (answer === undefined) throw new Cancelled();
  return answer;
}

export async function answerElicitation(server: string, params: ElicitRequest["params"], ui: ElicitationUi | undefined): Promise<ElicitResult> {
  // Only form mode is declared to servers; anything else is not something this client agreed to answer.
  if (!ui || params.mode === "url" || !("requestedSchema" in params)) return { action: "decline" };
  const { fields, unsupported } = formFields(params);
  const who = `MCP server '${server}'`;
  const intro = `${who} asks for input:\n${stripControls(params.message)}`;
  try {
    if (unsupported.length) {
      ui.notify(`${who} asked for fields pi cannot show (${unsupported.join(", ")}); the request is declined.`, "warning");
      return { action: "decline" };
    }
    const start = picked(await ui.select(intro, [FILL_IN, DECLINE, CANCEL]));
    if (start !== FILL_IN) return { action: start === DECLINE ? "decline" : "cancel" };
    const content: Record<string, FieldValue> = {};
    for (const field of fields) {
      const value = await ask(field, `${who}: ${field.label}${fieldHint(field)}${field.description ? `\n${field.description}` : ""}`, ui);
      if (value !== undefined) content[field.key] = value;
    }
    const summary = fields.map((f) => `${f.label}: ${f.key in content ? show(content[f.key]!) : "(not given)"}`).join("\n");
    const end = picked(await ui.select(`Send this to ${who}?\n${summary}`, [SEND, DECLINE, CANCEL]));
    if (end === SEND) return { action: "accept", content };
    return { action: end === DECLINE ? "decline" : "cancel" };
  } catch (error) {
    if (error instanceof Cancelled) return { action: "cancel" };
    throw error;
  }
}

function show(value: FieldValue): string {
  return Array.isArray(value) ? value.join(", ") || "(none)" : String(value);
}

/** One field's answer; `undefined` when an optional field is skipped. */
async function ask(field: FormField, title: string, ui: ElicitationUi): Promise<FieldValue | undefined> {
  const skip = field.required ? [] : [SKIP];
  switch (field.kind) {
    case "boolean": {
      const yes = "Yes";
      const no = "No";
      const options = field.default === false ? [no, yes] : [yes, no];
      const answer = picked(await ui.select(title, [...options, ...skip]));
      return answer === SKIP ? undefined : answer === yes;
    }
    case "choice": {
      // The default first, so Enter takes it.
      const choices = [...field.choices].sort((a, b) => Number(b.value === field.default) - Number(a.value === field.default));
      const answer = picked(await ui.select(title, [...choices.map((c) => c.title), ...skip]));
      return answer === SKIP ? undefined : choices.find((c) => c.title === answer)?.value;
    }
    case "multi":
      return askPicks(field, title, ui);
    default:
      for (let tries = 0; tries < MAX_TRIES; tries++) {
        const placeholder = field.default === undefined ? undefined : String(field.default);
        const { value, error } = parseTypedAnswer(field, picked(await ui.input(title, placeholder)));
        if (!error) return value;
        ui.notify(error, "warning");
      }
      throw new Cancelled();
  }
}

/** A multi-select as a list to toggle: each pick flips one choice, "Done" ends it once the count is allowed. */
async function askPicks(field: Extract<FormField, { kind: "multi" }>, title: string, ui: ElicitationUi): Promise<string[] | undefined> {
  const chosen = new Set(field.default ?? []);
  // Each choice can be flipped on and off a few times; a form is not a place to stay forever.
  for (let round = 0; round < field.choices.length * 2 + MAX_TRIES; round++) {
    const options = field.choices.map((c) => `${chosen.has(c.value) ? "[x]" : "[ ]"} ${c.title}`);
    const answer = picked(await ui.select(title, [DONE, ...options, ...(field.required ? [] : [SKIP])]));
    if (answer === SKIP) return undefined;
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
  throw new Cancelled();
}
