/**
 * Real `pi --mode rpc` as a child process, with this repo's extension and the faux model (test/tmux.ts's
 * `DEFAULT_PI_ARGS`), HOME and agent dir in `home`, offline: what the tests and benchmarks that run whole pi processes
 * share. Its stdout (pi's RPC events, one JSON value a line) is collected for the caller to read.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import * as path from "node:path";
import type { Readable, Writable } from "node:stream";
import { DEFAULT_PI_ARGS, PI_CLI } from "./tmux.ts";

export interface RpcPi {
  child: ChildProcessByStdio<Writable, Readable, null>;
  /** Resolves once pi has exited. */
  exited: Promise<void>;
  /** All pi wrote to stdout so far. */
  output(): string;
}

/** Starts pi on the servers of `config` in `cwd` (default `home`). */
export function spawnRpcPi(home: string, config: string, cwd = home): RpcPi {
  const child = spawn(
    process.execPath,
    [PI_CLI, ...DEFAULT_PI_ARGS, "--mode", "rpc", "--no-session", "--mcp-config", config],
    {
      cwd,
      env: {
        ...process.env,
        HOME: home,
        PI_CODING_AGENT_DIR: path.join(home, "agent"),
        PI_OFFLINE: "1",
        PI_MCP_STARTUP_BUDGET_MS: "120000",
        npm_config_offline: "true",
      },
      stdio: ["pipe", "pipe", "ignore"],
    },
  );
  let stdout = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (text: string) => (stdout += text));
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  return { child, exited, output: () => stdout };
}
