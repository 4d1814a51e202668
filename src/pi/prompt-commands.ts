/**
 * Each connected server's prompts as pi slash commands, `/mcp:<server>:<prompt>` (as pi names its skills
 * `/skill:<name>`). The list is fetched when a server connects or reconnects, when it says its prompts changed and when
 * `/mcp prompts` lists them; commands for new prompts are registered then (pi takes commands at any time). pi cannot
 * unregister a command, so one whose prompt went away (or whose server closed for good) stays, says it is gone and
 * sends nothing. Running one reads the arguments given, asks for each missing required one in a pi dialog (without a
 * UI it names them in an error), fetches the prompt and sends its messages as the user's message. The argument
 * completion offers the prompt's argument names, and their values from the server where it offers
 * `completion/complete`.
 */
import type { AutocompleteItem } from "@mariozechner/pi-tui";
import type { ExtensionCommandContext, RegisteredCommand } from "@mariozechner/pi-coding-agent";
import type { Prompt } from "@modelcontextprotocol/client";
import { describeError } from "../common/errors.ts";
import type { EventSink } from "../common/events.ts";
import { shown, SHOWN } from "../common/terminal-text.ts";
import type { ServerChange } from "../connection/mcp-client.ts";
import type { ServerConnection } from "../connection/server-connection.ts";
import {
  completePromptArgument,
  getPrompt,
  listPrompts,
  offersCompletions,
  offersPrompts,
} from "../connection/server-prompts.ts";
import { offersResources } from "../connection/server-resources.ts";
import type { PiContent } from "../translate/output.ts";
import { type McpProvenance, mcpProvenance } from "../translate/provenance.ts";
import {
  argumentWord,
  completionTarget,
  missingArguments,
  parsePromptArguments,
  promptCommandDescription,
  promptCommandName,
  promptMessageContent,
} from "../translate/prompt-text.ts";

/** Completing a value waits this long for the server at most: the user is typing. */
const COMPLETION_TIMEOUT_MS = 5_000;
/** A server may suggest many values; the menu shows the first ones. */
const MAX_COMPLETIONS = 50;

type CommandOptions = Omit<RegisteredCommand, "name" | "sourceInfo">;

export interface PromptCommandsDeps {
  registerCommand(name: string, options: CommandOptions): void;
  /** pi's `sendUserMessage`: starts a turn, or follows the current one up. */
  sendUserMessage(content: PiContent[], options?: { deliverAs: "followUp" }): void;
  /** Settles when the next run of the agent ends (pi's `agent_end`), or pi's session does. */
  nextTurnEnd?(): Promise<void>;
  /** A configured server's connection by its name. */
  connection(server: string): ServerConnection | undefined;
  /** Commands were added after pi built its list of them (the TUI's autocomplete): have it build the list again. */
  commandsAdded?(): void;
  events?: EventSink;
  /** A prompt list that could not be fetched: the server's tools still work, its prompts wait for the next change. */
  warn?(server: string, error: string): void;
}

/** One prompt command: which prompt of which server, and whether that server still offers it. */
export interface PromptCommand {
  name: string;
  server: string;
  prompt: Prompt;
  provenance: McpProvenance;
  live: boolean;
}

/**
 * A server's prompts, each with the command that runs it (none when the server's newer answer, in first, no longer
 * lists it), or why they could not be listed.
 */
export type PromptListing = { prompts: Array<{ prompt: Prompt; command?: string }> } | { error: string };

export class PromptCommands {
  private readonly byName = new Map<string, PromptCommand>();
  /** Each server's newest list fetch started, and the newest whose answer was applied (an older answer that comes late does not undo it). */
  private readonly fetches = new Map<string, { started: number; applied: number }>();

  constructor(private readonly deps: PromptCommandsDeps) {}

  /** The commands whose prompts their servers offer now, in the order they were registered. */
  commands(): PromptCommand[] {
    return [...this.byName.values()].filter((command) => command.live);
  }

