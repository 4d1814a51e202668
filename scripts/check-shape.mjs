#!/usr/bin/env node
// The shape the source keeps, checked in CI: no file over MAX_FILE_LINES lines, no two files with the same name, no
// import circle, and the whole source under MAX_TOTAL_LINES. The limits hold the house a newcomer can read; a change
// that needs more room should split a file or remove code, not raise a number here.
//
// The goal is 15,500 lines in all. Until the source gets there, MAX_TOTAL_LINES is where it stands (formatted with
// Prettier at width 120): lower it as code goes.
import { readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";

const MAX_FILE_LINES = 450;
const MAX_TOTAL_LINES = 33117;
const root = resolve(dirname(new URL(import.meta.url).pathname), "..");

const sourceFiles = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) || entry.name.endsWith(".mjs")
      ? [path]
      : [];
  });

const files = [...sourceFiles(join(root, "src")), join(root, "index.ts"), join(root, "lib.ts")];
const text = new Map(files.map((file) => [file, readFileSync(file, "utf8")]));
const lines = (file) => text.get(file).split("\n").length - (text.get(file).endsWith("\n") ? 1 : 0);
const problems = [];

for (const file of files) {
  if (lines(file) > MAX_FILE_LINES)
    problems.push(`${relative(root, file)}: ${lines(file)} lines (at most ${MAX_FILE_LINES})`);
}
const total = files.reduce((sum, file) => sum + lines(file), 0);
if (total > MAX_TOTAL_LINES) problems.push(`source: ${total} lines in all (at most ${MAX_TOTAL_LINES})`);

const byName = new Map();
for (const file of files) byName.set(basename(file), [...(byName.get(basename(file)) ?? []), file]);
for (const [name, same] of byName) {
  if (same.length > 1)
    problems.push(`${name} names ${same.length} files: ${same.map((f) => relative(root, f)).join(", ")}`);
}

// Static imports only (type imports included: a circle of types is still a circle to the reader); a dynamic import()
// that loads a part on first use is not a dependency at load time.
const importPattern = /^\s*(?:import|export)\b[^;]*?\bfrom\s*["'](\.[^"']+)["']/gms;
const imports = new Map(
  files.map((file) => [
    file,
    [...text.get(file).matchAll(importPattern)].map((m) => resolve(dirname(file), m[1])).filter((f) => text.has(f)),
  ]),
);
const state = new Map();
const stack = [];
const visit = (file) => {
  state.set(file, "open");
  stack.push(file);
  for (const next of imports.get(file)) {
    if (state.get(next) === "open") {
      const circle = stack.slice(stack.indexOf(next)).concat(next);
      problems.push(`import circle: ${circle.map((f) => relative(root, f)).join(" -> ")}`);
    } else if (!state.has(next)) visit(next);
  }
  stack.pop();
  state.set(file, "done");
};
for (const file of files) if (!state.has(file)) visit(file);

console.log(
  `source: ${files.length} files, ${total} lines (at most ${MAX_TOTAL_LINES}), largest ${Math.max(...files.map(lines))}`,
);
if (problems.length > 0) {
  const shown = problems.slice(0, 20);
  if (problems.length > shown.length) shown.push(`... and ${problems.length - shown.length} more`);
  console.error(shown.join("\n"));
  process.exit(1);
}
