/**
 * Code loaded on first use: pi's start loads only what every session needs, and a part that brings the MCP SDK (or
 * serves a rare path) comes in through `lazy`. One import however many callers ask, and however often: pi's module
 * loader evaluates a module again at each dynamic import of it, and two at once may see each other half-loaded.
 */
export function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => (loaded ??= load());
}
