/**
 * Plain-text reports: the startup notice and the `/mcp` listing. Pure.
 */
import * as path from "node:path";
import { type ConfigProblem, describeSource } from "./config.ts";
import type { ServerMetrics } from "./health.ts";

export interface ServerRow {
  name: string;
  status: string;
  transport: string;
  source: string;
  enabled: boolean;
  toolCount: number;
  error?: string;
  warnings: string[];
  tools: Array<{ name: string; originalName: string }>;
  /** `${VAR}` names the config uses and whether each is set. */
  vars: Array<{ name: string; set: boolean }>;
  /** Epoch ms of the server's last answer. */
  lastActive?: number;
  /** What the server is doing about being down: `retry 5/10 in 8s`, `connecting (attempt 2)`. */
  detail?: string;
  metrics?: ServerMetrics;
}

/** RISE-056's marks: green up, yellow on the way, red down, white not started. */
export const STATUS_MARK: Record<string, string> = {
  connected: "🟢",
  connecting: "🟡",
  disconnected: "🔴",
  error: "🔴",
  "not started": "⚪",
  disabled: "⚫",
};

/** `45s`, `12m`, `3h 5m`: for people, not for parsing. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
}

/** One line of a server's session metrics; undefined before anything happened. */
export function formatMetrics(m: ServerMetrics): string | undefined {
  if (m.downtimeMs === 0 && m.reconnections === 0 && m.toolCalls === 0) return undefined;
  const parts = [`up ${formatDuration(m.uptimeMs)}`];
  if (m.downtimeMs > 0) parts.push(`down ${formatDuration(m.downtimeMs)}`);
  if (m.reconnections > 0) {
    parts.push(`${m.reconnections} reconnection${m.reconnections === 1 ? "" : "s"} (avg ${((m.averageReconnectMs ?? 0) / 1000).toFixed(1)} s)`);
  }
  if (m.toolCalls > 0) parts.push(`${m.toolCalls} call${m.toolCalls === 1 ? "" : "s"}, ${Math.round((m.successRate ?? 0) * 100)}% ok`);
  return parts.join(", ");
}

function indent(text: string, prefix: string): string {
  return text
    .split("\n")
    .map((line) => prefix + line)
    .join("\n");
}

export function formatProblem(problem: ConfigProblem): string {
  const server = problem.server !== undefined ? `server '${problem.server}' in ` : "";
  return `${problem.level === "error" ? "error" : "warning"}: ${server}${describeSource(problem.source)}: ${problem.message}`;
}

/**
 * pi gives extension factories no working directory, so the bridge reads the project config from the process's; a
 * session that runs elsewhere (an SDK embedder's `cwd`) is told, since its project servers may be the wrong ones.
 */
export function projectRootWarning(projectRoot: string, sessionCwd: string): string | undefined {
  if (path.resolve(projectRoot) === path.resolve(sessionCwd)) return undefined;
  return `the project config was read from ${projectRoot}, but this session runs in ${sessionCwd}`;
}

/** The one notice shown after startup; `undefined` when there is nothing to report. */
export function formatStartupSummary(rows: readonly ServerRow[], problems: readonly ConfigProblem[], warnings: readonly string[]): string | undefined {
  const failed = rows.filter((r) => r.enabled && r.status !== "connected" && r.status !== "not started" && r.status !== "connecting");
  const pending = rows.filter((r) => r.enabled && r.status === "connecting");
  const warned = rows.filter((r) => r.warnings.length > 0);
  if (failed.length === 0 && pending.length === 0 && problems.length === 0 && warnings.length === 0 && warned.length === 0) return undefined;
  const connected = rows.filter((r) => r.status === "connected");
  const lines: string[] = [];
  const tools = connected.reduce((n, r) => n + r.toolCount, 0);
  const lazy = rows.filter((r) => r.enabled && r.status === "not started");
  const lazyNote = lazy.length ? ` (${lazy.length} start on first use)` : "";
  lines.push(`MCP: ${connected.length} of ${rows.filter((r) => r.enabled).length} servers connected${lazyNote}, ${tools} tools`);
  for (const row of failed) lines.push(indent(`✕ ${row.name}: ${row.error ?? row.status}${row.detail ? ` (${row.detail})` : ""}`, "  "));
  for (const row of pending) lines.push(`  … ${row.name}: still connecting; its tools appear when it is ready`);
  for (const row of warned) for (const warning of row.warnings) lines.push(`  ! ${row.name}: ${warning}`);
  for (const problem of problems) lines.push(`  ! ${formatProblem(problem)}`);
  for (const warning of warnings) lines.push(`  ! ${warning}`);
  return lines.join("\n");
}

/** The `/mcp` listing: each server's state, health, metrics and tools. */
export function formatServerList(rows: readonly ServerRow[], problems: readonly ConfigProblem[], now = Date.now()): string {
  if (rows.length === 0 && problems.length === 0) {
    return "No MCP servers configured. Add them to .pi/mcp.json (project) or ~/.pi/agent/mcp.json (user) under \"mcpServers\".";
  }
  const lines: string[] = ["MCP servers"];
  for (const row of rows) {
    const status = row.enabled ? row.status : "disabled";
    const mark = STATUS_MARK[status] ?? "?";
    const active = row.lastActive !== undefined ? `  last active ${formatDuration(now - row.lastActive)} ago` : "";
    const detail = row.detail ? `  ${row.detail}` : "";
    lines.push(`${mark} ${row.name}  ${status}  ${row.transport}  ${row.toolCount} tool${row.toolCount === 1 ? "" : "s"}  (${row.source})${active}${detail}`);
    if (row.error && row.status !== "connected") lines.push(indent(row.error, "    "));
    const metrics = row.metrics && formatMetrics(row.metrics);
    if (metrics) lines.push(`    ${metrics}`);
    for (const warning of row.warnings) lines.push(`    ! ${warning}`);
    if (row.vars.length) {
      lines.push(`    variables: ${row.vars.map((v) => `${v.name} ${v.set ? "set" : "NOT SET"}`).join(", ")}`);
    }
    for (const tool of row.tools) {
      lines.push(tool.name === tool.originalName ? `    - ${tool.name}` : `    - ${tool.name}  (${tool.originalName})`);
    }
  }
  const connected = rows.filter((r) => r.status === "connected");
  const tools = rows.reduce((n, r) => n + (r.status === "connected" || r.status === "not started" ? r.toolCount : 0), 0);
  lines.push(`${rows.length} server${rows.length === 1 ? "" : "s"} configured | ${connected.length} connected | ${tools} tools available`);
  for (const problem of problems) lines.push(`! ${formatProblem(problem)}`);
  return lines.join("\n");
}
