/**
 * The sign-ins pi 1.x's built-in MCP keeps in `<agent dir>/mcp-auth.json`, read as data (pure; the file is read by
 * ./pi-sign-in-import.ts). Learned from pi 1.6's source, not shared with it:
 *
 * - The file is one JSON object. A server's state is under `mcp__<name>|<url>`, where `<name>` has each `-` replaced by
 *   `_` and `<url>` is the server URL as the WHATWG URL parser writes it (`new URL(url).href`: scheme and host in lower
 *   case, a default port dropped, an empty path written `/`). Older pi versions keyed it by `<url>` alone; pi moves such
 *   an entry to the first server name that loads it, so it is read here as a fallback.
 * - A state is `{serverUrl, clientInformation?, tokens?, tokensExpireAt?, codeVerifier?, oauthState?, discovery?}`:
 *   `tokens` is the token response (`access_token`, `token_type`, `refresh_token`, `scope`, `expires_in` …),
 *   `tokensExpireAt` the access token's expiry in epoch ms, `clientInformation` a dynamic client registration (pi
 *   stores none for a configured `clientId` or its Client ID Metadata Document), `discovery.authorizationServerUrl` the
 *   authorization server the tokens came from. pi ignores a state whose `serverUrl` is not the server's URL.
 *
 * What can be taken over: the access token, always, until it expires. The refresh token only when the bridge can
 * refresh it as the client it was issued to, at the authorization server it came from: with the registration pi
 * stored, or with the `clientId` of the config; and only when pi recorded that authorization server, so the refresh
 * token is never sent to another one. A sign-in through pi's Client ID Metadata Document (client id
 * `https://pi.dev/oauth/…`) cannot be refreshed here: the bridge would have to present itself as pi.
 */
import { createHash } from "node:crypto";
import type { OAuthClientInformationMixed } from "@modelcontextprotocol/client";
import { isObject, type JsonObject } from "../common/values.ts";
import type { StoredClient, StoredTokens } from "./storage.ts";

/** The keys pi 1.x may keep a server's state under: by name and URL, and the older one by URL alone. */
export function piStateKeys(server: string, serverUrl: string): { key: string; legacyKey: string } | undefined {
  if (!URL.canParse(serverUrl)) return undefined;
  const url = new URL(serverUrl).href;
  return { key: `mcp__${server.replace(/-/g, "_")}|${url}`, legacyKey: url };
}

/** A server's sign-in as pi 1.x stored it, checked. */
export interface PiSignIn {
  serverUrl: string;
  accessToken: string;
  tokenType: string;
  refreshToken?: string;
  scope?: string;
  idToken?: string;
  /** Epoch ms; absent when pi knew no expiry. */
  expiresAt?: number;
  /** pi's dynamic client registration for the server, if it made one. */
  client?: OAuthClientInformationMixed;
  /** The authorization server the tokens came from, if pi recorded it. */
  issuer?: string;
}

/** What the file holds for a server: nothing, something not in pi's format (`problem` says what), or a sign-in. */
export type PiSignInLookup =
  { kind: "none" } | { kind: "invalid"; problem: string } | { kind: "found"; signIn: PiSignIn; fingerprint: string };

/** pi treats `null` and `""` as absent, as servers send them for fields they have no value for. */
function optionalString(value: unknown): string | undefined | false {
  if (value === undefined || value === null || value === "") return undefined;
  return typeof value === "string" ? value : false;
}

function httpUrl(value: unknown): string | undefined {
  if (typeof value !== "string" || !URL.canParse(value)) return undefined;
  const url = new URL(value);
  return url.protocol === "https:" || url.protocol === "http:" ? value : undefined;
}

function clientOf(value: unknown): OAuthClientInformationMixed | undefined | false {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value) || typeof value.client_id !== "string" || value.client_id === "") return false;
  if (optionalString(value.client_secret) === false) return false;
  const uris = value.redirect_uris;
  if (uris !== undefined && !(Array.isArray(uris) && uris.every((uri) => typeof uri === "string"))) return false;
  return value as OAuthClientInformationMixed;
}

/** The checked sign-in of a state, or what is wrong with it. */
function signInOf(state: JsonObject, serverUrl: string): PiSignIn | string {
  const tokens = state.tokens;
  if (!isObject(tokens)) return "its tokens are not an object";
  if (typeof tokens.access_token !== "string" || tokens.access_token === "") return "it has no access token";
  if (typeof tokens.token_type !== "string" || tokens.token_type === "") return "it has no token type";
  const refreshToken = optionalString(tokens.refresh_token);
  const scope = optionalString(tokens.scope);
  const idToken = optionalString(tokens.id_token);
  if (refreshToken === false || scope === false || idToken === false) return "a token field is not a string";
  const expiresAt = state.tokensExpireAt;
  if (expiresAt !== undefined && (typeof expiresAt !== "number" || !Number.isFinite(expiresAt)))
    return "its expiry is not a number";
  const client = clientOf(state.clientInformation);
  if (client === false) return "its client registration has no client id";
  const signIn: PiSignIn = { serverUrl, accessToken: tokens.access_token, tokenType: tokens.token_type };
  if (refreshToken !== undefined) signIn.refreshToken = refreshToken;
  if (scope !== undefined) signIn.scope = scope;
  if (idToken !== undefined) signIn.idToken = idToken;
  if (expiresAt !== undefined) signIn.expiresAt = expiresAt;
  if (client !== undefined) signIn.client = client;
  const issuer = isObject(state.discovery) ? httpUrl(state.discovery.authorizationServerUrl) : undefined;
  if (issuer !== undefined) signIn.issuer = issuer;
  return signIn;
}

