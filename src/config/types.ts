/**
 * What a loaded config is made of: where each layer comes from, a validated server entry, and the problems found on
 * the way. Types only, plus the order of the layers and how a layer is named in messages.
 */

import type { SandboxSetting } from "./sandbox-setting.ts";
import type { ProtocolSetting } from "./protocol-setting.ts";

/**
 * Where a config layer comes from, highest priority first. `session`: no file, an entry code added for this session
 * only (another extension, see docs/api.md); its `path` says who added it.
 */
export type ConfigScope = "flag" | "project" | "user" | "package" | "bundled" | "session";
export const SCOPES_BY_PRIORITY: readonly ConfigScope[] = ["flag", "project", "user", "package", "bundled"];

export interface ConfigSource {
  scope: ConfigScope;
  path: string;
  /** A pi package's manifest (`path` is its package.json): its name, and whether it is installed for the user or in the project. */
  package?: { name: string; installed: "user" | "project" };
}

/** How a config layer is named in messages: `project config /repo/.pi/mcp.json`, `package my-pkg /…/package.json`. */
export function describeSource(source: ConfigSource): string {
  if (source.scope === "session") return `${source.path}, for this session only`;
  return source.package ? `package ${source.package.name} ${source.path}` : `${source.scope} config ${source.path}`;
}

/** Where a server comes from, in a word for `/mcp`: the scope, or `package <name>`. */
export function scopeLabel(source: ConfigSource): string {
  return source.package ? `package ${source.package.name}` : source.scope;
}

/** The transport a server asks for. `http` is Streamable HTTP, with the legacy SSE fallback. */
export type TransportKind = "stdio" | "http" | "sse";

/** How often, and how far apart, a dropped server is reconnected (remote) or restarted (local). */
export interface RetryPolicy {
  maxAttempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
}

/** A validated server entry. Strings may still hold `${VAR}` references: they are resolved at connect time. */
export interface ServerConfig {
  name: string;
  source: ConfigSource;
  /** Set when a higher layer only toggled `enabled` for this server. */
  enabledSource?: ConfigSource;
  transport: TransportKind;
  /** The `type` field as written, if any. */
  type?: string;
  command?: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  url?: string;
  headers: Record<string, string>;
  /** How long (ms) a `!command` header value is sent before its command runs again (`headersTtl`, in seconds). */
  headersTtl?: number;
  /** Connect (initialize) timeout in ms: `timeout`, or for a local server `initTimeout` (default 10 s). */
  timeout: number;
  /** Per-request timeout in ms; progress notifications reset it. */
  requestTimeout: number;
  enabled: boolean;
  /** What the server is for, in a line the model reads in the system prompt. */
  description?: string;
  /** Replaces `mcp_<server>` in tool names; `""` means bare tool names. */
  prefix?: string;
  /** Start only when a tool is first called; tools come from the cache until then. */
  lazy: boolean;
  /**
   * A local server whose one process serves every pi session of this user (`"shared"`), run by the hub; it is
   * stopped `idleMs` after its last session has left.
   */
  shared?: { idleMs: number };
  /** Globs of files whose change restarts a local server (`dev.watch`, relative to the project root). */
  watch?: readonly string[];
  /** Reconnects (remote) or restarts after a crash (local); `maxAttempts: 0` turns them off. */
  retry: RetryPolicy;
  /** How often an idle connection is checked, in ms; 0 turns the check off. */
  healthCheckInterval: number;
  /** How long a health-check ping may take, in ms. */
  pingTimeout: number;
  /** Tools that run without asking (`*` and `?` globs; only an exact name covers a destructive tool). */
  autoApprove: string[];
  /** Tools the server marks `readOnlyHint: true` run without asking. */
  autoApproveReadOnly: boolean;
  /** Tools whose call is sent again when the connection drops during it, though it may have run (`*` and `?` globs). */
  resendAfterDrop: string[];
  /** How its tools reach the model; undefined follows the top-level default. */
  exposure?: ExposureSetting;
  /** Per-tool exposure, exact names before patterns, patterns in file order. */
  toolExposure: ToolExposureRule[];
  /** Its `exposure` or a `toolExposure` value is pi 1.x's `codemode` (read as deferred; see ./exposure-setting.ts). */
  codemode?: boolean;
  /** Whether the server may have pi's model answer it (`sampling/createMessage`): asking the user each time, or not. */
  sampling: SamplingMode;
  /** `false`: the server is offered no roots (not the project root), and works where its own configuration says. */
  roots?: false;
  /** OAuth for a remote server; undefined when it is off (a local server, `"auth": false`, or a static Authorization header). */
  oauth?: OAuthSettings;
  /** What the server may send before the bridge refuses it. */
  limits: ServerLimits;
  /** Which MCP revision to speak (`protocolVersion`, see ./protocol-setting.ts). */
  protocol: ProtocolSetting;
  /**
   * A local server's `sandbox` as written (a project server's includes its file's top-level default); undefined
   * follows the user's top-level default (../sandbox/sandbox-setting.ts).
   */
  sandbox?: SandboxSetting;
  /** The entry as written, for fields later features read. */
  raw: Record<string, unknown>;
}

