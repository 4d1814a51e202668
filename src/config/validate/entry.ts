/**
 * Validates one server entry as written in a config file, into a `ServerConfig`. Each group of fields has its own
 * validator; this runs them in a fixed order, so an entry with several problems always lists them the same way.
 */
import { shown } from "../../common/terminal-text.ts";
import { findReservedKey, isObject } from "../../common/values.ts";
import type { ConfigSource, ServerConfig } from "../types.ts";
import { validateExposure } from "../exposure-setting.ts";
import { protocolSetting } from "../protocol-setting.ts";
import { validateEndpoint } from "./endpoint.ts";
import { validateLifecycle } from "./lifecycle.ts";
import { millisecondWarnings } from "./timeout.ts";
import { validateLimits } from "./server-limits.ts";
import { serverNameProblem } from "./name.ts";
import { validateAuth } from "./oauth.ts";
import { isSandboxed, readSandboxSetting, SANDBOX_KEY } from "../sandbox-setting.ts";
import { validateUsage } from "./usage.ts";
import { misspeltFieldWarnings } from "./unknown-fields.ts";

/**
 * Validates one server entry. Returns the config, or the reasons it is unusable.
 * Unknown fields are kept in `raw` and otherwise ignored, so entries written for other clients still load; one that
 * looks like a misspelling of ours gets a warning.
 */
export function validateServerEntry(
  name: string,
  entry: unknown,
  source: ConfigSource,
): { config?: ServerConfig; errors: string[]; warnings: string[] } {
  const errors: string[] = [];
  const warnings: string[] = [];
  const nameProblem = serverNameProblem(name);
  if (nameProblem) return { errors: [nameProblem], warnings };
  if (!isObject(entry)) return { errors: ["the entry must be an object"], warnings };
  // Parsed files hold these as ordinary keys; anywhere else they would set a prototype or shadow a method.
  const reserved = findReservedKey(entry);
  if (reserved !== undefined)
    return {
      errors: [
        `\`${shown(reserved, 80, "line")}\`: \`__proto__\`, \`constructor\` and \`prototype\` cannot be used as keys`,
      ],
      warnings,
    };
  warnings.push(...misspeltFieldWarnings(entry));

  const endpoint = validateEndpoint(entry, errors, warnings);
  const local = endpoint.transport === "stdio";
  warnings.push(...millisecondWarnings(entry, local));
  const lifecycle = validateLifecycle(entry, local, errors, warnings);
  const oauth = validateAuth(entry, local, endpoint.headers, errors);
  const usage = validateUsage(entry, errors, warnings);
  const limits = validateLimits(entry, errors);
  const { exposure, toolExposure, codemode } = validateExposure(entry, errors, warnings);
  const protocol = protocolSetting(entry.protocolVersion, errors);
  const sandbox = readSandboxSetting(entry[SANDBOX_KEY], SANDBOX_KEY, errors);
  if (!local && isSandboxed(sandbox))
    errors.push(
      "`sandbox` applies to local servers only: this one connects to a URL, and runs nowhere on this machine",
    );

  if (errors.length > 0) return { errors, warnings };
  // A `timeout` in pi 1.x's seconds is the request deadline too, unless `requestTimeout` says otherwise.
  const requestTimeout = lifecycle.requestTimeout ?? usage.requestTimeout;
  const config = {
    ...{ name, source, ...endpoint, ...lifecycle, ...usage, requestTimeout, exposure, toolExposure, codemode },
    ...{ oauth, limits, protocol, sandbox, raw: entry },
  };
  return { config, errors, warnings };
}
