/**
 * A machine client (`"grantType": "client_credentials"` or RFC 7523's JWT bearer grant): the SDK's own providers
 * (`ClientCredentialsProvider`, `CrossAppAccessProvider`; `createPrivateKeyJwtAuth`) make the grant, and `auth()` does
 * discovery, the resource indicator, issuer checks and the token request; no one is ever sent to a browser. Around
 * them, ./persisted-provider.ts keeps the tokens; this class adds what the SDK's providers lack: a token fetched again
 * shortly before it expires, one request for concurrent callers, the configured scopes and auth method, a `kid` in a
 * signed assertion, an assertion read from a file at each use, and errors that name the server and quote the token
 * endpoint's answer with no secret in it.
 */
import { readFile } from "node:fs/promises";
import {
  type AddClientAuthentication,
  auth,
  ClientCredentialsProvider,
  createPrivateKeyJwtAuth,
  CrossAppAccessProvider,
  type CrossAppAccessContext,
  discoverAndRequestJwtAuthGrant,
  type OAuthClientInformationContext,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  OAuthError,
  type OAuthTokens,
  requestJwtAuthorizationGrant,
} from "@modelcontextprotocol/client";
import { BridgeError, codeOf, describeError } from "../common/errors.ts";
import { classifyError } from "../common/error-kinds.ts";
import { redact } from "../common/redact.ts";
import { type GrantType, JWT_BEARER_GRANT } from "../config/types.ts";
import { refuseEndpoints } from "./endpoint-policy.ts";
import { loadSigningKey } from "./machine-key.ts";
import { CLIENT_NAME, PersistedProvider } from "./persisted-provider.ts";
import { expiresWithin, toOAuthTokens } from "./storage.ts";

/** A token this close to its expiry is fetched again before it is used: a new one costs one request, and no user. */
const MACHINE_REFRESH_MARGIN_MS = 60_000;

/** The grants a machine runs by itself, with no browser. */
export function isMachineGrant(grant: GrantType | undefined): boolean {
  return grant === "client_credentials" || grant === JWT_BEARER_GRANT;
}

/** True for an error the token endpoint answered (RFC 6749 section 5.2), from either SDK line. */
export function isTokenEndpointError(error: unknown): boolean {
  return error instanceof OAuthError || (error instanceof Error && typeof Reflect.get(error, "errorCode") === "string");
}

export class MachineOAuthProvider extends PersistedProvider implements OAuthClientProvider {
  /** A machine client never waits for anyone: nothing to sign in to, nothing pending. */
  readonly signInRequired = false;
  readonly pending = undefined;
  /** The SDK provider that makes the grant; made at the first token request (a key file that fails is read again). */
  private grant?: OAuthClientProvider;
  private signer?: AddClientAuthentication;
  private fetching?: Promise<void>;
  /** No new token before (epoch ms) while the stored one works: set a minute after the token endpoint failed. */
  private fetchAfter = 0;
  /** What was read from files or obtained on the way (a workload JWT, an ID-JAG): hidden in errors too. */
  private readonly seen: string[] = [];

  /** No redirect: to the SDK, the mark of a non-interactive grant. */
  get redirectUrl(): undefined {
    return undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    const { grantType = "client_credentials", tokenEndpointAuthMethod: method, scopes } = this.settings;
    const metadata: OAuthClientMetadata = { client_name: CLIENT_NAME, redirect_uris: [], grant_types: [grantType] };
    if (method) metadata.token_endpoint_auth_method = method;
    if (scopes?.length) metadata.scope = scopes.join(" ");
    return metadata;
  }

  /** The configured client, for whichever authorization server is asked about; no method: the SDK picks one. */
  clientInformation(context?: OAuthClientInformationContext): OAuthClientInformationMixed {
    const { clientId = "", clientSecret, tokenEndpointAuthMethod: method } = this.settings;
    return {
      client_id: clientId,
      ...(context ? { issuer: context.issuer } : {}),
      ...(clientSecret !== undefined ? { client_secret: clientSecret } : {}),
      ...(method && method !== "private_key_jwt" ? { token_endpoint_auth_method: method } : {}),
    };
  }

