/**
 * The bound on one message from a server (`maxMessageBytes`): its error, and the byte counter a remote server's
 * response bodies go through. A local server's lines are bounded by ./stdio-framing.ts.
 */
import { formatBytes } from "../common/text.ts";

const LF = 0x0a;
const CR = 0x0d;

/** A server sent one message longer than its limit; what was read of it is dropped and its stream closed. */
export class MessageTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`a message from the server was over the ${formatBytes(limit)} limit (\`maxMessageBytes\`)`);
    this.name = "MessageTooLargeError";
  }
}

/**
 * Counts the bytes of the message being received. A JSON body is one message, counted whole. An SSE stream is a
 * sequence of events, each ended by a blank line (two line endings in a row, a line ending being CRLF, LF or CR), so
 * only the bytes since the last event boundary count: a long stream of small events is fine, one endless event is
 * not. Each chunk costs time linear in its length; nothing of it is kept.
 */
export class MessageSizeCounter {
  /** Bytes of the message under way. */
  private size = 0;
  /** SSE: the last byte ended a line, so one more line ending is a blank line. */
  private atLineStart = true;
  /** SSE: the last byte was CR, so an LF right after it belongs to the same line ending. */
  private afterCr = false;

  constructor(
    private readonly limit: number,
    private readonly eventStream: boolean,
  ) {}

  /** Adds a chunk; false once the message under way (or one ended in this chunk) is over the limit. */
  add(chunk: Uint8Array): boolean {
    if (!this.eventStream) {
      this.size += chunk.length;
      return this.size <= this.limit;
    }
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (byte === LF && this.afterCr) {
        this.afterCr = false;
        continue;
      }
      this.afterCr = byte === CR;
      if (byte !== LF && byte !== CR) {
        this.atLineStart = false;
        continue;
      }
      if (!this.atLineStart) {
        this.atLineStart = true;
        continue;
      }
      // A blank line: the event ends here, this byte with it.
      if (this.size + (i + 1 - start) > this.limit) return false;
      this.size = 0;
      start = i + 1;
    }
    this.size += chunk.length - start;
    return this.size <= this.limit;
  }
}
