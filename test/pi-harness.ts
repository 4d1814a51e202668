/**
 * pi in-process, as the SDK embeds it: a session with only the given extensions, in-memory settings, auth and
 * session storage, and pi-ai's faux model. The caller binds the extensions (with or without a UI) and closes it.
 * The same tests run on pi 0.73.1 and, through test/pi1x/run.mjs, on pi 1.x: the two differ in how model access is
 * set up (see `modelAccess`), nothing else here.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import {
  type Api,
  type Context,
  fauxAssistantMessage,
  fauxToolCall,
  type FauxProviderRegistration,
  type FauxResponseStep,
  type Model,
  registerFauxProvider,
  type Tool,
} from "@mariozechner/pi-ai";
import * as pi from "@mariozechner/pi-coding-agent";
import {
  type AgentSession,
  type AgentSessionRuntime,
  type ExtensionUIContext,
  createAgentSession,
  createAgentSessionFromServices,
  createAgentSessionRuntime,
  createAgentSessionServices,
  DefaultResourceLoader,
  SessionManager,
  SettingsManager,
} from "@mariozechner/pi-coding-agent";
import { PI_LINE } from "./pi-line.ts";

export interface InProcessPi {
  session: AgentSession;
  faux: FauxProviderRegistration;
  loader: DefaultResourceLoader;
  /** Runs session_shutdown (the bridge stops its servers) and lets go of the session and the faux model. */
  close(): Promise<void>;
}

export interface InProcessOptions {
  cwd: string;
  agentDir: string;
  extensionPaths: string[];
  /** Another model than the faux one (a fake provider on 127.0.0.1, say); its provider gets a test key. */
  model?: Model<Api>;
  /** The session's storage; in memory by default. */
  sessionManager?: SessionManager;
  /** pi 1.x's own answer on trusting the project (its SDK sessions trust it unless told otherwise); pi 0.73 has none. */
  projectTrusted?: boolean;
}

/** pi 1.x's model runtime and faux provider, as far as the tests use them (this file compiles against pi 0.73's types). */
interface ModelRuntime1x {
  setRuntimeApiKey(provider: string, key: string): Promise<void>;
  registerNativeProvider(provider: unknown): void;
  registerProvider(id: string, config: Record<string, unknown>): void;
}
type FauxHandle1x = Omit<FauxProviderRegistration, "unregister"> & { provider: unknown };

interface ModelAccess {
  faux: FauxProviderRegistration;
  /** What `createAgentSession` needs to reach the models with a test key. */
  options: Record<string, unknown>;
  close(): void;
}

/**
 * pi 0.73: the faux provider registers globally, the key goes into an in-memory auth storage. pi 1.x: models are
 * reached through a model runtime (file-backed only, so in a folder removed on close) that the faux provider joins.
 */
async function modelAccess(model: Model<Api> | undefined): Promise<ModelAccess> {
  if (PI_LINE === "1.x") {
    const dir = mkdtempSync(path.join(tmpdir(), "mcp-bridge-pi1x-models-"));
    const { fauxProvider } = (await import("@mariozechner/pi-ai/providers/faux" as string)) as {
      fauxProvider(): FauxHandle1x;
    };
    const create = (pi as unknown as { ModelRuntime: { create(o: object): Promise<ModelRuntime1x> } }).ModelRuntime
      .create;
    const modelRuntime = await create({
      authPath: path.join(dir, "auth.json"),
      modelsPath: null,
      allowModelNetwork: false,
    });
    const handle = fauxProvider();
    modelRuntime.registerNativeProvider(handle.provider);
    await modelRuntime.setRuntimeApiKey(handle.getModel().provider, "test-key");
    // Only providers the runtime knows get credentials: another model joins as an extension's provider would.
    if (model) {
      const { provider, baseUrl, api, ...entry } = model;
      modelRuntime.registerProvider(provider, { baseUrl, api, apiKey: "test-key", models: [entry] });
    }
    const faux: FauxProviderRegistration = { ...handle, unregister: () => {} };
    // Removed on close, or when the process exits without closing (a test of a crash, a start that failed).
    const remove = () => rmSync(dir, { recursive: true, force: true });
    process.once("exit", remove);
    const close = () => {
      process.off("exit", remove);
      remove();
    };
    return { faux, options: { modelRuntime }, close };
  }
  const faux = registerFauxProvider();
  const authStorage = pi.AuthStorage.inMemory();
  authStorage.setRuntimeApiKey("faux", "test-key");
  if (model) authStorage.setRuntimeApiKey(model.provider, "test-key");
  return {
    faux,
    options: { authStorage, modelRegistry: pi.ModelRegistry.inMemory(authStorage) },
    close: () => faux.unregister(),
  };
}

export async function startInProcessPi(options: InProcessOptions): Promise<InProcessPi> {
  const access = await modelAccess(options.model);
  const faux = access.faux;
  const settingsManager = (SettingsManager.inMemory as (settings?: object, options?: object) => SettingsManager)(
    {},
    options.projectTrusted === undefined ? {} : { projectTrusted: options.projectTrusted },
  );
  const loader = new DefaultResourceLoader({
    cwd: options.cwd,
    agentDir: options.agentDir,
    settingsManager,
    noExtensions: true,
    additionalExtensionPaths: options.extensionPaths,
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
    noContextFiles: true,
  });
  await loader.reload();
  const { session } = await createAgentSession({
    cwd: options.cwd,
    agentDir: options.agentDir,
    ...access.options,
    settingsManager,
    resourceLoader: loader,
    sessionManager: options.sessionManager ?? SessionManager.inMemory(options.cwd),
    model: options.model ?? faux.getModel(),
  });
  return {
    session,
    faux,
    loader,
    close: async () => {
      await session.extensionRunner.emit({ type: "session_shutdown", reason: "quit" });
      session.dispose();
      access.close();
    },
  };
}

