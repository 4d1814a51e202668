/**
 * What a sandboxed local server may do, worked out from its `sandbox` setting and where it runs. Pure: the paths come
 * in, the rules go out (the library that enforces them is loaded by ./sandbox-runtime.mjs).
 *
 * The defaults of `"sandbox": true`: every file may be read except the user's secrets; writes only inside the server's
 * working directory and a private temp dir; no network. A package launcher (`npx`, `uvx`, …) also gets its package
 * cache to write and, on a cold cache, its package registry: without them the server could not start.
 */
import * as path from "node:path";
import { isAllowedHost, type SandboxRules } from "../config/sandbox-setting.ts";
import { npmFlag } from "../connection/local/npm-flags.ts";

/**
 * Files and directories under the home directory that hold credentials, denied to reading (and writing). git's
 * credential store writes `.config/git/credentials` where `.git-credentials` is absent.
 */
const HOME_SECRETS =
  ".ssh/ .aws/ .gnupg/ .config/gcloud/ .docker/ .netrc .npmrc .pypirc .git-credentials .config/git/credentials " +
  ".config/gh/ .kube/ .azure/";

/**
 * Other tools' tokens under the home directory, denied where they exist (./server-sandbox.ts looks): an absent one would
 * get an empty placeholder on the host while the server runs, which a tool there could read as a broken file.
 */
export const TOOL_TOKENS = (
  ".config/containers/auth.json .cargo/credentials .cargo/credentials.toml .pgpass .gem/credentials .vault-token " +
  ".terraform.d/credentials.tfrc.json .yarnrc.yml .claude/.credentials.json .codex/auth.json .gemini/settings.json " +
  ".gemini/oauth_creds.json .local/share/opencode/auth.json .config/github-copilot/apps.json " +
  ".config/github-copilot/hosts.json"
).split(" ");

/**
 * In pi's agent dir: pi's API keys (`auth.json`, and `models.json`, where custom providers keep theirs), pi 1.x's MCP
 * sign-ins (`mcp-auth.json`), the bridge's OAuth tokens (`mcp-auth`), its trust answers and logs (`mcp-bridge`), and
 * the user's MCP config (`mcp.json`), which holds the other servers' keys and headers as written.
 */
const AGENT_SECRETS = ["auth.json", "models.json", "mcp-auth.json", "mcp-auth/", "mcp-bridge/", "mcp.json"];

/**
 * In pi's agent dir, what pi runs at its start (its extensions, git packages, settings, and the fd and rg of `bin`,
 * which it runs before the system's, and moves there from `tools`), as RUN_BY_OTHERS's.
 */
const AGENT_RUN =
  "extensions extensions/index.ts git git/github.com settings.json bin bin/.keep tools tools/.keep".split(" ");

/**
 * In the server's working directory and the project root: what another program runs or obeys without asking — pi's
 * project config and extensions, git hooks (and hook managers') and config, shell start-up files, direnv, editors',
 * agents', npm's, cargo's and bun's settings, and the versions asdf or mise put on PATH. A sandboxed server writing
 * one would run code outside its sandbox later. (The library guards some below pi's own directory; these hold wherever
 * the server works.) A path below each directory makes the library cover an absent one with an empty directory, not a
 * file: bubblewrap makes that mount point on the host while the server runs, and a `.pi` that is a file breaks the
 * project config of every pi started there meanwhile.
 */
const RUN_BY_OTHERS = (
  ".pi .pi/extensions .git/hooks .git/config .git/config.worktree .gitmodules .envrc .bashrc .bash_profile " +
  ".bash_login .zshenv .zshrc .zprofile .zlogin .profile " +
  ".gitconfig .vscode .vscode/tasks.json .idea .idea/workspace.xml .claude .claude/settings.json .cursor .cursor/mcp.json " +
  ".gemini .gemini/settings.json .opencode .opencode/plugin .codex .codex/config.toml " +
  ".mcp.json .ripgreprc .npmrc .yarnrc .yarnrc.yml .husky .husky/_ .pre-commit-config.yaml " +
  ".cargo .cargo/config.toml bunfig.toml .tool-versions"
).split(" ");

/**
 * As RUN_BY_OTHERS's, where they are there: an empty one in their place would change what the tool does (lefthook uses
 * any one of its configs; mise asks to trust a new one, and trusts a config by its path; pnpm records a pnpmfile's
 * checksum in its lockfile).
 */
export const RUN_IF_THERE =
  "lefthook.yml .lefthook.yml lefthook.yaml lefthook.toml lefthook.json mise.toml .mise.toml .pnpmfile.cjs".split(" ");

