/**
 * The test files as plain JavaScript, bundled by esbuild before a pass runs them, a few files to each test process. A
 * test process started through tsx pays Node 20's module hooks (a thread hop for each of the thousand modules pi
 * loads: about 1.6 s of CPU more per process than plain node) and compiles the sources again; bundled, a pass spends
 * a fifth (pi 0.73) to a quarter (pi 1.x) less CPU. Most test files import pi (1.7 s of CPU each time), and a process
 * of its own costs a start besides: four files to a process took the first pass's CPU from 826 s to 621 s
 * (bench/results/2026-12-03-npm-test-grouped.md has the figures for four, six and eight).
 *
 * What a test sees stays as it was: each source keeps its own `import.meta.url` (and `dirname`, `filename`), written
 * in as its original path, so paths taken relative to a test or a source still name the repository's files; classes
 * keep their names; packages stay imports, resolved from the repository's node_modules. `aliases` maps package names
 * to the packages that `aliasRoot`'s node_modules resolve them to (how the pi 1.x pass maps `@mariozechner/*`).
 * Stack traces, and the runner's "test at …" lines, map back to the TypeScript through source maps
 * (`--enable-source-maps`). What changes: the files of one process run one after the other in it, so a test puts
 * back what it changes of the process (environment, cwd, console, globals) when it ends (`restoreEnv` in ./helpers.ts).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Test files to one test process: enough to share the cost of starting one, few enough to keep four busy. */
const FILES_PER_PROCESS = 6;

/**
 * Runs `files` (paths from the repository's root) bundled, with `node:test` on `node`: FILES_PER_PROCESS files to a
 * process, four processes at once (much of a file's time is spent waiting on the processes and servers it starts, so
 * fewer leave one of two cores idle part of the time). Each file keeps its own temp dirs, HOME and ports. The bundles go
 * to a folder of this run's own under .tmp/tests (so two runs in one checkout do not meet), removed when the run
 * ends. Returns the runner's exit status.
 */
export async function runBundled(node, files, { aliases, aliasRoot, env = process.env } = {}) {
  mkdirSync(path.join(ROOT, ".tmp", "tests"), { recursive: true });
  const outdir = mkdtempSync(path.join(ROOT, ".tmp", "tests", "run-"));
  try {
    const bundles = await bundleTests(files, outdir, { aliases, aliasRoot });
    const runner = ["--enable-source-maps", "--test", "--test-concurrency=4", "--test-reporter=spec"];
    const result = spawnSync(node, [...runner, ...processEntries(bundles, outdir)], {
      cwd: ROOT,
      env,
      stdio: "inherit",
    });
    if (result.error) throw result.error;
    return result.status ?? 1;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/**
 * One entry module for each test process, importing its bundles (in `outdir`, named by its first and last file). The
 * files are dealt out in turn, as cards: neighbours in the alphabet often do the same heavy work (the pi command-line
 * tests), and dealt out they land in different processes.
 */
function processEntries(bundles, outdir) {
  const count = Math.ceil(bundles.length / FILES_PER_PROCESS);
  return Array.from({ length: count }, (_, i) => {
    const own = bundles.filter((_, j) => j % count === i);
    const name = (file) => path.basename(file, ".test.mjs");
    const entry = path.join(outdir, `${String(i + 1).padStart(2, "0")}-${name(own[0])}..${name(own.at(-1))}.mjs`);
    writeFileSync(entry, own.map((file) => `import ${JSON.stringify(pathToFileURL(file).href)};\n`).join(""));
    return entry;
  });
}

/** Writes the bundles of `files` (paths from the repository's root) to `outdir`; returns their paths, in order. */
async function bundleTests(files, outdir, { aliases = [], aliasRoot = ROOT } = {}) {
  const result = await build({
    entryPoints: files.map((file) => path.resolve(ROOT, file)),
    outbase: ROOT,
    outdir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    platform: "node",
    format: "esm",
    target: "node20",
    keepNames: true,
    sourcemap: "linked",
    logLevel: "error",
    metafile: true,
    plugins: [keepOwnPlace(), packagesAsImports(aliases, aliasRoot)],
  });
  const outputs = new Map();
  for (const [out, meta] of Object.entries(result.metafile.outputs)) {
    if (meta.entryPoint) outputs.set(path.resolve(ROOT, meta.entryPoint), path.resolve(ROOT, out));
  }
  return files.map((file) => {
    const out = outputs.get(path.resolve(ROOT, file));
    if (!out) throw new Error(`esbuild made no bundle of ${file}`);
    return out;
  });
}

/** Each of the repository's own modules keeps `import.meta.url` and its kin as they were where it lies. */
function keepOwnPlace() {
  return {
    name: "keep-own-place",
    setup(b) {
      b.onLoad({ filter: /\.[cm]?[jt]s$/ }, (args) => {
        if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        const text = readFileSync(args.path, "utf8")
          .replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href))
          .replaceAll("import.meta.dirname", JSON.stringify(path.dirname(args.path)))
          .replaceAll("import.meta.filename", JSON.stringify(args.path));
        return { contents: text, loader: /\.[cm]?ts$/.test(args.path) ? "ts" : "js" };
      });
    },
  };
}

/**
 * Packages stay imports. An aliased one (`[from, to]`: a specifier that is `from`, or starts with it when it ends in
 * `/`) becomes an import of the file that `to` resolves to from `aliasRoot`.
 */
function packagesAsImports(aliases, aliasRoot) {
  const INNER = "alias-target";
  return {
    name: "packages-as-imports",
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData === INNER || path.isAbsolute(args.path)) return undefined;
        const pair = aliases.find(([from]) => args.path === from || (from.endsWith("/") && args.path.startsWith(from)));
        if (!pair) return { path: args.path, external: true };
        const to = pair[1] + args.path.slice(pair[0].length);
        const found = await b.resolve(to, { kind: args.kind, resolveDir: aliasRoot, pluginData: INNER });
        if (found.errors.length > 0) return { errors: found.errors };
        return { path: found.path, external: true };
      });
    },
  };
}
