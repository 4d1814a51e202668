#!/usr/bin/env node
/**
 * Builds dist/mcp-bridge.js: src/extension.ts and every module of this package it imports, as ES modules (the entry,
 * and in dist/chunks/ what it loads on first use), which index.ts loads when it is there (see its header). Run by
 * `npm pack` and `npm publish` (the `prepack` script); `postpack` removes it again, so that a checkout where a package
 * was made goes on running its sources, never a bundle older than they are.
 * Every package stays an import of its own: pi's loader maps pi's packages and typebox to pi's own copies, and the
 * rest loads from node_modules as it does from the sources. A dynamic import() of a package stays dynamic, so what
 * loads lazily from the sources loads lazily from the bundle too.
 *
 *   node scripts/build-bundle.mjs [--outdir <dir>] [--metafile <file>]
 *
 * `--outdir` (default: dist/ in the package) is where the bundle goes; `--metafile` writes esbuild's account of what
 * went in and what the bundle imports, as JSON (test/bundle.test.ts reads it).
 */
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({
  options: { outdir: { type: "string" }, metafile: { type: "string" } },
});
const outdir = path.resolve(values.outdir ?? path.join(root, "dist"));

/**
 * pi's packages and typebox: pi's loader (jiti) maps them to the running pi's own copies in the modules it loads, but
 * Node imports the bundle itself, which would find whatever copy lies near the package (pi 0.73's, installed as a peer
 * dependency, under pi 1.x) or none. So the bundle takes each from index.ts, which pi's loader does load: its imports
 * here become modules that read the one index.ts handed over (under `Symbol.for("mcp-bridge.pi-modules")`), and
 * dist/pi-modules.json lists them.
 */
const PI_PACKAGE = /^(@mariozechner\/pi-[^/]+|typebox)(\/.*)?$/;
const handed = new Set();
const fromPi = {
  name: "modules-from-pi",
  setup(b) {
    b.onResolve({ filter: PI_PACKAGE }, (args) => ({ path: args.path, namespace: "pi" }));
    b.onLoad({ filter: /.*/, namespace: "pi" }, async (args) => {
      handed.add(args.path);
      // The names as this checkout's copy exports them (the sources are checked against it); one the running pi lacks
      // is undefined, as it would be from its own copy.
      const names = Object.keys(await import(args.path)).filter((name) => name !== "default");
      // Only through globalThis: a name exported (typebox's `Symbol`, `Error`) would hide the global of that name here.
      const module = `globalThis[globalThis.Symbol.for("mcp-bridge.pi-modules")]?.[${JSON.stringify(args.path)}]`;
      const contents = [
        `const m = ${module};`,
        `if (!m) throw new globalThis.Error("mcp-bridge: index.ts did not hand over pi's ${args.path}");`,
        "export default m.default;",
        names.length ? `export const { ${names.join(", ")} } = m;` : "",
      ].join("\n");
      return { contents, loader: "js" };
    });
  },
};

const result = await build({
  entryPoints: { "mcp-bridge": path.join(root, "src", "extension.ts") },
  outdir,
  // What the sources load on first use (the connection code and the MCP SDK under it, /mcp's code) goes into chunks
  // of its own that load then too; in one file, esbuild would put their package imports at the top, loaded at start.
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  absWorkingDir: root,
  metafile: values.metafile !== undefined,
  logLevel: "warning",
  legalComments: "none",
  plugins: [fromPi],
});
if (result.errors.length) process.exit(1);
writeFileSync(path.join(outdir, "pi-modules.json"), `${JSON.stringify([...handed].sort())}\n`);
if (values.metafile) writeFileSync(values.metafile, JSON.stringify(result.metafile));
console.log(`Built ${path.join(path.relative(process.cwd(), outdir), "mcp-bridge.js")}`);
