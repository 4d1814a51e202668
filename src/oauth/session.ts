/**
 * OAuth for one remote server's connection: the provider its transports use, one refresh shared by concurrent
 * requests, and the step the SDK leaves to the client after it has sent the user to sign in — waiting for the
 * redirect and exchanging its code.
 */
import * as os from "node:os";
import {
  applyMiddlewares,
  auth,
  extractWWWAuthenticateParams,
  type FetchLike,
  isDpopNonceChallenge,
  type Middleware,
  type OAuthTokens,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import type { OAuthSettings } from "../config/types.ts";
import { BridgeError, describeError } from "../common/errors.ts";
import type { EventSink } from "../common/events.ts";
import { BridgeOAuthProvider, type OAuthProviderOptions, type SignInHandler } from "./provider.ts";
import { isMachineGrant, MachineOAuthProvider } from "./machine-provider.ts";
import { toOAuthTokens } from "./storage.ts";
import { withGlobalResponses, withSharedRefresh } from "./refresh-dedupe.ts";
import { type Environment, expandHome, substituteVars } from "../config/substitute.ts";
import { commandArgument } from "../config/validate/name.ts";
import { within } from "../common/wait.ts";

export interface OAuthSessionOptions extends Omit<OAuthProviderOptions, "now" | "signIn"> {
  /** The client secret as a `!command` printed it, used instead of the written one. */
  clientSecret?: string;
  env: Environment;
  projectRoot?: string;
  signIn: () => SignInHandler | undefined;
  /** How long a token endpoint may take to answer, in ms (`TOKEN_TIMEOUT_MS` unless set), at most the sign-in's time. */
  tokenTimeoutMs?: number;
  /** Told every token, client secret and authorization code handled here, to keep them out of messages. */
  onSecrets?: (values: string[]) => void;
}

/**
 * The longest a token endpoint may take to answer a refresh (then a sign-in is asked for) or a sign-in's code (then it
 * fails): no longer than a sign-in may take.
 */
const TOKEN_TIMEOUT_MS = 30_000;

/** What a server that waits for a sign-in says when it is used. */
export function needsSignInMessage(server: string): string {
  return `MCP server '${server}' needs you to sign in (OAuth). Run /mcp auth ${commandArgument(server)} in pi to open the sign-in page.`;
}

/** True for the SDK's "this request needs (new) authorization" errors. */
export function isUnauthorized(error: unknown): boolean {
  return error instanceof UnauthorizedError || (error instanceof Error && error.cause instanceof UnauthorizedError);
}

/** The settings that may hold `${VAR}`s, and those that name a file (`~/` expanded). */
const TEXT_SETTINGS = [
  ...([
    "clientId",
    "clientSecret",
    "authorizationUrl",
    "tokenUrl",
    "clientMetadataUrl",
    "authServerMetadataUrl",
  ] as const),
  ...(["keyId", "assertion", "idpUrl", "idpTokenUrl", "idpClientId", "idpClientSecret", "idToken"] as const),
];
const FILE_SETTINGS = ["privateKeyFile", "assertionFile", "idTokenFile"] as const;

export class OAuthSession {
  readonly provider: BridgeOAuthProvider | MachineOAuthProvider;
  /** What the transports' fetch goes through (outermost last): shared refreshes, then a look for a moved server. */
  readonly middleware: Middleware;
  /** What the provider's own requests go through (pi's proxy): the exchange of a sign-in's code too. */
  private readonly fetch?: FetchLike;
  private readonly tokenWait: number;

  constructor(private readonly options: OAuthSessionOptions) {
    const { store, server, serverUrl } = options;
    this.tokenWait = Math.min(options.tokenTimeoutMs ?? TOKEN_TIMEOUT_MS, options.signInTimeoutMs ?? TOKEN_TIMEOUT_MS);
    // Refreshes are shared across pi processes through the token file: see refresh-dedupe.ts.
    const sharedRefresh = withSharedRefresh({
      lockPath: `${store.tokensPath(server)}.lock`,
      current: () => {
        const stored = store.tokens(server, serverUrl);
        return stored ? (toOAuthTokens(stored, Date.now()) as Record<string, unknown>) : undefined;
      },
      save: async (answer) => {
        const issuer = store.tokens(server, serverUrl)?.issuer;
        await this.provider.saveTokens({ ...(answer as OAuthTokens), ...(issuer ? { issuer } : {}) });
      },
      timeoutMs: this.tokenWait,
    });
    // Token requests (the provider's own, not the transports'): undici's answers read as the SDK reads them.
    // Each within the token wait: one the authorization server never answers would hold the connect or the call.
    const timed: Middleware = (next) => (url, init) =>
      next(url, {
        ...init,
        signal: AbortSignal.any([AbortSignal.timeout(this.tokenWait), ...(init?.signal ? [init.signal] : [])]),
      });
    // So are discovery and registration after a 401, made through the transports' fetch: metadata is at well-known URLs.
    const discovery: Middleware = (next) => (url, init) => {
      const href = String(url);
      if (!href.includes("/.well-known/") && !this.provider.registersAt(href)) return next(url, init);
      const late = `the OAuth request to ${href} got no answer within ${this.tokenWait / 1000} s`;
      return timed(next)(url, init).catch((error: unknown) => {
        throw (error as Error)?.name === "TimeoutError" ? new Error(late) : error;
      });
    };
    this.middleware = applyMiddlewares(sharedRefresh, this.rediscoverOnRefusal, discovery);
    const fetch = options.fetch && applyMiddlewares(withGlobalResponses, sharedRefresh, timed)(options.fetch);
    this.fetch = fetch;
    const secrets: string[] = [];
    const resolve = (value: string | undefined): string | undefined => {
      if (value === undefined) return undefined;
      const result = substituteVars(value, options.env, options.projectRoot);
      secrets.push(...result.secrets);
      return result.value;
    };
    const settings: OAuthSettings = { ...options.settings };
    for (const key of TEXT_SETTINGS) settings[key] = resolve(settings[key]);
    for (const key of FILE_SETTINGS) {
      const file = settings[key];
      settings[key] = file === undefined ? undefined : resolve(expandHome(file, os.homedir()));
    }
    if (options.clientSecret !== undefined) settings.clientSecret = options.clientSecret;
    // Values from `${VAR}`s and these, even written out, are redacted like the tokens.
    const written = [settings.clientSecret, settings.assertion, settings.idToken, settings.idpClientSecret];
    options.onSecrets?.([...secrets, ...written].filter((value): value is string => Boolean(value)));
    const common = { server, serverUrl, settings, store, fetch, onSecrets: options.onSecrets };
    const machine = isMachineGrant(settings.grantType);
    this.provider = machine ? new MachineOAuthProvider(common) : new BridgeOAuthProvider({ ...options, ...common });
  }

  get serverUrl(): string {
    return this.options.serverUrl;
  }

  /** The client secret a `!command` printed for this session, if any. */
  get clientSecret(): string | undefined {
    return this.options.clientSecret;
  }

  /**
   * A token refused: the server may have moved to another authorization server (its resource metadata lists a new
   * one), so what discovery found is looked up again rather than reused; a client id is then registered there.
   * A DPoP nonce challenge is not a refusal: the SDK sends the request again with the nonce.
   */
  private readonly rediscoverOnRefusal: Middleware = (next) => async (url, init) => {
    const response = await next(url, init);
    const presented = /^(bearer|dpop) /i.test(new Headers(init?.headers).get("authorization") ?? "");
    const refused = response.status === 401 && presented && !isDpopNonceChallenge(response);
    if (refused) await this.provider.invalidateCredentials("discovery");
    // A step-up: the configured scopes alone would get a token the server refuses the same way.
    const asked = response.status === 403 ? extractWWWAuthenticateParams(response) : undefined;
    if (asked?.error === "insufficient_scope")
      for (const scope of asked.scope?.split(" ") ?? []) if (scope) this.provider.stepUpScopes.add(scope);
    return response;
  };

  /**
   * After a request failed for want of authorization: if a sign-in was started, waits for its redirect (bounded by the
   * sign-in timeout, or `signal`) and exchanges the code, so a retry can go through. Throws an auth error saying what
   * to do when no sign-in could be started, or when it failed. `onEvent` reports the sign-in's progress.
   */
  async completeSignIn(onEvent: EventSink, signal?: AbortSignal): Promise<void> {
    const { provider } = this;
    const server = this.options.server;
    // A machine client signs in by itself: a token the server refused is replaced, with no one to wait for.
    if (provider instanceof MachineOAuthProvider) return await provider.fetchAgain();
    const pending = provider.pending;
    if (!pending) throw new BridgeError("auth", server, needsSignInMessage(server));
    onEvent("mcp.auth.started", {});
    const onAbort = () => pending.cancel();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      // Requests refused together wait for one sign-in: its code is exchanged once (a second exchange is refused).
      pending.exchanged ??= pending.grant.then(async ({ code, iss }) => {
        this.options.onSecrets?.([code]);
        const { serverUrl } = this.options;
        // The exchange alone is bounded, not the user's time in the browser before it.
        const timedOut = () => new Error(`the token endpoint did not answer within ${this.tokenWait / 1000} s`);
        const exchange = auth(provider, { serverUrl, authorizationCode: code, iss, fetchFn: this.fetch });
        const result = await within(exchange, { ms: this.tokenWait, timedOut });
        if (result !== "AUTHORIZED") throw new Error("the authorization server did not issue tokens");
      });
      await pending.exchanged;
      onEvent("mcp.auth.completed", {});
    } catch (error) {
      // The SDK's OAuth errors may carry only their code (invalid_grant …), not a message.
      const code = (error as { errorCode?: unknown }).errorCode;
      const reason =
        (error instanceof Error && error.message) || (typeof code === "string" ? code : "") || describeError(error);
      onEvent("mcp.auth.failed", { error: reason });
      throw new BridgeError(
        "auth",
        server,
        `Signing in to MCP server '${server}' failed: ${reason.replace(/\.$/, "")}. Run /mcp auth ${commandArgument(server)} to try again.`,
        { cause: error },
      );
    } finally {
      signal?.removeEventListener("abort", onAbort);
      await provider.finishSignIn();
    }
  }
}