/**
 * A short digest of a sign-in's tokens: tells a sign-in already taken over (or signed out of) from a new one pi made
 * since, without keeping the tokens themselves.
 */
function fingerprintOf(signIn: PiSignIn): string {
  return createHash("sha256")
    .update(JSON.stringify([signIn.accessToken, signIn.refreshToken ?? ""]))
    .digest("hex")
    .slice(0, 32);
}

/**
 * The sign-in `text` (the file's content) holds for `server` at `serverUrl`. A state pi would not use for that URL, or
 * one without tokens (a sign-in that never finished), is none; a file that is not a JSON object, or a state with
 * tokens in another shape, is invalid. Nothing of the file's content is put in `problem`.
 */
export function findPiSignIn(text: string, server: string, serverUrl: string): PiSignInLookup {
  const keys = piStateKeys(server, serverUrl);
  if (!keys) return { kind: "none" };
  let states: unknown;
  try {
    states = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    return { kind: "invalid", problem: "it is not valid JSON" };
  }
  if (!isObject(states)) return { kind: "invalid", problem: "it is not a JSON object" };
  const key = [keys.key, keys.legacyKey].find((candidate) => Object.hasOwn(states, candidate));
  const state = key === undefined ? undefined : states[key];
  if (state === undefined) return { kind: "none" };
  if (!isObject(state)) return { kind: "invalid", problem: "the server's entry is not an object" };
  if (state.serverUrl !== keys.legacyKey || state.tokens === undefined) return { kind: "none" };
  const signIn = signInOf(state, keys.legacyKey);
  if (typeof signIn === "string")
    return { kind: "invalid", problem: `the server's entry is not in pi's format: ${signIn}` };
  return { kind: "found", signIn, fingerprint: fingerprintOf(signIn) };
}

/** What the bridge takes over from a sign-in: its tokens and client in the bridge's stored form, or why nothing. */
export type PiSignInPlan =
  | { kind: "import"; tokens: StoredTokens; client?: StoredClient; refreshable: boolean }
  | { kind: "unusable"; reason: string };

/**
 * The bridge's stored form of `signIn`, for `serverUrl` (the URL as the bridge's config has it). `configuredClient`:
 * the server's config names a `clientId`, which is then the client pi signed in as, unless pi stored a registration.
 * `from` is recorded with an imported registration, which the provider uses for refreshes only (it was registered
 * with pi's redirect URIs).
 */
export function planPiImport(
  signIn: PiSignIn,
  options: { serverUrl: string; configuredClient: boolean; now: number; from: string },
): PiSignInPlan {
  const { serverUrl, now } = options;
  const savedAt = new Date(now).toISOString();
  const refreshable =
    signIn.refreshToken !== undefined &&
    signIn.issuer !== undefined &&
    (signIn.client !== undefined || options.configuredClient);
  const expired = signIn.expiresAt !== undefined && signIn.expiresAt <= now;
  if (expired && !refreshable) {
    const why =
      signIn.refreshToken === undefined
        ? "it has no refresh token"
        : signIn.issuer === undefined
          ? "pi did not record which authorization server issued it"
          : "it was made with pi's own client identity (its Client ID Metadata Document)";
    return { kind: "unusable", reason: `the access token has expired and the bridge cannot refresh it: ${why}` };
  }
  const tokens: StoredTokens = { accessToken: signIn.accessToken, tokenType: signIn.tokenType, serverUrl, savedAt };
  if (refreshable) tokens.refreshToken = signIn.refreshToken;
  if (signIn.expiresAt !== undefined) tokens.expiresAt = signIn.expiresAt;
  if (signIn.scope !== undefined) tokens.scopes = signIn.scope.split(/\s+/).filter((scope) => scope !== "");
  if (signIn.idToken !== undefined) tokens.idToken = signIn.idToken;
  if (signIn.issuer !== undefined) tokens.issuer = signIn.issuer;
  if (!refreshable || !signIn.client) return { kind: "import", tokens, refreshable };
  const client: StoredClient = {
    serverUrl,
    savedAt,
    client: { ...signIn.client, issuer: signIn.issuer },
    importedFrom: options.from,
  };
  return { kind: "import", tokens, client, refreshable };
}
