/**
 * `protocolVersion: "auto"` against servers that do not speak 2026-07-28: local ones that answer the probe with an
 * error or exit on it (real child processes on the 1.x SDK), and remote ones that give it no usable answer at all
 * (silence, an empty reply, a server error) but answer `initialize` (a plain HTTP server on 127.0.0.1).
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { bundledFixture } from "./fixture-bundle.ts";
import { connectFailure, connectionFor, fixtureEntry, readLog, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";

const INTOLERANT = bundledFixture(path.join(REPO_ROOT, "test", "fixtures", "probe-intolerant.mjs"));

describe("auto against handshake-only local servers", { timeout: 60_000 }, () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  test("a server that answers the probe with an error speaks 2025-11-25 on the same process", async () => {
    const log = path.join(tmp.dir, "tolerant.jsonl");
    const connection = connectionFor("plain", { ...fixtureEntry(), env: { FIXTURE_LOG: log } });
    try {
      await connection.connect();
      assert.equal(connection.protocolVersion, "2025-11-25");
      assert.equal(
        readLog(log).filter((e) => e.event === "start").length,
        1,
        "one process: the probe did not cost a start",
      );
    } finally {
      await connection.close();
    }
  });

  test("a server that exits on the probe is started once more and asked with initialize alone, from then on", async () => {
    const log = path.join(tmp.dir, "intolerant.jsonl");
    const connection = connectionFor("strict", {
      command: process.execPath,
      args: [INTOLERANT],
      env: { FIXTURE_LOG: log },
    });
    try {
      await connection.connect();
      assert.equal(connection.protocolVersion, "2025-11-25");
      assert.deepEqual(
        connection.tools.map((t) => t.name),
        ["hello"],
      );
      assert.equal(readLog(log).length, 2, "the start the probe ended, then one with initialize alone");
      await connection.reconnect();
      assert.equal(connection.protocolVersion, "2025-11-25");
      assert.equal(readLog(log).length, 3, "a reconnect asks with initialize alone: no probe, no extra start");
    } finally {
      await connection.close();
    }
  });

  test("a server that counters `initialize` with a revision the bridge does not speak: the error says so, not how its process was then ended", async () => {
    // A handshake-only server answering every `initialize` with a revision of its own.
    const script = `require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
      const { id, method } = JSON.parse(line);
      const answer = method === "initialize" ? { result: { protocolVersion: "2099-01-01", capabilities: {}, serverInfo: { name: "future", version: "1" } } }
        : method === "ping" ? { result: {} } : { error: { code: -32601, message: "Method not found" } };
      if (id !== undefined) process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, ...answer }) + "\\n");
    });`;
    const { message } = await connectFailure(
      connectionFor("future", { command: process.execPath, args: ["-e", script], protocolVersion: "2025-06-18" }),
    );
    assert.match(message, /protocol version is not supported: 2099-01-01/);
    assert.doesNotMatch(message, /SIGKILL/);
  });

  test("pinned to 2026-07-28, a server that does not offer it: the error says so, not that its process exited", async () => {
    const { message } = await connectFailure(
      connectionFor("pinned", { ...fixtureEntry(), protocolVersion: "2026-07-28", maxRestarts: 0 }),
    );
    assert.match(message, /did not offer pinned protocol version 2026-07-28/);
    assert.doesNotMatch(message, /exited/);
  });

  test("a server that died of the probe late in its time is started again with the whole time a start gets", async () => {
    const log = path.join(tmp.dir, "late-intolerant.jsonl");
    // Each start takes 6 s of its 10: the probe kills the first with less than 4 left, fewer than a start needs.
    const connection = connectionFor("late", {
      command: process.execPath,
      args: [INTOLERANT],
      env: { FIXTURE_LOG: log, FIXTURE_START_DELAY_MS: "6000" },
      initTimeout: 10_000,
    });
    try {
      await connection.connect();
      assert.equal(connection.protocolVersion, "2025-11-25");
      assert.equal(readLog(log).length, 2, "the start the probe ended, then one with initialize alone");
    } finally {
      await connection.close();
    }
  });

  test("the same after an npx install held the connect past initTimeout: the second start gets the time the install moved on", async () => {
    const log = path.join(tmp.dir, "intolerant-npx.jsonl");
    const installed = path.join(tmp.dir, "npx-installed");
    const npx = path.join(REPO_ROOT, "test", "fixtures", "fake-npx.sh");
    const initTimeout = 10_000;
    const connection = connectionFor("strict", {
      // npm "installs" until the test says it is done, once its initTimeout has run out meanwhile; the program then dies
      // of the probe, and its second start (the package now in npx's cache) gets the time the install moved on.
      command: npx,
      args: [installed, process.execPath, INTOLERANT],
      env: { FIXTURE_LOG: log },
      initTimeout,
    });
    try {
      const started = Date.now();
      const connecting = connection.connect();
      connecting.catch(() => undefined);
      const past = () => connection.installing && Date.now() > started + initTimeout;
      await waitFor(past, "npx to be installing past its initTimeout", 30_000);
      writeFileSync(installed, "");
      await connecting;
      assert.equal(connection.protocolVersion, "2025-11-25");
      assert.equal(readLog(log).length, 2, "the start the probe ended, then one with initialize alone");
    } finally {
      await connection.close();
    }
  });
});

type ProbeAnswer = "silence" | "empty" | "error";

/**
 * A Streamable HTTP server of the handshake era that gives `server/discover` no usable answer (`answer`) and answers
 * everything else as a 2025-11-25 server does. `methods` records every request method it was sent, in order.
 */
