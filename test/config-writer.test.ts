/**
 * Config file edits: pure text changes that keep everything else byte-for-byte, and atomic file updates.
 */
import assert from "node:assert/strict";
import {
  chmodSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { parseConfigText, SERVER_MAP_KEYS } from "../src/config/parse.ts";
import { ConfigWriteError } from "../src/config/write/error.ts";
import {
  addToServerList,
  removeServerEntry,
  serverNames,
  setServerEntry,
  setServerField,
} from "../src/config/write/server-edits.ts";
import { updateConfigFile } from "../src/config/write/update-file.ts";

const root = mkdtempSync(path.join(tmpdir(), "mcp-bridge-config-writer-"));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;

/** A fresh directory for one case; the file in it does not exist yet. */
function freshFile(...sub: string[]): string {
  counter += 1;
  return path.join(root, `case-${counter}`, ...sub, "mcp.json");
}

function splice(text: string, offset: number, length: number, content: string): string {
  return text.slice(0, offset) + content + text.slice(offset + length);
}

/** The offset just past the first occurrence of `marker` (which must occur exactly once). */
function after1(text: string, marker: string): number {
  const i = text.indexOf(marker);
  assert.ok(i >= 0 && text.indexOf(marker, i + 1) < 0, `marker ${JSON.stringify(marker)} must occur once`);
  return i + marker.length;
}

function parsed(text: string): Record<string, unknown> {
  const result = parseConfigText(text);
  assert.equal(result.error, undefined);
  return result.value as Record<string, unknown>;
}

function assertWriteError(fn: () => unknown, reason: ConfigWriteError["reason"], message?: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof ConfigWriteError, `expected a ConfigWriteError, got ${String(error)}`);
    assert.equal(error.reason, reason);
    if (message) assert.match(error.message, message);
    return true;
  });
}

async function assertRejectsWith(
  promise: Promise<unknown>,
  reason: ConfigWriteError["reason"],
  message?: RegExp,
): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ConfigWriteError, `expected a ConfigWriteError, got ${String(error)}`);
    assert.equal(error.reason, reason);
    if (message) assert.match(error.message, message);
    return true;
  });
}

// Three servers, keys in no particular order, 4-space indent, odd spacing in places, a non-server key first.
const FOUR_SPACE = `{
    "theme": "dark",
    "mcpServers": {
        "zeta": {
            "type": "http",
            "url": "https://zeta.example/mcp",
            "headers": { "X-Key": "\${ZETA_KEY}" }
        },
        "alpha": {
            "env": {"B": "2", "A": "1"},
            "command": "npx",
            "args": ["-y", "alpha-server"]
        },
        "mid": {"command": "mid", "lazy": true}
    },
    "after": [1, 2, 3]
}
`;

