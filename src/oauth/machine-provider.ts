/**
 * The `OAuthClientProvider` of a machine client: the bridge gets its access tokens with the client's own credentials
 * (`"grantType": "client_credentials"`: a client secret, `client_secret_basic`/`client_secret_post`, or a JWT signed
 * with its key, `private_key_jwt`, RFC 7523 section 2.2, by the SDK's `createPrivateKeyJwtAuth`), or with a workload's
 * identity token (RFC 7523's JWT bearer grant, section 2.1), and never sends anyone to a browser. The SDK's `auth()` does discovery, the resource indicator, issuer checks and the token request
 * (a provider without a redirect URL is a non-interactive one to it, as the SDK's `ClientCredentialsProvider` is);
 * this class adds what those providers keep in memory only: tokens stored with the server's other tokens (0600),
 * fetched again shortly before they expire, one request for concurrent callers, and errors that name the server
 * and quote the token endpoint's answer with no secret in it.
 */
import { readFile } from "node:fs/promises";
import {
  type AddClientAuthentication,
  auth,
  createPrivateKeyJwtAuth,
  discoverAndRequestJwtAuthGrant,
  type DpopSession,
  type FetchLike,
  type OAuthClientInformationContext,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  OAuthError,
  type OAuthTokens,
  requestJwtAuthorizationGrant,
} from "@modelcontextprotocol/client";
import { BridgeError, classifyError, describeError } from "../common/errors.ts";
import { redact } from "../common/redact.ts";
import { type GrantType, JWT_BEARER_GRANT, type OAuthSettings } from "../config/types.ts";
import { knownDiscovery } from "./configured-metadata.ts";
import { DpopKeys } from "./dpop.ts";
import { discoveryEndpoints, refuseEndpoints } from "./endpoint-policy.ts";
import { loadSigningKey } from "./machine-key.ts";
import { CLIENT_NAME } from "./provider.ts";
import { type AuthStore, expiresWithin, toOAuthTokens, toStoredTokens } from "./storage.ts";

/** A token this close to its expiry is fetched again before it is used: a new one costs one request, and no user. */
export const MACHINE_REFRESH_MARGIN_MS = 60_000;
const JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

export interface MachineProviderOptions {
  server: string;
  serverUrl: string;
  /** With `${VAR}`s resolved, the client secret as its `!command` printed it, and `privateKeyFile` a path. */
  settings: OAuthSettings;
  store: AuthStore;
  fetch?: FetchLike;
  now?: () => number;
  /** Told every token that passes through, to keep them out of messages. */
  onSecrets?: (values: string[]) => void;
}

/** The grants a machine runs by itself, with no browser. */
export function isMachineGrant(grant: GrantType | undefined): boolean {
  return grant === "client_credentials" || grant === JWT_BEARER_GRANT;
}

/** True for an error the token endpoint answered (RFC 6749 section 5.2), from either SDK line. */
export function isTokenEndpointError(error: unknown): boolean {
  return error instanceof OAuthError || (error instanceof Error && typeof (error as { errorCode?: unknown }).errorCode === "string");
}

export class MachineOAuthProvider implements OAuthClientProvider {
  /** A machine client never waits for anyone: nothing to sign in to, nothing pending. */
  readonly signInRequired = false;
  readonly pending = undefined;
  private discovery?: OAuthDiscoveryState;
  private fetching?: Promise<void>;
  private signer?: AddClientAuthentication;
  /** What was read from files or obtained on the way (a workload JWT, an ID token, an ID-JAG): hidden in errors too. */
  private readonly seen: string[] = [];
  /** The authorization server's issuer and the server's resource, as the SDK found them: an ID-JAG is asked for both. */
  private issuer?: string;
  private resource?: string;
  private readonly now: () => number;

  private readonly fetchFn?: FetchLike;
  private readonly dpopKeys: DpopKeys;

  constructor(private readonly options: MachineProviderOptions) {
    this.now = options.now ?? Date.now;
    this.fetchFn = options.fetch && globalResponses(options.fetch);
    this.dpopKeys = new DpopKeys({
      server: options.server,
      setting: options.settings.dpop,
      storedKey: () => this.stored()?.dpopKey,
      metadata: () => this.discovery?.authorizationServerMetadata,
      onSecrets: (values) => values.forEach((value) => this.hideFromNowOn(value)),
    });
  }

  private get settings(): OAuthSettings {
    return this.options.settings;
  }