  /**
   * Fetches the server's prompt list (it connected, reconnected or said its prompts changed, or `/mcp prompts` asks),
   * updates its commands and says what it found: each prompt with the command that runs it, or why the list could not
   * be read. The commands are updated before it answers, so a prompt it lists can be run at once.
   */
  async refresh(connection: ServerConnection, signal?: AbortSignal): Promise<PromptListing> {
    const server = connection.name;
    const fetch = this.nextFetch(server);
    if (connection.status === "disabled" || !offersPrompts(connection)) {
      this.apply(server, fetch, []);
      return { prompts: [] };
    }
    let prompts: Prompt[];
    try {
      prompts = await listPrompts(connection, signal);
    } catch (error) {
      const message = describeError(error);
      this.deps.warn?.(server, message);
      return { error: message };
    }
    this.apply(server, fetch, prompts);
    // Only a newer answer, applied first, can leave one of these without a command: the prompt is gone from it.
    const commands = new Map(
      this.commands()
        .filter((c) => c.server === server)
        .map((c) => [c.prompt.name, c.name]),
    );
    return { prompts: prompts.map((prompt) => ({ prompt, command: commands.get(prompt.name) })) };
  }

  /** A server said its prompts changed, or closed for good (its commands then say they are gone). */
  changed(connection: ServerConnection, change: ServerChange): Promise<unknown> | void {
    if (change.kind === "closed") return this.apply(connection.name, this.nextFetch(connection.name), []);
    if (change.kind === "list" && change.list === "prompts") return this.refresh(connection);
  }

  private nextFetch(server: string): number {
    const fetches = this.fetches.get(server) ?? { started: 0, applied: 0 };
    fetches.started++;
    this.fetches.set(server, fetches);
    return fetches.started;
  }

  /**
   * The answer of fetch number `fetch`, unless a newer one's is in: answers that come in the order their fetches
   * started are all applied (the newest last), so a command exists as soon as its prompt has been listed.
   */
  private apply(server: string, fetch: number, prompts: Prompt[]): void {
    const fetches = this.fetches.get(server);
    if (!fetches || fetch < fetches.applied) return;
    fetches.applied = fetch;
    this.update(server, prompts);
  }

  private update(server: string, prompts: Prompt[]): void {
    const mine = new Map([...this.byName.values()].filter((c) => c.server === server).map((c) => [c.prompt.name, c]));
    let added = false;
    for (const prompt of prompts) {
      const known = mine.get(prompt.name);
      mine.delete(prompt.name);
      if (known) {
        known.prompt = prompt;
        known.live = true;
        this.register(known);
        continue;
      }
      const command: PromptCommand = {
        name: this.freeName(promptCommandName(server, prompt.name)),
        server,
        prompt,
        provenance: mcpProvenance(server, prompt.name),
        live: true,
      };
      this.byName.set(command.name, command);
      this.register(command);
      added = true;
    }
    // What is left is gone: its command stays registered (pi cannot take it back) but says so.
    for (const gone of mine.values()) {
      if (!gone.live) continue;
      gone.live = false;
      this.register(gone);
    }
    const commands = [...this.byName.values()].filter((c) => c.server === server);
    this.deps.events?.("mcp.prompts.changed", {
      serverId: server,
      commands: commands.map((c) => ({ name: c.name, live: c.live, provenance: c.provenance })),
    });
    if (added) quietly(() => this.deps.commandsAdded?.());
  }

  /** `name`, or `name_2`, `name_3`, … where another server's prompt already has it. */
  private freeName(name: string): string {
    let candidate = name;
    for (let n = 2; this.byName.has(candidate); n++) candidate = `${name}_${n}`;
    return candidate;
  }

  private register(command: PromptCommand): void {
    const description = command.live
      ? promptCommandDescription(command.server, command.prompt)
      : `(no longer offered by MCP server '${shown(command.server, SHOWN.line, "line")}')`;
    quietly(() =>
      this.deps.registerCommand(command.name, {
        description,
        getArgumentCompletions: (line) => this.complete(command, line),
        handler: (line, ctx) => this.run(command, line, ctx),
      }),
    );
  }

