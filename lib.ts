/**
 * The bridge's pure functions (no I/O), one module per concern, gathered here for callers and for `lib.test.ts`.
 */
export * from "./src/config.ts";
export * from "./src/substitute.ts";
export * from "./src/naming.ts";
export * from "./src/errors.ts";
export * from "./src/output.ts";
export * from "./src/schema.ts";
export * from "./src/status-format.ts";
export * from "./src/health.ts";
export * from "./src/platform-command.ts";