  /** The SDK provider for the configured grant (their own client records are unused: the issuer is stamped above). */
  private sdkProvider(): OAuthClientProvider {
    if (this.grant) return this.grant;
    const { clientId = "", clientSecret = "" } = this.settings;
    // Only to keep the SDK from warning that no issuer was named: the record it stamps is not the one used.
    const common = { clientId, clientName: CLIENT_NAME, expectedIssuer: this.options.serverUrl };
    if (this.settings.grantType === JWT_BEARER_GRANT) {
      const assertion = (context: CrossAppAccessContext) => this.assertion(context);
      const grant = new CrossAppAccessProvider({ ...common, clientSecret, fetchFn: this.options.fetch, assertion });
      // Where the server publishes no resource metadata, the grant is for the server's URL.
      grant.saveResourceUrl?.(this.options.serverUrl);
      return (this.grant = grant);
    }
    return (this.grant = new ClientCredentialsProvider({ ...common, clientSecret }));
  }

  /** `private_key_jwt`, for either grant: the client's assertion, signed anew for each token request. */
  private clientAssertion(): AddClientAuthentication {
    if (this.signer) return this.signer;
    const { clientId = "", privateKeyFile = "", signingAlgorithm, keyId } = this.settings;
    let key: ReturnType<typeof loadSigningKey>;
    try {
      key = loadSigningKey(privateKeyFile, signingAlgorithm);
    } catch (error) {
      throw this.problem("config", `${describeError(error)}; fix \`auth.privateKeyFile\`.`);
    }
    const kid = keyId ?? (typeof key.jwk.kid === "string" ? key.jwk.kid : undefined);
    // The SDK's assertion has no `kid` header, which servers holding several keys of a client need.
    return (this.signer =
      kid !== undefined
        ? signWithKeyId(clientId, key.jwk, key.algorithm, kid)
        : createPrivateKeyJwtAuth({ issuer: clientId, subject: clientId, privateKey: key.jwk, alg: key.algorithm }));
  }

  /** The grant's parameters for the configured scopes and a step-up's (else the SDK's choice), by the SDK provider. */
  async prepareTokenRequest(scope?: string): Promise<URLSearchParams | undefined> {
    const params = await this.sdkProvider().prepareTokenRequest?.(this.scopeFor(scope));
    this.askedScope = params?.get("scope") ?? undefined;
    return params ?? undefined;
  }

  get addClientAuthentication(): AddClientAuthentication | undefined {
    if (this.settings.tokenEndpointAuthMethod !== "private_key_jwt") return undefined;
    // The signed assertion is the client's credential for minutes: hidden as its secret would be.
    return async (headers, params, ...rest) => {
      await this.clientAssertion()(headers, params, ...rest);
      this.secretsSeen(params.get("client_assertion") ?? undefined);
    };
  }

  /** What discovery found, for the ID-JAG's audience and resource. */
  saveAuthorizationServerUrl(issuer: string): void {
    return this.sdkProvider().saveAuthorizationServerUrl?.(issuer) as void;
  }

  saveResourceUrl(resource: string): void {
    return this.sdkProvider().saveResourceUrl?.(resource) as void;
  }

  /** The JWT bearer grant's assertion: the workload's JWT (as configured, or its file read now), or an ID-JAG. */
  private async assertion(context: CrossAppAccessContext): Promise<string> {
    const { assertion, assertionFile, idpClientId } = this.settings;
    if (idpClientId !== undefined) return await this.authorizationGrant(context);
    return assertion ?? (await this.secretFile(assertionFile ?? "", "assertionFile", "the workload's JWT"));
  }

