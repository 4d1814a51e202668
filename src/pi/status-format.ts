/**
 * Plain-text reports: the startup notice and the `/mcp` listing. Pure.
 */
import * as path from "node:path";
import { visibleWidth } from "@mariozechner/pi-tui";
import { type ConfigProblem, describeSource } from "../config/types.ts";
import type { ServerMetrics } from "../connection/health.ts";
import type { DevWatchStatus } from "../bridge/dev-restarts.ts";
import { plural, withoutServerName } from "../common/text.ts";
import { commandArgument } from "../config/validate/name.ts";

export interface ServerRow {
  name: string;
  status: string;
  transport: string;
  /** The MCP revision the server speaks (`2026-07-28`, `2025-11-25`, …), once known; else what its config asks for. */
  protocol?: string;
  source: string;
  enabled: boolean;
  toolCount: number;
  error?: string;
  warnings: string[];
  /** Each tool's names and, where known, its exposure (`direct`, `deferred, loaded`, `hidden (auto)`, …). */
  tools: Array<{ name: string; originalName: string; exposure?: string }>;
  /** Estimated tokens the server's declared tools add to each request to the model. */
  requestTokens?: number;
  /** For a project server not trusted: what it would run or connect to, as written (`${VAR}` names, no values). */
  untrustedDefinition?: string[];
  /** `${VAR}` names the config uses and whether each is set (an empty value is set, and sent empty). */
  vars: Array<{ name: string; state: "set" | "empty" | "NOT SET" }>;
  /** Epoch ms of the server's last answer. */
  lastActive?: number;
  /** What the server is doing about being down: `retry 5/10 in 8s`, `connecting (attempt 2)`. */
  detail?: string;
  metrics?: ServerMetrics;
  /** Set for a `shared` server: how many pi sessions use its one process now (known while connected), its pid. */
  shared?: { sessions?: number; pid?: number; idleMs: number };
  /** Set for a server that runs sandboxed: what its sandbox allows (known once it started), what it refused. */
  sandbox?: { allows?: string[]; refused: number; recent: string[] };
  /** Set for a server restarted when its files change (`dev.watch`). */
  watch?: DevWatchStatus;
}

/** The mark of a server that runs sandboxed. */
const SANDBOX_MARK = "🛡";

/**
 * The status marks: green up, yellow on the way, red down (or waiting for a sign-in), white not started, black off (in
 * its config, or for this session only: the details say which), a lock for a project server the user has not trusted.
 */
const STATUS_MARK: Record<string, string> = {
  connected: "🟢",
  connecting: "🟡",
  disconnected: "🔴",
  error: "🔴",
  "needs sign-in": "🔴",
  "not started": "⚪",
  disabled: "⚫",
  off: "⚫",
  "not trusted": "🔒",
};

/** Whether a server's tools can be used: it is connected, or lazy (its tools are registered from the cache first). */
export const toolsUsable = (status: string) => status === "connected" || status === "not started";

/** `45s`, `12m`, `3h 5m`: for people, not for parsing. */
function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
}

/** One line of a server's session metrics; undefined before anything happened. */
function formatMetrics(m: ServerMetrics): string | undefined {
  if (m.downtimeMs === 0 && m.reconnections === 0 && m.toolCalls === 0 && m.notificationsDropped === 0)
    return undefined;
  const parts = [`up ${formatDuration(m.uptimeMs)}`];
  if (m.downtimeMs > 0) parts.push(`down ${formatDuration(m.downtimeMs)}`);
  if (m.reconnections > 0)
    parts.push(`${plural(m.reconnections, "reconnection")} (avg ${((m.averageReconnectMs ?? 0) / 1000).toFixed(1)} s)`);
  if (m.toolCalls > 0) parts.push(`${plural(m.toolCalls, "call")}, ${Math.round((m.successRate ?? 0) * 100)}% ok`);
  if (m.notificationsDropped > 0) parts.push(`${plural(m.notificationsDropped, "notification")} dropped in floods`);
  return parts.join(", ");
}

function indent(text: string, prefix: string): string {
  return prefix + text.replaceAll("\n", `\n${prefix}`);
}

