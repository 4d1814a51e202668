/**
 * A published server started without its key exits at once and says so ("Error: BRAVE_API_KEY environment
 * variable is required", "Please set SLACK_BOT_TOKEN and SLACK_TEAM_ID environment variables"). A local server gets only
 * the variables its `env` names (and PATH, HOME and a few more, as the SDK passes them), not pi's whole environment, so
 * even a key exported in the user's shell is not seen: the commonest first failure of a server from a README. This
 * finds the names such a line asks for, and the line of a server that asks for something else its entry does not give
 * ("Please provide a database URL as a command-line argument", "Usage: …"): no restart gives it either; and words how
 * to give the variables. Pure.
 */
import { quoteValue } from "../../common/text.ts";

/**
 * What a server's output asks for: variables it was not given (which of them pi's own env has, and which its `env`
 * names but takes from a variable pi's env lacks), or else the line that asks for something other (an argument, a
 * sign-in).
 */
export interface AsksFor {
  names: string[];
  inPi: string[];
  unset: { key: string; variables: string[] }[];
  request?: string;
  /** The line that asked for the first of `names`. */
  asking?: string;
  /** The line of an interactive program that found no terminal: started without its MCP server's subcommand. */
  terminal?: string;
  /** The line that says which command line starts its MCP server, and the words of it after the program's name. */
  mcpStart?: { line: string; words: string[] };
  /** The line of a package that says it is deprecated (`@railway/mcp-server is deprecated.`), naming what replaces it. */
  deprecated?: string;
}

/** A line that asks for something to be set, rather than one that mentions a variable in passing. */
const ASKS =
  /\b(?:is|are) required\b|\brequired\b.*\b(?:variables?|env)\b|\bmust be (?:set|provided|defined)\b|\bplease (?:\w+ )?(?:set|provide|define)\b|\bor (?:set|pass|export)\b|\bset\b[^.]*\benv(?:ironment)? variables?\b|\b(?:is|are|not) set\b|\bnot (?:provided|given|configured|defined|specified)\b|\bmissing\b.*\b(?:variables?|env|key|token)\b|\bno (?:[\w-]+ ){0,2}(?:key|token|secret|credentials?)s? (?:was |were )?found\b.*\b(?:pass|set|export)\b|\b(?:key|token|secret|credentials?)s? (?:was |were )?not found\b/i;
/** A warning is about something optional: the server goes on without it. */
const WARNING = /\bwarn(?:ing)?\b/i;
/** So is a setting offered as a choice: "To use a custom token location, set GOOGLE_CALENDAR_MCP_TOKEN_PATH …". */
const OPTIONAL = /\bto use a (?:custom|different)\b|\bto override\b|\bif you (?:want|wish|prefer)\b|\(optional\)/i;
/** `BRAVE_API_KEY`: capitals, digits and at least one underscore. */
const NAME = /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g;
/**
 * `Invalid environment variables {` (zod, t3-env), `Invalid environment configuration. … Details:
 * {"OBSIDIAN_API_KEY":["Required"]}` (obsidian-mcp-server): the names follow, as the keys of the object printed there.
 */
const ENV_BLOCK = /\binvalid environment (?:variables?|configuration|config)\b/i;
/**
 * Node's error codes are capitals with underscores too: `ERR_INVALID_ARG_TYPE`, and getaddrinfo's `EAI_AGAIN` (the
 * others, `ENOENT`, have none). Not every name that starts with E: `EXA_API_KEY`, `ELEVENLABS_API_KEY` are keys.
 */
const NOT_A_VARIABLE = /^(?:ERR|EAI)_/;

/**
 * The variables the lines ask for that `passed` (the environment the server was given) lacks or has empty (a README's
 * `"LINEAR_API_TOKEN": ""` left unfilled), in the order asked.
 */
export function variablesAskedFor(lines: readonly string[], passed: Readonly<Record<string, string>>): string[] {
  const given = (name: string) => Boolean(passed[name]?.trim());
  const names = new Set<string>();
  let block = false;
  for (const line of lines) {
    if (ENV_BLOCK.test(line)) block = true;
    else if (block && (line.trim() === "" || /^\s*at /.test(line))) block = false;
    if (!block && (!ASKS.test(line) || WARNING.test(line) || OPTIONAL.test(line))) continue;
    const found = [...line.matchAll(NAME)].map(([name]) => name).filter((name) => !NOT_A_VARIABLE.test(name));
    // "required via --brave-api-key, BRAVE_API_KEY, or BRAVE_API_KEY_FILE": one of them will do, the first asked for.
    const between = found.length > 1 ? line.slice(line.indexOf(found[0]!), line.lastIndexOf(found.at(-1)!)) : "";
    if (/\bor\b/.test(between)) {
      if (!found.some(given)) names.add(found[0]!);
    } else for (const name of found) if (!given(name)) names.add(name);
  }
  return [...names];
}

