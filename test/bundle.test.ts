/**
 * The published package's bundle (scripts/build-bundle.mjs) in the real `pi` command line: built into a copy of the
 * package whose src/ holds only the files that run as processes of their own (the hub, the watchdogs), no TypeScript,
 * so the extension that connects there can only be dist/mcp-bridge.js. A plain server and a shared one (the hub is
 * started from the package's src/ by the bundle) connect with their tools; without dist/ the same copy fails to load.
 * And the bundle loads at startup no package the sources load only on first use.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { fixtureEntry, isAlive, readLog, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";
import { PI_LINE } from "./pi-line.ts";
import { GENEROUS_BUDGET, runPiCli } from "./pi-print.ts";

const tmp = tempDir("mcp-bridge-bundle-");
const pkg = path.join(tmp.dir, "package");
const home = path.join(tmp.dir, "home");
const metafile = path.join(tmp.dir, "meta.json");
const config = path.join(tmp.dir, "mcp.json");
let hub: number | undefined;

/** The package as published, minus its TypeScript: what index.ts needs, and src/'s scripts that run on their own. */
function packageCopy(): void {
  mkdirSync(pkg);
  for (const file of ["package.json", "index.ts", "mcp.json"]) cpSync(path.join(REPO_ROOT, file), path.join(pkg, file));
  cpSync(path.join(REPO_ROOT, "src"), path.join(pkg, "src"), {
    recursive: true,
    filter: (from) => !from.endsWith(".ts"),
  });
  symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(pkg, "node_modules"));
}

interface Metafile {
  inputs: Record<string, { imports: { path: string; kind: string; external?: boolean }[] }>;
  outputs: Record<string, { entryPoint?: string; imports: { path: string; kind: string; external?: boolean }[] }>;
}

