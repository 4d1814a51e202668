/**
 * The resource tools against a server built for them (Streamable HTTP on 127.0.0.1, the SDK's server classes): a
 * listing in pages, an image read as an image, and a secret of the server's config hidden in what the model reads.
 */
import assert from "node:assert/strict";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ListResourcesRequestSchema, ReadResourceRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { ServerConnection } from "../src/connection/server-connection.ts";
import { ResourceTools } from "../src/pi/resource-tools.ts";
import { connectionFor } from "./helpers.ts";
import { runTool } from "./pi-tools.ts";

const SECRET = "sk-resource-secret-0123456789";
const ITEMS = Array.from({ length: 5 }, (_, i) => ({ uri: `paged://item/${i}`, name: `item ${i}` }));
const PAGE = 2;
const PNG = Buffer.from("not really a png, but the bytes the model gets").toString("base64");

function pagedServer(): Server {
  const server = new Server({ name: "paged", version: "1.0.0" }, { capabilities: { resources: {} } });
  server.setRequestHandler(ListResourcesRequestSchema, (request) => {
    // A page too long for a tool result (a server that pages by hundreds), with more after it.
    if (request.params?.cursor === "big")
      return {
        resources: Array.from({ length: 600 }, (_, i) => ({ uri: `paged://big/${i}`, name: `big ${i}` })),
        nextCursor: "0",
      };
    const start = Number(request.params?.cursor ?? 0);
    const next = start + PAGE;
    return { resources: ITEMS.slice(start, next), ...(next < ITEMS.length ? { nextCursor: String(next) } : {}) };
  });
  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    if (request.params.uri === "paged://image")
      return { contents: [{ uri: "paged://image", mimeType: "image/png", blob: PNG }] };
    if (request.params.uri === "paged://no-image")
      return { contents: [{ uri: "paged://no-image", mimeType: "image/png", blob: "" }] };
    if (request.params.uri === "paged://mixed")
      return {
        contents: [
          { uri: "paged://mixed/body", text: "y\n".repeat(30_000) },
          { uri: "paged://mixed/report.pdf", mimeType: "application/pdf", blob: PNG },
        ],
      };
    // Ten parts of 40 KB: each within a tool result's bounds, together eight times over them.
    if (request.params.uri === "paged://many")
      return {
        contents: Array.from({ length: 10 }, (_, i) => ({ uri: `paged://many/${i}`, text: "x".repeat(40_000) })),
      };
    return {
      contents: [
        { uri: request.params.uri, mimeType: "text/plain", text: `the token is ${SECRET}\x1b]52;c;aGk=\x07 \u202eok` },
      ],
    };
  });
  return server;
}

