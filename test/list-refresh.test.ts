/**
 * What a server's `list_changed` starts runs at most once per interval, one run at a time, and the last change is
 * always served (src/connection/list-refresh.ts).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ListRefresh } from "../src/connection/list-refresh.ts";
import { waitFor } from "./helpers.ts";

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