// "Please provide a database URL as a command-line argument", "Please run with 'auth' argument first", "Please place
// gcp-oauth.keys.json in current directory", "Invalid number of arguments", "No access token was provided", "Usage: x",
// "Environment Variables not set - please check your .env file" (@xeroapi/xero-mcp-server, naming none), "You need to
// specify a command" (@composio/mcp without `start`), yargs' "Not enough non-option arguments", "No valid authorization
// token found" (@auth0/auth0-mcp-server before its `init`), "Linear credentials not found" (@tacticlaunch/mcp-linear).
const REQUEST =
  /\bplease (?:either )?(?:provide|specify|set|pass|supply|run|configure|add|define|place|put|create|install|log ?in|sign in)\b|\b(?:invalid|wrong) number of arguments\b|\b(?:is|are) required\b|\bmissing (?:required )?(?:[\w-]+ ){0,2}(?:id|token|key|secret|credentials?|url|path|director(?:y|ies)|folder|file|arguments?|parameters?|options?|project|workspace|database)\b|[.:]\s+usage:\s|\benvironment variables? (?:(?:is|are) )?not (?:set|configured|defined)\b|\byou (?:need|have|must) to (?:specify|provide|pass|give|supply)\b|\bnot enough non-option arguments\b|\bno (?:[\w-]+ ){0,3}(?:token|key|secret|credentials?)s? (?:was |were )?found\b|\b(?:token|key|secret|credentials?)s? (?:was |were )?not found\b|\bno (?:[\w-]+ ){0,3}(?:token|key|secret|credentials?|url|path|director(?:y|ies)|folder|file|arguments?|project|workspace|database)s? (?:(?:was|were) )?(?:provided|given|supplied|specified)\b|^\s*usage:/i;

/** The line Node prints first for an uncaught error: where it was thrown (`file:///x/index.js:12`), alone. */
const THROWN_AT = /^\s*(?:file:\/\/)?\S+\.[cm]?[jt]sx?:\d+\s*$/;

/**
 * The lines without the source line Node prints below where an uncaught error was thrown: the error's own line follows,
 * and in a minified file the source line is the whole program (mcp-server-trello's names a variable it reads but does
 * not ask for).
 */
export function withoutSourceExcerpts(lines: readonly string[]): string[] {
  return lines.filter((_, i) => i === 0 || !THROWN_AT.test(lines[i - 1]!));
}

/** The first line that asks the user for something the server's start did not give, if one does. */
export function requestIn(lines: readonly string[]): string | undefined {
  const at = lines.findIndex((line) => REQUEST.test(line) && !WARNING.test(line));
  // A usage text follows the error that made the program print it (kubernetes-mcp-server: no kubeconfig context).
  const error =
    /^\s*usage:/i.test(lines[at] ?? "") && lines.slice(0, at).find((line) => /^\s*(?:error|fatal)\b/i.test(line));
  return (error || lines[at])?.trim();
}

/** "Error: stdin is not a terminal" (Codex's CLI given a subcommand it does not have), "requires a TTY". */
const TERMINAL =
  /\b(?:stdin|stdout|input) is not an? (?:terminal|tty)\b|\brequires? an? (?:interactive )?(?:terminal|tty)\b/i;

/**
 * "@railway/mcp-server is deprecated.", "This package has been deprecated": a line that opens with the package (or
 * "this package") saying so. Not npm's "npm warn deprecated x@1: …" about a dependency, nor Node's "(node:1)
 * [DEP0040] DeprecationWarning: The `punycode` module is deprecated." about a module: servers print those and run.
 */
const DEPRECATED =
  /^\s*(?:[\w@/.-]+|this (?:package|server|project|tool)) (?:(?:is|has been) deprecated|is no longer (?:maintained|supported))\b/i;

/** The line that says the program is deprecated, if one does. */
export function deprecationIn(lines: readonly string[]): string | undefined {
  return lines.find((line) => DEPRECATED.test(line))?.trim();
}

