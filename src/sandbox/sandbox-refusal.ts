/**
 * What a sandboxed server was refused, read from what it reports: a line of its stderr (Node, Python and libc error
 * texts), or a denial the sandbox library's network proxy recorded. Pure. On Linux a denied directory is mounted empty,
 * so a missing file there (ENOENT) is a refused read too; a missing file anywhere else is the server's own business.
 */
import * as path from "node:path";
import type { SandboxPolicy } from "./sandbox-policy.ts";

export interface SandboxRefusal {
  kind: "read" | "write" | "network";
  /** The path or host refused, where the line names one. */
  detail?: string;
  /** A host the sandbox's proxy denied (rather than a connection made around it). */
  byProxy?: boolean;
  /** A path the rules deny writing: no `allowWrite` opens it. */
  denied?: boolean;
  /** A path `allowWrite` lists, read-only all the same: it was not there when the server started. */
  unmade?: boolean;
  /** Why the proxy denied a host that the allow list may hold (a deny list, an address it resolved to). */
  reason?: string;
}

const READ_ONLY = /\bEROFS\b|read-only file system/i;
const NOT_PERMITTED = /\bE(PERM|ACCES)\b|operation not permitted|permission denied/i;
/** Node's words for a call that only reads (`EACCES: permission denied, scandir '/root'`). */
const READ_CALL = /, (scandir|opendir|stat|lstat|readlink) '/;
const NOT_FOUND = /\bENOENT\b|no such file or directory/i;
const UNREACHABLE = /\bENETUNREACH\b|\bECONNREFUSED\b|network is unreachable|connection refused/i;
/** A quoted path (Node's `open 'x'`, Python's `: 'x'`; relative: in the working directory), or a shell's `sh: /x:`. */
const PATH = /'([^']+)'|"(\/[^"]*)"|(?:^|\s)(\/[^\s'",:]+):/;
/** `127.0.0.1:8080`, `[::1]:443`, `example.com:443`. */
const HOST_PORT = /(\[[0-9a-f:.]+\]|[a-z0-9][a-z0-9.-]*):(\d{1,5})\b/i;
/**
 * The library's lines: its proxy's `deny network-outbound example.com:443 (reason)`, `deny socks-tunnel host:port`,
 * `deny http-request GET http://host/path (reason)`; its Linux monitor's `deny <syscall> <path>`.
 */
const PROXY_DENY = /^deny (?:network-outbound|socks-tunnel) (\S+)/;
const HTTP_DENY = /^deny http-request \S+ (\S+)/;
/** The proxy's reasons that no `allowedDomains` entry lifts: a deny list's host, an address it never lets through. */
const UNLIFTED = / \((host is on the deny list|resolved to .+)\)$/;
const SYSCALL_DENY = /^deny (\S+) (.*)$/;

const under = (file: string, entries: readonly string[]) =>
  entries.some((entry) => file === entry || file.startsWith(entry.endsWith("/") ? entry : `${entry}/`));