describe("setServerEntry and removeServerEntry keep the rest of the file", { timeout: 60_000 }, () => {
  it("adds a server after the last one, touching nothing else", () => {
    const out = setServerEntry(FOUR_SPACE, "delta", { command: "delta", args: ["--stdio"], env: {} });
    const at = after1(FOUR_SPACE, `"mid": {"command": "mid", "lazy": true}`);
    const added = `,
        "delta": {
            "command": "delta",
            "args": [
                "--stdio"
            ],
            "env": {}
        }`;
    assert.equal(out, splice(FOUR_SPACE, at, 0, added));
    assert.deepEqual(serverNames(out), ["zeta", "alpha", "mid", "delta"]);
  });

  it("keeps a new entry's keys in insertion order", () => {
    const out = setServerEntry(FOUR_SPACE, "n", { url: "https://n.example", type: "http", enabled: false });
    const entry = (parsed(out).mcpServers as Record<string, Record<string, unknown>>).n!;
    assert.deepEqual(Object.keys(entry), ["url", "type", "enabled"]);
  });

  it("replaces only the value range of an existing entry", () => {
    const out = setServerEntry(FOUR_SPACE, "alpha", { command: "uvx", args: ["alpha"] });
    const start = FOUR_SPACE.indexOf("{", after1(FOUR_SPACE, `"alpha":`));
    const end = after1(FOUR_SPACE, `"args": ["-y", "alpha-server"]\n        }`);
    const replacement = `{
            "command": "uvx",
            "args": [
                "alpha"
            ]
        }`;
    assert.equal(out, splice(FOUR_SPACE, start, end - start, replacement));
    assert.deepEqual(serverNames(out), ["zeta", "alpha", "mid"]);
  });

  it("removes a middle, the last and the first entry with their lines", () => {
    const alphaStart = FOUR_SPACE.indexOf(`        "alpha"`);
    const alphaEnd = after1(FOUR_SPACE, `"args": ["-y", "alpha-server"]\n        },\n`);
    assert.equal(removeServerEntry(FOUR_SPACE, "alpha"), splice(FOUR_SPACE, alphaStart, alphaEnd - alphaStart, ""));

    // The last one: its line goes, and so does the comma after the entry before it.
    const midStart = FOUR_SPACE.indexOf(`        "mid"`);
    const midEnd = after1(FOUR_SPACE, `"lazy": true}\n`);
    const commaAt = after1(FOUR_SPACE, `"args": ["-y", "alpha-server"]\n        }`);
    const expected = splice(splice(FOUR_SPACE, midStart, midEnd - midStart, ""), commaAt, 1, "");
    assert.equal(removeServerEntry(FOUR_SPACE, "mid"), expected);

    const zetaStart = FOUR_SPACE.indexOf(`        "zeta"`);
    const zetaEnd = after1(FOUR_SPACE, `"\${ZETA_KEY}" }\n        },\n`);
    assert.equal(removeServerEntry(FOUR_SPACE, "zeta"), splice(FOUR_SPACE, zetaStart, zetaEnd - zetaStart, ""));
  });

  it("leaves an empty map (and its key) when the last server goes", () => {
    let text = FOUR_SPACE;
    for (const name of ["alpha", "zeta", "mid"]) text = removeServerEntry(text, name);
    assert.equal(text, `{\n    "theme": "dark",\n    "mcpServers": {},\n    "after": [1, 2, 3]\n}\n`);
    assert.deepEqual(serverNames(text), []);
    // And a server added to the empty map is laid out in the file's indentation.
    assert.equal(
      setServerEntry(text, "x", { command: "x" }),
      `{\n    "theme": "dark",\n    "mcpServers": {\n        "x": {\n            "command": "x"\n        }\n    },\n    "after": [1, 2, 3]\n}\n`,
    );
  });

  it("throws ConfigWriteError(missing) for a server the file does not have", () => {
    assertWriteError(() => removeServerEntry(FOUR_SPACE, "nope"), "missing", /nope/);
    assertWriteError(() => removeServerEntry("", "nope"), "missing");
  });

  it("keeps tabs and \\r\\n", () => {
    const text = `{\r\n\t"mcpServers": {\r\n\t\t"a": {\r\n\t\t\t"command": "a"\r\n\t\t}\r\n\t}\r\n}\r\n`;
    const added = setServerEntry(text, "b", { command: "b", args: ["x"] });
    assert.equal(
      added,
      `{\r\n\t"mcpServers": {\r\n\t\t"a": {\r\n\t\t\t"command": "a"\r\n\t\t},\r\n\t\t"b": {\r\n\t\t\t"command": "b",\r\n\t\t\t"args": [\r\n\t\t\t\t"x"\r\n\t\t\t]\r\n\t\t}\r\n\t}\r\n}\r\n`,
    );
    assert.equal(removeServerEntry(added, "b"), text);
    const toggled = setServerField(text, "a", "enabled", false);
    assert.equal(
      toggled,
      `{\r\n\t"mcpServers": {\r\n\t\t"a": {\r\n\t\t\t"command": "a",\r\n\t\t\t"enabled": false\r\n\t\t}\r\n\t}\r\n}\r\n`,
    );
    assert.doesNotMatch(added.replace(/\r\n/g, ""), /\n/);
  });

  it("keeps comments (JSONC) and trailing commas", () => {
    const text = `// my servers
{
  /* the map */
  "mcpServers": {
    // GitHub, via docker
    "github": {
      "command": "docker", // pinned
      "args": ["run", "-i", "ghcr.io/github/github-mcp-server"],
    },
    "files": { "command": "fs" }, // local
  },
}
`;
    const added = setServerEntry(text, "web", { url: "https://web.example/mcp" });
    assert.equal(
      added,
      splice(
        text,
        after1(text, `"files": { "command": "fs" }, // local`),
        0,
        `\n    "web": {\n      "url": "https://web.example/mcp"\n    },`,
      ),
    );
    for (const comment of ["// my servers", "/* the map */", "// GitHub, via docker", "// pinned", "// local"])
      assert.ok(added.includes(comment));

    const replaced = setServerEntry(text, "files", { command: "fs2" });
    assert.equal(replaced, text.replace(`{ "command": "fs" }`, `{\n      "command": "fs2"\n    }`));

    const removed = removeServerEntry(text, "files");
    assert.equal(removed, text.replace(`    "files": { "command": "fs" }, // local\n`, ""));
    assert.deepEqual(serverNames(removed), ["github"]);

    const toggled = setServerField(text, "github", "enabled", false);
    assert.equal(
      toggled,
      text.replace(
        `"ghcr.io/github/github-mcp-server"],\n`,
        `"ghcr.io/github/github-mcp-server"],\n      "enabled": false,\n`,
      ),
    );
  });

  it("moves a same-line comment's comma in front of it", () => {
    const text = `{\n  "mcpServers": {\n    "a": { "command": "a" } // the only one\n  }\n}\n`;
    assert.equal(
      setServerEntry(text, "b", { command: "b" }),
      `{\n  "mcpServers": {\n    "a": { "command": "a" }, // the only one\n    "b": {\n      "command": "b"\n    }\n  }\n}\n`,
    );
  });

  it("keeps a one-line file on one line", () => {
    const text = `{"mcpServers":{"a":{"command":"a"}}}`;
    assert.equal(
      setServerEntry(text, "b", { command: "b" }),
      `{"mcpServers":{"a":{"command":"a"},"b":{"command":"b"}}}`,
    );
    assert.equal(removeServerEntry(text, "a"), `{"mcpServers":{}}`);
    assert.equal(setServerField(text, "a", "enabled", false), `{"mcpServers":{"a":{"command":"a","enabled":false}}}`);
  });

  it("keeps a BOM", () => {
    const text = `\ufeff{\n  "mcpServers": {}\n}\n`;
    const out = setServerEntry(text, "a", { command: "a" });
    assert.equal(out, `\ufeff{\n  "mcpServers": {\n    "a": {\n      "command": "a"\n    }\n  }\n}\n`);
    assert.equal(removeServerEntry(out, "a"), `\ufeff{\n  "mcpServers": {}\n}\n`);
  });

  for (const key of SERVER_MAP_KEYS) {
    it(`uses the file's \`${key}\` map`, () => {
      const text = `{\n  "${key}": {\n    "a": { "command": "a" }\n  }\n}\n`;
      const added = setServerEntry(text, "b", { command: "b" });
      assert.equal(
        added,
        `{\n  "${key}": {\n    "a": { "command": "a" },\n    "b": {\n      "command": "b"\n    }\n  }\n}\n`,
      );
      assert.deepEqual(Object.keys(parsed(added)), [key]);
      assert.deepEqual(serverNames(added), ["a", "b"]);
      assert.equal(
        setServerEntry(text, "a", { url: "https://a" }),
        `{\n  "${key}": {\n    "a": {\n      "url": "https://a"\n    }\n  }\n}\n`,
      );
      assert.equal(removeServerEntry(added, "b"), text);
      assert.equal(
        setServerField(text, "a", "enabled", false),
        `{\n  "${key}": {\n    "a": { "command": "a", "enabled": false }\n  }\n}\n`,
      );
    });
  }

  it("replaces a server under the key that holds it, and adds new ones to the first map", () => {
    const text = `{\n  "mcpServers": {\n    "a": {}\n  },\n  "servers": {\n    "b": {}\n  }\n}\n`;
    assert.equal(
      setServerEntry(text, "b", { command: "b" }),
      text.replace(`"b": {}`, `"b": {\n      "command": "b"\n    }`),
    );
    assert.equal(setServerEntry(text, "c", {}), text.replace(`"a": {}\n`, `"a": {},\n    "c": {}\n`));
  });

  it("adds an `mcpServers` map to a file without one", () => {
    const text = `{\n    "theme": "dark"\n}\n`;
    assert.equal(
      setServerEntry(text, "a", { command: "a" }),
      `{\n    "theme": "dark",\n    "mcpServers": {\n        "a": {\n            "command": "a"\n        }\n    }\n}\n`,
    );
    assert.equal(
      setServerEntry("{}\n", "a", { command: "a" }),
      `{\n  "mcpServers": {\n    "a": {\n      "command": "a"\n    }\n  }\n}\n`,
    );
  });

  it("writes a new file for missing or empty text", () => {
    const expected = `{\n  "mcpServers": {\n    "gh": {\n      "command": "gh",\n      "args": [\n        "mcp"\n      ]\n    }\n  }\n}\n`;
    assert.equal(setServerEntry(undefined, "gh", { command: "gh", args: ["mcp"] }), expected);
    assert.equal(setServerEntry("", "gh", { command: "gh", args: ["mcp"] }), expected);
    assert.equal(setServerEntry("  \n", "gh", { command: "gh", args: ["mcp"] }), expected);
  });

  it("takes a file of comments alone as an empty one: its servers go after the comments", () => {
    const text = "// MCP servers of this project\n";
    const out = setServerEntry(text, "a", { command: "x" });
    assert.ok(out.startsWith(text), out);
    assert.deepEqual(serverNames(out), ["a"]);
    assert.deepEqual(serverNames(text), []);
  });

  it("refuses text that does not parse, with its line and column", () => {
    assertWriteError(
      () => setServerEntry(`{\n  "mcpServers": {\n    "a": { "command": }\n  }\n}\n`, "b", {}),
      "unparsable",
      /line 3, column \d+/,
    );
    assertWriteError(() => removeServerEntry(`{ "mcpServers": `, "a"), "unparsable", /line 1, column \d+/);
    assertWriteError(() => setServerField("{ oops }", "a", "enabled", false), "unparsable", /line 1/);
    assertWriteError(() => serverNames("[1,"), "unparsable");
  });

  it("refuses a top level that is not an object", () => {
    for (const text of ["[]", `"servers"`, "42", "null", `[{"mcpServers": {}}]`]) {
      assertWriteError(() => setServerEntry(text, "a", {}), "not-object");
      assertWriteError(() => serverNames(text), "not-object");
    }
    assertWriteError(() => setServerEntry(`{ "mcpServers": [] }`, "a", {}), "not-object", /mcpServers/);
  });

  it("adds to a file whose map is null, which loading reads as no servers: the map takes the null's place", () => {
    const text = `{\n  "mcpServers": null,\n  "exposure": "auto"\n}\n`;
    const out = setServerEntry(text, "a", { command: "a" });
    assert.deepEqual(JSON.parse(JSON.stringify(parseConfigText(out).value)), {
      mcpServers: { a: { command: "a" } },
      exposure: "auto",
    });
    assert.deepEqual(serverNames(setServerField(text, "b", "enabled", false)), ["b"]);
  });
});

