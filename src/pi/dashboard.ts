/**
 * The live `/mcp` dashboard in pi's TUI: the status table, redrawn every second while it is open; ↑/↓ pick a server,
 * Enter shows its tools (as registered and original), metrics and the tail of its log; Esc goes back or closes.
 */
import { shown, SHOWN } from "../common/terminal-text.ts";
import { type Component, type TUI, truncateToWidth, wrapTextWithAnsi } from "@mariozechner/pi-tui";
import { formatServerDetails, formatStatusTable, type ServerRow } from "./status-format.ts";

const REFRESH_MS = 1000;
const LOG_TAIL_LINES = 12;
/** The table's 8 lines around its rows (title, header, rules, totals, help), and pi's own 4 below the dashboard. */
const NOT_ROWS = 12;

export interface DashboardSource {
  rows(): ServerRow[];
  /** The last lines of a server's own log (its stderr), oldest first. */
  logTail(server: string, lines: number): string[];
}

/** Keys as the terminal sends them (pi's matchesKey would need its keybinding setup; these few are fixed). */
const KEYS = {
  up: ["\x1b[A", "\x1bOA", "k"],
  down: ["\x1b[B", "\x1bOB", "j"],
  enter: ["\r", "\n"],
  back: ["\x1b", "q", "\x03"],
};

export class McpDashboard implements Component {
  private selected = 0;
  private top = 0; // the first row shown, where the terminal is too short for all of them
  private detail?: string;
  private scroll = 0; // the first line of a server's details shown, where they do not fit
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly tui: Pick<TUI, "requestRender"> & { terminal?: { rows: number } },
    private readonly source: DashboardSource,
    private readonly done: () => void,
  ) {
    this.timer = setInterval(() => this.tui.requestRender(), REFRESH_MS);
    this.timer.unref();
  }

  render(width: number): string[] {
    const rows = this.source.rows();
    // Never below 0: after ↓ with no rows yet, the first row that comes is the one selected.
    this.selected = Math.max(0, Math.min(this.selected, rows.length - 1));
    const row = this.detail !== undefined ? rows.find((r) => r.name === this.detail) : undefined;
    if (!row) this.detail = undefined; // its server was removed: the table is shown, and the keys are the table's
    const fit = Math.max(1, width);
    // A server's details (a long error above all) are read whole, wrapped; the table's columns keep to one line each.
    if (!row) return this.tableLines(rows).map((line) => truncateToWidth(line, fit));
    const lines = this.detailLines(row).flatMap((line) => {
      const pad = " ".repeat(Math.min(line.length - line.trimStart().length, fit - 1));
      return wrapTextWithAnsi(line.trimStart(), fit - pad.length).map((part) => pad + part);
    });
    // Lines past the terminal's height could not be read (its state and error first of all): a window of them scrolls.
    const room = Math.max(3, (this.tui.terminal?.rows ?? Infinity) - 5); // pi's own 4 lines, and the help line
    if (lines.length <= room + 1) return lines;
    this.scroll = Math.min(this.scroll, lines.length - 1 - room);
    const at = `lines ${this.scroll + 1}–${this.scroll + room} of ${lines.length - 1}`;
    return [...lines.slice(this.scroll, this.scroll + room), truncateToWidth(`↑/↓ scroll (${at}) · Esc: back`, fit)];
  }

  private tableLines(rows: ServerRow[]): string[] {
    if (rows.length === 0) return ["No MCP servers configured. Add one with /mcp add.", "", "Esc to close"];
    const table = formatStatusTable(rows, Date.now(), this.selected);
    // Rows past the terminal's height could not be reached: a window of them follows the selected one.
    const room = Math.max(3, (this.tui.terminal?.rows ?? Infinity) - NOT_ROWS);
    this.top = Math.min(Math.max(this.top, this.selected - room + 1), this.selected, Math.max(0, rows.length - room));
    const shown = rows.length > room ? ` · ${this.top + 1}–${this.top + room} of ${rows.length}` : "";
    return [
      ...table.slice(0, 4),
      ...table.slice(4 + this.top, 4 + Math.min(this.top + room, rows.length)),
      ...table.slice(4 + rows.length),
      "",
      `↑/↓ choose a server · Enter: its tools, metrics and log · Esc: close${shown}`,
    ];
  }

  private detailLines(row: ServerRow): string[] {
    const log = this.source.logTail(row.name, LOG_TAIL_LINES);
    // Its log is what it writes to stderr: a remote server has none (as /mcp logs says).
    const none = row.transport.startsWith("stdio") ? "Its log is empty." : "It is remote: it has no stderr.";
    return [
      ...formatServerDetails(row),
      "",
      log.length ? `Last lines of its log:` : none,
      ...log.map((l) => `    ${shown(l, SHOWN.line, "line")}`),
      "",
      "Esc: back to the table",
    ];
  }

  handleInput(data: string): void {
    if (this.detail !== undefined) {
      if (KEYS.back.includes(data)) this.detail = undefined;
      else if (KEYS.up.includes(data) || KEYS.down.includes(data))
        this.scroll = Math.max(0, this.scroll + (KEYS.up.includes(data) ? -1 : 1));
    } else if (KEYS.up.includes(data)) this.selected = Math.max(0, this.selected - 1);
    else if (KEYS.down.includes(data)) this.selected = Math.min(this.source.rows().length - 1, this.selected + 1);
    else if (KEYS.enter.includes(data)) [this.detail, this.scroll] = [this.source.rows()[this.selected]?.name, 0];
    else if (KEYS.back.includes(data)) {
      this.dispose();
      this.done();
      return;
    }
    this.tui.requestRender();
  }

  invalidate(): void {}

  dispose(): void {
    clearInterval(this.timer);
  }
}
