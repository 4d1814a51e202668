/**
 * pi 0.73.1 in-process, as the SDK embeds it: a session with only the given extensions, in-memory settings, auth and
 * session storage, and pi-ai's faux model. The caller binds the extensions (with or without a UI) and closes it.
 */
import { fauxAssistantMessage, fauxToolCall, registerFauxProvider, type FauxProviderRegistration, type FauxResponseStep, type Model, type Api } from "@mariozechner/pi-ai";
import {
  type AgentSession,
  type ExtensionUIContext,
  AuthStorage,
  createAgentSession,
  DefaultResourceLoader,
  ModelRegistry,
  SessionManager,
  SettingsManager,
} from "@mariozechner/pi-coding-agent";

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
}

export async function startInProcessPi(options: InProcessOptions): Promise<InProcessPi> {
  const faux = registerFauxProvider();
  const authStorage = AuthStorage.inMemory();
  authStorage.setRuntimeApiKey("faux", "test-key");
  if (options.model) authStorage.setRuntimeApiKey(options.model.provider, "test-key");
  const settingsManager = SettingsManager.inMemory();
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
    authStorage,
    modelRegistry: ModelRegistry.inMemory(authStorage),
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
      faux.unregister();
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
    const result = pi.session.messages.filter((m) => (m as { role: string }).role === "toolResult").at(-1) as unknown as
      | { content: Array<{ text?: string }>; isError: boolean }
      | undefined;
    return { text: result?.content.map((c) => c.text ?? "").join("\n") ?? "", isError: result?.isError ?? false, offered };
  } finally {
    await pi.close();
  }
}
