/**
 * `/mcp prompts` and `/mcp resources`: why a server is not listed and how a long list is cut (pure); then through pi
 * in-process with a recording UI, against server-everything (its prompts, resources and templates), a server with
 * neither, a disabled one, one that failed to start, and two over Streamable HTTP on 127.0.0.1 built with the SDK's server
 * classes: one with hostile text, a secret of its config and 120 resources in pages of 25, and one that pages without
 * end.
 */
import assert from "node:assert/strict";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ListPromptsRequestSchema, ListResourcesRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { WHOLE_LIST_BOUNDS } from "../src/connection/server-resources.ts";
import {
  formatPromptListing,
  formatResourceListing,
  MAX_SHOWN_ARGUMENTS,
  MAX_SHOWN_ITEMS,
  whyNotListed,
} from "../src/pi/offer-format.ts";
import { EVERYTHING_SERVER, EXTENSION_DIR, fixtureEntry, helloServer, tempDir } from "./helpers.ts";
import { type InProcessPi, startInProcessPi } from "./pi-harness.ts";
import { RecordingUI } from "./recording-ui.ts";

const SECRET = "sk-offer-secret-0123456789";
const CATALOG_SIZE = 120;
const CATALOG_PAGE = 25;
const ENDLESS_PAGE = 10;

describe("prompt and resource listings (pure)", () => {
  test("a server that cannot be asked says why and what changes that", () => {
    const standing = (status: Parameters<typeof whyNotListed>[0]["status"], more = {}) =>
      whyNotListed({ name: "my db", status, trusted: true, ...more });
    assert.equal(standing("connected"), undefined);
    assert.equal(standing("disabled"), `disabled (/mcp enable "my db" turns it on)`);
    assert.equal(
      standing("not started"),
      `not started yet: it starts when first used (/mcp reconnect "my db" starts it now)`,
    );
    assert.equal(standing("needs sign-in"), `needs a sign-in (/mcp auth "my db")`);
    assert.equal(
      standing("connected", { trusted: false }),
      `not trusted, so not started (/mcp trust "my db" starts it)`,
    );
    assert.equal(
      standing("error", { lastError: "exited\x1b[2J with code 3\nfor good" }),
      `not connected (error): exited with code 3 for good (/mcp reconnect "my db" tries again)`,
    );
  });

  test("a long list is cut with a count of the rest, and pages left unread are said", () => {
    const resources = Array.from({ length: MAX_SHOWN_ITEMS + 7 }, (_, i) => ({ uri: `x://${i}`, name: `r${i}` }));
    const text = formatResourceListing([
      {
        server: "big",
        kind: "listed",
        listing: { resources: { items: resources, more: true }, templates: { error: "templates broke" } },
      },
      {
        server: "empty",
        kind: "listed",
        listing: { resources: { items: [], more: false }, templates: { items: [], more: false } },
      },
      { server: "down", kind: "failed", error: "boom" },
      {
        server: "half",
        kind: "listed",
        listing: { resources: { error: "nope" }, templates: { items: [], more: false } },
      },
    ]);
    assert.match(text, /^MCP server 'big': more than 57 resources\n {2}Resources:\n/);
    assert.match(
      text,
      new RegExp(
        ` {4}x://${MAX_SHOWN_ITEMS - 1}  ·  r${MAX_SHOWN_ITEMS - 1}\n {4}… and 7 more \\(the server has more than the bridge reads at once\\)\n`,
      ),
    );
    assert.doesNotMatch(text, new RegExp(`x://${MAX_SHOWN_ITEMS}\\b`));
    assert.match(text, /\n {2}Resource templates: could not be listed: templates broke\n/);
    assert.match(
      text,
      /\nMCP server 'empty': offers no resources\nMCP server 'down': its resources could not be listed: boom\n/,
    );
    assert.match(text, /\nMCP server 'half': its resources could not be listed: nope\n/);
    const args = Array.from({ length: MAX_SHOWN_ARGUMENTS + 2 }, (_, i) => ({ name: `a${i}` }));
    const prompts = formatPromptListing([
      { server: "s", kind: "listed", listing: [{ prompt: { name: "p", arguments: args }, command: "mcp:s:p" }] },
    ]);
    assert.match(prompts, / {6}a19 \(optional\)\n {6}… and 2 more arguments\n/);
    assert.equal(formatPromptListing([]), "No MCP servers configured (/mcp add adds one).");
  });
});

