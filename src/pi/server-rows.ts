/**
 * Each configured server as `/mcp`, the dashboard and the footer show it: one `ServerRow` built from the server's
 * connection state and the tools registered for it.
 */
import * as os from "node:os";
import { shown, SHOWN } from "../common/terminal-text.ts";
import { describePolicy } from "../sandbox/sandbox-policy.ts";
import { isSandboxed } from "../config/sandbox-setting.ts";
import type { McpBridge } from "../bridge/mcp-bridge.ts";
import { stateDetail } from "../connection/connection-state.ts";
import type { ServerConnection } from "../connection/server-connection.ts";
import { configVarRefs, type Environment } from "../config/substitute.ts";
import { scopeLabel } from "../config/types.ts";
import { commandArgument } from "../config/validate/name.ts";
import { describeForTrust } from "../trust/trust-rules.ts";
import { type ServerRow, toolsUsable } from "./status-format.ts";
import { definitionChars, estimatedTokens, type ToolWire } from "../exposure/definition-cost.ts";
import type { ToolExposure } from "../exposure/tool-exposure.ts";
import type { ToolRegistry } from "./tool-registry.ts";

/** Which tools the model is sent, how the current model's API declares each, and each server's part of the catalog. */
export interface RequestCost {
  exposure: ToolExposure;
  wire: ToolWire;
  /** The characters of the system prompt's catalog of deferred tools that are each server's. */
  catalog?: ReadonlyMap<string, number>;
}

/** The tokens a server's tools add to each request now: the declared ones, and its deferred tools' catalog line. */
function requestTokens(
  registry: ToolRegistry,
  server: string,
  tools: ReturnType<ToolRegistry["toolsOf"]>,
  cost: RequestCost,
): number {
  let chars = cost.catalog?.get(server) ?? 0;
  for (const tool of tools) {
    const definition = registry.definition(tool.name);
    if (definition && cost.exposure.isDeclared(tool.server, tool.originalName))
      chars += definitionChars(definition, cost.wire);
  }
  return estimatedTokens(chars);
}

function sourceLabel(c: ServerConnection): string {
  const { raw, source, enabledSource } = c.config;
  // A higher file that switches it on or off is named: the file that defines it would not say why it is off (or on).
  const switched = enabledSource ? `, switched in ${scopeLabel(enabledSource)}` : "";
  return typeof raw.importedFrom === "string"
    ? `${scopeLabel(source)}${switched}, imported from ${shown(raw.importedFrom, SHOWN.line, "line")}`
    : `${scopeLabel(source)}${switched}`;
}

/** What `/mcp` says of a sandboxed server's sandbox: its last start's rules, and its refusals. */
function sandboxView(c: ServerConnection): ServerRow["sandbox"] {
  const { policy, count, recent } = c.sandboxRefusals;
  return {
    allows: policy && describePolicy(policy, os.homedir()).map((line) => shown(line, SHOWN.body, "line")),
    refused: count,
    recent: recent.map((line) => shown(line, SHOWN.line, "line")),
  };
}

/** A server switched off for this session: no tools, no state of its own, and how to turn it on. */
function offRow(c: ServerConnection, costed: boolean): ServerRow {
  return {
    name: c.name,
    status: "off",
    transport: c.config.transport,
    source: sourceLabel(c),
    enabled: true,
    toolCount: 0,
    detail: `off for this session: /mcp on ${commandArgument(c.name)} turns it on`,
    warnings: [],
    tools: [],
    requestTokens: costed ? 0 : undefined,
    vars: [],
  };
}

/** Each server's row; with `cost`, each tool's exposure and what the server's declared tools cost per request. */
export function serverRows(
  bridge: McpBridge,
  registry: ToolRegistry,
  env: Environment,
  cost?: RequestCost,
  /** Whether the server is switched off for this session (`/mcp off`); its config's `enabled: false` comes first. */
  isOff: (connection: ServerConnection) => boolean = () => false,
  now = Date.now(),
): ServerRow[] {
  return [...bridge.connections.values()].map((c) => {
    if (c.status !== "disabled" && isOff(c)) return offRow(c, cost !== undefined);
    const tools = registry.toolsOf(c.name);
    const shared = c.config.shared && { ...c.shared, idleMs: c.config.shared.idleMs };
    const transport = shared
      ? `stdio, shared${shared.sessions ? ` ×${shared.sessions}` : ""}`
      : c.transport && c.fellBackToSse
        ? "sse (fallback)"
        : (c.transport ?? c.config.transport);
    // A project server the user has not trusted is held: never started, whatever its own state says.
    const trusted = c.trusted;
    return {
      name: c.name,
      status: trusted ? c.status : "not trusted",
      transport,
      // What it speaks once it has connected; before that, a revision its config pins ("auto" says nothing yet).
      protocol: c.protocolVersion ?? (c.config.protocol === "auto" ? undefined : c.config.protocol),
      source: sourceLabel(c),
      enabled: c.config.enabled && c.status !== "disabled", // `/mcp disable` switches it off without a new config
      toolCount: toolsUsable(c.status) ? tools.length : 0,
      lastActive: c.health.lastHeard,
      detail: !trusted
        ? `/mcp trust ${commandArgument(c.name)} runs it`
        : c.installing
          ? "npx is installing its package"
          : stateDetail(c.state, c.config.retry.maxAttempts, now),
      metrics: c.health.metrics(now),
      error: c.lastError === undefined ? undefined : shown(c.lastError, SHOWN.body),
      warnings: [...c.warnings, ...Object.values(registry.notesFor(c.name)).flat()].map((w) => shown(w, SHOWN.body)),
      tools: tools.map((t) => ({
        name: t.name,
        originalName: t.originalName,
        exposure: cost?.exposure.label(t.server, t.originalName),
      })),
      requestTokens: cost && requestTokens(registry, c.name, tools, cost),
      untrustedDefinition: trusted ? undefined : describeForTrust(c.config),
      // Set to "" is set: the server gets it empty, as from a shell.
      vars: configVarRefs(c.config).map((name) => ({
        name,
        state: env[name] === undefined ? "NOT SET" : env[name] === "" ? "empty" : "set",
      })),
      sandbox: isSandboxed(bridge.sandboxOf(c.config)) ? sandboxView(c) : undefined,
      shared: shared || undefined,
      watch: bridge.devWatchOf(c),
    };
  });
}
