/**
 * The pi packages this session has, found by pi's own package manager: the `packages` of the agent dir's
 * settings.json (installed for the user) and of the project's `.pi/settings.json` (installed in the project), each
 * where that pi line puts it (a local path, npm, a git clone). A package listed but not installed yet is left out.
 */
import * as path from "node:path";
import { DefaultPackageManager, SettingsManager } from "@mariozechner/pi-coding-agent";
import type { PackageDir } from "../config/package-servers.ts";

/** Lists the installed packages at each call, settings read afresh; user-installed ones first, each folder once. */
export function installedPackages(cwd: string, agentDir: string): () => Promise<PackageDir[]> {
  // One manager for the session: it keeps what it asked npm (`npm root -g`), so that is asked once at most.
  let manager: { settings: SettingsManager; packages: DefaultPackageManager } | undefined;
  return async () => {
    if (manager) await manager.settings.reload();
    else {
      const settings = SettingsManager.create(cwd, agentDir);
      manager = { settings, packages: new DefaultPackageManager({ cwd, agentDir, settingsManager: settings }) };
    }
    const found = new Map<string, PackageDir>();
    const listed = manager.packages.listConfiguredPackages();
    // A package the user installed stays the user's when the project lists it too: the user chose it already.
    for (const scope of ["user", "project"] as const)
      for (const pkg of listed)
        if (pkg.scope === scope && pkg.installedPath) {
          const dir = path.resolve(pkg.installedPath);
          if (!found.has(dir)) found.set(dir, { dir, installed: scope });
        }
    return [...found.values()];
  };
}
