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
import { fixtureEntry, isAlive, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";
import { PI_LINE } from "./pi-line.ts";
import { GENEROUS_BUDGET, runPiCli } from "./pi-print.ts";

/** Packages the sources load only with /mcp's code, which the one-file bundle imports at load: small, or pi's own. */
const LOADED_EARLY_IN_BUNDLE = new Set(["smol-toml", "@mariozechner/pi-tui"]);

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
  outputs: Record<string, { imports: { path: string; kind: string; external?: boolean }[] }>;
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
    // The hub the bundle started runs from the package's src/, and leaves once its idle time is over.
    const lock = path.join(home, "agent", "mcp-hub", "hub.lock");
    assert.ok(existsSync(lock), output);
    hub = Number(readFileSync(lock, "utf8"));
    await waitFor(() => !isAlive(hub!), "the hub to leave after its idle second", 15_000, 100);
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
    const uses = readFileSync(path.join(pkg, "dist", "mcp-bridge.js"), "utf8").match(/.*import\.meta.*/g) ?? [];
    assert.equal(uses.length, 1, uses.join("\n"));
    assert.match(uses[0], /findRoot\(/);
  });

  test("what the sources load on first use is not loaded at startup by the bundle, and dynamic imports stay so", () => {
    const meta = JSON.parse(readFileSync(metafile, "utf8")) as Metafile;
    const [output] = Object.values(meta.outputs);
    // The modules the sources load at startup: the entry and what it imports statically, not through import().
    const eager = new Set<string>();
    const visit = (input: string) => {
      if (eager.has(input)) return;
      eager.add(input);
      for (const i of meta.inputs[input].imports) if (!i.external && i.kind === "import-statement") visit(i.path);
    };
    visit("src/extension.ts");
    const atLoad = (imports: Metafile["inputs"][string]["imports"]) =>
      imports.filter((i) => i.external && i.kind === "import-statement").map((i) => i.path);
    const sourcesAtLoad = new Set([...eager].flatMap((input) => atLoad(meta.inputs[input].imports)));
    const early = atLoad(output.imports).filter((p) => !sourcesAtLoad.has(p) && !LOADED_EARLY_IN_BUNDLE.has(p));
    assert.deepEqual([...new Set(early)], [], "packages the bundle loads at startup that the sources load lazily");
    const dynamic = new Set(
      Object.values(meta.inputs).flatMap((input) =>
        input.imports.filter((i) => i.external && i.kind === "dynamic-import").map((i) => i.path),
      ),
    );
    assert.ok(dynamic.has("@opentelemetry/api"), "the sources import OpenTelemetry lazily");
    for (const name of dynamic) {
      assert.ok(
        output.imports.some((i) => i.path === name && i.kind === "dynamic-import"),
        `${name} is imported dynamically`,
      );
    }
  });
});