/**
 * pi's session runtime, as its CLI builds it: `/new`, `/resume` and `/fork` (`runtime.newSession()`,
 * `switchSession(file)`, `fork(id)`) end the session and start the next with its extensions loaded afresh. The caller
 * binds each session's extensions (`runtime.session.bindExtensions`), as pi's CLI does, and closes it.
 */
export async function startPiRuntime(
  options: InProcessOptions,
): Promise<{ runtime: AgentSessionRuntime; faux: FauxProviderRegistration; close(): Promise<void> }> {
  const access = await modelAccess(options.model);
  const settingsManager = SettingsManager.inMemory();
  const runtime = await createAgentSessionRuntime(
    async ({ cwd, agentDir, sessionManager, sessionStartEvent }) => {
      const services = await createAgentSessionServices({
        cwd,
        agentDir,
        settingsManager,
        ...access.options,
        resourceLoaderOptions: {
          noExtensions: true,
          additionalExtensionPaths: options.extensionPaths,
          noSkills: true,
          noPromptTemplates: true,
          noThemes: true,
          noContextFiles: true,
        },
      });
      const created = await createAgentSessionFromServices({
        services,
        sessionManager,
        sessionStartEvent,
        model: options.model ?? access.faux.getModel(),
      });
      return { ...created, services, diagnostics: services.diagnostics };
    },
    {
      cwd: options.cwd,
      agentDir: options.agentDir,
      sessionManager: options.sessionManager ?? SessionManager.inMemory(options.cwd),
    },
  );
  return {
    runtime,
    faux: access.faux,
    close: async () => {
      await runtime.dispose();
      access.close();
    },
  };
}

export interface OneCall {
  cwd: string;
  agentDir: string;
  extensionPaths: string[];
  /** Bound as pi's UI; without it pi runs as in print mode. */
  uiContext?: ExtensionUIContext;
  tool: string;
  args: Record<string, unknown>;
  /** What the faux model answers to calls made while the tool runs (a server's sampling request). */
  meanwhile?: FauxResponseStep[];
}

/** A fresh pi whose faux model calls one tool once; the tool's result, and whether the tool was there to call. */
export async function callOnceInPi(call: OneCall): Promise<{ text: string; isError: boolean; offered: boolean }> {
  const pi = await startInProcessPi(call);
  try {
    await pi.session.bindExtensions(call.uiContext ? { uiContext: call.uiContext } : {});
    const offered = pi.session.getAllTools().some((t) => t.name === call.tool);
    pi.faux.setResponses([
      fauxAssistantMessage([fauxToolCall(call.tool, call.args)], { stopReason: "toolUse" }),
      ...(call.meanwhile ?? []),
      fauxAssistantMessage("done"),
    ]);
    await pi.session.prompt(`call ${call.tool}`);
    const result = pi.session.messages
      .filter((m) => (m as { role: string }).role === "toolResult")
      .at(-1) as unknown as { content: Array<{ text?: string }>; isError: boolean } | undefined;
    return {
      text: result?.content.map((c) => c.text ?? "").join("\n") ?? "",
      isError: result?.isError ?? false,
      offered,
    };
  } finally {
    await pi.close();
  }
}

/** pi 1.x's system message: the prompt and tool declarations ride in the transcript instead of beside it. */
interface SystemMessage1x {
  role: "system";
  content: string | Array<{ type: string; text?: string }>;
  sections?: Record<string, string | null>;
  toolsAdded?: Tool[];
  toolsRemoved?: Array<{ name: string }>;
}

function systemMessages(context: Context): SystemMessage1x[] {
  return (context.messages as unknown as Array<{ role: string }>).filter(
    (m): m is SystemMessage1x => m.role === "system",
  );
}

/** The tools a model request declares: pi 0.73's `context.tools`, or pi 1.x's system messages replayed in order. */
export function requestTools(context: Context): Tool[] {
  if (context.tools) return context.tools;
  const tools = new Map<string, Tool>();
  for (const message of systemMessages(context)) {
    for (const removed of message.toolsRemoved ?? []) tools.delete(removed.name);
    for (const added of message.toolsAdded ?? []) tools.set(added.name, added);
  }
  return [...tools.values()];
}

/** The system prompt of a model request: pi 0.73's `context.systemPrompt`, or pi 1.x's leading system message. */
export function requestSystemPrompt(context: Context): string | undefined {
  if (context.systemPrompt !== undefined) return context.systemPrompt;
  const [first, ...later] = systemMessages(context);
  if (!first) return undefined;
  const text = (content: SystemMessage1x["content"]) =>
    typeof content === "string" ? content : content.map((c) => c.text ?? "").join("");
  const sections = new Map(Object.entries(first.sections ?? {}));
  for (const message of later)
    for (const [name, value] of Object.entries(message.sections ?? {})) sections.set(name, value);
  return [text(first.content), ...[...sections.values()].filter((v): v is string => v !== null)].join("\n\n");
}
