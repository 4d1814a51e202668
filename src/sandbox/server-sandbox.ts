/**
 * The sandbox of one configured local server, as its connection asks for it at each start: the effective setting
 * (../config/sandbox-setting.ts), turned into rules for where this start runs (./sandbox-policy.ts). The files other
 * servers' secrets come from are denied to it, where they exist as files, and what is on disk adds to the rules: where
 * links in denied directories lead, and the hooks and config of the git directories below its working directory.
 */
import { type Dirent, existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { candidateFiles } from "../config/import/locations.ts";
import type { Environment, ResolvedStdio } from "../config/substitute.ts";
import type { ServerConfig } from "../config/types.ts";
import { otherServersSecrets } from "./other-secrets.ts";
import { RUN_IF_THERE, type SandboxPolicy, sandboxPolicy, TOOL_TOKENS } from "./sandbox-policy.ts";
import { isSandboxed, type SandboxSetting } from "../config/sandbox-setting.ts";

/** What `run` returns, or `otherwise` where it throws (a file gone, or not the user's to read). */
function attempt<T>(run: () => T, otherwise: T): T {
  try {
    return run();
  } catch {
    return otherwise;
  }
}

function isFile(file: string, orDirectory = false): boolean {
  const stat = attempt(() => statSync(file), undefined);
  return !!stat && (stat.isFile() || (orDirectory && stat.isDirectory()));
}

const entries = (dir: string): Dirent[] => attempt(() => readdirSync(dir, { withFileTypes: true }), []);

/**
 * The git directories below `dir` whose hooks git runs and whose config it obeys: repositories three levels down (the
 * library looks below pi's own directory only, and a server may work elsewhere) and their submodules' in
 * `.git/modules`, which no one looks in (a module's name is a path: `libs/ui`). A submodule's `.git` file, which names
 * its git directory, is one too: what is denied below it holds the file itself (the library makes it read-only). And
 * the `.pi` directories there, which a pi run in their directory (a monorepo's package) loads.
 */
function gitAndPiDirs(dir: string, depth = 3, modules = false): string[] {
  return entries(dir).flatMap((entry) => {
    const sub = path.join(dir, entry.name);
    if (!modules && entry.name === ".git" && entry.isFile()) return [sub];
    if (!entry.isDirectory() || entry.name === "node_modules") return [];
    if (!modules && entry.name === ".pi") return [sub];
    if (modules ? existsSync(path.join(sub, "HEAD")) : entry.name === ".git")
      return [sub, ...gitAndPiDirs(path.join(sub, "modules"), 0, true)];
    return modules || depth > 1 ? gitAndPiDirs(sub, depth - 1, modules) : [];
  });
}

/** What git runs or obeys of a git directory; also where its config moves the hooks (`core.hooksPath`: `.githooks`). */
function gitDenied(gitDir: string): string[] {
  const config = attempt(() => readFileSync(path.join(gitDir, "config"), "utf8"), "");
  const moved = /^\s*hooksPath\s*=\s*"?(.+?)"?\s*$/im.exec(config)?.[1];
  const hooks = moved && path.basename(gitDir) === ".git" ? [path.resolve(path.dirname(gitDir), moved)] : [];
  // A linked worktree's own (`git worktree add`): its config.worktree, and commondir, which names the config it obeys.
  const linked = entries(path.join(gitDir, "worktrees")).map((entry) => path.join(gitDir, "worktrees", entry.name));
  const own = linked.flatMap((dir) => [path.join(dir, "config.worktree"), path.join(dir, "commondir")]);
  return [...["hooks", "config", "config.worktree"].map((p) => path.join(gitDir, p)), ...hooks, ...own];
}

/**
 * What links inside the denied directories (two levels down) lead to: a secret kept elsewhere and linked in (dotfiles
 * by stow: `~/.aws/credentials` -> `~/dotfiles/aws/credentials`, a directory too) would be read where it is kept.
 */
function linkedTargets(dirs: readonly string[], depth = 2): string[] {
  const found = dirs.flatMap((dir) => entries(dir).map((entry) => ({ entry, file: path.join(dir, entry.name) })));
  const links = found.filter(({ entry }) => entry.isSymbolicLink()).map(({ file }) => file);
  const below = found.filter(({ entry }) => depth > 1 && entry.isDirectory()).map(({ file }) => file);
  return [
    ...links.filter((file) => isFile(file, true)).map((file) => realpathSync(file)),
    ...(below.length ? linkedTargets(below, depth - 1) : []),
  ];
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
  // Other MCP clients' own configs (~/.claude.json, ~/.cursor/mcp.json): their servers' keys and headers as written.
  const where = { home, projectRoot: scope.projectRoot, platform: process.platform, env: scope.env };
  const clients = candidateFiles(where).filter((file) => file.scope === "user");
  const otherSecrets = otherServersSecrets(scope.servers, config.name, scope.env, scope.projectRoot)
    .map((p) => (p.startsWith("~/") ? path.join(home, p.slice(2)) : p))
    .concat(
      TOOL_TOKENS.map((p) => path.join(home, p)),
      clients.map((file) => file.path),
    )
    .filter((file) => isFile(file));
  // A working directory reached by a link outside the project (~/code -> /data/code) is where it leads: the library
  // binds no link that leads out of its own tree. One inside the project stays a link (the project could have made it).
  const { projectRoot } = scope;
  const inProject = endpoint.cwd === projectRoot || endpoint.cwd.startsWith(`${projectRoot}/`);
  const cwd = inProject || !existsSync(endpoint.cwd) ? endpoint.cwd : realpathSync(endpoint.cwd);
  return {
    server: config.name,
    policy: (tempDir) => {
      const policy = sandboxPolicy(setting, {
        home,
        agentDir: scope.agentDir,
        cwd,
        projectRoot: scope.projectRoot,
        tempDir,
        command: endpoint.command,
        env: endpoint.env,
        args: endpoint.args,
        piEnv: scope.env,
        otherSecrets,
      });
      const { denyRead, denyWrite } = policy.filesystem;
      // Not a directory that holds the server's own: it could not read its own files, nor start.
      const linked = linkedTargets(denyRead).filter((target) => path.relative(target, cwd).startsWith(".."));
      policy.filesystem.denyRead = [...new Set([...denyRead, ...linked])];
      const git = gitAndPiDirs(cwd).flatMap((dir) => (dir.endsWith("/.pi") ? [dir] : gitDenied(dir)));
      const there = [cwd, projectRoot]
        .flatMap((dir) => RUN_IF_THERE.map((p) => path.join(dir, p)))
        .filter((f) => isFile(f));
      // lefthook merges its local config (lefthook-local.yml): a missing one cannot be made; an empty one adds nothing.
      const local = there
        .filter((f) => /lefthook\.(yml|yaml|toml)$/.test(f))
        .map((f) => f.replace(/\.(\w+)$/, "-local.$1"));
      policy.filesystem.denyWrite = [...new Set([...denyWrite, ...git, ...there, ...local])];
      return policy;
    },
  };
}
