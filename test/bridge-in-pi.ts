/**
 * The bridge inside pi in-process, as most end-to-end tests and the bench's search figures set it up: a fresh project
 * folder as the working directory, a fresh agent dir holding one user-level `mcp.json`, the extension loaded from this
 * repo (and any others after it), a given model (a fake provider on 127.0.0.1) or the faux one, and the extensions
 * bound. `close()` stops pi and puts the working
 * directory and the environment back; the model's own server is the caller's to close.
 */
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import type { Api, Model } from "@mariozechner/pi-ai";
import type { ExtensionUIContext } from "@mariozechner/pi-coding-agent";
import { EXTENSION_DIR, tempDir } from "./helpers.ts";
import { type InProcessPi, startInProcessPi } from "./pi-harness.ts";

export interface BridgeInPi {
  pi: InProcessPi;
  /** The project folder pi runs in. */
  project: string;
  close(): Promise<void>;
}

export interface BridgeInPiOptions {
  /** The user-level mcp.json, as an object. */
  mcpConfig: Record<string, unknown>;
  /** Without one, pi-ai's faux model. */
  model?: Model<Api>;
  /** Other extensions, loaded after the bridge. */
  extensionPaths?: string[];
  uiContext?: ExtensionUIContext;
  /** How long session start waits for the servers to connect (ms). */
  startupBudgetMs?: number;
}

export async function startBridgeInPi(options: BridgeInPiOptions): Promise<BridgeInPi> {
  const project = tempDir("mcp-bridge-project-");
  const agentDir = tempDir("mcp-bridge-agent-");
  writeFileSync(path.join(agentDir.dir, "mcp.json"), JSON.stringify(options.mcpConfig));
  const saved = {
    cwd: process.cwd(),
    agentDir: process.env.PI_CODING_AGENT_DIR,
    budget: process.env.PI_MCP_STARTUP_BUDGET_MS,
  };
  const restore = () => {
    process.chdir(saved.cwd);
    for (const [key, value] of [
      ["PI_CODING_AGENT_DIR", saved.agentDir],
      ["PI_MCP_STARTUP_BUDGET_MS", saved.budget],
    ] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    project.cleanup();
    agentDir.cleanup();
  };
  process.env.PI_CODING_AGENT_DIR = agentDir.dir;
  process.env.PI_MCP_STARTUP_BUDGET_MS = String(options.startupBudgetMs ?? 60_000);
  process.chdir(project.dir);
  let pi: InProcessPi | undefined;
  try {
    pi = await startInProcessPi({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [EXTENSION_DIR, ...(options.extensionPaths ?? [])],
      model: options.model,
    });
    await pi.session.bindExtensions({
      onError: (error) => {
        throw new Error(`extension error: ${JSON.stringify(error)}`);
      },
      ...(options.uiContext ? { uiContext: options.uiContext } : {}),
    });
  } catch (error) {
    await pi?.close();
    restore();
    throw error;
  }
  const started = pi;
  return {
    pi: started,
    project: project.dir,
    close: async () => {
      await started.close();
      restore();
    },
  };
}
