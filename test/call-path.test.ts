/**
 * What a tool call does besides the SDK's `callTool`, kept off its way: its own abort signal that follows the turn's,
 * and its log line, written once the result is on its way back and in the order things happened.
 */
import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { describe, test } from "node:test";
import { followSignal } from "../src/common/follow-signal.ts";
import type { LogRecord } from "../src/common/log-file.ts";
import { Redactor } from "../src/common/redact.ts";
import { LifecycleReport } from "../src/connection/lifecycle-report.ts";

describe("a call's own signal, following a turn's", () => {
  test("the turn's abort reaches every call still running, with its reason; not a call that has ended", () => {
    const turn = new AbortController();
    const running = [followSignal(turn.signal), followSignal(turn.signal)];
    const ended = followSignal(turn.signal);
    ended.release();
    const reason = new Error("the user pressed Escape");
    turn.abort(reason);
    for (const call of running) {
      assert.equal(call.signal.aborted, true);
      assert.equal(call.signal.reason, reason);
    }
    // An ended call would otherwise send the server a cancellation for a request it already answered.
    assert.equal(ended.signal.aborted, false);
  });

  test("however many calls follow one signal, it carries one listener; each call's signal is its own", () => {
    const turn = new AbortController();
    const calls = Array.from({ length: 500 }, () => followSignal(turn.signal));
    assert.equal(getEventListeners(turn.signal, "abort").length, 1);
    assert.equal(new Set(calls.map((c) => c.signal)).size, 500);
    for (const call of calls) call.release();
    const other = new AbortController();
    followSignal(other.signal);
    assert.equal(getEventListeners(other.signal, "abort").length, 1, "another turn has a listener of its own");
  });

  test("a call made after its turn was aborted starts aborted", () => {
    const turn = new AbortController();
    turn.abort("gone");
    const call = followSignal(turn.signal);
    assert.equal(call.signal.aborted, true);
    assert.equal(call.signal.reason, "gone");
  });

  test("calls that follow a turn after an abort do not reach the calls of before", () => {
    const turn = new AbortController();
    const first = followSignal(turn.signal);
    turn.abort("stop");
    assert.equal(first.signal.aborted, true);
    const late = followSignal(turn.signal);
    assert.equal(late.signal.aborted, true);
    assert.equal(getEventListeners(turn.signal, "abort").length, 0, "the listener went with the abort");
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