function formatProblem(problem: ConfigProblem): string {
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

/**
 * A server on its way up that has not failed yet: its first connect (or one after a drop) under way. One that failed
 * and is being tried again is not: it is reported with its error.
 */
function starting(row: ServerRow): boolean {
  return row.enabled && row.status === "connecting" && row.error === undefined;
}

/** The one notice shown after startup; `undefined` when there is nothing to report. */
export function formatStartupSummary(
  rows: readonly ServerRow[],
  problems: readonly ConfigProblem[],
  warnings: readonly string[],
): string | undefined {
  const held = rows.filter((r) => r.enabled && r.status === "not trusted");
  const failed = rows.filter(
    (r) => r.enabled && !["connected", "not started", "not trusted", "off"].includes(r.status) && !starting(r),
  );
  const pending = rows.filter(starting);
  const warned = rows.filter((r) => r.warnings.length > 0);
  if (failed.length + pending.length + held.length + problems.length + warnings.length + warned.length === 0)
    return undefined;
  const connected = rows.filter((r) => r.status === "connected");
  const lines: string[] = [];
  const tools = connected.reduce((n, r) => n + r.toolCount, 0);
  const lazy = rows.filter((r) => r.enabled && r.status === "not started");
  const lazyNote = lazy.length ? ` (${lazy.length} start on first use)` : "";
  // Servers held for trust are not counted as ones that could connect: they have their own line.
  const runnable = rows.filter((r) => r.enabled && r.status !== "not trusted" && r.status !== "off");
  if (runnable.length)
    lines.push(`MCP: ${connected.length} of ${runnable.length} servers connected${lazyNote}, ${tools} tools`);
  for (const row of failed) {
    // What is being done about it goes on the error's first line, before a stderr tail it may quote.
    const [first = "", ...rest] = (row.error ?? row.status).split("\n");
    lines.push(indent([`✕ ${row.name}: ${withDetail(first, row.detail)}`, ...rest].join("\n"), "  "));
  }
  for (const row of pending) lines.push(`  … ${row.name}: still connecting; its tools appear when it is ready`);
  if (held.length) lines.push(`${runnable.length ? "  🔒" : "MCP: 🔒"} ${formatUntrusted(held.map((r) => r.name))}`);
  // The same warning of several servers (each npx server started offline) is one line naming them all.
  const servers = new Map<string, string[]>();
  for (const row of warned)
    for (const warning of row.warnings) servers.set(warning, [...(servers.get(warning) ?? []), row.name]);
  for (const [warning, names] of servers) lines.push(`  ! ${names.join(", ")}: ${warning}`);
  for (const problem of problems) lines.push(`  ! ${formatProblem(problem)}`);
  for (const warning of warnings) lines.push(`  ! ${warning}`);
  return lines.join("\n");
}

/** The one line about project servers held back until the user trusts them. */
function formatUntrusted(names: readonly string[]): string {
  const one = names.length === 1;
  return `not trusted, not started (project config): ${names.join(", ")}. /mcp list shows what ${one ? "it runs" : "they run"}; /mcp trust ${one ? commandArgument(names[0]!) : "[server…]"} starts ${one ? "it" : "them"} (add --sandboxed to run ${one ? "it" : "them"} in a sandbox).`;
}

// Widths in terminal columns, as pi's TUI counts them: the status marks, and Chinese, Japanese and Korean letters (a
// server named 高德地图, an error in Chinese), take two.
function pad(text: string, width: number, align: "left" | "right" = "left"): string {
  const fill = " ".repeat(Math.max(0, width - visibleWidth(text)));
  return align === "left" ? text + fill : fill + text;
}

/** The first line of `text` within `max` columns, ending in `…` where cut. */
function cut(text: string, max: number): string {
  const line = text.split("\n")[0] ?? "";
  if (visibleWidth(line) <= max) return line;
  let kept = "";
  let width = 0;
  for (const char of line) {
    width += visibleWidth(char);
    if (width > max - 1) break;
    kept += char;
  }
  return `${kept}…`;
}

/** `text (detail)`, or `text; detail` when the detail has its own parentheses (`connecting (attempt 1/5)`). */
function withDetail(text: string, detail: string | undefined): string {
  // A message that already says what is being done about it ("… so it was not retried") is not told it twice.
  if (!detail || text.includes(detail)) return text;
  // A message that ends a sentence is followed by the detail's own.
  if (text.endsWith(".")) return `${text} ${detail[0]!.toUpperCase()}${detail.slice(1)}.`;
  return detail.includes("(") ? `${text}; ${detail}` : `${text} (${detail})`;
}

/** What the Details column says: the first line of the error, with what is being done about it. */
function detailCell(row: ServerRow): string {
  if (!row.enabled) return "disabled";
  const error = row.status !== "connected" && row.error ? withoutServerName(row.error) : "";
  if (error && row.detail) return withDetail(cut(error, 60), row.detail);
  return error ? cut(error, 72) : (row.detail ?? "");
}

function statusOf(row: ServerRow): string {
  return row.enabled ? row.status : "disabled";
}

/**
 * The footer's short form: `MCP 2/3`, `MCP 1/3, 2 starting` while servers are still on their way up, and whether
 * something needs attention (a server down, failing, or waiting for a sign-in).
 */
export function statusSummary(rows: readonly ServerRow[]): { text: string; attention: boolean } | undefined {
  // A project server held for trust cannot be up; the startup notice and /mcp say so.
  const enabled = rows.filter((r) => r.enabled && !["disabled", "not trusted", "off"].includes(r.status));
  if (enabled.length === 0) return undefined;
  const up = enabled.filter((r) => toolsUsable(r.status)).length;
  const pending = enabled.filter(starting).length;
  const attention = enabled.some(
    (r) =>
      r.status === "error" ||
      r.status === "disconnected" ||
      r.status === "needs sign-in" ||
      (r.status === "connecting" && !starting(r)),
  );
  return { text: `MCP ${up}/${enabled.length}${pending ? `, ${pending} starting` : ""}`, attention };
}

/** The totals line: servers configured, connected, tools the model can use (a lazy server's cached ones included). */
function formatTotals(rows: readonly ServerRow[]): string {
  const connected = rows.filter((r) => r.status === "connected");
  const tools = rows.reduce((n, r) => n + (toolsUsable(r.status) ? r.toolCount : 0), 0);
  return `${plural(rows.length, "server")} configured | ${connected.length} connected | ${tools} tools available`;
}

/**
 * The status table: one row a server (mark, name, transport, protocol revision, tools, last active, source, details), then the
 * totals. `selected` marks a row (the dashboard's cursor).
 */
export function formatStatusTable(rows: readonly ServerRow[], now = Date.now(), selected?: number): string[] {
  const header = ["Server", "Status", "Transport", "Protocol", "Tools", "Last Active", "Source", "Details"];
  const cells = rows.map((row) => {
    const status = statusOf(row);
    const tools = toolsUsable(status) ? String(row.toolCount) : "—";
    const active = row.lastActive !== undefined ? `${formatDuration(now - row.lastActive)} ago` : "—";
    return [
      row.sandbox ? `${row.name} ${SANDBOX_MARK}` : row.name,
      STATUS_MARK[status] ?? "?",
      row.transport,
      row.protocol ?? "—",
      tools,
      active,
      row.source,
      detailCell(row),
    ];
  });
  const widths = header.map((h, i) => Math.max(visibleWidth(h), ...cells.map((c) => visibleWidth(c[i]!))));
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === header.length - 1 ? v : pad(v, widths[i]!, i === 4 ? "right" : "left")))
      .join("  ")
      .trimEnd();
  const body = [line(header), ...cells.map(line)];
  const ruleWidth = Math.max(...body.map((l) => visibleWidth(l))) + 2;
  const rule = "─".repeat(Math.min(ruleWidth, 100));
  return [
    "MCP Server Status",
    rule,
    `  ${body[0]}`,
    rule,
    ...body.slice(1).map((l, i) => `${i === selected ? "> " : "  "}${l}`),
    rule,
    `  ${formatTotals(rows)}`,
  ];
}