describe(`the bundle in pi ${PI_LINE}`, { timeout: 180_000 }, () => {
  before(() => {
    packageCopy();
    const build = spawnSync(
      process.execPath,
      ["scripts/build-bundle.mjs", "--outdir", path.join(pkg, "dist"), "--metafile", metafile],
      { cwd: REPO_ROOT, encoding: "utf8" },
    );
    assert.equal(build.status, 0, build.stderr);
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          plain: fixtureEntry(),
          together: { ...fixtureEntry(), shared: { idleSeconds: 1 } },
        },
      }),
    );
  });
  after(() => {
    if (hub && isAlive(hub)) process.kill(hub, "SIGKILL");
    tmp.cleanup();
  });

  const runPi = () =>
    runPiCli(["-e", pkg, "--mcp-config", config, "-p", "/mcp"], {
      home,
      cwd: tmp.dir,
      env: GENEROUS_BUDGET,
      timeoutMs: 90_000,
    });

  test("pi runs the bundle: a plain and a shared server connect with their tools, the hub started from src/", async () => {
    assert.deepEqual(
      readdirSync(path.join(pkg, "src"), { recursive: true }).filter((f) => String(f).endsWith(".ts")),
      [],
      "the copy holds no TypeScript under src/",
    );
    const { code, output } = await runPi();
    assert.equal(code, 0, output);
    assert.match(output, /^plain {2}connected {2}stdio {2}MCP [\d-]+ {2}20 tools /m);
    assert.match(output, /^together {2}connected {2}stdio, shared ×1 {2}MCP [\d-]+ {2}20 tools /m);
    assert.match(output, /- mcp_plain_echo {2}\(echo\)/);
    assert.match(output, /- mcp_together_echo {2}\(echo\)/);
    // The hub the bundle started runs from the package's src/, and leaves once its idle time is over. Its pid is taken
    // from its log, not its lock: by the time pi's exit is seen here, that second may be over and the lock gone.
    const hubDir = path.join(home, "agent", "mcp-hub");
    const events = () => readLog(path.join(hubDir, "hub.log"));
    hub = Number(events().find((line) => line.event === "hub.start")?.pid);
    assert.ok(hub > 0, "the hub logged its start");
    await waitFor(() => !isAlive(hub!), "the hub to leave after its idle second", 15_000, 100);
    assert.ok(
      events().some((line) => line.event === "hub.exit"),
      "it left because it was idle",
    );
    assert.ok(!existsSync(path.join(hubDir, "hub.lock")), "and took its lock with it");
  });

  test("without dist/ the same copy does not load: it has no sources to fall back on", async () => {
    const aside = path.join(tmp.dir, "dist-aside");
    renameSync(path.join(pkg, "dist"), aside);
    try {
      const { output } = await runPi();
      assert.match(output, /Cannot find module[^\n]*src\/extension\.ts/, output);
      assert.doesNotMatch(output, /plain {2}connected/);
    } finally {
      renameSync(aside, path.join(pkg, "dist"));
    }
  });

  test("the bundle finds its package's files (mcp.json, the watchdog, the hub) through one helper that looks up", () => {
    // A path taken relative to import.meta.url names a place next to dist/mcp-bridge.js, not next to the source.
    const dist = path.join(pkg, "dist");
    const files = readdirSync(dist, { recursive: true }).filter((f) => String(f).endsWith(".js"));
    const uses = files.flatMap(
      (f) => readFileSync(path.join(dist, String(f)), "utf8").match(/.*import\.meta.*/g) ?? [],
    );
    assert.equal(uses.length, 1, uses.join("\n"));
    assert.match(uses[0], /findRoot\(/);
  });

  test("the bundle imports none of pi's packages itself: index.ts hands it pi's own, each that dist/pi-modules.json lists", () => {
    // Node imports the bundle, so an import of its own would find the copy beside the package (pi 0.73's under pi 1.x).
    const meta = JSON.parse(readFileSync(metafile, "utf8")) as Metafile;
    const ofPi = (name: string) => /^(@mariozechner\/pi-[^/]+|typebox)(\/|$)/.test(name);
    const own = Object.values(meta.outputs).flatMap((out) => out.imports.filter((i) => i.external && ofPi(i.path)));
    assert.deepEqual(own, []);
    const used = new Set(
      Object.entries(meta.inputs)
        .filter(([file]) => file.startsWith("src/"))
        .flatMap(([, input]) => input.imports.map((i) => i.path.replace(/^pi:/, "")).filter(ofPi)),
    );
    const listed = JSON.parse(readFileSync(path.join(pkg, "dist", "pi-modules.json"), "utf8")) as string[];
    assert.deepEqual(listed, [...used].sort());
  });

  test("what the sources load on first use is not loaded at startup by the bundle, and dynamic imports stay so", () => {
    const meta = JSON.parse(readFileSync(metafile, "utf8")) as Metafile;
    type Imports = Metafile["inputs"][string]["imports"];
    const atLoad = (imports: Imports) =>
      imports.filter((i) => i.external && i.kind === "import-statement").map((i) => i.path);
    // What a start loads: from `from` on, every module (or output file) imported statically, not through import().
    const loadedAtStart = (from: string, graph: Record<string, { imports: Imports }>) => {
      const seen = new Set<string>();
      const visit = (node: string) => {
        if (seen.has(node)) return;
        seen.add(node);
        for (const i of graph[node].imports) if (!i.external && i.kind === "import-statement") visit(i.path);
      };
      visit(from);
      return new Set([...seen].flatMap((node) => atLoad(graph[node].imports)));
    };
    const sources = loadedAtStart("src/extension.ts", meta.inputs);
    const [entry] = Object.entries(meta.outputs).find(([, out]) => out.entryPoint === "src/extension.ts")!;
    const bundle = loadedAtStart(entry, meta.outputs);
    assert.deepEqual(
      [...bundle].filter((p) => !sources.has(p)),
      [],
      "packages the bundle loads at startup that the sources load lazily",
    );
    assert.ok(!bundle.has("@modelcontextprotocol/client"), "the MCP SDK loads with the first server, not at start");
    const dynamic = new Set(
      Object.values(meta.inputs).flatMap((input) =>
        input.imports.filter((i) => i.external && i.kind === "dynamic-import").map((i) => i.path),
      ),
    );
    assert.ok(dynamic.has("@opentelemetry/api"), "the sources import OpenTelemetry lazily");
    const outputs = Object.values(meta.outputs);
    for (const name of dynamic) {
      assert.ok(
        outputs.some((out) => out.imports.some((i) => i.path === name && i.kind === "dynamic-import")),
        `${name} is imported dynamically`,
      );
    }
  });
});
