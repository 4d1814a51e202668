/**
 * The work-hub fixture (test/fixtures/work-hub) is a large API-style catalog for tool-search figures: its file must
 * stay well formed, and its server must list every tool in it and answer calls.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { Client, type Tool } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { bundledFixture } from "./fixture-bundle.ts";
import { REPO_ROOT } from "./helpers.ts";

const HUB_DIR = path.join(REPO_ROOT, "test", "fixtures", "work-hub");
const hub = JSON.parse(readFileSync(path.join(HUB_DIR, "tools.json"), "utf8")) as { server: string; tools: Tool[] };

describe("work-hub fixture", () => {
  it("holds at least 230 tools of four services, with unique names and object input schemas", () => {
    assert.equal(hub.server, "hub");
    assert.ok(hub.tools.length >= 230, `${hub.tools.length} tools`);
    const names = hub.tools.map((tool) => tool.name);
    assert.equal(new Set(names).size, names.length);
    for (const tool of hub.tools) {
      assert.match(tool.name, /^(github|jira|slack|cloud)_[a-z0-9_]+$/);
      assert.ok(tool.name.length <= 50, tool.name);
      assert.ok(tool.description && tool.description.length > 0, tool.name);
      assert.equal(tool.inputSchema.type, "object", tool.name);
      for (const key of tool.inputSchema.required ?? [])
        assert.ok(key in (tool.inputSchema.properties ?? {}), tool.name);
    }
  });

  it("its server lists every tool of the file and answers a call", async () => {
    const client = new Client({ name: "work-hub-test", version: "0.0.0" });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bundledFixture(path.join(HUB_DIR, "..", "saved-tools-server.mjs")), path.join(HUB_DIR, "tools.json")],
      stderr: "pipe",
    });
    try {
      await client.connect(transport);
      const listed: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined);
        listed.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      assert.deepEqual(listed, hub.tools);
      const result = await client.callTool({ name: "jira_add_worklog", arguments: { issueIdOrKey: "HUB-1" } });
      assert.deepEqual(result.content, [{ type: "text", text: "called jira_add_worklog" }]);
    } finally {
      await client.close();
    }
  });
});
