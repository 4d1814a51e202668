/**
 * Where text goes without a UI. pi's print and JSON modes point `process.stdout.write` at stderr, keeping stdout for
 * the model's answer (print mode) or its JSON event stream (`--mode json`). A command's own output is the answer of
 * `pi -p "/mcp list"`, so in print mode it is written to the real stdout, where `> out.txt` captures it; in JSON mode
 * stdout belongs to pi's event stream and it stays on stderr.
 */
import { writeSync } from "node:fs";

/** True when pi has taken stdout over: its guard replaces `write` on the stream itself instead of the prototype's. */
function stdoutTakenOver(): boolean {
  return Object.prototype.hasOwnProperty.call(process.stdout, "write");
}

/** pi's `--mode json` (its only spelling): stdout carries JSON lines that plain text would break. */
function jsonMode(argv: readonly string[] = process.argv): boolean {
  const at = argv.indexOf("--mode");
  return at >= 0 && argv[at + 1] === "json";
}

/** Writes a command's output: to the real stdout in print mode, else where `console.log` writes. */
export function printCommandOutput(text: string): void {
  if (stdoutTakenOver() && !jsonMode()) {
    try {
      writeSync(1, `${text}\n`);
      return;
    } catch {
      // stdout closed or not writable (EPIPE, EAGAIN on a full pipe): stderr still tells the user.
    }
  }
  console.log(text);
}
