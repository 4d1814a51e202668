/**
 * A remote session's header values that come from `!command`s, kept fresh while the session lives: the commands run
 * again when the server refuses the values (HTTP 401, or 403 with `invalid_token`), once for all the requests refused
 * together, and before a request once the values are older than the server's `headersTtl`. The new values go into
 * the headers object the session's transport reads for every request it sends, so requests in flight on the session
 * are not disturbed and no new session is needed.
 */
import type { Middleware } from "@modelcontextprotocol/client";
import { httpStatusOf, kindOf } from "../common/error-kinds.ts";
import { isCommandValue } from "../config/command-value.ts";
import type { ServerConfig } from "../config/types.ts";

/** The header names of `config` whose values the bridge can read again: its `!command` values. */
export function rereadableHeaders(config: ServerConfig): string[] {
  return Object.keys(config.headers).filter((name) => isCommandValue(config.headers[name]!));
}

/** A refusal of the credentials a request carried (401); a 403 refuses the request, whoever sent it. */
export function credentialsRefused(error: unknown): boolean {
  return kindOf(error) === "auth" && httpStatusOf(error) !== 403;
}

/**
 * RFC 6750 has a server refuse an expired or revoked token with 401; some answer 403 with `invalid_token` in
 * `WWW-Authenticate` instead. For a session without OAuth that 403 is taken for the 401 it means, so the values are
 * read again.
 */
export const invalidTokenAs401: Middleware = (next) => async (url, init) => {
  const response = await next(url, init);
  if (response.status !== 403 || !/invalid_token/.test(response.headers.get("www-authenticate") ?? "")) return response;
  return new Response(response.body, { status: 401, statusText: "Unauthorized", headers: response.headers });
};

export class FreshHeaders {
  /** Counts the re-reads: a request refused with an older count was refused for values replaced since. */
  generation = 0;
  private readAt = Date.now();
  private rereading?: Promise<void>;

  constructor(
    private readonly headers: Record<string, string>,
    private readonly ttlMs: number | undefined,
    /** Runs the commands again and resolves the headers anew (their secrets told to the redactor). */
    private readonly reread: () => Promise<Record<string, string>>,
  ) {}

  /** On every request, so only a compare: whether the values are older than `headersTtl` allows. */
  expired(now: number): boolean {
    return this.ttlMs !== undefined && now - this.readAt >= this.ttlMs;
  }

  /** Reads the values again, unless that was done since `seen` (the count a refused request was sent with); shared while under way. */
  refresh(seen: number): Promise<void> {
    if (seen !== this.generation) return Promise.resolve();
    return (this.rereading ??= this.readAgain().finally(() => (this.rereading = undefined)));
  }

  private async readAgain(): Promise<void> {
    Object.assign(this.headers, await this.reread());
    this.readAt = Date.now();
    this.generation++;
  }
}
