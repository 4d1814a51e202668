import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { visibleWidth } from "@mariozechner/pi-tui";
import {
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  SseError,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import {
  otherServersSecrets,
  sandboxPolicy,
  effectiveSandbox,
  readSandboxSetting,
  isTimeoutError,
  BridgeError,
  classifyError,
  type ErrorKind,
  describeError,
  httpStatusOf,
  closedDuringProbe,
  probeInconclusive,
  redact,
  shown,
  closestMatch,
  editDistance,
  formatBytes,
  quoteValue,
  shortHash,
  findReservedKey,
  configFlagFromArgv,
  isInfoOnlyInvocation,
  noMcpInArgv,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_HEALTH_CHECK_INTERVAL_MS,
  DEFAULT_INIT_TIMEOUT_MS,
  DEFAULT_LOCAL_RETRY,
  DEFAULT_REMOTE_RETRY,
  DEFAULT_REQUEST_TIMEOUT_MS,
  layerConfigs,
  isToggleOnly,
  extractServerEntries,
  parseConfigText,
  MAX_NESTING,
  protocolSetting,
  configVarRefs,
  displayUrl,
  findVarRefs,
  resolveServerConfig,
  substituteVars,
  type ConfigFileInput,
  type ConfigSource,
  type ServerConfig,
  checkUrl,
  SERVER_FIELDS,
  validateServerEntry,
  validateServerEntry as validateEntry,
  commandArgument,
  serverNameProblem,
  backoffDelay,
  backoffSchedule,
  gaveUpMessage,
  HealthTracker,
  type ConnectionEvent,
  type ConnectionState,
  errorOf,
  inSchedule,
  stateDetail,
  statusOf,
  transition,
  cutDeepNesting,
  platformCommand,
  negotiationFor,
  formatServerList,
  formatStatusTable,
  statusSummary,
  formatStartupSummary,
  projectRootWarning,
  type ServerRow,
  allocateToolName,
  MAX_TOOL_NAME_LENGTH,
  rawToolName,
  sanitizeToolName,
  serverLogFileName,
  toolNameFor,
  base64Size,
  normalizeToolResult,
  scriptResult,
  scriptResultSchema,
  reachesServer,
  normalizeInputSchema,
  splitCommandLine,
  parseAddLine,
} from "./lib.ts";
import { buildEntry, suggestServerName, unsetVariablesNotice } from "./src/config/add-server.ts";
import { untrustedError } from "./src/connection/stop-errors.ts";
import { connectHint } from "./src/connection/connect-hints.ts";
import { resourceFileName } from "./src/translate/resource-output.ts";
import { McpDashboard } from "./src/pi/dashboard.ts";
import { registerLazyCommand } from "./src/pi/lazy-command.ts";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { describePolicy, RefusalRecord, refusalIn, refusalMessage, violationRefusal } from "./lib.ts";

/** The SDK's error for an HTTP answer the transport could not use. */
function httpError(status: number, message: string): SdkHttpError {
  return new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, message, { status });
}

const project: ConfigSource = { scope: "project", path: "/p/.pi/mcp.json" };
const user: ConfigSource = { scope: "user", path: "/home/u/.pi/agent/mcp.json" };
const bundled: ConfigSource = { scope: "bundled", path: "/ext/mcp.json" };
const flag: ConfigSource = { scope: "flag", path: "/p/demo.json" };

function file(source: ConfigSource, value: unknown): ConfigFileInput {
  return { source, text: typeof value === "string" ? value : JSON.stringify(value) };
}

function valid(name: string, entry: unknown, source = project): ServerConfig {
  const result = validateServerEntry(name, entry, source);
  assert.ok(result.config, `expected ${name} to be valid, got: ${result.errors.join("; ")}`);
  return result.config;
}

function invalid(entry: unknown): string {
  const result = validateServerEntry("s", entry, project);
  assert.equal(result.config, undefined, "expected the entry to be rejected");
  return result.errors.join("; ");
}

describe("parseConfigText", () => {
  test("accepts comments, trailing commas and a UTF-8 BOM", () => {
    const text = '\uFEFF{\n  // a comment\n  "mcpServers": { /* inline */ "a": { "command": "x", }, },\n}';
    assert.deepEqual(JSON.parse(JSON.stringify(parseConfigText(text).value)), { mcpServers: { a: { command: "x" } } });
  });
  test("reports invalid JSON with its position", () => {
    const result = parseConfigText('{\n  "mcpServers": {\n    "a": { "command": "x" \n  }\n');
    assert.equal(result.value, undefined);
    assert.match(result.error!, /not valid JSON: .* at line \d+, column \d+/);
  });
  test("treats an empty file as no servers", () => {
    assert.deepEqual({ ...(parseConfigText("  \n").value as object) }, {});
  });
});

describe("config shapes", () => {
  test("reads mcpServers, servers and mcp", () => {
    for (const key of ["mcpServers", "servers", "mcp"]) {
      const { entries, problems } = extractServerEntries({ [key]: { a: { command: "x" } } }, project);
      assert.deepEqual(problems, []);
      assert.deepEqual(entries, [{ name: "a", entry: { command: "x" } }]);
    }
  });
  test("a file without a server map has no servers and no problems", () => {
    assert.deepEqual(extractServerEntries({ $schema: "https://example.com/s.json" }, project), {
      entries: [],
      problems: [],
    });
  });
  test("a server map that is not an object is reported", () => {
    const { problems } = extractServerEntries({ servers: [1, 2] }, project);
    assert.equal(problems.length, 1);
    assert.match(problems[0]!.message, /`servers` must be an object/);
  });
  test("a document that is not an object is reported", () => {
    assert.match(extractServerEntries([1], project).problems[0]!.message, /JSON object/);
  });
  test("the same name under two keys keeps the first and warns", () => {
    const { entries, problems } = extractServerEntries(
      { mcpServers: { a: { command: "x" } }, servers: { a: { command: "y" } } },
      project,
    );
    assert.deepEqual(entries, [{ name: "a", entry: { command: "x" } }]);
    assert.equal(problems[0]!.level, "warning");
  });
  test("opencode's local/remote shape with command arrays and `environment`", () => {
    const local = valid("db", {
      type: "local",
      command: ["node", "server.js"],
      args: ["--v"],
      environment: { A: "1" },
    });
    assert.equal(local.transport, "stdio");
    assert.equal(local.command, "node");
    assert.deepEqual(local.args, ["server.js", "--v"]);
    assert.deepEqual(local.env, { A: "1" });
    const remote = valid("gh", { type: "remote", url: "https://example.com/mcp" });
    assert.equal(remote.transport, "http");
  });
  test("VS Code's type names", () => {
    assert.equal(valid("a", { type: "stdio", command: "x" }).transport, "stdio");
    assert.equal(valid("a", { type: "http", url: "http://h/mcp" }).transport, "http");
    assert.equal(valid("a", { type: "streamable-http", url: "http://h/mcp" }).transport, "http");
    assert.equal(valid("a", { type: "sse", url: "http://h/sse" }).transport, "sse");
  });
});

