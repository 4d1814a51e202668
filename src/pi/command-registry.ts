/**
 * `/mcp add` from the MCP registry: search it, pick a server and the way to run or reach it, answer what it needs,
 * name it. The entry comes from a third party's description, so it is shown (the command it runs, or the URL) and
 * confirmed before ./command-config.ts saves it.
 */
import type { ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { errorMessage } from "../common/errors.ts";
import { shown, SHOWN } from "../common/terminal-text.ts";
import { suggestServerName } from "../config/add-server.ts";
import { registryUrl, searchRegistry } from "../config/registry/registry-search.ts";
import { registryEntry, registryWays, type RegistryServer } from "../config/registry/server-json.ts";
import type { JsonObject } from "../common/values.ts";
import { askServerName, type CommandDeps } from "./command-context.ts";

/** One line of the pick list: the server's name, version and what it says it does. */
function serverLine(server: RegistryServer): string {
  const about = server.description ?? server.title ?? "";
  return shown(`${server.name}${server.version ? ` ${server.version}` : ""}${about ? ` — ${about}` : ""}`, 160, "line");
}

/** What an entry will do, for the user to confirm: the command line or URL, and the variables it reads. */
function entrySummary(entry: JsonObject): string {
  const runs = entry.url
    ? `connects to ${String(entry.url)}`
    : `runs: ${[entry.command, ...((entry.args as string[]) ?? [])].join(" ")}`;
  const names = Object.keys({ ...(entry.env as object), ...(entry.headers as object) });
  return `${runs}${names.length ? `\nwith ${names.join(", ")} (from your environment where written \${…})` : ""}`;
}

/** The server the user picked from the registry, as a name and an entry to save; undefined if they gave up. */
export async function registryAnswers(
  deps: CommandDeps,
  ctx: ExtensionCommandContext,
): Promise<{ name: string; entry: JsonObject } | undefined> {
  const query = (await ctx.ui.input("Search the MCP registry for", "github"))?.trim();
  if (!query) return undefined;
  const base = registryUrl(deps.env);
  let servers: RegistryServer[];
  try {
    servers = await searchRegistry(base, query, ctx.signal);
  } catch (error) {
    // Its answer may be quoted (`Unexpected token … is not valid JSON`), terminal escapes and all.
    return void ctx.ui.notify(shown(errorMessage(error), SHOWN.body), "error");
  }
  if (!servers.length) {
    ctx.ui.notify(`No server in the MCP registry at ${base} matches '${shown(query, 80, "line")}'.`, "warning");
    return undefined;
  }
  const lines = servers.map(serverLine);
  const picked = await ctx.ui.select("Which server?", lines);
  const server = servers[lines.indexOf(picked ?? "")];
  if (!server) return undefined;
  const ways = registryWays(server);
  if (!ways.length) {
    const kinds = [
      ...server.packages.map((p) => `${p.registryType} (${p.transport})`),
      ...server.remotes.map((r) => r.type),
    ];
    return void ctx.ui.notify(
      shown(
        `'${server.name}' offers no way mcp-bridge can run or reach it (${kinds.join(", ") || "no package or URL"}): npm, PyPI and container packages over stdio, and remote URLs, are supported. Its entry can be written by hand.`,
        SHOWN.body,
      ),
      "warning",
    );
  }
  const labels = ways.map((way) => shown(way.label, SHOWN.line, "line"));
  const way = ways.length === 1 ? ways[0] : ways[labels.indexOf((await ctx.ui.select("How?", labels)) ?? "")];
  if (!way) return undefined;
  const answers: Record<string, string> = {};
  for (const question of registryEntry(way).questions) {
    const prompt = shown(question.prompt, SHOWN.line, "line");
    const choices = question.choices?.map((choice) => shown(choice, SHOWN.line, "line"));
    const answer = choices?.length
      ? question.choices![choices.indexOf((await ctx.ui.select(prompt, choices)) ?? "")]
      : await ctx.ui
          .input(prompt, shown(question.default ?? "", SHOWN.line, "line"))
          .then((typed) => (typed === undefined ? undefined : typed.trim() || question.default));
    if (!answer) return undefined;
    answers[question.key] = answer;
  }
  const { entry } = registryEntry(way, answers);
  const [namespace = "", endpoint = ""] = server.name.split("/");
  // `com.acme/mcp`, named only for what it is, is named for its namespace: acme.
  const own = suggestServerName({ transport: "stdio", endpoint });
  const host = `https://${namespace.split(".").reverse().join(".")}`;
  const suggested = /^(mcp|server|local)$/.test(own) ? suggestServerName({ transport: "http", endpoint: host }) : own;
  const name = await askServerName(deps, ctx, suggested);
  if (!name) return undefined;
  const confirmed = await ctx.ui.confirm(`Add '${name}'?`, shown(entrySummary(entry), SHOWN.view));
  return confirmed ? { name, entry } : undefined;
}
