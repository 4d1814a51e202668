/**
 * What `/mcp prompts` and `/mcp resources` show: each server's prompts (the command that runs each, its description
 * and its arguments) or its resources and resource templates, and for a server with nothing to show one line that says
 * why. All a server wrote is shown without control sequences, on one line and clipped; a long list is cut after
 * {@link MAX_SHOWN_ITEMS} items with a count of the rest. Pure.
 */
import type { Prompt, Resource, ResourceTemplateType as ResourceTemplate } from "@modelcontextprotocol/client";
import { shown } from "../common/terminal-text.ts";
import { plural } from "../common/text.ts";
import { commandArgument } from "../config/validate/name.ts";
import type { HealthStatus } from "../connection/health.ts";
import type { PagedList } from "../common/paged-list.ts";
import { LIST_RESOURCES, LIST_TEMPLATES, READ_RESOURCE } from "./resource-tools.ts";

/** Each list of a server shows this many items; the rest are counted. */
export const MAX_SHOWN_ITEMS = 50;
/** A prompt shows this many of its arguments; the rest are counted. */
export const MAX_SHOWN_ARGUMENTS = 20;
/** A description (or other server text) longer than this is cut. */
const MAX_TEXT = 200;
/** Server text as this listing shows it: without control sequences, on one line, clipped. */
const clipped = (text: string) => shown(text, MAX_TEXT, "line");
const NO_SERVERS = "No MCP servers configured (/mcp add adds one).";

/** What decides whether a server can be asked for its lists now. */
export interface ServerStanding {
  name: string;
  status: HealthStatus;
  trusted: boolean;
  lastError?: string;
}

/** Why a server has no listing: it offers none, cannot be asked now (and why), or failed to answer. */
type Unlisted = { kind: "none" } | { kind: "unavailable"; reason: string } | { kind: "failed"; error: string };

/** One server's listing, or why it has none. */
export type ServerOffer<T> = { server: string } & ({ kind: "listed"; listing: T } | Unlisted);

/** A prompt and the command that runs it (none when the server's list changed while it was read and no longer has it). */
export interface PromptEntry {
  prompt: Prompt;
  command?: string;
}

/** A list read to its end or to the bounds, or why it could not be read. */
export type ListResult<T> = PagedList<T> | { error: string };

export interface ResourceListing {
  resources: ListResult<Resource>;
  templates: ListResult<ResourceTemplate>;
}

/** Why a server cannot be asked for its prompts or resources now, with the command that changes that; undefined once it is connected. */
export function whyNotListed(server: ServerStanding, off = false): string | undefined {
  const name = commandArgument(server.name);
  if (off) return `off for this session (/mcp on ${name} turns it on)`;
  if (!server.trusted) return `not trusted, so not started (/mcp trust ${name} starts it)`;
  switch (server.status) {
    case "connected":
      return undefined;
    case "disabled":
      return `disabled (/mcp enable ${name} turns it on)`;
    case "not started":
      return `not started yet: it starts when first used (/mcp reconnect ${name} starts it now)`;
    case "connecting":
      return "still connecting; ask again in a moment";
    case "needs sign-in":
      return `needs a sign-in (/mcp auth ${name})`;
    default: {
      const why = server.lastError ? `: ${clipped(server.lastError)}` : "";
      return `not connected (${server.status})${why} (/mcp reconnect ${name} tries again)`;
    }
  }
}

/** The one line for a server without a listing. */
function unlistedLine(server: string, why: Unlisted, what: string): string {
  const head = `MCP server '${server}'`;
  switch (why.kind) {
    case "none":
      return `${head}: offers no ${what}`;
    case "unavailable":
      return `${head}: ${why.reason}`;
    case "failed":
      return `${head}: its ${what} could not be listed: ${clipped(why.error)}`;
  }
}

/** What is left out of a list: the items not shown, and pages the bounds left unread. */
function restLine(indent: string, hidden: number, unread: boolean, what = ""): string[] {
  const further = "the server has more than the bridge reads at once";
  if (hidden > 0) return [`${indent}… and ${hidden} more${what}${unread ? ` (${further})` : ""}`];
  return unread ? [`${indent}… and more: ${further}`] : [];
}

/** `7 resources`, or `more than 1000 resources` when the bounds left pages unread; nothing for a list that failed or is empty. */
function countOf(list: ListResult<unknown>, word: string): string[] {
  if ("error" in list || isEmpty(list)) return [];
  return [list.more ? `more than ${plural(list.items.length, word)}` : plural(list.items.length, word)];
}

