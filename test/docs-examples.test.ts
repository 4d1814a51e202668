/**
 * The documents hold what they show: every `mcp.json` example in README.md and docs/ loads through the real config
 * loader (`loadLayeredConfig`, from files on disk, as pi starts the bridge), and every link between the documents
 * reaches a file and a heading that exist. A doc example that stops being valid, or a page or heading renamed under a
 * link, fails here.
 *
 * Marks in the markdown, as an HTML comment on the line before a block: `<!-- invalid -->` for an example that shows
 * an error (it must be rejected), `<!-- not mcp.json -->` for JSON that is not a config. A block that starts with a
 * server's name (`"github": { … }`) is one or more entries of the server map and is loaded under `mcpServers`; an
 * entry that only switches a server or its exposure is loaded as a project file over a user file that defines it.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { loadLayeredConfig, PROJECT_CONFIG_PATH, USER_CONFIG_NAME } from "../src/config/files.ts";
import { extractServerEntries, isToggleOnly, parseConfigText } from "../src/config/parse.ts";
import { REPO_ROOT, tempDir } from "./helpers.ts";

interface Example {
  file: string;
  line: number;
  text: string;
  mark: "invalid" | "not mcp.json" | undefined;
}

const markdown = (dir: string) =>
  readdirSync(path.join(REPO_ROOT, dir))
    .filter((name) => name.endsWith(".md"))
    .map((name) => path.join(dir, name));
const CONFIG_DOCS = ["README.md", ...markdown("docs")];
const LINKED_DOCS = [...CONFIG_DOCS, "ARCHITECTURE.md", "SECURITY.md", "bench/README.md", ...markdown("bench/results")];

/** The `json` and `jsonc` blocks of a markdown file, each with the mark on the line before it. */
function examples(file: string): Example[] {
  const lines = readFileSync(path.join(REPO_ROOT, file), "utf8").split("\n");
  const found: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```jsonc?\s*$/.test(lines[i]!)) continue;
    const end = lines.indexOf("```", i + 1);
    assert.ok(end > i, `${file}:${i + 1}: a code block that never closes`);
    const mark = /^<!-- (invalid|not mcp\.json) -->$/.exec(lines[i - 1]?.trim() ?? "")?.[1] as Example["mark"];
    found.push({ file, line: i + 1, text: lines.slice(i + 1, end).join("\n"), mark });
    i = end;
  }
  return found;
}

/** A block that starts with a server's name is entries of the server map, as the docs say they go. */
function asFile(text: string): string {
  const start = text.replace(/^(\s*\/\/[^\n]*\n)*\s*/, "");
  return start.startsWith('"') ? `{\n"mcpServers": {\n${text}\n}\n}\n` : text;
}

const home = tempDir("mcp-bridge-docs-");
after(() => home.cleanup());
let runs = 0;

/** Loads an example as pi would: the user's file, or a project file over a user file that defines what it switches. */
async function load(example: Example) {
  const text = asFile(example.text);
  const parsed = parseConfigText(text);
  assert.equal(parsed.error, undefined, `${example.file}:${example.line}: ${parsed.error}`);
  const { entries } = extractServerEntries(parsed.value, { scope: "user", path: "example" });
  const toggles = entries.filter((e) => isToggleOnly(e.entry)).map((e) => e.name);
  const projectRoot = path.join(home.dir, `project-${++runs}`);
  const agentDir = path.join(home.dir, `agent-${runs}`);
  mkdirSync(path.join(projectRoot, path.dirname(PROJECT_CONFIG_PATH)), { recursive: true });
  mkdirSync(agentDir, { recursive: true });
  if (toggles.length) {
    const lower = Object.fromEntries(toggles.map((name) => [name, { command: "node", args: ["server.js"] }]));
    writeFileSync(path.join(agentDir, USER_CONFIG_NAME), JSON.stringify({ mcpServers: lower }));
    writeFileSync(path.join(projectRoot, PROJECT_CONFIG_PATH), text);
  } else {
    writeFileSync(path.join(agentDir, USER_CONFIG_NAME), text);
  }
  const config = await loadLayeredConfig({ projectRoot, agentDir, bundledPath: path.join(REPO_ROOT, "mcp.json") });
  return { config, names: entries.map((e) => e.name) };
}

describe("the mcp.json examples of README.md and docs/", () => {
  const all = CONFIG_DOCS.flatMap(examples).filter((e) => e.mark !== "not mcp.json");

  test("are found: the documents show configs, and at least one invalid one", () => {
    assert.ok(all.length >= 10, `only ${all.length} examples found`);
    assert.ok(
      all.some((e) => e.mark === "invalid"),
      "no example is marked <!-- invalid -->",
    );
  });

  for (const example of all) {
    const where = `${example.file}:${example.line}`;
    if (example.mark === "invalid") {
      test(`${where} is rejected, as the text around it says`, async () => {
        const { config, names } = await load(example);
        const errors = config.problems.filter((p) => p.level === "error");
        assert.ok(errors.length > 0, `${where} is marked invalid but loads without an error`);
        const loaded = config.servers.filter((s) => names.includes(s.name)).map((s) => s.name);
        assert.deepEqual(loaded, [], `${where} is marked invalid, but these of its servers load`);
      });
    } else {
      test(`${where} loads without a problem, every server in it`, async () => {
        const { config, names } = await load(example);
        assert.deepEqual(
          config.problems.map((p) => `${p.level}: ${p.server ?? ""} ${p.message}`),
          [],
          where,
        );
        assert.ok(names.length > 0, `${where} names no server`);
        assert.deepEqual(config.servers.map((s) => s.name).sort(), [...names].sort(), where);
      });
    }
  }
});

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2, … */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  let fenced = false;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6} (.*)$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, "")
      .replace(/ /g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    found.add(count ? `${slug}-${count}` : slug);
  }
  return found;
}