/** A path below each directory here makes an absent one covered by an empty directory, as RUN_BY_OTHERS's. */
const HOME_RUN =
  ".config/git .config/git/config .config/fish .config/fish/config.fish .local/bin .local/bin/git " +
  ".config/autostart .config/autostart/.keep .config/systemd .config/systemd/user .codeium .codeium/.keep " +
  ".config/Code/User .config/Code/User/.keep .config/Claude .config/Claude/.keep .config/opencode " +
  ".config/opencode/.keep .config/mise .config/mise/config.toml .config/direnv .config/direnv/direnvrc";

interface Launcher {
  /** What the docs and `/mcp` call it. */
  name: string;
  /** The variables that move its cache (`npm_config_cache`), in the order it reads them. */
  cacheVars: string[];
  /** Its package caches, under the home directory: made before the start where missing (it could not make them). */
  caches: string[];
  /** Hosts of the public registry it downloads from. */
  registries: string[];
}

const NPM_REGISTRIES = ["registry.npmjs.org", "registry.yarnpkg.com"];
const NPM = { name: "npm", cacheVars: ["npm_config_cache", "NPM_CONFIG_CACHE"], registries: NPM_REGISTRIES };
const PYPI = ["pypi.org", "files.pythonhosted.org"];
const PYTHON = { name: "Python", cacheVars: ["UV_CACHE_DIR", "PIP_CACHE_DIR"], registries: PYPI };
/** Where pi's environment points a launcher at another registry (a company's): its host is opened too. */
const REGISTRY_VARS = { npm: /^npm_config_registry$/i, Python: /^(UV_INDEX_URL|UV_DEFAULT_INDEX|PIP_INDEX_URL)$/ };
const LAUNCHERS: Record<string, Launcher> = {
  npx: { ...NPM, caches: [".npm"] },
  npm: { ...NPM, caches: [".npm"] },
  pnpm: { ...NPM, caches: [".cache/pnpm", ".local/share/pnpm"] },
  pnpx: { ...NPM, caches: [".cache/pnpm", ".local/share/pnpm"] },
  yarn: { ...NPM, caches: [".cache/yarn", ".yarn"] },
  bunx: { ...NPM, caches: [".bun/install/cache"] },
  bun: { ...NPM, caches: [".bun/install/cache"] },
  uvx: { ...PYTHON, caches: [".cache/uv", ".local/share/uv"] },
  uv: { ...PYTHON, caches: [".cache/uv", ".local/share/uv"] },
  pipx: { ...PYTHON, caches: [".local/pipx", ".local/share/pipx", ".cache/pip"] },
};

/** The package launcher a command is, if it is one (`npx`, `/usr/bin/npx`, `npx.cmd`). */
function launcherOf(command: string): Launcher | undefined {
  const base = path.basename(command.toLowerCase()).replace(/\.(cmd|exe|bat)$/i, "");
  return Object.hasOwn(LAUNCHERS, base) ? LAUNCHERS[base] : undefined;
}

export interface SandboxContext {
  home: string;
  agentDir: string;
  /** The server's working directory (its `cwd`, or the project root). */
  cwd: string;
  projectRoot: string;
  /** The server's own temp dir, made for this start. */
  tempDir: string;
  /** The command as resolved (after `${VAR}`). */
  command: string;
  /** The server's own environment (its `env`): where it moves a launcher's cache, that is the cache. */
  env?: Readonly<Record<string, string>>;
  /** Its arguments: npx's `--cache <dir>` moves the cache as its `env` does. */
  args?: readonly string[];
  /** pi's environment: a registry it points the launcher at is the launcher's (not one the server's `env` names). */
  piEnv?: Readonly<Record<string, string | undefined>>;
  /** Files other servers' `${VAR}`s and `!command`s read (tokens, key files), and other tools' tokens: denied. */
  otherSecrets: readonly string[];
}

/** The rules the sandbox library enforces for one server start, as absolute paths and host lists. */
export interface SandboxPolicy {
  filesystem: { denyRead: string[]; allowWrite: string[]; denyWrite: string[] };
  network: { allowedDomains: string[]; deniedDomains: string[] };
  tempDir: string;
  /** The package launcher whose cache (and registry, if `registryOpen`) the server got. */
  launcher?: string;
  /** The launcher's caches: made before the start where missing. */
  caches: string[];
  registryOpen: boolean;
}

const NO_RULES: SandboxRules = {
  filesystem: { allowWrite: [], denyRead: [], denyWrite: [] },
  network: { allowedDomains: [], deniedDomains: [] },
};

/** `~/x` under the home directory, a relative path under `cwd`, an absolute path as it is. */
function absolute(p: string, ctx: SandboxContext): string {
  if (p === "~") return ctx.home;
  if (p.startsWith("~/")) return path.join(ctx.home, p.slice(2));
  return path.resolve(ctx.cwd, p);
}

const unique = (list: string[]) => [...new Set(list)];

