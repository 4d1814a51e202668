/**
 * Whether sandboxed servers can run on this machine, in words for `/mcp test` and `/mcp doctor`: the tools the sandbox
 * needs, checked without starting anything.
 */
import { installHint, sandboxProblems } from "../sandbox/sandbox-runtime.mjs";

export async function sandboxCheck(): Promise<{ ok: boolean; text: string }> {
  const problems = await sandboxProblems();
  // It runs, but with less than it could (Unix sockets left open without seccomp): the user should know.
  const warned = problems.warnings?.length ? ` The sandbox library warns: ${problems.warnings.join("; ")}.` : "";
  if (problems.length === 0) return { ok: true, text: `The sandbox can run here: its tools are installed.${warned}` };
  return {
    ok: false,
    text: `The sandbox cannot run here, so sandboxed servers are not started: ${[problems.join("; "), installHint(problems)].filter(Boolean).join(". ")}.`,
  };
}
