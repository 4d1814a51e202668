/**
 * OpenTelemetry: tool calls through real pi (in-process, and `pi -p` as a child) against a real OTLP/HTTP receiver on
 * 127.0.0.1 and a real stdio server that answers with the trace context it received. Spans by the MCP conventions,
 * the server's `traceparent` in the same trace, errors as `error.type`, protobuf as the default protocol, print mode
 * flushing before it exits; and without the variables nothing is exported, registered or even loaded.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { busRecorder, EXTENSION_DIR, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";
import { OTEL_PACKAGES, startTelemetry, stopTelemetry } from "../src/telemetry/telemetry-setup.ts";
import { startModernServer } from "./fixtures/modern-server.ts";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { callOnceInPi, startInProcessPi } from "./pi-harness.ts";
import { FAUX_MODEL_EXTENSION, PI_CLI } from "./tmux.ts";
import { bundledFixture } from "./fixture-bundle.ts";

const TRACE_FIXTURE = path.join(REPO_ROOT, "test", "fixtures", "trace-server.ts");
/** An API key the fixture quotes back in a tool result. */
const TRACE_SECRET = "trace-key-5f0c9a71";
const API_GLOBAL = Symbol.for("opentelemetry.js.api.1");
const OTEL_VARS = ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_SERVICE_NAME"] as const;

