/**
 * Reading and ending a server's process tree, with real processes.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, describe, test } from "node:test";
import {
  descendantsOf,
  isSameProcessAlive,
  listProcesses,
  processTree,
  terminateProcesses,
} from "../src/connection/local/process-tree.ts";
import { isAlive, waitFor } from "./helpers.ts";

const started: number[] = [];

/** A shell with two children of its own: the shape of `npx` running a server. */
async function smallTree(): Promise<number> {
  const sh = spawn("sh", ["-c", "sleep 60 & sleep 60 & wait"], { stdio: "ignore" });
  await waitFor(() => processTree(sh.pid!).length === 3, "the shell's children to start");
  started.push(...processTree(sh.pid!).map((p) => p.pid));
  return sh.pid!;
}

describe("process tree", { timeout: 120_000 }, () => {
  after(() => {
    for (const pid of started) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  });

  test("descendantsOf walks a table breadth-first and ignores the rest", () => {
    const table = [
      { pid: 1, ppid: 0, start: "a" },
      { pid: 10, ppid: 1, start: "b" },
      { pid: 11, ppid: 10, start: "c" },
      { pid: 12, ppid: 11, start: "d" },
      { pid: 20, ppid: 1, start: "e" },
    ];
    assert.deepEqual(
      descendantsOf(10, table).map((p) => p.pid),
      [11, 12],
    );
    assert.deepEqual(descendantsOf(12, table), []);
  });

  test("processTree reads the same tree as a scan of the whole table", async () => {
    const root = await smallTree();
    const tree = processTree(root)
      .map((p) => p.pid)
      .sort();
    const scanned = [root, ...descendantsOf(root, listProcesses()).map((p) => p.pid)].sort();
    assert.deepEqual(tree, scanned);
    assert.equal(tree.length, 3);
  });

  test("terminateProcesses ends the whole tree", async () => {
    const root = await smallTree();
    const tree = processTree(root);
    await terminateProcesses(tree);
    await waitFor(() => tree.every((p) => !isAlive(p.pid)), "the tree to be gone");
  });

  test("a recorded process whose pid now belongs to another process is left alone", async () => {
    const root = await smallTree();
    const [info] = processTree(root);
    const recycled = { ...info!, start: "not-the-same-process" };
    assert.equal(isSameProcessAlive(recycled), false);
    await terminateProcesses([recycled], 50);
    assert.ok(isAlive(root), "the process was not signalled");
  });
});
