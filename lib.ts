/**
 * The pure functions of src/ (rules and formatting, no I/O), by name: the ones lib.test.ts tests, and where a reader
 * finds them.
 */
export { BridgeError, describeError, type ErrorKind } from "./src/common/errors.ts";
export {
  isTimeoutError,
  classifyError,
  httpStatusOf,
  closedDuringProbe,
  probeInconclusive,
} from "./src/common/error-kinds.ts";
export { redact } from "./src/common/redact.ts";
export { shown } from "./src/common/terminal-text.ts";
export { closestMatch, editDistance, formatBytes, quoteValue, shortHash } from "./src/common/text.ts";
export { findReservedKey } from "./src/common/values.ts";
export { splitCommandLine } from "./src/config/add-server.ts";
export { parseAddLine } from "./src/config/add-arguments.ts";
export { configFlagFromArgv, isInfoOnlyInvocation, noMcpInArgv } from "./src/config/argv.ts";
export {
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_HEALTH_CHECK_INTERVAL_MS,
  DEFAULT_INIT_TIMEOUT_MS,
  DEFAULT_LOCAL_RETRY,
  DEFAULT_REMOTE_RETRY,
  DEFAULT_REQUEST_TIMEOUT_MS,
} from "./src/config/defaults.ts";
export { layerConfigs } from "./src/config/layers.ts";
export { isToggleOnly, extractServerEntries, parseConfigText, MAX_NESTING } from "./src/config/parse.ts";
export { protocolSetting } from "./src/config/protocol-setting.ts";
export {
  configVarRefs,
  displayUrl,
  findVarRefs,
  resolveServerConfig,
  substituteVars,
} from "./src/config/substitute.ts";
export type { ConfigFileInput, ConfigSource, ServerConfig } from "./src/config/types.ts";
export { checkUrl } from "./src/config/validate/endpoint.ts";
export { validateServerEntry } from "./src/config/validate/entry.ts";
export { SERVER_FIELDS } from "./src/config/validate/unknown-fields.ts";
export { commandArgument, serverNameProblem } from "./src/config/validate/name.ts";
export { errorOf, inSchedule, stateDetail, statusOf, transition } from "./src/connection/connection-state.ts";
export type { ConnectionEvent, ConnectionState } from "./src/connection/connection-state.ts";
export { backoffDelay, backoffSchedule, gaveUpMessage, HealthTracker } from "./src/connection/health.ts";
export { cutDeepNesting } from "./src/connection/local/nesting-guard.ts";
export { platformCommand } from "./src/connection/local/platform-command.ts";
export { negotiationFor } from "./src/connection/protocol-negotiation.ts";
export {
  formatServerList,
  formatStatusTable,
  statusSummary,
  formatStartupSummary,
  projectRootWarning,
} from "./src/pi/status-format.ts";
export type { ServerRow } from "./src/pi/status-format.ts";
export {
  allocateToolName,
  MAX_TOOL_NAME_LENGTH,
  rawToolName,
  sanitizeToolName,
  serverLogFileName,
  toolNameFor,
} from "./src/translate/naming.ts";
export { base64Size, normalizeToolResult } from "./src/translate/output.ts";
export { scriptResult, scriptResultSchema } from "./src/translate/script-result.ts";
export { reachesServer } from "./src/pi/starting-waits.ts";
export { normalizeInputSchema } from "./src/translate/schema.ts";
export { otherServersSecrets } from "./src/sandbox/other-secrets.ts";
export { describePolicy, sandboxPolicy } from "./src/sandbox/sandbox-policy.ts";
export { effectiveSandbox, readSandboxSetting } from "./src/config/sandbox-setting.ts";
export { refusalIn, refusalMessage, violationRefusal } from "./src/sandbox/sandbox-refusal.ts";
export { RefusalRecord } from "./src/sandbox/refusal-record.ts";
