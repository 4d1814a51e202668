/**
 * The retry schedule on its own: delays as the policy gives them, retryable and final failures, success, and stop().
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { noteRetryAfter, RetrySchedule, STABLE_AFTER_MS } from "../src/connection/retry-schedule.ts";
import { waitFor } from "./helpers.ts";

/**
 * Node's timers count whole milliseconds, so a timer may fire up to 1 ms before its delay has passed as
 * `performance.now()` measures it. Waits are checked against this lower bound, never against an upper one.
 */
const TIMER_GRANULARITY_MS = 1;

function recorder(outcomes: Array<"fail" | "fatal" | "ok">) {
  const calls: string[] = [];
  /** When each attempt started and each failure was reported (`performance.now()`), by attempt number. */
  const attemptStarted = new Map<number, number>();
  const failedAt = new Map<number, number>();
  let n = 0;
  const schedule = new RetrySchedule(
    { maxAttempts: 4, initialDelayMs: 20, maxDelayMs: 60 },
    {
      attempt: async (attempt) => {
        attemptStarted.set(attempt, performance.now());
        calls.push(`attempt ${attempt}`);
        const outcome = outcomes[n++] ?? "fail";
        if (outcome !== "ok") throw Object.assign(new Error(outcome), { fatal: outcome === "fatal" });
      },
      retryable: (error) => !(error as { fatal?: boolean }).fatal,
      scheduled: (attempt) => calls.push(`scheduled ${attempt}`),
      failed: (attempt, _error, retryIn) => {
        failedAt.set(attempt, performance.now());
        calls.push(`failed ${attempt} retryIn ${retryIn}`);
      },
      gaveUp: (error) => calls.push(`gave up: ${(error as Error).message}`),
    },
  );
  return { schedule, calls, attemptStarted, failedAt };
}