  /** No redirect: to the SDK, the mark of a non-interactive grant. */
  get redirectUrl(): undefined {
    return undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    const metadata: OAuthClientMetadata = { client_name: CLIENT_NAME, redirect_uris: [], grant_types: [this.settings.grantType ?? "client_credentials"] };
    if (this.settings.tokenEndpointAuthMethod) metadata.token_endpoint_auth_method = this.settings.tokenEndpointAuthMethod;
    if (this.settings.scopes?.length) metadata.scope = this.settings.scopes.join(" ");
    return metadata;
  }

  clientInformation(context?: OAuthClientInformationContext): OAuthClientInformationMixed {
    const { clientId = "", clientSecret, tokenEndpointAuthMethod } = this.settings;
    // The configured client is for whichever authorization server the server names: bound to the one asked about.
    const client: OAuthClientInformationMixed & { token_endpoint_auth_method?: string; issuer?: string } = { client_id: clientId, ...(context ? { issuer: context.issuer } : {}) };
    if (clientSecret !== undefined) client.client_secret = clientSecret;
    // Unset, the SDK takes what the authorization server's metadata supports (basic first).
    if (tokenEndpointAuthMethod && tokenEndpointAuthMethod !== "private_key_jwt") client.token_endpoint_auth_method = tokenEndpointAuthMethod;
    return client;
  }

  /**
   * The grant, for the configured scopes (or what the SDK chose from the server's metadata): client credentials, or a
   * JWT bearer grant with its assertion got now (a file is read again: such tokens are short-lived and replaced in
   * place; an ID-JAG is asked for anew).
   */
  async prepareTokenRequest(scope?: string): Promise<URLSearchParams> {
    const params = new URLSearchParams({ grant_type: this.settings.grantType === JWT_BEARER_GRANT ? JWT_BEARER_GRANT : "client_credentials" });
    const wanted = this.settings.scopes?.length ? this.settings.scopes.join(" ") : scope;
    if (this.settings.grantType === JWT_BEARER_GRANT) params.set("assertion", await this.assertion(wanted));
    if (wanted) params.set("scope", wanted);
    return params;
  }

  /** The JWT bearer grant's assertion: the workload's JWT as configured or in its file, or an ID-JAG from the IdP. */
  private async assertion(scope: string | undefined): Promise<string> {
    const { assertion, assertionFile, idpClientId } = this.settings;
    if (idpClientId !== undefined) return await this.authorizationGrant(scope);
    return assertion ?? (await this.secretFile(assertionFile ?? "", "assertionFile", "the workload's JWT"));
  }

  /** A token kept in a file (read at each use: the platform replaces it in place), trimmed, and hidden from then on. */
  private async secretFile(file: string, key: string, what: string): Promise<string> {
    const { server } = this.options;
    let text: string;
    try {
      text = (await readFile(file, "utf8")).trim();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      throw new BridgeError("config", server, `MCP server '${server}': the file ${file} cannot be read (${code === "ENOENT" ? "it does not exist" : describeError(error)}); fix \`auth.${key}\`.`);
    }
    if (text === "") throw new BridgeError("config", server, `MCP server '${server}': the file ${file} is empty; \`auth.${key}\` should hold ${what}.`);
    this.hideFromNowOn(text);
    return text;
  }

  private hideFromNowOn(value: string): void {
    this.seen.push(value);
    this.options.onSecrets?.([value]);
  }

  /**
   * Enterprise-managed authorization: the user's ID token exchanged at the identity provider (RFC 8693, by the SDK's
   * `requestJwtAuthorizationGrant`) for an ID-JAG for this authorization server and resource.
   */
  private async authorizationGrant(scope: string | undefined): Promise<string> {
    const { idpUrl, idpTokenUrl, idpClientId = "", idpClientSecret, idToken, idTokenFile } = this.settings;
    const { server } = this.options;
    refuseEndpoints(this.options.server, { "identity provider": idpUrl, "identity provider's token endpoint": idpTokenUrl });
    const token = idToken ?? (await this.secretFile(idTokenFile ?? "", "idTokenFile", "the user's ID token"));
    const request = {
      audience: this.issuer ?? "",
      resource: this.resource ?? this.options.serverUrl,
      idToken: token,
      clientId: idpClientId,
      clientSecret: idpClientSecret,
      scope,
      fetchFn: this.fetchFn,
    };
    try {
      const result = idpTokenUrl ? await requestJwtAuthorizationGrant({ tokenEndpoint: idpTokenUrl, ...request }) : await discoverAndRequestJwtAuthGrant({ idpUrl: idpUrl ?? "", ...request });
      this.hideFromNowOn(result.jwtAuthGrant);
      return result.jwtAuthGrant;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const answer = isTokenEndpointError(error) && typeof code === "string" && code !== (error as Error).message ? `${code} (${(error as Error).message})` : describeError(error);
      throw new BridgeError(
        "auth",
        server,
        this.hide(`MCP server '${server}': the identity provider ${idpTokenUrl ?? idpUrl} did not exchange the ID token for an authorization grant: ${answer}. Check \`auth.idToken\` (is it current?) and \`auth.idpClientId\`.`),
        { cause: error },
      );
    }
  }

