/**
 * The pure parts of `/mcp add`: a name suggested from a URL or command, a command line split into words, and the
 * config entry the answers make. Pure.
 */
import { type Environment, substituteVars } from "./substitute.ts";
import type { TransportKind } from "./types.ts";

/** The transports `/mcp add` offers: a remote server is added as `http`, which falls back to legacy SSE by itself. */
export type AddTransport = Exclude<TransportKind, "sse">;
export type AddAuth =
  | { kind: "none" }
  | { kind: "bearer"; variable: string }
  | { kind: "api-key"; header: string; variable: string }
  | { kind: "oauth" };

export interface AddAnswers {
  transport: AddTransport;
  /** The URL (http) or the command line (stdio). */
  endpoint: string;
  auth: AddAuth;
  /** A local server's variables, by name: its `env` passes each from pi's environment. */
  variables?: readonly string[];
}

/** Words of a command line: whitespace separates, quotes group; a backslash escapes only a space or quote (in double
 * quotes `"` and `\\`), so Windows paths (`C:\bin\x.exe`, `\\host\share`) keep theirs. */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    if (quote) {
      if (char === quote) quote = undefined;
      else if (char === "\\" && quote === '"' && (line[i + 1] === '"' || line[i + 1] === "\\")) word += line[++i];
      else word += char;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      inWord = true;
      if (char === '"' || char === "'") quote = char;
      else word += char === "\\" && /[\s"']/.test(line[i + 1] ?? "") ? line[++i] : char;
    }
  }
  if (inWord) words.push(word);
  return words;
}

const NOISE = new Set("mcp www api server app com co io dev net org sse http https".split(" "));
const VALUED = new Set("-e --env -v --volume --name --env-file -p --from --with --directory".split(" "));
const RUNNERS = new Set(
  "npx bunx pnpx uvx uv node python python3 deno bun docker run -y --yes exec dlx pnpm yarn".split(" "),
);

function clean(name: string): string {
  return name
    .toLowerCase()
    .replace(/\.(m?js|ts|py|sh|exe)$/, "")
    .replace(/^(mcp|server)[-_]+|[-_]+(mcp|server)$/g, "")
    .replace(/^(mcp|server)[-_]+|[-_]+(mcp|server)$/g, "")
    .replace(/[^a-z0-9_-]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

/** A short name for a server: the telling part of a URL's host or path, or of the package or script a command runs. */
export function suggestServerName(answers: Pick<AddAnswers, "transport" | "endpoint">): string {
  if (answers.transport === "http") {
    if (!URL.canParse(answers.endpoint)) return "remote";
    const url = new URL(answers.endpoint);
    const labels = url.hostname.split(".").filter((l) => !NOISE.has(l) && !/^\d+$/.test(l));
    const fromHost = labels.length > 1 ? labels[labels.length - 2] : labels[0];
    const local = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
    const name = clean(fromHost && !local ? fromHost : (url.pathname.split("/").find((p) => p && !NOISE.has(p)) ?? ""));
    return name || "remote";
  }
  const runnerOrOption = (w: string) =>
    RUNNERS.has((w.split(/[/\\]/).pop() ?? w).replace(/\.exe$/, "")) || w.startsWith("-");
  const words = splitCommandLine(answers.endpoint);
  // Not an option's value (`docker run -e GITHUB_TOKEN -v /a:/b image`).
  const target = words.find((w, i) => !runnerOrOption(w) && !VALUED.has(words[i - 1] ?? "")) ?? "";
  // `@scope/server-github@1.2` → github; `/path/to/db-server.mjs` → db; `mcp-server-fetch` → fetch; `@acme/mcp` → acme;
  // `weather/build/index.js` → weather.
  const parts = target.replace(/(.)@[^@/\\]*$/, "$1").match(/[^/\\]+/g) ?? [];
  let name = clean((parts.pop() ?? "").replace(/^server-|^mcp-server-/, ""));
  while (/^(mcp|server|index|main|build|dist|src|lib)?$/.test(name) && parts.length)
    name = clean(parts.pop()!.replace(/^@/, ""));
  return name || "local";
}

/** The config entry for the answers. Secrets stay in the environment: headers refer to them as `${VAR}`. */
export function buildEntry(answers: AddAnswers): Record<string, unknown> {
  if (answers.transport === "stdio") {
    const [command = "", ...args] = splitCommandLine(answers.endpoint);
    const env = Object.fromEntries((answers.variables ?? []).map((name) => [name, `\${${name}}`]));
    return { command, ...(args.length ? { args } : {}), ...(Object.keys(env).length ? { env } : {}) };
  }
  const entry: Record<string, unknown> = { url: answers.endpoint.trim() };
  const auth = answers.auth;
  if (auth.kind === "bearer") entry.headers = { Authorization: `Bearer \${${auth.variable}}` };
  else if (auth.kind === "api-key") entry.headers = { [auth.header]: `\${${auth.variable}}` };
  else if (auth.kind === "oauth") entry.auth = "oauth";
  else entry.auth = false;
  return entry;
}

/** What a newly added entry still needs: its `${VAR}`s without a default that the environment does not set, and how. */
export function unsetVariablesNotice(name: string, entry: Record<string, unknown>, env: Environment) {
  const { missing, empty } = substituteVars(JSON.stringify(entry), env, "");
  const unset = [...missing, ...empty];
  if (unset.length === 0) return undefined;
  const exports = unset.map((n) => `export ${n}=…`).join("; ");
  const which = `${unset.join(", ")}, which ${unset.length === 1 ? "is" : "are"} not set`;
  return `'${name}' needs ${which}. Set ${unset.join(", ")} in the environment pi starts in (e.g. \`${exports}\` in your shell profile), then /reload.`;
}
