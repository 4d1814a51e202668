/**
 * The MCP SDK writes some of its own notices straight to the console (`console.warn("[mcp-sdk] …")`, and
 * `console.debug` for a list a server does not offer). In pi those lines would land on the terminal over the TUI, and
 * some quote what an authorization server said, secrets it echoed back included. So the bridge takes them off the
 * console once, process-wide: each goes to the bridge's log instead (when one is set), cut before the quoted cause and
 * stripped of control characters; every other console line is left alone.
 */
import type { Logger } from "./log-file.ts";
import { shown } from "./terminal-text.ts";

const SDK_PREFIX = "[mcp-sdk]";
/** The SDK's debug notes for a list a server does not offer: the bridge checks capabilities itself. */
const SDK_DEBUG = /^Client\.\w+\(\) called but server does not advertise/;
/** Where the SDK puts what the other side said; the bridge reports that itself, redacted, where it matters. */
const CAUSE = /\s*Cause:[\s\S]*$/;

let sink: Logger | undefined;
let installed = false;

/** What an SDK notice may say in the bridge's log: its own words, not what it quotes. */
function sdkNoticeText(text: string): string {
  return shown(text.replace(CAUSE, ""), 500, "line");
}

function isSdkNotice(first: unknown): first is string {
  return typeof first === "string" && (first.startsWith(SDK_PREFIX) || SDK_DEBUG.test(first));
}

/** Takes the SDK's console notices off the console (idempotent); `logger`, when given, receives them from now on. */
export function routeSdkConsole(logger?: Logger): void {
  if (logger) sink = logger;
  if (installed) return;
  installed = true;
  for (const method of ["warn", "debug"] as const) {
    const original = console[method].bind(console);
    console[method] = (...args: unknown[]) => {
      if (!isSdkNotice(args[0])) return original(...args);
      sink?.log({ level: method === "warn" ? "warn" : "debug", event: "sdk.notice", message: sdkNoticeText(args[0]) });
    };
  }
}