/** "Run 'xcodebuildmcp mcp' to start the MCP server.": a command-line program's usage text names its MCP subcommand. */
const MCP_START =
  /\b(?:run|use|start (?:it )?with)\s+['"`]([^'"`\n]+)['"`]\s+to (?:start|run|launch|serve)\s+(?:the |an |its )?MCP server\b/i;

/** The line that names the command line that starts the program's MCP server, if one does. */
export function mcpStartIn(lines: readonly string[]): AsksFor["mcpStart"] {
  for (const line of lines) {
    const found = MCP_START.exec(line);
    if (found) return { line: line.trim(), words: found[1]!.trim().split(/\s+/).slice(1) };
  }
  return undefined;
}

/** The line that says the program wanted a terminal, if one does. */
export function terminalWanted(lines: readonly string[]): string | undefined {
  return lines.find((line) => TERMINAL.test(line))?.trim();
}

/**
 * Of what `asks` names, the variables named after the server started with `start` (`EXA_API_KEY` for `npx -y
 * exa-mcp-server`): its own settings, not those of a program one of its tools ran. Undefined when there are none.
 */
export function ownVariables(asks: AsksFor, start: { command: string; args: readonly string[] }): AsksFor | undefined {
  const words = [start.command, ...start.args].join(" ").toLowerCase();
  const own = (name: string) => {
    const head = name.slice(0, name.indexOf("_")).toLowerCase();
    return head.length >= 3 && words.includes(head);
  };
  const names = asks.names.filter(own);
  if (!names.length) return undefined;
  return { ...asks, names, inPi: asks.inPi.filter(own), unset: asks.unset.filter(({ key }) => own(key)) };
}

/** A local server that exited asking for variables it was not given: which, and what gives them. */
export function missingVariables(
  server: { name: string; source: { path: string } },
  ended: string,
  asks: AsksFor,
  quoted: boolean,
): { reason: string; fix: string } {
  const { inPi, unset } = asks;
  const where = `\`env\` of '${server.name}' in ${server.source.path}`;
  const listed = (names: string[]) => `${names.join(" and ")} ${names.length > 1 ? "are" : "is"}`;
  const fixes: string[] = [];
  // An entry's `${VAR}` that pi's environment lacks, or a value left empty as a README wrote it.
  const fromPi = unset.filter(({ variables }) => variables.length);
  const blank = unset.filter(({ variables }) => !variables.length).map(({ key }) => key);
  if (fromPi.length) {
    const passes = fromPi.map(({ key, variables }) => `\`${key}\` from ${variables.map((n) => `\${${n}}`).join(", ")}`);
    const lacking = [...new Set(fromPi.flatMap(({ variables }) => variables))];
    fixes.push(
      `its entry passes ${passes.join(" and ")}, which pi's environment lacks: set ${lacking.join(" and ")} where pi starts (or write the value in ${where})`,
    );
  }
  if (blank.length)
    fixes.push(
      `its entry leaves ${blank.join(" and ")} empty: write the value in ${where} (or ${blank.map((key) => `"${key}": "\${${key}}"`).join(", ")}, set where pi runs)`,
    );
  const absent = asks.names.filter((name) => !unset.some(({ key }) => key === name));
  const entries = absent.map((name) => `"${name}": "\${${name}}"`).join(", ");
  const elsewhere = absent.filter((name) => !inPi.includes(name)).join(" and ");
  if (absent.length)
    fixes.push(
      inPi.length
        ? `${listed(inPi)} set where pi runs, but a local server gets only the variables its \`env\` names (and PATH, HOME and a few more): add ${entries} to ${where}${elsewhere && `, and set ${elsewhere} where pi runs (or write the value there)`}`
        : `add ${entries} to ${where}, and set ${absent.length > 1 ? "them" : "it"} where pi runs (or write the value there)`,
    );
  const given = absent.length
    ? "which its `env` does not set"
    : blank.length === asks.names.length
      ? "which its `env` leaves empty"
      : `which ${asks.names.length > 1 ? "were" : "was"} not passed to it`;
  return {
    // The line is quoted where the stderr shown below leaves it out (above a long usage text).
    reason: `it needs ${asks.names.join(" and ")}, ${given} (the process ${ended}, saying ${quoted || !asks.asking ? "so" : quoteValue(asks.asking)})`,
    fix: fixes.join("; "),
  };
}

/**
 * What a local server that exited asked for, as the reason its start failed for good and the fix; undefined if its
 * output asks for nothing. `quoted`: the line that asked is in the stderr shown with the error.
 */
export function askedFailure(
  server: { name: string; source: { path: string }; args: readonly string[] },
  ended: string,
  asks: AsksFor,
  quoted: boolean,
): { reason: string; fix: string } | undefined {
  const entry = `'${server.name}' in ${server.source.path}`;
  if (asks.names.length) return missingVariables(server, ended, asks, quoted);
  const start = asks.mcpStart;
  const program = asks.terminal ?? start?.line;
  if (program) {
    const words = start?.words.filter((word) => !server.args.includes(word)) ?? [];
    return {
      reason: `it said ${quoteValue(program)}: it ran as ${asks.terminal ? "an interactive" : "a command-line"} program, not as an MCP server (the process ${ended})`,
      fix: words.length
        ? `add what starts its MCP server to \`args\` of ${entry}: "args": ${JSON.stringify([...server.args, ...words])}`
        : `check \`args\` of ${entry} for the subcommand or flag that starts its MCP server (its README names it)`,
    };
  }
  if (asks.deprecated && !asks.request)
    return {
      reason: `its package says it is deprecated: ${quoteValue(asks.deprecated)} (the process ${ended})`,
      fix: `its output (below) names what replaces it: change \`command\` and \`args\` of ${entry} to that`,
    };
  if (!asks.request) return undefined;
  return {
    reason: `it said ${quoteValue(asks.request)} (the process ${ended})`,
    fix: `give what it asks for in \`args\` or \`env\` of ${entry} (or do what it says first)`,
  };
}
