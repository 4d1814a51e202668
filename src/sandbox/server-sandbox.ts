/**
 * The sandbox of one configured local server, as its connection asks for it at each start: the effective setting
 * (./sandbox-setting.ts), turned into rules for where this start runs (./sandbox-policy.ts). The files other servers'
 * secrets come from are denied to it, where they exist as files.
 */
import { statSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Environment, ResolvedStdio } from "../config/substitute.ts";
import type { ServerConfig } from "../config/types.ts";
import type { StdioSandbox } from "../connection/http/transports.ts";
import { otherServersSecrets } from "./other-secrets.ts";
import { sandboxPolicy } from "./sandbox-policy.ts";
import { isSandboxed, type SandboxSetting } from "./sandbox-setting.ts";

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

export interface SandboxScope {
  /** Every configured server: their secret files are kept from this one. */
  servers: readonly ServerConfig[];
  agentDir: string;
  projectRoot: string;
  env: Environment;
}

/** The sandbox for one start of `config` under `setting`; undefined when it runs unsandboxed. */
export function stdioSandbox(
  config: ServerConfig,
  setting: SandboxSetting,
  endpoint: ResolvedStdio,
  scope: SandboxScope,
): StdioSandbox | undefined {
  if (!isSandboxed(setting)) return undefined;
  const home = os.homedir();
  const otherSecrets = otherServersSecrets(scope.servers, config.name, scope.env)
    .map((p) => (p.startsWith("~/") ? path.join(home, p.slice(2)) : p))
    .filter(isFile);
  return {
    server: config.name,
    policy: (tempDir) =>
      sandboxPolicy(setting, {
        home,
        agentDir: scope.agentDir,
        cwd: endpoint.cwd,
        projectRoot: scope.projectRoot,
        tempDir,
        command: endpoint.command,
        env: endpoint.env,
        otherSecrets,
      }),
  };
}
