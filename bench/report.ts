/**
 * Runs the bench's sections one after another and turns their figures into the table on screen and the JSON file.
 * A section that throws is reported as failed and the others still run.
 */
import { type Figure, type FigureSection, meetsTarget } from "./figures/figure.ts";

export interface SectionResult {
  title: string;
  figures: Figure[];
  /** Why the section failed, when it threw. */
  error?: string;
  seconds: number;
}

export interface Machine {
  cpus: number;
  cpuModel: string;
  memoryGB: number;
  node: string;
  platform: string;
  arch: string;
  /** When the run started, ISO 8601. */
  date: string;
}

/** The JSON file: where and when it ran, then every section's figures. bench/README.md documents it. */
export interface BenchReport {
  machine: Machine;
  sections: Array<{
    title: string;
    ok: boolean;
    error?: string;
    seconds: number;
    figures: Array<Figure & { met: boolean | null }>;
  }>;
}

export async function runSections(
  sections: readonly FigureSection[],
  onSection?: (result: SectionResult) => void,
): Promise<SectionResult[]> {
  const results: SectionResult[] = [];
  for (const section of sections) {
    const started = performance.now();
    let result: SectionResult;
    try {
      result = { title: section.title, figures: await section.measure(), seconds: 0 };
    } catch (error) {
      result = {
        title: section.title,
        figures: [],
        error: error instanceof Error ? error.message : String(error),
        seconds: 0,
      };
    }
    result.seconds = Number(((performance.now() - started) / 1000).toFixed(1));
    results.push(result);
    onSection?.(result);
  }
  return results;
}

export function reportOf(machine: Machine, results: readonly SectionResult[]): BenchReport {
  return {
    machine,
    sections: results.map((r) => ({
      title: r.title,
      ok: r.error === undefined,
      ...(r.error === undefined ? {} : { error: r.error }),
      seconds: r.seconds,
      // `met` is null for a figure without a target, so the file tells "no target" from "met".
      figures: r.figures.map((f) => ({ ...f, met: f.target ? meetsTarget(f) : null })),
    })),
  };
}

/** A number with as many digits as its size deserves: 1234, 123, 12.3, 1.23, 0.123. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const size = Math.abs(value);
  if (size >= 100) return Math.round(value).toLocaleString("en-US");
  if (size >= 10) return value.toFixed(1);
  if (size >= 0.1 || size === 0) return value.toFixed(2);
  return String(Number(value.toPrecision(2)));
}

function withUnit(value: number, unit: string): string {
  return unit === "×" ? `${formatNumber(value)}×` : `${formatNumber(value)} ${unit}`;
}

/** "met", "missed by 0.12× (8%)", or "" for a figure without a target. */
export function verdict(figure: Figure): string {
  if (!figure.target) return "";
  if (meetsTarget(figure)) return "met";
  const gap = Math.abs(figure.value - figure.target.value);
  const share = figure.target.value === 0 ? "" : ` (${Math.round((gap / Math.abs(figure.target.value)) * 100)}%)`;
  return `missed by ${withUnit(gap, figure.unit)}${share}`;
}

/** The table on screen: section, figure, value, target, verdict; a failed section gets one row with its message. */
export function formatTable(results: readonly SectionResult[]): string {
  const rows: string[][] = [["section", "figure", "value", "target", "result"]];
  for (const result of results) {
    if (result.error !== undefined) {
      rows.push([result.title, "(section failed)", "", "", `FAILED: ${result.error.split("\n")[0]}`]);
      continue;
    }
    for (const figure of result.figures) {
      const target = figure.target ? `${figure.target.op} ${withUnit(figure.target.value, figure.unit)}` : "";
      rows.push([result.title, figure.label, withUnit(figure.value, figure.unit), target, verdict(figure)]);
    }
  }
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const line = (row: string[]) =>
    row
      .map((cell, column) => (column === 2 ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join("  ")
      .trimEnd();
  return [line(rows[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...rows.slice(1).map(line)].join("\n");
}
