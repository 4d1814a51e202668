/**
 * One token refresh for many callers. When several requests get a 401 at once, the SDK's `auth()` runs once per
 * request, each posting the same refresh token; an authorization server that rotates refresh tokens accepts only the
 * first and answers the others `invalid_grant`, which would throw away the new tokens and start a sign-in. Wrapping
 * the fetch the SDK uses, the posts of one refresh token share one request and its answer.
 */
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";

/** How long a refresh's answer is reused for a late duplicate (one that was sent just after it finished). */
const REUSE_MS = 10_000;

interface Answer {
  status: number;
  statusText: string;
  headers: [string, string][];
  body: ArrayBuffer;
}

function refreshTokenOf(init: RequestInit | undefined): string | undefined {
  if (!init || (init.method ?? "GET").toUpperCase() !== "POST") return undefined;
  const body = init.body;
  const params = body instanceof URLSearchParams ? body : typeof body === "string" ? new URLSearchParams(body) : undefined;
  if (params?.get("grant_type") !== "refresh_token") return undefined;
  return params.get("refresh_token") ?? undefined;
}

export class RefreshDeduper {
  private readonly answers = new Map<string, Promise<Answer>>();

  wrap(fetch: FetchLike): FetchLike {
    return async (url, init) => {
      const token = refreshTokenOf(init);
      if (token === undefined) return fetch(url, init);
      let answer = this.answers.get(token);
      if (!answer) {
        answer = (async () => {
          const response = await fetch(url, init);
          return {
            status: response.status,
            statusText: response.statusText,
            headers: [...response.headers.entries()],
            body: await response.arrayBuffer(),
          };
        })();
        this.answers.set(token, answer);
        const forget = () => {
          const timer = setTimeout(() => this.answers.delete(token), REUSE_MS);
          timer.unref();
        };
        answer.then(forget, () => this.answers.delete(token));
      }
      const { status, statusText, headers, body } = await answer;
      return new Response(body.slice(0), { status, statusText, headers });
    };
  }
}
