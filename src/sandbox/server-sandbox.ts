/**
 * The sandbox of one configured local server, as its connection asks for it at each start: the effective setting
 * (../config/sandbox-setting.ts), turned into rules for where this start runs (./sandbox-policy.ts). The files other
 * servers' secrets come from are denied to it, where they exist as files.
 */
import { statSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Environment, ResolvedStdio } from "../config/substitute.ts";
import type { ServerConfig } from "../config/types.ts";
import { otherServersSecrets } from "./other-secrets.ts";
import { type SandboxPolicy, sandboxPolicy } from "./sandbox-policy.ts";
import { isSandboxed, type SandboxSetting } from "../config/sandbox-setting.ts";

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** A local server's sandbox: its rules, given the private temp dir made for each start. */
export interface StdioSandbox {
  server: string;
  policy(tempDir: string): SandboxPolicy;
  /** Told the rules of each start, before its process is spawned. */
  onStart?(policy: SandboxPolicy): void;
  /** A line the sandbox library recorded for this start (a host its proxy denied). */
  onViolation?(line: string): void;
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
        piEnv: scope.env,
        otherSecrets,
      }),
  };
}