interface Post {
  path: string;
  contentType: string;
  body: Buffer;
}
interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: OtlpAttribute[];
  status?: { code?: number };
}
interface OtlpJson {
  resourceSpans: Array<{ resource: { attributes: OtlpAttribute[] }; scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
}

interface OtlpMetricsJson {
  resourceMetrics: Array<{
    scopeMetrics: Array<{
      metrics: Array<{
        name: string;
        histogram?: { dataPoints: Array<{ count: number | string; attributes: OtlpAttribute[] }> };
        sum?: { dataPoints: Array<{ asInt?: number | string; asDouble?: number; attributes: OtlpAttribute[] }> };
      }>;
    }>;
  }>;
}

/** A span's attributes as a plain object. */
function attributesOf(list: OtlpAttribute[]): Record<string, unknown> {
  return Object.fromEntries(
    list.map(({ key, value }) => [key, value.stringValue ?? value.intValue ?? value.boolValue]),
  );
}

test("the packages the bridge names when OpenTelemetry is missing are its optional peers, at their versions", () => {
  const manifest = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as {
    peerDependencies: Record<string, string>;
    peerDependenciesMeta: Record<string, { optional?: boolean }>;
    dependencies: Record<string, string>;
  };
  const peers = Object.entries(manifest.peerDependencies)
    .filter(([name]) => name.startsWith("@opentelemetry/"))
    .map(([name, version]) => `${name}@${version}`);
  assert.deepEqual(OTEL_PACKAGES.split(" ").sort(), peers.sort());
  for (const name of Object.keys(manifest.peerDependencies).filter((n) => n.startsWith("@opentelemetry/"))) {
    assert.equal(manifest.peerDependenciesMeta[name]?.optional, true, `${name} is optional`);
    assert.equal(manifest.dependencies[name], undefined, `${name} is not installed for everyone`);
  }
});

describe("OpenTelemetry spans of MCP requests", { timeout: 180_000 }, () => {
  const project = tempDir("mcp-bridge-otel-project-");
  const agentDir = tempDir("mcp-bridge-otel-agent-");
  const originalCwd = process.cwd();
  const posts: Post[] = [];
  let receiver: Server;
  let endpoint = "";
  const saved = new Map<string, string | undefined>();

  before(async () => {
    for (const name of [...OTEL_VARS, "PI_CODING_AGENT_DIR", "PI_MCP_STARTUP_BUDGET_MS"])
      saved.set(name, process.env[name]);
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    process.chdir(project.dir);
    const entry = {
      command: process.execPath,
      args: [bundledFixture(TRACE_FIXTURE)],
      exposure: "direct",
      // The call that never gets an answer gives up after this.
      requestTimeout: 3000,
      env: { TRACE_SECRET },
    };
    writeFileSync(
      path.join(agentDir.dir, "mcp.json"),
      JSON.stringify({ approval: "never", mcpServers: { traced: entry } }),
    );
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        if (req.method === "POST" && (req.url === "/v1/traces" || req.url === "/v1/metrics"))
          posts.push({ path: req.url, contentType: req.headers["content-type"] ?? "", body: Buffer.concat(chunks) });
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    process.chdir(originalCwd);
    await new Promise((resolve) => receiver.close(resolve));
    project.cleanup();
    agentDir.cleanup();
  });

  function exporting(protocol?: string): void {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
    process.env.OTEL_SERVICE_NAME = "pi-under-test";
    if (protocol) process.env.OTEL_EXPORTER_OTLP_PROTOCOL = protocol;
    else delete process.env.OTEL_EXPORTER_OTLP_PROTOCOL;
  }

  function notExporting(): void {
    for (const name of OTEL_VARS) delete process.env[name];
  }

  /** The model calls `tool` of the fixture once through pi in-process. */
  const call = (tool: string) =>
    callOnceInPi({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [EXTENSION_DIR],
      tool: `mcp_traced_${tool}`,
      args: {},
    });

  /** Every span the receiver got as JSON since `from`, with its resource's attributes. */
  function jsonSpans(from: number): Array<OtlpSpan & { resource: Record<string, unknown> }> {
    return posts.slice(from).flatMap((post) => {
      if (post.path !== "/v1/traces") return [];
      const body = JSON.parse(post.body.toString("utf8")) as OtlpJson;
      return body.resourceSpans.flatMap((rs) =>
        rs.scopeSpans.flatMap((ss) =>
          ss.spans.map((span) => ({ ...span, resource: attributesOf(rs.resource.attributes) })),
        ),
      );
    });
  }

  /** The data points of the histogram `name` the receiver got as JSON since `from`. */
  function histogramPoints(from: number, name: string): Array<{ count: number; attributes: Record<string, unknown> }> {
    return posts.slice(from).flatMap((post) => {
      if (post.path !== "/v1/metrics") return [];
      const body = JSON.parse(post.body.toString("utf8")) as OtlpMetricsJson;
      return body.resourceMetrics.flatMap((rm) =>
        rm.scopeMetrics.flatMap((sm) =>
          sm.metrics
            .filter((metric) => metric.name === name)
            .flatMap((metric) =>
              (metric.histogram?.dataPoints ?? []).map((point) => ({
                count: Number(point.count),
                attributes: attributesOf(point.attributes),
              })),
            ),
        ),
      );
    });
  }

  test("without the variables nothing is exported, and OpenTelemetry is neither registered nor loaded", async () => {
    notExporting();
    const { text } = await call("traceparent");
    assert.deepEqual(JSON.parse(text), { traceparent: null });
    assert.equal(posts.length, 0);
    assert.equal((globalThis as Record<symbol, unknown>)[API_GLOBAL], undefined);
    const loaded = Object.keys(createRequire(import.meta.url).cache).filter((file) =>
      file.includes(`${path.sep}@opentelemetry${path.sep}`),
    );
    assert.deepEqual(loaded, []);
  });

  test("http/json: the tool call's span by the conventions, in the trace whose traceparent the server got", async () => {
    exporting("http/json");
    const from = posts.length;
    const { text, isError } = await call("traceparent");
    assert.equal(isError, false, text);
    const { traceparent } = JSON.parse(text) as { traceparent: string };
    const [, traceId, parentId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(traceparent) ?? [];
    assert.ok(traceId, `a W3C traceparent reached the server: ${text}`);
    // pi's shutdown flushed the spans: they are at the receiver once pi is closed.
    const spans = jsonSpans(from);
    const span = spans.find((s) => s.name === "tools/call traceparent");
    assert.ok(span, `the span was exported: ${spans.map((s) => s.name).join(", ")}`);
    assert.equal(span.kind, 3, "CLIENT");
    assert.equal(span.traceId, traceId);
    assert.equal(span.spanId, parentId, "the server's parent is the request's own span");
    const attributes = attributesOf(span.attributes);
    assert.equal(attributes["mcp.method.name"], "tools/call");
    assert.equal(attributes["gen_ai.tool.name"], "traceparent");
    assert.equal(attributes["gen_ai.operation.name"], "execute_tool");
    assert.equal(attributes["network.transport"], "pipe");
    assert.match(String(attributes["mcp.protocol.version"]), /^\d{4}-\d{2}-\d{2}$/);
    assert.ok(attributes["jsonrpc.request.id"] !== undefined);
    assert.equal(attributes["gen_ai.tool.call.arguments"], undefined, "arguments are not recorded");
    assert.equal(span.resource["service.name"], "pi-under-test");
    // The pi tool call is the request's parent; the handshake was traced too.
    const tool = spans.find((s) => s.spanId === span.parentSpanId);
    assert.equal(tool?.name, "execute_tool traceparent");
    assert.ok(spans.some((s) => s.name === "initialize" || s.name === "server/discover"));
    // The metrics by the conventions: the call's duration, and the session's once it closed at pi's shutdown.
    const operations = histogramPoints(from, "mcp.client.operation.duration");
    const toolCall = operations.find((p) => p.attributes["gen_ai.tool.name"] === "traceparent");
    assert.equal(toolCall?.count, 1);
    assert.equal(toolCall?.attributes["mcp.method.name"], "tools/call");
    assert.equal(toolCall?.attributes["jsonrpc.request.id"], undefined, "nothing unique to one request");
    const sessions = histogramPoints(from, "mcp.client.session.duration");
    assert.equal(
      sessions.reduce((sum, p) => sum + p.count, 0),
      1,
      "one session",
    );
    assert.equal(sessions[0]?.attributes["network.transport"], "pipe");
    const calls = posts.slice(from).flatMap((post) => {
      if (post.path !== "/v1/metrics") return [];
      const body = JSON.parse(post.body.toString("utf8")) as OtlpMetricsJson;
      const metrics = body.resourceMetrics.flatMap((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics));
      return metrics.filter((m) => m.name === "mcp_bridge.server.tool_calls").flatMap((m) => m.sum?.dataPoints ?? []);
    });
    assert.equal(Number(calls.at(-1)?.asInt), 1, "the bridge's own count of tool calls");
    assert.equal(attributesOf(calls.at(-1)?.attributes ?? [])["mcp_bridge.server"], "traced");
    // The bridge's own provider is let go of at shutdown: the next pi starts from nothing.
    assert.equal((globalThis as Record<symbol, { trace?: unknown }>)[API_GLOBAL]?.trace, undefined);
  });

  /** The last value each of the bridge's counters `names` reported since `from`, for the fixture server. */
  function counterValues(from: number, names: readonly string[]): Record<string, number | undefined> {
    const values: Record<string, number | undefined> = {};
    for (const post of posts.slice(from)) {
      if (post.path !== "/v1/metrics") continue;
      const body = JSON.parse(post.body.toString("utf8")) as OtlpMetricsJson;
      for (const metric of body.resourceMetrics.flatMap((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics))) {
        if (!names.includes(metric.name)) continue;
        const point = metric.sum?.dataPoints.at(-1);
        if (point) values[metric.name] = Number(point.asInt);
      }
    }
    return values;
  }

  test("the bridge's counters: a local server's restart, and a call refused for want of approval", async () => {
    exporting("http/json");
    const config = path.join(agentDir.dir, "mcp.json");
    const before = readFileSync(config, "utf8");
    const entry = (JSON.parse(before) as { mcpServers: { traced: Record<string, unknown> } }).mcpServers.traced;
    // Approval asked (no UI here, so refused) for every tool but the two the test runs.
    writeFileSync(
      config,
      JSON.stringify({ mcpServers: { traced: { ...entry, autoApprove: ["exit", "traceparent"] } } }),
    );
    const from = posts.length;
    const connects = busRecorder(project.dir, ["mcp.connected"]);
    const pi = await startInProcessPi({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [EXTENSION_DIR, connects.path],
    });
    try {
      await pi.session.bindExtensions({});
      // The server exits during the call; the bridge starts it again by itself.
      pi.faux.setResponses([
        fauxAssistantMessage([fauxToolCall("mcp_traced_exit", {})], { stopReason: "toolUse" }),
        fauxAssistantMessage("done"),
      ]);
      await pi.session.prompt("crash it");
      await waitFor(() => connects.events().length >= 2, "the server's restart", 60_000);
      // Then one call that runs, and one that needs approval no UI can give.
      pi.faux.setResponses([
        fauxAssistantMessage([fauxToolCall("mcp_traced_traceparent", {})], { stopReason: "toolUse" }),
        fauxAssistantMessage([fauxToolCall("mcp_traced_tool_error", {})], { stopReason: "toolUse" }),
        fauxAssistantMessage("done"),
      ]);
      await pi.session.prompt("go on");
    } finally {
      await pi.close();
      writeFileSync(config, before);
    }
    const counters = counterValues(from, [
      "mcp_bridge.server.restarts",
      "mcp_bridge.server.reconnections",
      "mcp_bridge.server.approvals_refused",
    ]);
    assert.deepEqual(counters, {
      "mcp_bridge.server.restarts": 1,
      "mcp_bridge.server.reconnections": 0,
      "mcp_bridge.server.approvals_refused": 1,
    });
  });

  test("OTEL_METRICS_EXPORTER=none exports the spans only; OTEL_TRACES_EXPORTER=none exports nothing", async () => {
    exporting("http/json");
    try {
      process.env.OTEL_METRICS_EXPORTER = "none";
      let from = posts.length;
      await call("traceparent");
      assert.ok(
        posts.slice(from).some((p) => p.path === "/v1/traces"),
        "the spans",
      );
      assert.equal(posts.slice(from).filter((p) => p.path === "/v1/metrics").length, 0, "no metrics");
      delete process.env.OTEL_METRICS_EXPORTER;
      process.env.OTEL_TRACES_EXPORTER = "none";
      from = posts.length;
      const { isError } = await call("traceparent");
      assert.equal(isError, false);
      assert.equal(posts.length, from, "nothing exported");
    } finally {
      delete process.env.OTEL_METRICS_EXPORTER;
      delete process.env.OTEL_TRACES_EXPORTER;
    }
  });

  test("a tool result with isError and a JSON-RPC error give error.type and the error status", async () => {
    exporting("http/json");
    const from = posts.length;
    await call("tool_error");
    await call("rpc_error");
    const spans = jsonSpans(from);
    const failed = spans.find((s) => s.name === "tools/call tool_error");
    assert.equal(attributesOf(failed?.attributes ?? [])["error.type"], "tool_error");
    assert.equal(failed?.status?.code, 2, "ERROR");
    const refused = spans.find((s) => s.name === "tools/call rpc_error");
    assert.equal(attributesOf(refused?.attributes ?? [])["error.type"], "-32602");
    assert.equal(refused?.status?.code, 2, "ERROR");
  });

  test("a server that exits during a call: the request's span ends with connection_closed", async () => {
    exporting("http/json");
    const from = posts.length;
    const { isError } = await call("exit");
    assert.equal(isError, true);
    const spans = jsonSpans(from);
    const request = spans.find((s) => s.name === "tools/call exit");
    assert.equal(attributesOf(request?.attributes ?? [])["error.type"], "connection_closed");
    assert.equal(request?.status?.code, 2, "ERROR");
    const tool = spans.find((s) => s.spanId === request?.parentSpanId);
    assert.equal(tool?.name, "execute_tool exit");
    assert.equal(tool?.status?.code, 2, "ERROR");
  });

  test("a call that times out: the request's span ends with the cancellation sent to the server", async () => {
    exporting("http/json");
    const from = posts.length;
    const { isError } = await call("hang");
    assert.equal(isError, true);
    const request = jsonSpans(from).find((s) => s.name === "tools/call hang");
    assert.equal(attributesOf(request?.attributes ?? [])["error.type"], "cancelled");
  });

  test("MCP_BRIDGE_OTEL_RECORD_CONTENT=true records the tool's arguments and result", async () => {
    exporting("http/json");
    process.env.MCP_BRIDGE_OTEL_RECORD_CONTENT = "true";
    const from = posts.length;
    try {
      await call("traceparent");
    } finally {
      delete process.env.MCP_BRIDGE_OTEL_RECORD_CONTENT;
    }
    const span = jsonSpans(from).find((s) => s.name === "tools/call traceparent");
    const attributes = attributesOf(span?.attributes ?? []);
    assert.equal(attributes["gen_ai.tool.call.arguments"], "{}");
    assert.match(String(attributes["gen_ai.tool.call.result"]), /traceparent/);
  });

  test("MCP_BRIDGE_OTEL_RECORD_CONTENT=true: the result recorded has the server's secrets hidden, as the model got it", async () => {
    exporting("http/json");
    process.env.MCP_BRIDGE_OTEL_RECORD_CONTENT = "true";
    const from = posts.length;
    try {
      assert.equal((await call("secret")).text, "key ***");
    } finally {
      delete process.env.MCP_BRIDGE_OTEL_RECORD_CONTENT;
    }
    const span = jsonSpans(from).find((s) => s.name === "tools/call secret");
    const result = String(attributesOf(span?.attributes ?? [])["gen_ai.tool.call.result"]);
    assert.match(result, /key \*\*\*/);
    assert.ok(!posts.slice(from).some((post) => post.body.toString("utf8").includes(TRACE_SECRET)), "no export has it");
  });

  test("http/protobuf, the default protocol: the spans are posted as protobuf", async () => {
    exporting();
    const from = posts.length;
    const { text } = await call("traceparent");
    const traceId = (JSON.parse(text) as { traceparent: string }).traceparent.split("-")[1]!;
    const sent = posts.slice(from);
    assert.ok(sent.length > 0);
    assert.ok(sent.every((post) => post.contentType === "application/x-protobuf"));
    const body = Buffer.concat(sent.map((post) => post.body));
    assert.ok(body.includes(Buffer.from("tools/call traceparent")));
    assert.ok(body.includes(Buffer.from(traceId, "hex")), "the trace id the server got");
  });

  test("a remote server's task: tcp, its address and port; the polling is part of the tool call's trace", async () => {
    exporting("http/json");
    const state = tempDir("mcp-bridge-otel-tasks-");
    const modern = await startModernServer({ stateDir: state.dir, pollIntervalMs: 20 });
    const config = path.join(agentDir.dir, "mcp.json");
    const before = readFileSync(config, "utf8");
    const servers = {
      ...(JSON.parse(before) as { mcpServers: object }).mcpServers,
      modern: { url: modern.url, exposure: "direct" },
    };
    writeFileSync(config, JSON.stringify({ approval: "never", mcpServers: servers }));
    const from = posts.length;
    try {
      const { text, isError } = await callOnceInPi({
        cwd: project.dir,
        agentDir: agentDir.dir,
        extensionPaths: [EXTENSION_DIR],
        tool: "mcp_modern_long_job",
        args: { steps: 3, stepMs: 60 },
      });
      assert.equal(isError, false, text);
    } finally {
      writeFileSync(config, before);
      await modern.close();
      state.cleanup();
    }
    const spans = jsonSpans(from);
    const call = spans.find((s) => s.name === "tools/call long_job");
    assert.ok(call, spans.map((s) => s.name).join(", "));
    const attributes = attributesOf(call.attributes);
    assert.equal(attributes["network.transport"], "tcp");
    assert.equal(attributes["server.address"], "127.0.0.1");
    assert.equal(Number(attributes["server.port"]), modern.port);
    const polls = spans.filter((s) => s.name.startsWith("tasks/") && s.traceId === call.traceId);
    assert.ok(polls.length > 0, `the task's polling in the call's trace: ${spans.map((s) => s.name).join(", ")}`);
    assert.ok(
      polls.every((s) => s.parentSpanId === call.parentSpanId),
      "children of the pi tool call's span",
    );
  });

  test("a provider pi or another extension registered gets the spans, and the bridge exports nothing itself", async () => {
    exporting("http/json");
    const from = posts.length;
    // Loaded here, after the test that shows nothing of OpenTelemetry is loaded without the variables.
    const api = await import("@opentelemetry/api");
    const { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } = await import("@opentelemetry/sdk-trace");
    const memory = new InMemorySpanExporter();
    assert.ok(
      api.trace.setGlobalTracerProvider(
        new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: memory })] }),
      ),
    );
    try {
      const { text } = await call("traceparent");
      const traceId = (JSON.parse(text) as { traceparent: string }).traceparent.split("-")[1];
      const span = memory.getFinishedSpans().find((s) => s.name === "tools/call traceparent");
      assert.equal(span?.spanContext().traceId, traceId);
      assert.equal(span?.attributes["mcp.method.name"], "tools/call");
      assert.equal(posts.length, from, "nothing posted to the OTLP endpoint");
    } finally {
      api.trace.disable();
    }
  });

  test("two pi sessions in one process: the first one ending leaves the other's requests in its tool calls' traces", async () => {
    exporting("http/json");
    const from = posts.length;
    const options = { cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] };
    let result = "";
    const first = await startInProcessPi(options);
    const second = await startInProcessPi(options);
    try {
      await first.session.bindExtensions({});
      await second.session.bindExtensions({});
    } finally {
      await first.close();
    }
    try {
      second.faux.setResponses([
        fauxAssistantMessage([fauxToolCall("mcp_traced_traceparent", {})], { stopReason: "toolUse" }),
        fauxAssistantMessage("done"),
      ]);
      await second.session.prompt("call it");
      result = JSON.stringify(second.session.messages.at(-2));
    } finally {
      await second.close();
    }
    const spans = jsonSpans(from);
    const request = spans.find((s) => s.name === "tools/call traceparent");
    assert.ok(request, `the span was exported: ${spans.map((s) => s.name).join(", ")}; ${result}`);
    assert.equal(spans.find((s) => s.spanId === request.parentSpanId)?.name, "execute_tool traceparent");
  });

  test("a host's meter provider: the counters of a bridge whose session ended are no longer reported", async () => {
    notExporting();
    const api = await import("@opentelemetry/api");
    const { TracerProvider } = await import("@opentelemetry/sdk-trace");
    const { MeterProvider, PeriodicExportingMetricReader, InMemoryMetricExporter, AggregationTemporality } =
      await import("@opentelemetry/sdk-metrics");
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    api.trace.setGlobalTracerProvider(new TracerProvider());
    api.metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    try {
      await call("traceparent");
      const { resourceMetrics } = await reader.collect();
      const reported = resourceMetrics.scopeMetrics.flatMap((sm) =>
        sm.metrics.filter((m) => m.descriptor.name.startsWith("mcp_bridge.server.") && m.dataPoints.length > 0),
      );
      assert.deepEqual(
        reported.map((m) => m.descriptor.name),
        [],
      );
    } finally {
      await reader.shutdown();
      api.metrics.disable();
      api.trace.disable();
    }
  });

  test("pi -p flushes the spans of its tool call before it exits", async () => {
    const from = posts.length;
    const home = tempDir("mcp-bridge-otel-home-");
    try {
      const env = {
        ...process.env,
        HOME: home.dir,
        PI_CODING_AGENT_DIR: agentDir.dir,
        PI_OFFLINE: "1",
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      };
      const args = [PI_CLI, "--no-session", "-e", EXTENSION_DIR, "-e", FAUX_MODEL_EXTENSION];
      args.push("--provider", "faux", "--model", "faux-1", "-p", "call mcp_traced_traceparent {}");
      const output = await new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, args, { cwd: project.dir, env, stdio: ["ignore", "pipe", "pipe"] });
        let out = "";
        child.stdout.on("data", (d: Buffer) => (out += d));
        child.stderr.on("data", (d: Buffer) => (out += d));
        const timer = setTimeout(() => {
          child.kill("SIGKILL");
          reject(new Error(`pi did not finish within 120 s:\n${out}`));
        }, 120_000);
        child.on("exit", (code) => {
          clearTimeout(timer);
          if (code === 0) resolve(out);
          else reject(new Error(`pi exited with ${code}:\n${out}`));
        });
      });
      const traceId = /"traceparent\\?":\\?"00-([0-9a-f]{32})-/.exec(output)?.[1];
      assert.ok(traceId, `the tool's answer: ${output}`);
      // The receiver may still be reading the last body when the child exits.
      await waitFor(() => jsonSpans(from).some((s) => s.name === "tools/call traceparent"), "the span at the receiver");
      const span = jsonSpans(from).find((s) => s.name === "tools/call traceparent");
      assert.equal(span?.traceId, traceId);
    } finally {
      home.cleanup();
    }
  });
});

test("a protocol the bridge cannot send is put down to the variable that asked for it", async () => {
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" };
  const traces = await startTelemetry({ ...endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc" });
  assert.equal(traces.mode, "off");
  assert.match(traces.problem ?? "", /^OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be http\/protobuf or http\/json/);
  const all = await startTelemetry({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" });
  assert.match(all.problem ?? "", /^OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json/);
});

test("OTEL_TRACES_EXPORTER is a list: otlp among others switches exporting on", async () => {
  const started = await startTelemetry({ OTEL_TRACES_EXPORTER: "console, otlp", OTEL_METRICS_EXPORTER: "none" });
  await stopTelemetry(1000);
  assert.equal(started.mode, "exporting");
});