/** How a server's tools reach the model (see ./exposure-setting.ts). */
export type Exposure = "direct" | "deferred" | "hidden";
export type ExposureSetting = Exposure | "auto";

/** A `toolExposure` entry: a tool name or pattern, in the order the file lists them. */
export interface ToolExposureRule {
  pattern: string;
  exposure: Exposure;
}

/** When `auto` defers: past a share of the model's context window, or past a number of tokens. */
export type ExposureThreshold = { share: number } | { tokens: number };

export interface ExposureDefaults {
  exposure: ExposureSetting;
  threshold: ExposureThreshold;
}

/**
 * The top-level defaults as the files set them: `exposure` is undefined where none does, and the pi line decides it;
 * `catalog` (the top-level `toolCatalog`) is undefined where none sets it.
 */
export type ConfiguredExposure = Omit<ExposureDefaults, "exposure"> & {
  exposure?: ExposureSetting;
  catalog?: ToolCatalogSetting;
  /** The top-level `exposure` is pi 1.x's `codemode`. */
  codemode?: boolean;
  /** pi 1.x's top-level `autoEnableCodemode`: whether a server with `codemode` exposure turns pi's codemode tool on. */
  autoCodemode?: boolean;
};

/**
 * How the system prompt lists deferred tools: their names, or their names with a few words each, up to `maxTokens`
 * (servers beyond it are named with their count of tools); `off` names the servers only.
 */
export interface ToolCatalogSetting {
  form: "names" | "brief" | "off";
  maxTokens: number;
}

/** `ask`: each request is shown for approval; `allow`: no question (the answer is still shown in the TUI); `off`: not offered. */
export type SamplingMode = "ask" | "allow" | "off";

/** Bounds on what one server may send, so a hostile or broken one cannot exhaust pi. */
export interface ServerLimits {
  /** Tools registered from its list; the rest are left out, with a warning. */
  maxTools: number;
  /** The largest `inputSchema` (as JSON) a tool may have; a tool with a larger one is left out, with a warning. */
  maxSchemaBytes: number;
  /** The longest stdout line (one message) a local server may write; a longer one stops the server. */
  maxMessageBytes: number;
}

