/**
 * Keeping secrets out of everything the bridge shows, logs or hands on. Two layers: the values known to be secret
 * (what `${VAR}`s resolved to, inline `env` values, header values, URL passwords and query values, OAuth tokens,
 * client secrets and authorization codes) are replaced wherever they appear, also percent-encoded; and what looks like
 * a credential by its shape (URL userinfo, `?access_token=…`, `"refresh_token": "…"`, `API_KEY=…`, `Bearer …`) is
 * replaced even when nobody told us the value. A `Redactor` holds one server's known secrets and is applied where text
 * leaves: log lines, events, notices, `/mcp` views, errors and tool results. Pure.
 */
import { stripControls } from "./terminal-text.ts";

/** Values shorter than this are too common to redact without mangling ordinary text. */
export const MIN_SECRET_LENGTH = 4;

const MASK = "***";
/** Long enough to hide, and no boolean (a `${READ_ONLY}` of `true`): hiding it would hide every `true` said. */
const hideable = (value: string) => value.length >= MIN_SECRET_LENGTH && !/^(?:true|false)$/i.test(value);
const longestFirst = (a: string, b: string) => b.length - a.length;

/** Replaces every secret in `text` with `***`, however it is written (see `formsOf`). */
export function redact(text: string, secrets: readonly string[]): string {
  return masked(text, formsOf(secrets));
}

