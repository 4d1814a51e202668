/**
 * A remote server's `auth` field: whether the bridge signs in with OAuth, and with which client, endpoints, scopes
 * and redirect port.
 */
import { clip } from "../../common/text.ts";
import { isObject, type JsonObject } from "../../common/values.ts";
import { DEFAULT_OAUTH_CALLBACK_PORT } from "../defaults.ts";
import type { OAuthSettings } from "../types.ts";
import { checkUrl } from "./endpoint.ts";

const OAUTH_FIELDS = new Set(["type", "clientId", "clientSecret", "authorizationUrl", "tokenUrl", "scopes", "scope", "callbackPort", "clientMetadataUrl"]);

/** The OAuth settings, or undefined when OAuth is off; a local server may only say so (`false`, `"none"`). */
export function validateAuth(entry: JsonObject, local: boolean, headers: Record<string, string>, errors: string[]): OAuthSettings | undefined {
  if (!local) return oauthSettings(entry, headers, errors);
  if (entry.auth !== undefined && entry.auth !== null && entry.auth !== false && entry.auth !== "none") errors.push("`auth` applies to remote (url) servers only");
  return undefined;
}

/**
 * A remote server's OAuth settings from `auth`: `false`/`"none"` turns OAuth off, `true`/`"oauth"` or an object turns
 * it on; without `auth` it is on unless a static `Authorization` header is configured.
 */
function oauthSettings(entry: JsonObject, headers: Record<string, string>, errors: string[]): OAuthSettings | undefined {
  const auth = entry.auth;
  const defaults: OAuthSettings = { callbackPort: DEFAULT_OAUTH_CALLBACK_PORT };
  if (auth === undefined || auth === null) {
    return Object.keys(headers).some((h) => h.toLowerCase() === "authorization") ? undefined : defaults;
  }
  if (auth === false || auth === "none") return undefined;
  if (auth === true || auth === "oauth") return defaults;
  if (!isObject(auth)) {
    errors.push('`auth` must be "oauth", false, or an object with `clientId`, `scopes`, `callbackPort` …');
    return undefined;
  }
  for (const key of Object.keys(auth)) if (!OAUTH_FIELDS.has(key)) errors.push(`unknown field \`auth.${clip(key, 60)}\``);
  if (auth.type !== undefined && auth.type !== "oauth") errors.push('`auth.type` must be "oauth"');
  const settings: OAuthSettings = { ...defaults };
  const text = (field: string): string | undefined => {
    const value = auth[field];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "string" || value.trim() === "") {
      errors.push(`\`auth.${field}\` must be a non-empty string`);
      return undefined;
    }
    return value;
  };
  settings.clientId = text("clientId");
  settings.clientSecret = text("clientSecret");
  settings.authorizationUrl = text("authorizationUrl");
  settings.tokenUrl = text("tokenUrl");
  settings.clientMetadataUrl = text("clientMetadataUrl");
  for (const field of ["authorizationUrl", "tokenUrl"] as const) {
    const url = settings[field];
    const problem = url === undefined ? undefined : checkUrl(url);
    if (problem) errors.push(problem.replace("`url`", `\`auth.${field}\``));
  }
  if ((settings.authorizationUrl === undefined) !== (settings.tokenUrl === undefined)) {
    errors.push("`auth.authorizationUrl` and `auth.tokenUrl` go together: set both, or neither to use discovery");
  }
  if (settings.clientSecret !== undefined && settings.clientId === undefined) errors.push("`auth.clientSecret` needs `auth.clientId`");
  if (settings.clientMetadataUrl !== undefined && !/^https:\/\/[^/]+\/./.test(settings.clientMetadataUrl)) {
    errors.push("`auth.clientMetadataUrl` must be an https URL with a path");
  }
  const scopes = auth.scopes ?? auth.scope;
  if (typeof scopes === "string") settings.scopes = scopes.split(/\s+/).filter(Boolean);
  else if (Array.isArray(scopes) && scopes.every((x) => typeof x === "string")) settings.scopes = scopes as string[];
  else if (scopes !== undefined) errors.push("`auth.scopes` must be an array of strings (or one space-separated string)");
  if (auth.callbackPort !== undefined) {
    const port = auth.callbackPort;
    if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535) errors.push("`auth.callbackPort` must be a port number, 1 to 65535");
    else settings.callbackPort = port;
  }
  return settings;
}
