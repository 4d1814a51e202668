/**
 * OAuth for one configured remote server across all its connections: an `OAuthSession` for the URL it connects to
 * (a new one when the URL changes), what its transports need from it, the sign-in a failed request leads to, and the
 * explicit sign-in and sign-out of `/mcp auth` and `/mcp logout`.
 */
import type { FetchLike, Middleware, OAuthClientProvider } from "@modelcontextprotocol/client";
import { type Dispatcher, fetch as undiciFetch, type RequestInit } from "undici";
import { dispatcherFor } from "../common/env-proxy.ts";
import type { EventSink } from "../common/events.ts";
import type { LogLevel } from "../common/log-file.ts";
import type { OAuthSettings } from "../config/types.ts";
import type { Environment } from "../config/substitute.ts";
import { declinePiSignIn, type PiImportOutcome } from "./pi-sign-in-import.ts";
import { BridgeOAuthProvider, type SignInHandler } from "./provider.ts";
import { isUnauthorized, needsSignInMessage, OAuthSession } from "./session.ts";
import { isMachineGrant, isTokenEndpointError } from "./machine-provider.ts";
import type { AuthStore } from "./storage.ts";

export interface ServerAuthOptions {
  server: string;
  /** The server's `auth` settings; undefined when OAuth is off for it. */
  settings?: OAuthSettings;
  env: Environment;
  /** What `${PROJECT_ROOT}` in its settings names. */
  projectRoot?: string;
  /** Where tokens and client registrations are kept; without it there is no OAuth. */
  store?: AuthStore;
  /** Who can send the user to a sign-in page right now, if anyone. */
  signIn?: () => SignInHandler | undefined;
  signInTimeoutMs?: number;
  /** How long a token endpoint may take to answer, in ms: 30 s, and no longer than a sign-in. */
  tokenTimeoutMs?: number;
  /** Where its progress goes: events on pi's bus (`mcp.auth.started`, …) and lines in the bridge's log. */
  report: AuthReport;
  /** Told every token, client secret and authorization code this server's OAuth handles, to keep them out of messages. */
  onSecrets?: (values: string[]) => void;
}

/** The part of a server's lifecycle report OAuth writes to. */
interface AuthReport {
  emit: EventSink;
  log(level: LogLevel, event: string, fields: Record<string, unknown>): void;
}

/** One dispatcher for every sign-in's requests (metadata, registration, tokens), made at the first. */
let oauthDispatcher: Dispatcher | undefined;
const oauthFetch: FetchLike = (url, init) =>
  undiciFetch(url, {
    ...(init as RequestInit),
    dispatcher: (oauthDispatcher ??= dispatcherFor()),
  }) as unknown as Promise<Response>;

/** What a connection's transports need for OAuth: the provider they ask for tokens, and the middleware on their fetch. */
export interface TransportAuth {
  provider: OAuthClientProvider;
  middleware: Middleware;
}

export class ServerAuth {
  private session?: OAuthSession;
  /** A handler given for one explicit sign-in (`/mcp auth`), used before the session's own. */
  private override?: SignInHandler;
  /** Why pi 1.x's sign-in for the server was not taken over, when that is something the user should fix. */
  private importWarning?: string;
  /** pi 1.x's file, when it holds a sign-in for the server that the last sign-out here left in place. */
  piSignInKept?: string;
  /** Set by a connect that had all the sign-ins it may wait for: another is only recorded as needed, as when nobody can. */
  signInsHeld = false;

  constructor(private readonly options: ServerAuthOptions) {}

  /** OAuth is on for this server (its config allows it and tokens can be stored). */
  get configured(): boolean {
    return this.options.settings !== undefined && this.options.store !== undefined;
  }

  /** OAuth is in use and offered: the server publishes its metadata, or a sign-in got as far as the page. */
  get offered(): boolean {
    const provider = this.session?.provider;
    const signingIn = provider instanceof BridgeOAuthProvider && provider.pending !== undefined;
    return !!provider && (this.machine || provider.metadataFound || provider.signInRequired || signingIn);
  }

  /** Tokens are stored for the URL in use. */
  get hasTokens(): boolean {
    const url = this.session?.serverUrl;
    return url !== undefined && this.options.store?.tokens(this.options.server, url) !== undefined;
  }

  /** The last connect needed a sign-in that nobody could do. */
  get signInRequired(): boolean {
    return this.session?.provider.signInRequired === true;
  }

