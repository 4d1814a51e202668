/**
 * The pure side of exposure: the config fields (per server, per tool, top-level default and threshold, a project
 * entry that only changes a lower layer's exposure), which exposure a tool gets, what `auto` decides, the provider
 * request bodies the bridge takes undeclared tools out of (one shape per provider family pi-ai speaks), and the text
 * of tool search.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type Api, type Model, streamSimple } from "@mariozechner/pi-ai";
import { exposureDefaultsOr, readThreshold } from "../src/config/exposure-setting.ts";
import { layerConfigs } from "../src/config/layers.ts";
import { type ConfigSource } from "../src/config/types.ts";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import {
  autoLimitTokens,
  decideAuto,
  exposureSetting,
  FALLBACK_CONTEXT_WINDOW,
} from "../src/exposure/exposure-rules.ts";
import { withoutTools } from "../src/exposure/payload-tools.ts";
import { ToolExposure } from "../src/exposure/tool-exposure.ts";
import {
  deferredServersLine,
  formatSearchResult,
  signInWaitLine,
  TOOL_SEARCH_DESCRIPTION,
} from "../src/exposure/tool-search-text.ts";

const user: ConfigSource = { scope: "user", path: "/home/u/.pi/agent/mcp.json" };
const project: ConfigSource = { scope: "project", path: "/p/.pi/mcp.json" };
const entry = { command: "node", args: ["s.js"] };

describe("exposure in a server entry", () => {
  test("exposure and toolExposure are read in file order; `search` is deferred; pi 1.x's code mode is deferred with a note", () => {
    const { config, warnings } = validateServerEntry(
      "gh",
      { ...entry, exposure: "search", toolExposure: { "delete_*": "hidden", get_me: "direct" } },
      user,
    );
    assert.equal(config?.exposure, "deferred");
    assert.deepEqual(config?.toolExposure, [
      { pattern: "delete_*", exposure: "hidden" },
      { pattern: "get_me", exposure: "direct" },
    ]);
    assert.deepEqual(warnings, []);
    const codemode = validateServerEntry("gh", { ...entry, exposure: "codemode" }, user);
    assert.equal(codemode.config?.exposure, "deferred");
    assert.match(
      codemode.warnings.join("\n"),
      /read as deferred: the model finds its tools with tool_search; on pi 1\.x it also turns pi's codemode tool on/,
    );
    assert.equal(validateServerEntry("gh", { ...entry, exposure: "auto" }, user).config?.exposure, "auto");
    assert.equal(validateServerEntry("gh", entry, user).config?.exposure, undefined, "unset follows the default");
  });

  test("a wrong value is an error that says what is allowed; `auto` is not a per-tool value", () => {
    assert.match(
      validateServerEntry("gh", { ...entry, exposure: "lazy" }, user).errors.join("\n"),
      /`exposure` must be one of "direct", "deferred", "hidden", "auto", "search" \(got "lazy"\)/,
    );
    assert.match(
      validateServerEntry("gh", { ...entry, toolExposure: { x: "auto" } }, user).errors.join("\n"),
      /`toolExposure.x` must be one of "direct", "deferred", "hidden", "search"/,
    );
    assert.match(
      validateServerEntry("gh", { ...entry, toolExposure: ["x"] }, user).errors.join("\n"),
      /`toolExposure` must be an object of tool names or patterns/,
    );
  });
});

describe("top-level exposure and threshold", () => {
  test("the highest-priority file that sets each wins; unset, the exposure is the pi line's and the threshold 10%", () => {
    const none = layerConfigs([{ source: user, text: JSON.stringify({ mcpServers: {} }) }]);
    assert.deepEqual(none.exposure, { threshold: { share: 0.1 } }, "no exposure: the pi line decides it");
    assert.deepEqual(exposureDefaultsOr(none.exposure, "deferred"), {
      exposure: "deferred",
      threshold: { share: 0.1 },
    });
    assert.deepEqual(
      exposureDefaultsOr({ exposure: "direct", threshold: { tokens: 5 } }, "deferred"),
      { exposure: "direct", threshold: { tokens: 5 } },
      "a configured one wins",
    );
    const both = layerConfigs([
      { source: user, text: JSON.stringify({ exposure: "direct", exposureThreshold: "25%", mcpServers: {} }) },
      { source: project, text: JSON.stringify({ exposure: "deferred", mcpServers: {} }) },
    ]);
    assert.deepEqual(both.exposure, { exposure: "deferred", threshold: { share: 0.25 } });
    assert.deepEqual(both.problems, [], "both keys are known top-level keys");
  });

  test("thresholds: a share or a number of tokens; anything else is a warning and the default stays", () => {
    assert.deepEqual(readThreshold("10%"), { threshold: { share: 0.1 } });
    assert.deepEqual(readThreshold(" 2.5 % "), { threshold: { share: 0.025 } });
    assert.deepEqual(readThreshold(20000), { threshold: { tokens: 20000 } });
    for (const bad of ["0%", "150%", "ten", -1, 1.5, true]) assert.ok(readThreshold(bad).error, String(bad));
    const layered = layerConfigs([
      { source: user, text: JSON.stringify({ exposure: "sometimes", exposureThreshold: "lots", mcpServers: {} }) },
    ]);
    assert.deepEqual(layered.exposure, { threshold: { share: 0.1 } });
    assert.deepEqual(
      layered.problems.map((p) => p.message),
      [
        '`exposure` must be one of "direct", "deferred", "hidden", "auto", "search" (got "sometimes"); ignored, as if it were not set',
        '`exposureThreshold` must be a share of the model\'s context window such as "10%", or a number of tokens (got "lots"); the default, "10%", is used',
      ],
    );
  });

  test("a project entry with only exposure fields adjusts the user's server without redefining it, and its patterns come first", () => {
    const layered = layerConfigs([
      { source: user, text: JSON.stringify({ mcpServers: { gh: { ...entry, toolExposure: { "get_*": "direct" } } } }) },
      {
        source: project,
        text: JSON.stringify({ mcpServers: { gh: { exposure: "deferred", toolExposure: { "get_*": "hidden" } } } }),
      },
    ]);
    const gh = layered.servers[0]!;
    assert.equal(gh.source.scope, "user", "still the user's definition (nothing to trust)");
    assert.equal(gh.command, "node");
    assert.equal(gh.exposure, "deferred");
    assert.equal(
      exposureSetting("get_file", gh.toolExposure, gh.exposure, "auto"),
      "hidden",
      "the project's pattern comes first",
    );
    const orphan = layerConfigs([
      { source: project, text: JSON.stringify({ mcpServers: { nope: { exposure: "hidden" } } }) },
    ]);
    assert.match(orphan.problems[0]!.message, /only sets `exposure`, but no lower-priority config defines this server/);
  });
});

describe("which exposure a tool gets", () => {
  const rules = [
    { pattern: "delete_*", exposure: "hidden" as const },
    { pattern: "*_issue", exposure: "deferred" as const },
    { pattern: "delete_issue", exposure: "direct" as const },
  ];
  test("an exact name wins over patterns wherever it is listed; among patterns the first wins; then the server, then the default", () => {
    assert.equal(exposureSetting("delete_issue", rules, "deferred", "auto"), "direct");
    assert.equal(exposureSetting("delete_repo", rules, "deferred", "auto"), "hidden");
    assert.equal(exposureSetting("get_issue", rules, "direct", "auto"), "deferred");
    assert.equal(exposureSetting("list_repos", rules, "direct", "auto"), "direct");
    assert.equal(exposureSetting("list_repos", rules, undefined, "auto"), "auto");
    assert.equal(
      exposureSetting("Delete_repo", rules, undefined, "direct"),
      "direct",
      "patterns are case-sensitive, as tool names are",
    );
  });

  test("auto: direct up to the limit, deferred past it; the limit is a share of the window, or tokens", () => {
    assert.equal(autoLimitTokens({ share: 0.1 }, 200_000), 20_000);
    assert.equal(autoLimitTokens({ share: 0.1 }, undefined), FALLBACK_CONTEXT_WINDOW / 10);
    assert.equal(autoLimitTokens({ tokens: 5_000 }, 200_000), 5_000);
    assert.deepEqual(decideAuto(80_000, 20_000), { exposure: "direct", tokens: 20_000, limitTokens: 20_000 });
    assert.deepEqual(decideAuto(80_004, 20_000), { exposure: "deferred", tokens: 20_001, limitTokens: 20_000 });
  });

  test("auto's note names the share as configured: 0.25% is not rounded to 0.3%", () => {
    const exposure = new ToolExposure(
      () => ({ exposure: "auto", ...readThreshold("0.25%") }) as never,
      () => undefined,
    );
    exposure.decideAuto([{ server: "a", tool: "t", chars: 400 }], 1_000_000);
    assert.match(exposure.autoNote() ?? "", /the limit of 2,500 \(0\.25% of the model's context window\)/);
  });

  test("auto: a server whose tools come late is direct while they fit; deferred, its `direct` tools still count", () => {
    const configs = new Map(
      ["early", "small", "large", "later"].map((name) => [
        name,
        validateServerEntry(name, { ...entry, toolExposure: { pinned: "direct" } }, user).config!,
      ]),
    );
    const exposure = new ToolExposure(
      () => ({ exposure: "auto", threshold: { tokens: 1_000 } }),
      (server) => configs.get(server),
    );
    const decision = exposure.decideAuto([{ server: "early", tool: "a", chars: 2_000 }], undefined);
    assert.equal(decision.exposure, "direct");
    assert.equal(decision.tokens, 500);
    exposure.placeLate([{ server: "small", tool: "b", chars: 800 }]);
    assert.equal(exposure.exposureOf("small", "b"), "direct");
    assert.equal(decision.tokens, 700);
    // 1,200 more tokens would go over the limit: deferred, but its pinned tool is declared in every request.
    exposure.placeLate([
      { server: "large", tool: "c", chars: 4_000 },
      { server: "large", tool: "pinned", chars: 400 },
    ]);
    assert.equal(exposure.exposureOf("large", "c"), "deferred");
    assert.equal(exposure.exposureOf("large", "pinned"), "direct");
    assert.equal(decision.tokens, 800, "the pinned tool counted");
    // So a server after it that would have fitted in the room the pinned tool took is deferred too.
    exposure.placeLate([{ server: "later", tool: "d", chars: 1_000 }]);
    assert.equal(exposure.exposureOf("later", "d"), "deferred");
    assert.match(exposure.autoNote() ?? "", /about 800 tokens .*Deferred as they connected later .*: large, later\./);
  });

  test("auto: past 100 tools deferred, however few tokens they take (OpenAI refuses a request of over 128 tools)", () => {
    const exposure = new ToolExposure(
      () => ({ exposure: "auto", threshold: { tokens: 1_000_000 } }),
      () => undefined,
    );
    const tools = (server: string, count: number) =>
      Array.from({ length: count }, (_, i) => ({ server, tool: `t${i}`, chars: 200 }));
    assert.equal(exposure.decideAuto(tools("many", 150), 1_000_000).exposure, "deferred");
    assert.match(exposure.autoNote() ?? "", /deferred this session: .* 150 tools, more than the 100 /);
    const fewer = new ToolExposure(
      () => ({ exposure: "auto", threshold: { tokens: 1_000_000 } }),
      () => undefined,
    );
    assert.equal(fewer.decideAuto(tools("first", 60), 1_000_000).exposure, "direct");
    fewer.placeLate(tools("late", 60));
    assert.equal(fewer.exposureOf("late", "t0"), "deferred", "60 more would make 120");
    assert.equal(fewer.exposureOf("first", "t0"), "direct");
  });

  test("auto set on one server only, which comes late: /mcp's note says what auto chose for it", () => {
    const config = validateServerEntry("slow", { ...entry, exposure: "auto" }, user).config!;
    const exposure = new ToolExposure(
      () => ({ exposure: "deferred", threshold: { tokens: 1_000 } }),
      (server) => (server === "slow" ? config : undefined),
    );
    exposure.decideAuto([{ server: "early", tool: "a", chars: 400 }], undefined);
    exposure.placeLate([{ server: "slow", tool: "b", chars: 800 }]);
    assert.equal(exposure.exposureOf("slow", "b"), "direct");
    assert.match(exposure.autoNote() ?? "", /^Tool exposure "auto" is direct this session: .* about 200 tokens/);
  });

  test("auto: a server set to direct that comes late is not named as deferred; the note says the total is over the limit", () => {
    const config = validateServerEntry("pinned", { ...entry, exposure: "direct" }, user).config!;
    const exposure = new ToolExposure(
      () => ({ exposure: "auto", threshold: { tokens: 1_000 } }),
      (server) => (server === "pinned" ? config : undefined),
    );
    exposure.decideAuto([{ server: "early", tool: "a", chars: 2_000 }], undefined);
    exposure.placeLate([{ server: "pinned", tool: "b", chars: 8_000 }]);
    assert.equal(exposure.exposureOf("pinned", "b"), "direct");
    assert.equal(exposure.serverExposure("pinned"), "direct");
    assert.doesNotMatch(exposure.autoNote() ?? "", /Deferred as they connected later/);
    assert.match(exposure.autoNote() ?? "", /about 2,500 tokens are over the limit of 1,000/);
  });
});

/** The request body pi-ai's own client for `api` builds (captured before anything is sent), with two tools. */
async function providerBody(api: string, apiKey = "x", extra: string[] = []): Promise<unknown> {
  const model = {
    id: "m",
    name: "m",
    api,
    provider: "p",
    baseUrl: "http://127.0.0.1:9",
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 1000,
    maxTokens: 100,
  };
  const parameters = { type: "object", properties: { path: { type: "string" } } };
  const context = {
    systemPrompt: "s",
    messages: [{ role: "user" as const, content: "hi", timestamp: 0 }],
    tools: [
      { name: "read", description: "Read a file", parameters },
      { name: "mcp_gh_get", description: "Get an issue", parameters },
      ...extra.map((name) => ({ name, description: "A tool", parameters })),
    ],
  };
  let captured: unknown;
  const stream = streamSimple(
    model as unknown as Model<Api>,
    context as never,
    {
      apiKey,
      onPayload: (payload: unknown) => {
        captured = payload;
        throw new Error("captured; nothing is sent");
      },
    } as never,
  );
  for await (const _event of stream) {
    // The stream ends with the error thrown above.
  }
  return captured;
}

