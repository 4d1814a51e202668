/**
 * Tool-name patterns as configs write them (`autoApprove`, `toolExposure`): `*` for any run of characters, `?` for one.
 * Pure.
 */

/**
 * Whether `name` matches `pattern`, where `*` stands for any run of characters (none included) and `?` for exactly one;
 * every other character stands for itself, case included. No regular expression: at most pattern × name steps.
 */
export function matchesToolPattern(pattern: string, name: string): boolean {
  let p = 0;
  let n = 0;
  let star = -1;
  let resume = 0;
  while (n < name.length) {
    if (p < pattern.length && (pattern[p] === "?" || pattern[p] === name[n])) {
      p++;
      n++;
    } else if (p < pattern.length && pattern[p] === "*") {
      star = p++;
      resume = n;
    } else if (star !== -1) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (pattern[p] === "*") p++;
  return p === pattern.length;
}

/** A pattern with no wildcard: it names one tool. */
export function isExactName(pattern: string): boolean {
  return !pattern.includes("*") && !pattern.includes("?");
}