describe("links between the documents", () => {
  for (const doc of LINKED_DOCS) {
    test(`${doc}: every relative link reaches a file, and a heading there`, () => {
      const text = readFileSync(path.join(REPO_ROOT, doc), "utf8").replace(/```[\s\S]*?```/g, "");
      const broken: string[] = [];
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [file, anchor] = target!.split("#");
        const resolved = file ? path.resolve(REPO_ROOT, path.dirname(doc), file) : path.join(REPO_ROOT, doc);
        if (!existsSync(resolved)) broken.push(`${target}: no such file`);
        else if (anchor && resolved.endsWith(".md") && !anchors(resolved).has(anchor)) {
          broken.push(`${target}: no such heading`);
        }
      }
      assert.deepEqual(broken, []);
    });
  }
});

describe("source paths the documents name", () => {
  // Files move; a page that still names the old path sends a reader nowhere.
  for (const doc of LINKED_DOCS.filter((d) => !d.startsWith("bench/results"))) {
    test(`${doc}: every src/ path it names exists`, () => {
      const text = readFileSync(path.join(REPO_ROOT, doc), "utf8");
      const named = [...text.matchAll(/\b(src\/[\w./-]+\.(?:ts|sh|mjs))\b/g)].map((m) => m[1]!);
      assert.deepEqual(
        named.filter((file) => !existsSync(path.join(REPO_ROOT, file))),
        [],
      );
    });
  }
});

interface TestPointer {
  file: string;
  name: string;
}

/**
 * The tests a document points to: every `<file>.test.ts › "name"`, in a `(tests: …)` list after a claim or in its
 * words; `, "name"` after one names another test of that file, and `› "name"` alone another test of the file named
 * before it. A name may wrap onto the next line (read as one space), and a `"` in it is written `\"`, which markdown
 * shows as `"`. An arrow without a name or a file, or a `(tests: …)` with no arrow, is unreadable, so a typo cannot
 * make a pointer vanish from the check. The form shown as code points nowhere.
 */
function testPointers(text: string): { pointers: TestPointer[]; unreadable: string[] } {
  // Code spans are taken in pairs, so the text between two of them (a pointer, say) is never read as one.
  const prose = text.replace(/`[^`\n]*`/g, (span) => (span.includes("›") ? " ".repeat(span.length) : span));
  const pointers: TestPointer[] = [];
  const unreadable = [...prose.matchAll(/\(tests?:[^)›]*\)/g)].map(([group]) => group);
  const arrows = /((?:test\/)?[\w.-]+\.test\.ts)?\s*›\s*/g;
  let file: string | undefined;
  for (let arrow = arrows.exec(prose); arrow; arrow = arrows.exec(prose)) {
    file = arrow[1] ?? file;
    const first = /"((?:[^"\\]|\\.)*)"/y;
    const more = /,\s*"((?:[^"\\]|\\.)*)"/y;
    let index = arrow.index + arrow[0].length;
    let count = 0;
    for (let pattern = first; ; pattern = more) {
      pattern.lastIndex = index;
      const name = pattern.exec(prose);
      if (!name) break;
      if (file) pointers.push({ file, name: name[1]!.replace(/\\(.)/g, "$1").replace(/\s+/g, " ") });
      index = pattern.lastIndex;
      count++;
    }
    arrows.lastIndex = index;
    if (!file || count === 0) unreadable.push(prose.slice(arrow.index, arrow.index + 80));
  }
  return { pointers, unreadable };
}

/** Names a test file builds from a template (`after ${exit.name}, …`), each `${…}` standing for any text. */
function templateNames(code: string): RegExp[] {
  return [...code.matchAll(/`((?:[^`\\]|\\.)*\$\{(?:[^`\\]|\\.)*)`/g)].map(
    ([, body]) =>
      new RegExp(
        `^${body!
          .split(/\$\{[^}]*\}/)
          .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
          .join(".+")}$`,
      ),
  );
}

describe("tests the documents point to", () => {
  // A claim in SECURITY.md names the test that proves it; a renamed or deleted test leaves the claim unproven.
  for (const doc of LINKED_DOCS.filter((d) => !d.startsWith("bench/results"))) {
    test(`${doc}: every test it points to (file › "name") exists`, () => {
      const text = readFileSync(path.join(REPO_ROOT, doc), "utf8");
      const { pointers, unreadable } = testPointers(text);
      assert.deepEqual(unreadable, [], 'pointers not in the form (tests: test/<file>.test.ts › "name", …)');
      if (doc === "SECURITY.md") assert.ok(pointers.length >= 100, `only ${pointers.length} pointers in SECURITY.md`);
      const missing: string[] = [];
      for (const { file, name } of pointers) {
        const source = path.join(REPO_ROOT, file);
        if (!existsSync(source)) {
          missing.push(`${file}: no such file`);
          continue;
        }
        const code = readFileSync(source, "utf8");
        const written = [name, name.replace(/"/g, '\\"'), name.replace(/'/g, "\\'")];
        if (!written.some((form) => code.includes(form)) && !templateNames(code).some((t) => t.test(name)))
          missing.push(`${file} › "${name}": no such test`);
      }
      for (const [named] of text.matchAll(/\btest\/[\w.-]+\.test\.ts\b/g))
        if (!existsSync(path.join(REPO_ROOT, named))) missing.push(`${named}: no such file`);
      assert.deepEqual([...new Set(missing)], []);
    });
  }
});
