/**
 * Where pi 0.73 (`@mariozechner/pi-coding-agent`) and pi 1.x (`@earendil-works/pi-coding-agent`, which loads this
 * package with the `@mariozechner/*` imports mapped to its own packages) differ for the bridge. Each difference is
 * decided here, by what the running pi offers (by its version only for how its pi-ai declares tools), so the rest of
 * the code has one call for each and never checks which pi it runs in.
 */
import { type Api, type AssistantMessage, complete, type Context, type Model } from "@mariozechner/pi-ai";
import { type ExtensionAPI, type ExtensionContext, VERSION } from "@mariozechner/pi-coding-agent";
import type { ToolAnnotations } from "@modelcontextprotocol/client";
import type { ConfiguredExposure, ExposureSetting, ServerConfig } from "../config/types.ts";
import { type ToolWire, toolWire, type WireModel } from "../exposure/definition-cost.ts";

/** pi 1.x's tool that runs a script calling other tools. */
const CODEMODE_TOOL = "codemode";

type ModelRegistry = ExtensionContext["modelRegistry"];

export interface CompleteOptions {
  maxTokens?: number;
  temperature?: number;
  signal?: AbortSignal;
}

/** pi 1.x's model registry calls the provider itself, with the credentials it resolves (pi 0.73's only hands them out). */
interface CallingRegistry {
  complete(model: Model<Api>, context: Context, options?: CompleteOptions): Promise<AssistantMessage>;
}

function callsModels(registry: ModelRegistry): registry is ModelRegistry & CallingRegistry {
  return typeof (registry as Partial<CallingRegistry>).complete === "function";
}

/**
 * One answer from a model pi knows, with pi's credentials for it. On pi 1.x through its model registry (pi-ai's own
 * `complete` there sees only built-in providers, not those an extension or the SDK registered); on pi 0.73 with the
 * key and headers its registry resolves. A missing key is an error naming the provider.
 */
export async function completeWithPi(
  registry: ModelRegistry,
  model: Model<Api>,
  context: Context,
  options: CompleteOptions,
): Promise<AssistantMessage> {
  if (callsModels(registry)) return registry.complete(model, context, options);
  const auth = await registry.getApiKeyAndHeaders(model);
  if (!auth.ok) throw new Error(`No key for ${model.provider}: ${auth.error}`);
  return complete(model, context, { apiKey: auth.apiKey, headers: auth.headers, ...options });
}

/**
 * pi 1.x's pi-ai declares tools to providers a little differently from pi 0.73's; each comes with its pi, whose
 * `VERSION` says which. (Not a name only pi 1.x's pi-ai exports: the bundle gets pi's modules handed over under the
 * names this checkout's copy has, see scripts/build-bundle.mjs.)
 */
const PI_AI_ONE_X = Number.parseInt(VERSION, 10) >= 1;

/** How the running pi's pi-ai declares each tool to this model's provider (`undefined`: no model selected yet). */
export function requestToolWire(model: WireModel | undefined): ToolWire {
  return toolWire(model, PI_AI_ONE_X);
}

/** The MCP hints pi 1.x reports in `pi.getAllTools()` for permission extensions to read; pi 0.73 has no such field. */
type ToolHints = Pick<ToolAnnotations, "readOnlyHint" | "destructiveHint" | "idempotentHint" | "openWorldHint">;

/**
 * A tool definition carrying the server's hints. pi 1.x keeps `annotations` on the tool; pi 0.73 ignores the field,
 * so it is set on both rather than guessed at.
 */
export function withToolHints<T extends object>(definition: T, annotations: ToolAnnotations | undefined): T {
  if (!annotations) return definition;
  const hints: ToolHints = {};
  for (const key of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const)
    if (typeof annotations[key] === "boolean") hints[key] = annotations[key];
  return Object.keys(hints).length ? { ...definition, annotations: hints } : definition;
}

/**
 * How deferred tools are kept from the model. pi 1.x takes `setActiveTools` mid-run (the next request of the same run
 * declares the new set, recorded in the transcript), so there a deferred tool is simply inactive until `tool_search`
 * loads it. pi 0.73 fixes a run's tools when it starts, so a tool loaded mid-run must already be active: there every
 * tool stays active and each provider request leaves out the ones not loaded.
 */
export function deferredToolsInactive(pi: ExtensionAPI): boolean {
  return isPi1x(pi);
}

/**
 * An MCP tool as this pi registers it. On pi 1.x it is `deferred` in pi's terms: callable from other tools whether the
 * model is told of it or not (pi's `codemode` scripts call `tools.<name>()`), while the bridge decides what the model
 * is told through the active set, as above. pi 0.73 has no such field.
 */
export function callableFromScripts<T extends object>(pi: ExtensionAPI, definition: T): T {
  return isPi1x(pi) ? { ...definition, exposure: "deferred" } : definition;
}

/**
 * Whether pi hands a script the structured result of a tool it calls, and takes a tool's error returned as a result
 * (pi 1.x); pi 0.73 does neither (./tool-definition.ts says what the bridge does with it).
 */
export function scriptsGetResults(pi: ExtensionAPI): boolean {
  return isPi1x(pi);
}