/** One server in full: state, error, warnings, variables (set or not, never values), metrics, tools. */
export function formatServerDetails(row: ServerRow): string[] {
  const status = statusOf(row);
  const cost =
    row.requestTokens !== undefined && row.toolCount > 0
      ? `  about ${row.requestTokens.toLocaleString("en-US")} tokens per request`
      : "";
  const protocol = row.protocol ? `  MCP ${row.protocol}` : "";
  const lines = [
    `${row.name}  ${status}  ${row.transport}${protocol}  ${plural(row.toolCount, "tool")}${cost}  (${row.source})`,
  ];
  if (row.untrustedDefinition)
    lines.push(
      `    not trusted, so not started: /mcp trust ${commandArgument(row.name)} starts it`,
      ...row.untrustedDefinition.map((line) => `    ${line}`),
    );
  if (row.status === "off" && row.detail) lines.push(`    ${row.detail}`);
  if (row.error && row.status !== "connected") lines.push(indent(row.error, "    "));
  const metrics = row.metrics && formatMetrics(row.metrics);
  if (metrics) lines.push(`    ${metrics}`);
  for (const warning of row.warnings) lines.push(`    ! ${warning}`);
  if (row.shared) lines.push(sharedLine(row.shared));
  if (row.sandbox) lines.push(...sandboxLines(row.sandbox));
  if (row.watch) lines.push(watchLine(row.watch));
  if (row.vars.length) lines.push(`    variables: ${row.vars.map((v) => `${v.name} ${v.state}`).join(", ")}`);
  for (const tool of row.tools) {
    const names = tool.name === tool.originalName ? tool.name : `${tool.name}  (${tool.originalName})`;
    lines.push(tool.exposure ? `    - ${names}  · ${tool.exposure}` : `    - ${names}`);
  }
  return lines;
}

