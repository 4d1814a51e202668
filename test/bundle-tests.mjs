/**
 * The test files as plain JavaScript, bundled by esbuild before a pass runs them. A test process started through tsx
 * pays Node 20's module hooks (a thread hop for each of the thousand modules pi loads: about 1.6 s of CPU more per
 * process than plain node) and compiles the sources again. Bundled, a pass spends a fifth (pi 0.73) to a quarter
 * (pi 1.x) less CPU.
 *
 * What a test sees stays as it was: each source keeps its own `import.meta.url` (and `dirname`, `filename`), written
 * in as its original path, so paths taken relative to a test or a source still name the repository's files; classes
 * keep their names; packages stay imports, resolved from the repository's node_modules. `aliases` maps package names
 * to the packages that `aliasRoot`'s node_modules resolve them to (how the pi 1.x pass maps `@mariozechner/*`).
 * Stack traces map back to the TypeScript through source maps (`--enable-source-maps`).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * Runs `files` (paths from the repository's root) bundled, with `node:test` on `node`, three files at once: most of a
 * file's time is spent waiting on the processes and servers it starts, so one file at a time keeps about one of two
 * cores busy. Each file keeps its own temp dirs, HOME and ports. The bundles go to a folder of this run's own under
 * .tmp/tests (so two runs in one checkout do not meet), removed when the run ends. Returns the runner's exit status.
 */
export async function runBundled(node, files, { aliases, aliasRoot, env = process.env } = {}) {
  mkdirSync(path.join(ROOT, ".tmp", "tests"), { recursive: true });
  const outdir = mkdtempSync(path.join(ROOT, ".tmp", "tests", "run-"));
  try {
    const bundles = await bundleTests(files, outdir, { aliases, aliasRoot });
    const runner = ["--enable-source-maps", "--test", "--test-concurrency=3", "--test-reporter=spec"];
    const result = spawnSync(node, [...runner, ...bundles], { cwd: ROOT, env, stdio: "inherit" });
    if (result.error) throw result.error;
    return result.status ?? 1;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
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
