/**
 * Waits until a freshly spawned local server shows that it reads its input, before anything with a time limit of its
 * own is sent to it.
 *
 * Why: under `protocolVersion: "auto"` the bridge asks a server which revision it speaks (`server/discover`) and takes
 * silence for "an older server that ignores the question". How long silence must last to mean that cannot be judged
 * while the server is still starting: an `npx` server takes 5–90 s before it reads a single line, and a loaded machine
 * slows every start. So the question waits until the server has answered something. What is sent first is a `ping`:
 * the one request every revision allows before the handshake (2024-11-05 onward: "the client SHOULD NOT send
 * requests other than pings before the server has responded to the initialize request"). It carries the newest
 * revision's `_meta` envelope, as the probe does: a 2026-07-28 server on stdio takes the revision of the whole
 * connection from the first message it reads, and one without the envelope would make it speak 2025-11-25; an older
 * server answers a ping whatever metadata it carries. Any message from the server counts as its answer (a log line it
 * sends while starting, too). The wait itself is bounded only by the connect's own deadline (`initTimeout`): nothing
 * shorter decides whether a server connects.
 */
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";

/**
 * A string id, so a late answer can never be taken for one of the SDK's own requests (it numbers them from 0); one
 * arriving after the SDK took the transport over is an answer to nothing, which a stdio session ignores.
 */
const START_PING_ID = "mcp-bridge-started";

/** The server's process ended (or its output closed) before it answered anything. */
export class ClosedBeforeAnswer extends Error {
  constructor() {
    super("the server's output closed before it answered anything");
    this.name = "ClosedBeforeAnswer";
  }
}

/**
 * Starts `transport`, sends the ping (with `envelope` as its `_meta`), and resolves at the server's first message
 * (rejects with {@link ClosedBeforeAnswer} if it closes first). The transport is then handed back started and without
 * handlers.
 */
export async function untilServerAnswers(transport: Transport, envelope: Record<string, unknown>): Promise<void> {
  const answered = new Promise<void>((resolve, reject) => {
    transport.onmessage = () => resolve();
    transport.onclose = () => reject(new ClosedBeforeAnswer());
    // Lines that are not JSON-RPC are counted by the transport; they are not an answer.
    transport.onerror = () => undefined;
  });
  // A failed spawn rejects `start` and closes the transport as well: only one of the two is thrown.
  answered.catch(() => undefined);
  try {
    await transport.start();
    // A process that is already gone fails the write; its close follows and says so.
    const ping = { jsonrpc: "2.0", id: START_PING_ID, method: "ping", params: { _meta: envelope } } as JSONRPCMessage;
    await transport.send(ping).catch(() => answered);
    await answered;
  } finally {
    transport.onerror = transport.onclose = transport.onmessage = undefined;
  }
  // The SDK starts the transport it takes over; this one runs already, so that start does nothing, once.
  const start = transport.start;
  transport.start = async () => {
    transport.start = start;
  };
}
