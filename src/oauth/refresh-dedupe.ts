/**
 * One token refresh for many callers, which the SDK lacks. When several requests get a 401 at once, the SDK's `auth()`
 * runs once per request, each posting the same refresh token; an authorization server that rotates refresh tokens
 * accepts only the first and answers the others `invalid_grant`, which would throw away the new tokens and start a
 * sign-in. As a middleware on the fetch the SDK uses, the posts of one refresh token share one request and its answer
 * — within this process, and, through a lock file next to the tokens, across pi processes that share them: a process
 * that finds the stored refresh token already rotated by another answers with the stored tokens instead of asking. */
import type { Middleware } from "@modelcontextprotocol/client";
import { fileLock } from "../common/atomic-file.ts";
import { isObject } from "../common/values.ts";
import { within } from "../common/wait.ts";

/** How long a refresh's answer is reused for a late duplicate (one that was sent just after it finished). */
const REUSE_MS = 10_000;

interface Answer {
  status: number;
  statusText: string;
  headers: [string, string][];
  body: ArrayBuffer;
}

/** What other processes may have stored: the current tokens in the SDK's wire form, and a place to store new ones. */
export interface SharedTokens {
  /** Path of the lock file that serialises refreshes across processes. */
  lockPath: string;
  /** The stored tokens as a token endpoint would answer them (`refresh_token`, `access_token`, …), if any. */
  current(): Record<string, unknown> | undefined;
  /** Stores a token endpoint's successful answer before the lock is released, so the next process sees it. */
  save(answer: Record<string, unknown>): Promise<void>;
  /** How long the token endpoint has to answer: one that never does would hold every call waiting on the refresh. */
  timeoutMs: number;
}

function refreshTokenOf(init: RequestInit | undefined): string | undefined {
  if (!init || (init.method ?? "GET").toUpperCase() !== "POST") return undefined;
  const body = init.body;
  const params =
    body instanceof URLSearchParams ? body : typeof body === "string" ? new URLSearchParams(body) : undefined;
  if (params?.get("grant_type") !== "refresh_token") return undefined;
  return params.get("refresh_token") ?? undefined;
}

function jsonAnswer(body: unknown): Answer {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  return {
    status: 200,
    statusText: "OK",
    headers: [["content-type", "application/json"]],
    body: bytes.buffer.slice(0) as ArrayBuffer,
  };
}

/**
 * An authorization server's DPoP nonce challenge (RFC 9449 section 8): the SDK posts the same refresh token again at
 * once with the nonce, and that post must reach the server, not get this answer back.
 */
function isNonceChallenge(answer: Answer): boolean {
  if (answer.status !== 400) return false;
  try {
    return (JSON.parse(new TextDecoder().decode(answer.body)) as { error?: unknown }).error === "use_dpop_nonce";
  } catch {
    return false;
  }
}

/**
 * The middleware: posts of one refresh token share one request and its answer. Answers come back as the global
 * `Response` class, the only one the SDK reads a token endpoint's error from.
 */
export function withSharedRefresh(shared: SharedTokens): Middleware {
  const answers = new Map<string, Promise<Answer>>();
  return (next) => async (url, init) => {
    const token = refreshTokenOf(init);
    if (token === undefined) return next(url, init);
    let answer = answers.get(token);
    if (!answer) {
      answer = refresh(token, () => next(url, init), shared);
      answers.set(token, answer);
      const forget = () => setTimeout(() => answers.delete(token), REUSE_MS).unref();
      answer.then(
        (done) => (isNonceChallenge(done) ? answers.delete(token) : forget()),
        () => answers.delete(token),
      );
    }
    const { status, statusText, headers, body } = await answer;
    return new Response(body.slice(0), { status, statusText, headers });
  };
}

async function refresh(token: string, send: () => Promise<Response>, shared: SharedTokens): Promise<Answer> {
  const release = await fileLock(shared.lockPath);
  try {
    const stored = shared.current();
    // Another process refreshed while this one waited: its tokens are the answer (posting the old token would fail).
    if (stored && typeof stored.refresh_token === "string" && stored.refresh_token !== token) return jsonAnswer(stored);
    const timedOut = () => new Error(`the token endpoint did not answer within ${shared.timeoutMs / 1000} s`);
    const response = await within(send(), { ms: shared.timeoutMs, timedOut });
    const { status, statusText, headers } = response;
    const answer: Answer = { status, statusText, headers: [...headers.entries()], body: await response.arrayBuffer() };
    if (answer.status === 200) {
      try {
        const tokens = JSON.parse(withoutNulls(new TextDecoder().decode(answer.body))) as Record<string, unknown>;
        // No `scope`: the scope granted before (RFC 6749 section 5.1), which a step-up must ask for along with its own.
        tokens.scope ??= stored?.scope;
        answer.body = new TextEncoder().encode(JSON.stringify(tokens)).buffer as ArrayBuffer;
        await shared.save(tokens);
      } catch {
        // Not JSON: the SDK reports it; nothing to share.
      }
    }
    return answer;
  } finally {
    release();
  }
}

/**
 * The SDK reads a token endpoint's error only from the global `Response` class; undici's own is passed on as one. A
 * JSON answer (200) loses its `null` fields (see `withoutNulls`).
 */
export const withGlobalResponses: Middleware = (next) => async (url, init) => {
  const response: Pick<Response, "body" | "status" | "statusText" | "headers" | "text"> = await next(url, init);
  const { status, statusText, headers } = response;
  if (status === 200 && /json/i.test(headers.get("content-type") ?? ""))
    return new Response(withoutNulls(await response.text()), { status, statusText, headers });
  return response instanceof Response ? response : new Response(response.body, { status, statusText, headers });
};

/**
 * A JSON object's text without its `null` fields: servers send them for what they have no value for (`"scope": null`),
 * and the SDK's schemas take only absent.
 */
function withoutNulls(text: string): string {
  try {
    const body: unknown = JSON.parse(text);
    return isObject(body)
      ? JSON.stringify(Object.fromEntries(Object.entries(body).filter(([, v]) => v !== null)))
      : text;
  } catch {
    return text;
  }
}
