/**
 * One CLIENT span per JSON-RPC request the bridge sends to a server, by OpenTelemetry's conventions for MCP: named
 * `{method} {target}` (`tools/call add`), its parent whatever span is active when the request is sent (a tool call's,
 * or pi's), ended by the server's answer or by the connection closing first. The span's W3C trace context goes into the
 * request's `params._meta` (`traceparent`, `tracestate`; the same on every protocol revision), so a server that traces
 * joins the trace. Wrapping the transport sees every request, whichever part of the bridge or the SDK sends it: the
 * handshake, a retry after a reconnect, a task's polling. Arguments and results stay off the spans unless the user
 * asks for them (./telemetry-setup.ts).
 */
import {
  type JSONRPCMessage,
  type JSONRPCRequest,
  TRACEPARENT_META_KEY,
  TRACESTATE_META_KEY,
  type Transport,
} from "@modelcontextprotocol/client";
import type { Attributes, Span } from "@opentelemetry/api";
import type { Redactor } from "../common/redact.ts";
import { failSpan, type Telemetry, telemetry } from "./telemetry-setup.ts";

/** What a span says about where a request went. */
export interface RequestTarget {
  /** A remote server's URL (reached by `tcp`); none for a local server's stdio (a `pipe`). */
  url?: string;
  /** Hides the server's secrets in the arguments and results recorded, as they are hidden from the model. */
  redactor?: Pick<Redactor, "result">;
}

type Params = Record<string, unknown> & { _meta?: Record<string, unknown> };

const NAMED_TARGET: Readonly<Record<string, string>> = { "tools/call": "name", "prompts/get": "name" };

/** Where the server is (how it is reached, and a remote one's address and port), and the revision spoken if known. */
function serverAttributes(target: RequestTarget, version: string | undefined): Attributes {
  const spoken = version ? { "mcp.protocol.version": version } : {};
  if (!target.url) return { "network.transport": "pipe", ...spoken };
  const url = new URL(target.url);
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  return { "network.transport": "tcp", "server.address": url.hostname, "server.port": port, ...spoken };
}

const recorded = (target: RequestTarget, value: unknown) => JSON.stringify(target.redactor?.result(value) ?? value);

/** The span's name and attributes for `request`, by the conventions. */
function requestSpanShape(
  request: JSONRPCRequest,
  target: RequestTarget,
  session: { id?: string; protocolVersion?: string },
  recordContent: boolean,
): { name: string; attributes: Attributes } {
  const { method, id } = request;
  const params = (request.params ?? {}) as Params;
  const named = NAMED_TARGET[method] && typeof params.name === "string" ? params.name : undefined;
  const version = session.protocolVersion ?? (typeof params.protocolVersion === "string" ? params.protocolVersion : "");
  const attributes: Attributes = {
    "mcp.method.name": method,
    "jsonrpc.request.id": String(id),
    ...serverAttributes(target, version),
    ...(session.id ? { "mcp.session.id": session.id } : {}),
  };
  if (method === "tools/call" && named) {
    attributes["gen_ai.tool.name"] = named;
    attributes["gen_ai.operation.name"] = "execute_tool";
    if (recordContent) attributes["gen_ai.tool.call.arguments"] = recorded(target, params.arguments ?? {});
  }
  if (method === "prompts/get" && named) attributes["gen_ai.prompt.name"] = named;
  if (method.startsWith("resources/") && typeof params.uri === "string") attributes["mcp.resource.uri"] = params.uri;
  return { name: named ? `${method} ${named}` : method, attributes };
}

/** What went wrong, by the answer: a JSON-RPC error's code, or `tool_error` for a tool result with `isError`. */
function answerErrorType(message: JSONRPCMessage, method: string): string | undefined {
  if ("error" in message) return String(message.error.code);
  const result = "result" in message ? (message.result as { isError?: unknown }) : undefined;
  return method === "tools/call" && result?.isError === true ? "tool_error" : undefined;
}

/** What the duration metrics are broken down by: the span's attributes, less those unique to one request. */
const METRIC_ATTRIBUTES = [
  "mcp.method.name",
  "mcp.protocol.version",
  "gen_ai.tool.name",
  "gen_ai.prompt.name",
  "network.transport",
  "server.address",
  "server.port",
] as const;

