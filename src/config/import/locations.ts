/**
 * Where each MCP client keeps its configuration, on each platform. Pure: the home directory, project root, platform
 * and environment come from the `ImportLocations` passed in.
 */
import * as path from "node:path";
import type { ClientConfigFile, ImportLocations } from "./import-types.ts";

/** Every config file each client documents, for this platform (whether or not it exists). */
export function candidateFiles(loc: ImportLocations): ClientConfigFile[] {
  // Paths are built for the target platform, not the one running the code, so Windows paths can be tested anywhere.
  const p = loc.platform === "win32" ? path.win32 : path.posix;
  const fromEnv = (name: string): string | undefined => {
    const value = loc.env[name];
    return value !== undefined && value.trim() !== "" ? value : undefined;
  };
  const { home, projectRoot: root } = loc;
  // Electron apps (Claude Desktop, VS Code) keep their settings in the platform's application-data directory.
  const appData =
    loc.platform === "win32"
      ? (fromEnv("APPDATA") ?? p.join(home, "AppData", "Roaming"))
      : loc.platform === "darwin"
        ? p.join(home, "Library", "Application Support")
        : (fromEnv("XDG_CONFIG_HOME") ?? p.join(home, ".config"));
  // opencode uses XDG directories on every platform, Windows and macOS included.
  const xdgConfig = fromEnv("XDG_CONFIG_HOME") ?? p.join(home, ".config");
  const codexHome = fromEnv("CODEX_HOME") ?? p.join(home, ".codex");
  const claudeDir = fromEnv("CLAUDE_CONFIG_DIR") ?? home;
  const opencodeConfig = fromEnv("OPENCODE_CONFIG");

  const files: ClientConfigFile[] = [
    { client: "claude-desktop", scope: "user", path: p.join(appData, "Claude", "claude_desktop_config.json") },
    { client: "claude-code", scope: "project", path: p.join(root, ".mcp.json") },
    { client: "claude-code", scope: "user", path: p.join(claudeDir, ".claude.json") },
    { client: "cursor", scope: "project", path: p.join(root, ".cursor", "mcp.json") },
    { client: "cursor", scope: "user", path: p.join(home, ".cursor", "mcp.json") },
    { client: "vscode", scope: "project", path: p.join(root, ".vscode", "mcp.json") },
    { client: "vscode", scope: "user", path: p.join(appData, "Code", "User", "mcp.json") },
    { client: "windsurf", scope: "user", path: p.join(home, ".codeium", "windsurf", "mcp_config.json") },
    { client: "codex", scope: "project", path: p.join(root, ".codex", "config.toml") },
    { client: "codex", scope: "user", path: p.join(codexHome, "config.toml") },
    { client: "opencode", scope: "project", path: p.join(root, "opencode.json") },
    { client: "opencode", scope: "project", path: p.join(root, "opencode.jsonc") },
    { client: "opencode", scope: "user", path: p.join(xdgConfig, "opencode", "opencode.json") },
    { client: "opencode", scope: "user", path: p.join(xdgConfig, "opencode", "opencode.jsonc") },
    { client: "opencode", scope: "user", path: p.join(xdgConfig, "opencode", "config.json") },
  ];
  if (opencodeConfig !== undefined)
    files.push({ client: "opencode", scope: "user", path: p.resolve(root, opencodeConfig) });

  // With the project root at the home directory, a project file and a user file are the same file: read it once, as
  // the user file it really is (`~/.cursor/mcp.json` is Cursor's global configuration whatever directory pi is in).
  const byPath = new Map<string, ClientConfigFile>();
  for (const file of files) {
    const key = loc.platform === "win32" ? file.path.toLowerCase() : file.path;
    const earlier = byPath.get(key);
    if (earlier) earlier.scope = "user";
    else byPath.set(key, file);
  }
  return [...byPath.values()];
}