  /** `text` with every secret this client knows hidden. */
  private hide(text: string): string {
    const { clientSecret, assertion, idToken, idpClientSecret } = this.settings;
    return redact(text, [clientSecret, assertion, idToken, idpClientSecret, ...this.seen].filter((value): value is string => value !== undefined));
  }

  saveAuthorizationServerUrl(issuer: string): void {
    this.issuer = issuer;
  }

  saveResourceUrl(resource: string): void {
    this.resource = resource;
  }

  /** Absent for a client secret (the SDK sends it as the method says); a fresh signed assertion for `private_key_jwt`. */
  get addClientAuthentication(): AddClientAuthentication | undefined {
    if (this.settings.tokenEndpointAuthMethod !== "private_key_jwt") return undefined;
    return async (headers, params, url, metadata) => {
      const sign = this.signer ?? this.makeSigner();
      await sign(headers, params, url, metadata);
    };
  }

  /** The key file is read at the first token request, and again after a failure (the file may have been fixed). */
  private makeSigner(): AddClientAuthentication {
    const { clientId = "", privateKeyFile = "", signingAlgorithm, keyId } = this.settings;
    let key: ReturnType<typeof loadSigningKey>;
    try {
      key = loadSigningKey(privateKeyFile, signingAlgorithm);
    } catch (error) {
      const { server } = this.options;
      throw new BridgeError("config", server, `MCP server '${server}': ${describeError(error)}; fix \`auth.privateKeyFile\`.`);
    }
    const kid = keyId ?? (typeof key.jwk.kid === "string" ? key.jwk.kid : undefined);
    this.signer = kid === undefined ? createPrivateKeyJwtAuth({ issuer: clientId, subject: clientId, privateKey: key.jwk, alg: key.algorithm }) : signWithKeyId(clientId, key.jwk, key.algorithm, kid);
    return this.signer;
  }

  /** The stored token, or a new one when there is none or it is about to expire (one request for all who ask). */
  async tokens(): Promise<OAuthTokens | undefined> {
    let stored = this.stored();
    if (!stored || expiresWithin(stored, MACHINE_REFRESH_MARGIN_MS, this.now())) {
      await this.fetchTokens();
      stored = this.stored();
    }
    if (!stored) return undefined;
    this.options.onSecrets?.([stored.accessToken]);
    return toOAuthTokens(stored, this.now());
  }

  private stored() {
    return this.options.store.tokens(this.options.server, this.options.serverUrl);
  }

  /** Drops the stored token and gets a new one: after the server refused the old one. */
  async fetchAgain(): Promise<void> {
    await this.options.store.deleteTokens(this.options.server);
    await this.fetchTokens();
  }

  private fetchTokens(): Promise<void> {
    this.fetching ??= this.requestTokens().finally(() => {
      this.fetching = undefined;
    });
    return this.fetching;
  }

  private async requestTokens(): Promise<void> {
    try {
      const result = await auth(this, { serverUrl: this.options.serverUrl, fetchFn: this.fetchFn });
      if (result !== "AUTHORIZED") throw new Error("the authorization server issued no token");
    } catch (error) {
      throw this.tokenError(error);
    }
  }

