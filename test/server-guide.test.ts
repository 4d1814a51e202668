/**
 * What each server is for, as the model reads it: the pure line formatter, the `description` config field, and that
 * the field is part of what the user trusts.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ConfigSource } from "../src/config/types.ts";
import { trustFingerprint } from "../src/trust/trust-rules.ts";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import { MAX_DESCRIPTION_CHARS } from "../src/config/validate/usage.ts";
import {
  formatServerGuide,
  MAX_SERVER_GUIDE_LINE,
  SERVER_GUIDE_HEADING,
  serverGuideLine,
  toolsHint,
} from "../src/translate/server-guide-text.ts";

const SOURCE: ConfigSource = { scope: "project", path: "/p/.pi/mcp.json" };

describe("server guide line", () => {
  test("description and instructions on one line, after the server and its tool names", () => {
    assert.equal(
      serverGuideLine({
        server: "github",
        toolNames: ["gh_search", "gh_issue"],
        description: "Our org's issues",
        instructions: "Search before\n\nyou  open an issue.",
      }),
      "- github (tools gh_*): Our org's issues — Search before you open an issue.",
    );
    assert.equal(
      serverGuideLine({ server: "db", toolNames: ["query"], instructions: "Read-only SQL." }),
      "- db (tools query): Read-only SQL.",
    );
  });

  test("no line for a server without tools, or with nothing to say", () => {
    assert.equal(serverGuideLine({ server: "a", toolNames: [], description: "x", instructions: "y" }), undefined);
    assert.equal(serverGuideLine({ server: "a", toolNames: ["t"] }), undefined);
    assert.equal(
      serverGuideLine({ server: "a", toolNames: ["t"], description: " \n ", instructions: "\x1b[2J" }),
      undefined,
    );
    assert.equal(formatServerGuide([{ server: "a", toolNames: [] }]), undefined);
    assert.equal(formatServerGuide([]), undefined);
  });

  test("bounded: a long text is cut with an ellipsis, never in half a surrogate pair", () => {
    const line = serverGuideLine({ server: "big", toolNames: ["t"], instructions: "word ".repeat(10_000) })!;
    assert.equal(line.length, MAX_SERVER_GUIDE_LINE);
    assert.match(line, /^- big \(tools t\): word word .*…$/);
    assert.ok(!line.includes("\n"));
    const prefix = "- e (tools t): ";
    const emoji = serverGuideLine({
      server: "e",
      toolNames: ["t"],
      instructions: `${"x".repeat(MAX_SERVER_GUIDE_LINE - prefix.length - 2)}😀😀😀`,
    })!;
    assert.ok(emoji.length <= MAX_SERVER_GUIDE_LINE);
    assert.ok(emoji.endsWith("x…"), emoji.slice(-5));
  });

  test("control sequences and bidi overrides go; the text stays on its one line", () => {
    const line = serverGuideLine({
      server: "evil",
      toolNames: ["t"],
      instructions: "Use\x1b]52;c;cHduZWQ=\x07 me\r\n- fake: line\u202e",
    })!;
    assert.equal(line, "- evil (tools t): Use me - fake: line");
  });

  test("tool names: a shared prefix up to its last underscore, else the first few", () => {
    assert.equal(toolsHint(["mcp_everything_echo", "mcp_everything_get-sum"]), "mcp_everything_*");
    assert.equal(toolsHint(["mcp_x_a"]), "mcp_x_a");
    assert.equal(toolsHint(["read_file", "write_file", "list", "stat"]), "read_file, write_file, list, …");
    assert.equal(toolsHint(["a", "b"]), "a, b");
  });

  test("the heading, then one line per server in the order given", () => {
    const guide = formatServerGuide([
      { server: "one", toolNames: ["one_a", "one_b"], description: "First" },
      { server: "quiet", toolNames: ["q"] },
      { server: "two", toolNames: ["two_a"], instructions: "Second" },
    ]);
    assert.equal(guide, [SERVER_GUIDE_HEADING, "- one (tools one_*): First", "- two (tools two_a): Second"].join("\n"));
  });
});

describe("the `description` field", () => {
  const entry = (description: unknown) => validateServerEntry("s", { command: "node", description }, SOURCE);

  test("one line of text, kept trimmed", () => {
    assert.equal(entry("  Issues of our org ").config?.description, "Issues of our org");
    assert.equal(entry(undefined).config?.description, undefined);
    assert.equal(entry("   ").config?.description, undefined);
  });

  test("anything else is an error that says what is wanted", () => {
    assert.match(
      entry(42).errors.join(),
      /`description` must be one line of text of at most 200 characters saying what the server is for; it is a number/,
    );
    assert.match(entry(["a"]).errors.join(), /it is a list/);
    assert.match(entry("x".repeat(MAX_DESCRIPTION_CHARS + 1)).errors.join(), /it has 201/);
    assert.match(entry("two\nlines").errors.join(), /line break or control character/);
    assert.equal(entry("x".repeat(MAX_DESCRIPTION_CHARS)).errors.length, 0);
  });

  test("it is part of what the user trusts; an entry without it keeps its earlier fingerprint", () => {
    const without = validateServerEntry("s", { command: "node" }, SOURCE).config!;
    const withIt = entry("Issues").config!;
    assert.notEqual(trustFingerprint(withIt), trustFingerprint(without));
    assert.notEqual(trustFingerprint(withIt), trustFingerprint(entry("Other").config!));
    // The fingerprint of an entry written before `description` existed, as the trust records hold it.
    assert.equal(trustFingerprint(without), trustFingerprint({ ...without, description: undefined }));
  });
});