function promptLines(entry: PromptEntry): string[] {
  const { prompt } = entry;
  const about = clipped(prompt.description || prompt.title || "");
  const command = entry.command
    ? `/${entry.command}`
    : `${clipped(prompt.name)} (no command: the server's prompts changed meanwhile; /mcp prompts again shows them)`;
  const lines = [`  ${command}${about ? `  ·  ${about}` : ""}`];
  const args = prompt.arguments ?? [];
  for (const arg of args.slice(0, MAX_SHOWN_ARGUMENTS)) {
    const argAbout = arg.description ? `  ·  ${clipped(arg.description)}` : "";
    lines.push(`      ${clipped(arg.name)} (${arg.required ? "required" : "optional"})${argAbout}`);
  }
  lines.push(...restLine("      ", Math.max(0, args.length - MAX_SHOWN_ARGUMENTS), false, " arguments"));
  return lines;
}

/** `/mcp prompts`: each server's prompts with their commands and arguments, or one line on why it has none to show. */
export function formatPromptListing(offers: ReadonlyArray<ServerOffer<PromptEntry[]>>): string {
  if (offers.length === 0) return NO_SERVERS;
  const lines: string[] = [];
  let any = false;
  for (const offer of offers) {
    if (offer.kind !== "listed" || offer.listing.length === 0) {
      lines.push(unlistedLine(offer.server, offer.kind === "listed" ? { kind: "none" } : offer, "prompts"));
      continue;
    }
    any = true;
    const prompts = offer.listing;
    lines.push(`MCP server '${offer.server}': ${plural(prompts.length, "prompt")}`);
    for (const entry of prompts.slice(0, MAX_SHOWN_ITEMS)) lines.push(...promptLines(entry));
    lines.push(...restLine("  ", Math.max(0, prompts.length - MAX_SHOWN_ITEMS), false));
  }
  if (any) lines.push("Type a prompt's command to run it; its arguments go after it as name=value (or in order).");
  return lines.join("\n");
}

/** A resource (at its URI) or a template (at its URI template): where, name, type, then its description below. */
function itemLines(at: string, item: { name: string; mimeType?: string; description?: string }): string[] {
  const parts = [clipped(at), clipped(item.name), ...(item.mimeType ? [clipped(item.mimeType)] : [])];
  return [`    ${parts.join("  ·  ")}`, ...(item.description ? [`      ${clipped(item.description)}`] : [])];
}

function isEmpty(list: ListResult<unknown>): boolean {
  return !("error" in list) && list.items.length === 0 && !list.more;
}

/** One list of a server: its heading and shown items, or why it could not be read; nothing when it is empty. */
function listBlock<T>(heading: string, list: ListResult<T>, linesOf: (item: T) => string[]): string[] {
  if ("error" in list) return [`  ${heading}: could not be listed: ${clipped(list.error)}`];
  if (isEmpty(list)) return [];
  return [
    `  ${heading}:`,
    ...list.items.slice(0, MAX_SHOWN_ITEMS).flatMap(linesOf),
    ...restLine("    ", Math.max(0, list.items.length - MAX_SHOWN_ITEMS), list.more),
  ];
}

/** A listing with nothing to show: neither list has an item; one that failed says why. */
function unlistedResources({ resources, templates }: ResourceListing): Unlisted | undefined {
  for (const list of [resources, templates]) if (!("error" in list) && !isEmpty(list)) return undefined;
  if ("error" in resources) return { kind: "failed", error: resources.error };
  if ("error" in templates) return { kind: "failed", error: templates.error };
  return { kind: "none" };
}

/** `/mcp resources`: each server's resources and templates, or one line on why it has none to show; then how the model reads them. */
export function formatResourceListing(offers: ReadonlyArray<ServerOffer<ResourceListing>>): string {
  if (offers.length === 0) return NO_SERVERS;
  const lines: string[] = [];
  let any = false;
  for (const offer of offers) {
    if (offer.kind !== "listed") {
      lines.push(unlistedLine(offer.server, offer, "resources"));
      continue;
    }
    const why = unlistedResources(offer.listing);
    if (why) {
      lines.push(unlistedLine(offer.server, why, "resources"));
      continue;
    }
    const { resources, templates } = offer.listing;
    any = true;
    const counts = [...countOf(resources, "resource"), ...countOf(templates, "resource template")];
    lines.push(`MCP server '${offer.server}': ${counts.join(", ")}`);
    lines.push(
      ...listBlock("Resources", resources, (r) => itemLines(r.uri, r)),
      ...listBlock("Resource templates", templates, (t) => itemLines(t.uriTemplate, t)),
    );
  }
  if (any)
    lines.push(
      `The model reads them with ${READ_RESOURCE} (server and URI, a template's {variables} filled in) and lists them with ${LIST_RESOURCES} and ${LIST_TEMPLATES}.`,
    );
  return lines.join("\n");
}
