/**
 * How the bridge tells the rest of pi what happened: an event on pi's shared bus (`mcp.connected`,
 * `tools.registered`, …). The channels and payloads are a public interface, documented in docs/events-and-logs.md.
 */
export type EventSink = (channel: string, payload: Record<string, unknown>) => void;
