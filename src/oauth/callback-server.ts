/**
 * Kept here: the SDK leaves receiving the redirect to the client, and has no loopback server.
 *
 * The loopback HTTP server that receives the OAuth authorization redirect (authorization code flow with PKCE).
 *
 * It listens on 127.0.0.1 only, and only while one sign-in waits: the first redirect that carries the expected
 * `state` ends the wait, with its code or with the error the authorization server sent, and the server then closes
 * itself. A redirect with a wrong or missing `state` is answered and otherwise ignored, so a stray or forged request
 * can neither cancel nor complete a real sign-in. Every page is a constant string: nothing from the request is
 * reflected into HTML, and the pages load nothing. The authorization code is a credential, so it is never put into
 * an error message.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { DEFAULT_OAUTH_CALLBACK_PORT } from "../config/defaults.ts";
import { MAX_TIMER_MS } from "../config/validate/fields.ts";
import { MAX_PORT, type RedirectPlan, redirectPlan } from "./redirect.ts";

export { CALLBACK_PATH, CALLBACK_PORT_TRIES } from "./redirect.ts";
export const DEFAULT_SIGN_IN_TIMEOUT_MS = 5 * 60_000;

const ORIGIN = "http://127.0.0.1";
const MAX_DESCRIPTION_CHARS = 200;
const MAX_ERROR_CODE_CHARS = 100;
/** Redirects held while no state is known yet (see `handle`); more than this are refused. */
const MAX_PARKED = 8;

export type OAuthCallbackReason =
  "state_mismatch" | "denied" | "timeout" | "cancelled" | "ports_in_use" | "invalid_redirect";

export class OAuthCallbackError extends Error {
  constructor(
    readonly reason: OAuthCallbackReason,
    message: string,
  ) {
    super(message);
    this.name = "OAuthCallbackError";
  }
}