describe("validateServerEntry", () => {
  test("defaults", () => {
    const config = valid("a", { command: "npx", args: ["-y", "pkg"] });
    assert.equal(config.transport, "stdio");
    assert.equal(config.timeout, DEFAULT_INIT_TIMEOUT_MS);
    assert.equal(config.requestTimeout, DEFAULT_REQUEST_TIMEOUT_MS);
    assert.equal(config.enabled, true);
    assert.equal(config.lazy, false);
    assert.deepEqual(config.retry, DEFAULT_LOCAL_RETRY);
    assert.equal(config.healthCheckInterval, DEFAULT_HEALTH_CHECK_INTERVAL_MS);
    assert.equal(valid("r", { url: "https://example.com/mcp" }).timeout, DEFAULT_CONNECT_TIMEOUT_MS);
    assert.deepEqual(valid("r", { url: "https://example.com/mcp" }).retry, DEFAULT_REMOTE_RETRY);
    assert.equal(config.prefix, undefined);
    assert.deepEqual(config.env, {});
    assert.deepEqual(config.headers, {});
    assert.equal(valid("b", { url: "https://example.com/mcp" }).transport, "http");
  });
  test("all fields", () => {
    const config = valid("a", {
      url: "https://example.com/mcp",
      headers: { Authorization: "Bearer ${T}" },
      timeout: 5000,
      requestTimeout: 90000,
      enabled: false,
      prefix: "gh",
    });
    assert.deepEqual(config.headers, { Authorization: "Bearer ${T}" });
    assert.equal(config.timeout, 5000);
    assert.equal(config.requestTimeout, 90000);
    assert.equal(config.enabled, false);
    assert.equal(config.prefix, "gh");
  });
  test("`disabled: true` (Cline, Roo) disables", () => {
    assert.equal(valid("a", { command: "x", disabled: true }).enabled, false);
  });
  test("numbers in env and args are taken as strings", () => {
    const config = valid("a", { command: "x", args: ["--port", 8080], env: { PORT: 3000, DEBUG: true } });
    assert.deepEqual(config.args, ["--port", "8080"]);
    assert.deepEqual(config.env, { PORT: "3000", DEBUG: "true" });
  });
  test("neither url nor command", () => {
    assert.match(invalid({ env: {} }), /needs either `command`.*or `url`/);
  });
  test("both url and command", () => {
    assert.match(invalid({ command: "x", url: "http://h" }), /both `url` and `command`/);
  });
  test("invalid URL", () => {
    assert.match(invalid({ url: "not a url" }), /not a valid URL/);
    assert.match(invalid({ url: "ftp://h/x" }), /http or https/);
  });
  test("a URL with variables is checked when they are known; before that only its scheme", () => {
    valid("a", { url: "https://${HOST}/mcp?key=${KEY}" });
    valid("a", { url: "http://localhost:${PORT}/mcp" });
    valid("a", { url: "${MCP_URL}" });
  });
  test("non-object headers and env", () => {
    assert.match(invalid({ url: "http://h", headers: "Authorization: x" }), /`headers` must be an object/);
    assert.match(invalid({ command: "x", env: ["A=1"] }), /`env` must be an object/);
    assert.match(invalid({ command: "x", env: { A: { nested: 1 } } }), /`env.A` must be a string/);
  });
  test("non-array args", () => {
    assert.match(invalid({ command: "x", args: "--flag" }), /`args` must be an array/);
    assert.match(invalid({ command: "x", args: [{}] }), /`args` must be an array of strings/);
  });
  test("lifecycle fields: lazy, initTimeout, restartOnCrash, maxRestarts, reconnect, health checks", () => {
    const local = valid("a", {
      command: "x",
      lazy: true,
      initTimeout: 2500,
      maxRestarts: 2,
      reconnect: { initialDelay: 10, maxDelay: 40 },
    });
    assert.equal(local.lazy, true);
    assert.equal(local.timeout, 2500);
    assert.deepEqual(local.retry, { maxAttempts: 2, initialDelayMs: 10, maxDelayMs: 40 });
    assert.equal(valid("a", { command: "x", restartOnCrash: false }).retry.maxAttempts, 0);
    assert.equal(valid("a", { command: "x", timeout: 1234 }).timeout, 1234);
    assert.equal(valid("r", { url: "http://h/mcp", reconnect: false }).retry.maxAttempts, 0);
    assert.deepEqual(valid("r", { url: "http://h/mcp", reconnect: { maxAttempts: 3 } }).retry, {
      ...DEFAULT_REMOTE_RETRY,
      maxAttempts: 3,
    });
    assert.equal(valid("r", { url: "http://h/mcp", healthCheckInterval: 0 }).healthCheckInterval, 0);
    assert.match(invalid({ command: "x", lazy: "yes" }), /`lazy` must be true or false/);
    assert.match(invalid({ command: "x", maxRestarts: -1 }), /`maxRestarts` must be a whole number/);
    assert.match(invalid({ command: "x", initTimeout: 0 }), /`initTimeout` must be a positive number/);
    // Seconds written where milliseconds are read: said, and taken as written.
    const seconds = validateServerEntry("a", { command: "x", initTimeout: 15, requestTimeout: 90 }, project);
    assert.equal(seconds.config?.timeout, 15);
    assert.deepEqual(seconds.warnings, [
      "`initTimeout` 15 is milliseconds (0.015 s), too short for what it bounds; for 15 seconds write 15000",
      "`requestTimeout` 90 is milliseconds (0.09 s), too short for what it bounds; for 90 seconds write 90000",
    ]);
    assert.deepEqual(validateServerEntry("b", { command: "x", initTimeout: 1000 }, project).warnings, []);
    // A remote entry's initTimeout is refused as local-only, without the milliseconds warning beside it.
    const remote = validateServerEntry("r", { url: "http://h/mcp", initTimeout: 15 }, project);
    assert.deepEqual(remote.warnings, []);
    assert.match(remote.errors.join("\n"), /`initTimeout` applies to local \(command\) servers only/);
    assert.match(
      invalid({ url: "http://h/mcp", maxRestarts: 2 }),
      /`maxRestarts` applies to local \(command\) servers only/,
    );
    assert.match(invalid({ url: "http://h/mcp", reconnect: "often" }), /`reconnect` must be true, false or an object/);
    // null is absent, as for every other field: a remote entry listing the local-only ones as null still loads.
    valid("r", { url: "http://h/mcp", initTimeout: null, maxRestarts: null, restartOnCrash: null });
    assert.deepEqual(valid("s", { command: "x", shared: { idleSeconds: null } }).shared, { idleMs: 30_000 });
    assert.match(invalid({ url: "http://h/mcp", healthCheckInterval: -1 }), /`healthCheckInterval`/);
  });
  test("auth: OAuth is on for remote servers unless turned off or a static Authorization header is set", () => {
    assert.deepEqual(valid("r", { url: "https://h/mcp" }).oauth, { callbackPort: 9876 });
    // null is absent, as in every other field.
    const nulls = { type: null, scopes: null, callbackPort: null };
    assert.equal(valid("r", { url: "https://h/mcp", auth: nulls }).oauth?.callbackPort, 9876);
    assert.equal(valid("r", { url: "https://h/mcp", headers: { authorization: "Bearer x" } }).oauth, undefined);
    assert.equal(valid("r", { url: "https://h/mcp", auth: false }).oauth, undefined);
    assert.equal(valid("r", { url: "https://h/mcp", auth: "none" }).oauth, undefined);
    assert.deepEqual(valid("r", { url: "https://h/mcp", headers: { Authorization: "x" }, auth: "oauth" }).oauth, {
      callbackPort: 9876,
    });
    assert.equal(valid("l", { command: "x" }).oauth, undefined);
    const full = valid("r", {
      url: "https://h/mcp",
      auth: {
        clientId: "pi-client",
        clientSecret: "${SECRET}",
        authorizationUrl: "https://as.example/authorize",
        tokenUrl: "https://as.example/token",
        scopes: ["read", "write"],
        callbackPort: 9999,
      },
    }).oauth;
    assert.deepEqual(full, {
      clientId: "pi-client",
      clientSecret: "${SECRET}",
      authorizationUrl: "https://as.example/authorize",
      tokenUrl: "https://as.example/token",
      scopes: ["read", "write"],
      callbackPort: 9999,
      clientMetadataUrl: undefined,
    });
    assert.deepEqual(valid("r", { url: "https://h/mcp", auth: { scopes: "a b" } }).oauth?.scopes, ["a", "b"]);
    assert.match(invalid({ url: "https://h/mcp", auth: { authorizationUrl: "https://as/a" } }), /go together/);
    assert.match(invalid({ url: "https://h/mcp", auth: { clientSecret: "s" } }), /needs `auth.clientId`/);
    assert.match(
      invalid({ url: "https://h/mcp", auth: { callbackPort: 70000 } }),
      /`auth.callbackPort` must be a port number/,
    );
    assert.match(invalid({ url: "https://h/mcp", auth: { clientMetadataUrl: "http://x/y" } }), /must be an https URL/);
    assert.match(invalid({ url: "https://h/mcp", auth: { tokenURL: "x" } }), /unknown field `auth.tokenURL`/);
    assert.match(invalid({ url: "https://h/mcp", auth: 5 }), /`auth` must be "oauth", false, or an object/);
    assert.match(invalid({ command: "x", auth: "oauth" }), /`auth` applies to remote/);
  });
  test("non-positive or non-numeric timeout", () => {
    assert.match(invalid({ command: "x", timeout: 0 }), /`timeout` must be a positive number/);
    assert.match(invalid({ command: "x", timeout: -5 }), /`timeout`/);
    assert.match(invalid({ command: "x", timeout: "10s" }), /`timeout`/);
    assert.match(invalid({ command: "x", requestTimeout: 0 }), /`requestTimeout`/);
  });
  test("unknown type", () => {
    assert.match(invalid({ command: "x", type: "websocket" }), /unknown `type` "websocket"/);
    // null is absent: the transport then comes from `command` or `url`.
    assert.equal(valid("n", { url: "https://h/mcp", type: null, transport: "sse" }).transport, "sse");
    assert.equal(valid("n", { command: "x", type: null }).transport, "stdio");
    assert.equal(valid("n", { command: "x", sampling: null }).sampling, "ask");
  });
  test("type that contradicts the endpoint", () => {
    assert.match(invalid({ type: "stdio", url: "http://h" }), /runs a local command/);
    assert.match(invalid({ type: "sse", command: "x" }), /connects to a URL/);
  });
  test("bad command forms", () => {
    assert.match(invalid({ command: "" }), /must not be empty/);
    assert.match(invalid({ command: [] }), /array must hold/);
    assert.match(invalid({ command: ["node", 1] }), /array must hold/);
    assert.match(invalid({ command: 5 }), /must be a string/);
  });
  test("other field types", () => {
    assert.match(invalid({ command: "x", enabled: "no" }), /`enabled` must be true or false/);
    assert.match(invalid({ command: "x", prefix: 1 }), /`prefix` must be a string/);
    assert.match(invalid({ command: "x", cwd: 1 }), /`cwd`/);
    assert.match(invalid("npx server"), /must be an object/);
  });
  test("every problem of an entry is reported together", () => {
    const errors = invalid({ command: "x", args: "a", timeout: -1, type: "nope" });
    assert.match(errors, /type/);
    assert.match(errors, /args/);
    assert.match(errors, /timeout/);
  });
  test("the filesystem server with directories in its args, offered roots by default, is warned about", () => {
    const fs = ["-y", "@modelcontextprotocol/server-filesystem@2025.8.1", "/home/me/notes", "/srv/docs"];
    const warned = validateServerEntry("fs", { command: "npx", args: fs }, project).warnings;
    assert.equal(warned.length, 1);
    assert.match(
      warned[0]!,
      /instead of the directories in `args` \("\/home\/me\/notes", "\/srv\/docs"\): add "roots": false/,
    );
    const docker = ["run", "-i", "--rm", "-v", "/home/me:/projects", "mcp/filesystem", "/projects"];
    assert.match(
      validateServerEntry("fs", { command: "docker", args: docker }, project).warnings.join(),
      /"\/projects"/,
    );
    // Said either way, or with no directory to keep (the roots are all it has then): nothing to warn of.
    for (const roots of [false, true])
      assert.deepEqual(validateServerEntry("fs", { command: "npx", args: fs, roots }, project).warnings, []);
    for (const directory of [[], ["."], ["${PROJECT_ROOT}"]]) {
      const bare = { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", ...directory] };
      assert.deepEqual(validateServerEntry("fs", bare, project).warnings, []);
    }
    const elsewhere = { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."], cwd: "/srv" };
    assert.equal(validateServerEntry("fs", elsewhere, project).warnings.length, 1);
  });

  test("envFile is ignored with a warning", () => {
    const result = validateServerEntry("a", { command: "x", envFile: ".env" }, project);
    assert.ok(result.config);
    assert.match(result.warnings[0]!, /envFile/);
  });
  test("a misspelt field is named with the field meant; the entry still loads", () => {
    const entry = { command: "x", timout: 5000, autoapprove: ["a"], reconnect: { maxAttemps: 2, every: 1 } };
    const result = validateServerEntry("a", { ...entry, shared: { idleSecond: 5 } }, project);
    assert.ok(result.config);
    assert.deepEqual(result.warnings, [
      "unknown field `timout` is ignored; did you mean `timeout`?",
      "unknown field `autoapprove` is ignored; did you mean `autoApprove`?",
      "unknown field `reconnect.maxAttemps` is ignored; did you mean `reconnect.maxAttempts`?",
      "unknown field `reconnect.every` is ignored; its fields are `maxAttempts`, `initialDelay`, `maxDelay`",
      "unknown field `shared.idleSecond` is ignored; did you mean `shared.idleSeconds`?",
    ]);
  });
  test("a local server's `headers`, a remote server's `args`, `env` and `cwd`: ignored, with a warning saying where it goes", () => {
    const local = validateServerEntry("l", { command: "x", headers: { Authorization: "Bearer abc" } }, project);
    assert.ok(local.config);
    assert.deepEqual(local.warnings, [
      "`headers` applies to remote (url) servers only, and is ignored for this local one: what it needs goes in `env` or `args`",
    ]);
    const remote = validateServerEntry("r", { url: "https://h/mcp", env: { API_KEY: "k" }, cwd: "/srv" }, project);
    assert.ok(remote.config);
    assert.deepEqual(remote.warnings, [
      "`env`, `cwd` apply to local (command) servers only, and are ignored for this remote one: what it needs goes in `headers`",
    ]);
    // Empty ones say nothing (other clients' files often carry `"env": {}` on every entry).
    const empty = validateServerEntry("e", { url: "https://h/mcp", env: {}, args: [] }, project);
    assert.deepEqual(empty.warnings, []);
  });
  test("`serverUrl` (Windsurf) and `httpUrl` (Gemini CLI) say what `url` says; one of them only", () => {
    for (const field of ["serverUrl", "httpUrl"]) {
      const result = validateServerEntry("w", { [field]: "https://h/mcp" }, project);
      assert.deepEqual([result.config?.url, result.config?.transport, result.warnings], ["https://h/mcp", "http", []]);
    }
    const both = validateServerEntry("w", { url: "https://a/mcp", serverUrl: "https://b/mcp" }, project);
    assert.match(both.errors.join(), /has both `url` and `serverUrl`; keep `url`/);
    const local = validateServerEntry("w", { command: "x", httpUrl: "https://h/mcp" }, project);
    assert.match(local.errors.join(), /has both `httpUrl` and `command`/);
  });
  test("other clients' fields and notes load without a word", () => {
    const vscode = { type: "stdio", command: "x", dev: { watch: "src/**" }, gallery: true, version: "1.0.0" };
    const cline = { command: "x", alwaysAllow: ["a"], disabledTools: ["b"], transportType: "stdio", comment: "mine" };
    const codex = { command: "x", env_vars: ["A"], startup_timeout_sec: 20, tool_timeout_sec: 60, enabled_tools: [] };
    for (const entry of [vscode, cline, codex]) assert.deepEqual(validateServerEntry("a", entry, project).warnings, []);
  });
  test("arguments that cannot mean what they say: a string for `args`, a flag and its value in one, npx with no package", () => {
    const server = "@modelcontextprotocol/server-memory";
    assert.deepEqual(validateServerEntry("a", { command: "npx", args: `-y ${server}` }, project).errors, [
      `\`args\` must be an array of strings, one per argument: ["-y","${server}"]`,
    ]);
    const joined = validateServerEntry("b", { command: "npx", args: [`-y ${server}`] }, project);
    assert.deepEqual(joined.warnings, [
      `\`args[0]\` is "-y ${server}": the program gets it as one argument; write each as its own string: "-y","${server}"`,
    ]);
    assert.match(joined.errors.join(), /runs `npx` with no package to run \(npx would start a shell instead\)/);
    const plain = validateServerEntry("c", { command: "npx", args: ["-y", server, "--message=hi there"] }, project);
    assert.deepEqual([plain.warnings, plain.errors], [[], []], "a flag's value after `=` may hold spaces");
  });
  test("a server in a container: `run` without -i or --rm, with -t or -d, or -e NAME that its env does not give", () => {
    const warned = (args: string[], env: Record<string, string> = {}, command = "docker") =>
      validateServerEntry("gh", { command, args, env }, project).warnings;
    const image = "ghcr.io/github/github-mcp-server";
    // GitHub's own entry, and the same through `container run` and podman: nothing to say.
    const readme = ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", image];
    assert.deepEqual(warned(readme, { GITHUB_PERSONAL_ACCESS_TOKEN: "${GITHUB_TOKEN}" }), []);
    assert.deepEqual(warned(["container", ...readme.slice(0, 3), "--env=A=1", image]), []);
    assert.deepEqual(warned(["run", "--interactive", "--rm", "-v", "/d:/d", image, "-t", "-d"], {}, "podman"), []);
    // The token is exported in the shell, not in `env`: the container never gets it.
    assert.deepEqual(warned(readme), [
      '`-e GITHUB_PERSONAL_ACCESS_TOKEN` passes GITHUB_PERSONAL_ACCESS_TOKEN from the environment docker runs in, which holds only what `env` of this entry names (not pi\'s whole environment): add "GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_PERSONAL_ACCESS_TOKEN}" to `env`, or write the value there',
    ]);
    assert.match(
      warned(["run", "--rm", "--env", "KEY", image]).join("\n"),
      /^`docker run` without `-i`: [^\n]*\n`-e KEY` passes KEY/,
    );
    assert.deepEqual(
      warned(["run", "-it", image]).map((w) => w.split(":")[0]),
      ["`docker run` with `-t`", "`docker run` without `--rm`"],
    );
    assert.deepEqual(
      warned(["run", "-d", "-i", "--rm", image]).map((w) => w.split(":")[0]),
      ["`docker run` with `-d`"],
    );
    // Not a container run, and flags after the image are the image's own.
    assert.deepEqual(warned(["ps"]), []);
    assert.deepEqual(warned(["run", "-i", "--rm", image, "-e", "X"]), []);
  });
  test("a shell's `$HOME` or Windows' `%APPDATA%` where `${HOME}` was meant: a warning naming the field and what to write", () => {
    const entry = {
      command: "node",
      args: ["$HOME/mcp/server.js", "--data=%APPDATA%/mcp", "$1", "costs $5", "${HOME}/ok"],
      env: { PATH: "$PATH:/opt/bin", PRICE: "$ref" },
      cwd: "$HOME/mcp",
    };
    assert.deepEqual(validateServerEntry("a", entry, project).warnings, [
      '`cwd` holds $HOME, which is passed on as written (no shell reads the entry): write "${HOME}/mcp" for the variable\'s value',
      '`args[0]` holds $HOME, which is passed on as written (no shell reads the entry): write "${HOME}/mcp/server.js" for the variable\'s value',
      '`args[1]` holds %APPDATA%, which is passed on as written (no shell reads the entry): write "--data=${APPDATA}/mcp" for the variable\'s value',
      '`env.PATH` holds $PATH, which is passed on as written (no shell reads the entry): write "${PATH}" for the variable\'s value',
    ]);
    // What else an `env` or header value holds may be a secret (a password with a `$` in it): not quoted.
    const password = { command: "node", env: { DB_PASSWORD: "hunter2$SECRETXYZ" }, headers: { A: "Bearer abc1$T $U" } };
    assert.deepEqual(
      validateServerEntry("p", password, project)
        .warnings.filter((w) => w.includes("no shell reads"))
        .map((w) => w.slice(w.indexOf("write"))),
      ['write "${SECRETXYZ}" for the variable\'s value', 'write "${T} ${U}" for the variable\'s value'],
    );
    const headers = { Authorization: "Bearer $API_TOKEN", "X-Token": "!echo $API_TOKEN" };
    const remote = { url: "https://mcp.example.com/mcp", headers };
    assert.deepEqual(
      validateServerEntry("b", remote, project).warnings.map((w) => w.slice(0, w.indexOf(","))),
      ["`headers.Authorization` holds $API_TOKEN"],
      "a `!command` value runs in a shell, which reads its variables",
    );
    // A shell's script reads its own variables.
    const shell = { command: "sh", args: ["-c", "exec node $HOME/mcp/server.js"] };
    assert.deepEqual(validateServerEntry("c", shell, project).warnings, []);
    // A percent-encoded character (é is %C3%A9) is no Windows variable.
    const encoded = { url: "https://mcp.example.com/caf%C3%A9/mcp?q=%E2%9C%93" };
    assert.deepEqual(validateServerEntry("d", encoded, project).warnings, []);
  });
  test("`transport` (LangChain, mcp-use) and `transportType` (Cline) say what `type` says", () => {
    const url = "http://127.0.0.1:1/sse";
    for (const field of ["transport", "transportType"]) {
      const result = validateServerEntry("a", { url, [field]: "sse" }, project);
      assert.equal(result.config?.transport, "sse", field);
      assert.deepEqual(result.warnings, []);
    }
    assert.equal(validateServerEntry("a", { url, type: "http", transport: "sse" }, project).config?.transport, "http");
    assert.match(
      validateServerEntry("a", { url, transport: "websocket" }, project).errors.join(),
      /unknown `transport` "websocket"/,
    );
  });
  test("the fields read are the fields docs/configuration.md lists", () => {
    const doc = readFileSync(new URL("./docs/configuration.md", import.meta.url), "utf8");
    const table = doc.slice(doc.indexOf("| Field |"), doc.indexOf("\n\n", doc.indexOf("| Field |")));
    const listed = [...table.matchAll(/^\| (.*?) \|/gm)].flatMap(([, cell]) =>
      [...cell!.matchAll(/`(\w+)`/g)].map(([, name]) => name!),
    );
    assert.deepEqual([...listed, "disabled"].sort(), [...SERVER_FIELDS].sort());
  });
});

describe("layerConfigs", () => {
  test("project over user over bundled, each remembering its file", () => {
    const { servers, problems } = layerConfigs([
      file(bundled, {
        mcpServers: { a: { command: "bundled-a" }, b: { command: "bundled-b" }, c: { command: "bundled-c" } },
      }),
      file(user, { mcpServers: { a: { command: "user-a" }, b: { command: "user-b" } } }),
      file(project, { mcpServers: { a: { command: "project-a" } } }),
    ]);
    assert.deepEqual(problems, []);
    const byName = Object.fromEntries(servers.map((s) => [s.name, s]));
    assert.equal(byName.a!.command, "project-a");
    assert.deepEqual(byName.a!.source, project);
    assert.equal(byName.b!.command, "user-b");
    assert.deepEqual(byName.b!.source, user);
    assert.equal(byName.c!.command, "bundled-c");
    assert.deepEqual(byName.c!.source, bundled);
  });
  test("a problem that quotes a credential written in the wrong place does not show it", () => {
    const { problems } = layerConfigs([
      file(user, {
        mcpServers: {
          a: { url: "https://exa mple.com/mcp?token=SECRET123abc" },
          b: { url: "https://example.com/mcp", headersTtl: "Bearer xyz987654321" },
        },
      }),
    ]);
    assert.equal(problems.length, 2);
    assert.doesNotMatch(problems.map((p) => p.message).join("\n"), /SECRET123abc|xyz987654321/);
    assert.match(problems[0]!.message, /\?token=\*\*\*/);
  });
  test("the --mcp-config file is above the project", () => {
    const { servers } = layerConfigs([
      file(project, { mcpServers: { a: { command: "p" } } }),
      file(flag, { mcpServers: { a: { command: "f" } } }),
    ]);
    assert.equal(servers[0]!.command, "f");
  });
  test("the order does not depend on the input order and is stable", () => {
    const inputs = [
      file(user, { mcpServers: { u1: { command: "x" }, shared: { command: "x" } } }),
      file(project, { mcpServers: { p1: { command: "x" }, shared: { command: "y" } } }),
    ];
    const a = layerConfigs(inputs).servers.map((s) => s.name);
    const b = layerConfigs([...inputs].reverse()).servers.map((s) => s.name);
    assert.deepEqual(a, ["p1", "shared", "u1"]);
    assert.deepEqual(b, a);
  });
  test("a file of comments alone holds no servers, and nothing is wrong with it", () => {
    const { servers, problems } = layerConfigs([{ source: project, text: "// servers go here\n/* none yet */\n" }]);
    assert.deepEqual([servers, problems], [[], []]);
  });
  test("a top-level setting or server map written as null is absent: no problem, the defaults apply", () => {
    const keys = ["approval", "exposure", "exposureThreshold", "toolCatalog", "autoEnableCodemode", "servers", "mcp"];
    const doc = { ...Object.fromEntries(keys.map((key) => [key, null])), mcpServers: { a: { command: "x" } } };
    const { servers, problems, approval } = layerConfigs([file(user, doc)]);
    assert.deepEqual([servers.length, problems.map((p) => p.message), approval], [1, [], "ask"]);
  });
  test("a missing file is skipped silently; a broken file is reported and the others still load", () => {
    const { servers, problems } = layerConfigs([
      { source: bundled, text: undefined },
      { source: user, text: "{ this is not json" },
      file(project, { mcpServers: { a: { command: "x" } } }),
    ]);
    assert.deepEqual(
      servers.map((s) => s.name),
      ["a"],
    );
    assert.equal(problems.length, 1);
    assert.equal(problems[0]!.source, user);
    assert.match(problems[0]!.message, /not valid JSON/);
  });
  test("each bad entry is reported once with its file and skipped; valid entries stay", () => {
    const { servers, problems } = layerConfigs([
      file(project, { mcpServers: { good: { command: "x" }, bad: { url: "nope" }, worse: {} } }),
    ]);
    assert.deepEqual(
      servers.map((s) => s.name),
      ["good"],
    );
    assert.equal(problems.length, 2);
    assert.deepEqual(problems.map((p) => p.server).sort(), ["bad", "worse"]);
    for (const p of problems) assert.equal(p.source, project);
  });
  test("a bad higher entry leaves the lower valid one in effect and says so", () => {
    const { servers, problems } = layerConfigs([
      file(user, { mcpServers: { a: { command: "user-a" } } }),
      file(project, { mcpServers: { a: { command: "x", timeout: -1 } } }),
    ]);
    assert.equal(servers[0]!.command, "user-a");
    assert.match(problems[0]!.message, /the entry from user config .* is used instead/);
  });
  test("an entry with only `enabled` toggles the lower layer's server", () => {
    const { servers, problems } = layerConfigs([
      file(user, { mcpServers: { a: { command: "user-a" } } }),
      file(project, { mcpServers: { a: { enabled: false } } }),
    ]);
    assert.deepEqual(problems, []);
    assert.equal(servers[0]!.command, "user-a");
    assert.equal(servers[0]!.enabled, false);
    assert.deepEqual(servers[0]!.source, user);
    assert.deepEqual(servers[0]!.enabledSource, project);
  });
  test("`disabled: false` (Cline's, Cursor's word) switches back on a server a lower layer switched off", () => {
    for (const lower of [{ disabled: true }, { enabled: false }]) {
      const { servers } = layerConfigs([
        file(user, { mcpServers: { a: { command: "user-a", ...lower } } }),
        file(project, { mcpServers: { a: { disabled: false } } }),
      ]);
      assert.equal(servers[0]!.enabled, true, JSON.stringify(lower));
    }
  });
  test("a toggle whose `enabled` or `disabled` is no boolean is reported, not ignored without a word", () => {
    for (const toggle of [{ enabled: "false" }, { disabled: "yes" }]) {
      const { servers, problems } = layerConfigs([
        file(user, { mcpServers: { a: { command: "user-a" } } }),
        file(project, { mcpServers: { a: toggle } }),
      ]);
      assert.equal(servers[0]!.enabled, true);
      assert.equal(problems.length, 1, JSON.stringify(toggle));
      assert.match(problems[0]!.message, /^`(enabled|disabled)` must be true or false \(got "(false|yes)"\); ignored$/);
    }
  });
  test("a toggle over a lower entry that is skipped names that entry, not 'no lower-priority config'", () => {
    const { problems } = layerConfigs([
      file(user, { mcpServers: { a: { command: "x", timeout: -1 } } }),
      file(project, { mcpServers: { a: { enabled: false } } }),
    ]);
    assert.equal(problems.length, 2);
    assert.equal(problems[1]!.source, project);
    assert.match(
      problems[1]!.message,
      /^only sets `enabled`, but the entry it would switch, in user config .*, is skipped$/,
    );
  });
  test("a toggle with nothing below it is reported", () => {
    const { servers, problems } = layerConfigs([file(project, { mcpServers: { a: { enabled: true } } })]);
    assert.deepEqual(servers, []);
    assert.match(problems[0]!.message, /no lower-priority config defines/);
  });
});

describe("configFlagFromArgv", () => {
  test("reads --mcp-config in both forms", () => {
    assert.equal(configFlagFromArgv(["node", "pi", "--mcp-config", "a.json", "-p", "x"]), "a.json");
    assert.equal(configFlagFromArgv(["node", "pi", "--mcp-config=b.json"]), "b.json");
    assert.equal(configFlagFromArgv(["node", "pi", "-p", "x"]), undefined);
    assert.equal(configFlagFromArgv(["node", "pi", "--mcp-config", "--other"]), undefined);
    assert.equal(configFlagFromArgv(["node", "pi", "--", "--mcp-config", "x"]), undefined);
  });
});

describe("small helpers", () => {
  test("checkUrl", () => {
    assert.equal(checkUrl("https://example.com/mcp"), undefined);
    assert.equal(checkUrl("http://${HOST}:${PORT}/mcp"), undefined);
    assert.equal(checkUrl("${BASE_URL}/mcp"), undefined);
    assert.match(checkUrl("ftp://${HOST}/x")!, /must start with http/);
    assert.match(checkUrl("example.com/mcp")!, /not a valid URL/);
    assert.match(checkUrl("file:///etc/passwd")!, /http or https/);
  });
  test("isToggleOnly", () => {
    assert.equal(isToggleOnly({ enabled: false }), true);
    assert.equal(isToggleOnly({ disabled: true }), true);
    assert.equal(isToggleOnly({ enabled: false, command: "x" }), false);
    assert.equal(isToggleOnly({}), false);
    assert.equal(isToggleOnly("x"), false);
  });
  test("isTimeoutError", () => {
    assert.equal(isTimeoutError(new SdkError(SdkErrorCode.RequestTimeout, "Request timed out")), true);
    assert.equal(isTimeoutError(new SdkError(SdkErrorCode.ConnectionClosed, "closed")), false);
    assert.equal(isTimeoutError(new Error("Request timed out")), false);
  });
  test("shortHash is stable and short", () => {
    assert.equal(shortHash("abc"), shortHash("abc"));
    assert.notEqual(shortHash("abc"), shortHash("abd"));
    assert.match(shortHash("abc"), /^[0-9a-f]{8}$/);
  });
  test("base64Size and formatBytes", () => {
    assert.equal(base64Size(Buffer.from("hello world").toString("base64")), 11);
    assert.equal(base64Size(""), 0);
    assert.equal(formatBytes(512), "512 B");
    assert.equal(formatBytes(2048), "2.0 KB");
    assert.equal(formatBytes(3 * 1024 * 1024), "3.0 MB");
  });
});

describe("isInfoOnlyInvocation", () => {
  test("--help and --list-models print and exit; anything else runs", () => {
    assert.equal(isInfoOnlyInvocation(["node", "pi", "--help"]), true);
    assert.equal(isInfoOnlyInvocation(["node", "pi", "-e", ".", "-h"]), true);
    assert.equal(isInfoOnlyInvocation(["node", "pi", "--list-models", "claude"]), true);
    assert.equal(isInfoOnlyInvocation(["node", "pi", "-p", "/mcp"]), false);
    assert.equal(isInfoOnlyInvocation(["node", "pi", "--", "--help"]), false);
  });
});

describe("noMcpInArgv", () => {
  test("--no-mcp anywhere among pi's options; not after --, where the words are the prompt's", () => {
    assert.equal(noMcpInArgv(["node", "pi", "--no-mcp"]), true);
    assert.equal(noMcpInArgv(["node", "pi", "-e", ".", "--no-mcp", "-p", "/mcp"]), true);
    assert.equal(noMcpInArgv(["node", "pi", "-p", "/mcp"]), false);
    assert.equal(noMcpInArgv(["node", "pi", "--", "--no-mcp"]), false);
  });
});

describe("substituteVars", () => {
  const env = { TOKEN: "s3cret-token", EMPTY: "", HOST: "example.com" };
  test("${VAR}, ${env:VAR} and several in one string", () => {
    assert.deepEqual(substituteVars("Bearer ${TOKEN}", env), {
      value: "Bearer s3cret-token",
      missing: [],
      empty: [],
      secrets: ["s3cret-token"],
      inputs: {},
    });
    assert.equal(substituteVars("${env:HOST}", env).value, "example.com");
    assert.equal(substituteVars("https://${HOST}/${HOST}", env).value, "https://example.com/example.com");
  });
  test("${VAR:-default} when unset or empty", () => {
    assert.equal(substituteVars("${NOPE:-fallback}", env).value, "fallback");
    assert.equal(substituteVars("${EMPTY:-fallback}", env).value, "fallback");
    assert.equal(substituteVars("${HOST:-fallback}", env).value, "example.com");
    assert.equal(substituteVars("${NOPE:-}", env).missing.length, 0);
  });
  test("a default that is itself a reference, as in a shell: ${A:-${B}}", () => {
    assert.equal(substituteVars("${NOPE:-${HOST}}/x", env).value, "example.com/x");
    assert.deepEqual(substituteVars("${NOPE:-${GONE}}", env).missing, ["GONE"]);
    assert.deepEqual(findVarRefs("${NOPE:-${HOST}}"), ["NOPE", "HOST"]);
  });
  test("a missing variable is reported", () => {
    assert.deepEqual(substituteVars("a${NOPE}b${NOPE}", env), {
      value: "ab",
      missing: ["NOPE"],
      empty: [],
      secrets: [],
      inputs: {},
    });
  });
  test("an empty variable is empty but not missing", () => {
    assert.deepEqual(substituteVars("x${EMPTY}", env).missing, []);
    assert.deepEqual(substituteVars("x${EMPTY}", env).empty, ["EMPTY"]);
    assert.deepEqual(substituteVars("${EMPTY:-}", env).empty, [], "an empty default says empty is meant");
  });
  test("${PROJECT_ROOT}, and VS Code's and Cursor's ${workspaceFolder}", () => {
    assert.equal(substituteVars("${PROJECT_ROOT}/lib", env, "/work/p").value, "/work/p/lib");
    assert.deepEqual(substituteVars("${workspaceFolder}/lib", env, "/work/p"), {
      value: "/work/p/lib",
      missing: [],
      empty: [],
      secrets: [],
      inputs: {},
    });
    assert.deepEqual(findVarRefs("${workspaceFolder}/lib"), []);
  });
  test("VS Code's ${input:id} is read from the variable its id names (pi has no prompt of VS Code's)", () => {
    const withKey = { ...env, API_KEY: "k-from-env", GITHUB_TOKEN: "gh-from-env" };
    assert.equal(substituteVars("Bearer ${input:api-key}", withKey).value, "Bearer k-from-env");
    assert.equal(substituteVars("${input:github_token}", withKey).value, "gh-from-env");
    assert.deepEqual(substituteVars("${input:db-pass}", env).missing, ["DB_PASS"]);
    assert.deepEqual(substituteVars("${input:db-pass}", env).inputs, { DB_PASS: "${input:db-pass}" });
    // What the user reads names the input as written, beside the variable it is read from.
    const server = valid("vs", { command: "node", args: ["x"], env: { PASS: "${input:db-pass}" } });
    assert.deepEqual(resolveServerConfig(server, env, "/work/p").warnings, [
      "environment variable ${DB_PASS} (read for `${input:db-pass}`) is not set, so `env.PASS` is not passed to the server",
    ]);
    assert.equal(substituteVars("${input:region:-eu}", env).value, "eu");
    assert.deepEqual(findVarRefs("${input:api-key} ${env:HOME}"), ["API_KEY", "HOME"]);
  });
  test("text that is not a reference stays", () => {
    assert.equal(substituteVars("$HOME ${ not a var} $${X", env).value, "$HOME ${ not a var} $${X");
  });
  test("findVarRefs and configVarRefs", () => {
    assert.deepEqual(findVarRefs("${A} ${B:-x} ${env:C} ${PROJECT_ROOT} ${A}"), ["A", "B", "C"]);
    const config = valid("a", { url: "https://${HOST}/mcp", headers: { Authorization: "Bearer ${TOKEN}" } });
    assert.deepEqual(configVarRefs(config).sort(), ["HOST", "TOKEN"]);
    const oauth = valid("b", {
      url: "https://h/mcp",
      auth: { clientId: "${CLIENT_ID}", clientSecret: "${CLIENT_SECRET}" },
    });
    assert.deepEqual(configVarRefs(oauth).sort(), ["CLIENT_ID", "CLIENT_SECRET"]);
    // Each OAuth setting the session fills in is named, so the trust question lists every variable a server reads.
    const urls = valid("c", {
      url: "https://h/mcp",
      auth: { authServerMetadataUrl: "https://a.example/${META}", clientMetadataUrl: "https://a.example/${DOC}" },
    });
    assert.deepEqual(configVarRefs(urls).sort(), ["DOC", "META"]);
  });
});

describe("resolveServerConfig", () => {
  const env = { TOKEN: "s3cret-token", DB_PASSWORD: "hunter22" };
  test("a local server: command, args, env, cwd relative to the project root", () => {
    const config = valid("db", {
      command: ["node", "${PROJECT_ROOT}/server.js"],
      args: ["--pw", "${DB_PASSWORD}"],
      env: { PW: "${DB_PASSWORD}", MODE: "prod" },
      cwd: "./tools",
    });
    const r = resolveServerConfig(config, env, "/work/p");
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.warnings, []);
    assert.deepEqual(r.endpoint, {
      kind: "stdio",
      command: "node",
      args: ["/work/p/server.js", "--pw", "hunter22"],
      env: { PW: "hunter22", MODE: "prod" },
      cwd: "/work/p/tools",
    });
    assert.ok(r.secrets.includes("hunter22"));
  });
  test("a local server's cwd defaults to the project root", () => {
    const r = resolveServerConfig(valid("a", { command: "x" }), env, "/work/p");
    assert.equal(r.endpoint?.kind === "stdio" && r.endpoint.cwd, "/work/p");
  });
  test("a missing variable in a local server's env is a warning naming it, and the entry is left out", () => {
    const config = valid("db", {
      command: "x",
      args: ["--key", "${API_KEY:-none}"],
      env: { KEY: "${API_KEY}", OTHER: "1" },
    });
    const r = resolveServerConfig(config, {}, "/p");
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.endpoint?.kind === "stdio" && r.endpoint.env, { OTHER: "1" });
    assert.equal(r.warnings.length, 1);
    assert.match(r.warnings[0]!, /\$\{API_KEY\} is not set, so `env.KEY` is not passed/);
  });
  test("an empty variable in a local server's env is passed on empty; in its args it is an error", () => {
    const config = valid("db", { command: "x", args: ["${EMPTY}", "${EMPTY:-}"], env: { KEY: "${EMPTY}" } });
    const r = resolveServerConfig(config, { EMPTY: "" }, "/p");
    assert.match(r.errors.join("\n"), /environment variable \$\{EMPTY\} in `args\[0\]` is empty; set it/);
    const fine = resolveServerConfig({ ...config, args: ["${EMPTY:-}"] }, { EMPTY: "" }, "/p");
    assert.deepEqual(fine.errors, []);
    assert.deepEqual(fine.endpoint?.kind === "stdio" && [fine.endpoint.args, fine.endpoint.env], [[""], { KEY: "" }]);
  });
  test("a missing variable in a local server's command, args or cwd is an error naming it and where", () => {
    for (const [entry, where] of [
      [{ command: "x", args: ["${FS_ROOT}"] }, "`args[0]`"],
      [{ command: "${TOOL_BIN}/server" }, "`command`"],
      [{ command: "x", cwd: "${WORK_DIR}/sub" }, "`cwd`"],
    ] as const) {
      const r = resolveServerConfig(valid("fs", entry), {}, "/p");
      assert.equal(r.endpoint, undefined, where);
      assert.equal(r.errors.length, 1);
      assert.match(r.errors[0]!, /environment variable \$\{[A-Z_]+\} in `[a-z]+(\[0\])?` is not set/);
      assert.ok(r.errors[0]!.includes(where), r.errors[0]);
    }
  });
  test("a missing variable for a remote server is an error before any connection", () => {
    const config = valid("gh", { url: "https://${HOST}/mcp", headers: { Authorization: "Bearer ${GH_TOKEN}" } });
    const r = resolveServerConfig(config, {}, "/p");
    assert.equal(r.endpoint, undefined);
    assert.match(r.errors[0]!, /\$\{HOST\} in `url`/);
    assert.match(r.errors[0]!, /\$\{GH_TOKEN\} in header `Authorization`/);
  });
  test("an empty variable in a remote server's url is an error (https://${HOST}/mcp would reach the host `mcp`)", () => {
    const r = resolveServerConfig(valid("gh", { url: "https://${HOST}/mcp" }), { HOST: "" }, "/p");
    assert.equal(r.endpoint, undefined);
    assert.match(r.errors.join("\n"), /environment variable \$\{HOST\} in `url` is empty; set it/);
    assert.ok(resolveServerConfig(valid("a", { url: "https://h/${P:-}mcp" }), { P: "" }, "/p").endpoint);
  });
  test("an empty variable in a remote server's header is an error (Authorization: `Bearer ` helps nobody)", () => {
    const config = valid("gh", { url: "https://h/mcp", headers: { Authorization: "Bearer ${GH_TOKEN}" } });
    const r = resolveServerConfig(config, { GH_TOKEN: "" }, "/p");
    assert.equal(r.endpoint, undefined);
    assert.match(r.errors.join("\n"), /environment variable \$\{GH_TOKEN\} in header `Authorization` is empty; set it/);
  });
  test("an OAuth setting from a variable that is not set is an error naming it, not a client id or secret sent empty", () => {
    const auth = { clientId: "${CI_ID}", clientSecret: "${CI_SECRET}", grantType: "client_credentials" };
    const r = resolveServerConfig(valid("m", { url: "https://h/mcp", auth }), { CI_ID: "job" }, "/p");
    assert.equal(r.endpoint, undefined);
    assert.match(r.errors.join("\n"), /environment variable \$\{CI_SECRET\} in `auth\.clientSecret` is not set/);
    assert.ok(
      resolveServerConfig(valid("m", { url: "https://h/mcp", auth }), { CI_ID: "a", CI_SECRET: "b" }, "/p").endpoint,
    );
  });
  test("a remote server resolves url and headers and treats header values as secrets", () => {
    const config = valid("gh", {
      url: "https://h/mcp?key=${TOKEN}",
      headers: { Authorization: "Bearer ${TOKEN}", "X-Static": "inline-key-123" },
    });
    const r = resolveServerConfig(config, env, "/p");
    assert.deepEqual(r.endpoint, {
      kind: "http",
      url: "https://h/mcp?key=s3cret-token",
      headers: { Authorization: "Bearer s3cret-token", "X-Static": "inline-key-123" },
    });
    assert.ok(r.secrets.includes("s3cret-token"));
    assert.ok(r.secrets.includes("inline-key-123"));
  });
  test("a URL that is invalid once its variables are filled in is an error", () => {
    const config = valid("a", { url: "http://localhost:${PORT}/mcp" });
    assert.match(
      resolveServerConfig(config, { PORT: "not-a-port" }, "/p").errors[0]!,
      /not a valid URL after variable substitution/,
    );
    assert.deepEqual(resolveServerConfig(config, { PORT: "8080" }, "/p").errors, []);
  });
  test("resolved secrets never appear in its messages", () => {
    const config = valid("gh", { url: "https://h/${TOKEN}/mcp", headers: { A: "${MISSING}" } });
    const r = resolveServerConfig(config, env, "/p");
    assert.doesNotMatch(r.errors.join(" "), /s3cret/);
  });
});

