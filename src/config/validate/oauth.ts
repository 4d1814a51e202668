/**
 * A remote server's `auth` field — `oauth` in pi 1.x's configs, read the same — : whether the bridge signs in with
 * OAuth, and with which client, endpoints, scopes and redirect.
 */
import { shown } from "../../common/terminal-text.ts";
import { quoteValue } from "../../common/text.ts";
import { isObject, type JsonObject } from "../../common/values.ts";
import { DEFAULT_OAUTH_CALLBACK_PORT } from "../defaults.ts";
import type { ClientRegistration, OAuthSettings } from "../types.ts";
import { checkUrlField } from "./endpoint.ts";
import { MACHINE_FIELDS, machineSettings } from "./machine-auth.ts";

const OAUTH_FIELDS = new Set([
  ..."type clientId clientSecret authorizationUrl tokenUrl scopes scope callbackPort clientMetadataUrl".split(" "),
  // pi 1.x's
  ..."callbackUrl clientName clientRegistration authServerMetadataUrl dpop".split(" "),
  ...MACHINE_FIELDS,
]);
const REGISTRATIONS: readonly ClientRegistration[] = ["auto", "dcr", "cimd"];
/** Where a redirect URI or a trusted metadata document may be over plain http, as pi 1.x has it. */
const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"];

/** The OAuth settings, or undefined when OAuth is off; a local server may only say so (`false`, `"none"`). */
export function validateAuth(
  entry: JsonObject,
  local: boolean,
  headers: Record<string, string>,
  errors: string[],
): OAuthSettings | undefined {
  const both = entry.auth !== undefined && entry.oauth !== undefined;
  if (both)
    errors.push("has both `auth` and `oauth`: they are one setting (`oauth` is pi 1.x's name for it); keep one");
  const field = entry.auth === undefined && entry.oauth !== undefined ? "oauth" : "auth";
  const auth = entry[field];
  if (!local) return both ? undefined : oauthSettings(auth, field, headers, errors);
  if (auth !== undefined && auth !== null && auth !== false && auth !== "none")
    errors.push(`\`${field}\` applies to remote (url) servers only`);
  return undefined;
}

/**
 * A remote server's OAuth settings from `auth` (or `oauth`): `false`/`"none"` turns OAuth off, `true`/`"oauth"` or
 * an object turns it on; without it OAuth is on unless a static `Authorization` header is configured.
 */
function oauthSettings(
  auth: unknown,
  field: string,
  headers: Record<string, string>,
  errors: string[],
): OAuthSettings | undefined {
  const defaults: OAuthSettings = { callbackPort: DEFAULT_OAUTH_CALLBACK_PORT };
  if (auth === undefined || auth === null)
    return Object.keys(headers).some((h) => h.toLowerCase() === "authorization") ? undefined : defaults;
  if (auth === false || auth === "none") return undefined;
  if (auth === true || auth === "oauth") return defaults;
  if (!isObject(auth)) {
    errors.push(`\`${field}\` must be "oauth", false, or an object with \`clientId\`, \`scopes\`, \`callbackPort\` …`);
    return undefined;
  }
  for (const key of Object.keys(auth)) {
    if (key === "provider")
      errors.push(
        `\`${field}.provider\` (pi 1.x's token of a /login provider) is not supported here; send the token in \`headers\` with a \`\${VAR}\` or a \`!command\``,
      );
    else if (!OAUTH_FIELDS.has(key)) errors.push(`unknown field \`${field}.${shown(key, 60, "line")}\``);
  }
  if (auth.type !== undefined && auth.type !== null && auth.type !== "oauth")
    errors.push(`\`${field}.type\` must be "oauth"`);
  const settings: OAuthSettings = { ...defaults };
  const text = (key: string): string | undefined => {
    const value = auth[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === "string" && value.trim() !== "") return value;
    errors.push(`\`${field}.${key}\` must be a non-empty string`);
    return undefined;
  };
  settings.clientId = text("clientId");
  settings.clientSecret = text("clientSecret");
  settings.authorizationUrl = text("authorizationUrl");
  settings.tokenUrl = text("tokenUrl");
  settings.clientMetadataUrl = text("clientMetadataUrl");
  const clientName = text("clientName");
  if (clientName !== undefined) settings.clientName = clientName;
  for (const key of ["authorizationUrl", "tokenUrl"] as const) checkUrlField(settings[key], `${field}.${key}`, errors);
  if ((settings.authorizationUrl === undefined) !== (settings.tokenUrl === undefined))
    errors.push(
      `\`${field}.authorizationUrl\` and \`${field}.tokenUrl\` go together: set both, or neither to use discovery`,
    );
  if (settings.clientSecret !== undefined && settings.clientId === undefined)
    errors.push(`\`${field}.clientSecret\` needs \`${field}.clientId\``);
  // A URL that is all a `${VAR}` is known only at connect time (session.ts fills it in), as for `url`.
  if (settings.clientMetadataUrl !== undefined && !/^(https:\/\/[^/]+\/.|\$\{)/.test(settings.clientMetadataUrl))
    errors.push(`\`${field}.clientMetadataUrl\` must be an https URL with a path`);
  const scopes = auth.scopes ?? auth.scope;
  if (typeof scopes === "string") settings.scopes = scopes.split(/\s+/).filter(Boolean);
  else if (Array.isArray(scopes) && scopes.every((x) => typeof x === "string")) settings.scopes = scopes as string[];
  else if (scopes !== undefined && scopes !== null)
    errors.push(`\`${field}.scopes\` must be an array of strings (or one space-separated string)`);
  if (auth.callbackPort !== undefined && auth.callbackPort !== null) {
    const port = auth.callbackPort;
    if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535)
      errors.push(`\`${field}.callbackPort\` must be a port number, 1 to 65535`);
    else settings.callbackPort = port;
  }
  // pi 1.x's keys, and the machine grant's, are set only when written, so an entry without them reads (and hashes
  // for trust) as before.
  Object.assign(settings, machineSettings(auth, field, text, errors));
  const redirect = callbackUrl(auth, field, errors);
  if (redirect !== undefined) settings.callbackUrl = redirect;
  const registration = clientRegistration(auth, settings, field, errors);
  if (registration !== undefined) settings.clientRegistration = registration;
  const metadata = metadataUrl(auth, settings, field, errors);
  if (metadata !== undefined) settings.authServerMetadataUrl = metadata;
  if (typeof auth.dpop === "boolean") settings.dpop = auth.dpop;
  else if (auth.dpop !== undefined && auth.dpop !== null)
    errors.push(
      `\`${field}.dpop\` must be true (always ask for DPoP-bound tokens) or false (never); leave it out to use DPoP where the authorization server offers it (got ${quoteValue(auth.dpop)})`,
    );
  return settings;
}