function metricAttributes(attributes: Attributes, errorType: string | undefined): Attributes {
  const picked: Attributes = errorType ? { "error.type": errorType } : {};
  for (const key of METRIC_ATTRIBUTES) if (attributes[key] !== undefined) picked[key] = attributes[key];
  return picked;
}

interface OpenRequest {
  span: Span;
  method: string;
  attributes: Attributes;
  startedAt: number;
}

function endRequest(t: Telemetry, request: OpenRequest, errorType: string | undefined): void {
  const { span } = request;
  if (errorType) failSpan(t, span, errorType);
  span.end();
  const seconds = (performance.now() - request.startedAt) / 1000;
  t.operationDuration.record(seconds, metricAttributes(request.attributes, errorType));
}

/** Calls `before` with what the transport hands its handler `key`, whichever handler is installed later. */
function observe<K extends "onmessage" | "onclose">(
  transport: Transport,
  key: K,
  before: (...args: Parameters<NonNullable<Transport[K]>>) => void,
): void {
  const previous = Object.getOwnPropertyDescriptor(transport, key);
  let handler: Transport[K];
  Object.defineProperty(transport, key, {
    configurable: true,
    enumerable: true,
    get: () => (previous?.get ? (previous.get.call(transport) as Transport[K]) : handler),
    set: (next: Transport[K]) => {
      const wrapped = (next &&
        ((...args: Parameters<NonNullable<Transport[K]>>) => {
          before(...args);
          return (next as (...a: typeof args) => void)(...args);
        })) as Transport[K];
      if (previous?.set) previous.set.call(transport, wrapped);
      else handler = wrapped;
    },
  });
}

/**
 * Makes `transport` trace the requests sent on it (see above); as it was when telemetry is off. `protocolVersion` is
 * the revision the session speaks, once it is known.
 */
export function traceRequests<T extends Transport>(
  transport: T,
  target: RequestTarget,
  protocolVersion: () => string | undefined,
): T {
  const t = telemetry();
  if (!t) return transport;
  const { api } = t;
  const open = new Map<string | number, OpenRequest>();
  const openedAt = performance.now();
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    if (!("method" in message) || !("id" in message)) {
      // A request the client gave up on (timed out, aborted) gets no answer: its span ends with the cancellation.
      const isCancel = "method" in message && message.method === "notifications/cancelled";
      const id = isCancel ? (message.params?.requestId as string | number | undefined) : undefined;
      const request = id === undefined ? undefined : open.get(id);
      if (request && open.delete(id!)) endRequest(t, request, "cancelled");
      return send(message, options);
    }
    const session = { id: (transport as { sessionId?: string }).sessionId, protocolVersion: protocolVersion() };
    const { name, attributes } = requestSpanShape(message, target, session, t.recordContent);
    const parent = api.context.active();
    const span = t.tracer.startSpan(name, { kind: api.SpanKind.CLIENT, attributes }, parent);
    const carrier: Record<string, string> = {};
    t.propagator.inject(api.trace.setSpan(parent, span), carrier, api.defaultTextMapSetter);
    const params = (message.params ?? {}) as Params;
    const meta: Record<string, unknown> = { ...params._meta, [TRACEPARENT_META_KEY]: carrier.traceparent };
    if (carrier.tracestate) meta[TRACESTATE_META_KEY] = carrier.tracestate;
    const request = { span, method: message.method, attributes, startedAt: performance.now() };
    open.set(message.id, request);
    try {
      return await send({ ...message, params: { ...params, _meta: meta } }, options);
    } catch (error) {
      open.delete(message.id);
      endRequest(t, request, error instanceof Error ? error.name : "send_failed");
      throw error;
    }
  };
  observe(transport, "onmessage", (message) => {
    if ("method" in message || !("id" in message) || message.id === undefined) return;
    const request = open.get(message.id);
    if (!request) return;
    open.delete(message.id);
    if (t.recordContent && "result" in message && request.method === "tools/call")
      request.span.setAttribute("gen_ai.tool.call.result", recorded(target, message.result));
    endRequest(t, request, answerErrorType(message, request.method));
  });
  observe(transport, "onclose", () => {
    for (const request of open.values()) endRequest(t, request, "connection_closed");
    open.clear();
    t.sessionDuration.record((performance.now() - openedAt) / 1000, serverAttributes(target, protocolVersion()));
  });
  return transport;
}
