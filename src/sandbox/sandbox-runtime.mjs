/**
 * Runs local servers inside `@anthropic-ai/sandbox-runtime` (the sandbox Claude Code uses: bubblewrap on Linux, Seatbelt
 * on macOS; filesystem rules, and a network allow list enforced by a proxy in this process). Loaded on the first
 * sandboxed start only, so pi starts no slower for users who sandbox nothing.
 *
 * The library keeps one configuration per process; what differs per server is passed with each wrap: its filesystem
 * rules, and its allowed hosts as a list registered under a random id that only its process's proxy settings carry.
 * Hosts a server denies are denied to every sandboxed server of this pi (the library's deny list is global): stricter,
 * never looser.
 *
 * Plain JavaScript (its types in ./sandbox-runtime.d.mts), because the shared-server hub, a plain Node process
 * (../connection/hub/hub.mjs), runs shared servers in their sandboxes with this same code.
 */
import { randomBytes } from "node:crypto";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** The sandbox cannot be set up on this machine: what is missing, and what to install. */
class SandboxUnavailable extends Error {
  constructor(problems) {
    super([problems.join("; "), installHint(problems)].filter(Boolean).join(". "));
    this.name = "SandboxUnavailable";
    this.problems = problems;
  }
}

/** Throws {@link SandboxUnavailable} for what the sandbox lacks here, if anything. */
export function unavailable(problems) {
  if (problems.length) throw new SandboxUnavailable(problems);
}

/** What to install for `problems`, in the words of the user's platform; empty where no tool is missing. */
export function installHint(problems, platform = process.platform) {
  // The library missing is no system tool missing: installing those would not help.
  if (problems.some((p) => p.startsWith(NO_LIBRARY)))
    return "Reinstall the MCP bridge (`pi install`), whose dependency it is";
  // Nor where they are all there (root without CAP_SETFCAP): the problem says what to do.
  const missing = problems.some((p) => /not installed|not found|not executable/.test(p));
  if (!missing && (platform === "linux" || platform === "darwin")) return "";
  if (platform === "linux")
    return "Install bubblewrap, socat and ripgrep (Debian/Ubuntu: `sudo apt-get install bubblewrap socat ripgrep`; Fedora: `sudo dnf install bubblewrap socat ripgrep`; Arch: `sudo pacman -S bubblewrap socat ripgrep`)";
  if (platform === "darwin") return "Install ripgrep (`brew install ripgrep`); sandbox-exec comes with macOS";
  return "Sandboxed MCP servers run on Linux and macOS only";
}

const NO_LIBRARY = "the sandbox library could not be loaded";
let library;
let ready;
/** The library's reset under way, if any: a new setup waits for it, or the reset would stop what the setup starts. */
let resetting;
const denied = new Set();
/** Sandboxed starts whose process has not ended yet: the proxies stay up while there is one. */
let running = 0;

function load() {
  library ??= import("@anthropic-ai/sandbox-runtime");
  return library;
}

/**
 * What the sandbox lacks on this machine (nothing: it can run), with what it runs without (`warnings`: no seccomp, an
 * old bubblewrap). Loads the library; starts nothing.
 */
export async function sandboxProblems() {
  let manager;
  try {
    manager = (await load()).SandboxManager;
  } catch (error) {
    return [`${NO_LIBRARY} (${error instanceof Error ? error.message : String(error)})`];
  }
  // The library's Windows sandbox (a restricted account) is an alpha that needs a machine-wide install step.
  if (process.platform === "win32" || !manager.isSupportedPlatform())
    return [`the bridge does not sandbox servers on ${process.platform}`];
  const { errors, warnings } = manager.checkDependencies();
  return Object.assign(errors, { warnings });
}

/**
 * The library, set up (its proxies listening); throws {@link SandboxUnavailable} where it cannot run. Set up once per
 * pi process; a failed setup is tried again on the next start.
 */
export function sandboxManager() {
  ready ??= (async () => {
    await resetting;
    unavailable(await sandboxProblems());
    const { SandboxManager } = await load();
    await SandboxManager.initialize(globalConfig());
    return SandboxManager;
  })();
  ready.catch(() => {
    ready = undefined;
  });
  return ready;
}

function globalConfig() {
  return {
    network: { allowedDomains: [], deniedDomains: [...denied] },
    filesystem: { denyRead: [], allowWrite: [], denyWrite: [] },
  };
}

