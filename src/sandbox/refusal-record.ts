/**
 * The refusals of one sandboxed server, across its starts: how many, and the last few (for `/mcp`), with the policy of
 * its last start (what `/mcp` says the sandbox allows, and what its stderr is read against). Bounded whatever the server
 * writes: a count and {@link RECENT_REFUSALS} sentences, each different.
 */
import type { SandboxPolicy } from "./sandbox-policy.ts";
import { refusalIn, refusalMessage, type SandboxRefusal, violationRefusal } from "./sandbox-refusal.ts";

const RECENT_REFUSALS = 5;

export class RefusalRecord {
  /** The rules of the server's last sandboxed start. */
  policy?: SandboxPolicy;
  count = 0;
  /** The last refusals' sentences, oldest first. */
  readonly recent: string[] = [];

  /** `report` logs each refusal as it is seen. */
  constructor(private readonly report: (refusal: SandboxRefusal, message: string) => void) {}

  started(policy: SandboxPolicy): void {
    this.policy = policy;
  }

  /** A line of the server's stderr (redacted): a refusal when it reports one. */
  stderrLine(line: string): void {
    const refusal = this.policy && refusalIn(line, this.policy);
    if (refusal) this.add(refusal);
  }

  /** A line the sandbox library recorded for this server's start (its proxy denied a host). */
  violation(line: string): void {
    this.add(violationRefusal(line));
  }

  private add(refusal: SandboxRefusal): void {
    const message = refusalMessage(refusal);
    this.count++;
    // One of the last few moves to the end, unwritten: a flood of it neither fills the logs nor hides the others.
    const known = this.recent.indexOf(message);
    if (known >= 0) return void this.recent.push(...this.recent.splice(known, 1));
    this.recent.push(message);
    if (this.recent.length > RECENT_REFUSALS) this.recent.shift();
    this.report(refusal, message);
  }
}
