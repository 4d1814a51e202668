/**
 * The retry schedule on its own: delays as the policy gives them, retryable and final failures, success, and stop().
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { RetrySchedule } from "../src/connection/retry-schedule.ts";

function recorder(outcomes: Array<"fail" | "fatal" | "ok">) {
  const calls: string[] = [];
  const delays: number[] = [];
  let n = 0;
  const schedule = new RetrySchedule(
    { maxAttempts: 4, initialDelayMs: 2, maxDelayMs: 6 },
    {
      attempt: async (attempt) => {
        calls.push(`attempt ${attempt}`);
        const outcome = outcomes[n++] ?? "fail";
        if (outcome !== "ok") throw Object.assign(new Error(outcome), { fatal: outcome === "fatal" });
      },
      retryable: (error) => !(error as { fatal?: boolean }).fatal,
      scheduled: (attempt, at) => {
        calls.push(`scheduled ${attempt}`);
        delays.push(at - Date.now());
      },
      failed: (attempt, _error, retryIn) => calls.push(`failed ${attempt} retryIn ${retryIn}`),
      gaveUp: (error) => calls.push(`gave up: ${(error as Error).message}`),
    },
  );
  return { schedule, calls, delays };
}

describe("RetrySchedule", { timeout: 30_000 }, () => {
  // The schedule's timers are unref'd (a pending retry must not keep pi alive); pi's own handles keep it running, and
  // this one stands in for them here.
  let keepAlive: NodeJS.Timeout;
  before(() => {
    keepAlive = setInterval(() => {}, 1000);
  });
  after(() => clearInterval(keepAlive));

  test("backs off 2, 4, 6, 6 ms and gives up after the last attempt", async () => {
    const { schedule, calls } = recorder(["fail", "fail", "fail", "fail"]);
    await schedule.start();
    assert.deepEqual(calls, [
      "scheduled 1",
      "attempt 1",
      "scheduled 2",
      "failed 1 retryIn 4",
      "attempt 2",
      "scheduled 3",
      "failed 2 retryIn 6",
      "attempt 3",
      "scheduled 4",
      "failed 3 retryIn 6",
      "attempt 4",
      "failed 4 retryIn null",
      "gave up: fail",
    ]);
    assert.equal(schedule.running, undefined);
  });

  test("a failure retrying cannot fix ends it at once; a success ends it quietly", async () => {
    const fatal = recorder(["fail", "fatal"]);
    await fatal.schedule.start();
    assert.deepEqual(fatal.calls.slice(-3), ["attempt 2", "failed 2 retryIn null", "gave up: fatal"]);
    const ok = recorder(["fail", "ok"]);
    await ok.schedule.start();
    assert.equal(ok.calls.at(-1), "attempt 2");
  });

  test("one schedule at a time; stop() ends a wait at once and it can start again", async () => {
    const calls: string[] = [];
    const slow = new RetrySchedule({ maxAttempts: 3, initialDelayMs: 60_000, maxDelayMs: 60_000 }, {
      attempt: async () => assert.fail("never reached"),
      retryable: () => true,
      scheduled: () => calls.push("scheduled"),
      failed: () => undefined,
      gaveUp: () => calls.push("gave up"),
    });
    const first = slow.start();
    assert.equal(slow.start(), first, "the same run");
    await slow.stop();
    await first;
    assert.equal(slow.running, undefined);
    assert.deepEqual(calls, ["scheduled"], "stopped: not given up");
  });
});