describe("resource tools: pages, images, redaction", { timeout: 60_000 }, () => {
  let http: HttpServer;
  let connection: ServerConnection;
  /** The same server under another name, disabled (`/mcp disable`) once it had connected. */
  let disabled: ServerConnection;
  const tools = new Map<string, ToolDefinition>();

  before(async () => {
    http = createServer(async (req, res) => {
      // Stateless: a fresh server for every request.
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      const server = pagedServer();
      res.on("close", () => void server.close());
      await server.connect(transport);
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const { port } = http.address() as AddressInfo;
    connection = connectionFor("paged", {
      url: `http://127.0.0.1:${port}/mcp`,
      headers: { Authorization: `Bearer ${SECRET}` },
    });
    await connection.connect();
    disabled = connectionFor("off", { url: `http://127.0.0.1:${port}/mcp` });
    await disabled.connect();
    await disabled.disable();
    const resourceTools = new ResourceTools({
      registerTool: (definition) => tools.set(definition.name, definition as unknown as ToolDefinition),
      activate: () => undefined,
      connections: () => [connection, disabled],
      notify: () => undefined,
    });
    resourceTools.sync(connection);
  });
  after(async () => {
    await connection?.close();
    await new Promise((resolve) => http?.close(resolve));
  });

  test("a listing comes in pages: each gives the cursor for the next, until the last", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page++) {
      const { text } = await runTool(
        tools.get("list_mcp_resources"),
        cursor ? { server: "paged", cursor } : { server: "paged" },
      );
      const listing = JSON.parse(text) as {
        resources: Array<{ uri: string; server: string }>;
        nextCursors?: Array<{ server: string; cursor: string }>;
      };
      // A page is the server's page: not every page read at once (as the SDK's list call without a cursor does).
      if (page === 0) assert.equal(listing.resources.length, PAGE);
      for (const item of listing.resources) seen.push(`${item.server} ${item.uri}`);
      cursor = listing.nextCursors?.[0]?.cursor;
      if (!cursor) break;
      assert.equal(listing.nextCursors![0]!.server, "paged");
    }
    assert.deepEqual(
      seen,
      ITEMS.map((item) => `paged ${item.uri}`),
    );
  });

  test("a page too long to show whole still tells the model its next page's cursor", async () => {
    const { text } = await runTool(tools.get("list_mcp_resources"), { server: "paged", cursor: "big" });
    assert.match(text, /Full output saved to: /);
    const next = /"nextCursors": \[\s*\{\s*"server": "paged",\s*"cursor": "0"/;
    assert.ok(next.test(text), text.slice(0, 300));
  });

  test("a server that has no templates (no resources/templates/list) lists none, as /mcp resources says", async () => {
    for (const args of [{ server: "paged" }, {}]) {
      const { text } = await runTool(tools.get("list_mcp_resource_templates"), args);
      assert.deepEqual(JSON.parse(text), { resourceTemplates: [] });
    }
  });

  test("a read from a server that is disabled says so, not that it offers no resources", async () => {
    await assert.rejects(
      runTool(tools.get("read_mcp_resource"), { server: "off", uri: "paged://note" }),
      /^Error: MCP server 'off' is not connected \(disabled\)\. Servers with resources: 'paged'\.$/,
    );
  });

  test("an image resource reaches the model as an image", async () => {
    const { result } = await runTool(tools.get("read_mcp_resource"), { server: "paged", uri: "paged://image" });
    assert.deepEqual(result.content, [
      { type: "text", text: "[resource] paged://image (image/png)" },
      { type: "image", data: PNG, mimeType: "image/png" },
    ]);
  });

  test("an image resource without bytes is said to have none, not sent as an image no provider takes", async () => {
    const { result } = await runTool(tools.get("read_mcp_resource"), { server: "paged", uri: "paged://no-image" });
    assert.deepEqual(result.content, [{ type: "text", text: "[resource] paged://no-image (image/png): no content" }]);
  });

  test("a resource of many text parts is bounded as a whole, as a tool result is", async () => {
    const { result, text } = await runTool(tools.get("read_mcp_resource"), { server: "paged", uri: "paged://many" });
    assert.ok(text.length < 60_000, `${text.length} characters reach the model`);
    assert.match(text, /Full output saved to: /);
    assert.ok((result.details as { truncated?: unknown }).truncated);
  });

  test("a long text cut short leaves the line of a file saved beside it in view", async () => {
    const { result, text } = await runTool(tools.get("read_mcp_resource"), { server: "paged", uri: "paged://mixed" });
    const saved = (result.details as { files: string[] }).files;
    assert.equal(saved.length, 1);
    assert.ok(text.includes(`saved to: ${saved[0]}`), text.slice(-300));
  });

  test("a secret of the server's config is hidden in the text the model reads, and escapes are stripped", async () => {
    const { text } = await runTool(tools.get("read_mcp_resource"), { server: "paged", uri: "paged://note" });
    assert.match(text, /^\[resource\] paged:\/\/note \(text\/plain\)\nthe token is \*\*\* ok$/);
    assert.ok(!text.includes(SECRET), text);
  });
});
