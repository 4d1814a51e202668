/**
 * Plain-text reports: the startup notice and the `/mcp` listing. Pure.
 */
import * as path from "node:path";
import { type ConfigProblem, describeSource } from "./config.ts";

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
}

const STATUS_MARK: Record<string, string> = {
  connected: "●",
  connecting: "◐",
  disconnected: "○",
  failed: "✕",
  disabled: "–",
  idle: "·",
  closed: "○",
};

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
  const failed = rows.filter((r) => r.enabled && r.status !== "connected");
  const warned = rows.filter((r) => r.warnings.length > 0);
  if (failed.length === 0 && problems.length === 0 && warnings.length === 0 && warned.length === 0) return undefined;
  const connected = rows.filter((r) => r.status === "connected");
  const lines: string[] = [];
  const tools = connected.reduce((n, r) => n + r.toolCount, 0);
  lines.push(`MCP: ${connected.length} of ${rows.filter((r) => r.enabled).length} servers connected, ${tools} tools`);
  for (const row of failed) lines.push(indent(`✕ ${row.name}: ${row.error ?? row.status}`, "  "));
  for (const row of warned) for (const warning of row.warnings) lines.push(`  ! ${row.name}: ${warning}`);
  for (const problem of problems) lines.push(`  ! ${formatProblem(problem)}`);
  for (const warning of warnings) lines.push(`  ! ${warning}`);
  return lines.join("\n");
}

/** The `/mcp` listing: each server's state and its tools. */
export function formatServerList(rows: readonly ServerRow[], problems: readonly ConfigProblem[]): string {
  if (rows.length === 0 && problems.length === 0) {
    return "No MCP servers configured. Add them to .pi/mcp.json (project) or ~/.pi/agent/mcp.json (user) under \"mcpServers\".";
  }
  const lines: string[] = ["MCP servers"];
  for (const row of rows) {
    const mark = STATUS_MARK[row.status] ?? "?";
    const status = row.enabled ? row.status : "disabled";
    lines.push(`${mark} ${row.name}  ${status}  ${row.transport}  ${row.toolCount} tool${row.toolCount === 1 ? "" : "s"}  (${row.source})`);
    if (row.error && row.status !== "connected") lines.push(indent(row.error, "    "));
    for (const warning of row.warnings) lines.push(`    ! ${warning}`);
    if (row.vars.length) {
      lines.push(`    variables: ${row.vars.map((v) => `${v.name} ${v.set ? "set" : "NOT SET"}`).join(", ")}`);
    }
    for (const tool of row.tools) {
      lines.push(tool.name === tool.originalName ? `    - ${tool.name}` : `    - ${tool.name}  (${tool.originalName})`);
    }
  }
  const connected = rows.filter((r) => r.status === "connected");
  const tools = connected.reduce((n, r) => n + r.toolCount, 0);
  lines.push(`${rows.length} server${rows.length === 1 ? "" : "s"} configured | ${connected.length} connected | ${tools} tools available`);
  for (const problem of problems) lines.push(`! ${formatProblem(problem)}`);
  return lines.join("\n");
}
