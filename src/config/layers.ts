/**
 * Merging the config layers (flag, project, user, bundled) into one server list. Pure: the files' texts are passed in.
 */
import { redactShapes } from "../common/redact.ts";
import { isObject, type JsonObject } from "../common/values.ts";
import { readSandboxSetting, SANDBOX_KEY, type SandboxSetting } from "./sandbox-setting.ts";
import { approvalSetting } from "./approval-setting.ts";
import { DEFAULT_EXPOSURE_THRESHOLD, exposureDefaults, validateExposure } from "./exposure-setting.ts";
import { toolCatalogSetting } from "./tool-catalog-setting.ts";
import { extractServerEntries, isToggleOnly, parseConfigText, type ServerEntryText } from "./parse.ts";
import {
  type ApprovalMode,
  type ConfigFileInput,
  type ConfigProblem,
  type ConfigScope,
  type ConfigSource,
  type ConfiguredExposure,
  describeSource,
  type LayeredConfig,
  SCOPES_BY_PRIORITY,
  type ServerConfig,
} from "./types.ts";
import { validateServerEntry } from "./validate/entry.ts";
import { booleanField } from "./validate/fields.ts";
import { serverLabel } from "./validate/name.ts";

/**
 * Merges config files into one server list. Higher layers replace lower ones by server name; an entry that only sets
 * `enabled`/`disabled` switches the lower layer's server instead of replacing it. A bad entry is reported and skipped;
 * a lower layer's valid entry of the same name then stays in effect.
 */
export function layerConfigs(files: readonly ConfigFileInput[]): LayeredConfig {
  const problems: ConfigProblem[] = [];
  const rank = (scope: ConfigScope) => SCOPES_BY_PRIORITY.indexOf(scope);
  const byPriority = [...files].sort((a, b) => rank(a.source.scope) - rank(b.source.scope));
  const parsedFiles: Array<{ source: ConfigSource; entries: ServerEntryText[] }> = [];
  let approval: ApprovalMode = "ask";
  const exposure: Partial<ConfiguredExposure> = {};
  let sandbox: SandboxSetting | undefined;
  /** A project file's own top-level `sandbox`: the default of that file's servers only. */
  const projectSandbox = new Map<ConfigSource, SandboxSetting>();
  for (const file of byPriority) {
    if (file.text === undefined) continue;
    const parsed = parseConfigText(file.text);
    if (parsed.error !== undefined) {
      problems.push({ level: "error", source: file.source, message: `${parsed.error}; its servers are skipped` });
      continue;
    }
    const { entries, problems: shapeProblems } = extractServerEntries(parsed.value, file.source);
    problems.push(...shapeProblems);
    const setting = approvalSetting(parsed.value, file.source);
    if (setting.problem) problems.push(setting.problem);
    if (setting.mode) approval = setting.mode;
    // Files come highest priority first: the first to set a default keeps it.
    const defaults = exposureDefaults(parsed.value, file.source);
    problems.push(...defaults.problems);
    if (exposure.exposure === undefined && defaults.exposure !== undefined)
      Object.assign(exposure, { exposure: defaults.exposure, codemode: defaults.codemode });
    exposure.threshold ??= defaults.threshold;
    exposure.autoCodemode ??= defaults.autoCodemode;
    const catalog = toolCatalogSetting(parsed.value, file.source);
    if (catalog.problem) problems.push(catalog.problem);
    exposure.catalog ??= catalog.catalog;
    const fileSandbox = topLevelSandbox(parsed.value, file.source, problems);
    if (fileSandbox !== undefined) {
      if (file.source.scope === "project") projectSandbox.set(file.source, fileSandbox);
      else sandbox ??= fileSandbox;
    }
    parsedFiles.push({ source: file.source, entries });
  }

  // Apply the lowest layer first, so each higher one lands on top of it.
  const merged = new Map<string, ServerConfig>();
  const skipped = new Map<string, ConfigSource>();
  for (const { source, entries } of [...parsedFiles].reverse()) {
    for (const { name, entry } of entries) {
      const server = serverLabel(name);
      if (isToggleOnly(entry)) {
        const lower = merged.get(name);
        if (lower) merged.set(name, applyToggle(lower, entry, source, problems));
        else {
          const fields = Object.keys(entry).map((k) => `\`${k}\``);
          const below = skipped.get(name);
          const why = below ? `the entry it would switch, in ${describeSource(below)}, is skipped` : undefined;
          const message = `only sets ${fields.join(", ")}, but ${why ?? "no lower-priority config defines this server"}`;
          problems.push({ level: "error", source, server, message });
        }
        continue;
      }
      const result = validateServerEntry(name, entry, source);
      for (const warning of result.warnings) problems.push({ level: "warning", source, server, message: warning });
      if (!result.config) {
        const lower = merged.get(name);
        const fallback = lower ? ` (the entry from ${describeSource(lower.source)} is used instead)` : "";
        if (!lower) skipped.set(name, source);
        problems.push({ level: "error", source, server, message: `${result.errors.join("; ")}; skipped${fallback}` });
        continue;
      }
      const ownDefault = projectSandbox.get(source);
      if (result.config.sandbox === undefined && ownDefault !== undefined && result.config.transport === "stdio")
        result.config.sandbox = ownDefault;
      merged.set(name, result.config);
    }
  }

  // Stable order: highest-priority file first, then the order entries appear in each file.
  const order = new Set<string>();
  for (const { entries } of parsedFiles) for (const { name } of entries) if (merged.has(name)) order.add(name);
  return {
    servers: [...order].map((name) => merged.get(name)!),
    // A message quotes what it found wrong, which may be a credential in the wrong place (`"headersTtl": "Bearer …"`).
    problems: problems.map((problem) => ({ ...problem, message: redactShapes(problem.message) })),
    approval,
    exposure: {
      ...(exposure.exposure ? { exposure: exposure.exposure } : {}),
      threshold: exposure.threshold ?? DEFAULT_EXPOSURE_THRESHOLD,
      ...(exposure.catalog ? { catalog: exposure.catalog } : {}),
      ...(exposure.codemode && { codemode: true }),
      ...(exposure.autoCodemode !== undefined && { autoCodemode: exposure.autoCodemode }),
    },
    ...(sandbox !== undefined ? { sandbox } : {}),
  };
}

