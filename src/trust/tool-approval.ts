/**
 * Asks the user before an MCP tool runs, through pi's `tool_call` event: Allow once, Allow for this session, Always
 * allow (saved to the server's `autoApprove`), or Deny. What needs asking is decided by ./approval-policy.ts;
 * another extension can answer first on pi's event bus (`mcp.approval.request`); without a UI a call that needs asking
 * is refused with the setting that would allow it. Only the bridge's own tools are looked at.
 */
import type { ExtensionContext, ToolCallEventResult } from "@mariozechner/pi-coding-agent";
import type { ToolAnnotations } from "@modelcontextprotocol/client";
import { errorMessage } from "../common/errors.ts";
import type { Logger } from "../common/log-file.ts";
import { shown, SHOWN } from "../common/terminal-text.ts";
import { quoteValue } from "../common/text.ts";
import { isExactName } from "../common/tool-pattern.ts";
import { isObject } from "../common/values.ts";
import { trustNotRecorded } from "./trust-rules.ts";
import type { ApprovalMode, ServerConfig } from "../config/types.ts";
import { addToServerList } from "../config/write/server-edits.ts";
import { type ApprovalDecision, decideApproval } from "./approval-policy.ts";

/** The bus channel on which another extension may decide instead of the dialog. */
const APPROVAL_REQUEST_CHANNEL = "mcp.approval.request";
/** The session entry that records a tool allowed for the session (`{server, tool}`). */
export const ALLOWED_ENTRY = "mcp-bridge.allowed-for-session";

/** What another extension may answer (this call, every call of the tool in this session, or none), as a choice. */
const HOOK_CHOICES = { allow: "once", "allow-session": "session", deny: "deny" } as const;
type HookDecision = keyof typeof HOOK_CHOICES;

/** The payload of `mcp.approval.request`: a public interface, documented in docs/events-and-logs.md. */
interface ApprovalRequest {
  serverId: string;
  /** The tool's name on its MCP server. */
  tool: string;
  /** The name the model called. */
  toolName: string;
  args: Record<string, unknown>;
  annotations?: ToolAnnotations;
  /** A destructive tool: it asks on every call. */
  everyTime: boolean;
  /** Why it asks. */
  reason: string;
  /** Decides; call it inside the handler, before any `await` (pass a promise to decide later). The first call counts. */
  respond(decision: HookDecision | Promise<HookDecision>): void;
}

/** An MCP tool pi has, as approval reads it. */
interface ApprovedTool {
  /** The name the model called. */
  name: string;
  server: string;
  /** The tool's name on its MCP server. */
  originalName: string;
  annotations?: ToolAnnotations;
}

export interface ToolApprovalDeps {
  /** The MCP tool behind a pi tool name, if it is one of the bridge's (the tool registry). */
  find(toolName: string): ApprovedTool | undefined;
  configOf(server: string): ServerConfig | undefined;
  approvalMode(): ApprovalMode;
  /** The user-level config file, where `"approval": "never"` may go. */
  userConfigPath(): string | undefined;
  /** pi's shared event bus. */
  emit(channel: string, payload: unknown): void;
  /** Changes a config file as the user asked, keeping the server's project trust (`McpBridge.writeConfig`). */
  writeConfig(file: string, change: (text: string | undefined) => string): Promise<{ trustError?: unknown }>;
  /** Records a tool allowed for this session in pi's session, for the bridge a /reload loads anew into it. */
  remember?(allowed: { server: string; tool: string }): void;
  logger?: Logger;
}

/** "dismissed": the dialog closed without an answer (Escape, the agent stopping, an RPC client that has no dialogs). */
type Choice = "once" | "session" | "always" | "deny" | "dismissed";
type Asker = Pick<ExtensionContext, "hasUI" | "ui" | "signal">;
/** Why a call asks, and whether every time. */
type Asking = Extract<ApprovalDecision, { action: "ask" }>;

/** Arguments as the dialog shows them: on one line, cut short. */
const MAX_ARGS_SHOWN = 400;

/**
 * A line of the dialog: controls and bidi marks of a tool's name or its arguments written as `\uXXXX`, so neither can
 * rewrite or reorder what the user is asked to allow, and cut short.
 */
function dialogLine(text: string, max: number = SHOWN.body): string {
  return shown(text, max, "visible");
}

