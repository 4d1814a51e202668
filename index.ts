/**
 * mcp-bridge's entry, the file pi's manifest names; the wiring is in src/extension.ts.
 *
 * A published package carries that wiring and all it imports bundled, dist/mcp-bridge.js and the chunks it loads on
 * first use (scripts/build-bundle.mjs, run by `npm pack` and `npm publish`): pi's loader, jiti, then reads a few
 * modules instead of some 170 at each start. A checkout has no dist/ and runs the sources. Either is loaded
 * through a dynamic import(), which jiti rewrites to its own, so its mapping of pi's packages and typebox to pi's own
 * copies holds inside the bundle as well.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

const BUNDLE = "./dist/mcp-bridge.js";
const SOURCES = "./src/extension.ts";

export default async function mcpBridge(pi: ExtensionAPI): Promise<void> {
  const entry = existsSync(fileURLToPath(new URL(BUNDLE, import.meta.url))) ? BUNDLE : SOURCES;
  const extension = (await import(entry)) as { default: (pi: ExtensionAPI) => Promise<void> };
  await extension.default(pi);
}
