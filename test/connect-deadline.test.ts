/**
 * The clock of a connect attempt (src/connection/connect-deadline.ts) when its check at the deadline comes late: on a
 * busy machine the timer can fire seconds after the deadline, by which time an npx install that was under way at the
 * deadline may be over.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type ConnectClock, untilDeadline } from "../src/connection/connect-deadline.ts";

const late = () => new Error("the attempt ran out of time");
const never = new Promise<never>(() => undefined);

/** A clock 20 ms from its deadline, with `span` for the server, whose npx install ended `endedAfter` ms from now. */
function installOver(endedAfter: number, span = 5_000): { clock: ConnectClock; started: number } {
  const started = Date.now();
  const endedAt = started + endedAfter;
  return { clock: { deadline: started + 20, span, install: () => ({ underWay: false, endedAt }) }, started };
}

describe("untilDeadline and an install found over", () => {
  test("an install that ended after the deadline held the clock: the server's time runs from its program's start", async () => {
    // What a check that came late sees: the install is over, its program started a second after the deadline.
    const { clock, started } = installOver(1_020);
    const answered = new Promise((resolve) => setTimeout(() => resolve("answered"), 100));
    assert.equal(await untilDeadline(answered, clock, late), "answered");
    assert.equal(clock.deadline, started + 6_020);
  });

  test("so does one that ended just before the deadline: the server is not left what the install left of its time", async () => {
    // npx took all but 10 ms of the attempt's time: the server still gets its whole time (here 300 ms) to answer.
    const { clock, started } = installOver(10, 300);
    const answered = new Promise((resolve) => setTimeout(() => resolve("answered"), 100));
    assert.equal(await untilDeadline(answered, clock, late), "answered");
    assert.equal(clock.deadline, started + 310);
    // And a server that never answers is stopped once that time is over, not before.
    const silent = installOver(10, 300);
    await assert.rejects(untilDeadline(never, silent.clock, late), /ran out of time/);
    assert.ok(Date.now() >= silent.started + 310);
  });

  test("a program that started longer ago than the server's time (a shared server's) moves nothing", async () => {
    const { clock, started } = installOver(-10_000);
    await assert.rejects(untilDeadline(never, clock, late), /ran out of time/);
    assert.equal(clock.deadline, started + 20);
  });
});
