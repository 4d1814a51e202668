/**
 * A local server that needs a host before it answers (its API, to list what it offers) and cannot reach it either
 * exits or waits, retrying, past its `initTimeout`: apify's server retried api.apify.com for minutes, silent on stdout.
 * Its stderr says why, in the words of its runtime; this finds the host and the error there, so that the message
 * points at the network rather than at the entry or the timeout. A server run in a container whose engine is not
 * running (Docker Desktop still starting) is read the same way: what it needs may come up by itself. Pure.
 */
import { refusalMessage } from "../../sandbox/sandbox-refusal.ts";

export interface UnreachableHost {
  /** The host (with its port, where the line has one), if the line names it. */
  host?: string;
  /** The error as the runtime put it: `getaddrinfo ENOTFOUND`, `Temporary failure in name resolution`. */
  error: string;
  /** The server runs in a sandbox, which is then the likely reason. */
  sandboxed?: boolean;
  /** What could not be reached is the container engine the server runs in: docker's or podman's, not running. */
  engine?: "Docker" | "Podman";
}

/**
 * docker's command line with no engine to talk to (`Cannot connect to the Docker daemon at unix:///var/run/docker.sock.
 * Is the docker daemon running?`; docker 29's `failed to connect to the docker API at unix:///…; check if the path is
 * correct and if the daemon is running`), and podman's (`Cannot connect to Podman.`).
 */
const ENGINE =
  /\b(?:Cannot|failed to) connect to (?:the ([Dd]ocker) (?:daemon|API)(?: at (\S+?))?|Podman)[.;:]?(?=\s|$)/;

/** Node's `getaddrinfo ENOTFOUND api.example.com`, `connect ECONNREFUSED 10.0.0.1:443`, and its `code: 'ENOTFOUND'`. */
const NODE =
  /\b(?:(getaddrinfo|connect) )?(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH)\b(?: ([\w.:[\]-]*\w))?/;
/** Where Node prints the error as an object, or a server as JSON, the host is a field of its own near the code. */
const HOSTNAME = /\b(?:hostname|address)"?: ?['"]([^'"]+)['"]/;
/** Python's requests and httpx name the host on the line of the error: `Failed to resolve 'api.example.com'`. */
const PYTHON_HOST = /Failed to resolve '([^']+)'|ConnectionPool\(host='([^']+)'/;
const PYTHON =
  /Temporary failure in name resolution|Name or service not known|Connection refused|Network is unreachable/i;
/** Node's `fetch` says only this where a server printed the message without its cause (the lookup, the refusal). */
const FETCH = /\bfetch failed\b/;

/**
 * The first host the lines say could not be reached, if any says so; a line that names it beats one that does not. The
 * first, since what failed first makes the rest fail: the snyk CLI's wrapper could not download its program from
 * static.snyk.io, and then could not report that to its error tracker either.
 */
export function unreachableHost(lines: readonly string[]): UnreachableHost | undefined {
  let unnamed: UnreachableHost | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const engine = ENGINE.exec(line);
    if (engine) {
      const name = engine[1] ? "Docker" : "Podman";
      const at = engine[2] ? ` at ${engine[2]}` : "";
      return { host: engine[1] ? `the Docker daemon${at}` : "Podman", error: "Cannot connect", engine: name };
    }
    const node = NODE.exec(line);
    const python = node ? undefined : (PYTHON.exec(line) ?? FETCH.exec(line));
    if (!node && !python) continue;
    const found: UnreachableHost = node
      ? { host: node[3], error: node[1] ? `${node[1]} ${node[2]}` : node[2]! }
      : { host: PYTHON_HOST.exec(line)?.slice(1).find(Boolean), error: python![0] };
    if (found.host) return found;
    // Node's object form: `code: 'ENOTFOUND'`, with `hostname: '…'` a few lines away (or on the line, as JSON).
    const near = lines.slice(Math.max(0, i - 4), i + 5).map((l) => HOSTNAME.exec(l)?.[1]);
    unnamed ??= { ...found, host: near.find(Boolean) };
  }
  return unnamed;
}

/** What to tell the user: the host and its error (`what`), and where to look (`why`). */
export function unreachableAdvice(found: UnreachableHost): { what: string; why: string } {
  const what = found.host ? `${found.host} (${found.error})` : `a host it needs (${found.error})`;
  const why = found.engine
    ? `${found.engine} is not running: start it (${found.engine === "Docker" ? "Docker Desktop, or `sudo systemctl start docker`" : "`podman machine start`"}); the server is restarted on its schedule, or at once with /mcp reconnect`
    : found.sandboxed
      ? refusalMessage({ kind: "network", detail: found.host })
      : /ECONNREFUSED|Connection refused/i.test(found.error)
        ? "nothing accepted the connection there (is the service it connects to running, at that address?)"
        : "check that this machine reaches it (network, DNS, proxy or firewall)";
  return { what: `could not reach ${what}`, why };
}
