/**
 * MCP resources as pi tools: the pure pieces (file names, contents, listings), then the reference server
 * `@modelcontextprotocol/server-everything` through pi in-process with the faux model — listing its resources and
 * templates, reading text, text sent as a blob, and binary content saved to a file; resource links that name their
 * server; a subscribed resource's update; and no resource tools while no server offers resources.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { gunzipSync } from "node:zlib";
import { after, before, describe, test } from "node:test";
import { fauxAssistantMessage, fauxToolCall, type FauxProviderRegistration } from "@mariozechner/pi-ai";
import type { AgentSession } from "@mariozechner/pi-coding-agent";
import type { ServerConnection } from "../src/connection/server-connection.ts";
import { listPage, readResource } from "../src/connection/server-resources.ts";
import { formatListing, resourceFileName, resourceOutput } from "../src/translate/resource-output.ts";
import { normalizeToolResult } from "../src/translate/output.ts";
import {
  connectionFor,
  EVERYTHING_SERVER,
  EXTENSION_DIR,
  fixtureEntry,
  tempDir,
  trustProjectServers,
  waitFor,
} from "./helpers.ts";
import { type InProcessPi, startInProcessPi } from "./pi-harness.ts";

const RESOURCE_TOOLS = ["list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"];

describe("resource output (pure)", () => {
  test("a file name from a URI is one safe segment, never a path", () => {
    assert.equal(resourceFileName("demo://resource/session/hello.txt.gz", "application/gzip"), "hello.txt.gz");
    assert.equal(resourceFileName("file:///etc/../../passwd", "application/octet-stream"), "passwd.bin");
    assert.equal(resourceFileName("x://a/%2e%2e%2f%2e%2e%2fevil", "application/gzip"), "_.._evil.gz");
    assert.equal(resourceFileName("x://a/..", "application/pdf"), "resource.pdf");
    assert.equal(resourceFileName("x://a/b?q=1#f", "image/bmp"), "b.bmp");
    assert.equal(resourceFileName("x://a/data", "application/x-unknown", 2), "3-data.bin");
    for (const uri of ["x://a/%2e%2e%2f%2e%2e%2fevil", "file:///../../x", "c:\\windows\\x", "x://a/%00"]) {
      const name = resourceFileName(uri, "application/octet-stream");
      assert.match(name, /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/, uri);
      assert.ok(!name.includes("/") && !name.startsWith("."), uri);
    }
    for (const uri of [`x://a/${"n".repeat(500)}`, `x://a/${"n".repeat(500)}.txt`, `x://a/x.${"e".repeat(500)}`])
      assert.ok(resourceFileName(uri, "application/octet-stream", 7).length <= 80, "at most 80 characters");
    assert.match(
      resourceFileName(`x://a/${"n".repeat(500)}.pdf`, "application/pdf"),
      /^n{76}\.pdf$/,
      "the cut keeps its type",
    );
    // A name Windows keeps for a device (CON, NUL.txt, com1.pdf …) would write to the device, not to a file.
    for (const device of ["CON", "nul.txt", "com1.pdf", "Aux", "lpt9.tar.gz"])
      assert.doesNotMatch(
        resourceFileName(`x://a/${device}`, "application/pdf"),
        /^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/i,
      );
    assert.equal(resourceFileName("x://a/console.log", "text/plain"), "console.log");
  });

  test("contents: text, text sent as a blob, images as images, other binary left to save", () => {
    const png = Buffer.from("png-bytes").toString("base64");
    const { content, binaries } = resourceOutput([
      { uri: "a://t", mimeType: "text/plain", text: "hello" },
      { uri: "a://b", mimeType: "text/plain", blob: Buffer.from("from a blob").toString("base64") },
      { uri: "a://i", mimeType: "image/png", blob: png },
      { uri: "a://z/x.gz", mimeType: "application/gzip", blob: Buffer.from([1, 2, 3]).toString("base64") },
    ]);
    assert.deepEqual(content[0], { type: "text", text: "[resource] a://t (text/plain)\nhello" });
    assert.deepEqual(content[1], { type: "text", text: "[resource] a://b (text/plain)\nfrom a blob" });
    assert.deepEqual(content[3], { type: "image", data: png, mimeType: "image/png" });
    assert.equal(binaries.length, 1);
    assert.equal(binaries[0]!.fileName, "x.gz");
    assert.deepEqual(content[binaries[0]!.at], {
      type: "text",
      text: "[resource] a://z/x.gz (application/gzip): binary, 3 B",
    });
    // Each binary part gets a file of its own, even where a name made unique is another part's name.
    const blob = (uri: string) => ({ uri, mimeType: "application/pdf", blob: "AA==" });
    const names = resourceOutput([blob("a://x"), blob("a://3-x"), blob("a://x")]).binaries.map((b) => b.fileName);
    assert.equal(new Set(names).size, 3, names.join(" "));
    // Names that differ only in case are one file on macOS and Windows.
    const cased = resourceOutput([blob("a://Report"), blob("a://report")]).binaries.map((b) => b.fileName);
    assert.equal(new Set(cased.map((name) => name.toLowerCase())).size, 2, cased.join(" "));
  });

  test("images too many for one request (each within a provider's bound) are left to save as files, past 13.5 MB", () => {
    const png = Buffer.from("\x89PNG\r\n\x1a\n").toString("base64") + "A".repeat(4 * 1024 * 1024);
    const parts = [1, 2, 3, 4].map((n) => ({ uri: `a://shot${n}.png`, mimeType: "image/png", blob: png }));
    const { content, binaries } = resourceOutput(parts);
    assert.equal(content.filter((part) => part.type === "image").length, 3);
    assert.deepEqual(
      binaries.map((b) => [b.fileName, b.mimeType]),
      [["shot4.png", "image/png"]],
    );
  });
  test("an image that still fits beside those shown is shown, though one before it was too many", () => {
    const png = Buffer.from("\x89PNG\r\n\x1a\n").toString("base64");
    const big = png + "A".repeat(4 * 1024 * 1024);
    const parts = [big, big, big, big, png].map((blob, n) => ({
      uri: `a://shot${n}.png`,
      mimeType: "image/png",
      blob,
    }));
    const { content, binaries } = resourceOutput(parts);
    assert.equal(content.filter((part) => part.type === "image").length, 4, "three big ones and the small one");
    assert.deepEqual(
      binaries.map((b) => b.fileName),
      ["shot3.png"],
    );
  });
  test("a listing names each item's server, the next pages and the servers that failed", () => {
    const listing = JSON.parse(
      formatListing("resources", [
        { server: "a", items: [{ uri: "a://1", name: "one", server: "b" } as never], nextCursor: "c2" },
        { server: "b", error: "MCP server 'b' is not connected" },
      ]),
    );
    assert.deepEqual(listing.resources, [{ server: "a", uri: "a://1", name: "one" }]);
    assert.deepEqual(listing.nextCursors, [{ server: "a", cursor: "c2" }]);
    assert.deepEqual(listing.errors, [{ server: "b", error: "MCP server 'b' is not connected" }]);
  });

  test("a resource link in a tool result names its server", () => {
    const { text } = normalizeToolResult({ content: [{ type: "resource_link", uri: "a://x", name: "x" }] }, "docs");
    assert.equal(text, "[resource link] a://x (x) (MCP server 'docs': read it with read_mcp_resource)");
  });
});

interface ToolResultMessage {
  role: "toolResult";
  toolName: string;
  isError: boolean;
  content: Array<{ type: string; text?: string; data?: string; mimeType?: string }>;
  details?: { provenance?: unknown };
}

/**
 * pi in-process in a fresh project whose `.pi/mcp.json` has `servers`, with approval off (no UI to ask in) and the
 * tools declared directly (the model calls them); `extensions` are written to the project and loaded before the bridge.
 */