export interface CallbackServerOptions {
  /** First port to try; the next `CALLBACK_PORT_TRIES - 1` follow when it is taken. 0 lets the system choose. */
  port?: number;
  /** Where to listen and which redirect URI that makes (a configured `callbackUrl`); by default from `port`. */
  redirect?: RedirectPlan;
  /** How long the sign-in may take, counted from `start()`, so an abandoned sign-in does not keep a port open. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * What a successful redirect carries: the authorization code, and the authorization server's `iss` when it sends one
 * (RFC 9207), which is checked against the server the sign-in went to before the code is redeemed.
 */
export interface AuthorizationGrant {
  code: string;
  iss?: string;
}

export type ParsedRedirect = AuthorizationGrant | { error: string; description?: string };

function page(title: string, text: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><p>${text}</p></body></html>`;
}

const SUCCESS_PAGE = page("Signed in", "Signed in. You can close this tab and return to pi.");
const DENIED_PAGE = page("Sign-in failed", "Sign-in failed: access was not granted. Return to pi for details.");
const INVALID_PAGE = page(
  "Sign-in failed",
  "This is not a valid response for the sign-in pi is waiting for. Return to pi and try again.",
);
const NOT_WAITING_PAGE = page("Sign-in over", "This sign-in is no longer waiting. Return to pi.");
const NOT_FOUND_PAGE = page("Not found", "Not found.");

const PAGE_HEADERS = {
  "Content-Type": "text/html; charset=utf-8",
  "Cache-Control": "no-store",
  "X-Content-Type-Options": "nosniff",
  "Content-Security-Policy": "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  // The address bar holds the code; the pages load nothing, but no referrer should ever carry it.
  "Referrer-Policy": "no-referrer",
  // One request per connection: nothing idles in a keep-alive pool when the server closes.
  Connection: "close",
} as const;

function respond(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { ...PAGE_HEADERS, "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

/** Format characters (bidi overrides, zero-width) can hide or reorder text; control characters can rewrite a line. */
function clean(text: string, maxChars: number): string {
  const chars = Array.from(
    text
      .replace(/\p{Cf}/gu, "")
      .replace(/[\p{Cc}\s]+/gu, " ")
      .trim(),
  );
  return chars.length > maxChars ? chars.slice(0, maxChars - 1).join("") + "…" : chars.join("");
}

/** Constant-time comparison (over digests, which have equal length), so response timing reveals no prefix. */
function sameState(actual: string, expected: string): boolean {
  const digest = (value: string): Buffer => createHash("sha256").update(value).digest();
  return expected !== "" && timingSafeEqual(digest(actual), digest(expected));
}

function invalidRedirect(): OAuthCallbackError {
  // The input is not quoted: a pasted URL may carry the code.
  return new OAuthCallbackError(
    "invalid_redirect",
    "Not a sign-in redirect: it carries neither an authorization code nor an error.",
  );
}

/** The query of a full URL, of a URL without its scheme, or of a bare `?code=…&state=…`. */
function redirectParams(url: string | URL): URLSearchParams {
  if (url instanceof URL) return url.searchParams;
  const text = url.trim();
  if (text.startsWith("?") || /^[^\s/:?#]+=/.test(text)) return new URLSearchParams(text);
  for (const candidate of [text, `http://${text}`]) if (URL.canParse(candidate)) return new URL(candidate).searchParams;
  throw invalidRedirect();
}

/**
 * Pure: the outcome a redirect carries. Throws `invalid_redirect` when it has neither `code` nor `error`, and
 * `state_mismatch` when its `state` is missing or differs from `expectedState` (an empty expected state never
 * matches). An `error` wins over a `code`; the error code and description are cleaned of control characters and cut.
 */
export function parseRedirect(url: string | URL, expectedState: string): ParsedRedirect {
  const params = redirectParams(url);
  const code = params.get("code");
  const error = params.get("error");
  if (!code && !error) throw invalidRedirect();
  const state = params.get("state");
  if (state === null)
    throw new OAuthCallbackError(
      "state_mismatch",
      "The sign-in redirect carries no state, so it cannot be matched to this sign-in.",
    );
  if (!sameState(state, expectedState))
    throw new OAuthCallbackError(
      "state_mismatch",
      "The sign-in redirect's state does not match this sign-in (it is stale, or belongs to another one).",
    );
  if (error) {
    const description = clean(params.get("error_description") ?? "", MAX_DESCRIPTION_CHARS);
    const errorCode = clean(error, MAX_ERROR_CODE_CHARS) || "unknown_error";
    return description ? { error: errorCode, description } : { error: errorCode };
  }
  const iss = params.get("iss");
  return iss === null ? { code: code! } : { code: code!, iss };
}

type Outcome = { grant: AuthorizationGrant } | { error: OAuthCallbackError };

function outcomeOf(redirect: ParsedRedirect): Outcome {
  if ("code" in redirect) return { grant: redirect };
  const detail = redirect.description ? `: ${redirect.description}` : "";
  return {
    error: new OAuthCallbackError(
      "denied",
      `The authorization server refused the sign-in (${redirect.error})${detail}`,
    ),
  };
}

function cancelled(): OAuthCallbackError {
  return new OAuthCallbackError("cancelled", "The sign-in was cancelled.");
}

function describeDuration(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}

/** The request target, parsed only in origin form (`/path?query`); the Host header is neither trusted nor needed. */
function requestUrl(req: IncomingMessage): URL | undefined {
  const target = req.url;
  if (target === undefined || !target.startsWith("/") || !URL.canParse(ORIGIN + target)) return undefined;
  return new URL(ORIGIN + target);
}

export class CallbackServer {
  readonly redirectUrl: string;
  private expectedState: string | undefined;
  /** Decided when a redirect is accepted; reported (`delivered`) once its page has gone out. */
  private outcome: Outcome | undefined;
  private delivered = false;
  private shutDown = false;
  private readonly parked: Array<{ url: URL; res: ServerResponse }> = [];
  private readonly result: Promise<AuthorizationGrant>;
  private resolveResult: (grant: AuthorizationGrant) => void = () => {};
  private rejectResult: (error: OAuthCallbackError) => void = () => {};
  /** Settles once the server has stopped: the sign-in is over, one way or another. */
  readonly closed: Promise<void>;
  private readonly timer: NodeJS.Timeout;
  private readonly onAbort = (): void => this.finish({ error: cancelled() });

  /**
   * Listens on 127.0.0.1 (or where `redirect` says), on `port` or, when it is taken, one of the next ports
   * (`CALLBACK_PORT_TRIES` in all).
   */
  static async start(options: CallbackServerOptions = {}): Promise<CallbackServer> {
    const first = options.port ?? DEFAULT_OAUTH_CALLBACK_PORT;
    if (!options.redirect && (!Number.isInteger(first) || first < 0 || first > MAX_PORT))
      throw new RangeError(`Invalid callback port: ${first}`);
    const plan = options.redirect ?? redirectPlan({ callbackPort: first });
    const requested = options.timeoutMs ?? DEFAULT_SIGN_IN_TIMEOUT_MS;
    if (!(requested > 0)) throw new RangeError(`Invalid sign-in timeout: ${requested}`);
    const timeoutMs = Math.min(MAX_TIMER_MS, Math.ceil(requested));
    const { signal } = options;
    for (const port of plan.ports) {
      if (signal?.aborted) throw cancelled();
      const server = createServer();
      try {
        await once(server.listen({ port, host: plan.host, exclusive: true }), "listening");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") continue;
        throw error;
      }
      if (signal?.aborted) {
        server.close();
        throw cancelled();
      }
      const address = server.address();
      const listening = typeof address === "object" && address !== null ? address.port : port;
      return new CallbackServer(server, listening, { plan, timeoutMs, signal });
    }
    const [low, high] = [plan.ports[0], plan.ports.at(-1)];
    const range = low === high ? `port ${low}` : `ports ${low}-${high}`;
    throw new OAuthCallbackError(
      "ports_in_use",
      `Cannot receive the sign-in redirect: ${range} on ${plan.host} ${low === high ? "is" : "are all"} in use.`,
    );
  }

  private readonly path: string;
  private readonly signal: AbortSignal | undefined;

