/**
 * The SDK's own console notices (`[mcp-sdk] …`) go to the bridge's log, cut before what they quote, never to the
 * terminal; anything else written to the console is left alone. The routing is process-wide and installed once, so
 * what reaches the terminal is read where the console writes, below whatever the process installed before.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { LogFile, type LogRecord } from "../src/common/log-file.ts";
import { routeSdkConsole } from "../src/common/sdk-console.ts";

/**
 * What `write` sends to stdout and stderr, read off the streams while it runs (synchronously). The streams are left as
 * found, an inherited `write` inherited again: the bridge reads an own `write` on stdout as pi's print mode.
 */
function printedBy(write: () => void): string[] {
  const printed: string[] = [];
  const streams = [process.stdout, process.stderr];
  const own = streams.map((stream) => Object.getOwnPropertyDescriptor(stream, "write"));
  for (const stream of streams) {
    stream.write = ((chunk: string | Uint8Array) => printed.push(String(chunk)) > 0) as typeof stream.write;
  }
  try {
    write();
  } finally {
    streams.forEach((stream, i) => {
      if (own[i]) Object.defineProperty(stream, "write", own[i]);
      else delete (stream as Partial<NodeJS.WriteStream>).write;
    });
  }
  return printed;
}

test("an SDK notice quoting a secret reaches the log without it, and not the console", () => {
  const logged: LogRecord[] = [];
  routeSdkConsole({ log: (record) => logged.push(record) });

  const printed = printedBy(() => {
    console.warn(
      `[mcp-sdk] OAuth "invalid_client" — invalidating the stored client credentials and retrying authorization. Cause: "wrong secret 's3cret-9f2c'"`,
    );
    console.debug(
      "Client.listPrompts() called but server does not advertise prompts capability - returning empty list",
    );
    console.warn("another extension's warning");
  });

  assert.deepEqual(
    printed,
    ["another extension's warning\n"],
    "only the line that is not the SDK's reaches the console",
  );
  assert.equal(logged.length, 2);
  assert.equal(logged[0]!.event, "sdk.notice");
  assert.equal(
    logged[0]!.message,
    `[mcp-sdk] OAuth "invalid_client" — invalidating the stored client credentials and retrying authorization.`,
  );
  assert.doesNotMatch(JSON.stringify(logged), /s3cret/);
  assert.equal(logged[1]!.level, "debug");
});

test("two pi sessions in one process: the SDK's notices still reach the log of the one running once the other's ended", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "mcp-bridge-sdk-console-"));
  try {
    const running = new LogFile(path.join(dir, "running.log"));
    const ended = new LogFile(path.join(dir, "ended.log"));
    routeSdkConsole(running);
    routeSdkConsole(ended);
    await ended.close();
    console.warn("[mcp-sdk] a notice for the session still running");
    await running.close();
    assert.match(readFileSync(path.join(dir, "running.log"), "utf8"), /a notice for the session still running/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
