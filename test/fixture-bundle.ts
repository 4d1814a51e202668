/**
 * Fixture servers as plain JavaScript, bundled by esbuild with their packages once per test process. Started through
 * tsx, a fixture spends about 1.35 s of CPU compiling itself before it answers (bundled: 0.27 s for the stdio fixture,
 * 0.5 s with its packages read one by one), and the suite starts fixtures hundreds of times. A bundle is written only
 * when its text changed, to a temp name and then renamed, so test processes running at once never read half a file.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const DIR = path.join(ROOT, ".tmp", "fixtures");
const bundled = new Map<string, string>();

/** The bundle of the TypeScript fixture `source`, built (or checked) on the first call in this process. */
export function bundledFixture(source: string): string {
  const known = bundled.get(source);
  if (known) return known;
  const out = path.join(DIR, path.relative(ROOT, source).replaceAll(path.sep, "_").replace(/\.ts$/, ".mjs"));
  const [file] = buildSync({
    entryPoints: [source],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // The packages' CommonJS parts (ajv) still `require` Node's own modules.
    banner: {
      js: 'import { createRequire as __fixtureRequire } from "node:module"; const require = __fixtureRequire(import.meta.url);',
    },
    write: false,
    logLevel: "error",
  }).outputFiles;
  if (!file) throw new Error(`esbuild made nothing of ${source}`);
  if (readOr(out) !== file.text) {
    mkdirSync(DIR, { recursive: true });
    const temp = `${out}.${process.pid}.tmp`;
    writeFileSync(temp, file.text);
    renameSync(temp, out);
  }
  bundled.set(source, out);
  return out;
}

function readOr(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