/** A server with hostile text in its prompt, a secret of its config echoed back, and 120 resources in pages of 25. */
function catalogServer(): Server {
  const server = new Server({ name: "catalog", version: "1.0.0" }, { capabilities: { prompts: {}, resources: {} } });
  server.setRequestHandler(ListPromptsRequestSchema, () => ({
    prompts: [
      {
        name: "review",
        description: `Reviews\x1b]0;pwned\x07 code\x1b[2J with key ${SECRET}`,
        arguments: [{ name: "file\x1b[31m", description: "The file\nto review", required: true }],
      },
    ],
  }));
  server.setRequestHandler(ListResourcesRequestSchema, (request) => {
    const start = Number(request.params?.cursor ?? 0);
    const next = start + CATALOG_PAGE;
    const items = Array.from({ length: Math.min(CATALOG_PAGE, CATALOG_SIZE - start) }, (_, i) => ({
      uri: `catalog://item/${start + i}`,
      name: `item\x1b[2K ${start + i}`,
      mimeType: "text/plain",
    }));
    return { resources: items, ...(next < CATALOG_SIZE ? { nextCursor: String(next) } : {}) };
  });
  return server;
}

/** A server whose resource list never ends: every page names a next one. */
function endlessServer(pages: { count: number }): Server {
  const server = new Server({ name: "endless", version: "1.0.0" }, { capabilities: { resources: {} } });
  server.setRequestHandler(ListResourcesRequestSchema, (request) => {
    pages.count++;
    const start = Number(request.params?.cursor ?? 0);
    const items = Array.from({ length: ENDLESS_PAGE }, (_, i) => ({
      uri: `endless://${start + i}`,
      name: `n${start + i}`,
    }));
    return { resources: items, nextCursor: String(start + ENDLESS_PAGE) };
  });
  return server;
}