describe("redact and displayUrl", () => {
  test("hides each secret, longest first, also URL-encoded", () => {
    assert.equal(redact("token abcd1234 and abcd12345678", ["abcd1234", "abcd12345678"]), "token *** and ***");
    assert.equal(redact("q=a%2Fb%2Fc%2Fd", ["a/b/c/d"]), "q=***");
    assert.equal(redact("short ab stays", ["ab"]), "short ab stays");
  });
  test("displayUrl drops credentials, query and fragment", () => {
    assert.equal(displayUrl("https://user:pw@h:8080/mcp?key=secret#x"), "https://h:8080/mcp");
    assert.equal(displayUrl("nope"), "(invalid URL)");
  });
});

describe("tool naming", () => {
  test("mcp_<server>_<tool>, a prefix, or the bare name", () => {
    assert.equal(rawToolName("github", "create_issue"), "mcp_github_create_issue");
    assert.equal(rawToolName("github", "create_issue", "gh"), "gh_create_issue");
    assert.equal(rawToolName("github", "create_issue", ""), "create_issue");
  });
  test("only [A-Za-z0-9_-], starting with a letter", () => {
    assert.equal(sanitizeToolName("mcp_my.server_get/item v2"), "mcp_my_server_get_item_v2");
    assert.equal(sanitizeToolName("mcp_ünïcode_tool"), "mcp_unicode_tool", "accents dropped");
    // Letters of another script cannot be kept: as underscores alone these two would be one name.
    const weather = sanitizeToolName("mcp_amap_查询天气");
    const address = sanitizeToolName("mcp_amap_查询地址");
    assert.match(weather, /^mcp_amap_[0-9a-f]{8}$/);
    assert.match(address, /^mcp_amap_[0-9a-f]{8}$/);
    assert.notEqual(weather, address);
    assert.equal(sanitizeToolName("mcp_amap_查询天气"), weather, "stable");
    assert.match(sanitizeToolName("mcp_s_天气_forecast"), /^mcp_s_forecast_[0-9a-f]{8}$/);
    assert.equal(sanitizeToolName("2fa_tool"), "mcp_2fa_tool");
    assert.equal(sanitizeToolName("_x"), "mcp__x");
    assert.equal(sanitizeToolName("get-sum"), "get-sum");
    assert.match(toolNameFor("my server", "do it!"), /^[A-Za-z][A-Za-z0-9_-]*$/);
  });
  test("at most 64 characters, shortened with a deterministic hash", () => {
    const long = toolNameFor("a-very-long-server-name-for-testing", "and_an_even_longer_tool_name_that_goes_on_and_on");
    assert.equal(long.length, MAX_TOOL_NAME_LENGTH);
    assert.match(long, /_[0-9a-f]{8}$/);
    assert.equal(
      toolNameFor("a-very-long-server-name-for-testing", "and_an_even_longer_tool_name_that_goes_on_and_on"),
      long,
    );
    const other = toolNameFor(
      "a-very-long-server-name-for-testing",
      "and_an_even_longer_tool_name_that_goes_on_and_on_2",
    );
    assert.notEqual(other, long, "two long names with the same head stay distinct");
    assert.equal(toolNameFor("s", "x".repeat(60)).length, 64);
    assert.equal(toolNameFor("s", "x".repeat(20)), `mcp_s_${"x".repeat(20)}`);
  });
  test("collisions get _2, _3 within the length limit", () => {
    const taken = new Set(["mcp_a_x", "mcp_a_x_2"]);
    assert.equal(
      allocateToolName("mcp_a_x", (n) => taken.has(n)),
      "mcp_a_x_3",
    );
    assert.equal(
      allocateToolName("free", (n) => taken.has(n)),
      "free",
    );
    const long = "y".repeat(64);
    const allocated = allocateToolName(long, (n) => n === long);
    assert.equal(allocated.length, 64);
    assert.ok(allocated.endsWith("_2"));
  });
});