describe("RetrySchedule", { timeout: 30_000 }, () => {
  // The schedule's timers are unref'd (a pending retry must not keep pi alive); pi's own handles keep it running, and
  // this one stands in for them here.
  let keepAlive: NodeJS.Timeout;
  before(() => {
    keepAlive = setInterval(() => {}, 1000);
  });
  after(() => clearInterval(keepAlive));

  test("backs off 20, 40, 60, 60 ms and gives up after the last attempt", async () => {
    const { schedule, calls, attemptStarted, failedAt } = recorder(["fail", "fail", "fail", "fail"]);
    const started = performance.now();
    await schedule.start();
    assert.deepEqual(calls, [
      "scheduled 1",
      "attempt 1",
      "scheduled 2",
      "failed 1 retryIn 40",
      "attempt 2",
      "scheduled 3",
      "failed 2 retryIn 60",
      "attempt 3",
      "scheduled 4",
      "failed 3 retryIn 60",
      "attempt 4",
      "failed 4 retryIn null",
      "gave up: fail",
    ]);
    assert.equal(schedule.running, undefined);
    // The waits it announced are the waits it made: each attempt starts no earlier than its delay after the previous
    // failure (the first: after the start).
    const waited = [
      attemptStarted.get(1)! - started,
      ...[2, 3, 4].map((attempt) => attemptStarted.get(attempt)! - failedAt.get(attempt - 1)!),
    ];
    [20, 40, 60, 60].forEach((delay, i) => {
      assert.ok(
        waited[i]! >= delay - TIMER_GRANULARITY_MS,
        `attempt ${i + 1} started ${waited[i]!.toFixed(1)} ms after the one before failed, not ${delay}`,
      );
    });
  });

  test("a failure retrying cannot fix ends it at once; a success ends it quietly", async () => {
    const fatal = recorder(["fail", "fatal"]);
    await fatal.schedule.start();
    assert.deepEqual(fatal.calls.slice(-3), ["attempt 2", "failed 2 retryIn null", "gave up: fatal"]);
    const ok = recorder(["fail", "ok"]);
    await ok.schedule.start();
    assert.equal(ok.calls.at(-1), "attempt 2");
  });

  test("attempts are counted across runs: a success does not give a new set, reset() does", async () => {
    const { schedule, calls } = recorder(["fail", "ok", "fail", "fail", "ok"]);
    await schedule.start();
    assert.deepEqual(calls.splice(0), ["scheduled 1", "attempt 1", "scheduled 2", "failed 1 retryIn 40", "attempt 2"]);
    assert.equal(schedule.attemptsMade, 2);
    // Lost again soon after: the schedule goes on from attempt 3, with attempt 3's delay.
    await schedule.start(new Error("lost again"));
    assert.deepEqual(calls.splice(0), [
      "scheduled 3",
      "attempt 3",
      "scheduled 4",
      "failed 3 retryIn 60",
      "attempt 4",
      "failed 4 retryIn null",
      "gave up: fail",
    ]);
    assert.equal(schedule.exhausted, true);
    // No attempt left: a new start gives up at once, with what made it necessary.
    await schedule.start(new Error("lost a third time"));
    assert.deepEqual(calls.splice(0), ["gave up: lost a third time"]);
    schedule.reset();
    assert.equal(schedule.attemptsMade, 0);
    await schedule.start();
    assert.deepEqual(calls.splice(0), ["scheduled 1", "attempt 1"]);
  });

  test("a drop forgives the attempts used only after the server stayed up for the stable period", async () => {
    const { schedule } = recorder(["fail", "ok"]);
    await schedule.start();
    assert.equal(schedule.attemptsMade, 2);
    schedule.connected(1_000);
    schedule.dropped(1_000 + STABLE_AFTER_MS - 1);
    assert.equal(schedule.attemptsMade, 2, "up for less than the stable period: the count goes on");
    schedule.connected(5_000);
    schedule.dropped(5_000 + STABLE_AFTER_MS);
    assert.equal(schedule.attemptsMade, 0, "stable: a fresh set of attempts");
  });

  test("one schedule at a time; stop() ends a wait at once and it can start again", async () => {
    const calls: string[] = [];
    const slow = new RetrySchedule(
      { maxAttempts: 3, initialDelayMs: 60_000, maxDelayMs: 60_000 },
      {
        attempt: async () => assert.fail("never reached"),
        retryable: () => true,
        scheduled: () => calls.push("scheduled"),
        failed: () => undefined,
        gaveUp: () => calls.push("gave up"),
      },
    );
    const first = slow.start();
    assert.equal(slow.start(), first, "the same run");
    await slow.stop();
    await first;
    assert.equal(slow.running, undefined);
    assert.deepEqual(calls, ["scheduled"], "stopped: not given up");
    assert.equal(slow.attemptsMade, 0, "an attempt stopped before it ran is not counted");
  });

  test("hurry() ends the wait before the next attempt (a call wants the server); its later waits back off as before", async () => {
    const calls: string[] = [];
    const outcomes = ["fail", "ok"];
    const slow = new RetrySchedule(
      { maxAttempts: 3, initialDelayMs: 60_000, maxDelayMs: 60_000 },
      {
        attempt: async (n) => {
          calls.push(`attempt ${n}`);
          if (outcomes.shift() !== "ok") throw new Error("down");
        },
        retryable: () => true,
        scheduled: (n) => calls.push(`scheduled ${n}`),
        failed: (n) => calls.push(`failed ${n}`),
        gaveUp: () => calls.push("gave up"),
      },
    );
    slow.hurry(); // No wait under way: nothing to end.
    const run = slow.start();
    slow.hurry();
    await waitFor(() => calls.includes("failed 1"), "the first attempt, at once");
    assert.deepEqual(calls, ["scheduled 1", "attempt 1", "scheduled 2", "failed 1"]);
    slow.hurry();
    await run;
    assert.deepEqual(calls.slice(4), ["attempt 2"], "the second, hurried too, connected");
    assert.equal(slow.attemptsMade, 2, "hurried attempts count as the schedule's own");
  });

  test("hurry() does not end a wait the server asked for (`Retry-After`): the attempt comes when it said", async () => {
    const url = "http://127.0.0.1:9/mcp";
    const started: number[] = [];
    const asking = new RetrySchedule(
      { maxAttempts: 2, initialDelayMs: 10, maxDelayMs: 60_000 },
      {
        attempt: async () => {
          started.push(performance.now());
          noteRetryAfter(url, "1");
          throw new Error("busy");
        },
        retryable: () => true,
        scheduled: () => undefined,
        gaveUp: () => undefined,
        url: () => url,
      },
    );
    const run = asking.start();
    await waitFor(() => started.length === 1, "the first attempt");
    asking.hurry();
    await run;
    const waited = started[1]! - started[0]!;
    assert.ok(waited >= 900, `the second attempt came ${waited.toFixed(0)} ms after the 503 asked for 1 s`);
  });

  test("a `Retry-After` holds the reconnects of the server that sent it, not another's at the same origin (a gateway's)", async () => {
    noteRetryAfter("http://127.0.0.1:7/jira/mcp", "60");
    let due = Infinity;
    const github = new RetrySchedule(
      { maxAttempts: 1, initialDelayMs: 10, maxDelayMs: 60_000 },
      {
        attempt: async () => undefined,
        retryable: () => true,
        scheduled: (_n, at) => (due = at - Date.now()),
        gaveUp: () => undefined,
        url: () => "http://127.0.0.1:7/github/mcp",
      },
    );
    const run = github.start();
    assert.ok(due < 1000, `the attempt was put off ${due} ms by another server's Retry-After`);
    await run;
  });
});
