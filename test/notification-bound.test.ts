/**
 * The bound on a server's log and progress notifications (src/connection/notification-bound.ts), on a transport of
 * its own with a clock the test moves: which progress updates reach the SDK, in what order, and which are counted.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import { boundNotifications } from "../src/connection/notification-bound.ts";

function progress(step: number): JSONRPCMessage {
  return { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: step } };
}

/** A transport whose messages the test hands in, what the SDK would have been given, and what was counted. */
function bed() {
  let now = 0;
  const dropped: boolean[] = [];
  const transport = boundNotifications(
    { start: async () => {}, send: async () => {}, close: async () => {} } as Transport,
    { dropped: (_, first) => dropped.push(first), now: () => now },
  );
  const got: JSONRPCMessage[] = [];
  transport.onmessage = (message) => got.push(message);
  const steps = () => got.map((m) => ("params" in m ? (m.params as { progress?: number }).progress : "result"));
  return {
    receive: (m: JSONRPCMessage) => transport.onmessage!(m),
    at: (ms: number) => (now = ms),
    got,
    steps,
    dropped,
  };
}

test("a held update is dropped, not handed on later, once a newer one of its call passes in the next second", async () => {
  const b = bed();
  // 20 a second pass; the 21st and 22nd are held (the 22nd replacing the 21st, which is counted).
  for (let step = 1; step <= 22; step++) b.receive(progress(step));
  assert.deepEqual(
    b.steps(),
    Array.from({ length: 20 }, (_, i) => i + 1),
  );
  assert.deepEqual(b.dropped, [true]);
  // A new second: 23 passes at once, and 22, held, is now older than what the SDK has.
  b.at(1000);
  b.receive(progress(23));
  b.receive({ jsonrpc: "2.0", id: 7, result: {} });
  await Promise.resolve();
  assert.deepEqual(b.steps().slice(-2), [23, "result"], "the latest update is the last one before the result");
  assert.equal(b.steps().length + b.dropped.length, 24, "every update is handed on or counted");
  assert.deepEqual(b.dropped, [true, false], "one flood, reported once");
});

test("held updates go before the result that follows them, each call's latest only", async () => {
  const b = bed();
  for (let step = 1; step <= 25; step++) b.receive(progress(step));
  b.receive({ jsonrpc: "2.0", id: 7, result: {} });
  await Promise.resolve();
  assert.deepEqual(b.steps().slice(-2), [25, "result"]);
  assert.equal(b.steps().length - 1 + b.dropped.length, 25);
});

test("a flood whose first left-out update comes in the next second is still reported as a flood's first", async () => {
  const b = bed();
  // 20 pass and the 21st is held: over the bound, yet nothing left out so far (a busy machine, slow to read the 22nd).
  for (let step = 1; step <= 21; step++) b.receive(progress(step));
  assert.deepEqual(b.dropped, []);
  // A new second: 22 passes and replaces the held 21, the first one left out of this flood.
  b.at(1000);
  b.receive(progress(22));
  assert.deepEqual(b.dropped, [true], "the log says it once, on the first one left out");
  b.receive(progress(23));
  assert.equal(b.dropped.length, 1);
});

test("a notification whose method is a name every object has (constructor, __proto__) passes at once, as any other", () => {
  const b = bed();
  for (const method of ["constructor", "__proto__", "toString"]) b.receive({ jsonrpc: "2.0", method, params: {} });
  assert.equal(b.got.length, 3, "handed on in the same turn, none held as progress");
  assert.deepEqual(b.dropped, []);
});
