/**
 * A local server's stdout as JSON-RPC messages, one per line: the SDK's framing (its `deserializeMessage` parses each
 * line), with a limit on one line that is the bridge's own. The SDK's `ReadBuffer` bounds everything buffered at 10 MB
 * and copies all it holds on every chunk, so a long line costs time quadratic in its length; here a line costs time
 * linear in its length and is refused the moment it passes `maxLineBytes`, nothing of it kept.
 */
import { deserializeMessage, type JSONRPCMessage } from "@modelcontextprotocol/client";
import { MessageTooLargeError } from "../message-limit.ts";

const NEWLINE = 0x0a;

/** A stdout line that is not a JSON-RPC message (a server that logs there, or prints its error there), as the SDK put it. */
export class NonJsonLine extends Error {
  constructor(
    readonly line: string,
    cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

export class LineFraming {
  /** The pieces of the line not yet ended by a newline, and their total size. */
  private partial: Buffer[] = [];
  private partialBytes = 0;
  /** Lines ended, not yet read (as text: a line within one chunk is decoded straight from it). */
  private lines: string[] = [];
  private next = 0;

  constructor(private readonly maxLineBytes: number) {}

  /** Adds what the server wrote. Throws {@link MessageTooLargeError} (and forgets everything) once a line is too long. */
  append(chunk: Buffer): void {
    let start = 0;
    while (start <= chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      if (this.partialBytes + (end - start) > this.maxLineBytes) {
        this.clear();
        throw new MessageTooLargeError(this.maxLineBytes);
      }
      if (newline === -1) {
        if (end > start) this.partial.push(chunk.subarray(start, end));
        this.partialBytes += end - start;
        return;
      }
      if (this.partialBytes === 0) this.lines.push(chunk.toString("utf8", start, end));
      else {
        this.partial.push(chunk.subarray(start, end));
        this.lines.push(Buffer.concat(this.partial, this.partialBytes + end - start).toString("utf8"));
        this.partial = [];
        this.partialBytes = 0;
      }
      start = newline + 1;
    }
  }

  /** The output ended: a last line without a newline (an error printed before an exit) is a line too. */
  end(): void {
    if (this.partialBytes > 0) this.append(Buffer.from("\n"));
  }

  /** The next whole message, or null when no whole line is waiting. Throws {@link NonJsonLine} (the line is consumed). */
  readMessage(): JSONRPCMessage | null {
    const line = this.readLine();
    if (line === null) return null;
    try {
      // A byte order mark, which Windows tools (.NET, PowerShell) may write first, is no part of the JSON.
      return deserializeMessage(line.charCodeAt(0) === 0xfeff ? line.slice(1) : line);
    } catch (error) {
      throw new NonJsonLine(line, error);
    }
  }

  /** The next whole line (without its `\r\n` or `\n`), or null when none is waiting. */
  readLine(): string | null {
    if (this.next >= this.lines.length) {
      this.lines = [];
      this.next = 0;
      return null;
    }
    const line = this.lines[this.next++]!;
    return line.endsWith("\r") ? line.slice(0, -1) : line;
  }

  clear(): void {
    this.partial = [];
    this.partialBytes = 0;
    this.lines = [];
    this.next = 0;
  }
}

/**
 * Hands messages on in order, one drain at a time. After a notification it lets the microtask queue run: the SDK
 * dispatches notifications one microtask later but responses at once, so a progress notification and the result
 * arriving in one chunk would otherwise reach the SDK as result first, and the progress would be dropped as "unknown
 * token".
 */
export class InOrderDelivery {
  private draining = false;

  constructor(
    private readonly options: {
      /** The next message; undefined for a line handled otherwise (skipped); null when none waits, or reading ended. */
      next(): JSONRPCMessage | null | undefined;
      deliver(message: JSONRPCMessage): void;
      /** What `deliver` threw: reported, and the next message is handed on all the same. */
      onError(error: unknown): void;
    },
  ) {}

  /** Hands on everything that waits, unless a drain under way already does. */
  drain(): void {
    if (!this.draining) void this.run();
  }

  private async run(): Promise<void> {
    this.draining = true;
    try {
      for (;;) {
        const message = this.options.next();
        if (message === null) return;
        if (message === undefined) continue;
        try {
          this.options.deliver(message);
        } catch (error) {
          this.options.onError(error);
        }
        if (!("id" in message)) await Promise.resolve();
      }
    } finally {
      this.draining = false;
    }
  }
}
