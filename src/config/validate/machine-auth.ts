/**
 * The machine part of a remote server's `auth` block, where the bridge never opens a browser:
 * `"grantType": "client_credentials"`, tokens for the client itself (a CI job, a script) proven with a client secret
 * (`client_secret_basic`, `client_secret_post`) or a signed JWT (`private_key_jwt`, RFC 7523 section 2.2); or RFC
 * 7523's JWT bearer grant, a workload identity token (`assertion`, `assertionFile`) exchanged for an access token.
 * The names follow the OAuth parameters they set (`grant_type`, `token_endpoint_auth_method`, `assertion`), written
 * in the block's camelCase.
 */
import { quoteValue } from "../../common/text.ts";
import { checkUrlField } from "./endpoint.ts";
import type { JsonObject } from "../../common/values.ts";
import {
  ASYMMETRIC_JWS_ALGS,
  type GrantType,
  JWT_BEARER_GRANT,
  type MachineAuthMethod,
  type OAuthSettings,
} from "../types.ts";

const GRANT_TYPES: readonly GrantType[] = ["authorization_code", "client_credentials", JWT_BEARER_GRANT];
const METHODS: readonly MachineAuthMethod[] = ["client_secret_basic", "client_secret_post", "private_key_jwt"];
/** Keys of enterprise-managed authorization: where the user's ID token is exchanged for an authorization grant. */
const ENTERPRISE_FIELDS = [
  "idpUrl",
  "idpTokenUrl",
  "idpClientId",
  "idpClientSecret",
  "idToken",
  "idTokenFile",
] as const;
/** Keys of the machine grant, which mean nothing to a browser sign-in. */
export const MACHINE_FIELDS = [
  "grantType",
  "tokenEndpointAuthMethod",
  "privateKeyFile",
  "signingAlgorithm",
  "keyId",
  "assertion",
  "assertionFile",
  ...ENTERPRISE_FIELDS,
] as const;
/** Keys of a browser sign-in, which a machine client has no use for. */
const BROWSER_FIELDS = [
  "callbackPort",
  "callbackUrl",
  "clientRegistration",
  "clientMetadataUrl",
  "clientName",
] as const;

type MachineSettings = Pick<OAuthSettings, (typeof MACHINE_FIELDS)[number]>;

type TextKey = (key: (typeof MACHINE_FIELDS)[number]) => string | undefined;

