/**
 * A remote server's HTTP response with its body bounded by `maxMessageBytes`: the SDK reads a JSON response whole and
 * buffers an SSE event until its blank line, so without a bound one enormous message would fill pi's memory. The body
 * is counted as it streams (../message-limit.ts); once a message passes the limit the stream fails with
 * `MessageTooLargeError` and the response body is cancelled, which closes the HTTP exchange.
 */
import { MessageSizeCounter, MessageTooLargeError } from "../message-limit.ts";

/** Statuses a Response may not be built with a body for (fetch gives them none anyway). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** `text/event-stream; charset=utf-8` → `text/event-stream`. */
function mediaType(contentType: string | null): string {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase();
}

/**
 * `response` with a body that fails past `limit` bytes in one message (an SSE event, or any other body whole);
 * `tooLarge` is told once it does. A response without a body is returned as it is.
 */
export function boundedResponse(
  response: Response,
  limit: number,
  tooLarge: (error: MessageTooLargeError) => void,
): Response {
  const body = response.body;
  if (!body || NULL_BODY_STATUSES.has(response.status)) return response;
  const counter = new MessageSizeCounter(
    limit,
    mediaType(response.headers.get("content-type")) === "text/event-stream",
  );
  const counted = body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (counter.add(chunk)) return controller.enqueue(chunk);
        const error = new MessageTooLargeError(limit);
        // Erroring the transform cancels the server's body (and so its connection) with the same error.
        controller.error(error);
        tooLarge(error);
      },
    }),
  );
  const bounded = new Response(counted, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  // What a new Response cannot be given: where it came from (the SDK reads `url` to name an unfollowed redirect).
  for (const key of ["url", "redirected", "type"] as const)
    Object.defineProperty(bounded, key, { value: response[key] });
  return bounded;
}