/** A shared server's one process: who uses it, and when it stops. */
function sharedLine(shared: NonNullable<ServerRow["shared"]>): string {
  const users = shared.sessions === undefined ? "" : `, used by ${plural(shared.sessions, "pi session")} now`;
  const pid = shared.pid === undefined ? "" : ` (pid ${shared.pid})`;
  const idle = formatDuration(shared.idleMs);
  return `    shared: one process${pid} for every pi session of yours${users}; it stops ${idle} after the last one leaves`;
}

/** What a server's `dev.watch` watches, and the restarts it made. */
function watchLine(watch: DevWatchStatus): string {
  const folders =
    watch.folders === undefined ? "its folders being walked" : `${plural(watch.folders, "folder")} watched`;
  const restarts = watch.restarts ? `; restarted ${plural(watch.restarts, "time")}, last for ${watch.lastFile}` : "";
  const failed = watch.failed ? `; watching stopped: ${watch.failed}` : "";
  return `    restarts when ${watch.globs.join(", ")} change (dev.watch): ${folders}${restarts}${failed}`;
}

/** What a sandboxed server's sandbox allows, and what it refused lately. */
function sandboxLines(sandbox: NonNullable<ServerRow["sandbox"]>): string[] {
  const lines = [
    `    ${SANDBOX_MARK} sandboxed${sandbox.allows ? "" : " (what it allows is known once it has started)"}`,
  ];
  for (const line of sandbox.allows ?? []) lines.push(`      ${line}`);
  if (sandbox.refused > 0) {
    lines.push(`      refused ${plural(sandbox.refused, "time")}; the last:`);
    for (const message of sandbox.recent) lines.push(`      - ${message}`);
  }
  return lines;
}

/** The `/mcp` listing as plain text: the table, then each server in full, then config problems. */
export function formatServerList(
  rows: readonly ServerRow[],
  problems: readonly ConfigProblem[],
  now = Date.now(),
  notes: readonly string[] = [],
): string {
  if (rows.length === 0 && problems.length === 0)
    return 'No MCP servers configured. Add one with /mcp add, or in .pi/mcp.json (project) or ~/.pi/agent/mcp.json (user) under "mcpServers".';
  const lines = formatStatusTable(rows, now);
  if (notes.length) lines.push(...notes.map((note) => `  ${note}`));
  for (const row of rows) lines.push("", ...formatServerDetails(row));
  if (problems.length) lines.push("");
  for (const problem of problems) lines.push(`! ${formatProblem(problem)}`);
  return lines.join("\n");
}

/**
 * What pi says while it waits for npm to roll back the npx installs its ending stopped (`names` are the servers), or
 * undefined: without it, the wait looks like a hang.
 */
export function rollbackNote(names: readonly string[], seconds: number): string | undefined {
  if (names.length === 0) return undefined;
  const which = names.map((name) => `'${name}'`).join(", ");
  return `MCP: waiting up to ${seconds} s for npm to roll back the unfinished npx install of ${which} (stopped partway, it would leave npx's copy of the package broken)`;
}