/** One word for `sh -c`, whatever it holds. */
function shellQuote(word) {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A private temp dir for one server start (removed by `release`). */
export function privateTempDir(server) {
  return mkdtempSync(path.join(os.tmpdir(), `mcp-sandbox-${server.replace(/[^\w-]/g, "_").slice(0, 40)}-`));
}

/**
 * The command line that runs `spec` inside `policy`. The server gets its own `TMPDIR` (the library would point it at a
 * shared one); only the variables the library adds for its proxies join the server's environment, never the rest of
 * pi's.
 */
export async function sandboxedStart(spec, policy, onViolation) {
  // Counted from now: the last sandboxed server ending meanwhile must not stop the proxies this start is set up with.
  running++;
  try {
    return await wrap(spec, policy, onViolation);
  } catch (error) {
    running--;
    rmSync(policy.tempDir, { recursive: true, force: true });
    throw error;
  }
}

async function wrap(spec, policy, onViolation) {
  const manager = await sandboxManager();
  // Made here too, for a start whose temp dir is named in advance (a shared server's, ../connection/hub/).
  mkdirSync(policy.tempDir, { recursive: true, mode: 0o700 });
  // The sandbox can only open a directory that exists, and the launcher inside could not make its cache itself.
  for (const cache of policy.caches) mkdirSync(cache, { recursive: true, mode: 0o700 });
  // One kept elsewhere by a link (~/.npm -> /data/npm): the library binds no link that leads out of its own tree, so
  // where it leads is allowed; only for the user's own (in the home directory, not the project) and the temp dir,
  // links a project could not have made.
  const users = (p) => p.startsWith(`${os.homedir()}/`) && !(spec.cwd && p.startsWith(`${spec.cwd}/`));
  const linked = [policy.tempDir, ...policy.caches.filter(users)];
  const own = new Map(linked.map((p) => [p, realpathSync(p)]));
  const filesystem = { ...policy.filesystem, allowWrite: policy.filesystem.allowWrite.map((p) => own.get(p) ?? p) };
  const newDenied = policy.network.deniedDomains.filter((d) => !denied.has(d));
  if (newDenied.length) {
    for (const d of newDenied) denied.add(d);
    manager.updateConfig(globalConfig());
  }
  // 128 random bits: the library binds a connection to this list by the id its proxy settings carry.
  const commandId = randomBytes(16).toString("base64url");
  const words = [spec.command, ...spec.args];
  const line = `TMPDIR=${shellQuote(policy.tempDir)} exec ${words.map(shellQuote).join(" ")}`;
  const mountPoints = [];
  let wrapped;
  // Another start's bubblewrap makes its mount points (an absent `.pi`) while this one is planned: the library, finding
  // one made, binds it read-only and then cannot make the placeholder inside it ("bwrap: Can't create file at
  // .pi/extensions: Read-only file system"). Planned again, with this start's placeholders in it, when that happened.
  for (let tries = 1; ; tries++) {
    const absent = absentMountPoints(policy);
    mountPoints.push(...absent.filter((p) => !mountPoints.includes(p)));
    makePlaceholders(absent, policy);
    const planned = absentMountPoints(policy).join("\0");
    wrapped = await manager.wrapWithSandboxArgv(
      line,
      undefined,
      {
        filesystem,
        network: { allowedDomains: policy.network.allowedDomains, deniedDomains: [...denied] },
      },
      undefined,
      spec.cwd,
      { commandId, commandText: words.join(" ") },
    );
    if (tries === 3 || absentMountPoints(policy).join("\0") === planned) break;
  }
  const added = {};
  for (const [key, value] of Object.entries(wrapped.env))
    if (value !== undefined && process.env[key] !== value) added[key] = value;
  if (policy.network.allowedDomains.length)
    manager.registerCommandNetworkLists(commandId, { allowedDomains: policy.network.allowedDomains });
  const [command = "", ...args] = wrapped.argv;
  mountPoints.push(...emptySource(wrapped.argv));
  const unwatch = onViolation ? watchViolations(manager, commandId, onViolation) : undefined;
  let released = false;
  return {
    command,
    args,
    // The library starts the server through `bash -c` with pipes, which bash takes for a remote login and so runs the
    // user's ~/.bashrc first, unless it is not the outermost shell (SHLVL set).
    env: { SHLVL: "1", ...spec.env, ...added },
    cwd: spec.cwd,
    commandId,
    mountPoints,
    tempDir: policy.tempDir,
    /** `keepTempDir`: another start of the same definition (a shared server's new process) uses it now. */
    release(keepTempDir = false) {
      if (released) return;
      released = true;
      running--;
      unwatch?.();
      manager.unregisterCommandNetworkLists(commandId);
      if (!keepTempDir) rmSync(policy.tempDir, { recursive: true, force: true });
    },
  };
}

/**
 * Where bubblewrap makes an empty file or directory on the host as a mount point for a start under `policy` (the
 * library removes them at its reset or this process's exit, which a killed process never reaches): the first missing
 * part of each denied path, where the server may write (elsewhere nothing can be made, nor needs to be). Asked before
 * the start, as the library asks: only a path absent then is one it makes.
 */
function absentMountPoints(policy) {
  if (process.platform !== "linux") return [];
  const { allowWrite, denyRead, denyWrite } = policy.filesystem;
  const below = (p) => allowWrite.some((dir) => p.startsWith(`${dir}/`));
  const points = [...denyWrite, ...denyRead].filter(below).map(firstMissing);
  return [...new Set(points.filter((p) => p !== undefined && below(p)))];
}

/** The outermost part of `p` that is not there (`p` itself, or a directory above it); undefined if `p` is. */
const firstMissing = (p) =>
  existsSync(p) ? undefined : existsSync(path.dirname(p)) ? p : firstMissing(path.dirname(p));

/**
 * The empty directory the library binds over denied directories, if the command line names it (not when its mounts go
 * through a file): it removes it at its reset and this process's exit, which a killed process never reaches.
 */
function emptySource(argv) {
  const prefix = path.join(os.tmpdir(), "claude-empty-");
  const word = argv.find((w) => w.includes(prefix)) ?? "";
  const name = word.slice(word.indexOf(prefix)).slice(0, prefix.length + 6);
  // mkdtemp's six random letters and digits.
  return /^\w{6}$/.test(name.slice(prefix.length)) ? [name] : [];
}

/**
 * Calls `onLine` with each violation the library records for `commandId` from now on (a host its proxy denied). The
 * store hands every listener its whole list (the last 100) on each change: the ones already there are passed over.
 */
function watchViolations(manager, commandId, onLine) {
  // How the library keys a violation to the start whose proxy settings carried `commandId`.
  const key = Buffer.from(commandId).toString("base64");
  const seen = new WeakSet();
  return manager.getSandboxViolationStore().subscribe((violations) => {
    for (const violation of violations) {
      if (seen.has(violation)) continue;
      seen.add(violation);
      if (violation.encodedCommand === key) onLine(violation.line);
    }
  });
}

/**
 * Stops the library's proxies once no sandboxed server runs (they would keep pi's process alive). Called when a
 * bridge has shut its servers down; the next sandboxed start sets the library up again. True when it stopped them.
 */
export async function sandboxIdle() {
  const current = ready;
  if (!current || running > 0) return false;
  ready = undefined;
  denied.clear();
  // The placeholders first: one of them may be in a directory the library made, which it removes only when empty.
  removePlaceholders();
  const reset = current.catch(() => undefined).then((manager) => manager?.reset());
  resetting = reset.catch(() => undefined);
  await reset;
  return true;
}

/** The placeholders this process made and has not removed (another sandbox mounts on them). */
const placeholders = new Set();

/**
 * Makes the empty file for each denied file the project lacks before the wrap, not leaving it to bubblewrap: the
 * library binds it as any file that is there and never removes it (it removes its own at reset and exit even while
 * another pi's sandbox mounts on one, and a mount point removed from outside its namespace is detached, so that server
 * could write the file). These go once no other namespace mounts on them (here, or by the watchdog). A directory stays
 * the library's: the other sandbox's own mount points in it keep it there.
 */
function makePlaceholders(mountPoints, policy) {
  const denied = [...policy.filesystem.denyWrite, ...policy.filesystem.denyRead];
  for (const file of mountPoints.filter((p) => denied.includes(p) && !denied.some((d) => d.startsWith(`${p}/`)))) {
    try {
      // As bubblewrap makes one: empty and read-only; `wx` leaves alone what another process made meanwhile.
      writeFileSync(file, "", { flag: "wx", mode: 0o444 });
      placeholders.add(file);
    } catch {
      // Not makeable here (nor, then, by the server): the library decides, as it would have.
    }
  }
}

/** Removes the placeholders no other mount namespace mounts on, if still empty files; the rest stay listed. */
function removePlaceholders() {
  if (placeholders.size === 0) return;
  const elsewhere = mountsElsewhere();
  for (const file of placeholders) {
    if (elsewhere.has(mountinfoPath(file))) continue;
    placeholders.delete(file);
    const stat = lstatSync(file, { throwIfNoEntry: false });
    if (stat?.isFile() && stat.size === 0) rmSync(file);
  }
}

/**
 * The mount points of every mount namespace but this process's (Linux), as /proc/<pid>/mountinfo writes them. Each
 * process of another namespace is read, not one per namespace: two of one namespace may see it from different roots
 * (bubblewrap's own process and the sandboxed one), and only one of them writes a mount as this process names it.
 */
function mountsElsewhere() {
  const points = new Set();
  const own = statSync("/proc/self/ns/mnt").ino;
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      if (statSync(`/proc/${pid}/ns/mnt`).ino === own) continue;
      for (const line of readFileSync(`/proc/${pid}/mountinfo`, "utf8").split("\n")) points.add(line.split(" ")[4]);
    } catch {
      // The process ended, or is not ours to look at.
    }
  }
  return points;
}

/** `file` as mountinfo writes it: a backslash, space, tab or line break as an octal escape. */
const mountinfoPath = (file) => file.replace(/[\\ \t\n]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, "0")}`);
