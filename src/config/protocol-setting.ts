/**
 * A server's `protocolVersion`: which MCP revision the bridge speaks to it. `"auto"` (the default) tries the newest
 * and falls back to what the server answers; a revision by name speaks exactly that one (2026-07-28) or offers it and
 * accepts an older one the server counters with (2025-11-25 and older, the revisions of the `initialize` handshake).
 * Pure.
 */
import { quoteValue } from "../common/text.ts";

/** Every revision the bridge speaks, newest first. */
export const PROTOCOL_REVISIONS = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] as const;
type ProtocolRevision = (typeof PROTOCOL_REVISIONS)[number];
export type ProtocolSetting = "auto" | ProtocolRevision;

/**
 * The revisions without the `initialize` handshake (no session: version and capabilities ride in every request,
 * `server/discover` describes the server). Every one after 2025-11-25 is one of them.
 */
export function isStateless(revision: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(revision) && revision > "2025-11-25";
}

/** The revisions of the handshake era at `revision` and older, newest first: what a client pinned there accepts. */
export function handshakeRevisionsUpTo(revision: string): string[] {
  return PROTOCOL_REVISIONS.filter((r) => !isStateless(r) && r <= revision);
}

/** Reads `protocolVersion`; absent means "auto". */
export function protocolSetting(value: unknown, errors: string[]): ProtocolSetting {
  if (value === undefined || value === null || value === "auto") return "auto";
  if (typeof value === "string" && (PROTOCOL_REVISIONS as readonly string[]).includes(value))
    return value as ProtocolRevision;
  errors.push(
    `\`protocolVersion\` must be "auto" or one of ${PROTOCOL_REVISIONS.map((r) => `"${r}"`).join(", ")} (got ${quoteValue(value)})`,
  );
  return "auto";
}
