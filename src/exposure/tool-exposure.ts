/**
 * Which MCP tools the model is told about this session: each tool's exposure from the config (./exposure-rules.ts),
 * what `auto` became at session start, and the deferred tools `tool_search` has loaded. Loads are recorded in pi's
 * session (a custom entry), so they come back on `/reload`, on resume, in a fork of the branch they were made on and
 * on `/tree` to it. The bridge's own tools that reach several servers (the resource tools) take the widest exposure
 * of those servers.
 */
import type { Exposure, ExposureDefaults, ExposureSetting, ServerConfig } from "../config/types.ts";
import { isObject } from "../common/values.ts";
import { autoLimitTokens, decideAuto, exposureSetting, FALLBACK_CONTEXT_WINDOW } from "./exposure-rules.ts";
import { estimatedTokens } from "./definition-cost.ts";

/** The custom session entry type that records tools loaded by `tool_search`. */
export const LOADED_TOOLS_ENTRY = "mcp-bridge.tools-loaded";

/**
 * The server a tool of the bridge's own is recorded under (the resource tools, which reach every server that offers
 * resources): an empty name, which no configured server can have.
 */
export const NO_SERVER = "";

export interface ToolRef {
  server: string;
  /** The tool's name on its server. */
  tool: string;
}

/** What `auto` became this session, and why: from the estimated tokens of the definitions it covered, and the limit. */
export interface AutoDecision extends ReturnType<typeof decideAuto> {
  /** The model's context window, when pi had a model to ask. */
  contextWindow?: number;
  /** How many tools were set to `auto`: known then, or placed later. */
  covered: number;
  /** How many MCP tools every request declares as decided: `auto` ones where it is direct, and `direct` ones. */
  count: number;
}

/**
 * The most MCP tools `auto` declares: OpenAI refuses a request with over 128 tools (pi's own and other extensions'
 * among them), every request of the session, however few tokens they take.
 */
const MAX_DIRECT_TOOLS = 100;

/** A tool as the decision sees it: where it comes from and what its definition costs. */
export interface CostedTool extends ToolRef {
  chars: number;
}

const key = (server: string, tool: string) => `${server}\0${tool}`;

/** The tools a session entry records, or none when it is not one of ours or is malformed. */
function refsIn(entry: unknown): ToolRef[] {
  if (!isObject(entry) || entry.type !== "custom" || entry.customType !== LOADED_TOOLS_ENTRY) return [];
  const data = entry.data;
  if (!isObject(data) || !Array.isArray(data.tools)) return [];
  return data.tools.filter(
    (t): t is ToolRef => isObject(t) && typeof t.server === "string" && typeof t.tool === "string",
  );
}

export class ToolExposure {
  private decision?: AutoDecision;
  /** The servers whose tools were known when `auto` was decided: theirs follow the decision. */
  private readonly decidedWith = new Set<string>();
  /** What `auto` became for each server whose tools came after the decision (`placeLate`). */
  private readonly late = new Map<string, Exposure>();
  private readonly loaded = new Set<string>();

  constructor(
    private readonly defaults: () => ExposureDefaults,
    private readonly configOf: (server: string) => ServerConfig | undefined,
  ) {}

  /** The tool's setting as configured, `auto` included. */
  setting(server: string, tool: string): ExposureSetting {
    const config = this.configOf(server);
    return exposureSetting(tool, config?.toolExposure ?? [], config?.exposure, this.defaults().exposure);
  }

  /** The tool's exposure now; `auto` counts as direct until the session decides it. */
  exposureOf(server: string, tool: string): Exposure {
    return this.decided(server, this.setting(server, tool));
  }

  /** A setting of the server's as it stands: `auto` as decided for it (direct until then), others as they are. */
  private decided(server: string, setting: ExposureSetting): Exposure {
    return setting === "auto" ? (this.late.get(server) ?? this.decision?.exposure ?? "direct") : setting;
  }

  isLoaded(server: string, tool: string): boolean {
    return this.loaded.has(key(server, tool));
  }

  /** Whether the model is told about the tool in its requests. */
  isDeclared(server: string, tool: string): boolean {
    const exposure = this.exposureOf(server, tool);
    return exposure === "direct" || (exposure === "deferred" && this.isLoaded(server, tool));
  }

  /** How `/mcp` names a tool's exposure: `direct`, `deferred`, `deferred, loaded`, `hidden`; `(auto)` when `auto` chose it. */
  label(server: string, tool: string): string {
    const exposure = this.exposureOf(server, tool);
    const shown = exposure === "deferred" && this.isLoaded(server, tool) ? "deferred, loaded" : exposure;
    return this.setting(server, tool) === "auto" ? `${shown} (auto)` : shown;
  }

  /** A server's own exposure, the one its tools get without a `toolExposure` rule: its `exposure` or the default, `auto` as decided. */
  serverExposure(server: string): Exposure {
    return this.decided(server, this.configOf(server)?.exposure ?? this.defaults().exposure);
  }

  /** Whether some of a server's tools get `exposure`: the server's own, or a `toolExposure` rule's. */
  mayHave(server: string, exposure: Exposure): boolean {
    const rules = this.configOf(server)?.toolExposure ?? [];
    return this.serverExposure(server) === exposure || rules.some((rule) => rule.exposure === exposure);
  }

  /**
   * The exposure of a tool of the bridge's own that reaches these servers: the widest of theirs, as pi 1.x's built-in
   * gives its resource tools — direct if one server is, else deferred if one is, else (or with no server) hidden.
   */
  sharedExposure(servers: readonly string[]): Exposure {
    const exposures = new Set(servers.map((server) => this.serverExposure(server)));
    return exposures.has("direct") ? "direct" : exposures.has("deferred") ? "deferred" : "hidden";
  }

