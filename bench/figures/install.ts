/**
 * Install: what a user's machine gets and pays for the extension.
 *
 * - Production install size: the package as `npm pack` makes it, unpacked into a temporary folder with this
 *   checkout's lockfile, then `npm ci --omit=dev` there (from npm's cache when it has the files, which changes where the
 *   bytes come from, not how many land). The figure is the disk space of its node_modules as `du` counts it (blocks
 *   in use), with the sum of file sizes and the largest packages beside it.
 * - Import time: pi's loader (jiti, pi's packages mapped to pi's own) loading index.ts and running its factory, in a
 *   fresh process, minus the same for an empty extension; the two alternate, each process loading one, after one
 *   unmeasured load of each so both read jiti's transform cache as a user's second start would.
 */
import { execFile } from "node:child_process";
import { copyFileSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { childJson } from "../child-json.ts";
import { envCount, median, repeatRounds, summary } from "../stats.ts";
import type { Figure, FigureSection } from "./figure.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const IMPORT_CHILD = path.join(ROOT, "bench", "import-child.mjs");
const MB = 1024 * 1024;
/** The largest packages listed in the JSON, with their sizes. */
const LISTED_PACKAGES = 12;
const ROUNDS = { min: envCount("BENCH_IMPORT_ROUNDS", 5), max: envCount("BENCH_IMPORT_MAX_ROUNDS", 11), spread: 0.1 };
const run = promisify(execFile);
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

interface Size {
  /** Sum of the files' sizes. */
  bytes: number;
  /** Disk space in use, as `du` counts it. */
  disk: number;
}

/** The package a file under node_modules belongs to: the name after its last `node_modules/`. */
export function packageOf(relative: string): string {
  const parts = relative.split(path.sep);
  const at = parts.lastIndexOf("node_modules");
  const name = parts[at + 1] ?? "";
  return name.startsWith("@") ? `${name}/${parts[at + 2] ?? ""}` : name;
}

/** Sizes of everything under `dir`, by package (directories count as `du` counts them). */
function sizesByPackage(dir: string): Map<string, Size> {
  const sizes = new Map<string, Size>();
  const visit = (relative: string) => {
    const stat = lstatSync(path.join(dir, relative));
    const name = packageOf(path.join("node_modules", relative));
    const size = sizes.get(name) ?? { bytes: 0, disk: 0 };
    size.disk += stat.blocks * 512;
    if (!stat.isDirectory()) size.bytes += stat.size;
    sizes.set(name, size);
    if (stat.isDirectory())
      for (const entry of readdirSync(path.join(dir, relative))) visit(path.join(relative, entry));
  };
  for (const entry of readdirSync(dir)) visit(entry);
  return sizes;
}

const mb = (bytes: number) => Number((bytes / MB).toFixed(2));

async function measureInstallSize(): Promise<Figure> {
  const dir = mkdtempSync(path.join(tmpdir(), "mcp-bridge-bench-install-"));
  try {
    const { stdout } = await run(npm, ["pack", "--json", "--pack-destination", dir], { cwd: ROOT, maxBuffer: 16 * MB });
    const packed = (JSON.parse(stdout) as Array<{ filename: string; unpackedSize: number }>)[0]!;
    const unpacked = path.join(dir, "unpacked");
    mkdirSync(unpacked);
    await run("tar", ["xzf", path.join(dir, path.basename(packed.filename)), "-C", unpacked]);
    const pkg = path.join(unpacked, "package");
    copyFileSync(path.join(ROOT, "package-lock.json"), path.join(pkg, "package-lock.json"));
    await run(npm, ["ci", "--omit=dev", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], {
      cwd: pkg,
      maxBuffer: 16 * MB,
      timeout: 300_000,
    });
    const sizes = sizesByPackage(path.join(pkg, "node_modules"));
    const total = [...sizes.values()].reduce((sum, s) => ({ bytes: sum.bytes + s.bytes, disk: sum.disk + s.disk }), {
      bytes: 0,
      disk: 0,
    });
    const largest = [...sizes.entries()].sort(([, a], [, b]) => b.disk - a.disk).slice(0, LISTED_PACKAGES);
    return {
      id: "install.productionSize",
      label: "production install (npm ci --omit=dev), on disk",
      value: mb(total.disk),
      unit: "MB",
      target: { op: "<=", value: 35 },
      detail: {
        packages: sizes.size,
        fileBytesMB: mb(total.bytes),
        extensionUnpackedMB: mb(packed.unpackedSize),
        ...Object.fromEntries(
          largest.map(([name, s]) => [`package:${name}`, `${mb(s.disk)} MB on disk, ${mb(s.bytes)} MB in files`]),
        ),
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measureImportTime(): Promise<Figure> {
  const dir = mkdtempSync(path.join(tmpdir(), "mcp-bridge-bench-import-"));
  try {
    const empty = path.join(dir, "empty-extension.ts");
    writeFileSync(empty, "export default function () {}\n");
    mkdirSync(path.join(dir, "agent"));
    mkdirSync(path.join(dir, "cwd"));
    const env = { ...process.env, HOME: dir, PI_CODING_AGENT_DIR: path.join(dir, "agent"), PI_OFFLINE: "1" };
    const load = async (extension: string) =>
      (
        await childJson<{ ms: number }>({
          args: [IMPORT_CHILD, extension],
          env,
          cwd: path.join(dir, "cwd"),
          timeoutMs: 60_000,
        })
      ).ms;
    await load(ROOT);
    await load(empty);
    const rounds = await repeatRounds(
      ROUNDS,
      async (index) => {
        const order = index % 2 === 0 ? [ROOT, empty] : [empty, ROOT];
        const ms = new Map<string, number>();
        for (const extension of order) ms.set(extension, await load(extension));
        return { bridge: ms.get(ROOT)!, empty: ms.get(empty)! };
      },
      (r) => r.bridge - r.empty,
    );
    const own = rounds.map((r) => r.bridge - r.empty);
    return {
      id: "install.importMs",
      label: "pi loading the extension (minus an empty one)",
      value: Math.round(median(own)),
      unit: "ms",
      detail: {
        rounds: rounds.length,
        ...summary("ms", own, 1),
        ...summary(
          "bridge.ms",
          rounds.map((r) => r.bridge),
          1,
        ),
        ...summary(
          "empty.ms",
          rounds.map((r) => r.empty),
          1,
        ),
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const installSection: FigureSection = {
  title: "install",
  measure: async () => [await measureInstallSize(), await measureImportTime()],
};
