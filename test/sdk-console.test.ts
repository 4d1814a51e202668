/**
 * The SDK's own console notices (`[mcp-sdk] …`) go to the bridge's log, cut before what they quote, never to the
 * terminal; anything else written to the console is left alone. Its own process (node:test runs each file in one), so
 * the console it takes over is this file's.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { LogRecord } from "../src/common/log-file.ts";
import { routeSdkConsole } from "../src/common/sdk-console.ts";

test("an SDK notice quoting a secret reaches the log without it, and not the console", () => {
  const printed: unknown[][] = [];
  console.warn = (...args: unknown[]) => void printed.push(args);
  console.debug = (...args: unknown[]) => void printed.push(args);
  const logged: LogRecord[] = [];
  routeSdkConsole({ log: (record) => logged.push(record) });

  console.warn(
    `[mcp-sdk] OAuth "invalid_client" — invalidating the stored client credentials and retrying authorization. Cause: "wrong secret 's3cret-9f2c'"`,
  );
  console.debug("Client.listPrompts() called but server does not advertise prompts capability - returning empty list");
  console.warn("another extension's warning");

  assert.deepEqual(
    printed,
    [["another extension's warning"]],
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
