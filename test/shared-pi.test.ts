/**
 * Two real `pi --mode rpc` processes of one user with the same `"shared": true` servers: the memory reference server
 * (started as its README says, through npx) and the fixture server (its `pid` tool). One process of each serves both
 * pis; what one pi writes the other reads; `/mcp` says shared and how many sessions; and after both pis end, one by
 * SIGKILL, no hub or server process is left once the idle time and 10 s have passed.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { within } from "../src/common/wait.ts";
import { fixtureEntry, isAlive, killIfAlive, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";
import { PI_LINE } from "./pi-line.ts";
import { spawnRpcPi } from "./rpc-pi.ts";
import { processesWithEnv } from "./tmux.ts";

const MARK = "MCP_BRIDGE_SHARED_PI_TEST";
const IDLE_SECONDS = 1;
const tmp = tempDir("mcp-bridge-shared-pi-");
after(() => tmp.cleanup());

/** One `pi --mode rpc`: `prompt` sends a prompt and resolves with the stdout it wrote until `until` matched there. */
function startPi(home: string, config: string) {
  const { child: pi, exited, output } = spawnRpcPi(home, config, tmp.dir);
  /** Sends a prompt; resolves with the text of the first tool result, or of the first line matching `until`, after it. */
  const prompt = async (message: string, until?: RegExp): Promise<string> => {
    const from = output().length;
    pi.stdin.write(`${JSON.stringify({ type: "prompt", message })}\n`);
    let found: string | undefined;
    const look = () => {
      for (const line of output().slice(from).split("\n")) {
        if (until) {
          if (until.test(line)) return (found = line);
          continue;
        }
        if (!line.includes('"tool_execution_end"')) continue;
        const event = JSON.parse(line) as { result: { content: { text?: string }[] } };
        return (found = event.result.content.map((c) => c.text ?? "").join(""));
      }
    };
    await waitFor(() => look() !== undefined, `pi to answer "${message}"`, 90_000, 50);
    return found!;
  };
  /** Answers pi's first UI request (a dialog) after `from` whose text has `text`, as the user's "cancel". */
  const cancelDialog = async (text: string, from: number): Promise<void> => {
    let id: string | undefined;
    await waitFor(
      () => {
        for (const line of output().slice(from).split("\n")) {
          if (!line.includes('"extension_ui_request"') || !line.includes(text)) continue;
          id = (JSON.parse(line) as { id: string }).id;
          return true;
        }
        return false;
      },
      `pi to ask "${text}"`,
      60_000,
      50,
    );
    pi.stdin.write(`${JSON.stringify({ type: "extension_ui_response", id, cancelled: true })}\n`);
  };
  return { pi, exited, prompt, output, cancelDialog };
}

describe(`shared servers across pi processes ${PI_LINE}`, { timeout: 300_000 }, () => {
  test("two pis: one process per server, the same pid from each, state written in one read in the other; nothing left after both end", async () => {
    const home = path.join(tmp.dir, "home");
    const mark = randomUUID();
    const memoryFile = path.join(tmp.dir, "memory.jsonl");
    const config = path.join(tmp.dir, "mcp.json");
    const shared = { idleSeconds: IDLE_SECONDS };
    const common = { shared, exposure: "direct", autoApprove: ["*"], initTimeout: 120_000 };
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          memory: {
            command: "npx",
            args: ["-y", "@modelcontextprotocol/server-memory"],
            env: {
              MEMORY_FILE_PATH: memoryFile,
              [MARK]: mark,
              PATH: `${path.join(REPO_ROOT, "node_modules", ".bin")}:${process.env.PATH}`,
            },
            cwd: REPO_ROOT,
            ...common,
          },
          fx: { ...fixtureEntry(), env: { [MARK]: mark, FIXTURE_LIST_ASK: "1" }, ...common },
        },
      }),
    );
    const one = startPi(home, config);
    const two = startPi(home, config);
    const hubLock = path.join(home, "agent", "mcp-hub", "hub.lock");
    let hub: number | undefined;
    try {
      const pidOne = Number(await one.prompt("call mcp_fx_pid {}"));
      const pidTwo = Number(await two.prompt("call mcp_fx_pid {}"));
      assert.ok(pidOne > 0);
      assert.equal(pidTwo, pidOne, "both pis reach the same fixture server process");
      // The server asks (an elicitation) during pi one's call: pi one shows the dialog, pi two sees nothing of it.
      const before = two.output().length;
      const asking = one.prompt(`call mcp_fx_ask ${JSON.stringify({ question: "who is asking?" })}`);
      await one.cancelDialog("who is asking?", 0);
      assert.match(await asking, /cancel/);
      assert.ok(!two.output().slice(before).includes("who is asking?"), "pi two was not asked");
      const entity = `shared-${randomUUID().slice(0, 8)}`;
      const create = { entities: [{ name: entity, entityType: "test", observations: ["written by pi one"] }] };
      await one.prompt(`call mcp_memory_create_entities ${JSON.stringify(create)}`);
      const read = await two.prompt("call mcp_memory_read_graph {}");
      assert.match(read, new RegExp(`${entity}[\\s\\S]*written by pi one`), "pi two reads what pi one wrote");
      // One process of each server serves both pis (npx's own processes aside: the server is its last child).
      const commands = processesWithEnv(MARK, mark).map((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8"));
      const fixtureFile = fixtureEntry().args[0] ?? "";
      assert.equal(commands.filter((c) => c.includes(fixtureFile)).length, 1, commands.join("\n"));
      assert.equal(
        commands.filter((c) => /^[^\0]*node\0[^\0]*mcp-server-memory/.test(c)).length,
        1,
        commands.join("\n"),
      );
      const status = await two.prompt("/mcp", /fx[^\n]*shared ×2/);
      assert.ok(status);
      // `/mcp reconnect` in one pi restarts the server for both, after saying so; the other pi reconnects to the new one.
      const asked = two.output().length;
      await two.prompt("/mcp reconnect fx", /Reconnected to MCP server 'fx'/);
      assert.match(two.output().slice(asked), /shared: restarting it for 1 other pi session too/);
      const restarted = Number(await one.prompt("call mcp_fx_pid {}"));
      assert.ok(restarted > 0 && restarted !== pidOne, "pi one reaches the restarted process");
      assert.equal(Number(await two.prompt("call mcp_fx_pid {}")), restarted);
      hub = Number(readFileSync(hubLock, "utf8"));
      assert.ok(isAlive(hub), "the hub runs");
      one.pi.kill("SIGKILL");
      two.pi.stdin.end();
      await within(Promise.all([one.exited, two.exited]), { ms: 30_000, timedOut: () => new Error("pi did not exit") });
      await waitFor(
        () => processesWithEnv(MARK, mark).length === 0 && !isAlive(hub!),
        "every server process and the hub to be gone",
        IDLE_SECONDS * 1000 + 10_000,
        100,
      );
    } finally {
      for (const p of [one.pi, two.pi]) if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
      for (const pid of processesWithEnv(MARK, mark)) killIfAlive(pid);
      if (hub && isAlive(hub)) process.kill(hub, "SIGKILL");
    }
  });
});
