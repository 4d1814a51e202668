/**
 * A config in pi 1.x's built-in MCP format, as its users wrote it, inside real pi in-process (on pi 0.73.1, and on
 * pi 1.x through test/pi1x/run.mjs), with a fake OpenAI-compatible model whose requests are recorded: `timeout` in
 * seconds, `exposure` (`direct`, `codemode`), `toolExposure` hiding tools, `description`, an `oauth` block, and a
 * `!command` Authorization header. The servers connect, the model calls a tool, hidden and deferred tools are not
 * sent, `/mcp` shows the bridge's table, and the seconds reading of `timeout` is said once on pi 0.73 and never on
 * pi 1.x, where it is what pi means.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { TOOL_SEARCH_NAME } from "../src/exposure/tool-search-text.ts";
import { type FakeOpenAi, startFakeOpenAi } from "./fixtures/fake-openai.ts";
import { type RunningServer, startStreamableHttp } from "./fixtures/http-servers.ts";
import { type InProcessPi, startInProcessPi } from "./pi-harness.ts";
import { PI_LINE } from "./pi-line.ts";
import { RecordingUI } from "./recording-ui.ts";
import { EXTENSION_DIR, fixtureEntry, freePort, tempDir } from "./helpers.ts";

describe(
  "a config in pi 1.x's format, in pi (in-process, a fake OpenAI-compatible model)",
  { timeout: 120_000 },
  () => {
    const project = tempDir("mcp-bridge-pi1x-format-");
    const agentDir = tempDir("mcp-bridge-pi1x-format-agent-");
    const token = `tok-${randomBytes(12).toString("hex")}`;
    const originalCwd = process.cwd();
    const ui = new RecordingUI();
    let secured: RunningServer;
    let open: RunningServer;
    let model: FakeOpenAi;
    let pi: InProcessPi;

    before(async () => {
      secured = await startStreamableHttp({ auth: { token } });
      open = await startStreamableHttp();
      model = await startFakeOpenAi();
      // Written as pi 1.x's docs/mcp.md has it, keys the bridge does not know included.
      const config = {
        autoEnableCodemode: false,
        mcpServers: {
          files: {
            ...fixtureEntry(),
            timeout: 30,
            exposure: "direct",
            toolExposure: { add: "hidden", "crash_*": "hidden" },
            description: "Echo, arithmetic and other fixture tools",
          },
          issues: {
            url: secured.url,
            timeout: 20,
            headers: { Authorization: `!printf 'Bearer %s' ${token}` },
            exposure: "codemode",
            description: "The issue tracker",
          },
          docs: { url: open.url, oauth: { clientName: "Claude Code", callbackPort: await freePort(), scope: "read" } },
        },
      };
      writeFileSync(path.join(agentDir.dir, "mcp.json"), JSON.stringify(config, null, 2));
      process.env.PI_CODING_AGENT_DIR = agentDir.dir;
      process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
      process.chdir(project.dir);
      pi = await startInProcessPi({
        cwd: project.dir,
        agentDir: agentDir.dir,
        extensionPaths: [EXTENSION_DIR],
        model: model.model,
      });
      await pi.session.bindExtensions({
        uiContext: ui.context(),
        onError: (error) => assert.fail(`extension error: ${JSON.stringify(error)}`),
      });
    });

    after(async () => {
      await pi?.close();
      process.chdir(originalCwd);
      await model?.close();
      await secured?.close();
      await open?.close();
      project.cleanup();
      agentDir.cleanup();
    });

    test("the servers connect, and the startup notice says how `codemode` was read, and `timeout` only where pi does not mean seconds", () => {
      const notice = ui.notices.join("\n");
      const seconds = /`timeout` (30|20) is below 1000, so it is read as seconds, as pi 1\.x means it/g;
      // pi 1.x's own docs say `timeout` is seconds: nothing to say. On pi 0.73 the bridge's docs said milliseconds.
      if (PI_LINE === "1.x") assert.doesNotMatch(notice, /`timeout`/);
      else assert.deepEqual([...notice.matchAll(seconds)].map((m) => m[1]).sort(), ["20", "30"], notice);
      assert.match(
        notice,
        /`exposure` "codemode": read as deferred: the model finds its tools with tool_search; on pi 1\.x it also turns pi's codemode tool on, whose scripts call them/,
      );
      assert.doesNotMatch(notice, /autoEnableCodemode|✕/);
      assert.ok(
        secured.requests.length > 0 && secured.requests.every((r) => r.authorization === `Bearer ${token}`),
        "the !command header authenticated every request",
      );
      assert.ok(!notice.includes(token));
    });

    test("the model calls a direct tool; hidden and deferred tools are not sent", async () => {
      ui.answers.push("Allow once");
      model.script([
        { toolCalls: [{ name: "mcp_files_echo", args: { text: "from pi 1.x's config" } }] },
        { text: "done" },
      ]);
      await pi.session.prompt("echo something");
      const [first] = model.requests;
      assert.ok(first, "a request was sent");
      assert.ok(first.tools.includes("mcp_files_echo"), "direct: declared");
      assert.ok(
        !first.tools.includes("mcp_files_add") && !first.tools.some((t) => t.startsWith("mcp_files_crash_")),
        "hidden by toolExposure: not sent",
      );
      assert.ok(!first.tools.some((t) => t.startsWith("mcp_issues_")), "codemode, read as deferred: not sent");
      assert.ok(first.tools.includes(TOOL_SEARCH_NAME), "tool_search reaches the deferred ones");
      assert.match(JSON.stringify(first.body.messages), /The issue tracker/, "the description is in the system prompt");
      const result = pi.session.messages.find((m) => (m as { role: string }).role === "toolResult") as unknown as {
        isError: boolean;
        content: Array<{ text?: string }>;
      };
      assert.equal(result.isError, false, JSON.stringify(result.content));
      assert.equal(result.content[0]?.text, "from pi 1.x's config");
    });

    test("the next start with the same config says nothing more about `timeout`: it was said once, and remembered", async () => {
      const again = new RecordingUI();
      const second = await startInProcessPi({
        cwd: project.dir,
        agentDir: agentDir.dir,
        extensionPaths: [EXTENSION_DIR],
        model: model.model,
      });
      try {
        await second.session.bindExtensions({
          uiContext: again.context(),
          onError: (error) => assert.fail(`extension error: ${JSON.stringify(error)}`),
        });
        const notice = again.notices.join("\n");
        assert.match(notice, /`exposure` "codemode": read as deferred/, "the startup notice is there");
        assert.doesNotMatch(notice, /`timeout`/);
      } finally {
        await second.close();
      }
    });

    test("/mcp shows the bridge's table with the three servers connected", async () => {
      const before = ui.notices.length;
      await pi.session.prompt("/mcp list");
      const list = ui.notices.slice(before).join("\n");
      assert.match(list, /MCP Server Status/);
      for (const name of ["files", "issues", "docs"])
        assert.match(list, new RegExp(`^\\s+${name}\\s+🟢 `, "m"), `${name} connected`);
      assert.ok(!list.includes(token), "the header's value is not shown");
    });
  },
);
