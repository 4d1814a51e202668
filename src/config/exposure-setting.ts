/**
 * How a server's tools reach the model, as configs write it, in the words pi 1.x uses so one file serves both:
 * `"direct"` (each tool declared in every request), `"deferred"` (registered, declared only once `tool_search` loads it;
 * `"search"` is the same), `"hidden"` (connected, never reachable by the model), or `"auto"` (direct while all MCP tool
 * definitions stay under a share of the model's context window, deferred beyond it). Per server (`exposure`), per
 * tool (`toolExposure`: exact names or `*`/`?` patterns), and as the top-level default with its threshold. Where no
 * file sets the top-level default, the pi line decides it (../pi/pi-line.ts). Pure.
 */
import { quoteValue } from "../common/text.ts";
import { isObject } from "../common/values.ts";
import type {
  ConfigProblem,
  ConfigSource,
  ConfiguredExposure,
  Exposure,
  ExposureDefaults,
  ExposureSetting,
  ExposureThreshold,
  ToolExposureRule,
} from "./types.ts";

export const EXPOSURE_KEY = "exposure";
/** pi 1.x's switch: whether a server with `codemode` exposure turns its `codemode` tool on (default true). */
export const AUTO_CODEMODE_KEY = "autoEnableCodemode";
export const THRESHOLD_KEY = "exposureThreshold";
export const DEFAULT_EXPOSURE_THRESHOLD: ExposureThreshold = { share: 0.1 };
/** Before a config is read: no top-level `exposure` set. */
export const NO_CONFIGURED_EXPOSURE: ConfiguredExposure = { threshold: DEFAULT_EXPOSURE_THRESHOLD };

/** The defaults a session works with: the configured top-level `exposure`, or `unset` where no file sets one. */
export function exposureDefaultsOr(configured: ConfiguredExposure, unset: ExposureSetting): ExposureDefaults {
  return { exposure: configured.exposure ?? unset, threshold: configured.threshold };
}

/**
 * Names other clients use for the same modes. pi 1.x's code mode is pi's own `codemode` tool, not the bridge's: the
 * tools are deferred, which on pi 1.x also leaves them callable from its scripts, and the tool is turned on
 * (../pi/pi-line.ts).
 */
const CODEMODE_NOTE =
  "read as deferred: the model finds its tools with tool_search; on pi 1.x it also turns pi's codemode tool on, whose scripts call them";
const ALIASES: Record<string, { exposure: Exposure; note?: string; codemode?: boolean }> = {
  search: { exposure: "deferred" },
  codemode: { exposure: "deferred", note: CODEMODE_NOTE, codemode: true },
  "codemode-deferred": { exposure: "deferred", note: CODEMODE_NOTE, codemode: true },
};

const MODES = ["direct", "deferred", "hidden"] as const;

/** Reads one exposure value; `allowAuto` for the server-wide and top-level settings (not per tool). */
function readExposure(
  value: unknown,
  field: string,
  allowAuto: boolean,
): { exposure?: ExposureSetting; error?: string; warning?: string; codemode?: boolean } {
  if (typeof value === "string") {
    if ((MODES as readonly string[]).includes(value)) return { exposure: value as Exposure };
    if (allowAuto && value === "auto") return { exposure: "auto" };
    const alias = Object.hasOwn(ALIASES, value) ? ALIASES[value] : undefined;
    if (alias) {
      const warning = alias.note && `\`${field}\` ${quoteValue(value)}: ${alias.note}`;
      return { exposure: alias.exposure, warning, ...(alias.codemode && { codemode: true }) };
    }
  }
  const choices = [...MODES, ...(allowAuto ? ["auto"] : []), "search"].map((m) => `"${m}"`).join(", ");
  return { error: `\`${field}\` must be one of ${choices} (got ${quoteValue(value)})` };
}

/** A server entry's `exposure` and `toolExposure`. */
export function validateExposure(
  entry: Record<string, unknown>,
  errors: string[],
  warnings: string[],
): { exposure?: ExposureSetting; toolExposure: ToolExposureRule[]; codemode?: boolean } {
  let exposure: ExposureSetting | undefined;
  let codemode = false;
  if (entry.exposure !== undefined && entry.exposure !== null) {
    const read = readExposure(entry.exposure, "exposure", true);
    if (read.error) errors.push(read.error);
    if (read.warning) warnings.push(read.warning);
    exposure = read.exposure;
    codemode ||= read.codemode === true;
  }
  const toolExposure: ToolExposureRule[] = [];
  const rules = entry.toolExposure;
  if (rules !== undefined && rules !== null && !isObject(rules))
    errors.push(
      '`toolExposure` must be an object of tool names or patterns to "direct", "deferred" or "hidden", e.g. {"search_code": "direct", "delete_*": "hidden"}',
    );
  for (const [pattern, value] of Object.entries(isObject(rules) ? rules : {})) {
    const read = readExposure(value, `toolExposure.${pattern}`, false);
    if (read.error) errors.push(read.error);
    if (read.warning) warnings.push(read.warning);
    if (read.exposure && read.exposure !== "auto") toolExposure.push({ pattern, exposure: read.exposure });
    codemode ||= read.codemode === true;
  }
  return { exposure, toolExposure, ...(codemode && { codemode }) };
}

/** `"10%"` (of the model's context window) or a number of tokens. */
export function readThreshold(value: unknown): { threshold?: ExposureThreshold; error?: string } {
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return { threshold: { tokens: value } };
  const match = typeof value === "string" ? /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(value) : null;
  const percent = match ? Number(match[1]) : Number.NaN;
  if (percent > 0 && percent <= 100) return { threshold: { share: percent / 100 } };
  return {
    error: `\`${THRESHOLD_KEY}\` must be a share of the model's context window such as "10%", or a number of tokens (got ${quoteValue(value)})`,
  };
}

/** The top-level `exposure` and `exposureThreshold` a parsed file sets, and what is wrong with them. */
export function exposureDefaults(
  doc: unknown,
  source: ConfigSource,
): Omit<ConfiguredExposure, "threshold" | "catalog"> & { threshold?: ExposureThreshold; problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  if (!isObject(doc)) return { problems };
  const out: ReturnType<typeof exposureDefaults> = { problems };
  if (doc[EXPOSURE_KEY] !== undefined && doc[EXPOSURE_KEY] !== null) {
    const read = readExposure(doc[EXPOSURE_KEY], EXPOSURE_KEY, true);
    const message = read.error ? `${read.error}; ignored, as if it were not set` : read.warning;
    if (message) problems.push({ level: "warning", source, message });
    if (read.exposure) out.exposure = read.exposure;
    if (read.codemode) out.codemode = true;
  }
  const auto = doc[AUTO_CODEMODE_KEY];
  if (typeof auto === "boolean") out.autoCodemode = auto;
  else if (auto !== undefined && auto !== null)
    problems.push({ level: "warning", source, message: `\`${AUTO_CODEMODE_KEY}\` must be true or false; ignored` });
  if (doc[THRESHOLD_KEY] !== undefined && doc[THRESHOLD_KEY] !== null) {
    const read = readThreshold(doc[THRESHOLD_KEY]);
    if (read.error) problems.push({ level: "warning", source, message: `${read.error}; the default, "10%", is used` });
    else out.threshold = read.threshold;
  }
  return out;
}
