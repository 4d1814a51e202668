/**
 * Kept here: the SDK takes one redirect URL; the ports to try and their URIs are the client's.
 *
 * Where the OAuth redirect comes back to: the loopback address and path the callback server listens on, the ports it
 * tries, and the redirect URI for each. By default `http://127.0.0.1:<port>/callback` on `callbackPort` or one of the
 * next five (all registered, so a taken port does not break a registration). A `callbackUrl` (pi 1.x's, for a client
 * registered with another URI) is sent exactly as written; one without a port gets the port put in, as RFC 8252
 * allows for loopback redirects. Pure.
 */
import { DEFAULT_OAUTH_CALLBACK_PORT } from "../config/defaults.ts";

/** The port, then the next 5: another pi (or anything else) may hold the first. */
export const CALLBACK_PORT_TRIES = 6;
export const CALLBACK_PATH = "/callback";
export const MAX_PORT = 65_535;

export interface RedirectPlan {
  /** The address the callback server listens on: an IP literal, never a name that may resolve elsewhere. */
  host: string;
  /** The path a redirect must come to. */
  path: string;
  /** The ports to try, in order; 0 lets the system choose. */
  ports: number[];
  /** The redirect URI when the server listens on `port`. */
  uri(port: number): string;
}

/** `callbackUrl` split where a port goes: `http://localhost` + `/cb`. */
const AUTHORITY = /^(http:\/\/(?:\[[^\]]*\]|[^/:?#]*))(?::(\d*))?(.*)$/i;

/** The plan for `callbackPort` (default 9876) and, if set, `callbackUrl` (already validated as loopback http). */
export function redirectPlan(settings: { callbackPort?: number; callbackUrl?: string }): RedirectPlan {
  const first = settings.callbackPort ?? DEFAULT_OAUTH_CALLBACK_PORT;
  // Port 0 lets the system choose, so one try is enough.
  const ports =
    first === 0
      ? [0]
      : Array.from({ length: Math.max(0, Math.min(CALLBACK_PORT_TRIES, MAX_PORT - first + 1)) }, (_, i) => first + i);
  const written = settings.callbackUrl;
  const match = written === undefined ? null : AUTHORITY.exec(written);
  if (!written || !match)
    return { host: "127.0.0.1", path: CALLBACK_PATH, ports, uri: (port) => `http://127.0.0.1:${port}${CALLBACK_PATH}` };
  const url = new URL(written);
  // `localhost` is listened for on 127.0.0.1, where browsers try it too.
  const host = url.hostname === "[::1]" ? "::1" : "127.0.0.1";
  // The port as written: `url.port` is empty for a written default port (`:80`).
  const [, origin, port, rest] = match;
  if (port) return { host, path: url.pathname, ports: [Number(port)], uri: () => written };
  return { host, path: url.pathname, ports, uri: (port) => `${origin}:${port}${rest}` };
}