  /** What went wrong getting a token, worded for the user: the server, the token endpoint, its answer; no secret. */
  private tokenError(error: unknown): BridgeError {
    if (error instanceof BridgeError) return error;
    const { server } = this.options;
    const { clientId, tokenEndpointAuthMethod } = this.settings;
    const endpoint = this.discovery?.authorizationServerMetadata?.token_endpoint ?? "its token endpoint";
    const hide = (text: string) => this.hide(text);
    if (isTokenEndpointError(error)) {
      const code = (error as { code?: unknown; errorCode?: unknown }).code ?? (error as { errorCode?: unknown }).errorCode;
      const description = (error as Error).message;
      const answer = description && description !== code ? `${String(code)} (${description})` : String(code);
      const proof =
        this.settings.grantType === JWT_BEARER_GRANT
          ? "the workload's JWT (`auth.assertion` or `auth.assertionFile`: its audience, expiry, and that the authorization server trusts its issuer)"
          : tokenEndpointAuthMethod === "private_key_jwt"
            ? "`auth.privateKeyFile` (and the key registered for the client)"
            : "`auth.clientSecret`";
      return new BridgeError(
        "auth",
        server,
        hide(`MCP server '${server}': the authorization server refused client '${clientId}' at ${endpoint}: ${answer}. Check \`auth.clientId\` and ${proof}.`),
        { cause: error },
      );
    }
    const kind = classifyError(error) === "transport" ? "transport" : "auth";
    return new BridgeError(kind, server, hide(`MCP server '${server}': no access token from ${endpoint}: ${describeError(error)}`), { cause: error });
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    this.options.onSecrets?.([tokens.access_token, tokens.refresh_token ?? ""].filter(Boolean));
    const dpopKey = this.dpopKeys.keyFor(tokens.token_type);
    await this.options.store.saveTokens(this.options.server, toStoredTokens(tokens, this.options.serverUrl, this.now(), dpopKey));
  }

  /** The key DPoP-bound tokens are (to be) bound to, where DPoP is used (./dpop.ts); the SDK signs the proofs. */
  dpop(): Promise<DpopSession | undefined> {
    return this.dpopKeys.session();
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.refuse(state);
    this.discovery = state;
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    this.discovery = await knownDiscovery(this.discovery, this.options.server, this.settings.authServerMetadataUrl, this.fetchFn);
    if (this.discovery) this.refuse(this.discovery);
    return this.discovery;
  }

  /** Client secrets and assertions go to https endpoints only (or http on this machine). */
  private refuse(state: OAuthDiscoveryState): void {
    refuseEndpoints(this.options.server, discoveryEndpoints(state));
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    if (scope === "all" || scope === "tokens") await this.options.store.deleteTokens(this.options.server);
    if (scope === "discovery" && !this.settings.authServerMetadataUrl) this.discovery = undefined;
  }

  redirectToAuthorization(): void {
    throw new BridgeError("auth", this.options.server, `MCP server '${this.options.server}': a "client_credentials" client never signs in in a browser.`);
  }

  saveCodeVerifier(): void {}

  codeVerifier(): string {
    throw new BridgeError("auth", this.options.server, `MCP server '${this.options.server}': a "client_credentials" client has no sign-in under way.`);
  }

  /** Nothing to close: there is no callback server. */
  async finishSignIn(): Promise<void> {}
}

/**
 * The SDK reads a token endpoint's error only from the global `Response` class (`instanceof Response`); undici's own
 * (the bridge's requests go through undici) is passed on as one.
 */
function globalResponses(fetchFn: FetchLike): FetchLike {
  return async (url, init) => {
    const response: Pick<Response, "body" | "status" | "statusText" | "headers"> = await fetchFn(url, init);
    if (response instanceof Response) return response;
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/**
 * A `private_key_jwt` assertion with a `kid` in its header, for authorization servers that hold several keys of a
 * client: the SDK's `createPrivateKeyJwtAuth` sets none. Same claims as the SDK's (RFC 7523 section 3), signed by
 * jose, the library the SDK signs with.
 */
function signWithKeyId(clientId: string, jwk: Record<string, unknown>, alg: string, kid: string): AddClientAuthentication {
  return async (_headers, params, url, metadata) => {
    const jose = await import("jose");
    const key = await jose.importJWK(jwk, alg);
    const audience = String(metadata?.issuer ?? url);
    const assertion = await new jose.SignJWT({})
      .setProtectedHeader({ alg, typ: "JWT", kid })
      .setIssuer(clientId)
      .setSubject(clientId)
      .setAudience(audience)
      .setIssuedAt()
      .setExpirationTime("5m")
      .setJti(crypto.randomUUID())
      .sign(key);
    params.set("client_assertion", assertion);
    params.set("client_assertion_type", JWT_BEARER);
  };
}