async function handshakeOnlyHttp(answer: ProbeAnswer): Promise<{ url: string; methods: string[]; server: Server }> {
  const methods: string[] = [];
  const json = (res: ServerResponse, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(200, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === "DELETE") return void res.writeHead(200).end();
    if (req.method !== "POST") return void res.writeHead(405).end();
    let text = "";
    req.on("data", (chunk) => (text += chunk));
    req.on("end", () => {
      const message = JSON.parse(text) as { id?: number | string; method: string };
      methods.push(message.method);
      if (message.id === undefined) return void res.writeHead(202).end();
      switch (message.method) {
        case "server/discover":
          if (answer === "silence") return; // never answered: the request hangs until the client gives up on it
          if (answer === "empty") return void res.writeHead(200, { "content-type": "text/plain" }).end("");
          return void res.writeHead(500).end("internal error");
        case "initialize":
          return json(
            res,
            {
              jsonrpc: "2.0",
              id: message.id,
              result: {
                protocolVersion: "2025-11-25",
                capabilities: { tools: {} },
                serverInfo: { name: "old", version: "1" },
              },
            },
            { "mcp-session-id": "s1" },
          );
        case "tools/list":
          return json(res, {
            jsonrpc: "2.0",
            id: message.id,
            result: { tools: [{ name: "hello", inputSchema: { type: "object" } }] },
          });
        default:
          return json(res, { jsonrpc: "2.0", id: message.id, result: {} });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, methods, server };
}

describe("auto against remote servers that give the probe no usable answer", { timeout: 60_000 }, () => {
  const servers: Server[] = [];
  after(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  for (const answer of ["silence", "empty", "error"] as const) {
    test(`${answer} on server/discover: asked with initialize in the time left, and from then on without the probe`, async () => {
      const fixture = await handshakeOnlyHttp(answer);
      servers.push(fixture.server);
      // Silence takes half the timeout; the other half must hold initialize and tools/list on a busy machine too
      // (two seconds of it did not, with four busy loops beside three test files on two cores).
      const connection = connectionFor("old", { url: fixture.url, timeout: 12_000 });
      try {
        await connection.connect();
        assert.equal(connection.protocolVersion, "2025-11-25");
        assert.deepEqual(
          connection.tools.map((t) => t.name),
          ["hello"],
        );
        assert.deepEqual(fixture.methods, ["server/discover", "initialize", "notifications/initialized", "tools/list"]);
        await connection.reconnect();
        assert.deepEqual(
          fixture.methods.slice(4),
          ["initialize", "notifications/initialized", "tools/list"],
          "a reconnect asks with initialize alone",
        );
      } finally {
        await connection.close();
      }
    });
  }
});