  /** A token kept in a file (read at each use: the platform replaces it in place), trimmed, and hidden from then on. */
  private async secretFile(file: string, key: string, what: string): Promise<string> {
    let text: string;
    try {
      text = (await readFile(file, "utf8")).trim();
    } catch (error) {
      const why = codeOf(error) === "ENOENT" ? "it does not exist" : describeError(error);
      throw this.problem("config", `the file ${file} cannot be read (${why}); fix \`auth.${key}\`.`);
    }
    if (text === "") throw this.problem("config", `the file ${file} is empty; \`auth.${key}\` should hold ${what}.`);
    this.secretsSeen(text);
    return text;
  }

  protected override secretsSeen(...values: Array<string | undefined>): void {
    for (const value of values) if (value) this.seen.push(value);
    super.secretsSeen(...values);
  }

  /** Enterprise-managed authorization: the user's ID token exchanged at the identity provider (RFC 8693) for an ID-JAG. */
  private async authorizationGrant(context: CrossAppAccessContext): Promise<string> {
    const { idpUrl, idpTokenUrl, idpClientId = "", idpClientSecret, idToken, idTokenFile } = this.settings;
    const { server } = this.options;
    refuseEndpoints(server, { "identity provider": idpUrl, "identity provider's token endpoint": idpTokenUrl });
    const token = idToken ?? (await this.secretFile(idTokenFile ?? "", "idTokenFile", "the user's ID token"));
    const { authorizationServerUrl: audience, resourceUrl: resource, scope, fetchFn } = context;
    const request = {
      audience,
      resource,
      idToken: token,
      clientId: idpClientId,
      clientSecret: idpClientSecret,
      scope,
      fetchFn,
    };
    try {
      const result = idpTokenUrl
        ? await requestJwtAuthorizationGrant({ tokenEndpoint: idpTokenUrl, ...request })
        : await discoverAndRequestJwtAuthGrant({ idpUrl: idpUrl ?? "", ...request });
      this.secretsSeen(result.jwtAuthGrant);
      return result.jwtAuthGrant;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const said = isTokenEndpointError(error) && typeof code === "string" && code !== (error as Error).message;
      const answer = said ? `${code} (${(error as Error).message})` : describeError(error);
      const message = `MCP server '${server}': the identity provider ${idpTokenUrl ?? idpUrl} did not exchange the ID token for an authorization grant: ${answer}. Check \`auth.${idToken === undefined ? "idTokenFile" : "idToken"}\` (is it current?) and \`auth.idpClientId\`.`;
      throw new BridgeError("auth", server, this.hide(message), { cause: error });
    }
  }

  /** `text` with every secret this client knows hidden. */
  private hide(text: string): string {
    const { clientSecret, assertion, idToken, idpClientSecret } = this.settings;
    const secrets = [clientSecret, assertion, idToken, idpClientSecret, ...this.seen];
    return redact(
      text,
      secrets.filter((value): value is string => value !== undefined),
    );
  }

  /** The stored token, or a new one when there is none or it is about to expire (one request for all who ask). */
  async tokens(): Promise<OAuthTokens | undefined> {
    let stored = this.stored();
    // A token that lives less than twice the margin is fetched again half-way through its life, not at every use.
    const life = stored?.expiresAt === undefined ? NaN : stored.expiresAt - Date.parse(stored.savedAt);
    const margin = Math.min(MACHINE_REFRESH_MARGIN_MS, life / 2 || Infinity);
    if (!stored || (expiresWithin(stored, margin, this.now()) && this.now() >= this.fetchAfter)) {
      // A token not yet expired still works: used while the token endpoint fails, which is tried again in a minute.
      try {
        await this.fetchTokens();
      } catch (error) {
        if (!stored || expiresWithin(stored, 0, this.now())) throw error;
        this.fetchAfter = this.now() + 60_000;
      }
      stored = this.stored() ?? stored;
    }
    if (!stored) return undefined;
    this.secretsSeen(stored.accessToken);
    return toOAuthTokens(stored, this.now());
  }

  /** Drops the stored token and gets a new one: after the server refused the old one. */
  async fetchAgain(): Promise<void> {
    await this.options.store.deleteTokens(this.options.server);
    await this.fetchTokens();
  }