/**
 * A file's top-level `sandbox`. One that cannot be read is taken as `true`: whoever wrote it wanted a sandbox, and a
 * mistake in it must not run every server without one.
 */
function topLevelSandbox(doc: unknown, source: ConfigSource, problems: ConfigProblem[]): SandboxSetting | undefined {
  if (!isObject(doc)) return undefined;
  const errors: string[] = [];
  const setting = readSandboxSetting(doc[SANDBOX_KEY], SANDBOX_KEY, errors);
  if (errors.length === 0) return setting;
  const message = `${errors.join("; ")}; local servers run sandboxed with the defaults until it is fixed`;
  problems.push({ level: "error", source, message });
  return true;
}

function applyToggle(
  config: ServerConfig,
  entry: JsonObject,
  source: ConfigSource,
  problems: ConfigProblem[],
): ServerConfig {
  const errors: string[] = [];
  const warnings: string[] = [];
  const server = serverLabel(config.name);
  // The toggle's own word decides: `"disabled": false` switches back on a server the lower layer switched off.
  const off = booleanField(entry, "disabled", !config.enabled, errors);
  const enabled = booleanField(entry, "enabled", !off, errors) && entry.disabled !== true;
  const next: ServerConfig = { ...config, enabled };
  if ("enabled" in entry || "disabled" in entry) next.enabledSource = source;
  if ("exposure" in entry || "toolExposure" in entry) {
    const read = validateExposure(entry, errors, warnings);
    for (const message of warnings) problems.push({ level: "warning", source, server, message });
    if (read.exposure !== undefined) next.exposure = read.exposure;
    // A new `exposure` decides pi 1.x's code mode as well; rules added to the lower ones only add to it.
    if (read.exposure !== undefined || read.codemode) next.codemode = read.codemode === true;
    // A layer's rules come before the lower layer's, so its patterns win among patterns.
    if (read.toolExposure.length) next.toolExposure = [...read.toolExposure, ...config.toolExposure];
  }
  for (const message of errors) problems.push({ level: "warning", source, server, message: `${message}; ignored` });
  return next;
}
