/**
 * How a local server's command is started on each platform. On Windows, `npx`, `npm`, `pnpm`, `yarn` and other
 * `.cmd`/`.bat` shims cannot be spawned directly (Node refuses batch files without a shell), so they run through
 * `cmd /c`, as other MCP clients' docs tell their users to do by hand. Pure.
 */
import * as path from "node:path";

/** Executables that run as they are on Windows; anything else (a bare `npx`, a `.cmd`) goes through cmd. */
const WINDOWS_DIRECT = new Set([".exe", ".com"]);

export function platformCommand(
  command: string,
  args: readonly string[],
  platform: NodeJS.Platform,
): { command: string; args: string[] } {
  const ext = path.win32.extname(command).toLowerCase();
  if (platform !== "win32" || WINDOWS_DIRECT.has(ext) || /^(cmd|cmd\.exe)$/i.test(path.win32.basename(command)))
    return { command, args: [...args] };
  // /d: no AutoRun commands; /s: keep the quoting of what follows /c as it is.
  return { command: "cmd.exe", args: ["/d", "/s", "/c", command, ...args] };
}