  private fetchTokens(): Promise<void> {
    this.fetching ??= this.requestTokens().finally(() => (this.fetching = undefined));
    return this.fetching;
  }

  private async requestTokens(): Promise<void> {
    try {
      const result = await auth(this, { serverUrl: this.options.serverUrl, fetchFn: this.options.fetch });
      if (result !== "AUTHORIZED") throw new Error("the authorization server issued no token");
    } catch (error) {
      throw this.tokenError(error);
    }
  }

  /** What went wrong getting a token, worded for the user: the server, the token endpoint, its answer; no secret. */
  private tokenError(error: unknown): BridgeError {
    if (error instanceof BridgeError) return error;
    const { server } = this.options;
    const { clientId, tokenEndpointAuthMethod, grantType } = this.settings;
    const endpoint = this.discovery?.authorizationServerMetadata?.token_endpoint ?? "its token endpoint";
    if (!isTokenEndpointError(error)) {
      // A token endpoint that did not answer in time may next time: retried as a lost connection is, unlike a refusal.
      const late = (error as Error | undefined)?.name === "TimeoutError";
      const kind = late || classifyError(error) === "transport" ? "transport" : "auth";
      const message = `MCP server '${server}': no access token from ${endpoint}: ${describeError(error)}`;
      return new BridgeError(kind, server, this.hide(message), { cause: error });
    }
    const code = (error as { code?: unknown }).code ?? (error as { errorCode?: unknown }).errorCode;
    const description = (error as Error).message;
    const answer = description && description !== code ? `${String(code)} (${description})` : String(code);
    // An authorization server in trouble did not judge the client: no key to check, and asked again later.
    if (code === "server_error" || code === "temporarily_unavailable") {
      const message = `MCP server '${server}': the authorization server could not issue a token at ${endpoint}: ${answer}.`;
      return new BridgeError("transport", server, this.hide(message), { cause: error });
    }
    const client =
      tokenEndpointAuthMethod === "private_key_jwt"
        ? "`auth.privateKeyFile` (and the key registered for the client)"
        : "`auth.clientSecret`";
    // Enterprise-managed authorization has no workload JWT: its grant comes from the identity provider.
    const proof =
      grantType !== JWT_BEARER_GRANT
        ? client
        : this.settings.idpClientId !== undefined
          ? `${client}, and that the authorization server trusts the identity provider's grants`
          : "the workload's JWT (`auth.assertion` or `auth.assertionFile`: its audience, expiry, and that the authorization server trusts its issuer)";
    const message = `MCP server '${server}': the authorization server refused client '${clientId}' at ${endpoint}: ${answer}. Check \`auth.clientId\` and ${proof}.`;
    return new BridgeError("auth", server, this.hide(message), { cause: error });
  }

  redirectToAuthorization(): void {
    throw this.problem("auth", 'a "client_credentials" client never signs in in a browser.');
  }

  saveCodeVerifier(): void {}

  codeVerifier(): string {
    throw this.problem("auth", 'a "client_credentials" client has no sign-in under way.');
  }

  /** Nothing to close: there is no callback server. */
  async finishSignIn(): Promise<void> {}
}

/**
 * A `private_key_jwt` assertion with a `kid` in its header: the SDK's `createPrivateKeyJwtAuth` sets none. Same claims
 * as the SDK's (RFC 7523 section 3), signed by jose, the library the SDK signs with.
 */
function signWithKeyId(clientId: string, jwk: Record<string, unknown>, alg: string, kid: string) {
  const sign: AddClientAuthentication = async (_headers, params, url, metadata) => {
    const jose = await import("jose");
    const claims = { iss: clientId, sub: clientId, aud: String(metadata?.issuer ?? url), jti: crypto.randomUUID() };
    const jwt = new jose.SignJWT(claims)
      .setProtectedHeader({ alg, typ: "JWT", kid })
      .setIssuedAt()
      .setExpirationTime("5m");
    params.set("client_assertion", await jwt.sign(await jose.importJWK(jwk, alg)));
    params.set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
  };
  return sign;
}
