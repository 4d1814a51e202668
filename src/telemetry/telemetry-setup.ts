/**
 * OpenTelemetry for the bridge's MCP requests (traces and metrics), switched on in one of two ways: the standard
 * `OTEL_*` variables ask for OTLP export (the bridge then sets up its own providers and exporters), or pi or another
 * extension registered a provider already (the bridge's spans then go to it and the bridge exports nothing itself). Otherwise nothing of
 * OpenTelemetry is loaded: the packages are imported here, on demand, and never at start-up, so a user who does not
 * trace pays nothing for them.
 */
import type { Histogram, Meter, Span, Tracer, TextMapPropagator } from "@opentelemetry/api";
import { packageFile } from "../common/package-files.ts";
import { settleWithin } from "../common/wait.ts";

type Api = typeof import("@opentelemetry/api");

/** What the spans are made with, once telemetry is on. */
export interface Telemetry {
  api: Api;
  tracer: Tracer;
  /** `mcp.client.operation.duration`: one request, sent to answered (seconds). */
  operationDuration: Histogram;
  /** `mcp.client.session.duration`: one session, opened to closed (seconds). */
  sessionDuration: Histogram;
  /** For the bridge's own counters (./server-counters.ts). */
  meter: Meter;
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
/** The bridges of this process (two pi sessions: an SDK host) whose spans follow the context manager one registered. */
const CONTEXT_USERS = Symbol.for("pi-mcp-bridge.otel-context-users");
const shared = globalThis as { [CONTEXT_USERS]?: number };
/** The bridges using `current`: the published bundle is one module for every pi session of the process. */
let users = 0;

/** The conventions' bucket boundaries for MCP durations, in seconds. */
const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

function durations(meter: Meter): Pick<Telemetry, "operationDuration" | "sessionDuration"> {
  const histogram = (name: string, description: string) =>
    meter.createHistogram(name, { unit: "s", description, advice: { explicitBucketBoundaries: DURATION_BUCKETS } });
  return {
    operationDuration: histogram("mcp.client.operation.duration", "How long an MCP request took, sent to answered"),
    sessionDuration: histogram("mcp.client.session.duration", "How long an MCP session lasted, opened to closed"),
  };
}

/** The telemetry in use, or undefined when it is off. */
export function telemetry(): Telemetry | undefined {
  return current;
}

/** Marks `span` failed, saying what went wrong (`error.type`) as the conventions ask. */
export function failSpan(t: Telemetry, span: Span, errorType: string): void {
  span.setAttribute("error.type", errorType);
  span.setStatus({ code: t.api.SpanStatusCode.ERROR });
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
  // A list, as the specification has it (`otlp,console`).
  const exporters = env.OTEL_TRACES_EXPORTER?.toLowerCase().split(/[\s,]+/) ?? [];
  if (exporters.includes("none")) return false;
  return exporters.includes("otlp") || !!env.OTEL_EXPORTER_OTLP_ENDPOINT || !!env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
}

/**
 * Switches telemetry on when the variables or a host's provider ask for it; `"off"`, `"host"` (spans go to the
 * provider already registered) or `"exporting"`. A problem (a protocol the bridge cannot send) comes back as text.
 */
export async function startTelemetry(env: NodeJS.ProcessEnv): Promise<{ mode: string; problem?: string }> {
  if (current) return (users++, { mode: owned ? "exporting" : "host" });
  try {
    const started = await setUp(env);
    users = current ? 1 : 0;
    return started;
  } catch (error) {
    // The OpenTelemetry packages are optional (an install without them is 19 MB smaller): asked for, they are missing.
    // ESM says ERR_MODULE_NOT_FOUND; pi's loader (jiti) requires, which says MODULE_NOT_FOUND.
    const code = (error as { code?: string }).code;
    if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") throw error;
    return {
      mode: "off",
      problem: `OpenTelemetry is asked for, but its packages are not installed beside the MCP bridge: run \`npm install ${OTEL_PACKAGES}\` in ${EXTENSION_DIR}; no spans or metrics are recorded until then.`,
    };
  }
}

/** The optional packages telemetry loads, as `npm install` takes them (the versions package.json names). */
export const OTEL_PACKAGES = (
  "api@1.9.1 core@2.12.0 resources@2.12.0 sdk-trace@2.12.0 sdk-metrics@2.12.0 context-async-hooks@2.12.0 " +
  "exporter-trace-otlp-http@0.223.0 exporter-trace-otlp-proto@0.223.0 exporter-metrics-otlp-http@0.223.0 " +
  "exporter-metrics-otlp-proto@0.223.0"
).replace(/\S+/g, "@opentelemetry/$&");
const EXTENSION_DIR = packageFile(".");

async function setUp(env: NodeJS.ProcessEnv): Promise<{ mode: string; problem?: string }> {
  const host = hostTracing();
  const wanted = !host && exportWanted(env);
  if (!host && !wanted) return { mode: "off" };
  const protocol = otlpProtocol(env);
  if (wanted && !protocol)
    return {
      mode: "off",
      problem: `OTEL_EXPORTER_OTLP${env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ? "_TRACES" : ""}_PROTOCOL must be http/protobuf or http/json for the MCP bridge's traces; none are exported.`,
    };
  const [api, { W3CTraceContextPropagator }] = await Promise.all([
    import("@opentelemetry/api"),
    import("@opentelemetry/core"),
  ]);
  const recordContent = env[RECORD_CONTENT_ENV]?.trim().toLowerCase() === "true";
  const propagator = new W3CTraceContextPropagator();
  if (host) {
    const meter = api.metrics.getMeter(TRACER_NAME);
    current = { api, tracer: api.trace.getTracer(TRACER_NAME), meter, ...durations(meter), propagator, recordContent };
    return { mode: "host" };
  }
  const json = protocol === "http/json";
  const metricsWanted = env.OTEL_METRICS_EXPORTER?.trim().toLowerCase() !== "none";
  const [{ TracerProvider, BatchSpanProcessor }, resources, { AsyncLocalStorageContextManager }, traces, metrics] =
    await Promise.all([
      import("@opentelemetry/sdk-trace"),
      import("@opentelemetry/resources"),
      import("@opentelemetry/context-async-hooks"),
      json ? import("@opentelemetry/exporter-trace-otlp-http") : import("@opentelemetry/exporter-trace-otlp-proto"),
      metricsWanted ? metricsReader(json) : undefined,
    ]);
  const resource = resources
    .resourceFromAttributes({ "service.name": "pi" })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  // The exporters read the endpoint, headers and timeout from the standard variables themselves.
  const provider = new TracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor({ exporter: new traces.OTLPTraceExporter() })],
  });
  const meters = metrics && new metrics.MeterProvider({ resource, readers: [metrics.reader] });
  // A tool call's span is the parent of the requests it sends only if the active context follows async calls.
  const registeredContext =
    api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()) || !!shared[CONTEXT_USERS];
  if (registeredContext) shared[CONTEXT_USERS] = (shared[CONTEXT_USERS] ?? 0) + 1;
  const shutdown = async () => void (await Promise.all([provider.shutdown(), meters?.shutdown()]));
  owned = { shutdown, registeredContext };
  const meter = meters?.getMeter(TRACER_NAME) ?? api.metrics.getMeter(TRACER_NAME);
  current = { api, tracer: provider.getTracer(TRACER_NAME), meter, ...durations(meter), propagator, recordContent };
  return { mode: "exporting" };
}

/** A meter provider's class and the reader that exports its metrics by OTLP (the variables say where and how often). */
async function metricsReader(json: boolean) {
  const [{ MeterProvider, PeriodicExportingMetricReader }, { OTLPMetricExporter }] = await Promise.all([
    import("@opentelemetry/sdk-metrics"),
    json ? import("@opentelemetry/exporter-metrics-otlp-http") : import("@opentelemetry/exporter-metrics-otlp-proto"),
  ]);
  return { MeterProvider, reader: new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter() }) };
}

/** Sends the spans and metrics not yet exported and lets go of the bridge's own provider, within `ms`. */
export async function stopTelemetry(ms: number): Promise<void> {
  if (users > 1) return void users--; // another session's bridge still traces
  users = 0;
  const api = current?.api;
  const mine = owned;
  owned = undefined;
  // Still current while the last metrics are collected: the counters of an ended bridge observe nothing.
  if (mine) await settleWithin(mine.shutdown(), ms);
  current = undefined;
  // The last of them takes it back: disabled sooner, the other bridges' requests would fall out of their traces.
  if (mine?.registeredContext && (shared[CONTEXT_USERS] = (shared[CONTEXT_USERS] ?? 1) - 1) === 0)
    api?.context.disable();
}
