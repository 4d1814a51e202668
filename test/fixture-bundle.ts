/**
 * Fixture servers as plain JavaScript, bundled by esbuild with their packages. Started through tsx, a fixture spends
 * about 1.35 s of CPU compiling itself before it answers (bundled: 0.27 s for the stdio fixture, 0.5 s with its
 * packages read one by one), and the suite starts fixtures hundreds of times. A bundle is built once for all the test
 * processes of a run (and later runs): beside it goes the list of the files esbuild read with their size and time of
 * change, and a process that finds every one of them as listed uses the bundle as it is (bundling its fixtures again
 * cost each of a pass's twenty-odd processes about 0.4 s of CPU, an esbuild process, and up to 1.8 s of waiting).
 * Files are written to a temp name and then renamed, so test processes running at once never read half a file.
 */
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const DIR = path.join(ROOT, ".tmp", "fixtures");
/** This file: how a bundle is built is part of what it was built from. */
const BUILDER = fileURLToPath(import.meta.url);
const bundled = new Map<string, string>();

/** Each input's size and time of change, by path from the repository's root. */
type Stamps = Record<string, [size: number, changed: number]>;

/** The bundle of the fixture `source` (TypeScript or JavaScript), looked at once in this process (`currentBundle`). */
export function bundledFixture(source: string): string {
  const known = bundled.get(source) ?? currentBundle(source);
  bundled.set(source, known);
  return known;
}

/** The bundle of `source`, built unless the one on disk was built from the same files as they are now. */
export function currentBundle(source: string): string {
  const out = path.join(DIR, path.relative(ROOT, source).replaceAll(path.sep, "_").replace(/\.ts$/, ".mjs"));
  if (!upToDate(out)) build(source, out);
  return out;
}

function build(source: string, out: string): void {
  const started = Date.now();
  const { outputFiles, metafile } = buildSync({
    entryPoints: [source],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // The packages' CommonJS parts (ajv) still `require` Node's own modules.
    banner: {
      js: 'import { createRequire as __fixtureRequire } from "node:module"; const require = __fixtureRequire(import.meta.url);',
    },
    absWorkingDir: ROOT,
    metafile: true,
    write: false,
    logLevel: "error",
  });
  const [file] = outputFiles;
  if (!file) throw new Error(`esbuild made nothing of ${source}`);
  mkdirSync(DIR, { recursive: true });
  if (readOr(out) !== file.text) writeWhole(out, file.text);
  const inputs = stamps([...Object.keys(metafile.inputs), path.relative(ROOT, BUILDER)]);
  // A file changed while esbuild read it may be in the bundle as it was before: a stamp no file has makes the next look
  // build again.
  for (const [input, [, changed]] of Object.entries(inputs)) if (changed >= started) inputs[input] = [-1, -1];
  writeWhole(`${out}.inputs.json`, JSON.stringify(inputs));
}

/** True when the bundle `out` is there and the stamps listed beside it are the files' now: none changed, none gone. */
function upToDate(out: string): boolean {
  try {
    statSync(out);
    const listed = JSON.parse(readFileSync(`${out}.inputs.json`, "utf8")) as Stamps;
    const now = stamps(Object.keys(listed));
    return Object.entries(listed).every(([input, [size, changed]]) => {
      const [nowSize, nowChanged] = now[input]!;
      return nowSize === size && nowChanged === changed;
    });
  } catch {
    return false;
  }
}

function stamps(inputs: string[]): Stamps {
  return Object.fromEntries(
    inputs.map((input) => {
      const stat = statSync(path.resolve(ROOT, input));
      return [input, [stat.size, stat.mtimeMs]];
    }),
  );
}

function writeWhole(file: string, text: string): void {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, text);
  renameSync(temp, file);
}

function readOr(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
