/**
 * Module resolution hook (see ./aliases.mjs): resolves the pi 0.73 package names to pi 1.x's, from this folder. The
 * pi 1.x test pass bundles its test files with the same mapping (./run.mjs).
 */
const FROM_HERE = new URL("./package.json", import.meta.url).href;

// pi 1.x's own extension loader maps the bare `@mariozechner/pi-ai` to its compat entry, which keeps the old exports.
export const ALIASES = [
  ["@mariozechner/pi-ai/compat", "@earendil-works/pi-ai/compat"],
  ["@mariozechner/pi-ai/", "@earendil-works/pi-ai/"],
  ["@mariozechner/pi-ai", "@earendil-works/pi-ai/compat"],
  ["@mariozechner/pi-coding-agent", "@earendil-works/pi-coding-agent"],
  ["@mariozechner/pi-agent-core", "@earendil-works/pi-agent-core"],
  ["@mariozechner/pi-tui", "@earendil-works/pi-tui"],
];

export async function resolve(specifier, context, next) {
  for (const [from, to] of ALIASES) {
    if (specifier === from || (from.endsWith("/") && specifier.startsWith(from))) {
      return next(to + specifier.slice(from.length), { ...context, parentURL: FROM_HERE });
    }
  }
  return next(specifier, context);
}
