/**
 * The provider of a server the user signs in to (the SDK has providers for machines only). The SDK's `auth()` does the
 * protocol — discovery, registration (RFC 7591) or a Client ID Metadata Document, PKCE, the `resource` parameter,
 * refresh, step-up — and calls back here for what is the client's to decide: which redirect URI and client identity
 * to use, how the user gets to the authorization page (a `SignInHandler`, with ./callback-server.ts), refreshing ahead
 * of expiry, and taking over pi 1.x's sign-in (./pi-sign-in-import.ts). Tokens are kept by ./persisted-provider.ts.
 */
import { randomBytes } from "node:crypto";
import {
  type OAuthClientInformationContext,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type OAuthTokens,
  refreshAuthorization,
} from "@modelcontextprotocol/client";
import { commandArgument } from "../config/validate/name.ts";
import { type AuthorizationGrant, CallbackServer, OAuthCallbackError } from "./callback-server.ts";
import { refuseEndpoints } from "./endpoint-policy.ts";
import { CLIENT_NAME, PersistedProvider, type PersistedOptions } from "./persisted-provider.ts";
import { importPiSignIn, type PiImportOutcome } from "./pi-sign-in-import.ts";
import { redirectPlan } from "./redirect.ts";
import { expiresWithin, toOAuthTokens } from "./storage.ts";

/** Endpoints from the config come without the SDK's only way to a client id of its own, a registration endpoint. */
const NO_CLIENT =
  "`authorizationUrl` and `tokenUrl` name its OAuth endpoints, so there is no registration endpoint to register a client at: set `clientId` next to them (a client registered with the authorization server).";

/** An access token this close to its expiry is refreshed before it is used. */
const REFRESH_MARGIN_MS = 5 * 60_000;

/**
 * Brings the user to an authorization page. `callback` receives the redirect; a handler without a browser can let the
 * user paste the URL they were sent to into `callback.submitRedirectUrl()`. Resolves once the user has been sent
 * there (not when they are done).
 */
export type SignInHandler = (request: { server: string; url: URL; callback: CallbackServer }) => Promise<void> | void;

export interface OAuthProviderOptions extends PersistedOptions {
  /** Absent when nobody can sign in now (startup, print mode): a needed sign-in is then reported, not started. */
  signIn?: () => SignInHandler | undefined;
  /** Bounds a sign-in, in ms. */
  signInTimeoutMs?: number;
  /** Whether pi 1.x's sign-in may be taken over now (not while the user asked for a sign-in of their own). */
  mayImport?: () => boolean;
  /** Told what came of looking for pi 1.x's sign-in (see ./pi-sign-in-import.ts). */
  onImport?: (outcome: PiImportOutcome) => void;
}

/** A sign-in that has sent the user to the authorization page and waits for the redirect. */
export interface PendingSignIn {
  grant: Promise<AuthorizationGrant>;
  cancel(): void;
  /** The grant's code exchanged for tokens, once for all who wait. */
  exchanged?: Promise<void>;
}

export class BridgeOAuthProvider extends PersistedProvider implements OAuthClientProvider {
  /** Set by `redirectToAuthorization` when a sign-in has started; the connection waits on it. */
  pending?: PendingSignIn;
  /** Set when a sign-in was needed but no one could do it. */
  signInRequired = false;
  private verifier?: string;
  private currentState?: string;
  private callback?: CallbackServer;
  private refreshing?: Promise<void>;
  /** No refresh ahead before (epoch ms): half-way through a refreshed token's life, or a minute after a failure. */
  private refreshAfter = 0;
  /** The one look for pi 1.x's sign-in this provider makes, shared by the requests that wait on it. */
  private importing?: Promise<void>;

  constructor(protected override readonly options: OAuthProviderOptions) {
    super(options);
  }

  /** Every loopback redirect URI the callback server may listen on, so a taken port does not break a registration. */
  private redirectUris(): string[] {
    const plan = redirectPlan(this.settings);
    return plan.ports.map((port) => plan.uri(port));
  }

  get redirectUrl(): string {
    return this.callback?.redirectUrl ?? this.redirectUris()[0]!;
  }