describe("taking undeclared tools out of a provider request", () => {
  const drop = (name: string) => name.startsWith("mcp_gh_");
  // Every provider family pi-ai builds request bodies for: Anthropic, OpenAI Chat Completions and Responses (and
  // Azure's), Google (Gemini and Vertex), Bedrock, Mistral.
  const apis = [
    "anthropic-messages",
    "openai-completions",
    "openai-responses",
    "azure-openai-responses",
    "google-generative-ai",
    "google-vertex",
    "bedrock-converse-stream",
    "mistral-conversations",
  ];
  for (const api of apis) {
    test(`${api}: the body pi-ai builds loses the dropped tool and keeps the other`, async () => {
      const body = await providerBody(api);
      const text = JSON.stringify(body);
      assert.ok(
        text.includes("mcp_gh_get") && text.includes('"read"'),
        `pi-ai built a body with both tools: ${text.slice(0, 200)}`,
      );
      const filtered = JSON.stringify(withoutTools(body, drop));
      assert.ok(!filtered.includes("mcp_gh_get"), filtered);
      assert.ok(filtered.includes('"read"'), "the other tool stays");
      assert.equal(JSON.stringify(body), text, "the original body is left as it was");
    });
  }

  test("signed in to Anthropic with a subscription, a tool named as Claude Code's (glob, task) is dropped too", async () => {
    // pi-ai then writes such names in Claude Code's casing (Glob, Task).
    const body = await providerBody("anthropic-messages", "sk-ant-oat01-x", ["glob", "task"]);
    assert.match(JSON.stringify(body), /"Glob"/);
    const filtered = JSON.stringify(withoutTools(body, (name) => name === "glob" || name === "task"));
    assert.doesNotMatch(filtered, /"Glob"|"Task"/);
    assert.match(filtered, /"Read"/, "the tools not dropped stay");
  });

  test("nothing to drop: the same object back; everything dropped: no empty list (some APIs refuse one)", () => {
    const body = { tools: [{ name: "read" }] };
    assert.equal(withoutTools(body, drop), body);
    assert.deepEqual(withoutTools({ tools: [{ name: "mcp_gh_a" }], stream: true }, drop), { stream: true });
    assert.deepEqual(withoutTools({ config: { tools: [{ functionDeclarations: [{ name: "mcp_gh_x" }] }] } }, drop), {
      config: {},
    });
    assert.equal(withoutTools("not an object", drop), "not an object");
  });
});

