/**
 * A server's elicitation form (`elicitation/create` in form mode) as questions pi's dialogs can ask, one per field, and
 * the user's typed answers checked against the field before anything goes back to the server. The field shapes are
 * the spec's: strings (with a format or length bounds), numbers and integers with bounds, booleans, single-select
 * enums (plain, with `enumNames`, or `oneOf` with titles) and multi-select enums (`items.enum` or `items.anyOf`). Server
 * text is stripped of terminal control sequences here, once. Pure.
 */
import type { ElicitRequestFormParams } from "@modelcontextprotocol/client";
import { shown } from "../common/terminal-text.ts";
import { plural } from "../common/text.ts";
import { isObject } from "../common/values.ts";

type TextFormat = "email" | "uri" | "date" | "date-time";
interface Choice {
  value: string;
  title: string;
}

interface FieldBase {
  key: string;
  /** The field's title (or its key), safe to show. */
  label: string;
  description?: string;
  required: boolean;
}
export type FormField =
  | (FieldBase & { kind: "text"; format?: TextFormat; minLength?: number; maxLength?: number; default?: string })
  | (FieldBase & { kind: "number"; integer: boolean; minimum?: number; maximum?: number; default?: number })
  | (FieldBase & { kind: "boolean"; default?: boolean })
  | (FieldBase & { kind: "choice"; choices: Choice[]; default?: string })
  | (FieldBase & { kind: "multi"; choices: Choice[]; minItems?: number; maxItems?: number; default?: string[] });

export type FieldValue = string | number | boolean | string[];

/** Longest label or description shown; a server cannot fill the screen with one field. */
const MAX_LABEL = 120;
const MAX_DESCRIPTION = 500;
const FORMATS: readonly TextFormat[] = ["email", "uri", "date", "date-time"];

/** A server's text, where it wrote any (more than control sequences), safe to show and clipped; a label on one line. */
const text = (value: unknown, max: number, form?: "line"): string | undefined =>
  typeof value === "string" ? shown(value, max, form).trim() || undefined : undefined;
const label = (value: unknown) => text(value, MAX_LABEL, "line");
const finite = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) ? value : undefined;

/** The choices of a `oneOf`/`anyOf` list of `{const, title}`, or of `enum` (with `enumNames` as titles). */
function choicesOf(schema: Record<string, unknown>): Choice[] | undefined {
  const choices = titledChoices(schema);
  // pi's select answers with the text picked: titles are made distinct, and none is the dialog's own "(skip)".
  const taken = new Set(["(skip)"]);
  // The next number to try for a title: a list of one title a thousand times over is numbered in one pass.
  const next = new Map<string, number>();
  for (const choice of choices ?? []) {
    const title = choice.title;
    let n = next.get(title) ?? 2;
    while (taken.has(choice.title)) choice.title = `${title} (${n++})`;
    next.set(title, n);
    taken.add(choice.title);
  }
  return choices;
}

function titledChoices(schema: Record<string, unknown>): Choice[] | undefined {
  const titled = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : undefined;
  if (titled) {
    const choices = titled.filter(isObject).filter((o) => typeof o.const === "string");
    return choices.map((o) => ({ value: o.const as string, title: label(o.title) ?? label(o.const) ?? "" }));
  }
  if (!Array.isArray(schema.enum)) return undefined;
  const names = Array.isArray(schema.enumNames) ? schema.enumNames : [];
  // Each name by its value's place in the list the server wrote, before values that are no strings are left out.
  return schema.enum.flatMap((value, i) =>
    typeof value === "string" ? [{ value, title: label(names[i]) ?? label(value) ?? "" }] : [],
  );
}

/** The form's fields in the server's order; a field of a shape the spec does not allow is reported, not guessed at. */
export function formFields(params: Pick<ElicitRequestFormParams, "requestedSchema">): {
  fields: FormField[];
  unsupported: string[];
} {
  const schema = params.requestedSchema;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const fields: FormField[] = [];
  const unsupported: string[] = [];
  for (const [key, raw] of Object.entries(schema.properties ?? {})) {
    const property: Record<string, unknown> = isObject(raw) ? raw : {}; // a task's question is not checked by the SDK
    const base: FieldBase = {
      key,
      label: label(property.title) ?? label(key) ?? "(unnamed)",
      description: text(property.description, MAX_DESCRIPTION),
      required: required.has(key),
    };
    const type = property.type;
    if (type === "boolean") {
      fields.push({
        ...base,
        kind: "boolean",
        default: typeof property.default === "boolean" ? property.default : undefined,
      });
    } else if (type === "number" || type === "integer") {
      fields.push({
        ...base,
        kind: "number",
        integer: type === "integer",
        minimum: finite(property.minimum),
        maximum: finite(property.maximum),
        default: finite(property.default),
      });
    } else if (type === "string") {
      const choices = choicesOf(property);
      const fallback = typeof property.default === "string" ? property.default : undefined;
      if (choices?.length === 0)
        unsupported.push(key); // a list with nothing to pick: no answer the user could give
      else if (choices)
        fields.push({
          ...base,
          kind: "choice",
          choices,
          default: fallback, // kept when none of the choices: the SDK sends it for a field left out, so it is shown
        });
      else {
        const format = FORMATS.find((f) => f === property.format);
        fields.push({
          ...base,
          kind: "text",
          format,
          minLength: finite(property.minLength),
          maxLength: finite(property.maxLength),
          default: fallback,
        });
      }
    } else if (type === "array" && isObject(property.items)) {
      const choices = choicesOf(property.items);
      if (!choices) {
        unsupported.push(key);
        continue;
      }
      const defaults = Array.isArray(property.default)
        ? property.default.filter((v): v is string => choices.some((c) => c.value === v))
        : undefined;
      fields.push({
        ...base,
        kind: "multi",
        choices,
        minItems: finite(property.minItems),
        maxItems: finite(property.maxItems),
        default: defaults,
      });
    } else {
      unsupported.push(key);
    }
  }
  return { fields, unsupported };
}