describe("setServerField", { timeout: 60_000 }, () => {
  it("adds `enabled: false` to an existing entry, then replaces it", () => {
    const off = setServerField(FOUR_SPACE, "alpha", "enabled", false);
    const at = after1(FOUR_SPACE, `"args": ["-y", "alpha-server"]`);
    assert.equal(off, splice(FOUR_SPACE, at, 0, `,\n            "enabled": false`));
    const on = setServerField(off, "alpha", "enabled", true);
    assert.equal(on, splice(FOUR_SPACE, at, 0, `,\n            "enabled": true`));
    // A one-line entry gets the field on its line.
    assert.equal(
      setServerField(FOUR_SPACE, "mid", "enabled", false),
      FOUR_SPACE.replace(`"lazy": true}`, `"lazy": true, "enabled": false}`),
    );
  });

  it("removes the field when the value is undefined", () => {
    const off = setServerField(FOUR_SPACE, "alpha", "enabled", false);
    assert.equal(setServerField(off, "alpha", "enabled", undefined), FOUR_SPACE);
    assert.equal(setServerField(FOUR_SPACE, "alpha", "enabled", undefined), FOUR_SPACE);
  });

  it("creates a toggle-only entry for a server the file does not define", () => {
    const out = setServerField(FOUR_SPACE, "github", "enabled", false);
    const at = after1(FOUR_SPACE, `"mid": {"command": "mid", "lazy": true}`);
    assert.equal(out, splice(FOUR_SPACE, at, 0, `,\n        "github": {\n            "enabled": false\n        }`));
    assert.equal(
      setServerField(undefined, "github", "enabled", false),
      `{\n  "mcpServers": {\n    "github": {\n      "enabled": false\n    }\n  }\n}\n`,
    );
  });

  it("switches the entry the loader reads where a name is written twice: the last", () => {
    const text = `{"mcpServers": {"a": {"command": "old"}, "a": {"command": "new"}}}`;
    const loaded = (edited: string) => ({
      ...(parseConfigText(edited).value as { mcpServers: { a: Record<string, unknown> } }).mcpServers.a,
    });
    assert.deepEqual(loaded(setServerField(text, "a", "enabled", false)), {
      command: "new",
      enabled: false,
    });
    assert.deepEqual(loaded(setServerEntry(text, "a", { command: "newer" })), { command: "newer" });
  });

  it("refuses an entry that is not an object", () => {
    assertWriteError(
      () => setServerField(`{ "mcpServers": { "a": "oops" } }`, "a", "enabled", false),
      "not-object",
      /"a"/,
    );
  });
});