  /** Whether the model is told about such a tool in its requests. */
  isSharedDeclared(name: string, servers: readonly string[]): boolean {
    const exposure = this.sharedExposure(servers);
    return exposure === "direct" || (exposure === "deferred" && this.isLoaded(NO_SERVER, name));
  }

  /** How `/mcp` names such a tool's exposure. */
  sharedLabel(name: string, servers: readonly string[]): string {
    const exposure = this.sharedExposure(servers);
    return exposure === "deferred" && this.isLoaded(NO_SERVER, name) ? "deferred, loaded" : exposure;
  }

  /**
   * Decides `auto` once, at session start, from the tools known then, so the tool list does not change under the
   * model (servers whose tools come later are placed as they come: `placeLate`): what the tools set to `auto` or
   * `direct` would cost in each request against the threshold.
   */
  decideAuto(tools: readonly CostedTool[], contextWindow: number | undefined): AutoDecision {
    if (this.decision) return this.decision;
    let [chars, covered, count] = [0, 0, 0];
    for (const tool of tools) {
      const setting = this.setting(tool.server, tool.tool);
      if (setting === "auto" || setting === "direct") [chars, count] = [chars + tool.chars, count + 1];
      if (setting === "auto") covered++;
      this.decidedWith.add(tool.server);
    }
    const decided = decideAuto(chars, autoLimitTokens(this.defaults().threshold, contextWindow));
    if (count > MAX_DIRECT_TOOLS) decided.exposure = "deferred";
    this.decision = { ...decided, contextWindow, covered, count };
    return this.decision;
  }

  /** Whether a server's tools came after `auto` was decided and have no place yet (`placeLate`). */
  isUnplaced(server: string): boolean {
    return this.decision !== undefined && !this.decidedWith.has(server) && !this.late.has(server);
  }

  /**
   * Places the `auto` tools of servers whose tools came after the decision (a server slower than the startup budget,
   * one added or turned on later): direct while what they add keeps the definitions within the limit, else deferred
   * (`tool_search` finds them). The model never saw them, so nothing it was told changes; a server placed keeps its
   * place. `tools` are those servers' tools.
   */
  placeLate(tools: readonly CostedTool[]): void {
    const decision = this.decision;
    if (!decision) return;
    // Per server: what its `auto` tools would add, and what its `direct` ones add whatever `auto` becomes.
    const chars = new Map<string, { auto: number; direct: number; autos: number; directs: number }>();
    for (const tool of tools) {
      if (!this.isUnplaced(tool.server)) continue;
      const setting = this.setting(tool.server, tool.tool);
      const server = chars.get(tool.server) ?? { auto: 0, direct: 0, autos: 0, directs: 0 };
      if (setting === "auto" || setting === "direct") server[setting] += tool.chars;
      if (setting === "auto" || setting === "direct") server[`${setting}s`]++;
      if (setting === "auto") decision.covered++;
      chars.set(tool.server, server);
    }
    for (const [server, { auto, direct, autos, directs }] of chars) {
      const tokens = estimatedTokens(auto + direct);
      const fits =
        decision.exposure === "direct" &&
        decision.tokens + tokens <= decision.limitTokens &&
        decision.count + autos + directs <= MAX_DIRECT_TOOLS;
      this.late.set(server, fits || auto === 0 ? "direct" : "deferred");
      // Where `auto` is direct, the total is what every request declares: a deferred server's `direct` tools too.
      if (decision.exposure === "direct") decision.tokens += fits ? tokens : estimatedTokens(direct);
      decision.count += fits ? autos + directs : directs;
    }
  }

  /** One line on what `auto` chose this session and why; undefined before the session decided, and where nothing is `auto`. */
  autoNote(): string | undefined {
    const decision = this.decision;
    if (!decision || (decision.covered === 0 && this.defaults().exposure !== "auto")) return undefined;
    const threshold = this.defaults().threshold;
    const n = (value: number) => value.toLocaleString("en-US");
    const share = "share" in threshold ? `${Math.round(threshold.share * 1e6) / 1e4}%` : undefined;
    const window = decision.contextWindow
      ? "the model's context window"
      : `a ${n(FALLBACK_CONTEXT_WINDOW)}-token context window, assumed as no model was selected`;
    const limit = share ? `${share} of ${window}` : "the configured exposureThreshold";
    const relation = decision.tokens > decision.limitTokens ? "over" : "within";
    const many =
      decision.count > MAX_DIRECT_TOOLS
        ? `; they are ${n(decision.count)} tools, more than the ${MAX_DIRECT_TOOLS} it declares at most (OpenAI refuses a request of over 128)`
        : "";
    const note = `Tool exposure "auto" is ${decision.exposure} this session: MCP tool definitions of about ${n(decision.tokens)} tokens are ${relation} the limit of ${n(decision.limitTokens)} (${limit})${many}.`;
    const over = decision.exposure === "direct" ? [...this.late].filter(([, e]) => e === "deferred") : [];
    if (over.length === 0) return note;
    return `${note} Deferred as they connected later and would have gone over it: ${over.map(([s]) => s).join(", ")}.`;
  }

  /** Marks tools loaded; returns the ones that were not already. */
  load(refs: readonly ToolRef[]): ToolRef[] {
    return refs.filter((ref) => {
      const k = key(ref.server, ref.tool);
      if (this.loaded.has(k)) return false;
      this.loaded.add(k);
      return true;
    });
  }

  /** Takes the loads recorded on the session's current branch, in place of any held before. */
  restore(entries: readonly unknown[]): void {
    this.loaded.clear();
    for (const entry of entries) this.load(refsIn(entry));
  }
}
