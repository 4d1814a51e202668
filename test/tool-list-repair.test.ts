/**
 * A tool list that breaks the MCP schema in the one way with one meaning (src/connection/tool-list-repair.ts): input
 * schemas without `type`. The SDK would refuse the whole list, so the server would have no tools; they are read as
 * object schemas, said once in `/mcp`, and their calls reach the server with their arguments. A real server over stdio.
 */
import assert from "node:assert/strict";
import * as path from "node:path";
import { describe, test } from "node:test";
import { ToolRegistry } from "../src/pi/tool-registry.ts";
import { connectionFor, REPO_ROOT } from "./helpers.ts";
import { runTool, toolsOf } from "./pi-tools.ts";

const SERVER = path.join(REPO_ROOT, "test", "fixtures", "typeless-tools-server.mjs");

describe("input schemas without `type`", () => {
  test("the list is taken, each such schema read as an object schema, and the calls reach the server", async () => {
    const connection = connectionFor("notes", { command: process.execPath, args: [SERVER] });
    try {
      await connection.connect();
      const tools = toolsOf(connection);
      assert.deepEqual([...tools.keys()].sort(), [
        "mcp_notes_ping_all",
        "mcp_notes_read_notes",
        "mcp_notes_search_notes",
      ]);
      const search = await runTool(tools.get("mcp_notes_search_notes"), { query: "todo" });
      assert.equal(search.text, '{"query":"todo"}');
      assert.equal((await runTool(tools.get("mcp_notes_ping_all"))).text, "{}");
      const registry = new ToolRegistry(
        () => undefined,
        () => connection,
      );
      registry.registerServer(connection);
      assert.deepEqual(registry.notesFor("notes").schema, [
        "3 tools have input schemas without `type`, which MCP requires: read as object schemas; 2 list no parameters, which the model then learns only from the server's errors (read_notes, search_notes, ping_all)",
      ]);
    } finally {
      await connection.close();
    }
  });
});

describe("an input schema of null", () => {
  test("is read as no schema: the server's other tools are not lost with it", async () => {
    const script = `const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n");
    require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
      const { id, method } = JSON.parse(line);
      if (id === undefined) return;
      if (method === "initialize")
        return send({ id, result: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "s", version: "1" } } });
      const tools = [{ name: "status", inputSchema: null }, { name: "search", inputSchema: { type: "object" } }];
      send({ id, result: method === "tools/list" ? { tools } : {} });
    });`;
    const connection = connectionFor("nulls", {
      command: process.execPath,
      args: ["-e", script],
      protocolVersion: "2025-06-18",
    });
    try {
      await connection.connect();
      assert.deepEqual([...toolsOf(connection).keys()].sort(), ["mcp_nulls_search", "mcp_nulls_status"]);
    } finally {
      await connection.close();
    }
  });
});
