/**
 * How this machine reaches the network, as pi's environment says it: the proxies, the certificate authorities and the
 * package registries. A local server gets these besides the SDK's safe few (`HOME`, `PATH`, …) and its own `env`,
 * never the rest of pi's environment (API keys and tokens stay pi's). Behind a company proxy or a TLS-inspecting
 * gateway, npx cannot download a server without them (npm retries the registry for a minute, then fails with
 * `SELF_SIGNED_CERT_IN_CHAIN` or no answer), nor can a server reach its API; every other program the user runs from
 * that shell has them.
 */

/** Read in any case (`https_proxy` is as common as `HTTPS_PROXY`, and curl and Python prefer it). */
const PROXIES = ["http_proxy", "https_proxy", "all_proxy", "no_proxy"];

/** npm's settings of where and how to download (npm reads `npm_config_*` in any case); no token is among them. */
const NPM_SETTINGS = ["registry", "cafile", "proxy", "https_proxy", "noproxy"].map((name) => `npm_config_${name}`);

/** Node's, OpenSSL's, curl's, Python's and uv's trusted CAs, and uv's and pip's package index. */
const EXACT = new Set([
  "NODE_EXTRA_CA_CERTS",
  "NODE_USE_SYSTEM_CA",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "CURL_CA_BUNDLE",
  "REQUESTS_CA_BUNDLE",
  "UV_NATIVE_TLS",
  "UV_INDEX_URL",
  "UV_DEFAULT_INDEX",
  "PIP_INDEX_URL",
  "PIP_CERT",
]);

const ANY_CASE = new Set([...PROXIES, ...NPM_SETTINGS]);

/** The variables of `env` (pi's environment) that say how to reach the network, the empty ones left out. */
export function networkEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const [name, value] of Object.entries(env))
    if (value && (EXACT.has(name) || ANY_CASE.has(name.toLowerCase()))) picked[name] = value;
  return picked;
}

/**
 * `env` without a proxy of its own: a sandboxed server has no network but the sandbox's proxy, whose variables the
 * sandbox sets (an npm proxy setting would win over them, and lead nowhere).
 */
export function withoutProxies(env: Record<string, string>): Record<string, string> {
  const proxy = (name: string) => PROXIES.includes(name) || (NPM_SETTINGS.includes(name) && /proxy$/.test(name));
  return Object.fromEntries(Object.entries(env).filter(([name]) => !proxy(name.toLowerCase())));
}
