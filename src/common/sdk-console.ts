/**
 * The MCP SDK writes some of its own notices straight to the console (`console.warn("[mcp-sdk] …")`, and
 * `console.debug` for a list a server does not offer). In pi those lines would land on the terminal over the TUI, and
 * some quote what an authorization server said, secrets it echoed back included. So the bridge takes them off the
 * console once per process (a reload's fresh copy of this module shares the wrapper): to the bridge's log instead,
 * cut before the quoted cause and stripped of control characters; every other console line is left alone.
 */
import type { Logger } from "./log-file.ts";
import { shown } from "./terminal-text.ts";

/** The SDK's debug notes for a list a server does not offer: the bridge checks capabilities itself. */
const SDK_DEBUG = /^Client\.\w+\(\) called but server does not advertise/;
/** Where the SDK puts what the other side said; the bridge reports that itself, redacted, where it matters. */
const CAUSE = /\s*Cause:[\s\S]*$/;

const ROUTING = Symbol.for("pi-mcp-bridge.sdk-console");
const processWide = globalThis as typeof globalThis & { [ROUTING]?: { sinks: Logger[] } };

/** What an SDK notice may say in the bridge's log: its own words, not what it quotes. */
function sdkNoticeText(text: string): string {
  return shown(text.replace(CAUSE, ""), 500, "line");
}

function isSdkNotice(first: unknown): first is string {
  return typeof first === "string" && (first.startsWith("[mcp-sdk]") || SDK_DEBUG.test(first));
}

/** Takes the SDK's console notices off the console (idempotent); `logger`, when given, receives them from now on. */
export function routeSdkConsole(logger?: Logger): void {
  const installed = processWide[ROUTING];
  const routing = (processWide[ROUTING] ??= { sinks: [] });
  // Each session's log (an SDK host runs several at once): the notices go to the newest one still open.
  if (logger) routing.sinks = [...routing.sinks.filter((sink) => !sink.closed), logger];
  if (installed) return;
  for (const method of ["warn", "debug"] as const) {
    const original = console[method].bind(console);
    console[method] = (...args: unknown[]) => {
      if (!isSdkNotice(args[0])) return original(...args);
      routing.sinks
        .findLast((sink) => !sink.closed)
        ?.log({ level: method, event: "sdk.notice", message: sdkNoticeText(args[0]) });
    };
  }
}
