/**
 * How a session asks the SDK's client for a protocol revision, from the server's `protocolVersion` setting and what
 * worked last time (remembered with its tools in the tool cache). Pure.
 *
 * - `"auto"` with nothing remembered probes with `server/discover` and falls back to `initialize` on a server's
 *   answer that it does not know the method (or, on stdio, its silence within the probe time).
 * - `"auto"` remembering a stateless revision asks for exactly that one again (its `server/discover` is the
 *   handshake, so nothing is spent on probing); remembering a handshake revision skips the probe.
 * - A revision by name: the stateless one exactly; a handshake one offered, older ones the server counters with
 *   accepted.
 */
import type { ConnectOptions, VersionNegotiationOptions } from "@modelcontextprotocol/client";
import { handshakeRevisionsUpTo, isStateless, type ProtocolSetting } from "../config/protocol-setting.ts";

/** At most this long for a local server to answer the probe before it is taken for one that only knows `initialize`. */
export const STDIO_PROBE_TIMEOUT_MS = 3000;

export interface Negotiation {
  versionNegotiation: VersionNegotiationOptions;
  /** The handshake revisions offered and accepted, newest first; the SDK's own list when absent. */
  supportedProtocolVersions?: string[];
  prior?: ConnectOptions["prior"];
}

/** `remembered` is the revision the server spoke last time, `"legacy"` when it is only known not to be stateless. */
export function negotiationFor(setting: ProtocolSetting, remembered: string | undefined, local: boolean): Negotiation {
  if (setting !== "auto") {
    if (isStateless(setting)) return { versionNegotiation: { mode: { pin: setting } } };
    return { versionNegotiation: { mode: "legacy" }, supportedProtocolVersions: handshakeRevisionsUpTo(setting) };
  }
  if (remembered !== undefined && isStateless(remembered)) return { versionNegotiation: { mode: { pin: remembered } } };
  const auto: VersionNegotiationOptions = { mode: "auto", ...(local ? { probe: { timeoutMs: STDIO_PROBE_TIMEOUT_MS } } : {}) };
  if (remembered !== undefined) return { versionNegotiation: auto, prior: { kind: "legacy" } };
  return { versionNegotiation: auto };
}