  private async complete(command: PromptCommand, line: string): Promise<AutocompleteItem[] | null> {
    if (!command.live) return null;
    const target = completionTarget(line, command.prompt.arguments);
    if (!target) return null;
    if (target.kind === "name")
      return target.candidates.map((arg) => ({
        value: `${target.before}${argumentWord(arg.name)}`,
        label: `${shown(arg.name, SHOWN.line, "line")}=`,
        ...(arg.description ? { description: shown(arg.description, SHOWN.line, "line") } : {}),
      }));
    const connection = this.deps.connection(command.server);
    if (!connection || !offersCompletions(connection)) return null;
    try {
      const values = await completePromptArgument(
        connection,
        command.prompt.name,
        { name: target.name, value: target.prefix },
        target.given,
        AbortSignal.timeout(COMPLETION_TIMEOUT_MS),
      );
      // A value cut short would be a different value: one too long to show is not offered.
      const items = values.slice(0, MAX_COMPLETIONS).flatMap((raw) => {
        if (raw.length > SHOWN.line) return [];
        const value = shown(raw, SHOWN.line, "line");
        return [{ value: `${target.before}${/[\s"'\\]/.test(value) ? JSON.stringify(value) : value}`, label: value }];
      });
      return items.length ? items : null;
    } catch {
      // A server that cannot complete leaves the user typing; the prompt itself still runs.
      return null;
    }
  }

  private async run(command: PromptCommand, line: string, ctx: ExtensionCommandContext): Promise<void> {
    const where = `/${command.name}`;
    const connection = this.deps.connection(command.server);
    if (!command.live || !connection)
      return fail(ctx, `${where}: MCP server '${command.server}' no longer offers this prompt.`);
    const parsed = parsePromptArguments(line, command.prompt.arguments);
    if (!parsed.ok) return fail(ctx, `${where}: ${parsed.error}.`);
    let values = parsed.values;
    const missing = missingArguments(command.prompt.arguments, values);
    if (missing.length && !ctx.hasUI) {
      const names = missing.map((arg) => arg.name).join(", ");
      return fail(
        ctx,
        `${where}: missing required argument${missing.length > 1 ? "s" : ""} ${names} (give them as name=value).`,
      );
    }
    for (const arg of missing) {
      const about = arg.description ? ` (${shown(arg.description, SHOWN.line, "line")})` : "";
      const answer = await ctx.ui.input(
        `MCP server '${shown(command.server, SHOWN.line, "line")}', prompt ${shown(command.prompt.name, SHOWN.line, "line")}: ${shown(arg.name, SHOWN.line, "line")}${about}`,
      );
      if (!answer?.trim()) return ctx.ui.notify(`${where} cancelled: no value for ${arg.name}.`, "info");
      values = { ...values, [arg.name]: answer }; // an own field, even named `__proto__` (assigning it would not be)
    }
    let content;
    try {
      content = promptMessageContent(
        await getPrompt(connection, command.prompt.name, values, ctx.signal),
        offersResources(connection) ? command.server : undefined, // a link names it for read_mcp_resource
      );
    } catch (error) {
      return fail(ctx, `${where}: ${describeError(error)}`);
    }
    this.deps.events?.("mcp.prompt.sent", {
      serverId: command.server,
      command: command.name,
      provenance: command.provenance,
    });
    const idle = ctx.isIdle();
    // Without a UI (print mode, an embedding) the caller's prompt ends with this command, and print mode exits then:
    // the command ends with the turn it starts, as a typed prompt does, where pi can start one (a model with a key).
    const startable = idle && !ctx.hasUI && ctx.model !== undefined && ctx.modelRegistry.hasConfiguredAuth(ctx.model);
    const ended = startable ? this.deps.nextTurnEnd?.() : undefined;
    this.deps.sendUserMessage(content, idle ? undefined : { deliverAs: "followUp" });
    await ended;
  }
}

/** pi refuses registrations once it let go of this extension (shut down, reloaded): there is nothing left to update. */
function quietly(update: () => void): void {
  try {
    update();
  } catch {
    // The session these commands were for is gone.
  }
}

/** Tells the user in the TUI; elsewhere the error goes to pi, which reports a failed command. */
function fail(ctx: ExtensionCommandContext, message: string): void {
  if (ctx.hasUI) return ctx.ui.notify(message, "error");
  throw new Error(message);
}