export function sandboxPolicy(setting: true | SandboxRules, ctx: SandboxContext): SandboxPolicy {
  const rules = setting === true ? NO_RULES : setting;
  const launcher = launcherOf(ctx.command);
  const registryOpen = rules.network.allowPackageRegistry ?? launcher !== undefined;
  const vars = REGISTRY_VARS[launcher?.name === "Python" ? "Python" : "npm"];
  const urls = Object.entries(ctx.piEnv ?? {}).filter(([name, url]) => vars.test(name) && URL.canParse(url ?? ""));
  const hosts = urls.map(([, url]) => new URL(url!).host).filter(isAllowedHost);
  const registries = registryOpen ? [...(launcher?.registries ?? NPM_REGISTRIES), ...hosts] : [];
  const absolutes = (paths: readonly string[]) => paths.map((p) => absolute(p, ctx));
  const known = [
    ...HOME_SECRETS.split(" ").map((p) => path.join(ctx.home, p)),
    ...AGENT_SECRETS.map((p) => path.join(ctx.agentDir, p)),
  ];
  const secrets = [...known.map((p) => p.replace(/\/$/, "")), ...absolutes(ctx.otherSecrets)];
  // A path below each directory (a trailing /) makes an absent one covered by an empty directory, as RUN_BY_OTHERS's.
  const secretDirs = known.filter((p) => p.endsWith("/")).map((p) => `${p}config`);
  const flag = launcher?.name === "npm" ? npmFlag(ctx.args ?? [], "cache") : undefined;
  const moved = flag || launcher?.cacheVars.map((name) => ctx.env?.[name]).find((value) => value);
  const at = moved ? absolute(moved, ctx) : "";
  // Not one that holds the home directory or the project (`~`, `/`, `..`): all of it would be writable.
  const holds = (p: string) => p === at || p.startsWith(at.endsWith("/") ? at : `${at}/`);
  const opens = at && !holds(ctx.home) && [ctx.projectRoot, ctx.cwd].every((p) => p === at || !holds(p));
  const caches = [
    // Under the HOME the launcher gets: the server's env may set another.
    ...(launcher?.caches ?? []).map((p) => path.join(ctx.env?.HOME || ctx.home, p)),
    ...(opens ? [at] : []),
  ];
  return {
    filesystem: {
      denyRead: unique([...secrets, ...absolutes(rules.filesystem.denyRead)]),
      allowWrite: unique([ctx.cwd, ctx.tempDir, ...caches, ...absolutes(rules.filesystem.allowWrite)]),
      // A working directory that holds the secrets (pi started in the home directory) must not make them writable.
      denyWrite: unique([
        ...secrets,
        ...secretDirs,
        ...[ctx.cwd, ctx.projectRoot].flatMap((dir) => RUN_BY_OTHERS.map((p) => path.join(dir, p))),
        // And in the home directory, which a launcher's moved cache may open in part (~/.claude, ~/.cursor); not ~/.pi,
        // which holds pi's agent dir (its own list is below).
        ...RUN_BY_OTHERS.filter((p) => !p.startsWith(".pi")).map((p) => path.join(ctx.home, p)),
        // In the home directory, which a server working there could write: git's own config (besides ~/.gitconfig), fish's
        // start-up files (and mise's and direnv's, run at every prompt and cd), the commands of ~/.local/bin, which
        // comes first on PATH, what starts at login, and the settings other MCP clients start servers from (.cursor's,
        // .gemini's and .claude's are RUN_BY_OTHERS's).
        ...HOME_RUN.split(" ").map((p) => path.join(ctx.home, p)),
        ...AGENT_RUN.map((p) => path.join(ctx.agentDir, p)),
        ...absolutes(rules.filesystem.denyWrite),
      ]),
    },
    network: {
      allowedDomains: unique([...registries, ...rules.network.allowedDomains]),
      deniedDomains: unique(rules.network.deniedDomains),
    },
    tempDir: ctx.tempDir,
    launcher: launcher?.name,
    caches,
    registryOpen,
  };
}

/** `~/x` for a path under the home directory: shorter, and the same for every user. */
function tilde(p: string, home: string): string {
  return p === home ? "~" : p.startsWith(`${home}/`) ? `~/${p.slice(home.length + 1)}` : p;
}

/** What a sandbox allows, in lines for `/mcp`: where it may write, what it may not read, which hosts it may reach. */
export function describePolicy(policy: SandboxPolicy, home: string): string[] {
  const list = (paths: string[]) => paths.map((p) => tilde(p, home)).join(", ");
  const { filesystem, network } = policy;
  const hosts = network.allowedDomains.length ? network.allowedDomains.join(", ") : "none";
  const launcher = policy.launcher
    ? ` (with the ${policy.launcher} package cache${policy.registryOpen ? " and registry" : ""})`
    : "";
  return [
    `writes: ${list(filesystem.allowWrite)}${launcher}`,
    `denied reads: ${list(filesystem.denyRead)}`,
    `network hosts: ${hosts}${network.deniedDomains.length ? `; denied: ${network.deniedDomains.join(", ")}` : ""}`,
  ];
}