describe("classifyError", () => {
  test("auth: SDK auth errors and 401/403 statuses", () => {
    assert.equal(classifyError(new UnauthorizedError()), "auth");
    assert.equal(classifyError(httpError(401, "Error POSTing to endpoint: nope")), "auth");
    assert.equal(classifyError(httpError(403, "x")), "auth");
    assert.equal(classifyError(new SseError(401, "x", undefined as never)), "auth");
    assert.equal(classifyError(new Error("Error POSTing to endpoint (HTTP 401): Unauthorized")), "auth");
    assert.equal(classifyError(new Error("request failed with status 403")), "auth");
    assert.equal(classifyError(new BridgeError("auth", "s", "x")), "auth");
  });
  test("transport: closed connections, refused or reset sockets, process exit, expired sessions", () => {
    assert.equal(classifyError(new SdkError(SdkErrorCode.ConnectionClosed, "Connection closed")), "transport");
    assert.equal(
      classifyError(
        new TypeError("fetch failed", {
          cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
        }),
      ),
      "transport",
    );
    assert.equal(classifyError(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" })), "transport");
    assert.equal(classifyError(Object.assign(new Error("write EPIPE"), { code: "EPIPE" })), "transport");
    assert.equal(classifyError(new Error("Not connected")), "transport");
    assert.equal(classifyError(httpError(404, "Session not found")), "transport");
    assert.equal(classifyError(httpError(503, "unavailable")), "transport");
    assert.equal(classifyError(new Error("socket hang up")), "transport");
    assert.equal(classifyError(new BridgeError("transport", "s", "x")), "transport");
  });
  test("other: server answers, timeouts, bad requests", () => {
    assert.equal(classifyError(new ProtocolError(ProtocolErrorCode.InvalidParams, "bad")), "other");
    assert.equal(classifyError(new SdkError(SdkErrorCode.RequestTimeout, "Request timed out")), "other");
    assert.equal(
      classifyError(new ProtocolError(ProtocolErrorCode.InternalError, "Unauthorized access to repo")),
      "other",
    );
    assert.equal(classifyError(httpError(400, "bad request")), "other");
    assert.equal(classifyError(new Error("something else")), "other");
    assert.equal(classifyError("a string"), "other");
    assert.equal(classifyError(new Error("found 401 items")), "other");
  });
  test("auth and transport never overlap: an error with hints of both gets one class, by a fixed precedence", () => {
    const coded = (message: string, code: string) => Object.assign(new Error(message), { code });
    // The precedence: the bridge's own kind; the SDK's UnauthorizedError; an HTTP status; the SDK's own error code or a
    // server's error answer; a Node error code anywhere in the cause chain; then the message, where auth words win over
    // transport words.
    const table: Array<[what: string, sample: unknown, expected: ErrorKind]> = [
      ["plain auth: the SDK's UnauthorizedError", new UnauthorizedError(), "auth"],
      ["plain auth: HTTP 401", httpError(401, "x"), "auth"],
      [
        "plain transport: the connection closed",
        new SdkError(SdkErrorCode.ConnectionClosed, "Connection closed"),
        "transport",
      ],
      ["plain transport: not connected", new Error("Not connected"), "transport"],
      ["plain transport: fetch failed", new TypeError("fetch failed"), "transport"],
      ["plain other: a server's answer", new ProtocolError(ProtocolErrorCode.InvalidParams, "bad"), "other"],
      ["plain other: a number that is no status", new Error("found 401 items"), "other"],
      ["plain other: not an Error", "a string", "other"],
      ["plain other: nothing", null, "other"],
      [
        "the bridge's kind beats transport words",
        new BridgeError("auth", "s", "connection closed: fetch failed"),
        "auth",
      ],
      ["the bridge's kind beats auth words", new BridgeError("transport", "s", "HTTP 401 unauthorized"), "transport"],
      [
        "a bridge error keeps its own kind, whatever its message says",
        new BridgeError("config", "s", "HTTP 401: connection closed"),
        "config",
      ],
      ["UnauthorizedError beats transport words", new UnauthorizedError("fetch failed: connection closed"), "auth"],
      ["status 401 beats transport words", httpError(401, "Connection closed"), "auth"],
      ["SSE status 403 beats transport words", new SseError(403, "socket hang up", undefined as never), "auth"],
      [
        "status in an SSE POST message (401) beats transport words",
        new Error("Error POSTing to endpoint (HTTP 401): socket hang up"),
        "auth",
      ],
      ["status 503 beats auth words", httpError(503, "Unauthorized"), "transport"],
      ["SSE status 404 beats auth words", new SseError(404, "forbidden", undefined as never), "transport"],
      [
        "status in an SSE POST message (502) beats auth words",
        new Error("Error POSTing to endpoint (HTTP 502): Unauthorized"),
        "transport",
      ],
      ["status 400 beats transport words", httpError(400, "fetch failed"), "other"],
      [
        "the SDK's ConnectionClosed beats auth words",
        new SdkError(SdkErrorCode.ConnectionClosed, "Connection closed: unauthorized"),
        "transport",
      ],
      [
        "a server's error answer beats transport words",
        new ProtocolError(ProtocolErrorCode.InternalError, "fetch failed: ECONNREFUSED"),
        "other",
      ],
      [
        "a server's error answer beats auth words",
        new ProtocolError(ProtocolErrorCode.InternalError, "Unauthorized access to repo"),
        "other",
      ],
      ["a Node error code beats auth words", coded("unauthorized", "ECONNRESET"), "transport"],
      [
        "a Node error code in the cause beats auth words",
        new TypeError("forbidden", { cause: coded("connect ECONNREFUSED", "ECONNREFUSED") }),
        "transport",
      ],
      ["auth words beat 'fetch failed' in a TypeError", new TypeError("fetch failed: invalid_token"), "auth"],
      ["auth words beat transport words", new Error("fetch failed: unauthorized"), "auth"],
      ["auth words beat 'connection closed'", new Error("connection closed: authentication required"), "auth"],
    ];
    const wrong = table
      .filter(([, sample, expected]) => classifyError(sample) !== expected)
      .map(([what, sample, expected]) => `${what}: ${classifyError(sample)}, expected ${expected}`);
    assert.deepEqual(wrong, []);
  });
  test("httpStatusOf and describeError", () => {
    assert.equal(httpStatusOf(httpError(405, "x")), 405);
    assert.equal(httpStatusOf(httpError(-1, "x")), undefined);
    assert.equal(httpStatusOf(new Error("plain")), undefined);
    const err = new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED 127.0.0.1:1") });
    assert.equal(describeError(err), "fetch failed: connect ECONNREFUSED 127.0.0.1:1");
    assert.equal(describeError(new ProtocolError(ProtocolErrorCode.InvalidParams, "bad input")), "bad input");
  });
});

describe("normalizeToolResult", () => {
  test("text parts joined by newlines", () => {
    const r = normalizeToolResult({
      content: [
        { type: "text", text: "Issue #42 created" },
        { type: "text", text: "URL: https://x" },
      ],
    });
    assert.equal(r.text, "Issue #42 created\nURL: https://x");
    assert.deepEqual(r.content, [{ type: "text", text: "Issue #42 created\nURL: https://x" }]);
    assert.equal(r.isError, false);
  });
  test("images pass as images; unsupported image types are described", () => {
    const r = normalizeToolResult({
      content: [
        { type: "text", text: "here" },
        { type: "image", data: "aGVsbG8=", mimeType: "image/png" },
        { type: "image", data: "PHN2Zz4=", mimeType: "image/svg+xml" },
      ],
    });
    assert.deepEqual(r.content[1], { type: "image", data: "aGVsbG8=", mimeType: "image/png" });
    assert.equal(r.content.length, 2);
    assert.match(r.text, /\[image: image\/svg\+xml, 5 B, not shown\]/);
  });
  test("a JPEG or PNG whose type is written image/jpg or in capitals passes as an image, of the type providers name", () => {
    const parts = ["image/jpg", "image/JPEG", "Image/PNG", "image/png; charset=binary"].map((mimeType) => ({
      type: "image",
      data: "aGVsbG8=",
      mimeType,
    }));
    const r = normalizeToolResult({ content: parts });
    assert.deepEqual(
      r.content.map((part) => (part.type === "image" ? part.mimeType : part.text)),
      ["image/jpeg", "image/jpeg", "image/png", "image/png"],
    );
    // A saved resource's type with parameters still names its extension.
    assert.equal(resourceFileName("file:///report", "application/pdf; x=y"), "report.pdf");
  });
  test("an image's base64 wrapped in lines (as Python's base64.encodebytes writes it) reaches the model as one line", () => {
    const data = "aGVs\nbG8=\n";
    const r = normalizeToolResult({
      content: [
        { type: "image", data, mimeType: "image/png" },
        { type: "resource", resource: { uri: "file:///i.png", mimeType: "image/png", blob: data } },
      ],
    });
    assert.deepEqual(
      r.content.flatMap((part) => (part.type === "image" ? [part.data] : [])),
      ["aGVsbG8=", "aGVsbG8="],
    );
  });
  test("an image whose bytes are of another type than it says (a PNG sent as image/jpeg) goes as the type its bytes are", () => {
    const png = Buffer.from("\x89PNG\r\n\x1a\n0000", "latin1").toString("base64");
    const jpeg = Buffer.from("\xff\xd8\xff\xe0000", "latin1").toString("base64");
    const webp = Buffer.from("RIFF0000WEBPVP8 ", "latin1").toString("base64");
    const r = normalizeToolResult({
      content: [
        { type: "image", data: png, mimeType: "image/jpeg" },
        { type: "image", data: jpeg, mimeType: "image/png" },
        { type: "image", data: webp, mimeType: "image/png" },
        { type: "resource", resource: { uri: "file:///s.webp", mimeType: "image/webp", blob: png } },
      ],
    });
    assert.deepEqual(
      r.content.flatMap((part) => (part.type === "image" ? [part.mimeType] : [])),
      ["image/png", "image/jpeg", "image/webp", "image/png"],
    );
  });
  test("an image too large for a provider is described, not sent (it would fail the whole request)", () => {
    const data = Buffer.from("\x89PNG\r\n\x1a\n").toString("base64") + "A".repeat(6 * 1024 * 1024);
    const r = normalizeToolResult({
      content: [
        { type: "image", data, mimeType: "image/png" },
        { type: "resource", resource: { uri: "file:///big.png", mimeType: "image/png", blob: data } },
      ],
    });
    assert.deepEqual(r.content.length, 1, "no image part");
    assert.match(
      r.text,
      /\[image: image\/png, 4\.5 MB, not shown: 6\.0 MB as base64, over the 4\.5 MB providers take\]/,
    );
    assert.match(r.text, /\[resource\] file:\/\/\/big\.png \(image\/png\): binary, 4\.5 MB, not shown/);
  });
  test("images that are each within a provider's bound but too many for one request: those past the bound are described", () => {
    const data = Buffer.from("\x89PNG\r\n\x1a\n").toString("base64") + "A".repeat(4 * 1024 * 1024);
    const image = { type: "image", data, mimeType: "image/png" };
    const resource = { type: "resource", resource: { uri: "file:///s.png", mimeType: "image/png", blob: data } };
    const r = normalizeToolResult({ content: [image, image, image, image, resource] });
    assert.equal(r.content.filter((part) => part.type === "image").length, 3);
    assert.match(r.text, /\[image: image\/png, 3\.0 MB, not shown: .*over the 13\.5 MB/);
    assert.match(
      r.text,
      /\[resource\] file:\/\/\/s\.png \(image\/png\): image, 3\.0 MB, not shown: .*over the 13\.5 MB/,
    );
  });
  test("an image sent as a data: URL (a common server mistake) reaches the model as its base64, which providers take", () => {
    const r = normalizeToolResult({
      content: [
        { type: "image", data: "data:image/png;base64,aGVsbG8=", mimeType: "image/png" },
        {
          type: "resource",
          resource: { uri: "file:///i.png", mimeType: "image/png", blob: "data:image/png;base64,aGVsbG8=" },
        },
      ],
    });
    assert.deepEqual(
      r.content.flatMap((part) => (part.type === "image" ? [part.data] : [])),
      ["aGVsbG8=", "aGVsbG8="],
    );
  });
  test("an image whose data is not base64 (a URL where the bytes belong) is described, not sent to fail the request", () => {
    const r = normalizeToolResult({
      content: [
        { type: "image", data: "https://example.com/shot.png", mimeType: "image/png" },
        {
          type: "resource",
          resource: { uri: "file:///s.png", mimeType: "image/png", blob: "https://example.com/s.png" },
        },
      ],
    });
    assert.equal(r.content.length, 1, "no image part");
    assert.match(r.text, /\[image: image\/png, .*not shown: its data is not base64\]/);
  });
  test("an image alone has no filler text", () => {
    const r = normalizeToolResult({ content: [{ type: "image", data: "aGVsbG8=", mimeType: "image/png" }] });
    assert.deepEqual(r.content, [{ type: "image", data: "aGVsbG8=", mimeType: "image/png" }]);
  });
  test("embedded resources: text with URI and MIME type, binary described", () => {
    const r = normalizeToolResult({
      content: [
        { type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "hello" } },
        {
          type: "resource",
          resource: { uri: "file:///b.bin", mimeType: "application/octet-stream", blob: "AAECAw==" },
        },
        {
          type: "resource",
          resource: {
            uri: "file:///c.json",
            mimeType: "application/json",
            blob: Buffer.from('{"a":1}').toString("base64"),
          },
        },
      ],
    });
    assert.match(r.text, /\[resource\] file:\/\/\/a.txt \(text\/plain\)\nhello/);
    assert.match(r.text, /\[resource\] file:\/\/\/b.bin \(application\/octet-stream\): binary, 4 B, not shown/);
    assert.match(r.text, /\{"a":1\}/);
    assert.doesNotMatch(r.text, /AAECAw/);
  });
  test("a text blob of an x- type (application/x-yaml, application/x-javascript) is text, not binary", () => {
    const parts = ["application/x-yaml", "application/x-javascript"].map((mimeType) => ({
      type: "resource",
      resource: { uri: "file:///f", mimeType, blob: Buffer.from("a: 1").toString("base64") },
    }));
    assert.deepEqual(normalizeToolResult({ content: parts }).text.match(/\na: 1/g)?.length, 2);
  });
  test("a text blob of a source or data type (toml, ndjson, sql, shell) is text, not binary", () => {
    const types = ["application/toml", "application/x-ndjson", "application/sql", "application/x-sh"];
    types.push("application/typescript", "application/ecmascript", "application/jsonl", "application/x-jsonlines");
    const parts = types.map((mimeType) => ({
      type: "resource",
      resource: { uri: "file:///f", mimeType, blob: Buffer.from("a = 1").toString("base64") },
    }));
    assert.equal(normalizeToolResult({ content: parts }).text.match(/\na = 1/g)?.length, types.length);
  });
  test("a text blob in another charset than UTF-8 is read in the charset its type names", () => {
    const blob = Buffer.from("café, 20 °C", "latin1").toString("base64");
    const resource = { uri: "file:///w.txt", mimeType: "text/plain; charset=ISO-8859-1", blob };
    assert.match(normalizeToolResult({ content: [{ type: "resource", resource }] }).text, /\ncafé, 20 °C$/);
  });
  test("resource links as a line with URI and name", () => {
    const r = normalizeToolResult({
      content: [
        { type: "resource_link", uri: "file:///x.md", name: "x.md", mimeType: "text/markdown", description: "notes" },
      ],
    });
    assert.equal(r.text, "[resource link] file:///x.md (x.md) text/markdown — notes");
  });
  test("audio is described", () => {
    assert.match(
      normalizeToolResult({ content: [{ type: "audio", data: "AAAA", mimeType: "audio/wav" }] }).text,
      /\[audio: audio\/wav, 3 B/,
    );
  });
  test("structuredContent is used when there is no text, and not duplicated when there is", () => {
    assert.equal(normalizeToolResult({ content: [], structuredContent: { a: 1 } }).text, '{\n  "a": 1\n}');
    assert.equal(
      normalizeToolResult({ content: [{ type: "text", text: "t" }], structuredContent: { a: 1 } }).text,
      "t",
    );
  });
  test("structuredContent is used when the only text is empty", () => {
    const r = normalizeToolResult({ content: [{ type: "text", text: "" }], structuredContent: { a: 1 } });
    assert.equal(r.text, '{\n  "a": 1\n}');
  });
  test("isError is carried", () => {
    const r = normalizeToolResult({ content: [{ type: "text", text: "boom" }], isError: true });
    assert.equal(r.isError, true);
    assert.equal(r.text, "boom");
  });
  test("empty results and junk parts", () => {
    assert.deepEqual(normalizeToolResult({ content: [] }).content, [{ type: "text", text: "(no output)" }]);
    assert.deepEqual(normalizeToolResult({}).content, [{ type: "text", text: "(no output)" }]);
    assert.match(
      normalizeToolResult({ content: [null, 5, { type: "video" }] }).text,
      /unsupported content type "video"/,
    );
    assert.equal(normalizeToolResult({ toolResult: { ok: true } }).text, '{\n  "ok": true\n}');
  });
});

describe("a tool's result as a script gets it (pi 1.x's codemode)", () => {
  test("the whole CallToolResult without _meta; content is a list even where the server left it out", () => {
    const result = {
      content: [{ type: "text", text: "5" }],
      structuredContent: { sum: 5 },
      isError: false,
      _meta: { a: 1 },
    };
    assert.deepEqual(scriptResult(result), {
      content: [{ type: "text", text: "5" }],
      structuredContent: { sum: 5 },
      isError: false,
    });
    assert.deepEqual(scriptResult({ structuredContent: 1 }), { structuredContent: 1, content: [] });
  });

  test("its declared shape: the tool's output schema as structuredContent, its $refs inlined; any value without one", () => {
    const declared = scriptResultSchema({
      type: "object",
      properties: { items: { type: "array", items: { $ref: "#/$defs/Item" } } },
      $defs: { Item: { type: "object", properties: { id: { type: "string" } } } },
    });
    const properties = declared.properties as Record<string, Record<string, unknown>>;
    assert.deepEqual(declared.required, ["content"]);
    assert.equal(properties.isError!.type, "boolean");
    assert.doesNotMatch(JSON.stringify(properties.structuredContent), /\$ref/);
    assert.match(JSON.stringify(properties.structuredContent), /"id":\{"type":"string"\}/);
    assert.deepEqual(scriptResultSchema(undefined).properties, { ...properties, structuredContent: {} });
  });
});

test("which servers a script may reach: every one, or those whose tool names its words hold", () => {
  const words = ["const", "r", "await", "tools", "mcp_github_create_issue", "gh_search"];
  assert.equal(reachesServer("all", "slack"), true);
  assert.equal(reachesServer(words, "github"), true);
  assert.equal(reachesServer(words, "git"), false, "mcp_git_ is not in mcp_github_create_issue");
  assert.equal(reachesServer(words, "code", "gh"), true, "a prefix names its tools");
  assert.equal(reachesServer(words, "slack"), false);
  assert.equal(reachesServer(words, "bare", ""), true, "bare tool names may be any word");
  assert.equal(reachesServer([], "bare", ""), false);
  for (const server of ["天气", "s".repeat(70)]) {
    const call = `await tools.${toolNameFor(server, "get")}()`;
    assert.equal(reachesServer(["const", call], server), true, `a script calling a tool of '${server.slice(0, 9)}'`);
  }
});

describe("normalizeInputSchema", () => {
  test("an empty or missing schema becomes an empty object schema", () => {
    for (const input of [undefined, null, {}, "x"]) {
      assert.deepEqual(normalizeInputSchema(input), {
        schema: { type: "object", properties: {} },
        warnings: [],
        uncarried: [],
      });
    }
  });
  test("reports the rule keywords the copy leaves out, wherever they are", () => {
    const { uncarried } = normalizeInputSchema({
      properties: { a: { not: { const: 1 } }, b: { anyOf: [{ type: "string" }, { if: {}, then: {} }] } },
      dependentRequired: { a: ["b"] },
      additionalProperties: false,
      $defs: { unused: { not: {} } },
    });
    assert.deepEqual(uncarried.sort(), ["dependentRequired", "if", "not", "then"]);
    assert.deepEqual(normalizeInputSchema({ properties: { not: { type: "string" } } }).uncarried, [], "a field's name");
    const map = { type: "object", propertyNames: { type: "string" }, additionalProperties: { type: "number" } };
    assert.deepEqual(normalizeInputSchema({ properties: { m: map } }).uncarried, [], "a map says nothing hidden");
  });
  test("adds type and properties; drops $schema and an empty required", () => {
    const { schema } = normalizeInputSchema({ $schema: "http://json-schema.org/draft-07/schema#", required: [] });
    assert.deepEqual(schema, { type: "object", properties: {} });
  });
  test("keeps an ordinary schema as it is, less the keywords a provider rejects", () => {
    const input = { type: "object", properties: { a: { type: "string", description: "A" } }, required: ["a"] };
    assert.deepEqual(normalizeInputSchema({ ...input, additionalProperties: false }).schema, input);
  });
  test("inlines local $refs and drops $defs", () => {
    const { schema, warnings } = normalizeInputSchema({
      type: "object",
      $defs: { Point: { type: "object", properties: { x: { type: "number" } } } },
      definitions: { Name: { type: "string" } },
      properties: { p: { $ref: "#/$defs/Point", description: "where" }, n: { $ref: "#/definitions/Name" } },
    });
    assert.deepEqual(warnings, []);
    assert.deepEqual(schema, {
      type: "object",
      properties: {
        p: { type: "object", properties: { x: { type: "number" } }, description: "where" },
        n: { type: "string" },
      },
    });
  });
  test("a recursive $ref is cut off with a warning; an unresolvable one accepts anything", () => {
    const { schema, warnings } = normalizeInputSchema({
      type: "object",
      $defs: { Node: { type: "object", properties: { child: { $ref: "#/$defs/Node" } } } },
      properties: { root: { $ref: "#/$defs/Node" }, bad: { $ref: "#/nowhere" } },
    });
    assert.equal(JSON.stringify(schema).includes("$ref"), false);
    assert.equal(warnings.length, 2);
    assert.deepEqual((schema.properties as Record<string, unknown>).bad, {});
    assert.match(
      String(
        (schema.properties as Record<string, Record<string, Record<string, Record<string, unknown>>>>).root!.properties!
          .child!.description,
      ),
      /Recursive/,
    );
  });
  test("a non-object schema becomes an open object schema with a warning", () => {
    const { schema, warnings } = normalizeInputSchema({ type: "string" });
    assert.deepEqual(schema, { type: "object", properties: {} });
    assert.match(warnings[0]!, /not "object"/);
  });
});

describe("status formatting", () => {
  const NOW = 1_000_000;
  const rows: ServerRow[] = [
    {
      name: "github",
      status: "connected",
      transport: "http",
      protocol: "2026-07-28",
      source: "user",
      enabled: true,
      toolCount: 2,
      warnings: [],
      tools: [
        { name: "gh_create_issue", originalName: "create_issue" },
        { name: "search", originalName: "search" },
      ],
      vars: [{ name: "GITHUB_TOKEN", state: "set" }],
      lastActive: NOW - 30_000,
      metrics: {
        serverId: "github",
        status: "connected",
        uptimeMs: 125_000,
        downtimeMs: 4000,
        reconnections: 1,
        averageReconnectMs: 4000,
        toolCalls: 10,
        toolCallsSucceeded: 9,
        successRate: 0.9,
        notificationsDropped: 0,
      },
    },
    {
      name: "jira",
      status: "error",
      transport: "http",
      source: "project",
      enabled: true,
      toolCount: 0,
      error: "connection refused",
      detail: "retry 5/10 in 8s",
      warnings: [],
      tools: [],
      vars: [{ name: "JIRA_KEY", state: "NOT SET" }],
    },
    {
      name: "off",
      status: "disabled",
      transport: "stdio",
      source: "bundled",
      enabled: false,
      toolCount: 0,
      warnings: [],
      tools: [],
      vars: [],
    },
  ];
  test("the server list: RISE-056's table, then each server in full; variables named, never their values", () => {
    const text = formatServerList(rows, [], NOW);
    const lines = text.split("\n");
    assert.equal(lines[0], "MCP Server Status");
    assert.match(lines[2]!, /^ {2}Server +Status +Transport +Protocol +Tools +Last Active +Source +Details$/);
    assert.match(text, /^ {2}github {2}🟢 {6}http {7}2026-07-28 {6}2 {2}30s ago {6}user$/m);
    assert.match(
      text,
      /^ {2}jira {4}🔴 {6}http {7}— {15}— {2}— {12}project {2}connection refused \(retry 5\/10 in 8s\)$/m,
    );
    assert.match(
      text,
      /^ {2}off {5}⚫ {6}stdio {6}— {15}— {2}— {12}bundled {2}disabled$/m,
      "⚫ is two columns wide, like the others",
    );
    assert.match(text, /^ {2}3 servers configured \| 1 connected \| 2 tools available$/m);
    assert.match(text, /github {2}connected {2}http {2}MCP 2026-07-28 {2}2 tools {2}\(user\)/);
    assert.match(text, /up 2m, down 4s, 1 reconnection \(avg 4\.0 s\), 10 calls, 90% ok/);
    assert.match(text, /- gh_create_issue {2}\(create_issue\)/);
    assert.match(text, /- search$/m);
    assert.match(text, /JIRA_KEY NOT SET/);
    assert.match(text, /GITHUB_TOKEN set/);
  });
  test("a server under dev.watch: what it watches, how many folders, the restarts and the file behind the last", () => {
    const watched = (watch: NonNullable<ServerRow["watch"]>) => formatServerList([{ ...rows[0]!, watch }], [], NOW);
    assert.match(
      watched({ globs: ["src/**/*.ts"], restarts: 0 }),
      /^ {4}restarts when src\/\*\*\/\*\.ts change \(dev\.watch\): its folders being walked$/m,
    );
    assert.match(
      watched({ globs: ["src/**/*.ts", "lib/*.js"], folders: 4, restarts: 2, lastFile: "src/a.ts" }),
      /restarts when src\/\*\*\/\*\.ts, lib\/\*\.js change \(dev\.watch\): 4 folders watched; restarted 2 times, last for src\/a\.ts$/m,
    );
    assert.match(
      watched({ globs: ["x/*"], folders: 1, restarts: 0, failed: "ENOSPC" }),
      /1 folder watched; watching stopped: ENOSPC$/m,
    );
  });
  test("Chinese, Japanese and Korean letters take two columns: the table stays aligned", () => {
    const wide = [
      { ...rows[0]!, name: "高德地图" },
      { ...rows[1]!, error: "请设置 AMAP_MAPS_API_KEY 环境变量后重新启动服务器，然后再试一次".repeat(3) },
    ];
    const table = formatStatusTable(wide, NOW);
    const at = (line: string, mark: string) => visibleWidth(line.slice(0, line.indexOf(mark)));
    const marks = ["🟢", "🔴"].map((mark) =>
      at(
        table.find((l) => l.includes(mark))!,
        mark,
      ),
    );
    assert.equal(marks[0], marks[1], table.join("\n"));
    const details = table.find((l) => l.includes("请设置"))!;
    assert.ok(visibleWidth(details) <= 160, `cut by columns, not characters: ${visibleWidth(details)}`);
    assert.match(details, /…/);
  });
  test("the footer's summary: up/total, and attention while a server is down", () => {
    assert.deepEqual(statusSummary(rows), { text: "MCP 1/2", attention: true });
    assert.deepEqual(statusSummary([rows[0]!]), { text: "MCP 1/1", attention: false });
    assert.equal(statusSummary([rows[2]!]), undefined, "only disabled servers: nothing to show");
  });
  test("the footer counts servers still starting; one that failed and is tried again needs attention instead", () => {
    const first = { ...rows[1]!, name: "slow", status: "connecting", error: undefined, detail: "connecting" };
    const again = { ...rows[1]!, name: "flaky", status: "connecting", detail: "connecting (attempt 1/5)" };
    assert.deepEqual(statusSummary([rows[0]!, first, { ...first, name: "slower" }]), {
      text: "MCP 1/3, 2 starting",
      attention: false,
    });
    assert.deepEqual(statusSummary([rows[0]!, again]), { text: "MCP 1/2", attention: true });
    const notice = formatStartupSummary([rows[0]!, first, again], [], []) ?? "";
    assert.match(notice, /… slow: still connecting; its tools appear when it is ready/);
    assert.match(notice, /✕ flaky: connection refused; connecting \(attempt 1\/5\)/);
    const sentence = { ...again, name: "slowpoke", error: "no answer to the handshake. Raise `initTimeout` if slow." };
    const told = formatStartupSummary([sentence], [], []) ?? "";
    assert.match(
      told,
      /✕ slowpoke: no answer to the handshake\. Raise `initTimeout` if slow\. Connecting \(attempt 1\/5\)\./,
    );
  });
  test("the README's /mcp table is what the code prints for its servers", () => {
    const base = { enabled: true, warnings: [], tools: [], vars: [] };
    const readmeRows: ServerRow[] = [
      {
        ...base,
        name: "github",
        status: "connected",
        transport: "http",
        protocol: "2026-07-28",
        source: "user",
        toolCount: 12,
        lastActive: NOW - 30_000,
      },
      {
        ...base,
        name: "jira",
        status: "error",
        transport: "http",
        source: "project",
        toolCount: 0,
        error: "MCP server 'jira' at https://jira.example.com/mcp failed to connect: connection refused",
        detail: "retry 5/10 in 8s",
      },
      { ...base, name: "local-db", status: "not started", transport: "stdio", source: "project", toolCount: 5 },
    ];
    const readme = readFileSync(new URL("./README.md", import.meta.url), "utf8");
    const start = readme.indexOf("## `/mcp`\n\n```\n") + "## `/mcp`\n\n```\n".length;
    const block = readme.slice(start, readme.indexOf("```", start)).trimEnd();
    assert.equal(block, formatStatusTable(readmeRows, NOW).join("\n"));
  });
  test("the table marks the dashboard's selected row", () => {
    const table = formatStatusTable(rows, NOW, 1);
    assert.match(
      table.find((l) => l.includes("jira"))!,
      /^> jira/,
    );
    assert.match(
      table.find((l) => l.includes("github"))!,
      /^ {2}github/,
    );
  });
  test("a server removed while its details are open: the dashboard is back on the table, and ↑/↓ and Esc work there", () => {
    let shown = rows.slice(0, 2);
    let closed = false;
    const board = new McpDashboard(
      { requestRender: () => undefined },
      { rows: () => shown, logTail: () => [] },
      () => (closed = true),
    );
    board.handleInput("\x1b[B");
    board.handleInput("\r");
    shown = rows.slice(0, 1);
    assert.match(board.render(200).join("\n"), /^> github/m);
    shown = rows.slice(0, 2);
    board.handleInput("\x1b[B");
    assert.match(board.render(200).join("\n"), /^> jira/m, "↓ moves the cursor");
    board.handleInput("\x1b");
    assert.ok(closed, "Esc closes the dashboard");
  });
  test("↓ and Enter on a dashboard with no servers yet: the first server that comes is the one selected", () => {
    let shown: typeof rows = [];
    const tui = { requestRender: () => undefined, terminal: { rows: 40 } };
    const board = new McpDashboard(tui, { rows: () => shown, logTail: () => [] }, () => undefined);
    assert.match(board.render(200).join("\n"), /No MCP servers configured/);
    board.handleInput("\x1b[B");
    board.handleInput("\r");
    shown = rows.slice(0, 2);
    const screen = board.render(200);
    assert.match(screen[4]!, /^> github/, screen.join("\n"));
  });
  test("two servers in a 40-row terminal: the dashboard draws each line of the table once", () => {
    const tui = { requestRender: () => undefined, terminal: { rows: 40 } };
    const board = new McpDashboard(tui, { rows: () => rows.slice(0, 2), logTail: () => [] }, () => undefined);
    const screen = board.render(200);
    assert.equal(screen.filter((l) => l.includes("servers configured")).length, 1, screen.join("\n"));
    assert.equal(screen.filter((l) => /^─+$/.test(l)).length, 3, screen.join("\n"));
  });
  test("a remote server's details say it has no log of its own, as /mcp logs does, not that its log is empty", () => {
    const tui = { requestRender: () => undefined, terminal: { rows: 40 } };
    const board = new McpDashboard(tui, { rows: () => rows.slice(0, 2), logTail: () => [] }, () => undefined);
    board.handleInput("\x1b[B");
    board.handleInput("\r");
    const screen = board.render(200).join("\n");
    assert.match(screen, /^jira /m, screen);
    assert.doesNotMatch(screen, /log is empty/, screen);
    assert.match(screen, /remote: it has no stderr/, screen);
  });
  test("a server with 50 tools in a 24-row terminal: its details fit, its state and error first, and ↓ reaches its last tool", () => {
    const tools = Array.from({ length: 50 }, (_, i) => ({ name: `t${i}`, originalName: `t${i}` }));
    const tui = { requestRender: () => undefined, terminal: { rows: 24 } };
    const board = new McpDashboard(tui, { rows: () => [{ ...rows[1]!, tools }], logTail: () => [] }, () => undefined);
    board.handleInput("\r");
    let screen = board.render(200);
    assert.ok(screen.length <= 20, screen.join("\n"));
    assert.match(screen.join("\n"), /^jira .*\n {4}connection refused/, screen.join("\n"));
    for (let i = 0; i < 60; i++) board.handleInput("\x1b[B");
    screen = board.render(200);
    assert.ok(screen.length <= 20 && screen.some((l) => l.includes("- t49")), screen.join("\n"));
    board.handleInput("\x1b");
    assert.match(board.render(200).join("\n"), /^> jira/m, "Esc: back to the table");
  });
  test("40 servers in a 24-row terminal: the dashboard fits, and ↓ scrolls to the last server and ↑ back", () => {
    const many = Array.from({ length: 40 }, (_, i) => ({ ...rows[0]!, name: `s${i}` }));
    const tui = { requestRender: () => undefined, terminal: { rows: 24 } };
    const board = new McpDashboard(tui, { rows: () => many, logTail: () => [] }, () => undefined);
    let screen = board.render(200);
    assert.ok(screen.length <= 24, screen.join("\n"));
    for (let i = 0; i < 39; i++) board.handleInput("\x1b[B");
    screen = board.render(200);
    assert.ok(screen.length <= 24, screen.join("\n"));
    assert.ok(
      screen.some((l) => l.startsWith("> s39 ")),
      screen.join("\n"),
    );
    for (let i = 0; i < 39; i++) board.handleInput("\x1b[A");
    screen = board.render(200);
    assert.ok(screen.length <= 24 && screen.some((l) => l.startsWith("> s0 ")), screen.join("\n"));
  });
  test("a session running outside the directory the project config came from is told", () => {
    assert.equal(projectRootWarning("/work/p", "/work/p/"), undefined);
    assert.match(
      projectRootWarning("/work/p", "/elsewhere")!,
      /read from \/work\/p, but this session runs in \/elsewhere/,
    );
  });
  test("no servers: how to add one", () => {
    assert.match(formatServerList([], []), /No MCP servers configured/);
  });
  test("the startup summary lists failures and problems, or nothing when all is well", () => {
    const summary = formatStartupSummary(
      rows,
      [{ level: "error", source: project, server: "x", message: "bad" }],
      ["name clash"],
    );
    assert.match(summary!, /1 of 2 servers connected, 2 tools/);
    assert.match(summary!, /✕ jira: connection refused \(retry 5\/10 in 8s\)/);
    assert.match(summary!, /server 'x' in project config \/p\/.pi\/mcp.json: bad/);
    assert.match(summary!, /name clash/);
    assert.equal(formatStartupSummary([rows[0]!], [], []), undefined);
  });
  test("a server held for trust whose name has a space is named quoted in the /mcp trust it is told to run", () => {
    const held = { ...rows[0]!, name: "my db", status: "not trusted", untrustedDefinition: ["runs: x"] };
    assert.match(formatStartupSummary([held], [], []) ?? "", /\/mcp trust "my db" starts it/);
    assert.match(formatServerList([held], [], NOW), /not trusted, so not started: \/mcp trust "my db" starts it/);
  });
  test("the same warning of several servers is one line naming them", () => {
    const offline = "offline: npx started it from its cache";
    const warned = ["a", "b"].map((name) => ({ ...rows[0]!, name, warnings: [offline] }));
    const summary = formatStartupSummary([...warned, { ...rows[0]!, name: "c", warnings: ["other"] }], [], []) ?? "";
    assert.deepEqual(
      summary.split("\n").filter((line) => line.startsWith("  !")),
      [`  ! a, b: ${offline}`, "  ! c: other"],
    );
  });
});

describe("serverLogFileName", () => {
  test("safe names are kept; others are made safe and told apart by a hash", () => {
    assert.equal(serverLogFileName("github"), "github.log");
    assert.equal(serverLogFileName("my-db_2.0"), "my-db_2.0.log");
    const slash = serverLogFileName("a/b");
    const colon = serverLogFileName("a:b");
    assert.match(slash, /^a_b-[0-9a-f]{8}\.log$/);
    assert.notEqual(slash, colon);
    assert.match(serverLogFileName(".."), /^_-[0-9a-f]{8}\.log$/);
    assert.doesNotMatch(serverLogFileName("x".repeat(300)), /x{81}/);
  });
  test("names told apart only by case, or one that looks like another's hashed name, get files of their own", () => {
    const names = ["GitHub", "github", "a/b"];
    names.push(serverLogFileName("a/b").replace(/\.log$/, ""));
    const files = names.map((name) => serverLogFileName(name).toLowerCase());
    assert.equal(new Set(files).size, names.length, files.join(" "));
  });
  test("a name Windows opens a device for (nul, CON, com1.db) is no log file's name", () => {
    for (const name of ["nul", "CON", "com1.db", "aux"])
      assert.doesNotMatch(serverLogFileName(name), /^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/i, name);
  });
});

describe("health model", () => {
  test("backoff: min(2^attempt * initial, max), as RISE-056 and RISE-057 give it", () => {
    assert.deepEqual(
      backoffSchedule(DEFAULT_REMOTE_RETRY),
      [1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000, 60000],
    );
    assert.deepEqual(backoffSchedule(DEFAULT_LOCAL_RETRY), [1000, 2000, 4000, 8000, 16000]);
    assert.equal(backoffDelay(40, DEFAULT_LOCAL_RETRY), 30000);
    assert.equal(backoffDelay(5000, DEFAULT_REMOTE_RETRY), 60000);
  });
  test("transitions: connecting → connected, drop, failed retries, recovery; metrics add up", () => {
    type S = ConnectionState<string>;
    let s: S = { kind: "idle" };
    const step = (event: ConnectionEvent<string>) => (s = transition(s, event));
    const [first, second, third] = [Symbol("first"), Symbol("second"), Symbol("third")];
    const h = new HealthTracker("jira", () => statusOf(s));
    assert.equal(statusOf(s), "not started");
    step({ type: "attempt", attempt: 0, id: first });
    assert.equal(statusOf(s), "connecting");
    assert.equal(stateDetail(s, 10, 0), "connecting");
    step({ type: "connected", id: first, session: "one", at: 1000, durationMs: 50, toolCount: 3 });
    assert.deepEqual(s, { kind: "live", session: "one", since: 1000 });
    assert.equal(h.connected(1000), undefined, "a first connect is not a recovery");
    h.call(true);
    h.call(false);
    assert.equal(
      transition(s, { type: "dropped", session: "stale", reason: "x", retry: true }),
      s,
      "a stale session's drop changes nothing",
    );
    step({ type: "dropped", session: "one", reason: "the connection closed", retry: true });
    h.disconnected(5000);
    assert.equal(statusOf(s), "disconnected");
    assert.equal(errorOf(s), "the connection closed");
    step({ type: "scheduled", attempt: 1, at: 6000 });
    assert.equal(stateDetail(s, 10, 5000), "retry 1/10 in 1s");
    step({ type: "attempt", attempt: 1, id: second });
    assert.equal(stateDetail(s, 10, 5000), "connecting (attempt 1/10)");
    assert.equal(errorOf(s), "the connection closed", "the last error stays while it tries again");
    step({
      type: "failed",
      id: second,
      error: "connection refused",
      kind: "transport",
      durationMs: 1,
      signIn: false,
      retryIn: 2000,
    });
    assert.equal(statusOf(s), "error");
    assert.equal(inSchedule(s), true);
    step({ type: "scheduled", attempt: 2, at: 8000 });
    step({ type: "attempt", attempt: 2, id: third });
    step({ type: "connected", id: third, session: "two", at: 9000, durationMs: 20, toolCount: 4 });
    assert.equal(h.connected(9000), 4000, "downtime since the drop");
    assert.equal(errorOf(s), undefined);
    assert.equal(statusOf(s), "connected");
    const m = h.metrics(10_000);
    assert.equal(m.status, "connected");
    assert.equal(m.uptimeMs, 4000 + 1000);
    assert.equal(m.downtimeMs, 4000);
    assert.equal(m.reconnections, 1);
    assert.equal(m.averageReconnectMs, 4000);
    assert.equal(m.toolCalls, 2);
    assert.equal(m.successRate, 0.5);
    step({ type: "closed" });
    h.closed(12_000);
    assert.equal(statusOf(s), "disconnected");
    assert.equal(transition(s, { type: "attempt", attempt: 0, id: Symbol() }), s, "nothing starts once closed");
    assert.equal(h.metrics(99_000).uptimeMs, 4000 + 3000, "nothing counts after shutdown");
    assert.equal(
      statusOf(transition({ kind: "idle" }, { type: "closed" })),
      "not started",
      "a lazy server that never ran stays 'not started'",
    );
    assert.equal(statusOf(transition(s, { type: "closed", disabled: true })), "disabled", "/mcp disable after a close");
  });
  test("giving up, and the spec's message", () => {
    const retrying: ConnectionState = {
      kind: "retrying",
      attempt: 10,
      error: "connection refused",
      dropped: false,
      wasUp: true,
    };
    const gaveUp = transition(retrying, {
      type: "gaveUp",
      reason: "connection refused",
      attempts: 10,
      exhausted: true,
    });
    assert.equal(statusOf(gaveUp), "disconnected");
    assert.equal(gaveUp.kind, "gaveUp");
    assert.equal(stateDetail(gaveUp, 10, 0), "gave up after 10 attempts");
    assert.equal(errorOf(gaveUp), "connection refused");
    const useless = transition(retrying, { type: "gaveUp", attempts: 1, exhausted: false });
    assert.equal(statusOf(useless), "error", "retrying could not help: not 'disconnected'");
    assert.equal(stateDetail(useless, 10, 0), "not retried", "a failure no restart fixes, met at a retry");
    const one = transition(retrying, { type: "gaveUp", attempts: 1, exhausted: true });
    assert.equal(stateDetail(one, 1, 0), "gave up after 1 attempt");
    const once = transition(
      { kind: "live", session: 1, since: 0 },
      { type: "dropped", session: 1, reason: "gone", retry: false },
    );
    assert.deepEqual([statusOf(once), stateDetail(once, 0, 0)], ["disconnected", "not retried"], "reconnect: false");
    assert.equal(
      gaveUpMessage("jira", 10, "connection refused", false),
      "MCP server 'jira' is disconnected after 10 retry attempts. Last error: connection refused.",
    );
    assert.match(gaveUpMessage("db", 5, "exited with code 1", true), /'db' .*5 restart/);
    // Retrying off (restartOnCrash: false, reconnect: false): no count of attempts that were never made.
    assert.equal(
      gaveUpMessage("db", 0, "exited with code 1", true),
      "MCP server 'db' was not restarted. Last error: exited with code 1.",
    );
    assert.match(gaveUpMessage("jira", 0, "gone", false), /'jira' is disconnected and was not retried\. /);
    assert.match(gaveUpMessage("jira", 1, "gone", false), /after 1 retry attempt\. /);
  });
  test("a sign-in nobody could do is waited for, not retried; /mcp reconnect and logout stop on purpose", () => {
    const id = Symbol("attempt");
    const connecting: ConnectionState = { kind: "connecting", attempt: 0, id, wasUp: false };
    const signInFailed = {
      type: "failed",
      id,
      error: "sign in",
      kind: "auth",
      durationMs: 1,
      signIn: true,
      retryIn: null,
    } as const;
    const waiting = transition(connecting, signInFailed);
    assert.deepEqual(
      [statusOf(waiting), stateDetail(waiting, 3, 0), inSchedule(waiting)],
      ["needs sign-in", "needs sign-in", false],
    );
    const stillWaiting = transition(waiting, { type: "gaveUp", attempts: 0, exhausted: false });
    assert.equal(stillWaiting.kind, "needsSignIn", "giving up leaves it waiting for the sign-in");
    assert.notEqual(stillWaiting, waiting, "… and is still recorded");
    const stopped = transition(
      { kind: "live", session: 1, since: 0 },
      { type: "stopped", reason: "reconnect requested" },
    );
    assert.deepEqual(stopped, { kind: "stopped", reason: "reconnect requested", wasUp: true });
    assert.equal(statusOf(stopped), "disconnected");
    const again = transition(stopped, { type: "attempt", attempt: 0, id });
    assert.deepEqual(
      [again.kind, inSchedule(again), "wasUp" in again && again.wasUp],
      ["connecting", false, true],
      "calls wait for a server that was up",
    );
    const out = transition(stopped, { type: "signedOut", message: "Signed out" });
    assert.deepEqual([statusOf(out), errorOf(out), stateDetail(out, 3, 0)], ["error", "Signed out", "not retried"]);
    assert.equal(transition({ kind: "idle" }, { type: "stopped", reason: "x" }).kind, "idle", "nothing to stop");
    const connected = { type: "connected", id, session: 1, at: 0, durationMs: 0, toolCount: 0 } as const;
    assert.equal(transition({ kind: "idle" }, connected).kind, "idle", "only an attempt connects");
  });
  test("one attempt at a time: a superseded attempt keeps nothing; /mcp disable shows disabled at once", () => {
    const [old, fresh] = [Symbol("old"), Symbol("fresh")];
    const first: ConnectionState<string> = transition({ kind: "idle" }, { type: "attempt", attempt: 0, id: old });
    assert.equal(transition(first, { type: "attempt", attempt: 0, id: fresh }), first, "none beside the one under way");
    const stopped = transition(first, { type: "stopped", reason: "reconnect requested" });
    const again = transition(stopped, { type: "attempt", attempt: 0, id: fresh });
    const late = { type: "connected", id: old, session: "old", at: 0, durationMs: 0, toolCount: 0 } as const;
    assert.equal(transition(again, late), again, "the stopped attempt's session is not kept");
    const failed = {
      type: "failed",
      id: old,
      error: "x",
      kind: "transport",
      durationMs: 0,
      signIn: false,
      retryIn: 1000,
    } as const;
    assert.equal(transition(again, failed), again, "nor does its failure count");
    assert.equal(transition(again, { ...late, id: fresh }).kind, "live");
    const retrying: ConnectionState<string> = { kind: "retrying", attempt: 2, error: "x", dropped: true, wasUp: true };
    for (const state of [first, retrying, stopped]) {
      const disabled = transition(state, { type: "closed", disabled: true });
      const after = transition(disabled, { ...late, id: old });
      assert.deepEqual([statusOf(disabled), after], ["disabled", disabled], state.kind);
    }
  });
});

describe("platformCommand", () => {
  test("Windows runs npx and other shims through cmd /c; executables and other platforms run as they are", () => {
    assert.deepEqual(platformCommand("npx", ["-y", "pkg"], "win32"), {
      command: "cmd.exe",
      args: ["/d", "/s", "/c", "npx", "-y", "pkg"],
    });
    assert.deepEqual(platformCommand("C:\\tools\\run.CMD", [], "win32"), {
      command: "cmd.exe",
      args: ["/d", "/s", "/c", "C:\\tools\\run.CMD"],
    });
    assert.deepEqual(platformCommand("node.exe", ["s.js"], "win32"), { command: "node.exe", args: ["s.js"] });
    assert.deepEqual(platformCommand("cmd", ["/c", "x"], "win32"), { command: "cmd", args: ["/c", "x"] });
    assert.deepEqual(platformCommand("npx", ["-y", "pkg"], "linux"), { command: "npx", args: ["-y", "pkg"] });
    assert.deepEqual(platformCommand("npx", [], "darwin"), { command: "npx", args: [] });
  });
});

describe("bad input: the pure rules", () => {
  test("a name every JavaScript object has (constructor, toString) is no setting, variable, option or MIME type", () => {
    for (const name of ["constructor", "toString", "__proto__"]) {
      assert.match(invalid({ command: "x", exposure: name }), /`exposure` must be one of/);
      assert.match(invalid({ command: "x", toolExposure: { t: name } }), /must be one of/);
      assert.deepEqual(substituteVars(`\${${name}}`, { PATH: "/bin" }).missing, [name]);
      assert.deepEqual(parseAddLine([`--${name}`, "x", "--", "node"]), { error: `Unknown option --${name}.` });
      // A resource's MIME type is what its server says: one by such a name is only unknown.
      assert.equal(resourceFileName("file:///a", name), "a.bin");
    }
  });
  test("quoteValue quotes as JSON, escapes what JSON leaves raw, and cuts a long value to 200 characters with a count", () => {
    assert.equal(quoteValue("abc"), '"abc"');
    assert.equal(quoteValue(12), "12");
    assert.equal(quoteValue("\u001b[2J"), '"\\u001b[2J"');
    assert.equal(quoteValue("a\u202eb\u009bc"), '"a\\u202eb\\u009bc"');
    const long = quoteValue("x".repeat(5000));
    assert.equal(long, `"${"x".repeat(200)}…" (4800 more characters)`);
    assert.match(quoteValue({ a: "y".repeat(1000) }), /^\{"a":"y+… \(\d+ more characters\)$/);
    assert.ok(quoteValue({ a: "y".repeat(1000) }).length <= 200);
  });
  test("shown: harmless in its form, never over its bound, and cut with a count of what was left out", () => {
    assert.equal(shown("abcdef", 30), "abcdef");
    assert.equal(shown("x".repeat(100), 30), `${"x".repeat(8)}… (92 more characters)`);
    assert.equal(shown("x".repeat(100), 30, "prompt"), `${"x".repeat(29)}…`);
    assert.equal(shown("a\u202e\u009b\x1b[2Jb\nc", 30), "ab\nc");
    assert.equal(shown("a\nb\tc", 30, "line"), "a b c");
    assert.equal(shown("a\u202eb", 30, "visible"), "a\\u202eb");
    const hostile = "\u202e\u2066\u009b\x1b[31m".repeat(200_000);
    for (const form of ["text", "line", "prompt", "visible"] as const) {
      for (const max of [40, 300, 4000]) {
        const out = shown(`${hostile}tail`, max, form);
        assert.ok(out.length <= max, `${form} ${max}: ${out.length}`);
        assert.ok(!/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/.test(out), `${form} ${max}`);
      }
    }
    // Not half a surrogate pair at the cut.
    assert.ok(!/[\ud800-\udbff]…/.test(shown("😀".repeat(100), 31)));
  });
  test("closestMatch guesses a near key, case aside, and nothing for a far one", () => {
    const keys = ["mcpServers", "servers", "mcp", "approval"];
    assert.equal(editDistance("kitten", "sitting"), 3);
    assert.equal(closestMatch("mcpservers", keys), "mcpServers");
    assert.equal(closestMatch("mcpServer", keys), "mcpServers");
    assert.equal(closestMatch("aproval", keys), "approval");
    assert.equal(closestMatch("zzz", keys), undefined);
    assert.equal(closestMatch("x".repeat(10_000), keys), undefined);
  });
  test("server names: control characters, outer spaces, reserved words, over 100 characters are refused", () => {
    for (const ok of ["fs", "my server", "名前", "a/b", "🙂"]) assert.equal(serverNameProblem(ok), undefined, ok);
    for (const bad of [
      "",
      " ",
      "a\nb",
      "a\u001bb",
      "a\u0085",
      " a",
      "a ",
      "__proto__",
      "constructor",
      "prototype",
      "x".repeat(101),
    ]) {
      assert.ok(serverNameProblem(bad), JSON.stringify(bad));
    }
  });
  test("the commands a message suggests quote a name with a space, so they name one server", () => {
    const config = validateServerEntry(
      "my db",
      { command: "x" },
      { scope: "project", path: "/p/.pi/mcp.json" },
    ).config!;
    assert.match(untrustedError(config).message, /Run \/mcp trust "my db" to trust .* \/mcp trust "my db" --sandboxed/);
  });
  test("a remote server is not offered a sandbox, which `--sandboxed` would not give it (it would be trusted fully)", () => {
    const remote = validateServerEntry("api", { url: "https://mcp.example.com/mcp" }, project).config!;
    assert.match(
      untrustedError(remote).message,
      /is not trusted, so it was not started\. Run \/mcp trust api to trust/,
    );
    assert.doesNotMatch(untrustedError(remote).message, /sandbox/);
  });
  test("commandArgument quotes a name /mcp would split, and splitCommandLine reads it back", () => {
    for (const name of ["fs", "my server", 'say "hi"', "back\\slash", "it's"]) {
      const typed = `test ${commandArgument(name)}`;
      assert.deepEqual(splitCommandLine(typed), ["test", name], typed);
    }
    assert.equal(commandArgument("fs"), "fs");
  });
  test("findReservedKey finds __proto__, constructor or prototype at any depth, without recursion", () => {
    assert.equal(findReservedKey(JSON.parse('{"a": [{"b": {"__proto__": 1}}]}')), "a[0].b.__proto__");
    assert.equal(findReservedKey({ env: { PATH: "x" } }), undefined);
    let deep: unknown = { constructor: 1 };
    for (let i = 0; i < 100_000; i++) deep = [deep];
    assert.match(findReservedKey(deep)!, /constructor$/);
  });
  test("parseConfigText refuses nesting past the limit before parsing, brackets in strings and comments aside", () => {
    const nested = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
    assert.equal(parseConfigText(nested(MAX_NESTING)).error, undefined);
    assert.match(
      parseConfigText(nested(MAX_NESTING + 1)).error!,
      /nest more than 64 levels deep \(at line 1, column 65\)/,
    );
    assert.equal(parseConfigText(`{"a": "${"{".repeat(500)}" /* ${"[".repeat(500)} */}`).error, undefined);
    const value = parseConfigText('{"__proto__": {"command": "x"}}').value as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(value), null);
    assert.deepEqual(Object.keys(value), ["__proto__"]);
  });
});

describe("protocol revisions", () => {
  test('`protocolVersion`: absent or "auto", or a revision by name; anything else is an error naming the choices', () => {
    const errors: string[] = [];
    assert.equal(protocolSetting(undefined, errors), "auto");
    assert.equal(protocolSetting("auto", errors), "auto");
    assert.equal(protocolSetting("2026-07-28", errors), "2026-07-28");
    assert.equal(protocolSetting("2024-11-05", errors), "2024-11-05");
    assert.deepEqual(errors, []);
    assert.equal(protocolSetting("2026-01-01", errors), "auto");
    assert.match(
      errors[0]!,
      /`protocolVersion` must be "auto" or one of "2026-07-28", "2025-11-25", .* \(got "2026-01-01"\)/,
    );
    const entry = validateEntry("s", { command: "x", protocolVersion: 7 }, { scope: "user", path: "/u/mcp.json" });
    assert.match(entry.errors.join(), /protocolVersion/);
  });
  test("auto probes (a local server once it has answered a ping; a remote one for half the time left), then starts from what worked; a revision by name is asked for as such", () => {
    assert.deepEqual(negotiationFor("auto", undefined, false, 15_000), {
      versionNegotiation: { mode: "auto", probe: { timeoutMs: 7500 } },
      awaitStart: false,
    });
    assert.deepEqual(negotiationFor("auto", undefined, true, 60_000), {
      versionNegotiation: { mode: "auto", probe: { timeoutMs: 3000 } },
      awaitStart: true,
    });
    assert.deepEqual(negotiationFor("auto", "2026-07-28", false, 15_000), {
      versionNegotiation: { mode: { pin: "2026-07-28" } },
      awaitStart: false,
    });
    assert.deepEqual(negotiationFor("auto", "2025-06-18", false, 15_000), {
      versionNegotiation: { mode: "auto", probe: { timeoutMs: 7500 } },
      prior: { kind: "legacy" },
      awaitStart: false,
    });
    assert.deepEqual(negotiationFor("auto", "legacy", true, 60_000), {
      versionNegotiation: { mode: "auto", probe: { timeoutMs: 3000 } },
      prior: { kind: "legacy" },
      awaitStart: false,
    });
    assert.deepEqual(negotiationFor("2026-07-28", "2025-11-25", false, 15_000), {
      versionNegotiation: { mode: { pin: "2026-07-28" } },
      awaitStart: false,
    });
    assert.deepEqual(negotiationFor("2025-06-18", "2026-07-28", false, 15_000), {
      versionNegotiation: { mode: "legacy" },
      supportedProtocolVersions: ["2025-06-18", "2025-03-26", "2024-11-05"],
      awaitStart: false,
    });
  });
  test("a remote server's probe is inconclusive when it got no usable answer; an outage, a refused credential or the SDK's verdict is an answer", () => {
    const failed = (message: string, cause?: unknown) =>
      new SdkError(SdkErrorCode.EraNegotiationFailed, message, undefined, cause === undefined ? undefined : { cause });
    assert.equal(
      probeInconclusive(new SdkError(SdkErrorCode.RequestTimeout, "Version negotiation probe timed out after 7500ms")),
      true,
    );
    assert.equal(probeInconclusive(new SdkError(SdkErrorCode.RequestTimeout, "Request timed out")), false);
    assert.equal(
      probeInconclusive(
        failed(
          "Version negotiation probe failed: the server answered with an unusable reply",
          new SyntaxError("Unexpected token"),
        ),
      ),
      true,
    );
    assert.equal(
      probeInconclusive(
        failed("Version negotiation probe failed", new Error("Connection closed during the version negotiation probe")),
      ),
      true,
    );
    assert.equal(
      probeInconclusive(
        new SdkHttpError(SdkErrorCode.EraNegotiationFailed, "the server answered the probe with HTTP 500", {
          status: 500,
          statusText: "",
          text: "",
        }),
      ),
      true,
    );
    assert.equal(
      probeInconclusive(
        new SdkHttpError(SdkErrorCode.ClientHttpAuthentication, "HTTP 401", { status: 401, statusText: "", text: "" }),
      ),
      false,
    );
    const refused = Object.assign(new TypeError("fetch failed"), {
      cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
    });
    assert.equal(probeInconclusive(failed("Version negotiation probe failed: fetch failed", refused)), false);
    assert.equal(probeInconclusive(failed("the server did not offer pinned protocol version 2026-07-28")), false);
  });
  test("a connection that closed during the revision probe is told apart from other negotiation failures", () => {
    assert.equal(
      closedDuringProbe(
        new SdkError(
          SdkErrorCode.EraNegotiationFailed,
          "Version negotiation probe failed: Connection closed during the probe",
        ),
      ),
      true,
    );
    assert.equal(
      closedDuringProbe(new SdkError(SdkErrorCode.EraNegotiationFailed, "the server does not offer 2026-07-28")),
      false,
    );
    assert.equal(closedDuringProbe(new SdkError(SdkErrorCode.ConnectionClosed, "Connection closed")), false);
  });
});

describe("nesting guard", () => {
  test("values nested past the bound are cut to {}; shallower ones are returned as they are, the same objects", () => {
    const shallow = { a: [1, { b: "c" }] };
    assert.equal(cutDeepNesting(shallow, 3), shallow);
    let deep: unknown = { leaf: true };
    for (let i = 0; i < 10_000; i++) deep = { x: [deep] };
    const cut = cutDeepNesting({ tools: [{ name: "deep", inputSchema: deep }, { name: "ok" }] }, 256);
    // Levels down to the schema: the message object, `tools`, the tool; then `{x: [...]}` pairs down to the cut.
    let depth = 3;
    let node: unknown = cut.tools[0]!.inputSchema;
    while (node !== null && typeof node === "object" && Object.keys(node).length > 0) {
      node = Array.isArray(node) ? node[0] : (node as { x: unknown }).x;
      depth++;
    }
    assert.deepEqual(node, {});
    assert.equal(depth, 256, "cut at the bound");
    assert.deepEqual(cut.tools[1], { name: "ok" });
  });
});

describe("sandbox settings and rules", () => {
  const ctx = {
    home: "/home/ann",
    agentDir: "/home/ann/.pi/agent",
    cwd: "/work/repo",
    projectRoot: "/work/repo",
    tempDir: "/tmp/mcp-sandbox-x",
    command: "node",
    otherSecrets: [],
  };
  test("true, false and rules are read; a typo or a URL in a host list is an error, not a silent gap", () => {
    const errors: string[] = [];
    assert.equal(readSandboxSetting(true, "sandbox", errors), true);
    assert.equal(readSandboxSetting(false, "sandbox", errors), false);
    assert.equal(readSandboxSetting(null, "sandbox", errors), undefined, "null is absent (the file's default applies)");
    const nulls = { filesystem: { denyRead: null }, network: null };
    assert.deepEqual(readSandboxSetting(nulls, "sandbox", errors), readSandboxSetting({}, "sandbox", errors));
    const rules = readSandboxSetting(
      { filesystem: { allowWrite: ["~/out"] }, network: { allowedDomains: ["api.example.com", "*.example.org:443"] } },
      "sandbox",
      errors,
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(rules, {
      filesystem: { allowWrite: ["~/out"], denyRead: [], denyWrite: [] },
      network: { allowedDomains: ["api.example.com", "*.example.org:443"], deniedDomains: [] },
    });
    const bad: string[] = [];
    assert.equal(readSandboxSetting({ filesystem: { denyread: ["x"] } }, "sandbox", bad), undefined);
    assert.equal(
      readSandboxSetting({ network: { allowedDomains: ["https://api.example.com/v1"] } }, "sandbox", bad),
      undefined,
    );
    assert.equal(readSandboxSetting("yes", "sandbox", bad), undefined);
    assert.match(bad[0]!, /`sandbox.filesystem.denyread` is not a sandbox setting/);
    assert.match(bad[1]!, /is not a host name/);
    assert.match(bad[2]!, /must be true, false, or an object/);
    // A name every object has is no setting either: `constructor` was taken for one and dropped unreported.
    const inherited: string[] = [];
    assert.equal(readSandboxSetting({ constructor: {}, toString: true }, "sandbox", inherited), undefined);
    assert.match(inherited.join("\n"), /`sandbox.constructor` is not a sandbox setting[^]*`sandbox.toString`/);
    // What the sandbox library refuses to allow at the start is refused here, naming it, before anything starts.
    const refused: string[] = [];
    const hosts = ["intranet", "*.com", "api.example.com:0443", "api.example.com:70000"];
    assert.equal(readSandboxSetting({ network: { allowedDomains: hosts } }, "sandbox", refused), undefined);
    for (const host of hosts) assert.match(refused[0]!, new RegExp(`"${host.replace(/[*.]/g, "\\$&")}"`), refused[0]);
    const ok = ["localhost:8080", "[::1]:443", "10.0.0.1", "*.example.com:65535"];
    assert.notEqual(
      readSandboxSetting({ network: { allowedDomains: ok, deniedDomains: ["intranet"] } }, "s", refused),
      undefined,
    );
    assert.equal(refused.length, 1, refused.join("\n"));
    // A variable is not expanded in a sandbox path: `${HOME}/private` would deny `<cwd>/${HOME}/private`, not the files.
    const unexpanded: string[] = [];
    const paths = { denyRead: ["${HOME}/private"], allowWrite: ["${PROJECT_ROOT}/out"] };
    assert.equal(readSandboxSetting({ filesystem: paths }, "sandbox", unexpanded), undefined);
    assert.match(
      unexpanded[0]!,
      /`sandbox\.filesystem\.allowWrite`: "\$\{PROJECT_ROOT\}\/out" .*write ~\//,
      unexpanded[0],
    );
    assert.match(unexpanded[1]!, /`sandbox\.filesystem\.denyRead`: "\$\{HOME\}\/private"/, unexpanded[1]);
    // Nor is one without braces, as a shell would write it: `$HOME/private` would leave ~/private readable.
    const bare: string[] = [];
    assert.equal(readSandboxSetting({ filesystem: { denyRead: ["$HOME/private"] } }, "sandbox", bare), undefined);
    assert.match(bare[0] ?? "", /`sandbox\.filesystem\.denyRead`: "\$HOME\/private" holds a variable/, bare[0]);
  });
  test("the defaults: secrets unreadable and unwritable, writes in cwd and the temp dir, no network", () => {
    const policy = sandboxPolicy(true, ctx);
    // git's credential store keeps its tokens in ~/.git-credentials or, where that file is absent, ~/.config/git/credentials.
    const gitStore = "/home/ann/.config/git/credentials";
    for (const secret of [
      "/home/ann/.ssh",
      "/home/ann/.aws",
      "/home/ann/.npmrc",
      "/home/ann/.pi/agent/auth.json",
      gitStore,
    ]) {
      assert.ok(policy.filesystem.denyRead.includes(secret), secret);
      assert.ok(policy.filesystem.denyWrite.includes(secret), secret);
    }
    assert.deepEqual(policy.filesystem.allowWrite, ["/work/repo", "/tmp/mcp-sandbox-x"]);
    for (const runs of ["/work/repo/.pi", "/work/repo/.git/hooks", "/work/repo/.envrc"])
      assert.ok(policy.filesystem.denyWrite.includes(runs), `${runs}: another program would run what it holds`);
    assert.deepEqual(policy.network.allowedDomains, []);
    assert.equal(policy.registryOpen, false);
  });
  test("a package launcher gets its cache and registry unless the rules say no; rules add paths and hosts", () => {
    const npx = sandboxPolicy(true, { ...ctx, command: "/usr/bin/npx" });
    assert.ok(npx.filesystem.allowWrite.includes("/home/ann/.npm"));
    assert.ok(npx.network.allowedDomains.includes("registry.npmjs.org"));
    const moved = sandboxPolicy(true, { ...ctx, command: "npx", env: { npm_config_cache: "/var/cache/npm" } });
    assert.ok(moved.filesystem.allowWrite.includes("/var/cache/npm"), "a cache the server's env moves is its cache");
    // As one moved on npx's command line, before the package (after it, the flag is the server's own).
    const flagged = sandboxPolicy(true, { ...ctx, command: "npx", args: ["-y", "--cache", "/var/cache/npm", "pkg"] });
    assert.ok(flagged.caches.includes("/var/cache/npm") && flagged.filesystem.allowWrite.includes("/var/cache/npm"));
    const serverOwn = sandboxPolicy(true, { ...ctx, command: "npx", args: ["-y", "pkg", "--cache", "/srv"] });
    assert.ok(!serverOwn.filesystem.allowWrite.includes("/srv"));
    // A HOME the server's env sets is where the launcher keeps its cache (~/.npm is $HOME/.npm).
    const homed = sandboxPolicy(true, { ...ctx, command: "npx", env: { HOME: "/srv/bot" } });
    assert.ok(homed.filesystem.allowWrite.includes("/srv/bot/.npm"), `${homed.filesystem.allowWrite}`);
    const uvx = sandboxPolicy(true, { ...ctx, command: "uvx" });
    assert.ok(uvx.network.allowedDomains.includes("pypi.org"));
    // The registry pi's environment points the launcher at is its registry; one a server's own env names is not opened.
    const company = {
      NPM_CONFIG_REGISTRY: "https://npm.corp.example:4873/repo/",
      UV_INDEX_URL: "https://pypi.corp.example/simple",
    };
    const privateNpx = sandboxPolicy(true, { ...ctx, command: "npx", piEnv: company });
    assert.ok(
      privateNpx.network.allowedDomains.includes("npm.corp.example:4873"),
      `${privateNpx.network.allowedDomains}`,
    );
    assert.ok(!privateNpx.network.allowedDomains.includes("pypi.corp.example"));
    const privateUvx = sandboxPolicy(true, { ...ctx, command: "uvx", piEnv: company });
    assert.ok(privateUvx.network.allowedDomains.includes("pypi.corp.example"), `${privateUvx.network.allowedDomains}`);
    const single = sandboxPolicy(true, {
      ...ctx,
      command: "npx",
      piEnv: { npm_config_registry: "http://nexus:8081/" },
    });
    assert.deepEqual(
      single.network.allowedDomains,
      ["registry.npmjs.org", "registry.yarnpkg.com"],
      "one the sandbox refuses",
    );
    const own = sandboxPolicy(true, { ...ctx, command: "npx", env: { npm_config_registry: "https://evil.example/" } });
    assert.ok(!own.network.allowedDomains.includes("evil.example"), "a server's own env opens no host");
    const closed = sandboxPolicy(
      {
        filesystem: { allowWrite: ["out", "~/notes"], denyRead: ["secrets"], denyWrite: [] },
        network: { allowedDomains: ["api.example.com"], deniedDomains: [], allowPackageRegistry: false },
      },
      { ...ctx, command: "npx" },
    );
    assert.deepEqual(closed.network.allowedDomains, ["api.example.com"]);
    assert.ok(closed.filesystem.allowWrite.includes("/work/repo/out"));
    assert.ok(closed.filesystem.allowWrite.includes("/home/ann/notes"));
    assert.ok(closed.filesystem.denyRead.includes("/work/repo/secrets"));
  });
  test("the effective setting: own, else the user's default; a project's false yields to it; trust 'sandboxed' adds it", () => {
    const local = (scope: string, sandbox?: boolean) => ({ transport: "stdio", source: { scope }, sandbox });
    assert.equal(effectiveSandbox(local("user"), undefined, false), false);
    assert.equal(effectiveSandbox(local("user"), true, false), true);
    assert.equal(effectiveSandbox(local("user", false), true, false), false);
    assert.equal(effectiveSandbox(local("project", false), true, false), true);
    assert.equal(effectiveSandbox(local("project", false), undefined, true), true);
    assert.equal(effectiveSandbox({ transport: "http", source: { scope: "user" } }, true, true), false);
    const fromPackage = (installed: string) => ({
      ...local("package", false),
      source: { scope: "package", package: { installed } },
    });
    assert.equal(
      effectiveSandbox(fromPackage("project"), true, false),
      true,
      "a project-installed package's false yields",
    );
    assert.equal(
      effectiveSandbox(fromPackage("user"), true, false),
      false,
      "a user-installed package's false is the user's",
    );
  });
  test("a project file's top-level default goes into its own servers; the user's is the session default", () => {
    const layered = layerConfigs([
      file(user, { sandbox: true, mcpServers: { u: { command: "u" } } }),
      file(project, {
        sandbox: { network: { allowedDomains: ["api.example.com"] } },
        mcpServers: { p: { command: "p" } },
      }),
    ]);
    assert.equal(layered.sandbox, true);
    assert.equal(layered.servers.find((s) => s.name === "u")!.sandbox, undefined);
    assert.deepEqual(layered.servers.find((s) => s.name === "p")!.sandbox, {
      filesystem: { allowWrite: [], denyRead: [], denyWrite: [] },
      network: { allowedDomains: ["api.example.com"], deniedDomains: [] },
    });
    const broken = layerConfigs([file(user, { sandbox: { filesystem: "all" }, mcpServers: {} })]);
    assert.equal(broken.sandbox, true, "a top-level sandbox that cannot be read sandboxes with the defaults");
    assert.match(broken.problems[0]!.message, /run sandboxed with the defaults until it is fixed/);
    const remote = layerConfigs([file(user, { mcpServers: { r: { url: "https://example.com/mcp", sandbox: true } } })]);
    assert.match(remote.problems[0]!.message, /`sandbox` applies to local servers only/);
  });
  test("other servers' config files, which hold their keys and headers as written (a --mcp-config file): denied", () => {
    const headers = { Authorization: "Bearer sk-inline" };
    const { servers } = layerConfigs([
      file(flag, { mcpServers: { other: { url: "https://api.example.com/mcp", headers } } }),
      file(user, { mcpServers: { self: { command: "x" } } }),
    ]);
    assert.deepEqual(otherServersSecrets(servers, "self", {}), ["/p/demo.json"]);
  });
  test("another server's OAuth key file written with a variable (${KEY_DIR}/sa.pem, ${HOME}/...) is denied where it is", () => {
    const other = (privateKeyFile: string) => ({
      url: "https://api.example.com/mcp",
      auth: { grantType: "client_credentials", clientId: "c", privateKeyFile },
    });
    const { servers } = layerConfigs([
      file(user, {
        mcpServers: {
          ...{ self: { command: "x" }, a: other("${KEY_DIR}/sa.pem"), b: other("${HOME}/keys/b.pem") },
          c: other("${PROJECT_ROOT}/project.pem"),
        },
      }),
    ]);
    const secrets = otherServersSecrets(servers, "self", { KEY_DIR: "/home/ann/keys", HOME: "/home/ann" }, "/work/p");
    assert.ok(secrets.includes("/work/p/project.pem"), secrets.join(", "));
    assert.ok(secrets.includes("/home/ann/keys/sa.pem"), secrets.join(", "));
    assert.ok(secrets.includes("/home/ann/keys/b.pem"), secrets.join(", "));
  });
  test("another server's !command that reads a file of the project by a relative path (!cat .secrets/gh) denies it", () => {
    const env = { TOKEN: "!cat .secrets/gh", KEY: "!jq -r .key keys.json" };
    const { servers } = layerConfigs([
      file(user, { mcpServers: { self: { command: "x" }, gh: { command: "y", env } } }),
    ]);
    const secrets = otherServersSecrets(servers, "self", {}, "/work/p");
    assert.ok(secrets.includes("/work/p/.secrets/gh"), secrets.join(", "));
    assert.ok(secrets.includes("/work/p/keys.json"), secrets.join(", "));
  });
  test("other servers' secret files: paths in their !commands, variables holding paths, OAuth key files", () => {
    const { servers } = layerConfigs([
      file(user, {
        mcpServers: {
          self: { command: "x", env: { OWN: "!cat /home/ann/own-token" } },
          gh: { command: "gh-mcp", env: { TOKEN: "!cat ~/.config/tokens/gh", KEY: "${GOOGLE_CREDS}" } },
          npm: {
            command: "x",
            env: {
              ...{ A: "!cat $HOME/.config/tokens/npm", B: '!cat "${HOME}/.tokens/b"', C: "!cat ${TOKEN_FILE}" },
              // A quoted path holds its spaces.
              D: `!cat "$HOME/My Tokens/d" '/home/ann/key store/e'`,
              // As the shell reads an unquoted one: a backslash keeps the space that follows it.
              F: "!cat ~/My\\ Keys/f",
              // A variable quoted alone, the path going on after it: one word to the shell.
              G: '!cat "$HOME"/.tokens/g "${TOKEN_DIR}"/h',
            },
          },
        },
      }),
    ]);
    const env = { GOOGLE_CREDS: "/home/ann/gcp.json", TOKEN_FILE: "/home/ann/tok", TOKEN_DIR: "/home/ann/tokens" };
    assert.deepEqual(otherServersSecrets(servers, "self", env).sort(), [
      "/home/ann/gcp.json",
      "/home/ann/key store/e",
      "/home/ann/tok",
      "/home/ann/tokens/h",
      "/home/u/.pi/agent/mcp.json",
      "~/.config/tokens/gh",
      "~/.config/tokens/npm",
      "~/.tokens/b",
      "~/.tokens/g",
      "~/My Keys/f",
      "~/My Tokens/d",
    ]);
  });
});

describe("sandbox refusals", () => {
  const policy = {
    filesystem: { denyRead: ["/home/u/.ssh"], allowWrite: ["/work/p", "/tmp/box"], denyWrite: ["/home/u/.ssh"] },
    network: { allowedDomains: ["api.example.com"], deniedDomains: [] },
    tempDir: "/tmp/box",
    caches: [],
    registryOpen: false,
  };

  test("a stderr line is read for the refusal it reports, against the start's rules", () => {
    assert.deepEqual(refusalIn("EROFS: read-only file system, open '/etc/x'", policy), {
      kind: "write",
      detail: "/etc/x",
    });
    assert.deepEqual(refusalIn("PermissionError: [Errno 13] Permission denied: '/home/u/.ssh/id'", policy), {
      kind: "read",
      detail: "/home/u/.ssh/id",
    });
    // On Linux a denied directory is empty: a missing file there was refused; one elsewhere is the server's business.
    assert.deepEqual(refusalIn("ENOENT: no such file or directory, open '/home/u/.ssh/id'", policy), {
      kind: "read",
      detail: "/home/u/.ssh/id",
    });
    assert.equal(refusalIn("ENOENT: no such file or directory, open '/work/p/missing'", policy), undefined);
    assert.equal(refusalIn("ENOENT: no such file or directory, open '/home/u/.sshx'", policy), undefined);
    // Inside what it may write, a permission error is the file's own, not the sandbox's.
    assert.equal(refusalIn("EACCES: permission denied, open '/work/p/ro.txt'", policy), undefined);
    assert.deepEqual(refusalIn("Error: connect ECONNREFUSED 127.0.0.1:8080", policy), {
      kind: "network",
      detail: "127.0.0.1:8080",
    });
    assert.deepEqual(refusalIn("connect ENETUNREACH [::1]:443", policy), { kind: "network", detail: "[::1]:443" });
    assert.equal(refusalIn("listening on stdio", policy), undefined);
    assert.deepEqual(refusalIn("sh: /etc/y: Read-only file system", policy), { kind: "write", detail: "/etc/y" });
    // A read-only file system is a refused write, also of a secret (ssh adding to ~/.ssh/known_hosts).
    assert.deepEqual(refusalIn("EROFS: read-only file system, open '/home/u/.ssh/known_hosts'", policy), {
      kind: "write",
      detail: "/home/u/.ssh/known_hosts",
      denied: true,
    });
    // The sandbox lets every file outside denyRead be read: listing one the user may not is the file's own refusal.
    assert.equal(refusalIn("Error: EACCES: permission denied, scandir '/root'", policy), undefined);
    assert.equal(refusalIn("EACCES: permission denied, stat '/root/x'", policy), undefined);
    // Node's dump of the error after its message (`code: 'EROFS',`) is the same refusal again, without its path.
    assert.equal(refusalIn("  code: 'EROFS',", policy), undefined);
    // A path allowWrite lists that was not there when the server started: the sandbox opens only what exists.
    const cache = { ...policy, filesystem: { ...policy.filesystem, allowWrite: ["/work/p", "/home/u/.cache/x"] } };
    const unmade = refusalIn("EROFS: read-only file system, mkdir '/home/u/.cache/x'", cache);
    assert.match(unmade ? refusalMessage(unmade) : "", /\/home\/u\/\.cache\/x.*did not exist when the server started/);
    // On Linux the sandbox refuses a write as a read-only file system: a permission error outside denyRead is the file's
    // own (a server reading a log the user may not read), which no allowWrite would change.
    const unreadable = refusalIn("PermissionError: [Errno 13] Permission denied: '/var/log/syslog'", policy);
    if (process.platform === "linux") assert.equal(unreadable, undefined);
  });

  test("the library's violation lines: hosts its proxy denied, syscalls its monitor saw", () => {
    assert.deepEqual(violationRefusal("deny network-outbound evil.example:443 (not allowed)"), {
      kind: "network",
      detail: "evil.example:443",
      byProxy: true,
    });
    assert.deepEqual(violationRefusal("deny http-request GET http://evil.example/x?… (not allowed)"), {
      kind: "network",
      detail: "evil.example",
      byProxy: true,
    });
    // An allowed host that resolves to a loopback address stays refused: no allowedDomains entry would help.
    const loopback = violationRefusal("deny network-outbound localhost:8080 (resolved to a loopback address)");
    assert.doesNotMatch(refusalMessage(loopback), /add "localhost"/, refusalMessage(loopback));
    assert.deepEqual(violationRefusal("deny connect /run/docker.sock"), {
      kind: "network",
      detail: "/run/docker.sock",
    });
  });

  test("a refusal repeated in a flood is counted, written to the logs once, and leaves the others among the last", () => {
    const logged: string[] = [];
    const record = new RefusalRecord((_, message) => logged.push(message));
    record.started(policy);
    record.violation("deny network-outbound evil.example:443 (not allowed)");
    for (let i = 0; i < 1000; i++) record.stderrLine("EROFS: read-only file system, open '/etc/x'");
    assert.equal(record.count, 1001);
    assert.equal(logged.length, 2, "one line each in mcp.log and the server's log, not 1001");
    assert.equal(record.recent.length, 2);
    assert.match(record.recent[0]!, /evil\.example/);
    assert.match(record.recent[1]!, /\/etc\/x/);
  });

  test("each message names the setting that allows it; the policy is described for /mcp", () => {
    assert.match(
      refusalMessage({ kind: "write", detail: "/x" }),
      /write to \/x; to allow it, add it to sandbox\.filesystem\.allowWrite/,
    );
    assert.match(
      refusalMessage({ kind: "network", detail: "evil.example:443", byProxy: true }),
      /add "evil\.example" to sandbox\.network\.allowedDomains/,
    );
    // A path denied to writing (a git hook in the working directory) stays denied whatever allowWrite says.
    const hooks = {
      ...policy,
      filesystem: { ...policy.filesystem, denyWrite: ["/home/u/.ssh", "/work/p/.git/hooks"] },
    };
    const hook = refusalIn("EROFS: read-only file system, open '/work/p/.git/hooks/pre-commit'", hooks)!;
    assert.doesNotMatch(refusalMessage(hook), /allowWrite/, refusalMessage(hook));
    assert.match(refusalMessage(hook), /write to \/work\/p\/\.git\/hooks\/pre-commit, which the sandbox never lets/);
    // A relative path, as the server named it (Node's and Python's errors quote it so), is in its working directory.
    assert.deepEqual(refusalIn("EROFS: read-only file system, open '.git/hooks/pre-commit'", hooks), { ...hook });
    assert.deepEqual(refusalIn("OSError: [Errno 30] Read-only file system: 'notes.txt'", hooks), undefined);
    assert.deepEqual(describePolicy(policy, "/home/u"), [
      "writes: /work/p, /tmp/box",
      "denied reads: ~/.ssh",
      "network hosts: api.example.com",
    ]);
  });
});

test("a 404 is a remote server's address serving nothing; in a local server's words (a proxy's upstream) it is not", () => {
  const words = "Error POSTing to endpoint (HTTP 404): not found";
  assert.match(connectHint(words, undefined, 404) ?? "", /^nothing is served at this address: check that `url`/);
  assert.match(connectHint(words, "remote", 404) ?? "", /^nothing is served at this address/);
  assert.equal(connectHint(words, "local", 404), undefined);
});

test("a remote server's answer that names a refusal or a certificate of its own upstream: not a hint about reaching it", () => {
  for (const said of ["connect ECONNREFUSED 10.0.0.5:5432", "self-signed certificate in certificate chain"])
    assert.equal(connectHint(`MCP error -32603: ${said}`, "remote"), undefined, said);
  assert.match(connectHint("Invalid result for tools/list: expected array", "remote") ?? "", /MCP schema/);
});

describe("/mcp add's suggested name", () => {
  test("from the host, or from the path for a server on this machine (IPv6's loopback too)", () => {
    const http = (endpoint: string) => suggestServerName({ transport: "http", endpoint });
    assert.equal(http("https://mcp.linear.app/sse"), "linear");
    assert.equal(http("https://mcp.acme.co.uk/mcp"), "acme", "not the 'co' of a country's .co.uk");
    for (const host of ["localhost", "127.0.0.1", "[::1]"])
      assert.equal(http(`http://${host}:8080/notes/mcp`), "notes");
    assert.equal(suggestServerName({ transport: "stdio", endpoint: "npx -y @scope/server-github" }), "github");
  });
  test("a package's version is no part of its name, nor is a bare 'mcp' where its scope says whose it is", () => {
    const stdio = (endpoint: string) => suggestServerName({ transport: "stdio", endpoint });
    assert.equal(stdio("npx -y @upstash/context7-mcp@latest"), "context7");
    assert.equal(stdio("npx @playwright/mcp@0.0.41"), "playwright");
    assert.equal(stdio("uvx mcp-server-fetch"), "fetch");
  });
  test("the quickstart's Python server, run by uv in its directory, is named for its script", () => {
    const endpoint = "uv --directory /home/me/servers/weather run weather.py";
    assert.equal(suggestServerName({ transport: "stdio", endpoint }), "weather");
  });
  test("the quickstart's Node server, build/index.js, is named for its project's directory", () => {
    const endpoint = "node /home/me/servers/weather/build/index.js";
    assert.equal(suggestServerName({ transport: "stdio", endpoint }), "weather");
    assert.equal(
      suggestServerName({ transport: "stdio", endpoint: String.raw`node C:\src\notes\dist\main.mjs` }),
      "notes",
    );
  });
  test("not from an option's value: GitHub's docker run -e GITHUB_PERSONAL_ACCESS_TOKEN … is github", () => {
    const endpoint =
      "docker run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN -v /data:/data ghcr.io/github/github-mcp-server";
    assert.equal(suggestServerName({ transport: "stdio", endpoint }), "github");
  });
  test("a Windows path keeps its backslashes: in the entry's command and in the name", () => {
    const endpoint = String.raw`C:\bin\thing-mcp.exe --root \\host\share "C:\Program Files\x"`;
    assert.equal(suggestServerName({ transport: "stdio", endpoint }), "thing");
    assert.deepEqual(buildEntry({ transport: "stdio", endpoint, auth: { kind: "none" } }), {
      command: String.raw`C:\bin\thing-mcp.exe`,
      args: ["--root", String.raw`\\host\share`, String.raw`C:\Program Files\x`],
    });
    // What a backslash is for in a shell stays: it keeps a space, a quote or (in double quotes) a backslash.
    assert.deepEqual(splitCommandLine(String.raw`my\ file \"q\" "a\"b\\c" 'd\e'`), [
      "my file",
      '"q"',
      'a"b\\c',
      "d\\e",
    ]);
  });
});

describe("/mcp add's note of the variables to set", () => {
  test("names those without a default only: ${NAME:-value} works unset", () => {
    const entry = { command: "x", env: { LOG_LEVEL: "${LOG_LEVEL:-info}", ROOT: "${ROOT:-}", KEY: "${KEY}" } };
    assert.match(unsetVariablesNotice("x", entry, {}) ?? "", /^'x' needs KEY, which is not set\./);
    assert.equal(unsetVariablesNotice("x", entry, { KEY: "k" }), undefined);
  });
});

describe("/mcp add on one line (parseAddLine)", () => {
  /** The words as /mcp's handler splits them, parsed; the entry must be one the config loader takes. */
  function added(line: string) {
    const parsed = parseAddLine(splitCommandLine(line));
    assert.ok("line" in parsed, `${line}: ${"error" in parsed ? parsed.error : ""}`);
    valid(parsed.line.name, parsed.line.entry);
    return parsed.line;
  }
  const refused = (line: string) => {
    const parsed = parseAddLine(splitCommandLine(line));
    assert.ok("error" in parsed, `${line} was taken`);
    return parsed.error;
  };

  test("a command after --, or from its first word: its own options stay its own", () => {
    for (const line of [
      "fs -- npx -y @modelcontextprotocol/server-filesystem .",
      "fs npx -y @modelcontextprotocol/server-filesystem .",
    ]) {
      assert.deepEqual(added(line), {
        name: "fs",
        entry: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."] },
        scope: "user",
        replace: false,
      });
    }
    // pi 1.x's words (`pi mcp add -l tools --env API_KEY='${TOOLS_KEY}' -- uvx tools-mcp`), and a variable by name.
    const line = added(
      "-l tools --env API_KEY='${TOOLS_KEY}' -e REGION --cwd /srv --replace -- uvx tools-mcp --port 3",
    );
    assert.deepEqual(line, {
      name: "tools",
      entry: {
        command: "uvx",
        args: ["tools-mcp", "--port", "3"],
        env: { API_KEY: "${TOOLS_KEY}", REGION: "${REGION}" },
        cwd: "/srv",
      },
      scope: "project",
      replace: true,
    });
  });

  test("a URL: --url, or in the command's place with options after it (Claude Code's order)", () => {
    assert.deepEqual(added("docs --url https://example.com/mcp --bearer-token-env-var DOCS_TOKEN").entry, {
      url: "https://example.com/mcp",
      headers: { Authorization: "Bearer ${DOCS_TOKEN}" },
    });
    assert.deepEqual(
      added("--transport sse --scope project api https://api.example.com/sse --header 'X-Team: blue' -H X-Env=prod")
        .entry,
      { url: "https://api.example.com/sse", type: "sse", headers: { "X-Team": "blue", "X-Env": "prod" } },
    );
    const oauth = added(
      "s --url=https://s.example.com/mcp --oauth-client-id app --oauth-callback-port 8123 --oauth-client-registration dcr --exposure direct --description 'Our wiki'",
    ).entry;
    assert.deepEqual(oauth, {
      url: "https://s.example.com/mcp",
      auth: { clientId: "app", callbackPort: 8123, clientRegistration: "dcr" },
      exposure: "direct",
      description: "Our wiki",
    });
    assert.deepEqual(added("s https://s.example.com/mcp --oauth").entry, {
      url: "https://s.example.com/mcp",
      auth: "oauth",
    });
  });

  test("what it refuses says why", () => {
    assert.match(refused(""), /Name the server first/);
    assert.match(refused("-- npx -y @modelcontextprotocol/server-filesystem ."), /Name the server first/);
    assert.match(refused("https://mcp.example.com/mcp"), /Name the server first/);
    assert.match(refused("fs"), /No command or URL for 'fs'/);
    assert.match(refused("fs --url https://a.example/mcp -- node s.mjs"), /a command or a URL, not both/);
    assert.match(refused("fs https://a.example/mcp extra"), /Only options may follow a URL/);
    assert.match(refused("--frobnicate fs -- node s.mjs"), /Unknown option --frobnicate/);
    assert.match(refused("fs --cwd"), /--cwd needs a value/);
    assert.match(refused("fs --local=yes -- node s.mjs"), /--local takes no value/);
    assert.match(refused("fs --header 'A: b' -- node s.mjs"), /--header is for a URL/);
    assert.match(refused("fs --env X=1 https://a.example/mcp"), /--env is for a local command/);
    assert.match(refused("fs --env 2X=1 -- node s.mjs"), /--env 2X: not a variable name/);
    assert.match(refused("fs --header nocolon https://a.example/mcp"), /'Name: value'/);
    assert.match(refused("fs --transport ws https://a.example/mcp"), /http, sse or stdio, not 'ws'/);
    assert.match(refused("fs --transport http -- node s.mjs"), /--transport http needs a URL/);
    assert.match(refused("fs -s local -- node s.mjs"), /--scope is project or user, not 'local'/);
    assert.match(refused("fs -l -s user -- node s.mjs"), /say different files/);
    assert.match(
      refused("fs -H 'Authorization: Bearer x' --bearer-token-env-var T https://a.example/mcp"),
      /both set the same header/,
    );
  });
});

describe("a command whose module loads on first use", () => {
  test("a load that failed (a file missing while the package updates) is tried again at the next run", async () => {
    const commands = new Map<string, Parameters<ExtensionAPI["registerCommand"]>[1]>();
    const pi = { registerCommand: (name: string, options: never) => commands.set(name, options) } as never;
    let loads = 0;
    let ran = "";
    registerLazyCommand(pi, "x", "X", async (inner) => {
      if (++loads === 1) throw new Error("ENOENT: no such file");
      inner.registerCommand("x", { description: "X", handler: async (args) => void (ran = args) });
    });
    const ctx = { hasUI: false } as never;
    await assert.rejects(commands.get("x")!.handler("a", ctx), /ENOENT/);
    await commands.get("x")!.handler("b", ctx);
    assert.equal(ran, "b");
    await commands.get("x")!.handler("c", ctx);
    assert.deepEqual([ran, loads], ["c", 2], "a load that worked is kept");
  });
});