describe("updateConfigFile", { timeout: 60_000 }, () => {
  it("creates a missing file with mode 0600, and its directory", async () => {
    const file = freshFile(".pi");
    const text = await updateConfigFile(file, (t) => {
      assert.equal(t, undefined);
      return setServerEntry(t, "a", { command: "a" });
    });
    assert.equal(readFileSync(file, "utf8"), text);
    assert.deepEqual(serverNames(text), ["a"]);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.ok(statSync(path.dirname(file)).isDirectory());
  });

  it("keeps an existing file's mode and leaves no temp files", async () => {
    const file = freshFile();
    await updateConfigFile(file, (t) => setServerEntry(t, "a", { command: "a" }));
    chmodSync(file, 0o644);
    const text = await updateConfigFile(file, (t) => setServerEntry(t, "b", { command: "b" }));
    assert.equal(readFileSync(file, "utf8"), text);
    assert.deepEqual(serverNames(text), ["a", "b"]);
    assert.equal(statSync(file).mode & 0o777, 0o644);
    assert.deepEqual(readdirSync(path.dirname(file)), ["mcp.json"]);
  });

  it("leaves a read-only file untouched: the rename would replace it even so (and always for root)", async () => {
    const file = freshFile();
    await updateConfigFile(file, (t) => setServerEntry(t, "a", { command: "a" }));
    const before = readFileSync(file, "utf8");
    chmodSync(file, 0o444);
    await assertRejectsWith(
      updateConfigFile(file, (t) => setServerEntry(t, "b", { command: "b" })),
      "io",
      /cannot write .*mcp\.json: it is read-only/,
    );
    assert.equal(readFileSync(file, "utf8"), before);
  });

  it("edits a file in place byte-for-byte except the change", async () => {
    const file = freshFile();
    await updateConfigFile(file, () => FOUR_SPACE);
    const text = await updateConfigFile(file, (t) => removeServerEntry(t!, "alpha"));
    assert.equal(readFileSync(file, "utf8"), text);
    assert.equal(text, removeServerEntry(FOUR_SPACE, "alpha"));
  });

  it("leaves a file that does not parse untouched", async () => {
    const file = freshFile();
    await updateConfigFile(file, () => "{}\n");
    const broken = `{\n  "mcpServers": {\n    "a": { "command": "a" },,\n  }\n}\n`;
    writeFileSync(file, broken);
    const past = new Date(Date.now() - 3_600_000);
    utimesSync(file, past, past);
    const before = statSync(file);
    let called = false;
    await assertRejectsWith(
      updateConfigFile(file, (t) => {
        called = true;
        return setServerEntry(t, "b", {});
      }),
      "unparsable",
      /line 3, column \d+/,
    );
    assert.equal(called, false);
    assert.equal(readFileSync(file, "utf8"), broken);
    assert.equal(statSync(file).mtimeMs, before.mtimeMs);
    assert.equal(statSync(file).ino, before.ino);
    assert.deepEqual(readdirSync(path.dirname(file)), ["mcp.json"]);
  });

  it("leaves a file that a `/*` never closed untouched: what it adds would be inside the comment", async () => {
    const file = freshFile();
    await updateConfigFile(file, () => "{}\n");
    writeFileSync(file, "/* draft\n");
    await assertRejectsWith(
      updateConfigFile(file, (t) => setServerEntry(t, "b", { command: "b" })),
      "unparsable",
      /UnexpectedEndOfComment/,
    );
    assert.equal(readFileSync(file, "utf8"), "/* draft\n");
  });

  it("leaves a file whose top level is not an object untouched", async () => {
    const file = freshFile();
    await updateConfigFile(file, () => "{}\n");
    writeFileSync(file, "[1, 2]\n");
    const before = statSync(file);
    await assertRejectsWith(
      updateConfigFile(file, (t) => setServerEntry(t, "b", {})),
      "not-object",
    );
    assert.equal(readFileSync(file, "utf8"), "[1, 2]\n");
    assert.equal(statSync(file).mtimeMs, before.mtimeMs);
    assert.deepEqual(readdirSync(path.dirname(file)), ["mcp.json"]);
  });

  it("does not rewrite the file when nothing changes", async () => {
    const file = freshFile();
    await updateConfigFile(file, () => FOUR_SPACE);
    const before = statSync(file);
    const text = await updateConfigFile(file, (t) => setServerField(t, "alpha", "enabled", undefined));
    assert.equal(text, FOUR_SPACE);
    assert.equal(statSync(file).ino, before.ino);
  });

  it("writes through a symlink to the file it points at", async () => {
    const target = freshFile();
    await updateConfigFile(target, () => "{}\n");
    const link = path.join(path.dirname(target), "link.json");
    symlinkSync(target, link);
    const text = await updateConfigFile(link, (t) => setServerEntry(t, "a", {}));
    assert.ok(lstatSync(link).isSymbolicLink());
    assert.equal(readFileSync(target, "utf8"), text);
  });

  it("serialises concurrent updates of one file", async () => {
    const file = freshFile();
    await updateConfigFile(file, () => FOUR_SPACE);
    const names = Array.from({ length: 10 }, (_, i) => `server-${i}`);
    const results = await Promise.all(
      names.map((name) => updateConfigFile(file, (t) => setServerEntry(t, name, { command: name }))),
    );
    const final = readFileSync(file, "utf8");
    assert.equal(results[results.length - 1], final);
    assert.deepEqual(serverNames(final), ["zeta", "alpha", "mid", ...names]);
    assert.ok(final.startsWith(FOUR_SPACE.slice(0, FOUR_SPACE.indexOf(`"mid"`))));
    assert.deepEqual(readdirSync(path.dirname(file)), ["mcp.json"]);
  });

  it("keeps the queue going after a failed update", async () => {
    const file = freshFile();
    const failing = updateConfigFile(file, () => {
      throw new ConfigWriteError("missing", "no such server");
    });
    const next = updateConfigFile(file, (t) => setServerEntry(t, "a", {}));
    await assertRejectsWith(failing, "missing");
    assert.deepEqual(serverNames(await next), ["a"]);
  });
});

