/**
 * The v2 client's way around its own gap for the 2026-07-28 tasks extension. The SDK ships the task vocabulary but
 * no runtime: its 2026-07-28 codec rejects a `tools/call` answered with `resultType: "task"` (UNSUPPORTED_RESULT_TYPE)
 * before any caller sees it, and a per-request `_meta` capabilities object replaces the one the client attaches
 * instead of adding to it. So, on the connection's transport, for the requests this module marks only:
 * - outgoing: the mark comes off and the tasks extension is added to the request's declared capabilities (the
 *   extension wants it on `tools/call` and on every `tasks/*` request);
 * - incoming, for a marked `tools/call`: a task answer is kept aside (under the mark) and the SDK is handed an empty
 *   error result instead (no output schema applies to it), so the call resolves and the caller picks up the task.
 * Every other message passes untouched; the SDK keeps doing the envelope, headers, auth, timeouts and cancelling.
 */
import { randomUUID } from "node:crypto";
import type { Client, JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import { isObject } from "../../common/values.ts";
import { TASKS_EXTENSION } from "./task-wire.ts";

/** Marks a request (in its `_meta`) for the interceptor; never sent. */
const MARK = "mcp-bridge/task-call";
/** The mark of a request whose answer needs nothing done (the `tasks/*` requests). */
const DECLARE_ONLY = "declare";
const CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";

interface Interceptor {
  /** Request id on the wire → the mark of the call it belongs to. */
  byId: Map<string | number, string>;
  /** Mark → the raw task answer that arrived for it. */
  created: Map<string, unknown>;
}

const interceptors = new WeakMap<Transport, Interceptor>();

type Json = Record<string, unknown>;

/** The request with the mark taken off and the tasks extension declared next to the client's own capabilities. */
function unmark(message: Json & { params: Json & { _meta: Json } }): JSONRPCMessage {
  const meta: Json = { ...message.params._meta };
  delete meta[MARK];
  const capabilities = isObject(meta[CLIENT_CAPABILITIES_KEY]) ? meta[CLIENT_CAPABILITIES_KEY] : {};
  const extensions = isObject(capabilities.extensions) ? capabilities.extensions : {};
  meta[CLIENT_CAPABILITIES_KEY] = { ...capabilities, extensions: { ...extensions, [TASKS_EXTENSION]: {} } };
  return { ...message, params: { ...message.params, _meta: meta } } as JSONRPCMessage;
}

function markOf(message: unknown): string | undefined {
  if (!isObject(message) || typeof message.method !== "string" || !isObject(message.params)) return undefined;
  const meta = message.params._meta;
  return isObject(meta) && typeof meta[MARK] === "string" ? meta[MARK] : undefined;
}

/** The interceptor on `client`'s current transport, installed there on first use. */
function interceptorOf(client: Client): Interceptor {
  const transport = client.transport;
  if (!transport) throw new Error("not connected");
  const existing = interceptors.get(transport);
  if (existing) return existing;
  const state: Interceptor = { byId: new Map(), created: new Map() };
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const mark = markOf(message);
    if (mark === undefined) return send(message, options);
    const id = (message as { id?: string | number }).id;
    if (id !== undefined && mark !== DECLARE_ONLY) state.byId.set(id, mark);
    return send(unmark(message as Json & { params: Json & { _meta: Json } }), options);
  };
  const receive = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const id = (message as { id?: string | number }).id;
    const mark = id === undefined || "method" in message ? undefined : state.byId.get(id);
    if (mark !== undefined) {
      state.byId.delete(id as string | number);
      const result = (message as { result?: unknown }).result;
      if (isObject(result) && result.resultType === "task") {
        state.created.set(mark, result);
        message = {
          jsonrpc: "2.0",
          id: id as string | number,
          result: { resultType: "complete", content: [], isError: true },
        } as unknown as typeof message;
      }
    }
    receive?.(message, extra);
  };
  interceptors.set(transport, state);
  return state;
}

export interface MarkedCall {
  /** The `_meta` to send the call with. */
  meta: Json;
  /** The task the server answered with, once the call has resolved (undefined: a plain result). */
  takeTask(): unknown;
}

/** Prepares one extension-dialect `tools/call` on `client`'s current transport. */
export function markTaskCall(client: Client, meta: Json | undefined): MarkedCall {
  const state = interceptorOf(client);
  const mark = randomUUID();
  return {
    meta: { ...meta, [MARK]: mark },
    takeTask: () => {
      const task = state.created.get(mark);
      state.created.delete(mark);
      // A call that ended without its answer (aborted, timed out) leaves its id behind; nothing will come for it.
      for (const [id, owner] of state.byId) if (owner === mark) state.byId.delete(id);
      return task;
    },
  };
}

/** The `_meta` for a `tasks/*` request in the extension dialect: it declares the extension, as the server wants. */
export function declareTasks(client: Client, meta?: Json): Json {
  interceptorOf(client);
  return { ...meta, [MARK]: DECLARE_ONLY };
}
