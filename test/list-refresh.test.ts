/**
 * What a server's `list_changed` starts runs at most once per interval, one run at a time, and the last change is
 * always served (src/connection/list-refresh.ts).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ListRefresh } from "../src/connection/list-refresh.ts";
import { InMemoryTransport } from "@modelcontextprotocol/client";
import { createMcpClient } from "../src/connection/mcp-client.ts";
import { negotiationFor } from "../src/connection/protocol-negotiation.ts";
import { connectionFor, waitFor } from "./helpers.ts";

describe("ListRefresh", () => {
  test("changes said while a run is under way make one more run, with the newest request; never two at once", async () => {
    const runs: Array<{ latest: number; at: number }> = [];
    let open = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const refresh = new ListRefresh<number>(async (latest) => {
      assert.equal(open++, 0, "one run at a time");
      runs.push({ latest, at: Date.now() });
      if (runs.length === 1) await gate;
      open--;
    }, 200);
    refresh.request(0);
    for (let i = 1; i <= 100; i++) refresh.request(i);
    release();
    await waitFor(() => runs.length === 2, "the second run");
    assert.deepEqual(
      runs.map((r) => r.latest),
      [0, 100],
    );
    // Timers never fire early, but may round to the millisecond.
    assert.ok(
      runs[1]!.at - runs[0]!.at >= 199,
      `the second run started ${runs[1]!.at - runs[0]!.at} ms after the first`,
    );
    refresh.request(101);
    await waitFor(() => runs.length === 3, "a later change's run");
    assert.equal(runs[2]!.latest, 101);
  });

  test("a run that fails does not stop the next", async () => {
    const seen: number[] = [];
    const refresh = new ListRefresh<number>((latest) => {
      seen.push(latest);
      if (latest === 1) throw new Error("the server went away");
    }, 10);
    refresh.request(1);
    await waitFor(() => seen.length === 1, "the first run");
    refresh.request(2);
    await waitFor(() => seen.length === 2, "the second run");
    assert.deepEqual(seen, [1, 2]);
  });
});

describe("a tool list change said while the first list is read", () => {
  test("is served once the connection opens: the tool added then appears", async () => {
    // The server's tools change while its first list is on its way (slow: 300 ms), and it says so at once.
    const script = `let lists = 0;
    const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n");
    require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
      const { id, method } = JSON.parse(line);
      if (id === undefined) return;
      if (method === "initialize")
        return send({ id, result: { protocolVersion: "2025-06-18", capabilities: { tools: { listChanged: true } }, serverInfo: { name: "s", version: "1" } } });
      if (method !== "tools/list") return send({ id, result: {} });
      const tools = ["a", ...(++lists > 1 ? ["b"] : [])].map((name) => ({ name, inputSchema: { type: "object" } }));
      if (lists === 1) send({ method: "notifications/tools/list_changed" });
      setTimeout(() => send({ id, result: { tools } }), 300);
    });`;
    const connection = connectionFor("growing", {
      command: process.execPath,
      args: ["-e", script],
      protocolVersion: "2025-06-18",
    });
    try {
      await connection.connect();
      await waitFor(() => connection.tools.some((t) => t.name === "b"), "the tool added while the first list was read");
    } finally {
      await connection.close();
    }
  });
});

describe("a server that says its tool list changed without pause (every 10 ms)", () => {
  test("is heard all the same: the SDK's debounce, whose pause never comes, does not hold the change back", async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    serverSide.onmessage = (message) => {
      if (!("method" in message) || !("id" in message)) return;
      const params = message.params as { protocolVersion?: string };
      const capabilities = { tools: { listChanged: true } };
      const result = { protocolVersion: params.protocolVersion, capabilities, serverInfo: { name: "s", version: "1" } };
      void serverSide.send({ jsonrpc: "2.0", id: message.id, result });
    };
    const heard: string[] = [];
    const notifications = { listChanged: (list: string) => heard.push(list), resourceUpdated() {}, logMessage() {} };
    const negotiation = negotiationFor("2025-06-18", undefined, true, 5_000);
    const client = createMcpClient({ name: "test", version: "0" }, {}, notifications, negotiation);
    await client.connect(clientSide);
    // Same process, same timers: the next notification always comes before a 50 ms pause could.
    const saying = setInterval(
      () => void serverSide.send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" }),
      10,
    );
    try {
      await waitFor(() => heard.length > 0, "the change to be heard", 2_000);
    } finally {
      clearInterval(saying);
      await client.close();
    }
  });
});

describe("a tool list that pages without end", () => {
  test("the server connects with the tools of the pages read, as far as the SDK reads a list (64 pages)", async () => {
    // Each page names the next, for ever.
    const script = `let lists = 0;
    const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n");
    require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
      const { id, method } = JSON.parse(line);
      if (id === undefined) return;
      if (method === "initialize")
        return send({ id, result: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "s", version: "1" } } });
      if (method !== "tools/list") return send({ id, result: {} });
      lists++;
      send({ id, result: { tools: [{ name: "tool_" + lists, inputSchema: { type: "object" } }], nextCursor: "page-" + (lists + 1) } });
    });`;
    const connection = connectionFor("endless", {
      command: process.execPath,
      args: ["-e", script],
      protocolVersion: "2025-06-18",
      maxRestarts: 0,
    });
    try {
      await connection.connect();
      assert.equal(connection.tools.length, 64);
    } finally {
      await connection.close();
    }
  });
});
