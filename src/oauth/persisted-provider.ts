/**
 * The one persisting wrapper under both providers (./provider.ts for a sign-in, ./machine-provider.ts around the SDK's
 * machine providers): the SDK's providers keep tokens in memory, so here they live in the bridge's store
 * (./storage.ts: 0600, the format existing users' files have) with the DPoP key they are bound to (./dpop.ts), every
 * secret is reported for redaction, and what discovery found is checked against the endpoint policy before the SDK
 * sends anything there.
 */
import type {
  AuthorizationServerMetadata,
  DpopSession,
  FetchLike,
  OAuthDiscoveryState,
  OAuthTokens,
} from "@modelcontextprotocol/client";
import { BridgeError } from "../common/errors.ts";
import type { OAuthSettings } from "../config/types.ts";
import { knownDiscovery } from "./configured-metadata.ts";
import { DpopKeys } from "./dpop.ts";
import { discoveryEndpoints, refuseEndpoints } from "./endpoint-policy.ts";
import { type AuthStore, type StoredTokens, toStoredTokens } from "./storage.ts";

export const CLIENT_NAME = "pi (mcp-bridge)";

export interface PersistedOptions {
  server: string;
  serverUrl: string;
  /** With `${VAR}`s resolved. */
  settings: OAuthSettings;
  store: AuthStore;
  /** What token and metadata requests go through (./session.ts composes it). */
  fetch?: FetchLike;
  now?: () => number;
  /** Told every token and secret that passes through, to keep them out of messages. */
  onSecrets?: (values: string[]) => void;
}

export abstract class PersistedProvider {
  protected discovery?: OAuthDiscoveryState;
  protected readonly now: () => number;
  private readonly dpopKeys: DpopKeys;

  /** Whether the server publishes OAuth metadata (or the config names its endpoints), as far as discovery has seen. */
  get metadataFound(): boolean {
    return this.discovery?.resourceMetadata !== undefined || this.discovery?.authorizationServerMetadata !== undefined;
  }

  /** Whether `url` is where discovery found to register a client (the SDK posts there through the transports' fetch). */
  registersAt(url: string): boolean {
    const endpoint = this.discovery?.authorizationServerMetadata?.registration_endpoint;
    return endpoint !== undefined && URL.canParse(endpoint) && new URL(endpoint).href === url;
  }

  constructor(protected readonly options: PersistedOptions) {
    const { server, settings } = options;
    this.now = options.now ?? Date.now;
    this.dpopKeys = new DpopKeys({
      server,
      setting: settings.dpop,
      storedKey: () => this.stored()?.dpopKey,
      metadata: () => this.discovery?.authorizationServerMetadata,
      onSecrets: (values) => this.secretsSeen(...values),
    });
    const { authorizationUrl, tokenUrl } = settings;
    if (authorizationUrl && tokenUrl) {
      // Endpoints from the config replace discovery: the SDK takes cached discovery state as given.
      // The issuer is not known (it need not be the origin): an `iss` in the redirect has nothing to be checked against.
      const issuer = new URL(authorizationUrl).origin;
      const metadata = {
        authorization_endpoint: authorizationUrl,
        token_endpoint: tokenUrl,
        response_types_supported: ["code"],
        code_challenge_methods_supported: ["S256"],
        grant_types_supported: ["authorization_code", "refresh_token"],
      } as AuthorizationServerMetadata;
      this.discovery = { authorizationServerUrl: issuer, authorizationServerMetadata: metadata };
    }
  }

  /** The scopes the server asked for in a 403 `insufficient_scope` (a step-up), added to the configured ones. */
  readonly stepUpScopes = new Set<string>();
  /** What the last sign-in or token request asked for: the scope of tokens answered without one (RFC 6749 5.1). */
  protected askedScope?: string;

  /** The configured scopes and a step-up's (with the token's own: a step-up adds to them), else the SDK's choice. */
  protected scopeFor(sdkScope: string | undefined): string | undefined {
    const { scopes } = this.settings;
    const had = this.stepUpScopes.size ? (this.stored()?.scopes ?? []) : [];
    return scopes?.length ? [...new Set([...scopes, ...had, ...this.stepUpScopes])].join(" ") : sdkScope;
  }

  protected get settings(): OAuthSettings {
    return this.options.settings;
  }

  protected stored(): StoredTokens | undefined {
    return this.options.store.tokens(this.options.server, this.options.serverUrl);
  }

  /** An error of this server's that quotes nothing secret: `text` after the server's name. */
  protected problem(kind: "auth" | "config", text: string): BridgeError {
    const { server } = this.options;
    return new BridgeError(kind, server, `MCP server '${server}': ${text}`);
  }

  protected secretsSeen(...values: Array<string | undefined>): void {
    this.options.onSecrets?.(values.filter((value): value is string => typeof value === "string" && value !== ""));
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    // A refresh that does not rotate the refresh token keeps the old one (not for another authorization server's).
    const { store, server, serverUrl } = this.options;
    const { issuer, refreshToken } = this.stored() ?? {};
    const kept = !issuer || !tokens.issuer || issuer === tokens.issuer ? refreshToken : undefined;
    const asked = { ...tokens, scope: tokens.scope ?? this.askedScope };
    const merged = tokens.refresh_token || !kept ? asked : { ...asked, refresh_token: kept };
    this.secretsSeen(merged.access_token, merged.refresh_token, merged.id_token);
    const dpopKey = this.dpopKeys.keyFor(merged.token_type);
    await store.saveTokens(server, toStoredTokens(merged, serverUrl, this.now(), dpopKey));
  }

  /** The key DPoP-bound tokens are (to be) bound to, where DPoP is used; the SDK's `withDpop` signs the proofs. */
  dpop(): Promise<DpopSession | undefined> {
    return this.dpopKeys.session();
  }

  /** Called by the SDK after discovery and before any registration, token request or browser: the place to refuse. */
  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.refuse(state);
    this.discovery = state;
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    const { server, settings, fetch } = this.options;
    this.discovery = await knownDiscovery(this.discovery, server, settings.authServerMetadataUrl, fetch);
    // Endpoints from the config are checked here, before the SDK uses them.
    if (this.discovery) this.refuse(this.discovery);
    return this.discovery;
  }

  protected refuse(state: OAuthDiscoveryState): void {
    refuseEndpoints(this.options.server, discoveryEndpoints(state));
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    if (scope === "all" || scope === "tokens") await this.options.store.deleteTokens(this.options.server);
    const { authorizationUrl, tokenUrl, authServerMetadataUrl } = this.settings;
    // Discovery is looked up again (the server may have moved), unless the config names where to look.
    if (scope === "discovery" && !(authorizationUrl && tokenUrl) && !authServerMetadataUrl) this.discovery = undefined;
  }
}
