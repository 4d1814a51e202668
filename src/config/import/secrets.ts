/**
 * Inline secrets in an imported entry: literal values (not `${VAR}` references) that look like credentials, by their
 * name or their shape. Only their keys are reported, never the values: `/mcp import` shows them so a user can move
 * them into the environment. Pure.
 */
import { isPlainValue } from "../../common/redact.ts";
import { isObject, type JsonObject } from "../../common/values.ts";

const SECRET_NAME = /token|secret|key|password|passwd|auth|credential/i;

/** Shapes of well-known credentials, matched whatever the key is called. */
const SECRET_VALUES: readonly RegExp[] = [
  /^(?:bearer|basic|token)\s+\S{8,}/i,
  /^sk-[A-Za-z0-9_-]{16,}/,
  /^(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}/,
  /^gh[pousr]_[A-Za-z0-9]{20,}/,
  /^github_pat_[A-Za-z0-9_]{20,}/,
  /^glpat-[A-Za-z0-9_-]{20,}/,
  /^xox[abposr]-[A-Za-z0-9-]{10,}/,
  /^AKIA[0-9A-Z]{16}$/,
  /^AIza[0-9A-Za-z_-]{35}$/,
  /^eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\./,
  // A connection string with a password: `postgres://user:pass@host/db`.
  /^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:[^/\s@]+@/i,
];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A file path: long, mixed letters and digits, so random-looking by entropy alone (`/srv/app2/bin/server-v3.mjs`),
 * yet no credential. Absolute, home- or dot-relative, or ending in a file extension after a directory.
 */
const PATH = /^(?:\.{0,2}\/|~\/)|\/[^/]*\.[A-Za-z][A-Za-z0-9]{0,4}$/;

function entropyBitsPerChar(text: string): number {
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** A literal that looks like a credential by its shape: a known prefix, or a long random-looking token. */
export function looksLikeSecretValue(value: string): boolean {
  const v = value.trim();
  if (SECRET_VALUES.some((re) => re.test(v))) return true;
  return (
    v.length >= 32 &&
    /^[A-Za-z0-9+/=_.-]+$/.test(v) &&
    /[A-Za-z]/.test(v) &&
    /[0-9]/.test(v) &&
    !UUID.test(v) &&
    !PATH.test(v) &&
    entropyBitsPerChar(v) >= 3.5
  );
}

/** False for a value that refers to something else: a `${VAR}`, or an opencode `{file:…}` left as written. */
function isLiteral(value: string): boolean {
  return !value.includes("${") && !/\{file:[^}]*\}/.test(value);
}

/** The keys (`env.X`, `headers.Y`, `args[2]`, `url`, `auth.clientSecret`) whose literal values look like secrets. */
export function findInlineSecrets(entry: JsonObject): string[] {
  const found: string[] = [];
  for (const field of ["env", "headers"]) {
    const map = entry[field];
    if (!isObject(map)) continue;
    for (const [key, value] of Object.entries(map)) {
      if (typeof value !== "string" || !isLiteral(value)) continue;
      if (looksLikeSecretValue(value) || (SECRET_NAME.test(key) && !isPlainValue(value))) found.push(`${field}.${key}`);
    }
  }
  const args = entry.args;
  if (Array.isArray(args)) {
    args.forEach((arg: unknown, i) => {
      if (typeof arg === "string" && isLiteral(arg) && argHoldsSecret(arg, i > 0 ? args[i - 1] : undefined))
        found.push(`args[${i}]`);
    });
  }
  if (typeof entry.url === "string" && isLiteral(entry.url) && urlHoldsSecret(entry.url)) found.push("url");
  if (isObject(entry.auth) && typeof entry.auth.clientSecret === "string" && isLiteral(entry.auth.clientSecret))
    found.push("auth.clientSecret");
  return found;
}

/** An argument that carries a credential: `--api-key=…`, the value after `--token`, or a credential-shaped literal. */
function argHoldsSecret(arg: string, previous: unknown): boolean {
  const assignment = /^--?([A-Za-z0-9_-]+)=(.*)$/.exec(arg);
  if (assignment)
    return (SECRET_NAME.test(assignment[1]!) && !isPlainValue(assignment[2]!)) || looksLikeSecretValue(assignment[2]!);
  // A variable set on the command line: docker's `-e DB_PASSWORD=…`, `env API_KEY=… server`.
  const variable = /^([A-Za-z_]\w*)=(.*)$/.exec(arg);
  if (variable && SECRET_NAME.test(variable[1]!) && !isPlainValue(variable[2]!)) return true;
  const afterSecretFlag =
    typeof previous === "string" && /^--?[A-Za-z][A-Za-z0-9_-]*$/.test(previous) && SECRET_NAME.test(previous);
  return (afterSecretFlag && !arg.startsWith("-") && !isPlainValue(arg)) || looksLikeSecretValue(arg);
}

/** A key in a path may be shorter than a value's: Slack's webhook ends in 24 letters and digits, no word among them. */
const pathKey = (segment: string) =>
  looksLikeSecretValue(segment) ||
  (/^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9]{20,}$/.test(segment) && entropyBitsPerChar(segment) >= 3.5);

/** The segments of a URL's path shaped like credentials: a key in the path, as Zapier's is (`/api/mcp/s/<key>/mcp`). */
export function pathSecrets(url: string): string[] {
  return URL.canParse(url) ? new URL(url).pathname.split("/").filter(pathKey) : [];
}

function urlHoldsSecret(url: string): boolean {
  if (!URL.canParse(url)) return false;
  const parsed = new URL(url);
  if (parsed.password !== "" || pathSecrets(url).length > 0) return true;
  for (const [name, value] of parsed.searchParams)
    if ((SECRET_NAME.test(name) && !isPlainValue(value)) || looksLikeSecretValue(value)) return true;
  return false;
}