/** `text` as a URL carries it (a URL's query writes `'` as `%27`, a form a space as `+`); itself with a lone surrogate. */
function percentEncoded(text: string): string[] {
  try {
    const encoded = encodeURIComponent(text);
    if (!/[ !'()~]/.test(text)) return [encoded];
    return [encoded, encoded.replace(/'/g, "%27"), new URLSearchParams([["", text]]).toString().slice(1)];
  } catch {
    return [text];
  }
}

/**
 * Every way the secrets may stand in text, each once, longest first (a secret containing another is hidden whole): as
 * they are, as a URL or a form carries them, and as JSON quotes them (`saying "…"`, a `"` or `\` in it escaped). Made
 * when secrets are added, not for every text.
 */
function formsOf(secrets: Iterable<string>): string[] {
  const forms = new Set<string>();
  for (const secret of [...secrets].flatMap(withLines))
    if (hideable(secret))
      for (const form of [secret, ...percentEncoded(secret), JSON.stringify(secret).slice(1, -1)]) forms.add(form);
  return [...forms].sort(longestFirst);
}

/**
 * A secret, and each long line of one of several (a PEM key's): a server's stderr and log come a line at a time, in
 * which the whole never stands; also at a written `\n` (a key in a variable, which the server turns into lines). Not a
 * PEM key's `-----BEGIN …-----` line, which hides nothing.
 */
const withLines = (secret: string) =>
  [secret, ...secret.split(/\\n|\n/).map((line) => line.trim())].filter(
    (line, i) => i === 0 || (line.length >= 16 && !/^-----/.test(line) && line !== secret),
  );

/** `text` with every one of `forms` (longest first) replaced with `***`. */
function masked(text: string, forms: readonly string[]): string {
  let out = text;
  for (const form of forms) if (out.includes(form)) out = out.split(form).join(MASK);
  return out;
}

/**
 * A value that cannot be a credential even under a secret-sounding name: empty, a boolean, a short number, a path, a
 * URL with no userinfo and no query (`AUTH_ENABLED=true`, a key file's path). Such a value resolved from a variable (a
 * `${HOME}` in an argument) is still hidden in messages, but not in tool results, where hiding every path under the
 * home directory would make a file server's answers useless.
 */
export function isPlainValue(value: string): boolean {
  const v = value.trim();
  if (v === "" || /^(?:true|false|yes|no|on|off|null|none|\d{1,6})$/i.test(v)) return true;
  if (/^(?:\/|~[/\\]|\.{1,2}[/\\]|[A-Za-z]:[/\\])/.test(v) && !isBase64Key(v)) return true;
  if (/^https?:\/\//i.test(v) && !/^[a-z]+:\/\/[^/@]*@/i.test(v) && !v.includes("?")) return true;
  return false;
}

/**
 * Base64 that starts with `/` (one AWS secret key in 64 does), not a path: its letters change case, or turn to digits,
 * at every third character or more often, where a path's change at its words' starts.
 */
const isBase64Key = (v: string) =>
  /^[A-Za-z0-9+/=]{20,}$/.test(v) &&
  (v.match(/[a-z](?=[A-Z0-9])|[A-Z](?=[a-z0-9])|[0-9](?=[A-Za-z])/g)?.length ?? 0) >= v.length * 0.35;

/**
 * Names (of query parameters, JSON keys, variables, headers) whose values are credentials: `access_token`, `API_KEY`,
 * `DB_PASS`, `MYSQL_PWD`, … (not `bypass`, a `first pass: 1200 ms`, nor the shell's `PWD`).
 */
// Tried from a name's start only: tried from each word of a long kebab-case line, each try ran to the line's end.
const SECRET_NAME =
  "(?<![A-Za-z0-9_-])[A-Za-z0-9_-]*(?:token|secret|password|passwd|api[_-]?key|apikey|credentials?|authorization|cookie|verifier|(?:private|secret|access)[_-]?key|passphrase|(?<=[_-])(?:pass|pwd))";
/** In a URL also these: an authorization code, an API key or a signature (a signed URL's `X-Amz-Signature` too). */
const SECRET_QUERY_NAME = `(?:${SECRET_NAME}|code|key|[A-Za-z0-9_-]*sig|[A-Za-z0-9_-]*signature)`;

/**
 * `$1***` and the punctuation that ended the value (`?api_key=…, which`, `(API_KEY=…)`): a token does not end in it, and
 * the sentence reads wrong without it. Trimmed in a loop, since a regex for it backtracks on a long run of it.
 */
const maskValue = (_match: string, name: string, value: string) => {
  let end = value.length;
  while (end > 0 && ",.;:!?)]}".includes(value[end - 1]!)) end--;
  return name + MASK + value.slice(end);
};

const SECRET_SHAPES: Array<[RegExp, string | typeof maskValue]> = [
  // `scheme://user:pass@host`, `https://token@host`: the whole userinfo, to the authority's last `@` (a password may
  // have one). A scheme is short: tried from every word of a long kebab-case line, an unbounded one ran to its end.
  [/(\b[A-Za-z][A-Za-z0-9+.-]{0,31}:\/\/)[^\s/?#"'<>]+@/g, `$1${MASK}@`],
  // `?access_token=…`, `&code=…` in a URL or a form body; `#code=…` in a fragment (an implicit or fragment redirect).
  [new RegExp(`([?&#]${SECRET_QUERY_NAME}=)([^&#\\s"'<>]+)`, "gi"), maskValue],
  // `"refresh_token": "…"` in JSON (a token endpoint's answer quoted in an error).
  // Not a `${VAR}` reference: a message that shows the `env` entry to write names the variable, not its value.
  // Or one a cut ends in (`…` at the end of a long log line).
  [new RegExp(`("${SECRET_NAME}"\\s*:\\s*")(?!\\$\\{\\w+\\}")(?:[^"\\\\]|\\\\.)+("|…$)`, "gi"), `$1${MASK}$2`],
  // Or a number (`"password": 12345678`, as a config that was dumped holds a numeric one).
  [new RegExp(`("${SECRET_NAME}"\\s*:\\s*)\\d{4,}\\b`, "gi"), `$1${MASK}`],
  // `'X-API-Key': '…'`, `apiKey: '…'` (`"…"` for a value with a `'`): an object as Node or Python prints it, or cut off.
  [
    new RegExp(`((?:'${SECRET_NAME}'|${SECRET_NAME})\\s*:\\s*(['"]))(?:(?!\\2)[^\\\\]|\\\\.)+(\\2|…$)`, "gi"),
    `$1${MASK}$3`,
  ],
  // `API_KEY=…`, `--client-secret=…` on a command line or a log line; `API_KEY="…"` to its quote (`\"…\"` in JSON).
  [
    new RegExp(
      `(${SECRET_NAME}=\\\\?["']?)((?<=")(?:[^"\\n\\\\]|\\\\(?!"))+(?=\\\\?")|(?<=')[^'\\n]+(?=')|[^\\s&"']+)`,
      "gi",
    ),
    maskValue,
  ],
  // `aws_secret_access_key = …`, `password = "…"` as an INI or TOML file (AWS's credentials file) has it: a value with a
  // digit or a symbol, or quoted (`token = None` is code).
  [
    new RegExp(
      `(${SECRET_NAME}(?:[ \\t]+=[ \\t]*|=[ \\t]+))(?:"[^"\\n]+"|'[^'\\n]+'|(?=[^\\s,;]{0,256}[0-9=/+])[^\\s"',;]{4,})`,
      "gi",
    ),
    `$1${MASK}`,
  ],
  // A header as a server logs it: `X-API-Key: sk-…`, a cookie's every pair to the line's end. A value without a digit
  // or a `=` (in its first 256 characters: not to the line's end from every name), or shorter than a key, is prose
  // (`token: invalid_client`, `password: 8 characters`); a scheme's word is for the pattern below.
  [
    new RegExp(
      `(${SECRET_NAME}:[ \\t]*)(?!['"]|\\$\\{|(?:Bearer|Basic|DPoP|token)\\b)(?=[^\\s,;]{0,256}[0-9=])(?=[^\\s"',;]{4})(?:(?<=cookie:[ \\t]*)[^\\n"]+|[^\\s"',;]+)`,
      "gi",
    ),
    `$1${MASK}`,
  ],
  // curl's `-u user:password`: the password.
  [/((?:^|\s)(?:-u|--user)[\s=]+["']?[^\s:"']+:)(?=[^\s"']*[A-Za-z])[^\s"']+/g, `$1${MASK}`],
  // `Authorization: Bearer …`, `Basic …`, `DPoP …`, GitHub's `token …`: a token has a digit, a symbol or a capital after
  // its first letter (prose such as "Basic authentication" has none of these); curl's lowercase `bearer` too.
  [
    /\b([Bb]earer|Basic|DPoP|[Tt]oken)\s+(?=[A-Za-z]*[0-9._~+/=-]|[A-Za-z][a-z]*[A-Z])[A-Za-z0-9._~+/=-]{8,}/g,
    `$1 ${MASK}`,
  ],
  // Any other scheme's token in an `Authorization:` header line (Discord's `Bot …`, Elastic's `ApiKey …`, Okta's `SSWS …`).
  [/\b((?:proxy-)?authorization:[ \t]*[A-Za-z][\w-]*[ \t]+)(?=[^\s"',;]*[0-9=._~+/-])[^\s"',;]{8,}/gi, `$1${MASK}`],
  // A JWT without a name or a scheme before it (an ID or access token a server logs as it is): `eyJ…` is `{"` in base64.
  [/(?<![\w-])eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]*/g, MASK],
];

/**
 * What every shape above needs: `=` (a query or `NAME=` value), `"` (JSON), `:` (a URL's userinfo), a scheme's word
 * (`Bearer`, `Basic`, `DPoP`, `token`) or a JWT's start. Text with none of them (a tool name, a method, most log fields)
 * is left as it is without running the patterns.
 */
const SHAPE_HINT = /[=":]|Bearer|Basic|DPoP|token|eyJ/i;

/** Hides what looks like a credential by its shape, whatever its value. */
export function redactShapes(text: string): string {
  if (!SHAPE_HINT.test(text)) return text;
  let out = text;
  for (const [pattern, replacement] of SECRET_SHAPES) out = out.replace(pattern, replacement as string);
  return out;
}

/** Whether a blob of this type is text (`text/plain`, JSON, YAML…), which the model is shown decoded. */
export function isTextMime(mime: unknown): boolean {
  return (
    typeof mime === "string" &&
    /^text\/|[/+-]((nd)?json(l|lines)?|xml|yaml|toml|(java|type|ecma)script|csv|sql|sh)\b/.test(mime.toLowerCase())
  );
}

/** A blob's text in the charset its type names (`text/plain; charset=ISO-8859-1`); UTF-8 where it names none or an unknown one. */
export function decodedText(blob: string, mime: string): string {
  const bytes = Buffer.from(blob, "base64");
  const charset = /;\s*charset="?([\w.:-]+)/i.exec(mime)?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8").decode(bytes);
  } catch {
    return bytes.toString("utf8");
  }
}

/** Binary payloads (an image's or audio's base64 `data`, a blob) are left alone: a match inside them means nothing. */
const isBinary = (record: Record<string, unknown>, key: string) =>
  key === "blob" || (key === "data" && (record.type === "image" || record.type === "audio"));
const MAX_DEPTH = 64;
const TOO_DEEP = "(nested too deeply to show)";
/** Sets `key` as its own: a `__proto__` key (as JSON.parse makes) would set the prototype by assignment, and be lost. */
const put = (out: object, key: string, value: unknown) =>
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });

/**
 * One server's secrets, and the filter for what leaves the bridge about that server. Secrets are only ever added: a
 * value that was a secret once (a rotated key still in an old stderr line) stays hidden. Text also loses terminal
 * control sequences here, since every place it goes (a terminal, a log, the model) should not get them.
 */
export class Redactor {
  private secrets: string[] = [];
  /**
   * How the secrets may be written (`formsOf`); and, for a tool result, the forms of those that are not plain values
   * (see `result`).
   */
  private forms: string[] = [];
  private resultForms: string[] = [];
  /**
   * Whether a secret is digits too many to be a plain value, which a tool result's JSON number may hold too (an account
   * number in `structuredContent`). The bridge's own numbers in events (a pid, a count) stay numbers.
   */
  private numeric = false;

  // Made once: every tool result and log line is walked with one of them.
  private readonly textFilter = (text: string) => this.text(text);
  private readonly resultFilter = (text: string) => this.knownSecret(text);

  constructor(secrets: Iterable<string> = []) {
    this.add(secrets);
  }

  /** Adds values to hide; ones too short to redact safely, and booleans, are ignored. */
  add(values: Iterable<string>): void {
    const known = new Set(this.secrets);
    let changed = false;
    for (const value of values) {
      if (!hideable(value) || known.has(value)) continue;
      known.add(value);
      changed = true;
    }
    if (!changed) return;
    this.secrets = [...known];
    this.forms = formsOf(this.secrets);
    this.resultForms = formsOf(this.secrets.filter((secret) => !isPlainValue(secret)));
    this.numeric = this.secrets.some((secret) => /^\d{7,}$/.test(secret));
  }

  /** `text` with control sequences stripped and every secret, known or by shape, replaced with `***`. */
  text(text: string): string {
    return redactShapes(this.known(text));
  }

  /** `error`'s message and its causes' (the first five) filtered by `text()`, in place: a description names them all. */
  error(error: unknown): void {
    for (let link = error, i = 0; link instanceof Error && i < 5; link = (link as Error).cause, i++)
      link.message = this.text(link.message);
  }

  /** A copy of `value` (an event payload, log fields) with every string in it filtered by `text()`. */
  value<T>(value: T): T {
    return this.walk(value, 0, this.textFilter, false) as T;
  }

  /**
   * A tool's result for the model: control sequences stripped and the known secrets hidden, but nothing hidden by its
   * shape and no plain value (see `isPlainValue`), since a result is data (a file the tool read may rightly hold
   * `password=`, or a path under `${HOME}`); binary fields are left alone.
   */
  result<T>(value: T): T {
    return this.walk(value, 0, this.resultFilter, true) as T;
  }

  private known(text: string): string {
    return masked(stripControls(text), this.forms);
  }

  private knownSecret(text: string): string {
    return masked(stripControls(text), this.resultForms);
  }

  private walk(value: unknown, depth: number, filter: (text: string) => string, keepBinary: boolean): unknown {
    if (typeof value === "string") return filter(value);
    if (typeof value === "number" && keepBinary && this.numeric)
      return filter(`${value}`) === `${value}` ? value : filter(`${value}`);
    if (value === null || typeof value !== "object") return value;
    // Nested deeper than any real payload: a hostile one, replaced rather than walked (or stringified) without end.
    if (depth > MAX_DEPTH) return TOO_DEEP;
    // A plain array or object in which nothing changes is returned as it is: a tool result is walked on every call,
    // and most have nothing to hide. Anything else (a class instance) becomes a plain copy, as it always did.
    if (Array.isArray(value)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        const walked = this.walk(item, depth + 1, filter, keepBinary);
        if (walked !== item && !out) out = value.slice(0, i);
        out?.push(walked);
      }
      return out ?? (Object.getPrototypeOf(value) === Array.prototype ? value : [...value]);
    }
    if (value instanceof Error) return filter(value.message);
    const proto: unknown = Object.getPrototypeOf(value);
    let out: Record<string, unknown> | undefined = proto === Object.prototype ? undefined : {};
    let record = value as Record<string, unknown>;
    // A text blob, which the model is shown decoded: where its text has something to hide, it becomes that text.
    const blob = keepBinary && isTextMime(record.mimeType) ? record.blob : undefined;
    const text = typeof blob === "string" && decodedText(blob, record.mimeType as string);
    if (text && filter(text) !== text) {
      const { blob: _blob, ...rest } = record;
      record = { ...rest, text: filter(text) };
    }
    const keys = Object.keys(record);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const item = record[key];
      const walked =
        keepBinary && typeof item === "string" && isBinary(record, key)
          ? item
          : this.walk(item, depth + 1, filter, keepBinary);
      // A key may be a secret too: a map keyed by token or webhook URL.
      const name = filter(key);
      if ((walked !== item || name !== key) && !out) {
        out = {};
        for (let j = 0; j < i; j++) put(out, keys[j]!, record[keys[j]!]);
      }
      if (out) put(out, name, walked);
    }
    return out ?? record;
  }
}
