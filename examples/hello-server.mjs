#!/usr/bin/env node
// A minimal MCP server over stdio, built with the SDK: the shape of a server you might write yourself.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const server = new Server({ name: "hello", version: "1.0.0" }, { capabilities: { tools: {} } });

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
    {
      name: "word_count",
      description: "Count the words in a text",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    },
  ],
}));

server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
  const args = params.arguments ?? {};
  switch (params.name) {
    case "greet":
      return { content: [{ type: "text", text: `Hello, ${args.name}!` }] };
    case "word_count": {
      const words = String(args.text).split(/\s+/).filter(Boolean).length;
      return { content: [{ type: "text", text: String(words) }], structuredContent: { words } };
    }
    default:
      return { content: [{ type: "text", text: `Unknown tool ${params.name}` }], isError: true };
  }
});

await server.connect(new StdioServerTransport());
