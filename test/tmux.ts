/**
 * The real `pi` TUI in a private tmux server, for tests that type into it and read its screen.
 *
 * Each call to `startPiInTmux` starts its own tmux server (`tmux -L <unique socket>`, no user config), so nothing
 * touches the user's tmux. pi gets a temp HOME and agent dir (unless `env` gives them), `PI_OFFLINE=1`, and by default
 * this repo's extension plus the faux model (test/fixtures/faux-model-extension.ts), so no API key or network is needed.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { commandLine, EXTENSION_DIR, isAlive, REPO_ROOT, tempDir, waitFor } from "./helpers.ts";
import { PI_LINE } from "./pi-line.ts";

/**
 * pi's command line, of the pi line the tests run on (see ./pi-line.ts), as its package's `bin` names it: the file a
 * user's `pi` runs (pi 1.x's is a bundle that turns on Node's compile cache). Run it with this process's Node.
 */
export const PI_CLI = piBin(
  PI_LINE === "1.x"
    ? path.join(REPO_ROOT, "test", "pi1x", "node_modules", "@earendil-works", "pi-coding-agent")
    : path.join(REPO_ROOT, "node_modules", "@mariozechner", "pi-coding-agent"),
);

function piBin(dir: string): string {
  const { bin } = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { bin: { pi: string } };
  return path.join(dir, bin.pi);
}
export const FAUX_MODEL_EXTENSION = path.join(REPO_ROOT, "test", "fixtures", "faux-model-extension.ts");
/** pi's arguments that load this repo's extension and start on the faux model. */
export const DEFAULT_PI_ARGS: readonly string[] = [
  "-e",
  EXTENSION_DIR,
  "-e",
  FAUX_MODEL_EXTENSION,
  "--provider",
  "faux",
  "--model",
  "faux-1",
];
/** Every process started for a session carries this variable (unless something drops it from its environment). */
export const SESSION_MARKER_ENV = "PI_TMUX_TEST_SESSION";

let tmuxAvailable: boolean | undefined;

/** Why the tests cannot run without tmux, and how to get it. */
export const TMUX_MISSING =
  "tmux is not installed (`tmux -V` failed), and the terminal tests need it: install it, e.g. `apt-get install -y tmux` " +
  "on Debian or Ubuntu (.ci/run does this in CI)";

/** Whether a usable tmux is installed. */
export function hasTmux(): boolean {
  tmuxAvailable ??= spawnSync("tmux", ["-V"], { stdio: "ignore" }).status === 0;
  return tmuxAvailable;
}

/** Why these tests cannot run on this platform at all, if so: `stop()` reads processes from /proc. */
export const TMUX_UNSUPPORTED_PLATFORM =
  process.platform === "linux" ? undefined : "the tmux tests read processes from /proc (Linux only)";

export interface PiInTmuxOptions {
  /** pi's arguments, after `DEFAULT_PI_ARGS` (or alone with `bare`). */
  args?: string[];
  /** Added to pi's environment; `undefined` removes a variable. `HOME`/`PI_CODING_AGENT_DIR` default to a temp dir. */
  env?: Record<string, string | undefined>;
  /** pi's working directory (default: the temp HOME). */
  cwd?: string;
  width?: number;
  height?: number;
  /** Leave out `DEFAULT_PI_ARGS`: `args` are all of pi's arguments. */
  bare?: boolean;
}

export interface PiInTmux {
  /** The tmux session (and socket) name. */
  session: string;
  /** pi's pid (the pane's process). */
  pid: number;
  /** The temp HOME; its `agent` dir is pi's agent dir unless `env` said otherwise. Removed by `stop()`. */
  home: string;
  /** The visible screen, as plain text (no colors). */
  capture(): string;
  /** Types text literally (no key names). */
  type(text: string): void;
  /** Presses keys by tmux's names: `Enter`, `Escape`, `Up`, `Down`, `Tab`, `C-c`, `BSpace`, ... */
  press(...keys: string[]): void;
  /**
   * Polls the screen until `pattern` matches (a RegExp, or any `test` of the screen with a `toString` saying what it
   * waits for); resolves with that screen, rejects (showing the screen) after `timeoutMs`.
   */
  waitForScreen(pattern: ScreenPattern, timeoutMs?: number): Promise<string>;
  /** Ends the tmux server and pi; rejects if pi or a process it started is still running 15 s later. Idempotent. */
  stop(): Promise<void>;
}

/** What `waitForScreen` waits for (a RegExp is one); `toString` names it in the error of a wait that timed out. */
export interface ScreenPattern {
  test(screen: string): boolean;
  toString(): string;
}

let counter = 0;

/** The tmux client's environment: never the outer session's, so `new-session` does not refuse to nest. */
function clientEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const result = { ...env };
  delete result.TMUX;
  delete result.TMUX_PANE;
  return result;
}

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

function allPids(): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

/** `root` and every process below it, as they are now. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const pid of allPids()) {
    const parent = parentOf(pid);
    if (parent !== undefined) children.set(parent, [...(children.get(parent) ?? []), pid]);
  }
  const result: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    result.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return result.filter(isAlive);
}

/** Live processes (of this user) whose environment has `name=value`. */
export function processesWithEnv(name: string, value: string): number[] {
  const needle = `${name}=${value}`;
  return allPids().filter((pid) => {
    if (pid === process.pid) return false;
    try {
      return readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(needle) && isAlive(pid);
    } catch {
      return false;
    }
  });
}

/**
 * What the sandboxed servers under `root` keep outside their projects, if there now, as their command lines name them:
 * each one's own temp directory (the `TMPDIR` the bridge sets), and the empty directory the sandbox library binds over
 * denied directories.
 */