async function startPi(servers: Record<string, unknown>, extensions: Record<string, string> = {}) {
  const project = tempDir("mcp-bridge-resources-project-");
  const agentDir = tempDir("mcp-bridge-resources-agent-");
  mkdirSync(path.join(project.dir, ".pi"));
  for (const [file, source] of Object.entries(extensions)) writeFileSync(path.join(project.dir, file), source);
  writeFileSync(path.join(project.dir, ".pi", "mcp.json"), JSON.stringify({ mcpServers: servers }));
  writeFileSync(
    path.join(agentDir.dir, "mcp.json"),
    JSON.stringify({ approval: "never", exposure: "direct", mcpServers: {} }),
  );
  process.env.PI_CODING_AGENT_DIR = agentDir.dir;
  process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
  process.chdir(project.dir);
  await trustProjectServers(project.dir, agentDir.dir);
  const pi = await startInProcessPi({
    cwd: project.dir,
    agentDir: agentDir.dir,
    extensionPaths: [...Object.keys(extensions).map((e) => path.join(project.dir, e)), EXTENSION_DIR],
  });
  return { pi, project, agentDir };
}

describe("resource tools in pi against server-everything", { timeout: 180_000 }, () => {
  const originalCwd = process.cwd();
  let pi: InProcessPi;
  let session: AgentSession;
  let faux: FauxProviderRegistration;
  let cleanup: () => void;

  before(async () => {
    // An extension that records what the bridge publishes about resources on pi's shared bus.
    const recorder = `export default function (pi) {
      const seen = (globalThis.__mcpResourceEvents = []);
      for (const channel of ["mcp.resources.updated", "mcp.resources.changed"]) pi.events.on(channel, (payload) => seen.push({ channel, payload }));
    }`;
    const started = await startPi(
      { everything: { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] } },
      { "bus-recorder.ts": recorder },
    );
    pi = started.pi;
    ({ session, faux } = pi);
    await session.bindExtensions({});
    cleanup = () => {
      started.project.cleanup();
      started.agentDir.cleanup();
    };
  });
  after(async () => {
    await pi?.close();
    process.chdir(originalCwd);
    cleanup?.();
  });

  function busEvents(): Array<{ channel: string; payload: Record<string, unknown> }> {
    return (
      (globalThis as { __mcpResourceEvents?: Array<{ channel: string; payload: Record<string, unknown> }> })
        .__mcpResourceEvents ?? []
    );
  }

  /** Has the faux model make these calls in one turn; returns their results in order. */
  async function call(calls: Array<[string, Record<string, unknown>]>): Promise<ToolResultMessage[]> {
    const before = session.messages.length;
    faux.setResponses([
      fauxAssistantMessage(
        calls.map(([tool, args]) => fauxToolCall(tool, args)),
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("ok"),
    ]);
    await session.prompt("go");
    return session.messages
      .slice(before)
      .filter((m) => (m as { role: string }).role === "toolResult") as unknown as ToolResultMessage[];
  }

  const textOf = (result: ToolResultMessage) =>
    result.content
      .filter((c) => c.type === "text")
      .map((c) => c.text)
      .join("\n");

  test("the three resource tools are registered and active", () => {
    const all = session.getAllTools().map((t) => t.name);
    const active = session.getActiveToolNames();
    for (const name of RESOURCE_TOOLS) {
      assert.ok(all.includes(name), name);
      assert.ok(active.includes(name), `${name} is active`);
    }
  });

  test("list_mcp_resources and list_mcp_resource_templates: the model gets each item with its server", async () => {
    const [resources, templates] = await call([
      ["list_mcp_resources", {}],
      ["list_mcp_resource_templates", { server: "everything" }],
    ]);
    assert.equal(resources!.isError, false, textOf(resources!));
    const listing = JSON.parse(textOf(resources!)) as {
      resources: Array<{ server: string; uri: string; mimeType?: string }>;
    };
    const instructions = listing.resources.find((r) => r.uri === "demo://resource/static/document/instructions.md");
    assert.deepEqual(
      { server: instructions?.server, mimeType: instructions?.mimeType },
      { server: "everything", mimeType: "text/markdown" },
    );
    assert.equal(templates!.isError, false, textOf(templates!));
    const uris = (
      JSON.parse(textOf(templates!)) as { resourceTemplates: Array<{ server: string; uriTemplate: string }> }
    ).resourceTemplates.map((t) => `${t.server} ${t.uriTemplate}`);
    assert.ok(uris.includes("everything demo://resource/dynamic/text/{resourceId}"), uris.join(", "));
    assert.ok(uris.includes("everything demo://resource/dynamic/blob/{resourceId}"), uris.join(", "));
    assert.deepEqual(templates!.details?.provenance, {
      source: "mcp",
      serverId: "everything",
      originalName: "resources/templates/list",
    });
    assert.equal(resources!.details?.provenance, undefined, "a listing of every server names each in its text");
  });

  test("read_mcp_resource: a static document, a template's text, and a template's blob of text", async () => {
    const [document, text, blob] = await call([
      ["read_mcp_resource", { server: "everything", uri: "demo://resource/static/document/instructions.md" }],
      ["read_mcp_resource", { server: "everything", uri: "demo://resource/dynamic/text/7" }],
      ["read_mcp_resource", { server: "everything", uri: "demo://resource/dynamic/blob/3" }],
    ]);
    const instructions = readFileSync(path.join(path.dirname(EVERYTHING_SERVER), "docs", "instructions.md"), "utf8");
    assert.equal(
      textOf(document!),
      `[resource] demo://resource/static/document/instructions.md (text/markdown)\n${instructions}`,
    );
    assert.match(
      textOf(text!),
      /^\[resource\] demo:\/\/resource\/dynamic\/text\/7 \(text\/plain\)\nResource 7: This is a plaintext resource/,
    );
    assert.match(
      textOf(blob!),
      /^\[resource\] demo:\/\/resource\/dynamic\/blob\/3 \(text\/plain\)\nResource 3: This is a base64 blob/,
    );
    assert.deepEqual(text!.details?.provenance, {
      source: "mcp",
      serverId: "everything",
      originalName: "demo://resource/dynamic/text/7",
    });
  });

  test("binary content: the tool's resource link names the server, and reading it saves the bytes to a file", async () => {
    const original = "resources are read through pi\n".repeat(20);
    const data = `data:text/plain;base64,${Buffer.from(original).toString("base64")}`;
    const [link] = await call([
      ["mcp_everything_gzip-file-as-resource", { name: "notes.txt.gz", data, outputType: "resourceLink" }],
    ]);
    assert.match(
      textOf(link!),
      /\[resource link\] demo:\/\/resource\/session\/notes\.txt\.gz .*\(MCP server 'everything': read it with read_mcp_resource\)/,
    );
    const [read] = await call([
      ["read_mcp_resource", { server: "everything", uri: "demo://resource/session/notes.txt.gz" }],
    ]);
    const match =
      /^\[resource\] demo:\/\/resource\/session\/notes\.txt\.gz \(application\/gzip\): binary, [\d.]+ \w+, saved to: (.+)$/.exec(
        textOf(read!),
      );
    assert.ok(match, textOf(read!));
    const file = match[1]!;
    assert.equal(path.basename(file), "notes.txt.gz");
    assert.equal(statSync(file).mode & 0o777, 0o600, "only the user can read what a server sent");
    assert.equal(gunzipSync(readFileSync(file)).toString("utf8"), original);
    // The new resource changed the server's list, which it announced.
    await waitFor(
      () => busEvents().some((e) => e.channel === "mcp.resources.changed" && e.payload.serverId === "everything"),
      "list_changed",
      15_000,
    );
  });

  test("a resource read is subscribed to; the server's update reaches pi", async () => {
    await call([["read_mcp_resource", { server: "everything", uri: "demo://resource/dynamic/text/9" }]]);
    // The server sends an update for every subscribed resource as soon as this is turned on.
    const [toggled] = await call([["mcp_everything_toggle-subscriber-updates", {}]]);
    assert.equal(toggled!.isError, false, textOf(toggled!));
    await waitFor(
      () =>
        busEvents().some(
          (e) => e.channel === "mcp.resources.updated" && e.payload.uri === "demo://resource/dynamic/text/9",
        ),
      "the update",
      15_000,
    );
    assert.equal(busEvents().find((e) => e.channel === "mcp.resources.updated")!.payload.serverId, "everything");
    await call([["mcp_everything_toggle-subscriber-updates", {}]]);
  });

  test("after a reconnect the subscription is asked for again: the new session's update reaches pi too", async () => {
    const uri = "demo://resource/dynamic/text/9";
    const updates = () =>
      busEvents().filter((e) => e.channel === "mcp.resources.updated" && e.payload.uri === uri).length;
    await session.prompt("/mcp reconnect everything");
    // The new server process knows no subscription but the one the bridge asks for again.
    const before = updates();
    const [toggled] = await call([["mcp_everything_toggle-subscriber-updates", {}]]);
    assert.equal(toggled!.isError, false, textOf(toggled!));
    await waitFor(() => updates() > before, "an update on the new session", 15_000);
    await call([["mcp_everything_toggle-subscriber-updates", {}]]);
  });

  test("a server that is not there, or a cursor without a server: an error that says what to do", async () => {
    const [unknown, cursor] = await call([
      ["read_mcp_resource", { server: "nope", uri: "demo://x" }],
      ["list_mcp_resources", { cursor: "abc" }],
    ]);
    assert.equal(unknown!.isError, true);
    assert.match(textOf(unknown!), /There is no MCP server 'nope'\. Servers with resources: 'everything'\./);
    assert.equal(cursor!.isError, true);
    assert.match(textOf(cursor!), /`cursor` needs `server`/);
  });

  test("the last server with resources disabled: the resource tools leave the model's view", async () => {
    const originalLog = console.log;
    console.log = () => undefined;
    try {
      await session.prompt("/mcp disable everything");
    } finally {
      console.log = originalLog;
    }
    const active = session.getActiveToolNames();
    for (const name of RESOURCE_TOOLS) assert.ok(!active.includes(name), `${name} is not active`);
  });
});

