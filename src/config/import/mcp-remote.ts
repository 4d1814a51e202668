/**
 * An entry that runs `mcp-remote`, the stdio proxy clients without remote support use to reach a remote server
 * (`npx mcp-remote https://mcp.example.com/sse --header "Authorization: Bearer ${TOKEN}"`), imported as the remote
 * entry it stands for: the bridge connects to remote servers itself and signs in to them with OAuth in pi, without a
 * Node process per server or mcp-remote's own sign-in (a browser opened by a process pi cannot see). Pure.
 */
import { programName } from "../../common/text.ts";
import { isObject, type JsonObject } from "../../common/values.ts";
import { looksLikeSecretValue, pathSecrets } from "./secrets.ts";

/** Where what could not be carried over is said (./convert.ts's `Notes`). */
type Notes = { add(note: string): void };

/** mcp-remote's flags the import reads, each with a value; after them, the valued ones it leaves out (with a note). */
const VALUE_FLAGS = new Set([
  "--header",
  "--transport",
  "--static-oauth-client-info",
  "--static-oauth-client-metadata",
]);
const NOTED_VALUE_FLAGS = new Set(
  "--header-file --resource --host --auth-timeout --ignore-tool --connect-timeout --headers-timeout --body-timeout".split(
    " ",
  ),
);

/** The package's name in `npx`'s arguments (`mcp-remote`, `mcp-remote@latest`), and what follows it. */
function proxyArgs(entry: JsonObject): string[] | undefined {
  const { command, args = [] } = entry;
  if (typeof command !== "string" || !Array.isArray(args) || !args.every((a) => typeof a === "string"))
    return undefined;
  const program = programName(command);
  // Windows' `cmd /c npx mcp-remote …`, as guides for Claude Desktop on Windows write it.
  if (program === "cmd" && /^\/c$/i.test(args[0] ?? "")) return proxyArgs({ command: args[1], args: args.slice(2) });
  if (program === "mcp-remote") return args;
  if (program !== "npx" && program !== "bunx") return undefined;
  const at = args.findIndex((a) => !a.startsWith("-"));
  return at >= 0 && /^mcp-remote(@[\w.-]+)?$/.test(args[at]!) ? args.slice(at + 1) : undefined;
}

/** The remote entry an `mcp-remote` entry stands for, or undefined when the entry is something else. */
export function remoteOfProxy(entry: JsonObject, notes: Notes): JsonObject | undefined {
  const args = proxyArgs(entry);
  const url = args?.find((a) => /^https?:\/\//i.test(a));
  if (!args || !url) return undefined;
  // mcp-remote reads `${NAME}` in its arguments from its own `env`, which the remote entry does not have.
  const env = isObject(entry.env) ? entry.env : {};
  const expand = (text: string) =>
    text.replace(/\$\{(\w+)\}/g, (whole, name: string) => (typeof env[name] === "string" ? env[name] : whole));
  const remote: JsonObject = { url };
  const headers: Record<string, string> = {};
  const auth: JsonObject = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const value = args[i + 1];
    if (arg === url) continue;
    if (VALUE_FLAGS.has(arg) && value !== undefined) {
      i++;
      if (arg === "--header") {
        const colon = value.indexOf(":");
        if (colon > 0) headers[value.slice(0, colon).trim()] = expand(value.slice(colon + 1).trim());
        else {
          // Its first word, unless a key: the rest may be a header's value (`Authorization=Bearer …`).
          const word = value.replace(/[\s=].*$/s, "…");
          const shown = looksLikeSecretValue(word) ? "***" : word;
          notes.add(`mcp-remote's \`--header ${shown}\` is not \`Name: value\` and was left out`);
        }
      } else if (arg === "--transport") {
        if (value === "sse-only") remote.type = "sse";
        if (value === "http-only") remote.type = "http";
      } else oauthClient(arg, expand(value), auth, notes);
    } else if (/^\d+$/.test(arg)) auth.callbackPort = Number(arg);
    else {
      if (NOTED_VALUE_FLAGS.has(arg) && value !== undefined) i++;
      // Named without a value written in it (`--header=Authorization: Bearer …`), nor a bare key.
      const word = arg.replace(/=.*$/s, "=…");
      notes.add(
        `mcp-remote's \`${looksLikeSecretValue(word) ? "***" : word}\` is not needed by mcp-bridge and was left out`,
      );
    }
  }
  for (const name of Object.keys(env))
    if (!args.some((arg) => arg.includes(`\${${name}}`)))
      notes.add(`\`env.${name}\` was set for mcp-remote's process only and was left out`);
  if (Object.keys(headers).length) remote.headers = headers;
  if (Object.keys(auth).length) remote.auth = auth;
  // Without its userinfo, query, fragment and a path segment shaped like a key (notes never quote a value).
  const reached = url.replace(/\/\/[^/?#]*@/, "//").replace(/[?#].*$/s, "");
  notes.add(
    `ran \`mcp-remote\` to reach ${pathSecrets(url).reduce((text, key) => text.split(key).join("***"), reached)}: imported as that remote server, which mcp-bridge connects to itself (\`/mcp auth\` signs in where it asks)`,
  );
  return remote;
}

/** `--static-oauth-client-info` (`client_id`, `client_secret`) and `--static-oauth-client-metadata` (`scope`). */
function oauthClient(flag: string, value: string, auth: JsonObject, notes: Notes): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    // `@/path/to/file.json`, or JSON that does not parse.
  }
  if (!isObject(parsed)) {
    notes.add(`mcp-remote's \`${flag}\` was not JSON written in the entry and was left out`);
    return;
  }
  const { client_id: id, client_secret: secret, scope, ...rest } = parsed;
  if (typeof id === "string") auth.clientId = id;
  if (typeof secret === "string") auth.clientSecret = secret;
  if (typeof scope === "string") auth.scopes = scope.split(/\s+/).filter(Boolean);
  for (const key of Object.keys(rest)) notes.add(`\`${key}\` of mcp-remote's \`${flag}\` was left out`);
}
