/**
 * A measurement made in a fresh node process: runs it, bounded in time, and reads the JSON object it prints as the
 * last line of its stdout.
 */
import { spawn } from "node:child_process";

export interface ChildRun {
  /** Arguments to node: flags, the script, its arguments. */
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  timeoutMs?: number;
}

export async function childJson<T>(run: ChildRun): Promise<T> {
  const child = spawn(process.execPath, run.args, {
    cwd: run.cwd,
    env: run.env ?? process.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  const timeoutMs = run.timeoutMs ?? 60_000;
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (c, s) => resolve([c, s]));
  }).finally(() => clearTimeout(timer));
  const script = run.args.find((a) => !a.startsWith("-")) ?? "node";
  if (code !== 0) {
    const why = signal === "SIGKILL" ? `killed after ${timeoutMs} ms` : `exited with ${code ?? signal}`;
    throw new Error(`${script} ${why}: ${stderr.trim().split("\n").slice(-3).join(" | ")}`);
  }
  const last = stdout.trim().split("\n").at(-1) ?? "";
  try {
    return JSON.parse(last) as T;
  } catch {
    throw new Error(`${script} printed no JSON result (last line: ${JSON.stringify(last.slice(0, 200))})`);
  }
}
