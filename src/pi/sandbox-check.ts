/**
 * Whether sandboxed servers can run on this machine, in words for `/mcp test` and `/mcp doctor`: the tools the sandbox
 * needs, checked without starting anything.
 */
import { spawnSync } from "node:child_process";
import { quoteValue } from "../common/text.ts";
import { ALLOW_USERNS } from "../connection/local/launch-failure.ts";
import { installHint, sandboxProblems } from "../sandbox/sandbox-runtime.mjs";

/** What bubblewrap said when it could not make a sandbox's namespaces; undefined when it could. */
function bwrapTried(): string | undefined {
  const args = ["--unshare-user", "--unshare-net", "--dev-bind", "/", "/", "true"];
  const run = spawnSync("bwrap", args, { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "ignore", "pipe"] });
  return run.status === 0 ? undefined : run.stderr.trim().split("\n")[0] || `bwrap exited with ${run.status}`;
}

export async function sandboxCheck(): Promise<{ ok: boolean; text: string }> {
  const problems = await sandboxProblems();
  // The library checks the tools, not that bubblewrap may make namespaces (Ubuntu 24.04 restricts them): it is tried.
  const tried = problems.length || process.platform !== "linux" ? undefined : bwrapTried();
  if (tried)
    return {
      ok: false,
      text: `The sandbox cannot run here, so sandboxed servers are not started: bubblewrap could not make its namespaces (it said ${quoteValue(tried)}): unprivileged user namespaces are restricted here; ${ALLOW_USERNS}.`,
    };
  // It runs, but with less than it could (Unix sockets left open without seccomp): the user should know.
  const warned = problems.warnings?.length ? ` The sandbox library warns: ${problems.warnings.join("; ")}.` : "";
  if (problems.length === 0) return { ok: true, text: `The sandbox can run here: its tools are installed.${warned}` };
  return {
    ok: false,
    text: `The sandbox cannot run here, so sandboxed servers are not started: ${[problems.join("; "), installHint(problems)].filter(Boolean).join(". ")}.`,
  };
}