/** A path the bridge can find wherever pi runs: absolute, in the home directory, or from a variable. */
function isRootedPath(file: string): boolean {
  return /^(~[/\\]|\$\{|\/|[A-Za-z]:[/\\])/.test(file);
}

/**
 * The machine settings of `auth` (nothing for a browser sign-in); problems go to `errors`, each saying what to change.
 * `text` reads a key of `auth` as ./oauth.ts reads its own: a non-empty string, or undefined after an error.
 */
export function machineSettings(auth: JsonObject, field: string, text: TextKey, errors: string[]): MachineSettings {
  const grant = auth.grantType;
  if (grant !== undefined && grant !== null && !GRANT_TYPES.includes(grant as GrantType)) {
    errors.push(
      `\`${field}.grantType\` must be "authorization_code" (sign in in a browser, the default), "client_credentials" ` +
        `(the client's own credentials, no browser) or "${JWT_BEARER_GRANT}" (a workload's JWT, no browser) (got ${quoteValue(grant)})`,
    );
    return {};
  }
  if (grant !== "client_credentials" && grant !== JWT_BEARER_GRANT) {
    for (const key of MACHINE_FIELDS.slice(1)) {
      if (auth[key] !== undefined)
        errors.push(
          `\`${field}.${key}\` is for \`"grantType": "client_credentials"\` or "${JWT_BEARER_GRANT}"; add one, or remove it`,
        );
    }
    return grant === "authorization_code" ? { grantType: grant } : {};
  }
  const bearer = grant === JWT_BEARER_GRANT;
  for (const key of BROWSER_FIELDS) {
    if (auth[key] !== undefined)
      errors.push(
        `\`${field}.${key}\` is for signing in in a browser, which a "${grant}" client never does; remove it`,
      );
  }
  if (auth.authorizationUrl !== undefined || auth.tokenUrl !== undefined)
    errors.push(
      `\`${field}.authorizationUrl\`/\`tokenUrl\` are for signing in in a browser; for "${grant}" use discovery, or \`${field}.authServerMetadataUrl\``,
    );
  const settings: MachineSettings = { grantType: grant };
  const hasSecret = auth.clientSecret !== undefined && auth.clientSecret !== null;
  const keyFile = text("privateKeyFile");
  // With a secret, ./oauth.ts already says the secret needs a client id.
  if ((auth.clientId === undefined || auth.clientId === null) && !hasSecret)
    errors.push(
      `\`${field}.grantType\` "${grant}" needs \`${field}.clientId\`: the client registered for this machine with the authorization server`,
    );
  const assertion = text("assertion");
  const assertionFile = text("assertionFile");
  const enterprise = enterpriseSettings(auth, field, text, errors);
  const sources = [assertion, assertionFile, enterprise].filter((source) => source !== undefined).length;
  if (!bearer && sources > 0)
    errors.push(
      `\`${field}.assertion\`, \`${field}.assertionFile\` and the \`${field}.idp…\`/\`idToken\` keys are for \`"grantType": "${JWT_BEARER_GRANT}"\``,
    );
  else if (bearer && sources !== 1)
    errors.push(
      `\`${field}.grantType\` "${JWT_BEARER_GRANT}" needs one of \`${field}.assertion\` (the workload's JWT, from a \${VAR}), ` +
        `\`${field}.assertionFile\` (a file holding it, read at each token request) or an identity provider to exchange the user's ID token at ` +
        `(\`${field}.idpUrl\` or \`idpTokenUrl\`, \`idpClientId\`, \`idToken\` or \`idTokenFile\`)`,
    );
  for (const key of ["assertionFile", "idTokenFile"] as const) {
    // Read above, where a value that is no path was said to be wrong: only where a path points is checked here.
    const file = auth[key];
    if (typeof file === "string" && file.trim() !== "" && !isRootedPath(file))
      errors.push(
        `\`${field}.${key}\` must be an absolute path, or start with ~/ or a \${VAR} (got ${quoteValue(file)})`,
      );
  }
  if (bearer && assertion !== undefined) settings.assertion = assertion;
  if (bearer && assertionFile !== undefined) settings.assertionFile = assertionFile;
  if (bearer && enterprise !== undefined) Object.assign(settings, enterprise);
  // The JWT bearer grant may authenticate the client as well, or send only its id (a public client).
  if (!bearer && !hasSecret && keyFile === undefined)
    errors.push(
      `\`${field}.grantType\` "client_credentials" needs \`${field}.clientSecret\` (client_secret_basic or client_secret_post) ` +
        `or \`${field}.privateKeyFile\` (private_key_jwt)`,
    );
  if (hasSecret && keyFile !== undefined)
    errors.push(`\`${field}.clientSecret\` and \`${field}.privateKeyFile\` are two ways to prove the client; keep one`);
  const method = text("tokenEndpointAuthMethod");
  if (method !== undefined && !METHODS.includes(method as MachineAuthMethod))
    errors.push(
      `\`${field}.tokenEndpointAuthMethod\` must be "client_secret_basic", "client_secret_post" or "private_key_jwt" (got ${quoteValue(method)})`,
    );
  else if (method === "private_key_jwt" && hasSecret)
    errors.push(
      `\`${field}.tokenEndpointAuthMethod\` "private_key_jwt" signs with \`${field}.privateKeyFile\`, not \`${field}.clientSecret\``,
    );
  else if (method !== undefined && method !== "private_key_jwt" && keyFile !== undefined)
    errors.push(
      `\`${field}.tokenEndpointAuthMethod\` "${method}" sends \`${field}.clientSecret\`; with \`${field}.privateKeyFile\` it is "private_key_jwt"`,
    );
  else if (method !== undefined) settings.tokenEndpointAuthMethod = method as MachineAuthMethod;
  else if (keyFile !== undefined) settings.tokenEndpointAuthMethod = "private_key_jwt";
  const algorithm = text("signingAlgorithm");
  const keyId = text("keyId");
  if ((algorithm !== undefined || keyId !== undefined) && keyFile === undefined)
    errors.push(`\`${field}.signingAlgorithm\` and \`${field}.keyId\` go with \`${field}.privateKeyFile\``);
  if (algorithm !== undefined && !(ASYMMETRIC_JWS_ALGS as readonly string[]).includes(algorithm))
    errors.push(
      `\`${field}.signingAlgorithm\` must be one of ${ASYMMETRIC_JWS_ALGS.join(", ")} (got ${quoteValue(algorithm)}); or leave it out to take the key's own`,
    );
  if (keyFile !== undefined && !isRootedPath(keyFile))
    errors.push(
      `\`${field}.privateKeyFile\` must be an absolute path, or start with ~/ or a \${VAR} (got ${quoteValue(keyFile)})`,
    );
  if (keyFile !== undefined) settings.privateKeyFile = keyFile;
  if (algorithm !== undefined) settings.signingAlgorithm = algorithm;
  if (keyId !== undefined) settings.keyId = keyId;
  return settings;
}

/**
 * The identity provider of enterprise-managed authorization, when any of its keys is written: where (`idpUrl`, its
 * issuer, or `idpTokenUrl`), as which client, and the user's ID token (`idToken` from a variable, or `idTokenFile`).
 */
function enterpriseSettings(
  auth: JsonObject,
  field: string,
  text: TextKey,
  errors: string[],
): Partial<Record<(typeof ENTERPRISE_FIELDS)[number], string>> | undefined {
  if (!ENTERPRISE_FIELDS.some((key) => auth[key] !== undefined)) return undefined;
  const settings: Partial<Record<(typeof ENTERPRISE_FIELDS)[number], string>> = {};
  for (const key of ENTERPRISE_FIELDS) {
    const value = text(key);
    if (value !== undefined) settings[key] = value;
  }
  if ((settings.idpUrl === undefined) === (settings.idpTokenUrl === undefined))
    errors.push(
      `enterprise-managed authorization needs one of \`${field}.idpUrl\` (the identity provider's issuer) or \`${field}.idpTokenUrl\` (its token endpoint)`,
    );
  for (const key of ["idpUrl", "idpTokenUrl"] as const) checkUrlField(settings[key], `${field}.${key}`, errors);
  if (settings.idpClientId === undefined)
    errors.push(
      `enterprise-managed authorization needs \`${field}.idpClientId\`: the client registered with the identity provider`,
    );
  if ((settings.idToken === undefined) === (settings.idTokenFile === undefined))
    errors.push(
      `enterprise-managed authorization needs one of \`${field}.idToken\` (the user's ID token, from a \${VAR}) or \`${field}.idTokenFile\``,
    );
  return settings;
}