/** The refusal `line` (one stderr line of a server sandboxed by `policy`) reports, if it reports one. */
export function refusalIn(line: string, policy: SandboxPolicy): SandboxRefusal | undefined {
  // Node's dump of an error's fields after its message (`code: 'EROFS',`): the message was the refusal, with its path.
  if (/^\s*code: '\w+',?$/.test(line)) return undefined;
  const { denyRead, allowWrite, denyWrite } = policy.filesystem;
  const [, ...groups] = PATH.exec(line) ?? [];
  const named = groups.find(Boolean);
  const file = named && path.resolve(allowWrite[0] ?? "/", named);
  if (READ_ONLY.test(line) || NOT_PERMITTED.test(line)) {
    // A read-only file system refuses writes only: a path denied to reading is denied to writing too.
    if (file && under(file, denyRead))
      return READ_ONLY.test(line) ? { kind: "write", detail: file, denied: true } : { kind: "read", detail: file };
    // A path the sandbox lets it write, or any read outside denyRead, was refused by the file's own permissions; so was
    // any other on Linux, where the sandbox refuses a write as a read-only file system.
    const own = READ_CALL.test(line) || (process.platform === "linux" && !READ_ONLY.test(line));
    const allowed = file && under(file, allowWrite) && !under(file, denyWrite);
    // Read-only in a directory allowWrite adds (not the working directory's own): it was not there at the start, and
    // the sandbox opens only what exists.
    const added = allowWrite.slice(1).filter((dir) => dir !== policy.tempDir && !under(dir, allowWrite.slice(0, 1)));
    if (allowed && READ_ONLY.test(line) && under(file, added)) return { kind: "write", detail: file, unmade: true };
    if (allowed || own) return undefined;
    if (file && under(file, denyWrite)) return { kind: "write", detail: file, denied: true };
    if (file || READ_ONLY.test(line)) return { kind: "write", detail: file };
    return undefined;
  }
  if (NOT_FOUND.test(line)) return file && under(file, denyRead) ? { kind: "read", detail: file } : undefined;
  if (UNREACHABLE.test(line)) {
    const host = HOST_PORT.exec(line);
    return { kind: "network", detail: host ? `${host[1]}:${host[2]}` : undefined };
  }
  return undefined;
}

/** The refusal a line of the library's violation store records (a host its proxy denied). */
export function violationRefusal(line: string): SandboxRefusal {
  const why = UNLIFTED.exec(line)?.[1];
  const reason = why ? { reason: why } : {};
  const host = PROXY_DENY.exec(line)?.[1];
  if (host) return { kind: "network", detail: host, byProxy: true, ...reason };
  const url = HTTP_DENY.exec(line)?.[1];
  if (url) return { kind: "network", detail: URL.canParse(url) ? new URL(url).host : url, byProxy: true, ...reason };
  const [, syscall = "", target] = SYSCALL_DENY.exec(line) ?? [];
  if (/connect|socket|bind|send/.test(syscall)) return { kind: "network", detail: target };
  const kind = /write|unlink|rename|mkdir|creat|trunc|chmod|chown|link/.test(syscall) ? "write" : "read";
  return { kind, detail: target };
}

/** One sentence for the user: what was refused, and the setting that allows it. */
export function refusalMessage(refusal: SandboxRefusal): string {
  const { kind, detail } = refusal;
  if (kind === "read")
    return `the sandbox refused a read of ${detail ?? "a file"} (the sandbox keeps secrets from the server); if the server needs it, set "sandbox": false for it`;
  if (kind === "write" && refusal.unmade)
    return `the sandbox refused a write to ${detail}, which sandbox.filesystem.allowWrite lets it write but which did not exist when the server started (the sandbox opens only what exists): make it, then restart the server`;
  if (kind === "write" && refusal.denied)
    return `the sandbox refused a write to ${detail}, which the sandbox never lets a server write (another program would run or obey it, or sandbox.filesystem.denyWrite lists it)`;
  if (kind === "write")
    return `the sandbox refused a write to ${detail ?? "a read-only file"}; to allow it, add it to sandbox.filesystem.allowWrite`;
  const to = detail ? ` to ${detail}` : "";
  if (!refusal.byProxy)
    return `the sandbox refused a connection${to}; a sandboxed server reaches only the hosts in sandbox.network.allowedDomains, through the sandbox's proxy`;
  // The library keeps one deny list per process: another server's deniedDomains may be what refused it.
  const listed = refusal.reason?.includes("deny list")
    ? ": the sandbox.network.deniedDomains of a sandboxed server of this pi lists it (they apply to all)"
    : "";
  if (refusal.reason)
    return `the sandbox refused a connection${to} (${refusal.reason}), which no sandbox.network.allowedDomains opens${listed}`;
  const host = detail?.replace(/:\d+$/, "");
  return `the sandbox refused a connection${to}; to allow it, add ${host ? `"${host}"` : "the host"} to sandbox.network.allowedDomains`;
}
