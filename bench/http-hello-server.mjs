#!/usr/bin/env node
// The hello server's `greet` tool over Streamable HTTP on 127.0.0.1, for the bench: one session per client that
// initializes, so the bridge and a bare SDK client can call the same server process side by side. It prints
// `port <n>` on stdout once it listens, and exits when its stdin closes (so it never outlives the bench). It answers
// the way the SDK's server does by default (each answer an SSE stream), or with plain JSON given `--json`.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, isInitializeRequest, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

function helloServer() {
  const server = new Server({ name: "hello-http", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      {
        name: "greet",
        description: "Greet someone by name",
        inputSchema: {
          type: "object",
          properties: { name: { type: "string", description: "Who to greet" } },
          required: ["name"],
        },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async ({ params }) => ({
    content: [{ type: "text", text: `Hello, ${params.arguments?.name}!` }],
  }));
  return server;
}

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? JSON.parse(text) : undefined;
}

const sessions = new Map();

const http = createServer(async (req, res) => {
  try {
    const body = req.method === "POST" ? await readBody(req) : undefined;
    const id = req.headers["mcp-session-id"];
    const existing = typeof id === "string" ? sessions.get(id) : undefined;
    if (existing) return await existing.handleRequest(req, res, body);
    if (req.method !== "POST" || !isInitializeRequest(body)) {
      res.writeHead(typeof id === "string" ? 404 : 400).end();
      return;
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: process.argv.includes("--json"),
      onsessioninitialized: (sessionId) => sessions.set(sessionId, transport),
    });
    transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
    await helloServer().connect(transport);
    await transport.handleRequest(req, res, body);
  } catch (error) {
    if (!res.headersSent) res.writeHead(500).end(String(error));
  }
});

http.keepAliveTimeout = 60_000;
http.listen(0, "127.0.0.1", () => process.stdout.write(`port ${http.address().port}\n`));
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