/** A value as the user picked it: a choice's by its title (the user picks choices by their titles, never sees values). */
export function asPicked(field: FormField, value: FieldValue): FieldValue {
  if (!("choices" in field)) return value;
  const title = (v: string) => field.choices.find((c) => c.value === v)?.title ?? v;
  return Array.isArray(value) ? value.map(title) : typeof value === "string" ? title(value) : value;
}

/** What a field expects, for the question: `(optional, 1-100, default 42)`. */
export function fieldHint(field: FormField): string {
  const parts: string[] = [];
  if (!field.required) parts.push("optional");
  if (field.kind === "text" && field.format) parts.push(field.format === "date" ? "date, YYYY-MM-DD" : field.format);
  if (field.kind === "number") {
    parts.push(field.integer ? "a whole number" : "a number");
    if (field.minimum !== undefined || field.maximum !== undefined)
      parts.push(`${field.minimum ?? "…"} to ${field.maximum ?? "…"}`);
  }
  if (field.kind === "multi" && (field.minItems !== undefined || field.maxItems !== undefined))
    parts.push(`pick ${field.minItems ?? 0} to ${field.maxItems ?? field.choices.length}`);
  const fallback = field.default === undefined ? undefined : asPicked(field, field.default);
  if (fallback !== undefined && !(Array.isArray(fallback) && fallback.length === 0))
    parts.push(`default ${shown(Array.isArray(fallback) ? fallback.join(", ") : String(fallback), MAX_LABEL, "line")}`);
  return parts.length ? ` (${parts.join("; ")})` : "";
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** RFC 3339's time after the date, as servers' schema checks want it: seconds and a zone. */
const TIME = /^[T ]([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/i;

/** A date or date-time that is a real one, not only the right shape. */
function validDate(value: string, withTime: boolean): boolean {
  const day = withTime ? value.slice(0, 10) : value;
  if (!DATE.test(day) || (withTime && !TIME.test(value.slice(10)))) return false;
  const time = Date.parse(day);
  return Number.isFinite(time) && new Date(time).toISOString().slice(0, 10) === day;
}

/**
 * A typed answer to a text or number field: its value, `undefined` for an optional field left empty (or its default
 * when it has one), or why it is not acceptable.
 */
export function parseTypedAnswer(
  field: Extract<FormField, { kind: "text" | "number" }>,
  typed: string,
): { value?: FieldValue; error?: string } {
  const answer = typed.trim();
  if (answer === "") {
    if (field.default !== undefined) return { value: field.default };
    return field.required ? { error: `${field.label} is required.` } : {};
  }
  if (field.kind === "number") {
    const value = Number(answer);
    // Decimal only: Number() also reads hex, binary and octal (`0x1A` is 26), which nobody typing a number means.
    if (!Number.isFinite(value) || /^0[box]/i.test(answer)) return { error: `${field.label} must be a number.` };
    if (field.integer && !Number.isInteger(value)) return { error: `${field.label} must be a whole number.` };
    if (field.integer && !Number.isSafeInteger(value)) return { error: `${field.label} is too large to send exactly.` };
    if (field.minimum !== undefined && value < field.minimum)
      return { error: `${field.label} must be at least ${field.minimum}.` };
    if (field.maximum !== undefined && value > field.maximum)
      return { error: `${field.label} must be at most ${field.maximum}.` };
    return { value };
  }
  const length = [...answer].length; // code points, as JSON Schema counts (an emoji is one)
  if (field.minLength !== undefined && length < field.minLength)
    return { error: `${field.label} needs at least ${plural(field.minLength, "character")}.` };
  if (field.maxLength !== undefined && length > field.maxLength)
    return { error: `${field.label} takes at most ${plural(field.maxLength, "character")}.` };
  if (field.format === "email" && !EMAIL.test(answer)) return { error: `${field.label} must be an email address.` };
  if (field.format === "uri" && !URL.canParse(answer))
    return { error: `${field.label} must be a URL with its scheme (https://…).` };
  if ((field.format === "date" || field.format === "date-time") && !validDate(answer, field.format === "date-time"))
    return {
      error: `${field.label} must be a ${field.format === "date" ? "date as YYYY-MM-DD" : "date and time as YYYY-MM-DDTHH:MM:SSZ"}.`,
    };
  return { value: answer };
}

/** Whether a multi-select answer has as many picks as the field allows; the error says what is wrong. */
export function checkPicks(
  field: Extract<FormField, { kind: "multi" }>,
  picked: readonly string[],
): string | undefined {
  if (field.minItems !== undefined && picked.length < field.minItems)
    return `${field.label}: pick at least ${field.minItems}.`;
  if (field.maxItems !== undefined && picked.length > field.maxItems)
    return `${field.label}: pick at most ${field.maxItems}.`;
  return undefined;
}
