// @ts-check
/**
 * Shared servers in a sandbox: the hub runs `@anthropic-ai/sandbox-runtime` itself, as pi does for an unshared server
 * (../../sandbox/sandbox-runtime.ts, whose `sandboxedStart` this follows step by step), because the library's network
 * proxy must live as long as the server, and the hub outlives every pi. The rules come from the session, computed by
 * pi exactly as for an unshared start (../../sandbox/sandbox-policy.ts); the hub adds nothing to them.
 *
 * The library is loaded on the first sandboxed start only; its proxies stop once no sandboxed server runs.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";

/** @type {Promise<any> | undefined} */
let ready;
/** Hosts any sandboxed server of this hub denies: the library keeps one deny list (stricter, never looser). */
const denied = new Set();
let running = 0;

function globalConfig() {
  return {
    network: { allowedDomains: [], deniedDomains: [...denied] },
    filesystem: { denyRead: [], allowWrite: [], denyWrite: [] },
  };
}

function manager() {
  ready ??= (async () => {
    const { SandboxManager } = await import("@anthropic-ai/sandbox-runtime");
    const check = SandboxManager.checkDependencies();
    if (check.errors.length) throw new Error(check.errors.join("; "));
    await SandboxManager.initialize(globalConfig());
    return SandboxManager;
  })();
  ready.catch(() => {
    ready = undefined;
  });
  return ready;
}

/** One word for `sh -c`, whatever it holds. */
function shellQuote(word) {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The command line that runs `spec` (command, args, env, cwd) inside `policy`, and `release` for when its process has
 * ended; `onViolation` gets each line the library records for it (a host its proxy denied).
 */
export async function sandboxedStart(spec, policy, onViolation) {
  const sandbox = await manager();
  mkdirSync(policy.tempDir, { recursive: true, mode: 0o700 });
  for (const cache of policy.caches) mkdirSync(cache, { recursive: true, mode: 0o700 });
  const newDenied = policy.network.deniedDomains.filter((d) => !denied.has(d));
  if (newDenied.length) {
    for (const d of newDenied) denied.add(d);
    sandbox.updateConfig(globalConfig());
  }
  const commandId = randomBytes(16).toString("base64url");
  const line = [`TMPDIR=${shellQuote(policy.tempDir)}`, "exec", ...[spec.command, ...spec.args].map(shellQuote)].join(
    " ",
  );
  const wrapped = await sandbox.wrapWithSandboxArgv(
    line,
    undefined,
    {
      filesystem: policy.filesystem,
      network: { allowedDomains: policy.network.allowedDomains, deniedDomains: [...denied] },
    },
    undefined,
    spec.cwd,
    { commandId, commandText: [spec.command, ...spec.args].join(" ") },
  );
  /** @type {Record<string, string>} */
  const added = {};
  for (const [key, value] of Object.entries(wrapped.env)) {
    if (value !== undefined && process.env[key] !== value) added[key] = String(value);
  }
  if (policy.network.allowedDomains.length)
    sandbox.registerCommandNetworkLists(commandId, { allowedDomains: policy.network.allowedDomains });
  const key = Buffer.from(commandId).toString("base64");
  const seen = new WeakSet();
  const unwatch = sandbox.getSandboxViolationStore().subscribe((violations) => {
    for (const violation of violations) {
      if (seen.has(violation)) continue;
      seen.add(violation);
      if (violation.encodedCommand === key) onViolation(violation.line);
    }
  });
  running++;
  let released = false;
  const [command = "", ...args] = wrapped.argv;
  return {
    command,
    args,
    // As for an unshared start: bash, started by the library over pipes, reads ~/.bashrc unless SHLVL is set.
    env: { SHLVL: "1", ...spec.env, ...added },
    cwd: spec.cwd,
    release() {
      if (released) return;
      released = true;
      running--;
      unwatch();
      sandbox.unregisterCommandNetworkLists(commandId);
      rmSync(policy.tempDir, { recursive: true, force: true });
      if (running === 0) idle();
    },
  };
}

/** Stops the library's proxies once no sandboxed server runs; the next sandboxed start sets it up again. */
function idle() {
  const current = ready;
  if (!current) return;
  ready = undefined;
  denied.clear();
  current.then((sandbox) => sandbox.reset()).catch(() => undefined);
}