  /**
   * Makes OAuth ready for `serverUrl` (when it is on); what the transports of a connection to it then use.
   * `clientSecret` is what a `!command` client secret printed for this connection.
   */
  prepare(serverUrl: string, clientSecret?: string): TransportAuth | undefined {
    const { settings, store } = this.options;
    if (!settings || !store) return undefined;
    if (this.session?.serverUrl !== serverUrl || this.session.clientSecret !== clientSecret) {
      this.session = new OAuthSession({
        server: this.options.server,
        serverUrl,
        settings,
        clientSecret,
        env: this.options.env,
        projectRoot: this.options.projectRoot,
        store,
        signIn: () => (this.signInsHeld ? undefined : (this.override ?? this.options.signIn?.())),
        signInTimeoutMs: this.options.signInTimeoutMs,
        tokenTimeoutMs: this.options.tokenTimeoutMs,
        onSecrets: this.options.onSecrets,
        // A sign-in the user asked for gets tokens of its own, not pi's.
        mayImport: () => this.override === undefined,
        onImport: (outcome) => this.imported(outcome),
        // Token requests go through undici, as the transports' requests do, and through pi's proxy as they do.
        fetch: oauthFetch,
      });
    }
    return { provider: this.session.provider, middleware: this.session.middleware };
  }

  /**
   * What the user should know about this server's OAuth: a file of pi 1.x's sign-ins that was not trusted or not
   * understood, while the server has no sign-in of its own.
   */
  get warnings(): string[] {
    const { store, server } = this.options;
    const url = this.session?.serverUrl;
    if (!this.importWarning || (url && store?.tokens(server, url))) return [];
    return [this.importWarning];
  }

  private imported(outcome: PiImportOutcome): void {
    this.importWarning = undefined;
    const { report } = this.options;
    if (outcome.kind === "imported") {
      report.log("info", "auth.imported", { from: outcome.file, refreshable: outcome.refreshable });
      report.emit("mcp.auth.imported", { from: outcome.file, refreshable: outcome.refreshable });
    } else if (outcome.kind === "unusable") {
      report.log("info", "auth.import.skipped", { from: outcome.file, reason: outcome.reason });
    } else if (outcome.kind === "ignored") {
      this.importWarning = outcome.warning;
      report.log("warn", "auth.import.ignored", { from: outcome.file, warning: outcome.warning });
    }
  }

  /** Whether `error` is the server asking for (new) authorization, which a sign-in can answer. */
  canSignInAfter(error: unknown, signal?: AbortSignal): boolean {
    if (!this.offered || signal?.aborted) return false;
    // A machine client also gets a new token when the SDK's own attempt at the token endpoint failed on the way.
    return isUnauthorized(error) || (this.machine && isTokenEndpointError(error));
  }

  /** OAuth with the client's own credentials or a workload's JWT: tokens come without a sign-in. */
  get machine(): boolean {
    return isMachineGrant(this.options.settings?.grantType);
  }

  /** What to tell the user when the server refuses its tokens: sign in again, or (a machine client) check the client. */
  get refusedMessage(): string {
    const { server, settings } = this.options;
    if (!this.machine) return needsSignInMessage(server);
    return `MCP server '${server}' refused the access token its authorization server issued to client '${settings?.clientId ?? ""}' (a new one as well): check what the client may access there.`;
  }

  /** After a request met `canSignInAfter`: waits for the sign-in the SDK started, or throws saying what to do. */
  async completeSignIn(signal?: AbortSignal): Promise<void> {
    const { report } = this.options;
    await this.session?.completeSignIn((channel, payload) => report.emit(channel, payload), signal);
  }

  /** Ends a sign-in under way that nobody will wait for (its connect gave up), so the next one starts afresh. */
  async abandonSignIn(): Promise<void> {
    await this.session?.provider.finishSignIn();
  }

  /** Runs `connect` with the user's own sign-in handler first in line, after dropping the stored tokens. */
  async signInWith<T>(handler: SignInHandler, connect: () => Promise<T>): Promise<T> {
    await this.options.store?.deleteTokens(this.options.server);
    // A sign-in still waiting (its page closed, say) gives way: joined, it would show no page of its own.
    await this.abandonSignIn();
    this.override = handler;
    try {
      return await connect();
    } finally {
      this.override = undefined;
    }
  }

  /**
   * Forgets the tokens and client registration; true if anything was stored. pi 1.x's sign-in for the server at
   * `serverUrl` (or the URL in use) stays in pi's file, and is not taken over again.
   */
  async forget(serverUrl?: string): Promise<boolean> {
    const { store, server } = this.options;
    const url = this.session?.serverUrl ?? serverUrl;
    const removed = (await store?.logout(server)) ?? false;
    this.piSignInKept = store && url ? await declinePiSignIn(store, server, url) : undefined;
    this.session = undefined;
    return removed;
  }
}
