/**
 * The bridge's pure functions (no I/O), one module per concern, gathered here for callers and for `lib.test.ts`.
 */
export * from "./src/config/types.ts";
export * from "./src/config/defaults.ts";
export * from "./src/config/parse.ts";
export * from "./src/config/validate/endpoint.ts";
export * from "./src/config/validate/entry.ts";
export * from "./src/config/validate/name.ts";
export * from "./src/config/layers.ts";
export * from "./src/config/approval-setting.ts";
export * from "./src/config/argv.ts";
export * from "./src/config/substitute.ts";
export * from "./src/config/trust.ts";
export * from "./src/tools/naming.ts";
export * from "./src/common/errors.ts";
export * from "./src/common/text.ts";
export * from "./src/common/values.ts";
export * from "./src/common/redact.ts";
export * from "./src/common/terminal-text.ts";
export * from "./src/tools/output.ts";
export * from "./src/tools/resource-output.ts";
export * from "./src/tools/prompt-text.ts";
export * from "./src/tools/schema.ts";
export * from "./src/tools/portable-schema.ts";
export * from "./src/tools/provenance.ts";
export * from "./src/tools/approval-policy.ts";
export * from "./src/tools/tool-pattern.ts";
export * from "./src/tools/limits.ts";
export * from "./src/tools/server-guide.ts";
export * from "./src/pi/status-format.ts";
export * from "./src/connection/health.ts";
export * from "./src/connection/platform-command.ts";
export * from "./src/config/exposure-setting.ts";
export * from "./src/tools/exposure.ts";
export * from "./src/tools/definition-cost.ts";
export * from "./src/tools/payload-tools.ts";
export * from "./src/tools/tool-search-text.ts";
