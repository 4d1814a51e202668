/**
 * What a tool call does besides the SDK's `callTool`, kept off its way: the abort signal that follows the turn's,
 * and its log line, written once the result is on its way back and in the order things happened.
 */
import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { describe, test } from "node:test";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { followSignal } from "../src/common/follow-signal.ts";
import type { LogRecord } from "../src/common/log-file.ts";
import { Redactor } from "../src/common/redact.ts";
import { LifecycleReport } from "../src/connection/lifecycle-report.ts";

describe("the signal a call's requests get, following the turn's", () => {
  test("the turn's abort reaches every call's signal, with its reason; a few signals serve all the calls of a turn", () => {
    const turn = new AbortController();
    const calls = Array.from({ length: 2000 }, () => followSignal(turn.signal));
    assert.equal(calls[0], calls[1], "calls one after another share one");
    const distinct = new Set(calls).size;
    assert.ok(distinct > 1 && distinct <= 32, `${distinct} signals for the turn`);
    const reason = new Error("the user pressed Escape");
    turn.abort(reason);
    assert.ok(calls.every((signal) => signal.aborted && signal.reason === reason));
  });

  test("pi's signal carries one listener, whatever the calls; a thousand listening are spread, and raise no warning", async () => {
    const turn = new AbortController();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const signals = new Set<AbortSignal>();
      for (let i = 0; i < 1000; i++) {
        const signal = followSignal(turn.signal);
        signal.addEventListener("abort", () => {});
        signals.add(signal);
      }
      assert.equal(getEventListeners(turn.signal, "abort").length, 1);
      // Each add and remove walks its signal's list: a thousand on one would cost half a million steps.
      const most = Math.max(...[...signals].map((signal) => getEventListeners(signal, "abort").length));
      assert.ok(most <= 64, `${most} listeners on one signal`);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(
        warnings.map((w) => w.name),
        [],
      );
      const other = new AbortController();
      assert.notEqual(followSignal(other.signal), followSignal(turn.signal), "another turn has a follower of its own");
    } finally {
      process.off("warning", onWarning);
    }
  });

  test("a call made after its turn was aborted starts aborted, and the listener went with the abort", () => {
    const early = new AbortController();
    const first = followSignal(early.signal);
    early.abort("stop");
    assert.equal(first.aborted, true);
    assert.equal(getEventListeners(early.signal, "abort").length, 0);
    const turn = new AbortController();
    turn.abort("gone");
    assert.equal(followSignal(turn.signal).aborted, true);
    assert.equal(followSignal(turn.signal).reason, "gone");
  });

  test("through the SDK's client: the turn's abort cancels the call still running, not the calls that ended", async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const cancelled: unknown[] = [];
    serverSide.onmessage = (message) => {
      if (!("method" in message)) return;
      if (message.method === "notifications/cancelled") cancelled.push(message.params?.requestId);
      if (!("id" in message)) return;
      const { id } = message;
      const params = (message.params ?? {}) as { protocolVersion?: string; name?: string };
      if (message.method === "initialize") {
        const serverInfo = { name: "s", version: "0" };
        const result = { protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo };
        void serverSide.send({ jsonrpc: "2.0", id, result });
      } else if (message.method === "tools/call" && params.name === "quick") {
        void serverSide.send({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "done" }] } });
      } else if (message.method !== "tools/call") {
        void serverSide.send({ jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } });
      }
    };
    const client = new Client({ name: "test", version: "0" });
    await client.connect(clientSide);
    try {
      const turn = new AbortController();
      const signal = followSignal(turn.signal);
      await Promise.all([1, 2, 3].map(() => client.callTool({ name: "quick", arguments: {} }, { signal })));
      const slow = client.callTool({ name: "slow", arguments: {} }, { signal }).catch((error: unknown) => error);
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(getEventListeners(signal, "abort").length, 1, "only the running call listens");
      turn.abort("the user pressed Escape");
      assert.ok((await slow) instanceof Error, "the running call was cancelled");
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(cancelled.length, 1, "one cancellation: the running call's");
    } finally {
      await client.close();
    }
  });
});

describe("a tool call's log line", () => {
  const report = (lines: LogRecord[]) =>
    new LifecycleReport(
      { name: "s", retry: { maxAttempts: 1, initialDelayMs: 1, maxDelayMs: 1 } },
      { logger: { log: (line) => lines.push(line) }, redactor: new Redactor(["call-secret-1"]) },
      () => "connected",
    );

  test("is written on the next turn, not while the call returns; the call is counted at once", async () => {
    const lines: LogRecord[] = [];
    const r = report(lines);
    r.called("echo", Date.now(), { result: { content: [] } });
    r.called("fail", Date.now(), { error: new Error("no call-secret-1 here") });
    assert.equal(lines.length, 0, "nothing formatted while the result is handed back");
    assert.equal(r.health.metrics(Date.now()).toolCalls, 2);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      lines.map((l) => [l.event, l.tool, l.ok, l.level]),
      [
        ["request", "echo", true, "info"],
        ["request", "fail", false, "warn"],
      ],
    );
    assert.equal(lines[1]!.error, "no *** here", "redacted as every line is");
  });

  test("comes before any line of the server logged after it", () => {
    const lines: LogRecord[] = [];
    const r = report(lines);
    r.called("echo", Date.now(), { result: { content: [] } });
    r.log("info", "tools.changed");
    r.record({ type: "closed" }, { kind: "live", session: undefined, since: 0 });
    assert.deepEqual(
      lines.map((l) => l.event),
      ["request", "tools.changed", "closed"],
    );
  });
});
