/**
 * Remote servers through pi's proxy. undici, which the bridge's HTTP runs on (as Node's own fetch does), connects
 * straight to a host and ignores `HTTP_PROXY` and `HTTPS_PROXY`; behind a company proxy that is no way out at all. So
 * where pi's environment names a proxy, the bridge's requests follow it and `NO_PROXY`, as curl, npm and Python do. A
 * loopback host is always reached directly (as Go's HTTP client does): a proxy cannot reach this machine's own ports.
 */
import { Agent, type Dispatcher, EnvHttpProxyAgent } from "undici";

const LOOPBACK = ["localhost", "127.0.0.1", "[::1]"];

/** A dispatcher with `options` that goes through pi's proxy where one is named; a plain agent where none is. */
export function dispatcherFor(options: Agent.Options = {}, env = process.env): Dispatcher {
  // An empty lowercase variable turns the proxy off, as for curl, Python and undici: the uppercase one is not read then.
  const httpProxy = (env.http_proxy ?? env.HTTP_PROXY) || undefined;
  const httpsProxy = (env.https_proxy ?? env.HTTPS_PROXY) || undefined;
  const named = env.no_proxy ?? env.NO_PROXY;
  // `*` is every host only as the whole value: with the loopback hosts added undici would no longer read it so.
  if ((!httpProxy && !httpsProxy) || named === "*") return new Agent(options);
  const noProxy = [named, ...LOOPBACK].filter(Boolean).join(",");
  return new EnvHttpProxyAgent({ ...options, httpProxy, httpsProxy, noProxy });
}
