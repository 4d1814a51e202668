/**
 * Takes tool declarations out of a provider request body, whatever the provider's shape: `tools: [{name}]`
 * (Anthropic, OpenAI Responses), `tools: [{function: {name}}]` (OpenAI Chat Completions, Mistral),
 * `tools|config.tools: [{functionDeclarations: [{name}]}]` (Google), `toolConfig.tools: [{toolSpec: {name}}]`
 * (Bedrock). This is how a deferred tool stays callable (pi keeps it in its tool set) yet undeclared: pi 0.73 fixes a
 * run's tool set when the run starts, so a tool loaded by a search mid-run could not be called until the next prompt
 * otherwise. Pure; the body comes back unchanged (the same object) when nothing is dropped.
 */
import { isObject } from "../common/values.ts";

type Drop = (name: string) => boolean;

/** Signed in with a subscription, pi-ai's Anthropic client writes these names as Claude Code does: `glob` as `Glob`. */
const CLAUDE_CODE_NAMES = new Set([
  ..."Read Write Edit Bash Grep Glob AskUserQuestion EnterPlanMode ExitPlanMode KillShell".split(" "),
  ..."NotebookEdit Skill Task TaskOutput TodoWrite WebFetch WebSearch".split(" "),
]);

/** The name a tool declaration carries, in any of the shapes above. */
function declaredName(item: unknown): string | undefined {
  if (!isObject(item)) return undefined;
  if (typeof item.name === "string") return item.name;
  if (isObject(item.function) && typeof item.function.name === "string") return item.function.name;
  if (isObject(item.toolSpec) && typeof item.toolSpec.name === "string") return item.toolSpec.name;
  return undefined;
}

/** A `tools` array without the dropped declarations; Google's groups keep their other functions. */
function filterTools(tools: unknown[], drop: Drop): unknown[] {
  const dropped = (item: unknown) => {
    const name = declaredName(item);
    return name !== undefined && (drop(name) || (CLAUDE_CODE_NAMES.has(name) && drop(name.toLowerCase())));
  };
  const kept = tools.flatMap((item) => {
    if (!isObject(item) || !Array.isArray(item.functionDeclarations)) return dropped(item) ? [] : [item];
    const declarations = item.functionDeclarations.filter((d) => !dropped(d));
    if (declarations.length === item.functionDeclarations.length) return [item];
    return declarations.length ? [{ ...item, functionDeclarations: declarations }] : [];
  });
  return kept.length === tools.length && kept.every((item, i) => item === tools[i]) ? tools : kept;
}

/** `holder.tools` filtered, as a new holder when it changed; an empty list goes (some APIs refuse `tools: []`). */
function withFiltered<T extends Record<string, unknown>>(holder: T, drop: Drop): T {
  const tools = holder.tools;
  if (!Array.isArray(tools)) return holder;
  const kept = filterTools(tools, drop);
  if (kept === tools) return holder;
  const next: Record<string, unknown> = { ...holder, tools: kept };
  if (kept.length === 0) delete next.tools;
  return next as T;
}

/** The request body without the tools `drop` names. */
export function withoutTools(payload: unknown, drop: Drop): unknown {
  if (!isObject(payload)) return payload;
  let next = withFiltered(payload, drop);
  for (const key of ["config", "toolConfig"]) {
    const holder = next[key];
    if (!isObject(holder)) continue;
    const filtered = withFiltered(holder, drop);
    if (filtered !== holder) next = { ...next, [key]: filtered };
  }
  return next;
}