/** `MCP tool 'x' of server 's'`, as every message names a tool. */
function describeTool(tool: ApprovedTool): string {
  return `MCP tool '${dialogLine(tool.originalName)}' of server '${tool.server}'`;
}

/** The exact setting that lets a call run without asking, and the file it goes in. */
function howToAllow(tool: ApprovedTool, configPath: string, everyTime: boolean, userConfigPath?: string): string {
  const exact = everyTime ? " (a destructive tool needs its exact name there; a pattern does not cover it)" : "";
  const never = userConfigPath ? `, or set "approval": "never" in ${userConfigPath} to turn approval prompts off` : "";
  return `To allow it, add "${dialogLine(tool.originalName)}" to "autoApprove" of server "${tool.server}" in ${configPath}${exact}${never}.`;
}

export class ToolApproval {
  /** `server\0tool` the user allowed for this session. */
  private readonly allowedForSession = new Set<string>();
  /** Tools saved to `autoApprove` in this session, by server: they count as listed before the config is read again. */
  private readonly saved = new Map<string, Set<string>>();

  /** Calls refused (denied, dismissed, or no UI to ask in), by server: for the telemetry counters. */
  private readonly refusedBy = new Map<string, number>();

  constructor(private readonly deps: ToolApprovalDeps) {}

  /** How many of `server`'s tool calls were refused for want of approval in this pi. */
  refused(server: string): number {
    return this.refusedBy.get(server) ?? 0;
  }

  private refuse(tool: ApprovedTool, reason: string): ToolCallEventResult {
    this.refusedBy.set(tool.server, this.refused(tool.server) + 1);
    return { block: true, reason };
  }

  /** A new session: what was allowed "for this session" asks again; a reload goes on with what its `entries` record. */
  sessionStarted(entries: readonly unknown[] = []): void {
    this.allowedForSession.clear();
    for (const e of entries)
      if (isObject(e) && e.customType === ALLOWED_ENTRY && isObject(e.data))
        this.allowedForSession.add(`${e.data.server}\0${e.data.tool}`);
  }

  /** pi's `tool_call` handler: `undefined` lets the call run, `{block, reason}` refuses it with that reason. */
  async check(
    event: { toolName: string; input: Record<string, unknown> },
    ctx: Asker,
  ): Promise<ToolCallEventResult | undefined> {
    const tool = this.deps.find(event.toolName);
    const config = tool && this.deps.configOf(tool.server);
    if (!tool || !config) return undefined;
    const key = `${tool.server}\0${tool.originalName}`;
    const decision = decideApproval({
      tool: tool.originalName,
      rules: {
        autoApprove: [...config.autoApprove, ...(this.saved.get(tool.server) ?? [])],
        autoApproveReadOnly: config.autoApproveReadOnly,
      },
      hints: tool.annotations,
      allowedForSession: this.allowedForSession.has(key),
      approvalOff: this.deps.approvalMode() === "never",
    });
    if (decision.action === "allow") return undefined;

    const hooked = this.askHook(tool, event.input, decision);
    if (hooked) {
      const { choice, denied } = await hookAnswer(hooked, tool);
      return this.apply(tool, config, choice, "extension", denied, ctx);
    }
    const allow = howToAllow(tool, config.source.path, decision.everyTime, this.deps.userConfigPath());
    if (!ctx.hasUI) {
      this.log(tool, "deny", "no-ui");
      return this.refuse(tool, `${describeTool(tool)} needs approval, and there is no UI to ask in. ${allow}`);
    }
    const choice = await this.askUser(tool, config, event.input, decision, ctx);
    const refusal =
      choice === "dismissed"
        ? `The approval dialog for ${describeTool(tool)} closed without an answer, so it did not run. ${allow}`
        : `The user denied the call of ${describeTool(tool)}.`;
    return this.apply(tool, config, choice, "user", refusal, ctx);
  }

  /** Publishes the request; the answer of an extension that responded while it was published, if one did. */
  private askHook(tool: ApprovedTool, args: Record<string, unknown>, asking: Asking): Promise<unknown> | undefined {
    let answer: Promise<unknown> | undefined;
    const request: ApprovalRequest = {
      serverId: tool.server,
      tool: tool.originalName,
      toolName: tool.name,
      // A copy: what a listener does to it cannot change the call that is being approved.
      args: structuredClone(args),
      everyTime: asking.everyTime,
      reason: asking.reason,
      respond: (decision) => {
        answer ??= Promise.resolve(decision);
      },
    };
    if (tool.annotations) request.annotations = tool.annotations;
    this.deps.emit(APPROVAL_REQUEST_CHANNEL, request);
    return answer;
  }

