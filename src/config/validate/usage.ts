/**
 * The fields that say how the agent uses a server: whether at all (`enabled`, `disabled`), under which tool names
 * (`prefix`), how long one call may wait (`requestTimeout`), which tools run without asking (`autoApprove`,
 * `autoApproveReadOnly`), which are sent again after a dropped connection (`resendAfterDrop`), whether it may have pi's
 * model answer it (`sampling`), whether it is offered the project root (`roots`), and what it is for (`description`,
 * for the model). Also the warning for `envFile`, which is not read.
 */
import type { JsonObject } from "../../common/values.ts";
import { DEFAULT_REQUEST_TIMEOUT_MS } from "../defaults.ts";
import type { SamplingMode, ServerConfig } from "../types.ts";
import { booleanField, positiveMs } from "./fields.ts";

export type Usage = Pick<
  ServerConfig,
  | "requestTimeout"
  | "enabled"
  | "prefix"
  | "autoApprove"
  | "autoApproveReadOnly"
  | "resendAfterDrop"
  | "description"
  | "sampling"
  | "roots"
>;

/** The longest `description`: it goes into the model's system prompt on every turn. */
export const MAX_DESCRIPTION_CHARS = 200;

export function validateUsage(entry: JsonObject, errors: string[], warnings: string[]): Usage {
  const requestTimeout = positiveMs(entry.requestTimeout, "requestTimeout", DEFAULT_REQUEST_TIMEOUT_MS, errors);

  const on = booleanField(entry, "enabled", true, errors);
  const enabled = !booleanField(entry, "disabled", false, errors) && on;

  const prefix = typeof entry.prefix === "string" ? entry.prefix : undefined;
  if (entry.prefix !== undefined && entry.prefix !== null && prefix === undefined)
    errors.push('`prefix` must be a string ("" for bare tool names)');

  const description = descriptionField(entry.description, errors);
  const autoApprove = toolPatterns(entry.autoApprove, "autoApprove", errors);
  const resendAfterDrop = toolPatterns(entry.resendAfterDrop, "resendAfterDrop", errors);
  const autoApproveReadOnly = booleanField(entry, "autoApproveReadOnly", false, errors);

  let sampling: SamplingMode = "ask";
  if (entry.sampling !== undefined && entry.sampling !== null) {
    if (entry.sampling === "ask" || entry.sampling === "allow" || entry.sampling === "off") sampling = entry.sampling;
    else errors.push('`sampling` must be "ask", "allow" or "off"');
  }

  const roots = booleanField(entry, "roots", true, errors) ? undefined : false;
  const dropped = filesystemDirectoriesDropped(entry).map((directory) => JSON.stringify(directory));
  if (dropped.length)
    warnings.push(
      `the filesystem server works in the roots it is offered (the project root, by default) instead of the directories in \`args\` (${dropped.join(", ")}): add "roots": false to keep to those, or "roots": true to keep the project root`,
    );

  if (entry.envFile !== undefined)
    warnings.push("`envFile` is not supported and is ignored; list the variables under `env`");
  return {
    ...{ requestTimeout, enabled, prefix, autoApprove, autoApproveReadOnly, resendAfterDrop, description, sampling },
    roots,
  };
}

/** The filesystem reference server, run by npx or in its container image (a version or tag after it). */
const FILESYSTEM_SERVER = /^(@modelcontextprotocol\/server-filesystem|(docker\.io\/)?mcp\/filesystem)([@:][^/]*)?$/;

/**
 * The directories on the command line of the filesystem reference server that it would give up: offered roots, it
 * works in them instead, and the project root it is offered by default is not where a user who named others meant.
 */
export function filesystemDirectoriesDropped({ args, cwd, roots }: JsonObject): string[] {
  if (roots !== undefined && roots !== null) return [];
  const words = Array.isArray(args) ? args.filter((arg): arg is string => typeof arg === "string") : [];
  const at = words.findIndex((word) => FILESYSTEM_SERVER.test(word));
  // The project root itself (a server starts in it unless `cwd` says otherwise) is what it is offered anyway.
  const project = new Set(["${PROJECT_ROOT}", ...(cwd ? [] : [".", "./"])]);
  return at < 0 ? [] : words.slice(at + 1).filter((word) => !word.startsWith("-") && !project.has(word));
}

/** `description`: one short line of plain text saying what the server is for. */
function descriptionField(value: unknown, errors: string[]): string | undefined {
  if (value === undefined || value === null) return undefined;
  const problem = `\`description\` must be one line of text of at most ${MAX_DESCRIPTION_CHARS} characters saying what the server is for`;
  if (typeof value !== "string") errors.push(`${problem}; it is a ${Array.isArray(value) ? "list" : typeof value}`);
  else if (value.length > MAX_DESCRIPTION_CHARS) errors.push(`${problem}; it has ${value.length}`);
  else if (/[\x00-\x1f\x7f-\x9f]/.test(value)) errors.push(`${problem}; it has a line break or control character`);
  else return value.trim() || undefined;
  return undefined;
}

/** `autoApprove`, `resendAfterDrop`: tool names or `*`/`?` patterns. */
function toolPatterns(value: unknown, field: string, errors: string[]): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string" && item.trim() !== "")) {
    errors.push(
      `\`${field}\` must be an array of tool names (patterns with \`*\` and \`?\` allowed), e.g. ["search_*", "get_issue"]`,
    );
    return [];
  }
  return value as string[];
}
