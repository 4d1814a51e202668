/**
 * What a sandboxed local server may do, worked out from its `sandbox` setting and where it runs. Pure: the paths come
 * in, the rules go out (the library that enforces them is loaded by ./sandbox-runtime.ts).
 *
 * The defaults of `"sandbox": true`: every file may be read except the user's secrets; writes only inside the server's
 * working directory and a private temp dir; no network. A package launcher (`npx`, `uvx`, …) also gets its package
 * cache to write and, on a cold cache, its package registry: without them the server could not start.
 */
import * as path from "node:path";
import type { SandboxRules } from "./sandbox-setting.ts";

/** Files and directories under the home directory that hold credentials, denied to reading (and writing). */
const HOME_SECRETS = [
  ".ssh",
  ".aws",
  ".gnupg",
  ".config/gcloud",
  ".docker",
  ".netrc",
  ".npmrc",
  ".pypirc",
  ".git-credentials",
  ".config/gh",
  ".kube",
  ".azure",
];

/** In pi's agent dir: pi's own API keys, the bridge's OAuth tokens, its trust answers and logs. */
const AGENT_SECRETS = ["auth.json", "mcp-auth", "mcp-bridge"];

interface Launcher {
  /** What the docs and `/mcp` call it. */
  name: string;
  /** Package caches, under the home directory. */
  caches: string[];
  /** Hosts of the public registry it downloads from. */
  registries: string[];
}

/**
 * The caches each command itself writes, made before it starts where they are missing: the sandbox can only make a
 * directory that exists writable, and the home directory around it is read-only, so a first `npx` could not create
 * `~/.npm`.
 */
const OWN_CACHES: Record<string, string[]> = {
  npx: [".npm"],
  npm: [".npm"],
  pnpm: [".cache/pnpm", ".local/share/pnpm"],
  pnpx: [".cache/pnpm", ".local/share/pnpm"],
  yarn: [".cache/yarn"],
  bunx: [".bun/install/cache"],
  bun: [".bun/install/cache"],
  uvx: [".cache/uv"],
  uv: [".cache/uv"],
  pipx: [".local/share/pipx"],
};

const NPM: Launcher = {
  name: "npm",
  caches: [".npm", ".cache/pnpm", ".local/share/pnpm", ".cache/yarn", ".yarn", ".bun/install/cache"],
  registries: ["registry.npmjs.org", "registry.yarnpkg.com"],
};
const PYTHON: Launcher = {
  name: "Python",
  caches: [".cache/uv", ".local/share/uv", ".cache/pip", ".local/pipx", ".local/share/pipx"],
  registries: ["pypi.org", "files.pythonhosted.org"],
};
const LAUNCHERS: Record<string, Launcher> = {
  npx: NPM,
  npm: NPM,
  pnpm: NPM,
  pnpx: NPM,
  yarn: NPM,
  bunx: NPM,
  bun: NPM,
  uvx: PYTHON,
  uv: PYTHON,
  pipx: PYTHON,
};

/** A command's name as the launcher tables key it (`npx` for `/usr/bin/npx` and `npx.cmd`). */
function commandName(command: string): string {
  return path
    .basename(command)
    .replace(/\.(cmd|exe|bat)$/i, "")
    .toLowerCase();
}

/** The package launcher a command is, if it is one. */
function launcherOf(command: string): Launcher | undefined {
  const base = commandName(command);
  return Object.hasOwn(LAUNCHERS, base) ? LAUNCHERS[base] : undefined;
}

export interface SandboxContext {
  home: string;
  agentDir: string;
  /** The server's working directory (its `cwd`, or the project root). */
  cwd: string;
  /** The server's own temp dir, made for this start. */
  tempDir: string;
  /** The command as resolved (after `${VAR}`). */
  command: string;
  /** Files other servers' `${VAR}`s and `!command`s read (tokens, key files): denied to this one. */
  otherSecrets: readonly string[];
}

/** The rules the sandbox library enforces for one server start, as absolute paths and host lists. */
export interface SandboxPolicy {
  filesystem: { denyRead: string[]; allowWrite: string[]; denyWrite: string[] };
  network: { allowedDomains: string[]; deniedDomains: string[] };
  tempDir: string;
  /** Directories to make before the start (the launcher's own cache, on a first run). */
  makeDirs: string[];
  /** The package launcher whose cache (and registry, if `registryOpen`) the server got. */
  launcher?: string;
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
  const registries = registryOpen ? (launcher ?? NPM).registries : [];
  const secrets = [
    ...HOME_SECRETS.map((p) => path.join(ctx.home, p)),
    ...AGENT_SECRETS.map((p) => path.join(ctx.agentDir, p)),
    ...ctx.otherSecrets.map((p) => absolute(p, ctx)),
  ];
  const caches = (launcher?.caches ?? []).map((p) => path.join(ctx.home, p));
  const name = commandName(ctx.command);
  const ownCaches = Object.hasOwn(OWN_CACHES, name) ? OWN_CACHES[name]! : [];
  return {
    filesystem: {
      denyRead: unique([...secrets, ...rules.filesystem.denyRead.map((p) => absolute(p, ctx))]),
      allowWrite: unique([
        ctx.cwd,
        ctx.tempDir,
        ...caches,
        ...rules.filesystem.allowWrite.map((p) => absolute(p, ctx)),
      ]),
      // A working directory that holds the secrets (pi started in the home directory) must not make them writable.
      denyWrite: unique([...secrets, ...rules.filesystem.denyWrite.map((p) => absolute(p, ctx))]),
    },
    network: {
      allowedDomains: unique([...registries, ...rules.network.allowedDomains]),
      deniedDomains: unique(rules.network.deniedDomains),
    },
    tempDir: ctx.tempDir,
    makeDirs: ownCaches.map((p) => path.join(ctx.home, p)),
    launcher: launcher?.name,
    registryOpen,
  };
}