  /**
   * The Client ID Metadata Document to offer, if any. As in pi 1.x, `clientRegistration: "dcr"` always registers, and
   * `auto` registers when a `clientName` is set (a document cannot carry it); `cimd` insists on the document.
   */
  get clientMetadataUrl(): string | undefined {
    const { clientRegistration = "auto", clientName, clientMetadataUrl } = this.settings;
    if (clientRegistration === "dcr" || (clientRegistration === "auto" && clientName !== undefined)) return undefined;
    return clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.settings.clientName ?? CLIENT_NAME,
      redirect_uris: this.redirectUris(),
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      // A public client with PKCE; a server may register it otherwise (RFC 7591 3.2.1): the SDK then does as answered.
      token_endpoint_auth_method: "none",
      ...(this.settings.scopes?.length ? { scope: this.settings.scopes.join(" ") } : {}),
    };
  }

  state(): string {
    // Requests that need authorization while a sign-in is under way join it: its state and verifier stay.
    if (this.pending && this.currentState) return this.currentState;
    this.currentState = randomBytes(32).toString("base64url");
    return this.currentState;
  }

  clientInformation(context?: OAuthClientInformationContext): OAuthClientInformationMixed | undefined {
    const { clientId, clientSecret } = this.settings;
    if (clientId) {
      // The configured client is for whichever authorization server the server names: bound to the one asked about.
      const stamp = context ? { issuer: context.issuer } : {};
      return { client_id: clientId, ...(clientSecret ? { client_secret: clientSecret } : {}), ...stamp };
    }
    const record = this.options.store.client(this.options.server, this.options.serverUrl);
    if (!record) return undefined;
    // The server moved to another authorization server: a client id is only good where it was issued.
    if (context?.issuer !== undefined && record.issuer !== undefined && record.issuer !== context.issuer)
      return undefined;
    const stored = record.client;
    this.secretsSeen(stored.client_secret);
    // pi 1.x's registration, taken over with its sign-in, refreshes the tokens issued to it (a refresh sends no
    // redirect URI) and nothing else: it was made for pi's redirect URIs. Once those tokens are gone, the bridge
    // registers itself.
    if (record.importedFrom !== undefined) return this.stored()?.refreshToken !== undefined ? stored : undefined;
    // A registration made for other redirect URIs (the callback port was changed) cannot be used: register again.
    const registered = (stored as { redirect_uris?: string[] }).redirect_uris;
    if (registered && !this.redirectUris().every((uri) => registered.includes(uri))) return undefined;
    return stored;
  }

  async saveClientInformation(
    client: OAuthClientInformationMixed,
    context?: OAuthClientInformationContext,
  ): Promise<void> {
    // A client from the config is the config's; nothing to keep.
    if (this.settings.clientId) return;
    this.secretsSeen(client.client_secret);
    const savedAt = new Date(this.now()).toISOString();
    await this.options.store.saveClient(this.options.server, {
      serverUrl: this.options.serverUrl,
      savedAt,
      client,
      ...(context ? { issuer: context.issuer } : {}),
    });
  }

  /** The stored tokens; one close to expiry is refreshed first (one refresh, however many calls ask at once). */
  async tokens(): Promise<OAuthTokens | undefined> {
    let stored = this.stored();
    if (!stored && this.options.store.piAuthFile) {
      // Looked for once: not while the user signs in on purpose, and not again after tokens of its own were dropped.
      this.importing ??= this.options.mayImport?.() === false ? Promise.resolve() : this.importFromPi();
      await this.importing;
      stored = this.stored();
    }
    if (
      stored?.refreshToken &&
      expiresWithin(stored, REFRESH_MARGIN_MS, this.now()) &&
      this.discovery &&
      this.now() >= this.refreshAfter
    ) {
      this.refreshing ??= this.refreshNow(stored.refreshToken).finally(() => {
        this.refreshing = undefined;
      });
      await this.refreshing;
      stored = this.stored();
    }
    if (!stored) return undefined;
    this.secretsSeen(stored.accessToken, stored.refreshToken, stored.idToken);
    return toOAuthTokens(stored, this.now());
  }

  /** Looks once for the sign-in pi 1.x stored for the server, and takes it over if the bridge can use it. */
  private async importFromPi(): Promise<void> {
    const { store, server, serverUrl } = this.options;
    const configuredClient = Boolean(this.settings.clientId);
    const outcome = await importPiSignIn({ store, server, serverUrl, configuredClient, now: this.now() });
    this.options.onImport?.(outcome);
  }

  /** Refreshes ahead of expiry. A failure is left to the server's 401, which runs the SDK's full flow. */
  private async refreshNow(refreshToken: string): Promise<void> {
    const discovery = this.discovery;
    const client = this.clientInformation();
    if (!discovery || !client) return;
    try {
      const tokens = await refreshAuthorization(discovery.authorizationServerUrl, {
        metadata: discovery.authorizationServerMetadata,
        clientInformation: client,
        refreshToken,
        resource: discovery.resourceMetadata?.resource ? new URL(discovery.resourceMetadata.resource) : undefined,
        dpop: await this.dpop(),
        fetchFn: this.options.fetch,
      });
      await this.saveTokens({ ...tokens, issuer: String(discovery.authorizationServerUrl) });
      if (tokens.expires_in !== undefined) this.refreshAfter = this.now() + tokens.expires_in * 500;
    } catch {
      // Expired or revoked: the next request gets a 401 and the SDK refreshes or signs in again. The token still works
      // meanwhile: a token endpoint that is down is tried again in a minute, not waited on by every request.
      this.refreshAfter = this.now() + 60_000;
    }
  }

  override async saveTokens(tokens: OAuthTokens): Promise<void> {
    await super.saveTokens(tokens);
    this.signInRequired = false;
  }

  /**
   * Starts a sign-in: the loopback server listens (the configured port or one of the next five, all of them
   * registered), and the handler sends the user to the page. Without a handler the sign-in is only recorded as needed.
   */
  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    // Nothing but an https page (or one on this machine) is opened: never `javascript:`, `file:` or the like.
    refuseEndpoints(this.options.server, { "authorization URL": authorizationUrl });
    // The SDK signs in with the client it refreshed with when a refresh failed for a reason other than a refused
    // grant (the authorization server is down, say). pi's registration cannot sign in here: it lists pi's redirect URIs.
    const record = this.options.store.client(this.options.server, this.options.serverUrl);
    if (
      record?.importedFrom !== undefined &&
      record.client.client_id === authorizationUrl.searchParams.get("client_id")
    ) {
      const again = `/mcp auth ${commandArgument(this.options.server)}`;
      throw this.problem(
        "auth",
        `the sign-in taken over from pi 1.x could not be refreshed. Run ${again} to sign in here.`,
      );
    }
    const handler = this.options.signIn?.();
    if (!handler) {
      this.signInRequired = true;
      return;
    }
    if (this.pending) return;
    // Requests refused together each make a URL: the first opens, with its own state, and the rest join it.
    const state = authorizationUrl.searchParams.get("state") ?? this.currentState ?? "";
    const started = CallbackServer.start({
      redirect: redirectPlan(this.settings),
      timeoutMs: this.options.signInTimeoutMs,
    });
    // Pending at once, before the callback server listens, so that no other request starts a sign-in of its own.
    const grant = started.then((callback) => (this.callback = callback).waitForGrant(state));
    const cancel = () => void started.then((callback) => callback.close()).catch(() => {});
    const pending: PendingSignIn = { grant, cancel };
    this.pending = pending;
    // A sign-in that failed or timed out with no one waiting on it must not block the next one.
    grant.catch(() => {
      if (this.pending !== pending) return;
      this.pending = undefined;
      this.callback = undefined;
    });
    const callback = await started;
    const url = new URL(authorizationUrl);
    url.searchParams.set("redirect_uri", callback.redirectUrl);
    // Scopes from the config come first (the SDK prefers the server's hints), with any a step-up asked for.
    const scope = this.scopeFor(undefined);
    if (scope) url.searchParams.set("scope", scope);
    this.askedScope = url.searchParams.get("scope") ?? undefined;
    try {
      await handler({ server: this.options.server, url, callback });
    } catch (error) {
      await callback.close();
      throw error;
    }
  }

  saveCodeVerifier(verifier: string): void {
    if (this.pending) return;
    this.verifier = verifier;
    // It goes to the token endpoint beside the code, and an error there may quote the request.
    this.secretsSeen(verifier);
  }

  codeVerifier(): string {
    if (!this.verifier) throw new OAuthCallbackError("invalid_redirect", "No sign-in is under way");
    return this.verifier;
  }

  /** Refuses what discovery found (or the config named) when the bridge may not use it. */
  protected override refuse(state: OAuthDiscoveryState): void {
    super.refuse(state);
    if (this.settings.authorizationUrl && this.settings.tokenUrl && !this.clientInformation())
      throw this.problem("auth", NO_CLIENT);
    if (
      this.settings.clientRegistration === "cimd" &&
      state.authorizationServerMetadata?.client_id_metadata_document_supported !== true
    ) {
      const why = `its authorization server does not support Client ID Metadata Documents, and \`clientRegistration\` is "cimd"; use "auto" or "dcr".`;
      throw this.problem("auth", why);
    }
    // The SDK's own error ("Incompatible auth server") does not say what to do: a client registered beforehand.
    const metadata = state.authorizationServerMetadata;
    const cimd = this.clientMetadataUrl && metadata?.client_id_metadata_document_supported;
    const issuer = metadata?.issuer ?? state.authorizationServerUrl;
    if (metadata && !metadata.registration_endpoint && !cimd && !this.clientInformation({ issuer }))
      throw this.problem(
        "auth",
        "its authorization server does not support dynamic client registration: set `clientId` (a client registered with it).",
      );
  }

  override async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    await super.invalidateCredentials(scope);
    if ((scope === "all" || scope === "client") && !this.settings.clientId)
      await this.options.store.deleteClient(this.options.server);
    if (scope === "all" || scope === "verifier") this.verifier = undefined;
  }

  /** The sign-in is over (done or abandoned): the loopback server stops. */
  async finishSignIn(): Promise<void> {
    const callback = this.callback;
    this.callback = undefined;
    this.pending = undefined;
    await callback?.close();
  }
}
