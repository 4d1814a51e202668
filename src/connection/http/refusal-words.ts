/**
 * What a remote server said when it refused a request's credentials (401, 403): "Invalid or missing API key", "token
 * expired". The SDK keeps only the status, and an error that says what the server said is the quickest to act on.
 * Read from `WWW-Authenticate`'s `error_description` (RFC 6750), else from the body: a JSON error's message, or a short
 * line of text.
 */
import { extractWWWAuthenticateParams, type Middleware } from "@modelcontextprotocol/client";
import { cutBetweenWords } from "../../common/text.ts";
import { isObject } from "../../common/values.ts";

/** What is kept of a refusal's body (bounded as every response is): its words are at the start. */
const MAX_BODY_CHARS = 4096;
/** The words kept: a sentence or two. */
const MAX_WORDS_CHARS = 200;

/**
 * The middleware: `heard` gets the words of each refusal (undefined when it said none) and undefined after a request
 * that was not refused, so what it holds is about the latest exchange.
 */
export function noteRefusals(heard: (words: string | undefined) => void): Middleware {
  let holding = false;
  return (next) => async (url, init) => {
    const response = await next(url, init);
    if (response.status !== 401 && response.status !== 403) {
      if (holding && response.ok) {
        holding = false;
        heard(undefined);
      }
      return response;
    }
    const body = (await response.text().catch(() => "")).slice(0, MAX_BODY_CHARS);
    const said = extractWWWAuthenticateParams(response).errorDescription ?? wordsIn(body);
    // One word (`unauthorized`, `invalid_token`) says no more than the status does.
    const words = said?.includes(" ") ? cutBetweenWords(said.replace(/\s+/g, " ").trim(), MAX_WORDS_CHARS) : undefined;
    holding = words !== undefined;
    heard(words);
    const { status, statusText, headers } = response;
    return new Response(body, { status, statusText, headers });
  };
}

/** A refusal body's message: the first of `error_description`, `error`(`.message`), `message`, `detail` with words. */
function wordsIn(body: string): string | undefined {
  const text = body.trim();
  if (!text) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // A short line of text is the message; a page (an HTML sign-in page, a proxy's error page) is not.
    return text.length <= MAX_WORDS_CHARS && !text.includes("\n") && !text.startsWith("<") ? text : undefined;
  }
  if (!isObject(parsed)) return undefined;
  const error = parsed.error;
  const said = [parsed.error_description, isObject(error) ? error.message : error, parsed.message, parsed.detail];
  return said.find((value): value is string => typeof value === "string" && /\S\s+\S/.test(value));
}