describe("no resource tools without a server that offers resources", { timeout: 120_000 }, () => {
  test("a server with tools only: the resource tools are not there, and its resource links do not name them", async () => {
    const originalCwd = process.cwd();
    const { pi, project, agentDir } = await startPi({ local: fixtureEntry() });
    try {
      await pi.session.bindExtensions({});
      const names = pi.session.getAllTools().map((t) => t.name);
      assert.ok(names.includes("mcp_local_echo"), "the server's tools are there");
      for (const name of RESOURCE_TOOLS) assert.ok(!names.includes(name), name);
      // A resource link in its tool's result is named, without pointing the model at a resource tool it does not have.
      pi.faux.setResponses([
        fauxAssistantMessage([fauxToolCall("mcp_local_resources", {})], { stopReason: "toolUse" }),
        fauxAssistantMessage("ok"),
      ]);
      await pi.session.prompt("go");
      const result = pi.session.messages.find((m) => (m as { role: string }).role === "toolResult");
      const text = JSON.stringify((result as { content?: unknown } | undefined)?.content);
      assert.match(text, /\[resource link\] memo:\/\/notes\/archive/);
      assert.doesNotMatch(text, /read_mcp_resource/);
    } finally {
      await pi.close();
      process.chdir(originalCwd);
      project.cleanup();
      agentDir.cleanup();
    }
  });
});

describe("resource requests go through the connection's request seam", { timeout: 120_000 }, () => {
  let connection: ServerConnection;
  before(async () => {
    connection = connectionFor("everything", { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] });
    await connection.connect();
  });
  after(async () => {
    await connection.close();
  });

  test("a read whose server died under it is retried once the server is restarted", async () => {
    const pid = connection.pid!;
    // Killed, and the read sent before the bridge could notice: the connection is lost under the request.
    process.kill(pid, "SIGKILL");
    const result = await readResource(connection, "demo://resource/dynamic/text/4");
    assert.match(String((result.contents[0] as { text?: string }).text), /^Resource 4: This is a plaintext resource/);
    assert.notEqual(connection.pid, pid, "a new process answered");
  });

  test("a request the server refuses is its own error, worded with the server's name", async () => {
    await assert.rejects(
      readResource(connection, "demo://resource/dynamic/text/0"),
      /MCP server 'everything' failed 'resources\/read demo:\/\/resource\/dynamic\/text\/0'/,
    );
    assert.ok((await listPage(connection, "resources/list")).items.length > 0, "the connection still works");
  });
});