describe("addToServerList (Always allow writes a tool into autoApprove)", { timeout: 60_000 }, () => {
  const add = (text: string | undefined, tool = "new_tool") => addToServerList(text, "s", "autoApprove", tool);

  it("appends to a list on one line, keeping the comment after it", () => {
    const text = `{\n  "mcpServers": {\n    "s": {\n      "command": "x",\n      "autoApprove": ["a", "b"] // keep\n    }\n  }\n}\n`;
    assert.equal(add(text), text.replace(`["a", "b"]`, `["a", "b", "new_tool"]`));
  });

  it("appends to a list with one element a line, with its indentation; comments stay with their elements", () => {
    const text = `{\n    "mcpServers": {\n        "s": {\n            "autoApprove": [\n                "a", // first\n                "b" // second\n            ]\n        }\n    }\n}\n`;
    assert.equal(add(text), text.replace(`"b" // second\n`, `"b", // second\n                "new_tool"\n`));
    const trailing = `{\r\n  "mcp": {\r\n    "s": {\r\n      "autoApprove": [\r\n        "a",\r\n      ],\r\n    },\r\n  },\r\n}\r\n`;
    assert.equal(add(trailing), trailing.replace(`"a",\r\n`, `"a",\r\n        "new_tool",\r\n`));
  });

  it("fills an empty list, and adds the list to an entry without one", () => {
    assert.equal(
      add(`{"mcpServers": {"s": {"command": "x", "autoApprove": []}}}`),
      `{"mcpServers": {"s": {"command": "x", "autoApprove": ["new_tool"]}}}`,
    );
    assert.equal(
      add(`{"mcpServers": {"s": {"command": "x"}}}`),
      `{"mcpServers": {"s": {"command": "x", "autoApprove": ["new_tool"]}}}`,
    );
    const multi = `{\n  // my servers\n  "servers": {\n    "s": {\n      "command": "x"\n    }\n  }\n}\n`;
    assert.equal(
      add(multi),
      multi.replace(`"command": "x"\n`, `"command": "x",\n      "autoApprove": [\n        "new_tool"\n      ]\n`),
    );
  });

  it("leaves the text as it is when the list holds the tool already", () => {
    const text = `{"mcpServers": {"s": {"command": "x", "autoApprove": ["new_tool"]}}}`;
    assert.equal(add(text), text);
  });

  it("refuses a file that does not define the server, and a field that is not a list", () => {
    assertWriteError(() => add(`{"mcpServers": {"other": {"command": "x"}}}`), "missing", /"s"/);
    assertWriteError(() => add(undefined), "missing", /"s"/);
    assertWriteError(
      () => add(`{"mcpServers": {"s": {"command": "x", "autoApprove": "*"}}}`),
      "not-object",
      /`autoApprove` of server "s" .* is not a list/,
    );
    assertWriteError(() => add(`{"mcpServers": {"s": "oops"}}`), "not-object", /"s"/);
  });
});