/** A remote server's `auth` block (`oauth` in pi 1.x's configs). Strings may hold `${VAR}`s (resolved at sign-in). */
export interface OAuthSettings {
  /** A client registered with the authorization server beforehand; without it the bridge registers itself. */
  clientId?: string;
  clientSecret?: string;
  /** Both set: these endpoints are used instead of discovery. */
  authorizationUrl?: string;
  tokenUrl?: string;
  scopes?: string[];
  callbackPort: number;
  /**
   * The redirect URI as the client was registered with it (pi 1.x's `callbackUrl`): http on a loopback host, sent as
   * written; without a port in it, `callbackPort` (or one of the next five) is put in.
   */
  callbackUrl?: string;
  /** A Client ID Metadata Document (an https URL) to use as the client id where the server supports it. */
  clientMetadataUrl?: string;
  /** The `client_name` sent when the bridge registers itself. */
  clientName?: string;
  /** `auto`: the document where one is set, supported and no `clientName` is; `dcr`: always register; `cimd`: only the document. */
  clientRegistration?: ClientRegistration;
  /** The authorization server's metadata document, used instead of discovery (https, or http on loopback). */
  authServerMetadataUrl?: string;
  /** DPoP-bound tokens (RFC 9449): unset, where the authorization server advertises DPoP; `true` always; `false` never. */
  dpop?: boolean;
  /**
   * `client_credentials`: the bridge gets tokens as the client itself; the JWT bearer grant (RFC 7523): with a
   * workload's JWT (`assertion`, `assertionFile`). Either way with no browser and no sign-in.
   */
  grantType?: GrantType;
  /** How a `client_credentials` client proves itself at the token endpoint; unset with a secret, the server's metadata decides. */
  tokenEndpointAuthMethod?: MachineAuthMethod;
  /** `private_key_jwt`: the private key (a PEM or JWK file, `~/` expanded), its JWS algorithm and key id. */
  privateKeyFile?: string;
  signingAlgorithm?: string;
  keyId?: string;
  /** The JWT bearer grant's assertion (a workload identity token), or the file it is read from at each token request. */
  assertion?: string;
  assertionFile?: string;
  /**
   * Enterprise-managed authorization (SEP-990): the assertion is an authorization grant (ID-JAG) the enterprise's
   * identity provider issues for the user's ID token (RFC 8693 token exchange), at `idpTokenUrl` or the token endpoint
   * of the `idpUrl` issuer, as the client `idpClientId`.
   */
  idpUrl?: string;
  idpTokenUrl?: string;
  idpClientId?: string;
  idpClientSecret?: string;
  idToken?: string;
  idTokenFile?: string;
}

export type ClientRegistration = "auto" | "dcr" | "cimd";
export type GrantType = "authorization_code" | "client_credentials" | typeof JWT_BEARER_GRANT;
/** RFC 7523's grant type: a JWT (a workload identity token) is exchanged for an access token. */
export const JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";
export type MachineAuthMethod = "client_secret_basic" | "client_secret_post" | "private_key_jwt";
/**
 * The asymmetric JWS algorithms (RFC 7518): what a `private_key_jwt` assertion may be signed with (RFC 7523), and what
 * the SDK signs DPoP proofs with (its `DPOP_SUPPORTED_ALGS`, written out here so that reading config and token files
 * does not load the SDK; a test holds the two lists equal).
 */
export const ASYMMETRIC_JWS_ALGS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
] as const;

export interface ConfigProblem {
  level: "error" | "warning";
  source: ConfigSource;
  server?: string;
  message: string;
}

export interface ConfigFileInput {
  source: ConfigSource;
  /** The file's text; `undefined` when the file does not exist. */
  text: string | undefined;
}

/** Whether MCP tool calls may ask the user first (`"ask"`, the default) or never do (`"approval": "never"`). */
export type ApprovalMode = "ask" | "never";

export interface LayeredConfig {
  /** Valid servers in a stable order (highest-priority file first, then file order). Disabled ones included. */
  servers: ServerConfig[];
  problems: ConfigProblem[];
  /** From the user-level file only: a project or flag file cannot turn approval off. */
  approval: ApprovalMode;
  /** The top-level `exposure` and `exposureThreshold`, from the highest-priority file that sets each. */
  exposure: ConfiguredExposure;
  /** The top-level `sandbox` of the highest-priority file other than the project's: the default for every local server. */
  sandbox?: SandboxSetting;
}
