/**
 * The `sandbox` setting of a local server, and the top-level default, as config files write it: `false` (runs with the
 * user's rights), `true` (the defaults of ../sandbox/sandbox-policy.ts), or rules in the vocabulary of
 * `@anthropic-ai/sandbox-runtime` (`filesystem.allowWrite`/`denyRead`/`denyWrite`, `network.allowedDomains`/
 * `deniedDomains`) merged over those defaults, plus `network.allowPackageRegistry`. Pure.
 */
import { quoteValue } from "../common/text.ts";
import { isObject } from "../common/values.ts";

export interface SandboxRules {
  filesystem: { allowWrite: string[]; denyRead: string[]; denyWrite: string[] };
  network: {
    allowedDomains: string[];
    deniedDomains: string[];
    /** Unset: opened where the command is a package launcher (`npx`, `uvx`, …); see ../sandbox/sandbox-policy.ts. */
    allowPackageRegistry?: boolean;
  };
}

/** `false`: no sandbox; `true` or rules: sandboxed. */
export type SandboxSetting = boolean | SandboxRules;

export const SANDBOX_KEY = "sandbox";

const FIELDS = {
  filesystem: ["allowWrite", "denyRead", "denyWrite"],
  network: ["allowedDomains", "deniedDomains", "allowPackageRegistry"],
} as const;

/** A host as the library's lists take it: a name or `*.` wildcard, an IP literal (IPv6 in brackets), an optional port. */
const DOMAIN = /^(\*\.)?[a-z0-9_.-]+(:\d{1,5})?$|^\[[0-9a-f:.]+\](:\d{1,5})?$/i;
/** What the library lets a server reach (it refuses the rest at the start): a dotted name, `*.` and two labels at least. */
const ALLOWED = /^(localhost|(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)+|\[[0-9a-f:.]+\])(:[1-9]\d{0,4})?$/i;
export const isAllowedHost = (d: string) => ALLOWED.test(d) && Number(/:(\d+)$/.exec(d)?.[1] ?? 0) <= 65535;

function stringList(value: unknown, field: string, errors: string[], isHost?: (d: string) => boolean): string[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string" || v.trim() === "" || v.includes("\0"))) {
    errors.push(`\`${field}\` must be a list of non-empty strings`);
    return [];
  }
  const list = value as string[];
  const bad = list.filter((v) => (isHost ? !isHost(v) : /\$(\{|\w)/.test(v))).map((v) => quoteValue(v));
  if (bad.length && isHost)
    errors.push(
      `\`${field}\`: ${bad.join(", ")} is not a host name (write \`api.example.com\`, \`*.example.com\` or \`api.example.com:443\`, without a scheme or path)`,
    );
  else if (bad.length)
    errors.push(
      `\`${field}\`: ${bad.join(", ")} holds a variable, which a sandbox path does not expand (write ~/ for the home directory, or a path relative to the server's working directory)`,
    );
  return list;
}

/** Reads a `sandbox` value (`field` names it in messages: `sandbox`, or the top-level one). */
export function readSandboxSetting(value: unknown, field: string, errors: string[]): SandboxSetting | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "boolean") return value;
  if (!isObject(value)) {
    errors.push(`\`${field}\` must be true, false, or an object with \`filesystem\` and \`network\` rules`);
    return undefined;
  }
  const rules: SandboxRules = {
    filesystem: { allowWrite: [], denyRead: [], denyWrite: [] },
    network: { allowedDomains: [], deniedDomains: [] },
  };
  const before = errors.length;
  for (const key of Object.keys(value).filter((k) => !Object.hasOwn(FIELDS, k)))
    errors.push(`\`${field}.${key}\` is not a sandbox setting (use \`filesystem\` or \`network\`)`);
  for (const group of ["filesystem", "network"] as const) {
    const part = value[group];
    if (part === undefined || part === null) continue;
    if (!isObject(part)) {
      errors.push(`\`${field}.${group}\` must be an object`);
      continue;
    }
    for (const key of Object.keys(part).filter((k) => !(FIELDS[group] as readonly string[]).includes(k)))
      errors.push(
        `\`${field}.${group}.${key}\` is not a sandbox setting (use ${FIELDS[group].map((f) => `\`${f}\``).join(", ")})`,
      );
  }
  const fs = isObject(value.filesystem) ? value.filesystem : {};
  const net = isObject(value.network) ? value.network : {};
  for (const key of FIELDS.filesystem)
    if (fs[key] !== undefined && fs[key] !== null)
      rules.filesystem[key] = stringList(fs[key], `${field}.filesystem.${key}`, errors);
  for (const key of ["allowedDomains", "deniedDomains"] as const)
    if (net[key] !== undefined && net[key] !== null)
      rules.network[key] = stringList(net[key], `${field}.network.${key}`, errors, (d) =>
        key === "allowedDomains" ? isAllowedHost(d) : DOMAIN.test(d),
      );
  if (net.allowPackageRegistry !== undefined) {
    if (typeof net.allowPackageRegistry !== "boolean")
      errors.push(`\`${field}.network.allowPackageRegistry\` must be true or false`);
    else rules.network.allowPackageRegistry = net.allowPackageRegistry;
  }
  return errors.length > before ? undefined : rules;
}

/** Whether a setting asks for a sandbox. */
export function isSandboxed(setting: SandboxSetting | undefined): setting is true | SandboxRules {
  return setting !== undefined && setting !== false;
}

/**
 * The sandbox a server runs in: its own setting, else the user's top-level default. A project's file (or a pi package
 * installed in the project) cannot take a server out of the user's default (its `false` yields to it), and a project
 * server the user trusted "sandboxed" runs in at least the defaults. A remote server runs nowhere here: never sandboxed.
 */
export function effectiveSandbox(
  config: { transport: string; sandbox?: SandboxSetting; source: { scope: string; package?: { installed: string } } },
  userDefault: SandboxSetting | undefined,
  trustedSandboxed: boolean,
): SandboxSetting {
  if (config.transport !== "stdio") return false;
  let setting = config.sandbox ?? userDefault ?? false;
  const fromProject = config.source.scope === "project" || config.source.package?.installed === "project";
  if (setting === false && fromProject && isSandboxed(userDefault)) setting = userDefault;
  if (setting === false && trustedSandboxed) setting = true;
  return setting;
}