  private constructor(
    private readonly server: Server,
    readonly port: number,
    { plan, timeoutMs, signal }: { plan: RedirectPlan; timeoutMs: number; signal: AbortSignal | undefined },
  ) {
    this.signal = signal;
    this.redirectUrl = plan.uri(port);
    this.path = plan.path;
    this.result = new Promise<AuthorizationGrant>((resolve, reject) => {
      this.resolveResult = resolve;
      this.rejectResult = reject;
    });
    // Nobody may be waiting yet, or ever: the outcome is kept for waitForGrant(), not reported as unhandled.
    this.result.catch(() => {});
    this.closed = new Promise((resolve) => server.once("close", () => resolve()));
    server.on("request", (req: IncomingMessage, res: ServerResponse) => this.handle(req, res));
    // Once listening, errors come from accepting connections (EMFILE and the like): transient, and the wait has a timeout.
    server.on("error", () => {});
    this.timer = setTimeout(() => {
      this.finish({
        error: new OAuthCallbackError("timeout", `No sign-in redirect arrived within ${describeDuration(timeoutMs)}.`),
      });
    }, timeoutMs);
    signal?.addEventListener("abort", this.onAbort, { once: true });
  }

  /**
   * Resolves with the code (and `iss`) of the first redirect whose `state` equals `expectedState`; rejects with "denied"
   * for an error redirect, "timeout", or "cancelled". One server serves one sign-in: another state is a programming
   * error.
   */
  waitForGrant(expectedState: string): Promise<AuthorizationGrant> {
    if (expectedState === "")
      throw new TypeError("waiting for a sign-in needs the state sent with the authorization request");
    if (this.expectedState === undefined) {
      this.expectedState = expectedState;
      for (const { url, res } of this.parked.splice(0)) this.answer(url, res);
    } else if (this.expectedState !== expectedState) {
      throw new Error("This callback server is already waiting for another sign-in");
    }
    return this.result;
  }

  /**
   * For the headless path: the user pastes the URL their browser was sent to. Same checks as a real redirect, and it
   * settles `waitForGrant()` the same way. Throws `invalid_redirect` or `state_mismatch` for a URL that cannot be
   * used; does nothing once the wait has settled.
   */
  submitRedirectUrl(url: string): void {
    if (this.outcome !== undefined) return;
    this.finish(outcomeOf(parseRedirect(url, this.expectedState ?? "")));
  }

  /** Stops listening and drops open connections; a wait that has not settled rejects with "cancelled". Idempotent. */
  close(): Promise<void> {
    this.finish({ error: cancelled() });
    this.shutdown();
    return this.closed;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = requestUrl(req);
    if (req.method !== "GET" || url?.pathname !== this.path) return respond(res, 404, NOT_FOUND_PAGE);
    if (this.expectedState === undefined && this.outcome === undefined) {
      // The browser can come back before the caller has called waitForGrant() (a provider that remembers consent
      // redirects at once): hold the request until the state is known rather than fail a good sign-in.
      if (this.parked.length >= MAX_PARKED) return respond(res, 400, INVALID_PAGE);
      const entry = { url, res };
      this.parked.push(entry);
      res.once("close", () => {
        const index = this.parked.indexOf(entry);
        if (index >= 0) this.parked.splice(index, 1);
      });
      return;
    }
    this.answer(url, res);
  }

  private answer(url: URL, res: ServerResponse): void {
    if (this.outcome !== undefined) return respond(res, 400, NOT_WAITING_PAGE);
    let redirect: ParsedRedirect;
    try {
      redirect = parseRedirect(url, this.expectedState ?? "");
    } catch {
      // Wrong or missing state, or not a redirect at all: answered, but the real sign-in keeps waiting.
      return respond(res, 400, INVALID_PAGE);
    }
    this.decide(outcomeOf(redirect));
    respond(res, 200, "code" in redirect ? SUCCESS_PAGE : DENIED_PAGE);
    // Reported once the page is out, so a caller that closes the server at once does not cut the page off.
    res.once("close", () => this.deliver());
  }

  private finish(outcome: Outcome): void {
    if (this.decide(outcome)) this.deliver();
  }

  /** Fixes the outcome unless one is fixed already; true when this call fixed it. */
  private decide(outcome: Outcome): boolean {
    if (this.outcome !== undefined) return false;
    this.outcome = outcome;
    clearTimeout(this.timer);
    this.signal?.removeEventListener("abort", this.onAbort);
    return true;
  }

  private deliver(): void {
    if (this.delivered || this.outcome === undefined) return;
    this.delivered = true;
    if ("grant" in this.outcome) this.resolveResult(this.outcome.grant);
    else this.rejectResult(this.outcome.error);
    // The server exists for this one sign-in.
    this.shutdown();
  }

  private shutdown(): void {
    if (this.shutDown) return;
    this.shutDown = true;
    this.parked.length = 0;
    this.server.close();
    // Parked requests and half-open sockets would otherwise hold close() until they time out.
    this.server.closeAllConnections();
  }
}