describe("tool search text", () => {
  test("the tool's description names no server or tool (it never changes) and stays short", () => {
    assert.ok(TOOL_SEARCH_DESCRIPTION.length < 400);
    assert.doesNotMatch(TOOL_SEARCH_DESCRIPTION, /mcp_/);
  });
  test("results: one line per tool, server text on one line; none found says what to try", () => {
    const text = formatSearchResult(
      "make an issue",
      [{ name: "mcp_gh_create_issue", server: "gh", description: "Create an issue.\nSecond line\x1b[31m" }],
      12,
    );
    assert.equal(
      text,
      "Loaded 1 tool; call it by name:\n- mcp_gh_create_issue (MCP server gh): Create an issue. Second line",
    );
    assert.equal(
      formatSearchResult("read a file", [{ name: "read_mcp_resource", description: "Reads one resource." }], 12),
      "Loaded 1 tool; call it by name:\n- read_mcp_resource (MCP resources): Reads one resource.",
      "a resource tool belongs to no one server",
    );
    assert.match(formatSearchResult("zzz", [], 12), /No tool matched "zzz" among 12 MCP tools/);
    assert.match(formatSearchResult("zzz", [], 0), /No MCP tools are waiting to be loaded/);
    // A server whose sign-in page waits for the user is not waited for: the answer says why its tools are missing.
    assert.match(
      signInWaitLine("linear"),
      /^MCP server linear waits for the user to finish signing in .*\/mcp auth linear/,
    );
  });
  test("a name of several servers: each server/tool choice is given whole, even for a name as long as MCP allows", () => {
    const name = `get_${"repository_".repeat(10)}settings`;
    const choices = [`hub/${name}`, `mirror/${name}`];
    const text = formatSearchResult("", [], 12, { unknown: [], ambiguous: [{ name, choices }], over: [] });
    assert.ok(text.endsWith(`name one: ${choices.join(", ")}.`), text);
  });
  test("the system prompt line: the deferred servers with short descriptions, or nothing", () => {
    assert.equal(deferredServersLine([]), undefined);
    const line = deferredServersLine([
      { server: "gh", description: "GitHub: issues, PRs" },
      { server: "fs" },
      { server: "long", description: "x".repeat(300) },
    ])!;
    assert.match(
      line,
      /^More MCP tools are available but not loaded; find them with tool_search\. Their servers: gh \(GitHub: issues, PRs\); fs; long \(x+…\)\.$/,
    );
    assert.ok(line.length < 300);
  });
});
