/**
 * mcp-bridge's entry, the file pi's manifest names; the wiring is in src/extension.ts.
 *
 * A published package carries that wiring and all it imports bundled, dist/mcp-bridge.js and the chunks it loads on
 * first use (scripts/build-bundle.mjs, run by `npm pack` and `npm publish`), which Node imports once a process; pi's
 * loader (jiti) would read some 170 modules at each start. A checkout has no dist/ and runs the sources through pi's
 * loader. pi's loader maps pi's packages and typebox to the running pi's own copies in what it loads (this file, the
 * sources), but not in the bundle, which Node imports: so this file imports each of them the bundle uses, as
 * dist/pi-modules.json lists them, and hands them over under a symbol the bundle reads them from.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

const BUNDLE = "./dist/mcp-bridge.js";
const PI_MODULES = "./dist/pi-modules.json";
const SOURCES = "./src/extension.ts";
const HANDED = Symbol.for("mcp-bridge.pi-modules");

export default async function mcpBridge(pi: ExtensionAPI): Promise<void> {
  const bundled = existsSync(fileURLToPath(new URL(BUNDLE, import.meta.url)));
  const handed = globalThis as Record<symbol, unknown>;
  // First load only: Node keeps the bundle a process imported once (a /reload loads this file again) as it was.
  if (bundled && !handed[HANDED]) {
    const names = JSON.parse(readFileSync(new URL(PI_MODULES, import.meta.url), "utf8")) as string[];
    handed[HANDED] ??= Object.fromEntries(await Promise.all(names.map(async (n) => [n, await import(n)] as const)));
  }
  const extension = (await import(bundled ? BUNDLE : SOURCES)) as { default: (pi: ExtensionAPI) => Promise<void> };
  await extension.default(pi);
}
