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
import { buildExtensionPackage } from "./extension-package.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Test files to one test process: enough to share the cost of starting one, few enough to keep four busy. */
const FILES_PER_PROCESS = 6;
/** Test processes at once. */
const CONCURRENCY = 4;

/**
 * How long each file took in a whole pass on the idle 2-core machine, in seconds, by pass: what the processes are
 * balanced on. `MCP_BRIDGE_TEST_DURATIONS=record` writes a pass's figures back (after a pass that ran every file).
 */
const DURATIONS = path.join(ROOT, "test", "durations.json");

/**
 * Runs `files` (paths from the repository's root) bundled, with `node:test` on `node`: about FILES_PER_PROCESS files to
 * a process, four processes at once (much of a file's time is spent waiting on the processes and servers it starts,
 * so fewer leave one of two cores idle part of the time). Each file keeps its own temp dirs, HOME and ports. The
 * bundles go to a folder of this run's own under .tmp/tests (so two runs in one checkout do not meet), removed when
 * the run ends. `pass` names the pass in test/durations.json. Returns the runner's exit status.
 */
export async function runBundled(node, files, { pass, aliases, aliasRoot, env = process.env } = {}) {
  mkdirSync(path.join(ROOT, ".tmp", "tests"), { recursive: true });
  const outdir = mkdtempSync(path.join(ROOT, ".tmp", "tests", "run-"));
  try {
    const { bundles, importsPi } = await bundleTests(files, outdir, { aliases, aliasRoot });
    const extension = buildExtensionPackage(path.join(outdir, "extension"));
    const known = readDurations()[pass] ?? {};
    const timings = path.join(outdir, "durations.jsonl");
    const runner = [
      "--enable-source-maps",
      "--test",
      `--test-concurrency=${CONCURRENCY}`,
      "--test-reporter=spec",
      "--test-reporter-destination=stdout",
      `--test-reporter=${pathToFileURL(path.join(ROOT, "test", "durations-reporter.mjs")).href}`,
      `--test-reporter-destination=${timings}`,
    ];
    const groups = processGroups(files, (file) => known[file], importsPi);
    const entries = groups.map((group, i) =>
      processEntry(
        group.map((j) => bundles[j]),
        i,
        outdir,
      ),
    );
    const result = spawnSync(node, [...runner, ...entries], {
      cwd: ROOT,
      env: { ...env, MCP_BRIDGE_TEST_EXTENSION: extension },
      stdio: "inherit",
    });
    if (result.error) throw result.error;
    const status = result.status ?? 1;
    if (env.MCP_BRIDGE_TEST_DURATIONS === "record" && status === 0 && pass)
      recordDurations(pass, files, bundles, timings);
    return status;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/**
 * The files' indices in groups, one group to a test process, in the order to start them. The files are first shared
 * among the four processes that run at once, longest first, each to the one with the least time so far (a file not
 * measured yet counts as the median); each one's share is then cut into processes of about FILES_PER_PROCESS files,
 * longest first, files that import pi apart from those that do not (`importsPi[i]`: a process that imports pi spends
 * 1.7 s of CPU on it, and four files in ten never do), and those are started in turn, the heavier first.
 * So the four run about as long, and what runs last is short. Dealt out by name instead, a process held the pi
 * command-line tests (140 s, a quarter of the pass) and five others and ran last: one core idled for the pass's last
 * minute.
 */
function processGroups(files, seconds, importsPi) {
  const measured = files.map(seconds).filter((s) => typeof s === "number");
  const median = measured.length > 0 ? measured.sort((a, b) => a - b)[Math.floor(measured.length / 2)] : 1;
  const weight = files.map((file) => seconds(file) ?? median);
  const lanes = Array.from({ length: CONCURRENCY }, () => ({ files: [], total: 0 }));
  for (const i of files.map((_, i) => i).sort((a, b) => weight[b] - weight[a] || a - b)) {
    const lightest = lanes.reduce((min, lane) => (lane.total < min.total ? lane : min));
    lightest.files.push(i);
    lightest.total += weight[i];
  }
  const total = (group) => group.reduce((sum, i) => sum + weight[i], 0);
  const byLane = lanes.map((lane) =>
    [true, false]
      .flatMap((pi) => cut(lane.files.filter((i) => importsPi[i] === pi)))
      .sort((a, b) => total(b) - total(a)),
  );
  const groups = [];
  for (let k = 0; byLane.some((own) => k < own.length); k++) {
    for (const own of byLane) if (k < own.length) groups.push(own[k]);
  }
  return groups;
}

/** `indices` (longest first) in as few processes of at most FILES_PER_PROCESS as can hold them, of even counts. */
function cut(indices) {
  const count = Math.ceil(indices.length / FILES_PER_PROCESS);
  return Array.from({ length: count }, (_, k) => indices.filter((_, j) => j % count === k));
}

/** One entry module for a test process, importing its bundles (in `outdir`, named by its first and last file). */
function processEntry(own, i, outdir) {
  const name = (file) => path.basename(file, ".test.mjs");
  const entry = path.join(outdir, `${String(i + 1).padStart(2, "0")}-${name(own[0])}..${name(own.at(-1))}.mjs`);
  writeFileSync(entry, own.map((file) => `import ${JSON.stringify(pathToFileURL(file).href)};\n`).join(""));
  return entry;
}

function readDurations() {
  try {
    return JSON.parse(readFileSync(DURATIONS, "utf8"));
  } catch {
    return {};
  }
}

/** Writes each file's seconds in this pass (its top-level tests' durations, from `timings`) to test/durations.json. */
function recordDurations(pass, files, bundles, timings) {
  // A test's file is its bundle's path, or its source's where the runner maps the stack back.
  const byBundle = new Map(
    bundles.flatMap((bundle, i) => [
      [bundle, files[i]],
      [path.resolve(ROOT, files[i]), files[i]],
    ]),
  );
  const seconds = {};
  for (const line of readFileSync(timings, "utf8").split("\n").filter(Boolean)) {
    const { file, ms } = JSON.parse(line);
    const source = byBundle.get(file);
    if (source) seconds[source] = (seconds[source] ?? 0) + ms / 1000;
  }
  const sorted = Object.fromEntries(
    Object.keys(seconds)
      .sort()
      .map((file) => [file, Math.round(seconds[file] * 10) / 10]),
  );
  writeFileSync(DURATIONS, `${JSON.stringify({ ...readDurations(), [pass]: sorted }, null, 2)}\n`);
}

/**
 * Writes the bundles of `files` (paths from the repository's root) to `outdir`; returns their paths, in order, and
 * whether each imports pi.
 */
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
    if (meta.entryPoint) outputs.set(path.resolve(ROOT, meta.entryPoint), out);
  }
  const entries = files.map((file) => {
    const out = outputs.get(path.resolve(ROOT, file));
    if (!out) throw new Error(`esbuild made no bundle of ${file}`);
    return out;
  });
  return {
    bundles: entries.map((out) => path.resolve(ROOT, out)),
    importsPi: entries.map((out) => reachesPi(result.metafile.outputs, out)),
  };
}

/** Whether the bundle `out` (a key of esbuild's `outputs`) or a chunk it imports imports one of pi's packages. */
function reachesPi(outputs, out, seen = new Set()) {
  if (seen.has(out)) return false;
  seen.add(out);
  return (outputs[out]?.imports ?? []).some((imported) =>
    imported.external ? PI_PACKAGE.test(imported.path) : reachesPi(outputs, imported.path, seen),
  );
}

/** pi's packages on either line, by name or, aliased, by the path they resolve to. */
const PI_PACKAGE = /(^|[/\\])@(mariozechner|earendil-works)[/\\]pi-/;

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
