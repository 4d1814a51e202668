/**
 * The fields that say when a server runs and how it is kept alive: the handshake deadline, `lazy`, reconnecting or
 * restarting after a failure, and the health check of an idle connection.
 */
import { isObject, type JsonObject } from "../../common/values.ts";
import {
  DEFAULT_HEALTH_CHECK_INTERVAL_MS,
  DEFAULT_LOCAL_RETRY,
  DEFAULT_PING_TIMEOUT_MS,
  DEFAULT_REMOTE_RETRY,
  DEFAULT_SHARED_IDLE_MS,
} from "../defaults.ts";
import type { RetryPolicy, ServerConfig } from "../types.ts";
import { booleanField, countField, nonNegativeMs, positiveMs } from "./fields.ts";
import { timeoutSetting } from "./timeout.ts";

/** `requestTimeout` is set only when `timeout` was read as pi 1.x's seconds (see ./timeout.ts). */
export type Lifecycle = Pick<
  ServerConfig,
  "timeout" | "lazy" | "retry" | "healthCheckInterval" | "pingTimeout" | "shared" | "watch"
> & { requestTimeout?: number };

export function validateLifecycle(entry: JsonObject, local: boolean, errors: string[], warnings: string[]): Lifecycle {
  const { timeout, requestTimeout } = timeoutSetting(entry, local, errors);
  const lazy = booleanField(entry, "lazy", false, errors);
  const retry = retryPolicy(entry, local, errors);
  const healthCheckInterval = nonNegativeMs(
    entry.healthCheckInterval,
    "healthCheckInterval",
    DEFAULT_HEALTH_CHECK_INTERVAL_MS,
    errors,
  );
  const pingTimeout = positiveMs(entry.pingTimeout, "pingTimeout", DEFAULT_PING_TIMEOUT_MS, errors);
  const shared = sharedSetting(entry.shared, local, errors);
  const watch = devWatch(entry.dev, local && !shared, warnings);
  return { timeout, requestTimeout, lazy, retry, healthCheckInterval, pingTimeout, shared, watch };
}

/**
 * VS Code's `"dev": { "watch": <glob or globs> }`: the files whose change restarts a local server. A convenience while
 * developing a server: one that cannot be used is a warning and left out, and the server runs all the same.
 */
function devWatch(dev: unknown, local: boolean, warnings: string[]): ServerConfig["watch"] {
  const watch = isObject(dev) ? dev.watch : undefined;
  if (watch === undefined || watch === null) return undefined;
  const globs = typeof watch === "string" ? [watch] : Array.isArray(watch) ? watch : [];
  if (!globs.length || !globs.every((glob) => typeof glob === "string" && glob.trim()))
    warnings.push('`dev.watch` must be a glob or an array of globs ("src/**/*.ts"); ignored');
  else if (!local)
    warnings.push(
      "`dev.watch` applies to local servers of one session only (not remote or `shared`): it restarts their process; ignored",
    );
  else return globs as string[];
  return undefined;
}

/**
 * `shared`: `true`, or `{ "idleSeconds": n }` for how long the hub keeps the server once its last session has left
 * (default {@link DEFAULT_SHARED_IDLE_MS}); `false` or absent: a process for this pi session alone.
 */
function sharedSetting(value: unknown, local: boolean, errors: string[]): ServerConfig["shared"] {
  if (value === undefined || value === null || value === false) return undefined;
  if (!local) {
    errors.push(
      "`shared` applies to local (command) servers only: a remote server is one process for everyone already",
    );
    return undefined;
  }
  if (value === true) return { idleMs: DEFAULT_SHARED_IDLE_MS };
  if (isObject(value)) {
    const idle = value.idleSeconds;
    if (idle === undefined || idle === null) return { idleMs: DEFAULT_SHARED_IDLE_MS };
    if (typeof idle === "number" && Number.isFinite(idle) && idle >= 0 && idle <= 86_400)
      return { idleMs: Math.round(idle * 1000) };
  }
  errors.push('`shared` must be true, false or `{ "idleSeconds": <0 to 86400> }`');
  return undefined;
}

/**
 * The retry policy: remote servers reconnect (`reconnect`: true/false or `{maxAttempts, initialDelay, maxDelay}`),
 * local ones restart after a crash (`restartOnCrash`, `maxRestarts`; `reconnect` may tune the delays).
 */
function retryPolicy(entry: JsonObject, local: boolean, errors: string[]): RetryPolicy {
  const base = local ? DEFAULT_LOCAL_RETRY : DEFAULT_REMOTE_RETRY;
  let policy: RetryPolicy = { ...base };
  const reconnect = entry.reconnect;
  if (reconnect === false) policy.maxAttempts = 0;
  else if (isObject(reconnect))
    policy = {
      maxAttempts: countField(reconnect.maxAttempts, "reconnect.maxAttempts", base.maxAttempts, errors),
      initialDelayMs: positiveMs(reconnect.initialDelay, "reconnect.initialDelay", base.initialDelayMs, errors),
      maxDelayMs: positiveMs(reconnect.maxDelay, "reconnect.maxDelay", base.maxDelayMs, errors),
    };
  else if (reconnect !== undefined && reconnect !== null && reconnect !== true)
    errors.push("`reconnect` must be true, false or an object with `maxAttempts`, `initialDelay` and `maxDelay`");
  if (local) {
    policy.maxAttempts = countField(entry.maxRestarts, "maxRestarts", policy.maxAttempts, errors);
    if (!booleanField(entry, "restartOnCrash", true, errors)) policy.maxAttempts = 0;
  } else {
    for (const field of ["restartOnCrash", "maxRestarts", "initTimeout"])
      if (entry[field] !== undefined && entry[field] !== null)
        errors.push(
          `\`${field}\` applies to local (command) servers only; use \`reconnect\` and \`timeout\` for a remote one`,
        );
  }
  return policy;
}
