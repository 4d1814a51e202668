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
});
if (result.errors.length) process.exit(1);
if (values.metafile) writeFileSync(values.metafile, JSON.stringify(result.metafile));
console.log(`Built ${path.join(path.relative(process.cwd(), outdir), "mcp-bridge.js")}`);
