/**
 * Resource updates on 2026-07-28, which has no `resources/subscribe`: the bridge opens a standing
 * `subscriptions/listen` stream for the resource, and the server's `notifications/resources/updated` on it reaches the
 * connection's owner as a 2025 server's would. A v2-SDK server over Streamable HTTP on 127.0.0.1, in-process.
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { createMcpHandler, McpServer, type McpHttpHandler } from "@modelcontextprotocol/server";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { canSubscribe, readResource, subscribeResource } from "../src/connection/server-resources.ts";
import type { ServerChange } from "../src/connection/mcp-client.ts";
import { connectionFor, waitFor } from "./helpers.ts";

const URI = "note://today";

describe("resource updates over subscriptions/listen (2026-07-28)", { timeout: 60_000 }, () => {
  let handler: McpHttpHandler;
  let url = "";
  let close: () => Promise<void>;
  let text = "first";

  before(async () => {
    handler = createMcpHandler(() => {
      const server = new McpServer(
        { name: "notes", version: "1.0.0" },
        { capabilities: { resources: { subscribe: true } } },
      );
      server.registerResource("today", URI, { mimeType: "text/plain" }, async (uri) => ({
        contents: [{ uri: uri.href, text }],
      }));
      return server;
    });
    const http = createServer(toNodeHandler(handler));
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
    close = async () => {
      await handler.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    };
  });
  after(() => close());

  test("a subscribed resource's update is heard after the request that subscribed was answered", async () => {
    const changes: ServerChange[] = [];
    const connection = connectionFor("notes", { url }, { onServerChange: (_c, change) => changes.push(change) });
    try {
      await connection.connect();
      assert.equal(connection.protocolVersion, "2026-07-28");
      assert.equal(canSubscribe(connection), true);
      await subscribeResource(connection, URI);
      // Another request first: the listen stream must outlive the subscribing request's scope, and this one's.
      assert.match(JSON.stringify(await readResource(connection, URI)), /first/);
      text = "second";
      handler.notify.resourceUpdated(URI);
      await waitFor(() => changes.some((c) => c.kind === "updated" && c.uri === URI), "the update", 20_000);
      assert.match(JSON.stringify(await readResource(connection, URI)), /second/);
    } finally {
      await connection.close();
    }
  });
});
