/**
 * A remote server's HTTP responses with their bodies bounded by `maxMessageBytes`: the SDK reads a JSON response whole
 * and buffers an SSE event until its blank line, so without a bound one enormous message would fill pi's memory. A
 * body is counted (../message-limit.ts) as its bytes arrive from the socket, in a handler around undici's own
 * (`bodyBound`): once a message passes the limit the exchange is aborted with `MessageTooLargeError`. Counting there
 * costs nothing per response but the count; a stream of its own around every body cost a burst of calls a fifth of its
 * throughput. A body with a content coding (gzip, say) arrives smaller than it is read, so it is counted decoded, as
 * the SDK reads it (`boundedResponse`).
 */
import type { Dispatcher } from "undici";
import { mediaType } from "../../common/text.ts";
import { MessageSizeCounter, MessageTooLargeError } from "../message-limit.ts";

type TooLarge = (error: MessageTooLargeError) => void;

/** Statuses a Response may not be built with a body for (fetch gives them none anyway). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** Whether a `Content-Type` is an SSE stream (`text/event-stream; charset=utf-8` is). */
function isEventStream(contentType: string | null | undefined): boolean {
  return mediaType(contentType ?? "") === "text/event-stream";
}

/** Whether a body with this `Content-Encoding` arrives as it is read (none, or `identity`). */
export function unencoded(contentEncoding: string | null | undefined): boolean {
  return !contentEncoding || contentEncoding.trim().toLowerCase() === "identity";
}

/**
 * An undici interceptor that bounds every unencoded response body at `limit` bytes a message. `tooLargeHere` is asked,
 * as a request is dispatched (in its caller's async context), who is told of a message over the limit on it, and
 * `startingHere` what to call as the request starts on a connection (./unread-request.ts).
 */
export function bodyBound(limit: number, tooLargeHere: () => TooLarge, startingHere: () => () => void) {
  const bound: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (options, handler) =>
    dispatch(options, new BoundedBody(handler, limit, tooLargeHere(), startingHere()));
  return bound;
}

type Handler = Dispatcher.DispatchHandler;
type Args<K extends keyof Handler> = Parameters<NonNullable<Handler[K]>>;

/** One exchange's handler with its body counted; everything else goes to undici's handler as it came. */
class BoundedBody implements Handler {
  private counter: MessageSizeCounter | undefined;
  /** The body went over the limit: the exchange is aborted, and nothing more of it is passed on. */
  private over = false;

  constructor(
    private readonly handler: Handler,
    private readonly limit: number,
    private readonly tooLarge: TooLarge,
    private readonly starting: () => void,
  ) {}

  onResponseStart(...args: Args<"onResponseStart">): void {
    const { "content-encoding": coding, "content-type": type } = args[2];
    this.counter = unencoded(String(coding ?? ""))
      ? new MessageSizeCounter(this.limit, isEventStream(String(type ?? "")))
      : undefined;
    this.handler.onResponseStart?.(...args);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.over) return;
    if (!this.counter || this.counter.add(chunk)) return this.handler.onResponseData?.(controller, chunk);
    const error = new MessageTooLargeError(this.limit);
    this.over = true;
    // Aborting closes the exchange; what undici's handler hears is this error, and so does the body's reader.
    controller.abort(error);
    this.tooLarge(error);
  }

  onRequestStart = (...args: Args<"onRequestStart">) => (this.starting(), this.handler.onRequestStart?.(...args));
  onRequestUpgrade = (...args: Args<"onRequestUpgrade">) => this.handler.onRequestUpgrade?.(...args);
  onResponseEnd = (...args: Args<"onResponseEnd">) => this.handler.onResponseEnd?.(...args);
  onResponseError = (...args: Args<"onResponseError">) => this.handler.onResponseError?.(...args);
}

/**
 * `response` with a body that fails past `limit` bytes in one message (an SSE event, or any other body whole) as it is
 * read; `tooLarge` is told once it does. A response without a body is returned as it is.
 */
export function boundedResponse(response: Response, limit: number, tooLarge: TooLarge): Response {
  const body = response.body;
  if (!body || NULL_BODY_STATUSES.has(response.status)) return response;
  const counter = new MessageSizeCounter(limit, isEventStream(response.headers.get("content-type")));
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
  const { status, statusText, headers } = response;
  const bounded = new Response(counted, { status, statusText, headers });
  // What a new Response cannot be given: where it came from (the SDK reads `url` to name an unfollowed redirect).
  for (const key of ["url", "redirected", "type"] as const)
    Object.defineProperty(bounded, key, { value: response[key] });
  return bounded;
}