  private async askUser(
    tool: ApprovedTool,
    config: ServerConfig,
    args: Record<string, unknown>,
    { everyTime, reason }: Asking,
    ctx: Asker,
  ): Promise<Choice> {
    const options: Array<[string, Choice]> = [["Allow once", "once"]];
    if (!everyTime) options.push(["Allow for this session", "session"]);
    // The bundled file and a pi package's manifest belong to their packages: an update would replace them. A server
    // added for this session only (by code) is in no file at all. A name with `*` or `?` would be a pattern there.
    if (!["bundled", "package", "session"].includes(config.source.scope) && isExactName(tool.originalName))
      options.push([`Always allow (adds "${tool.originalName}" to autoApprove in ${config.source.path})`, "always"]);
    options.push(["Deny", "deny"]);
    const title = [
      dialogLine(`Allow ${describeTool(tool)} (${tool.name}) to run? (${reason})`),
      `Arguments: ${dialogLine(JSON.stringify(args) ?? "{}", MAX_ARGS_SHOWN)}`,
    ].join("\n");
    const picked = await ctx.ui.select(
      title,
      options.map(([label]) => dialogLine(label)),
      { signal: ctx.signal },
    );
    // Escape, or the agent stopping, closes the dialog with no answer: that is no approval.
    return options.find(([label]) => dialogLine(label) === picked)?.[1] ?? "dismissed";
  }

  private async apply(
    tool: ApprovedTool,
    config: ServerConfig,
    choice: Choice,
    by: string,
    refusal: string,
    ctx: Asker,
  ): Promise<ToolCallEventResult | undefined> {
    this.log(tool, choice, by);
    if (choice === "deny" || choice === "dismissed") return this.refuse(tool, refusal);
    if (choice === "session") {
      this.allowedForSession.add(`${tool.server}\0${tool.originalName}`);
      this.deps.remember?.({ server: tool.server, tool: tool.originalName });
    }
    if (choice === "always") await this.save(tool, config, ctx);
    return undefined;
  }

  /** Adds the tool to `autoApprove` in the file that defines its server. A failure is told, and this call still runs. */
  private async save(tool: ApprovedTool, config: ServerConfig, ctx: Asker): Promise<void> {
    const [file, shownName] = [config.source.path, dialogLine(tool.originalName)];
    try {
      // The user's word on a server they trust: it stays trusted with the tool added (a change made by anyone else asks).
      const { trustError } = await this.deps.writeConfig(file, (text) =>
        addToServerList(text, tool.server, "autoApprove", tool.originalName),
      );
      this.saved.set(tool.server, (this.saved.get(tool.server) ?? new Set<string>()).add(tool.originalName));
      ctx.ui.notify(`Added "${shownName}" to autoApprove of MCP server '${tool.server}' in ${file}.`, "info");
      if (trustError !== undefined) ctx.ui.notify(trustNotRecorded([tool.server], trustError), "warning");
    } catch (error) {
      ctx.ui.notify(
        `Could not save "${shownName}" to autoApprove of MCP server '${tool.server}' in ${file}: ${errorMessage(error)}. Allowed this once.`,
        "error",
      );
    }
  }

  private log(tool: ApprovedTool, decision: string, by: string): void {
    this.deps.logger?.log({
      level: "info",
      event: "approval",
      server: tool.server,
      tool: tool.originalName,
      decision,
      by,
    });
  }
}

/** An extension's answer as a choice; anything but the three decisions (or a failed promise) refuses the call. */
async function hookAnswer(answer: Promise<unknown>, tool: ApprovedTool): Promise<{ choice: Choice; denied: string }> {
  const value = await answer.catch((error: unknown) => `an error (${errorMessage(error)})`);
  if (typeof value === "string" && Object.hasOwn(HOOK_CHOICES, value)) {
    const denied = `Another extension denied the call of ${describeTool(tool)} (${APPROVAL_REQUEST_CHANNEL}).`;
    return { choice: HOOK_CHOICES[value as HookDecision], denied };
  }
  return {
    choice: "deny",
    denied: `Another extension answered ${APPROVAL_REQUEST_CHANNEL} for ${describeTool(tool)} with ${quoteValue(value)}, not "allow", "allow-session" or "deny"; the call is refused.`,
  };
}
