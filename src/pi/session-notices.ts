/**
 * What the user sees of the servers without asking: the notice after startup (what failed, what is still
 * connecting, config problems), a notice when a server that was still connecting at startup is ready, and the footer
 * (`MCP 2/3`, in the warning colour while a server is down or waits for a sign-in), kept current from the bridge's
 * events.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { McpBridge } from "../bridge/mcp-bridge.ts";
import type { ConfigProblem } from "../config/types.ts";
import { errorMessage } from "../common/errors.ts";
import { plural } from "../common/text.ts";
import { show } from "./command-context.ts";
import { formatStartupSummary, projectRootWarning, type ServerRow, statusSummary } from "./status-format.ts";

/** The events after which the footer may read differently. */
const FOOTER_EVENTS = [
  "mcp.connected",
  "mcp.disconnected",
  "mcp.error",
  "mcp.connecting",
  "mcp.auth.completed",
  "tools.registered",
  "tools.deregistered",
];

export class SessionNotices {
  private ctx?: ExtensionContext;
  /** Servers still connecting when the session started: each says so once when it is ready. */
  private late = new Set<string>();
  /**
   * The late servers that became ready since the last other notice. pi's TUI writes a notice over the one before it
   * when nothing came between, so each notice names them all: three servers ready within a second left only the last
   * one's name on the screen.
   */
  private ready: string[] = [];

  constructor(
    events: { on(channel: string, handler: (data: unknown) => void): unknown },
    private readonly bridge: McpBridge,
    private readonly rows: () => ServerRow[],
  ) {
    for (const channel of FOOTER_EVENTS) events.on(channel, () => this.updateFooter());
    events.on("mcp.connected", (data) => {
      const { serverId, toolCount } = data as { serverId: string; toolCount: number };
      if (!this.late.delete(serverId)) return;
      this.ready.push(`'${serverId}' (${plural(toolCount, "tool")})`);
      this.tell(
        this.ready.length === 1
          ? `MCP server '${serverId}' is ready: ${plural(toolCount, "tool")}`
          : `MCP servers ready: ${this.ready.join(", ")}`,
      );
    });
    // A server that fails after the startup notice (an import's reload, a slow `npx` that ends in an error) says so.
    bridge.onStartFailed((connection, error) => {
      if (this.late.delete(connection.name))
        this.tell(`MCP server '${connection.name}' failed to start: ${errorMessage(error)}`, "error");
    });
  }

  /**
   * The session started: the startup notice (if there is anything to say) and the footer. `once` are config notices
   * given this time only, beside the config's problems; `told` the servers' notes given at an earlier start
   * (`server\0note`), left out of it.
   */
  sessionStarted(
    ctx: ExtensionContext,
    warnings: readonly string[],
    once: readonly ConfigProblem[],
    told: ReadonlySet<string>,
  ): void {
    this.ctx = ctx;
    this.ready = [];
    this.late = new Set(
      [...this.bridge.connections.values()].filter((c) => c.status === "connecting").map((c) => c.name),
    );
    const rootWarning = projectRootWarning(this.bridge.projectRoot, ctx.cwd);
    const rows = this.rows().map((row) => ({
      ...row,
      warnings: row.warnings.filter((warning) => !told.has(`${row.name}\0${warning}`)),
    }));
    const summary = formatStartupSummary(
      rows,
      [...this.bridge.problems, ...once],
      rootWarning ? [...warnings, rootWarning] : warnings,
    );
    if (summary) show(ctx, summary, "warning");
    this.updateFooter();
  }

  private tell(text: string, level: "info" | "error" = "info"): void {
    if (!this.ctx) return;
    if (level !== "info") this.ready = [];
    try {
      show(this.ctx, text, level);
    } catch {
      // The session this context belonged to is gone (a reload); the new one has its own summary.
    }
  }

  updateFooter(): void {
    const ctx = this.ctx;
    if (!ctx?.hasUI) return;
    try {
      const summary = statusSummary(this.rows());
      ctx.ui.setStatus("mcp", summary && (summary.attention ? ctx.ui.theme.fg("warning", summary.text) : summary.text));
    } catch {
      // A context from a session that has ended.
    }
  }
}
