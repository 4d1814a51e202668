import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { describe, test } from "node:test";
import { followSignal } from "../src/common/follow-signal.ts";

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
