/**
 * Roots: every server is offered the project root as a `file://` root, and told when the roots change. Checked with
 * the fixture server (which asks for the roots itself) and with the MCP project's reference server, which lists its
 * `get-roots-list` tool only to a client that declares roots, and with its filesystem server, which works in the roots
 * it is given instead of the directories on its command line unless its entry says `"roots": false`.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, test } from "node:test";
import type { Root } from "@modelcontextprotocol/sdk/types.js";
import type { ServerConnection } from "../src/connection/server-connection.ts";
import type { LogRecord } from "../src/common/log-file.ts";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import { describeForTrust, trustFingerprint } from "../src/trust/trust-rules.ts";
import { clientCapabilities, directoryRoot } from "../src/connection/mcp-client.ts";
import {
  connectionFor,
  EVERYTHING_SERVER,
  FILESYSTEM_SERVER,
  fixtureEntry,
  readLog,
  tempDir,
  TEST_SOURCE,
  testBridge,
  waitFor,
} from "./helpers.ts";
import { runTool, toolsOf } from "./pi-tools.ts";

function textOf(result: { content: Array<{ type: string; text?: string }> }): string {
  return result.content.map((c) => c.text ?? "").join("");
}

describe("roots", { timeout: 120_000 }, () => {
  test("a directory as a root: its file:// URL, named after it; declared with listChanged only when there is a handler", () => {
    const root = directoryRoot("/work/my project/");
    assert.deepEqual(root, { uri: "file:///work/my%20project", name: "my project" });
    assert.deepEqual(directoryRoot("/"), { uri: "file:///", name: "/" });
    assert.deepEqual(clientCapabilities({ roots: () => [root] }).roots, { listChanged: true });
    assert.equal(clientCapabilities({}).roots, undefined);
  });

  test("a server that asks for the roots gets the project root", async () => {
    const project = tempDir("mcp-bridge-roots-");
    const connection = connectionFor("fixture", fixtureEntry(), { projectRoot: project.dir });
    try {
      await connection.connect();
      const result = await connection.callTool("roots", {});
      assert.deepEqual(JSON.parse(textOf(result)), {
        roots: [{ uri: pathToFileURL(project.dir).href, name: path.basename(project.dir) }],
      });
    } finally {
      await connection.close();
      project.cleanup();
    }
  });

  test("when the roots change, every connected server is told (through the bridge) and gets the new ones when it asks", async () => {
    const tmp = tempDir("mcp-bridge-roots-");
    const log = path.join(tmp.dir, "events.jsonl");
    const project = path.join(tmp.dir, "project");
    mkdirSync(project);
    // A user-level server: it needs no project trust.
    mkdirSync(path.join(tmp.dir, "agent"));
    writeFileSync(
      path.join(tmp.dir, "agent", "mcp.json"),
      JSON.stringify({ mcpServers: { fixture: { ...fixtureEntry(), env: { FIXTURE_LOG: log } } } }),
    );
    // A host that gives its own roots, and moves them.
    let roots: Root[] = [directoryRoot(project)];
    const bridge = testBridge(tmp.dir, { projectRoot: project, featuresFor: () => ({ roots: () => roots }) });
    try {
      await bridge.start();
      const connection = bridge.connection("fixture")!;
      assert.equal(connection.status, "connected", connection.lastError);
      assert.deepEqual(JSON.parse(textOf(await connection.callTool("roots", {}))).roots, roots);
      const changed = () => readLog(log).filter((e) => e.event === "roots-changed").length;
      assert.equal(changed(), 0);

      roots = [directoryRoot(tmp.dir), directoryRoot(project)];
      await bridge.rootsChanged();
      await waitFor(() => changed() === 1, "the server to hear that the roots changed");
      assert.deepEqual(JSON.parse(textOf(await connection.callTool("roots", {}))).roots, roots);
    } finally {
      await bridge.shutdown();
      tmp.cleanup();
    }
  });

  test("a server with no live session is not told (and nothing throws)", async () => {
    const tmp = tempDir("mcp-bridge-roots-");
    const log = path.join(tmp.dir, "events.jsonl");
    const records: LogRecord[] = [];
    const logger = { log: (r: LogRecord) => records.push(r) };
    const connection = connectionFor("fixture", { ...fixtureEntry(), env: { FIXTURE_LOG: log } }, { logger });
    const heard = () => readLog(log).map((e) => e.event);
    try {
      // Not started yet: the change starts no process to tell it.
      await connection.rootsChanged();
      assert.deepEqual(heard(), []);
      await connection.connect();
      await connection.close();
      // Its session closed: the change reaches no process, and none is started again.
      await connection.rootsChanged();
      assert.deepEqual(heard(), ["start"]);
      const failed = records.filter((r) => r.event === "roots.notify.failed");
      assert.deepEqual(failed, [], "no attempt to tell a closed session");
    } finally {
      await connection.close();
      tmp.cleanup();
    }
  });

  test("server-everything lists get-roots-list, and it returns the project root", async () => {
    const project = tempDir("mcp-bridge-roots-");
    const connection = connectionFor(
      "everything",
      { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] },
      { projectRoot: project.dir },
    );
    try {
      await connection.connect();
      const tools = toolsOf(connection);
      assert.ok(tools.has("mcp_everything_get-roots-list"), [...tools.keys()].join(", "));
      const { text } = await runTool(tools.get("mcp_everything_get-roots-list"));
      assert.match(text, /Current MCP Roots \(1 total\)/);
      assert.ok(text.includes(`URI: ${pathToFileURL(project.dir).href}\n`), text);
      assert.ok(text.includes(`1. ${path.basename(project.dir)}\n`), text);
    } finally {
      await connection.close();
      project.cleanup();
    }
  });

  test('`"roots": false`: true or false only; part of what a project server is trusted with', () => {
    const entry = { command: "node", args: ["server.js", "/srv/notes"] };
    const read = (roots: unknown) => validateServerEntry("fs", { ...entry, roots }, TEST_SOURCE);
    assert.equal(read(false).config?.roots, false);
    assert.equal(read(true).config?.roots, undefined);
    assert.deepEqual(read("none").errors, ['`roots` must be true or false (got "none")']);
    // Without roots the server works where its arguments say, not in the project: trusting it again is asked.
    assert.notEqual(trustFingerprint(read(false).config!), trustFingerprint(read(undefined).config!));
    assert.equal(trustFingerprint(read(true).config!), trustFingerprint(read(undefined).config!));
    assert.ok(describeForTrust(read(false).config!).some((line) => /not offered the project as its root/.test(line)));
  });

  test('the filesystem server serves the project when offered it, and the directory its entry names with `"roots": false`', async () => {
    const project = tempDir("mcp-bridge-roots-project-");
    const notes = tempDir("mcp-bridge-roots-notes-");
    writeFileSync(path.join(notes.dir, "note.txt"), "from the notes");
    const entry = { command: process.execPath, args: [FILESYSTEM_SERVER, notes.dir] };
    const offered = connectionFor("fs", entry, { projectRoot: project.dir });
    const records: LogRecord[] = [];
    const logger = { log: (r: LogRecord) => records.push(r) };
    const own = connectionFor("fs", { ...entry, roots: false }, { projectRoot: project.dir, logger });
    const allowed = async (connection: ServerConnection) =>
      (await runTool(toolsOf(connection).get("mcp_fs_list_allowed_directories"))).text;
    try {
      await Promise.all([offered.connect(), own.connect()]);
      // The server asks for the roots once the handshake is done, and then replaces its own directories with them.
      let offeredDirs = "";
      await waitFor(
        async () => (offeredDirs = await allowed(offered)).includes(project.dir),
        "the project as its root",
      );
      assert.doesNotMatch(offeredDirs, new RegExp(path.basename(notes.dir)));
      assert.match(await allowed(own), new RegExp(`^Allowed directories:\n${notes.dir}$`));
      const { text } = await runTool(toolsOf(own).get("mcp_fs_read_text_file"), {
        path: path.join(notes.dir, "note.txt"),
      });
      assert.equal(text, "from the notes");
      // A server offered no roots is not told they changed.
      await own.rootsChanged();
      assert.deepEqual(
        records.filter((r) => r.event === "roots.notify.failed"),
        [],
      );
    } finally {
      await Promise.all([offered.close(), own.close()]);
      project.cleanup();
      notes.cleanup();
    }
  });
});
