/**
 * pi 0.73.1 in-process, as the SDK embeds it: a session with only the given extensions, in-memory settings, auth and
 * session storage, and pi-ai's faux model. The caller binds the extensions (with or without a UI) and closes it.
 */
import { registerFauxProvider, type FauxProviderRegistration } from "@mariozechner/pi-ai";
import {
  type AgentSession,
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

export async function startInProcessPi(options: { cwd: string; agentDir: string; extensionPaths: string[] }): Promise<InProcessPi> {
  const faux = registerFauxProvider();
  const authStorage = AuthStorage.inMemory();
  authStorage.setRuntimeApiKey("faux", "test-key");
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
    sessionManager: SessionManager.inMemory(options.cwd),
    model: faux.getModel(),
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
