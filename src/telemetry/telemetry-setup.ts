/**
 * OpenTelemetry for the bridge's MCP requests, switched on in one of two ways: the standard `OTEL_*` variables ask for
 * OTLP export (the bridge then sets up its own provider and exporter), or pi or another extension registered a
 * provider already (the bridge's spans then go to it and the bridge exports nothing itself). Otherwise nothing of
 * OpenTelemetry is loaded: the packages are imported here, on demand, and never at start-up, so a user who does not
 * trace pays nothing for them.
 */
import type { Tracer, TextMapPropagator } from "@opentelemetry/api";
import { settleWithin } from "../common/wait.ts";

type Api = typeof import("@opentelemetry/api");

/** What the spans are made with, once telemetry is on. */
export interface Telemetry {
  api: Api;
  tracer: Tracer;
  /** W3C trace context, which MCP servers read from a request's `_meta`. */
  propagator: TextMapPropagator;
  /** The user asked for tool arguments and results on the spans. */
  recordContent: boolean;
}

/** Where @opentelemetry/api keeps its globals (its major version is in the key), read without importing it. */
const API_GLOBAL = Symbol.for("opentelemetry.js.api.1");
const TRACER_NAME = "mcp-bridge";
/** Variable that puts tool arguments and results on the spans; they are left out otherwise. */
const RECORD_CONTENT_ENV = "MCP_BRIDGE_OTEL_RECORD_CONTENT";

let current: Telemetry | undefined;
/** The provider the bridge set up itself, and whether it registered the context manager (to take back on stop). */
let owned: { shutdown(): Promise<void>; registeredContext: boolean } | undefined;

/** The telemetry in use, or undefined when it is off. */
export function telemetry(): Telemetry | undefined {
  return current;
}

function hostTracing(): boolean {
  const globals = (globalThis as Record<symbol, { trace?: unknown } | undefined>)[API_GLOBAL];
  return globals?.trace !== undefined;
}

/** The OTLP protocol the variables ask for (the specification's default is protobuf); undefined for one not offered. */
function otlpProtocol(env: NodeJS.ProcessEnv): "http/json" | "http/protobuf" | undefined {
  const protocol = (
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ||
    env.OTEL_EXPORTER_OTLP_PROTOCOL ||
    "http/protobuf"
  ).trim();
  return protocol === "http/json" || protocol === "http/protobuf" ? protocol : undefined;
}

/** Whether the variables ask the bridge to export traces by OTLP. */
function exportWanted(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === "none") return false;
  return exporter === "otlp" || !!env.OTEL_EXPORTER_OTLP_ENDPOINT || !!env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
}

/**
 * Switches telemetry on when the variables or a host's provider ask for it; `"off"`, `"host"` (spans go to the
 * provider already registered) or `"exporting"`. A problem (a protocol the bridge cannot send) comes back as text.
 */
export async function startTelemetry(env: NodeJS.ProcessEnv): Promise<{ mode: string; problem?: string }> {
  const host = hostTracing();
  const wanted = !host && exportWanted(env);
  if (!host && !wanted) return { mode: "off" };
  const protocol = otlpProtocol(env);
  if (wanted && !protocol) {
    return {
      mode: "off",
      problem: `OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json for the MCP bridge's traces; none are exported.`,
    };
  }
  const [api, { W3CTraceContextPropagator }] = await Promise.all([
    import("@opentelemetry/api"),
    import("@opentelemetry/core"),
  ]);
  const recordContent = env[RECORD_CONTENT_ENV]?.trim().toLowerCase() === "true";
  const propagator = new W3CTraceContextPropagator();
  if (host) {
    current = { api, tracer: api.trace.getTracer(TRACER_NAME), propagator, recordContent };
    return { mode: "host" };
  }
  const [{ TracerProvider, BatchSpanProcessor }, resources, { AsyncLocalStorageContextManager }, exporters] =
    await Promise.all([
      import("@opentelemetry/sdk-trace"),
      import("@opentelemetry/resources"),
      import("@opentelemetry/context-async-hooks"),
      protocol === "http/json"
        ? import("@opentelemetry/exporter-trace-otlp-http")
        : import("@opentelemetry/exporter-trace-otlp-proto"),
    ]);
  // The exporter reads the endpoint, headers and timeout from the standard variables itself.
  const provider = new TracerProvider({
    resource: resources
      .resourceFromAttributes({ "service.name": "pi" })
      .merge(resources.detectResources({ detectors: [resources.envDetector] })),
    spanProcessors: [new BatchSpanProcessor({ exporter: new exporters.OTLPTraceExporter() })],
  });
  // A tool call's span is the parent of the requests it sends only if the active context follows async calls.
  const registeredContext = api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  owned = { shutdown: () => provider.shutdown(), registeredContext };
  current = { api, tracer: provider.getTracer(TRACER_NAME), propagator, recordContent };
  return { mode: "exporting" };
}

/** Sends the spans not yet exported and lets go of the bridge's own provider, within `ms`. */
export async function stopTelemetry(ms: number): Promise<void> {
  const api = current?.api;
  const mine = owned;
  current = undefined;
  owned = undefined;
  if (!mine) return;
  await settleWithin(mine.shutdown(), ms);
  if (mine.registeredContext) api?.context.disable();
}