describe("/mcp prompts and /mcp resources through pi", { timeout: 180_000 }, () => {
  const project = tempDir("mcp-bridge-offers-project-");
  const agentDir = tempDir("mcp-bridge-offers-agent-");
  const originalCwd = process.cwd();
  const ui = new RecordingUI();
  const endlessPages = { count: 0 };
  let http: HttpServer;
  let pi: InProcessPi;

  /** Runs a `/mcp` command line as the user typed it; returns what it showed. */
  async function run(line: string): Promise<string> {
    const before = ui.notices.length;
    await pi.session.prompt(line);
    return ui.notices.slice(before).join("\n");
  }

  before(async () => {
    http = createServer(async (req, res) => {
      // Stateless: a fresh server for every request.
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      const server = req.url?.startsWith("/endless") ? endlessServer(endlessPages) : catalogServer();
      res.on("close", () => void server.close());
      await server.connect(transport);
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    const mcpServers = {
      everything: { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] },
      plain: fixtureEntry(),
      off: { command: process.execPath, args: [helloServer()], enabled: false },
      broken: { ...fixtureEntry("crash-on-start"), maxRestarts: 0 },
      catalog: { url: `${base}/catalog`, headers: { Authorization: `Bearer ${SECRET}` } },
      endless: { url: `${base}/endless` },
    };
    writeFileSync(path.join(agentDir.dir, "mcp.json"), JSON.stringify({ mcpServers }));
    pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
    await pi.session.bindExtensions({ uiContext: ui.context() });
  });
  after(async () => {
    await pi?.close();
    await new Promise((resolve) => http?.close(resolve));
    process.chdir(originalCwd);
    project.cleanup();
    agentDir.cleanup();
  });

  test("completion offers both subcommands, then server names", async () => {
    const command = pi.session.extensionRunner.getCommand("mcp")!;
    const subs = ((await command.getArgumentCompletions?.("pro")) ?? []) as Array<{ value: string }>;
    assert.deepEqual(
      subs.map((s) => s.value),
      ["prompts"],
    );
    const servers = ((await command.getArgumentCompletions?.("resources ev")) ?? []) as Array<{ value: string }>;
    assert.deepEqual(
      servers.map((s) => s.value),
      ["resources everything"],
    );
  });

  test("/mcp prompts: each prompt's command, description and arguments; one line for each server without prompts to show", async () => {
    const text = await run("/mcp prompts");
    assert.match(
      text,
      /^MCP server 'everything': 4 prompts\n {2}\/mcp:everything:simple-prompt {2}· {2}A prompt with no arguments\n/,
    );
    assert.match(
      text,
      /\n {2}\/mcp:everything:args-prompt {2}· {2}A prompt with two arguments, one required and one optional\n {6}city \(required\) {2}· {2}Name of the city\n {6}state \(optional\)\n/,
    );
    assert.match(
      text,
      /\n {2}\/mcp:everything:resource-prompt {2}· .*\n {6}resourceType \(required\) {2}· {2}Type of resource to fetch\n/,
    );
    assert.match(text, /\nMCP server 'plain': offers no prompts\n/);
    assert.match(text, /\nMCP server 'off': disabled \(\/mcp enable off turns it on\)\n/);
    assert.match(
      text,
      /\nMCP server 'broken': not connected \(error\): .*exited with code 3.* \(\/mcp reconnect broken tries again\)\n/,
    );
    assert.match(text, /\nMCP server 'endless': offers no prompts\n/);
    assert.match(
      text,
      /\nType a prompt's command to run it; its arguments go after it as name=value \(or in order\)\.$/,
    );
    // Each command listed is one pi has.
    for (const [, name] of text.matchAll(/^ {2}\/(mcp:\S+)/gm))
      assert.ok(pi.session.extensionRunner.getCommand(name!), name);
  });

  test("a server's own text is shown without control sequences, on one line, and without its config's secrets", async () => {
    const text = await run("/mcp prompts catalog");
    assert.equal(
      text,
      [
        "MCP server 'catalog': 1 prompt",
        "  /mcp:catalog:review  ·  Reviews code with key ***",
        "      file (required)  ·  The file to review",
        "Type a prompt's command to run it; its arguments go after it as name=value (or in order).",
      ].join("\n"),
    );
  });

  test("/mcp resources: server-everything's resources and templates, and how the model reads them", async () => {
    const text = await run("/mcp resources everything");
    assert.match(text, /^MCP server 'everything': 7 resources, 2 resource templates\n {2}Resources:\n/);
    assert.match(
      text,
      /\n {4}demo:\/\/resource\/static\/document\/instructions\.md {2}· {2}instructions\.md {2}· {2}text\/markdown\n {6}Static document file exposed from \/docs: instructions\.md\n/,
    );
    assert.match(
      text,
      /\n {2}Resource templates:\n {4}demo:\/\/resource\/dynamic\/text\/\{resourceId\} {2}· {2}Dynamic Text Resource {2}· {2}text\/plain\n {6}Plaintext dynamic resource/,
    );
    assert.match(text, /\n {4}demo:\/\/resource\/dynamic\/blob\/\{resourceId\} {2}· {2}Dynamic Blob Resource/);
    assert.match(
      text,
      /\nThe model reads them with read_mcp_resource \(server and URI, a template's \{variables\} filled in\) and lists them with list_mcp_resources and list_mcp_resource_templates\.$/,
    );
    assert.doesNotMatch(text, /MCP server '(?!everything)/, "only the server named");
  });

  test("/mcp resources: every page is read, a long list is cut, a list without end is read only so far", async () => {
    const before = endlessPages.count;
    const text = await run("/mcp resources");
    // 120 resources in pages of 25: all read, the first 50 shown. Its templates are not a method it knows: none.
    assert.match(
      text,
      new RegExp(
        `\nMCP server 'catalog': ${CATALOG_SIZE} resources\n {2}Resources:\n {4}catalog://item/0 {2}· {2}item 0 {2}· {2}text/plain\n`,
      ),
    );
    assert.match(
      text,
      new RegExp(
        `\n {4}catalog://item/${MAX_SHOWN_ITEMS - 1} .*\n {4}… and ${CATALOG_SIZE - MAX_SHOWN_ITEMS} more\nMCP server 'endless'`,
      ),
    );
    assert.doesNotMatch(text, /could not be listed/);
    assert.equal(
      endlessPages.count - before,
      WHOLE_LIST_BOUNDS.maxPages,
      "the endless list is read up to the page bound",
    );
    const read = WHOLE_LIST_BOUNDS.maxPages * ENDLESS_PAGE;
    assert.match(text, new RegExp(`\nMCP server 'endless': more than ${read} resources\n`));
    assert.match(
      text,
      new RegExp(
        `\n {4}… and ${read - MAX_SHOWN_ITEMS} more \\(the server has more than the bridge reads at once\\)\n`,
      ),
    );
    assert.match(text, /\nMCP server 'plain': offers no resources\n/);
    assert.match(text, /\nMCP server 'broken': not connected \(error\): .*exited with code 3/);
    assert.doesNotMatch(text, /\x1b/);
    assert.doesNotMatch(text, new RegExp(SECRET));
  });

  test("an unknown server name says which servers there are", async () => {
    const text = await run("/mcp prompts nosuch");
    assert.equal(text, "No MCP server named 'nosuch'. Configured: everything, plain, off, broken, catalog, endless.");
  });
});
