/**
 * The MCP project's reference server, `@modelcontextprotocol/server-everything`, over stdio.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import type { ServerConnection } from "../src/connection/server-connection.ts";
import { connectionFor, EVERYTHING_SERVER } from "./helpers.ts";
import { runTool, toolsOf } from "./pi-tools.ts";

describe("server-everything over stdio", { timeout: 120_000 }, () => {
  let connection: ServerConnection;
  let tools: Map<string, ToolDefinition>;

  const run = (name: string, params: Record<string, unknown> = {}) =>
    runTool(tools.get(`mcp_everything_${name}`), params);

  before(async () => {
    connection = connectionFor("everything", { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] });
    await connection.connect();
    tools = toolsOf(connection);
  });
  after(async () => {
    await connection.close();
  });

  test("its tools are registered with provider-safe names", () => {
    for (const name of [
      "echo",
      "get-sum",
      "get-tiny-image",
      "get-resource-reference",
      "get-resource-links",
      "trigger-long-running-operation",
    ]) {
      assert.ok(tools.has(`mcp_everything_${name}`), name);
    }
    for (const name of tools.keys()) assert.match(name, /^[A-Za-z][A-Za-z0-9_-]{0,63}$/);
    const schema = tools.get("mcp_everything_echo")!.parameters as Record<string, unknown>;
    assert.equal(schema.$schema, undefined, "the draft marker is dropped");
    assert.deepEqual(schema.required, ["message"]);
  });

  test("echo and get-sum", async () => {
    assert.equal((await run("echo", { message: "hi there" })).text, "Echo: hi there");
    assert.equal((await run("get-sum", { a: 2, b: 40 })).text, "The sum of 2 and 40 is 42.");
  });

  test("an image result", async () => {
    const { result } = await run("get-tiny-image");
    const image = result.content.find((c) => c.type === "image") as { data: string; mimeType: string } | undefined;
    assert.ok(image, "an image part");
    assert.equal(image.mimeType, "image/png");
    assert.ok(image.data.length > 100);
  });

  test("an embedded resource and resource links", async () => {
    const reference = await run("get-resource-reference", { resourceType: "Text", resourceId: 2 });
    assert.match(
      reference.text,
      /\[resource\] demo:\/\/resource\/dynamic\/text\/2 \(text\/plain\)\nResource 2: This is a plaintext resource/,
    );
    const links = await run("get-resource-links", { count: 2 });
    assert.match(links.text, /\[resource link\] demo:\/\/resource\/dynamic\/blob\/1 \(Blob Resource 1\) text\/plain/);
  });

  test("structured content", async () => {
    const { result } = await run("get-structured-content", { location: "Chicago" });
    const details = result.details as { structuredContent?: { temperature: number } };
    assert.equal(typeof details.structuredContent?.temperature, "number");
  });

  test("a long-running operation streams progress", async () => {
    const { text, updates } = await run("trigger-long-running-operation", { duration: 0.6, steps: 3 });
    assert.match(text, /Long running operation completed/);
    assert.ok(updates.length >= 2, `got ${updates.length} progress updates`);
    assert.match(updates[0]!, /^progress 1\/3/);
  });
});
