/**
 * npx asks the registry about its package at every start, even with the package in its cache: offline, npm retries
 * for about 70 s before it falls back to the cache (server-sequential-thinking, checked with no network: 71 s, and
 * 1.2 s with `prefer-offline`). So before an npx server starts, the registry's host is looked up, and where that fails
 * the machine is taken to be offline and npx is told to prefer its cache (and not to retry the registry for a package
 * that is not in it). Online nothing changes, so npx keeps finding new versions; nor where the user set how npm goes
 * online (a proxy, `offline`, `prefer-online`, …).
 */
import { lookup } from "node:dns/promises";
import { codeOf } from "../../common/errors.ts";
import { within } from "../../common/wait.ts";
import { type NpmEnv, type NpmSetting, npmSettings } from "./npm-settings.ts";

const DEFAULT_REGISTRY = "https://registry.npmjs.org/";
/** What a lookup answers without a network: no resolver reachable, or no such name. */
const OFFLINE_CODES = new Set(["EAI_AGAIN", "ENOTFOUND"]);
/**
 * A lookup that takes longer says nothing either way, and the server starts as configured. It adds no wait: offline,
 * the answer comes at once (no route to the resolver); online, from the system's resolver.
 */
const LOOKUP_MS = 1000;
const USER_SETTINGS = ["offline", "prefer-offline", "prefer-online", "proxy", "https-proxy"];
const PROXY_VARS = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"];

/**
 * The registry host an npx server's start could not look up (then npx should prefer its cache); else undefined.
 * `setting` is npm's settings for `env`, where the caller has them read already.
 */
export async function offlineRegistry(env: NpmEnv, setting = npmSettings({ env })): Promise<string | undefined> {
  if (USER_SETTINGS.some((name) => setting(name) !== undefined) || PROXY_VARS.some((name) => env[name]))
    return undefined;
  const registry = setting("registry") ?? DEFAULT_REGISTRY;
  if (!URL.canParse(registry)) return undefined;
  const host = new URL(registry).hostname;
  const code = await lookupError(host);
  return code !== undefined && OFFLINE_CODES.has(code) ? host : undefined;
}

/** Lookups under way, by host: the npx servers that start together ask once. */
const underWay = new Map<string, Promise<string | undefined>>();

/** The error code of looking `host` up (undefined when it resolved, or took longer than `LOOKUP_MS`). */
function lookupError(host: string): Promise<string | undefined> {
  let answer = underWay.get(host);
  if (answer) return answer;
  const code = lookup(host).then(() => undefined, codeOf);
  answer = within(code, { ms: LOOKUP_MS, timedOut: () => undefined }).catch(() => undefined);
  underWay.set(host, answer);
  void answer.finally(() => underWay.delete(host));
  return answer;
}

/**
 * What npx is told offline: start from its cache without asking the registry first, and for a package not in it, fail
 * at once rather than retry the registry for 85 s (`fetch-retries` 0, unless the user set it).
 */
export function offlineSettings(setting: NpmSetting): Record<string, string> {
  const settings: Record<string, string> = { npm_config_prefer_offline: "true" };
  if (setting("fetch-retries") === undefined) settings.npm_config_fetch_retries = "0";
  return settings;
}

/** What `/mcp` says of a server started so. */
export function offlineNote(host: string): string {
  return `offline: npx started it from its cache (${host} could not be looked up), without looking for a newer version`;
}
