/**
 * What importing other MCP clients' configurations deals in: the clients, where to look, one config file of a
 * client, and a server ready to be written into mcp-bridge's own config.
 */
import type { Environment } from "../substitute.ts";
import type { ConfigScope } from "../types.ts";

export type ClientId = "claude-desktop" | "claude-code" | "cursor" | "vscode" | "windsurf" | "codex" | "opencode";

export const CLIENT_LABELS: Readonly<Record<ClientId, string>> = {
  "claude-desktop": "Claude Desktop",
  "claude-code": "Claude Code",
  cursor: "Cursor",
  vscode: "VS Code",
  windsurf: "Windsurf",
  codex: "Codex",
  opencode: "opencode",
};

/** Where to look: every client's file locations are derived from these, never from the running process. */
export interface ImportLocations {
  home: string;
  projectRoot: string;
  platform: NodeJS.Platform;
  env: Environment;
}

export interface ClientConfigFile {
  client: ClientId;
  path: string;
  scope: Extract<ConfigScope, "user" | "project">;
}

/** How a client's file is named in messages: `Cursor config /home/ann/.cursor/mcp.json`. */
export function describeClientFile(file: ClientConfigFile): string {
  return `${CLIENT_LABELS[file.client]} config ${file.path}`;
}

export interface ImportedServer {
  name: string;
  client: ClientId;
  sourcePath: string;
  /** An entry in mcp-bridge's own format, ready to write into .pi/mcp.json or the user file (validateServerEntry must accept it). */
  entry: Record<string, unknown>;
  /** Human notes: `${input:…}` prompts turned into ${VAR}s, an unsupported field dropped, a disabled server, … */
  notes: string[];
  /** Inline values that look like secrets (in env or headers, not `${VAR}` references): their keys, never their values. */
  inlineSecrets: string[];
}

/** The servers found, and what could not be imported (never quoting a value from the file). */
export interface ImportResult {
  servers: ImportedServer[];
  errors: string[];
}

/** A VS Code `inputs` prompt, which an entry refers to as `${input:<id>}`. */
export interface VsCodeInput {
  id: string;
  description?: string;
  password: boolean;
  default?: string;
}
