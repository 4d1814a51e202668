/**
 * The pure side of tool approval: the glob matcher, destructive names, the order of the rules, the config fields
 * (`autoApprove`, `autoApproveReadOnly`) and the top-level `"approval"` key, which only the user-level file may set.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { layerConfigs } from "../src/config/layers.ts";
import { type ConfigSource } from "../src/config/types.ts";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import { type ApprovalQuestion, decideApproval, destructiveWord, nameWords } from "../src/trust/approval-policy.ts";
import { matchesToolPattern } from "../src/common/tool-pattern.ts";

const project: ConfigSource = { scope: "project", path: "/p/.pi/mcp.json" };
const user: ConfigSource = { scope: "user", path: "/home/u/.pi/agent/mcp.json" };
const flag: ConfigSource = { scope: "flag", path: "/p/extra.json" };
const bundled: ConfigSource = { scope: "bundled", path: "/ext/mcp.json" };

describe("matchesToolPattern", () => {
  test("a name without wildcards matches only itself, case included", () => {
    assert.equal(matchesToolPattern("get_issue", "get_issue"), true);
    assert.equal(matchesToolPattern("get_issue", "get_issues"), false);
    assert.equal(matchesToolPattern("get_issue", "Get_issue"), false);
    assert.equal(matchesToolPattern("", ""), true);
    assert.equal(matchesToolPattern("", "x"), false);
  });

  test("* stands for any run of characters, none included", () => {
    assert.equal(matchesToolPattern("*", ""), true);
    assert.equal(matchesToolPattern("*", "anything at all"), true);
    assert.equal(matchesToolPattern("search_*", "search_"), true);
    assert.equal(matchesToolPattern("search_*", "search_code"), true);
    assert.equal(matchesToolPattern("search_*", "research_code"), false);
    assert.equal(matchesToolPattern("*_issue", "get_issue"), true);
    assert.equal(matchesToolPattern("*_issue", "get_issues"), false);
    assert.equal(matchesToolPattern("a*b*c", "aXXbYYc"), true);
    assert.equal(matchesToolPattern("a*b*c", "abc"), true);
    assert.equal(matchesToolPattern("a*b*c", "acb"), false);
    assert.equal(matchesToolPattern("a**", "a"), true);
    assert.equal(matchesToolPattern("*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), false);
  });

  test("? stands for exactly one character", () => {
    assert.equal(matchesToolPattern("get_?", "get_a"), true);
    assert.equal(matchesToolPattern("get_?", "get_"), false);
    assert.equal(matchesToolPattern("get_?", "get_ab"), false);
    assert.equal(matchesToolPattern("?*", ""), false);
    assert.equal(matchesToolPattern("?*", "x"), true);
  });

  test("every other character is literal (not a regular expression)", () => {
    assert.equal(matchesToolPattern("a.b", "a.b"), true);
    assert.equal(matchesToolPattern("a.b", "axb"), false);
    assert.equal(matchesToolPattern("[ab]", "a"), false);
    assert.equal(matchesToolPattern("a+", "aa"), false);
    assert.equal(matchesToolPattern("^x$", "^x$"), true);
  });
});

describe("destructive names", () => {
  test("names are split into words at separators and camelCase", () => {
    assert.deepEqual(nameWords("deleteFileNow"), ["delete", "file", "now"]);
    assert.deepEqual(nameWords("DROP-TABLE.v2"), ["drop", "table", "v2"]);
    assert.deepEqual(nameWords("__x__"), ["x"]);
    // An acronym ends where a capitalised word starts: the verb after it is a word of its own.
    assert.deepEqual(nameWords("GCEDeleteInstance"), ["gce", "delete", "instance"]);
    assert.equal(destructiveWord("DBDrop"), "drop");
  });

  test("delete, remove, drop, deploy, destroy and purge, as words and their forms", () => {
    for (const [name, word] of [
      ["delete_file", "delete"],
      ["deleteFile", "delete"],
      ["remove", "remove"],
      ["bulk_remove_items", "remove"],
      ["drop_table", "drop"],
      ["DROP_TABLE", "drop"],
      ["deploy_preview", "deploy"],
      ["deployment_create", "deployment"],
      ["destroy-stack", "destroy"],
      ["purge_cache", "purge"],
      ["list_deleted_items", "deleted"],
      ["schedule_removal", "removal"],
      ["purging", "purging"],
      ["dropped_rows", "dropped"],
    ]) {
      assert.equal(destructiveWord(name!), word, name);
    }
  });

  test("a word that only contains one of them does not count", () => {
    for (const name of ["dropdown_options", "create_droplet", "undelete", "list_files", "get_issue", "deployments2x"]) {
      assert.equal(destructiveWord(name), undefined, name);
    }
  });
});

describe("decideApproval", () => {
  const ask = (overrides: Partial<ApprovalQuestion> = {}): ApprovalQuestion => ({
    tool: "get_issue",
    rules: { autoApprove: [], autoApproveReadOnly: false },
    allowedForSession: false,
    ...overrides,
  });

  test("a tool nothing allows asks, this first time", () => {
    assert.deepEqual(decideApproval(ask()), { action: "ask", everyTime: false, reason: "first use in this session" });
  });

  test("allowed for the session: runs", () => {
    assert.equal(decideApproval(ask({ allowedForSession: true })).action, "allow");
  });

  test("autoApprove by name or by pattern: runs", () => {
    assert.equal(
      decideApproval(ask({ rules: { autoApprove: ["get_issue"], autoApproveReadOnly: false } })).action,
      "allow",
    );
    const byPattern = decideApproval(ask({ rules: { autoApprove: ["other", "get_*"], autoApproveReadOnly: false } }));
    assert.deepEqual(byPattern, { action: "allow", reason: 'matches "get_*" in autoApprove' });
    assert.equal(decideApproval(ask({ rules: { autoApprove: ["list_*"], autoApproveReadOnly: false } })).action, "ask");
  });

  test("autoApproveReadOnly runs tools marked readOnlyHint, only those, only when on", () => {
    const on = { autoApprove: [], autoApproveReadOnly: true };
    assert.equal(decideApproval(ask({ rules: on, hints: { readOnlyHint: true } })).action, "allow");
    assert.equal(decideApproval(ask({ rules: on, hints: { readOnlyHint: false } })).action, "ask");
    assert.equal(decideApproval(ask({ rules: on })).action, "ask");
    assert.equal(decideApproval(ask({ hints: { readOnlyHint: true } })).action, "ask");
  });

  test("a tool its server marks destructive asks every time: a session grant, a pattern or read-only do not cover it", () => {
    const hints = { destructiveHint: true, readOnlyHint: true };
    for (const question of [
      ask({ tool: "wipe", hints }),
      ask({ tool: "wipe", hints, allowedForSession: true }),
      ask({ tool: "wipe", hints, rules: { autoApprove: ["*", "wip?", "w*"], autoApproveReadOnly: true } }),
    ]) {
      const decision = decideApproval(question);
      assert.equal(decision.action, "ask");
      assert.equal(decision.action === "ask" && decision.everyTime, true);
      assert.match(decision.reason, /its server marks it destructive/);
    }
  });

  test("a tool whose name says delete asks every time, naming the word", () => {
    const decision = decideApproval(
      ask({ tool: "delete_issue", allowedForSession: true, rules: { autoApprove: ["*"], autoApproveReadOnly: false } }),
    );
    assert.deepEqual(decision, {
      action: "ask",
      everyTime: true,
      reason: "its name says 'delete'; it asks every time unless autoApprove lists its exact name",
    });
  });

  test("destructiveHint false is not destructive; an unannotated tool is not either", () => {
    assert.equal(decideApproval(ask({ hints: { destructiveHint: false }, allowedForSession: true })).action, "allow");
  });

  test("a destructive tool autoApprove lists by its exact name runs", () => {
    const rules = { autoApprove: ["delete_issue"], autoApproveReadOnly: false };
    assert.equal(decideApproval(ask({ tool: "delete_issue", rules })).action, "allow");
    assert.equal(
      decideApproval(ask({ tool: "delete_issue", rules, hints: { destructiveHint: true } })).action,
      "allow",
    );
  });

  test('approval off ("approval": "never") runs everything, destructive tools included', () => {
    assert.equal(
      decideApproval(ask({ tool: "drop_database", hints: { destructiveHint: true }, approvalOff: true })).action,
      "allow",
    );
  });
});

describe("approval settings in config files", () => {
  test("autoApprove and autoApproveReadOnly default to none and off", () => {
    const { config } = validateServerEntry("s", { command: "x" }, project);
    assert.deepEqual(config?.autoApprove, []);
    assert.equal(config?.autoApproveReadOnly, false);
  });

  test("autoApprove takes names and patterns; autoApproveReadOnly a boolean", () => {
    const { config, errors } = validateServerEntry(
      "s",
      { url: "https://x.example/mcp", autoApprove: ["a", "b_*"], autoApproveReadOnly: true },
      project,
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(config?.autoApprove, ["a", "b_*"]);
    assert.equal(config?.autoApproveReadOnly, true);
  });

  test("a wrong autoApprove or autoApproveReadOnly rejects the entry with what it must be", () => {
    for (const autoApprove of ["*", ["ok", 3], [""], { a: 1 }, true]) {
      const result = validateServerEntry("s", { command: "x", autoApprove }, project);
      assert.equal(result.config, undefined, JSON.stringify(autoApprove));
      assert.match(result.errors.join(), /`autoApprove` must be an array of tool names/);
    }
    const result = validateServerEntry("s", { command: "x", autoApproveReadOnly: "yes" }, project);
    assert.match(result.errors.join(), /`autoApproveReadOnly` must be true or false/);
  });

  test('"approval": "never" in the user-level file turns approval off', () => {
    const layered = layerConfigs([{ source: user, text: JSON.stringify({ approval: "never", mcpServers: {} }) }]);
    assert.equal(layered.approval, "never");
    assert.deepEqual(layered.problems, []);
  });

  test("a project, flag or bundled file cannot turn it off: ignored, with a warning saying where it goes", () => {
    for (const source of [project, flag, bundled]) {
      const layered = layerConfigs([
        { source, text: JSON.stringify({ approval: "never", mcpServers: {} }) },
        { source: user, text: JSON.stringify({ mcpServers: {} }) },
      ]);
      assert.equal(layered.approval, "ask", source.scope);
      assert.equal(layered.problems.length, 1);
      assert.equal(layered.problems[0]!.level, "warning");
      assert.equal(layered.problems[0]!.source, source);
      assert.match(
        layered.problems[0]!.message,
        /`approval` is ignored here: only the user-level file .* can turn approval prompts off/,
      );
    }
  });

  test('"ask" anywhere is the default and says nothing; another value is a warning and approval stays on', () => {
    assert.deepEqual(layerConfigs([{ source: project, text: '{"approval": "ask"}' }]).problems, []);
    const layered = layerConfigs([{ source: user, text: '{"approval": false}' }]);
    assert.equal(layered.approval, "ask");
    assert.match(layered.problems[0]!.message, /`approval` must be "ask" or "never" \(got false\)/);
  });

  test("a file that does not set it leaves the default: ask", () => {
    assert.equal(layerConfigs([]).approval, "ask");
    assert.equal(layerConfigs([{ source: user, text: undefined }]).approval, "ask");
  });
});
