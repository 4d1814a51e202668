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

/** A clock 20 ms from its deadline, with 5 s for the server, whose npx install ended `endedAfter` ms from now. */
function installOver(endedAfter: number): { clock: ConnectClock; started: number } {
  const started = Date.now();
  const endedAt = started + endedAfter;
  return { clock: { deadline: started + 20, span: 5_000, install: () => ({ underWay: false, endedAt }) }, started };
}

describe("untilDeadline and an install found over", () => {
  test("an install that ended after the deadline held the clock: the server's time runs from its program's start", async () => {
    // What a check that came late sees: the install is over, its program started a second after the deadline.
    const { clock, started } = installOver(1_020);
    const answered = new Promise((resolve) => setTimeout(() => resolve("answered"), 100));
    assert.equal(await untilDeadline(answered, clock, late), "answered");
    assert.equal(clock.deadline, started + 6_020);
  });

  test("an install over before the deadline held nothing: the attempt ends at its deadline", async () => {
    const { clock, started } = installOver(10);
    await assert.rejects(untilDeadline(never, clock, late), /ran out of time/);
    assert.equal(clock.deadline, started + 20);
  });
});
