/**
 * How a session asks the SDK's client for a protocol revision, from the server's `protocolVersion` setting and what
 * worked last time (remembered with its tools in the tool cache). Pure.
 *
 * - `"auto"` with nothing remembered probes with `server/discover` and falls back to `initialize` on a server's
 *   answer that it does not know the method (or, on stdio, its silence for a while after it has answered a ping).
 * - `"auto"` remembering a stateless revision asks for exactly that one again (its `server/discover` is the
 *   handshake, so nothing is spent on probing); remembering a handshake revision skips the probe.
 * - A revision by name: the stateless one exactly; a handshake one offered, older ones the server counters with
 *   accepted.
 */
import type { ConnectOptions, VersionNegotiationOptions } from "@modelcontextprotocol/client";
import { handshakeRevisionsUpTo, isStateless, type ProtocolSetting } from "../config/protocol-setting.ts";

/**
 * How long a local server that has already answered (see ./local/server-started.ts) may stay silent on the revision probe
 * before it is taken for one that ignores methods it does not know, and asked with `initialize` on the same pipe.
 * This decides only which revision is spoken, never whether the server connects: every server that answers
 * `initialize` connects after it, however long it took to start.
 */
export const PROBE_SILENCE_MS = 3000;

export interface Negotiation {
  versionNegotiation: VersionNegotiationOptions;
  /** The handshake revisions offered and accepted, newest first; the SDK's own list when absent. */
  supportedProtocolVersions?: string[];
  prior?: ConnectOptions["prior"];
  /**
   * Wait for the server's first answer before the probe is sent: its silence is judged by a short window, which
   * must not run while the server is still starting.
   */
  awaitStart: boolean;
}

/**
 * `remembered` is the revision the server spoke last time, `"legacy"` when it is only known not to be stateless;
 * `remainingMs` is the time the connect has left.
 */
export function negotiationFor(
  setting: ProtocolSetting,
  remembered: string | undefined,
  local: boolean,
  remainingMs: number,
): Negotiation {
  const pin = setting === "auto" ? remembered : setting;
  if (pin !== undefined && isStateless(pin)) return { versionNegotiation: { mode: { pin } }, awaitStart: false };
  if (setting !== "auto")
    return {
      versionNegotiation: { mode: "legacy" },
      supportedProtocolVersions: handshakeRevisionsUpTo(setting),
      awaitStart: false,
    };
  // A remote server is running already, but its silence may be an outage as well as an older server ignoring the
  // question: the probe gets half the time, and `initialize` the rest (see ./session-opener.ts).
  const timeoutMs = local ? PROBE_SILENCE_MS : Math.max(1, Math.floor(remainingMs / 2));
  const auto: VersionNegotiationOptions = { mode: "auto", probe: { timeoutMs } };
  if (remembered !== undefined) return { versionNegotiation: auto, prior: { kind: "legacy" }, awaitStart: false };
  return { versionNegotiation: auto, awaitStart: local };
}