/**
 * pi 1.x's built-in MCP turns pi's `codemode` tool on when a server whose exposure is `codemode` connects, unless
 * `autoEnableCodemode` is false; the bridge does the same, once a session, for such a server with tools. The tool is
 * pi's own (its built-in `codemode` extension); pi 0.73 has none. Returns what to call as tools arrive.
 */
export function codemodeSwitch(
  pi: ExtensionAPI,
  bridge: {
    connections: ReadonlyMap<string, { config: ServerConfig; tools: readonly unknown[] }>;
    exposureDefaults: ConfiguredExposure;
  },
  activate: (name: string) => void,
): () => void {
  let on = false;
  return () => {
    const { codemode: byDefault, autoCodemode } = bridge.exposureDefaults;
    if (on || autoCodemode === false || !isPi1x(pi)) return;
    const wanted = (config: ServerConfig) => config.codemode || (config.exposure === undefined && byDefault);
    if (![...bridge.connections.values()].some((server) => server.tools.length && wanted(server.config))) return;
    if (!pi.getAllTools().some((tool) => tool.name === CODEMODE_TOOL)) return;
    on = true;
    activate(CODEMODE_TOOL);
  };
}

/**
 * How MCP tools reach the model where no config sets a top-level `exposure`. pi 1.x's built-in MCP keeps them out of
 * the model's requests by default (its `codemode`: only the one `codemode` tool is declared), and the configs its users
 * bring were written for that. So there the default is `deferred`, the bridge's nearest: only `tool_search` is declared
 * until it loads a tool, and switching to the bridge never sends the model more tool definitions than the built-in did.
 * pi 0.73 has no MCP of its own to match: there it is `auto` (direct while the definitions stay under a share of the
 * context window), as the bridge has always had it. A file that sets `exposure` decides on both.
 */
export function unsetExposure(pi: ExtensionAPI): ExposureSetting {
  return isPi1x(pi) ? "deferred" : "auto";
}

/** Whether this pi's own docs say `timeout` is seconds (pi 1.x's built-in MCP reads it so), so reading it so needs no word. */
export function piMeansTimeoutInSeconds(pi: ExtensionAPI): boolean {
  return isPi1x(pi);
}

/**
 * Whether pi draws its chat anew from the session once a reload's (or `/new`'s) `session_start` is done, wiping what
 * extensions said in it: pi 0.73 does; pi 1.x draws it before. There a notice waits for the redraw (and is dropped if
 * the session was replaced meanwhile, as its context then refuses it).
 */
export function redrawsAfterSessionStart(pi: ExtensionAPI): boolean {
  return !isPi1x(pi);
}

/** pi 1.x, told by its extension API: it lets extensions register MCP servers, which pi 0.73 has no notion of. */
function isPi1x(pi: ExtensionAPI): boolean {
  return typeof (pi as unknown as { registerMcpServer?: unknown }).registerMcpServer === "function";
}

/**
 * Whether this pi resolves project trust itself (pi 1.x, which asks at startup and keeps its own trust store), so the
 * bridge must not ask again.
 */
export function piDecidesProjectTrust(pi: ExtensionAPI): boolean {
  return isPi1x(pi);
}

/**
 * Whether pi itself trusts the project of this context: pi 1.x resolves project trust before it reads a project's
 * `.pi` folder (asking the user, or from its trust store), so its answer stands for the bridge's project servers too
 * and nobody is asked twice. `undefined` where pi has no project trust (pi 0.73): the bridge asks itself.
 */
export function piTrustsProject(ctx: ExtensionContext): boolean | undefined {
  const isTrusted = (ctx as unknown as { isProjectTrusted?: () => boolean }).isProjectTrusted;
  return typeof isTrusted === "function" ? isTrusted.call(ctx) : undefined;
}

/** A server another extension registered with pi 1.x's `pi.registerMcpServer()`, as pi keeps it. */
export interface PiRegisteredServer {
  name: string;
  /** The entry in pi 1.x's `mcpServers` shape, already checked by pi. */
  config: unknown;
  /** The extension that registered it. */
  extensionPath: string;
}

/**
 * pi 1.x only stores what extensions register with `pi.registerMcpServer()`; its MCP extension connects them, and the
 * bridge replaces that one. So the bridge follows them: every change after the extensions are bound arrives with
 * `mcp_servers_change` (handling it also tells pi that an extension connects them, so pi stops reporting them as
 * unconnected), and those registered while extensions load are read with `pi.getMcpServers()` once the session starts.
 * Returns that reader, or `undefined` on pi 0.73, which has no such servers.
 */
export function followRegisteredServers(
  pi: ExtensionAPI,
  changed: (servers: PiRegisteredServer[]) => void,
): (() => PiRegisteredServer[]) | undefined {
  if (!isPi1x(pi)) return undefined;
  const api = pi as unknown as {
    on(event: "mcp_servers_change", handler: (event: { servers: PiRegisteredServer[] }) => void): void;
    getMcpServers(): PiRegisteredServer[];
  };
  api.on("mcp_servers_change", (event) => changed(event.servers));
  return () => api.getMcpServers();
}