/** `callbackUrl`: http on localhost, 127.0.0.1 or [::1], no query or fragment, and a port that agrees with `callbackPort`. */
function callbackUrl(auth: JsonObject, field: string, errors: string[]): string | undefined {
  const value = auth.callbackUrl;
  if (value === undefined || value === null) return undefined;
  const url = typeof value === "string" && URL.canParse(value) ? new URL(value) : undefined;
  if (
    !url ||
    url.protocol !== "http:" ||
    !LOOPBACK_HOSTS.includes(url.hostname) ||
    url.search !== "" ||
    url.hash !== "" ||
    url.username ||
    url.password
  ) {
    errors.push(
      `\`${field}.callbackUrl\` must be an http URL on localhost, 127.0.0.1 or [::1], without a query or fragment (got ${quoteValue(value)})`,
    );
    return undefined;
  }
  // As written: `url.port` is empty for the default port (`:80`).
  const port = /^http:\/\/(?:\[[^\]]*\]|[^/:?#]*):(\d+)/i.exec(value as string)?.[1];
  if (port && Number(port) === 0)
    errors.push(`\`${field}.callbackUrl\` cannot name port 0; leave the port out to use \`${field}.callbackPort\``);
  else if (port && typeof auth.callbackPort === "number" && Number(port) !== auth.callbackPort)
    errors.push(`\`${field}.callbackUrl\` and \`${field}.callbackPort\` name different ports; keep one`);
  return value as string;
}

/**
 * `clientRegistration`. The bridge has no Client ID Metadata Document of its own (pi 1.x uses one on pi.dev), so
 * `cimd` needs the URL of the user's own in `clientMetadataUrl`; and, as in pi 1.x, it cannot go with a client of
 * the config's own (`clientId`) or a name to register under (`clientName`).
 */
function clientRegistration(
  auth: JsonObject,
  settings: OAuthSettings,
  field: string,
  errors: string[],
): ClientRegistration | undefined {
  const value = auth.clientRegistration;
  if (value === undefined || value === null) return undefined;
  if (!REGISTRATIONS.includes(value as ClientRegistration)) {
    errors.push(`\`${field}.clientRegistration\` must be "auto", "dcr" or "cimd" (got ${quoteValue(value)})`);
    return undefined;
  }
  if (value === "cimd") {
    if (settings.clientId !== undefined || settings.clientName !== undefined)
      errors.push(
        `\`${field}.clientRegistration\` "cimd" cannot go with \`${field}.clientId\` or \`${field}.clientName\``,
      );
    else if (settings.clientMetadataUrl === undefined)
      errors.push(
        `\`${field}.clientRegistration\` "cimd" needs \`${field}.clientMetadataUrl\`, the https URL of a Client ID Metadata Document of yours: ` +
          'the bridge has none of its own (pi 1.x uses one on pi.dev); or use "auto" or "dcr"',
      );
  }
  return value as ClientRegistration;
}

/** `authServerMetadataUrl`: https, or http on loopback; it replaces discovery, so it cannot go with configured endpoints. */
function metadataUrl(auth: JsonObject, settings: OAuthSettings, field: string, errors: string[]): string | undefined {
  const value = auth.authServerMetadataUrl;
  if (value === undefined || value === null) return undefined;
  const url = typeof value === "string" && URL.canParse(value) ? new URL(value) : undefined;
  // A URL with a variable in it (its port, say) is checked by the endpoint policy once that is known, at connect time.
  const later = typeof value === "string" && value.includes("${") && /^(https?:\/\/|\$\{)/i.test(value);
  if (!later && !(url?.protocol === "https:" || (url?.protocol === "http:" && LOOPBACK_HOSTS.includes(url.hostname)))) {
    errors.push(
      `\`${field}.authServerMetadataUrl\` must be an https URL, or http on localhost, 127.0.0.1 or [::1] (got ${quoteValue(value)})`,
    );
    return undefined;
  }
  if (settings.authorizationUrl !== undefined)
    errors.push(
      `\`${field}.authServerMetadataUrl\` and \`${field}.authorizationUrl\`/\`tokenUrl\` both replace discovery; keep one`,
    );
  return value as string;
}