export function sandboxTempDirs(root: number): string[] {
  const found = processTree(root).flatMap((pid) => {
    const line = commandLine(pid);
    return [/TMPDIR='([^']+)' exec /.exec(line)?.[1], /\/\S*\/claude-empty-\w+/.exec(line)?.[0]];
  });
  return [...new Set(found)].filter((dir): dir is string => dir !== undefined && existsSync(dir));
}

function describeProcesses(pids: number[]): string {
  if (pids.length === 0) return "";
  const ps = spawnSync("ps", ["-o", "pid,ppid,stat,args", "-p", pids.join(",")], { encoding: "utf8" });
  return ps.stdout || pids.join(", ");
}

export function startPiInTmux(options: PiInTmuxOptions = {}): PiInTmux {
  if (!hasTmux()) throw new Error(TMUX_MISSING);
  const { width = 160, height = 50 } = options;
  const session = `pi-test-${process.pid}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;
  const temp = tempDir("mcp-bridge-tmux-");
  const home = temp.dir;
  mkdirSync(path.join(home, "agent"), { recursive: true });
  // No user config. pi warns about tmux's keyboard setup unless extended keys are on (tmux >= 3.2); tmux sets the pane's
  // TERM from default-terminal; a pane that pi left stays, to show pi's last words.
  const tmuxConf = path.join(home, "tmux.conf");
  writeFileSync(
    tmuxConf,
    [
      "set -g extended-keys on",
      'set -g default-terminal "xterm-256color"',
      "set -g remain-on-exit on",
      "set -g history-limit 5000",
      "",
    ].join("\n"),
  );

  const env: NodeJS.ProcessEnv = clientEnv({
    ...process.env,
    HOME: home,
    PI_CODING_AGENT_DIR: path.join(home, "agent"),
    PI_OFFLINE: "1",
    TERM: "xterm-256color",
    LANG: process.env.LANG?.match(/utf-?8/i) ? process.env.LANG : "C.UTF-8",
    [SESSION_MARKER_ENV]: session,
  });
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }

  // `-u`: the pane speaks UTF-8 whatever the locale, so emoji reach capture-pane.
  const tmux = (...args: string[]) =>
    execFileSync("tmux", ["-u", "-L", session, ...args], {
      env: clientEnv(env),
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });

  const piArgs = [...(options.bare ? [] : DEFAULT_PI_ARGS), ...(options.args ?? [])];
  // The first client starts the server, whose environment (this one) every pane inherits. Several command arguments:
  // tmux runs pi directly, without a shell, so the pane's pid is pi's.
  tmux(
    "-f",
    tmuxConf,
    "new-session",
    "-d",
    "-s",
    session,
    "-x",
    String(width),
    "-y",
    String(height),
    "-c",
    options.cwd ?? home,
    "--",
    process.execPath,
    PI_CLI,
    ...piArgs,
  );
  const [panePid, serverPid] = tmux("display-message", "-p", "-t", session, "#{pane_pid} #{pid}")
    .trim()
    .split(" ")
    .map(Number);
  const target = `${session}:0.0`;

  let stopped: Promise<void> | undefined;

  const capture = () => {
    try {
      return tmux("capture-pane", "-p", "-t", target);
    } catch (error) {
      return `(capture-pane failed: ${(error as Error).message})`;
    }
  };
  const paneDead = () => {
    try {
      return tmux("display-message", "-p", "-t", target, "#{pane_dead}").trim() === "1";
    } catch {
      return true;
    }
  };

  return {
    session,
    pid: panePid!,
    home,
    capture,
    type(text) {
      tmux("send-keys", "-t", target, "-l", "--", text);
    },
    press(...keys) {
      for (const key of keys) tmux("send-keys", "-t", target, key);
    },
    async waitForScreen(pattern, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const screen = capture();
        if (pattern.test(screen)) return screen;
        // A dead pane shows pi's last words (remain-on-exit): no need to wait out the timeout.
        const dead = paneDead();
        if (dead || Date.now() >= deadline) {
          const final = capture();
          if (pattern.test(final)) return final;
          throw new Error(
            `${dead ? "pi exited" : `timed out after ${timeoutMs} ms`} waiting for ${pattern} on the screen of tmux session ${session}:\n${final.trimEnd()}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    stop() {
      stopped ??= (async () => {
        // Everything to be gone afterwards: pi, what it started (servers, even in their own process groups), anything
        // else carrying the session's marker, and the tmux server itself.
        const watched = new Set([...processTree(panePid!), ...processesWithEnv(SESSION_MARKER_ENV, session)]);
        if (serverPid) watched.add(serverPid);
        try {
          // Closes the pane: pi gets SIGHUP, as when a terminal window is closed.
          tmux("kill-server");
        } catch {
          // Already gone.
        }
        const alive = () => [...watched].filter(isAlive);
        try {
          await waitFor(
            () => alive().length === 0,
            `pi and its processes to exit (tmux session ${session})`,
            15_000,
            50,
          );
        } catch {
          const survivors = alive();
          const listing = describeProcesses(survivors);
          for (const pid of survivors) {
            try {
              process.kill(pid, "SIGKILL");
            } catch {
              // Exited meanwhile.
            }
          }
          throw new Error(`processes still running 15 s after the tmux session ${session} was killed:\n${listing}`);
        } finally {
          temp.cleanup();
          rmSync(tmuxSocketPath(session), { force: true });
        }
      })();
      return stopped;
    },
  };
}

/** Where `tmux -L <name>` keeps its socket. */
function tmuxSocketPath(name: string): string {
  const uid = process.getuid?.() ?? 0;
  return path.join(process.env.TMUX_TMPDIR || "/tmp", `tmux-${uid}`, name);
}
