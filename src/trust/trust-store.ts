/**
 * The user's project-trust answers on disk (`<agent dir>/mcp-bridge/trust.json`, 0600): per project — keyed by the
 * project directory's real path, so a symlink or `..` does not make a second project — each server's fingerprint and
 * whether it is trusted (and whether only in a sandbox). Several pi processes may share the file: every write re-reads it, changes only its own
 * project's servers, and replaces the file atomically, holding a lock file beside it (`trust.json.lock`).
 */
import { realpathSync } from "node:fs";
import * as path from "node:path";
import { fileLock, serialised } from "../common/atomic-file.ts";
import { isObject } from "../common/values.ts";
import { readVersioned, writeVersioned } from "../common/versioned-json.ts";
import type { TrustAnswer, TrustRecord } from "./trust-rules.ts";

const FILE_VERSION = 1;

type Projects = Map<string, Map<string, TrustAnswer>>;

/** The directory as the store knows it: its real path where it exists. */
function projectKey(projectRoot: string): string {
  try {
    return realpathSync(projectRoot);
  } catch {
    return path.resolve(projectRoot);
  }
}

function parseAnswers(value: unknown): Map<string, TrustAnswer> {
  const answers = new Map<string, TrustAnswer>();
  for (const [name, answer] of Object.entries(isObject(value) ? value : {})) {
    if (!isObject(answer) || typeof answer.hash !== "string" || typeof answer.trusted !== "boolean") continue;
    const sandboxed = answer.sandboxed === true ? { sandboxed: true } : {};
    answers.set(name, { hash: answer.hash, trusted: answer.trusted, ...sandboxed });
  }
  return answers;
}

/** What the file holds; anything unreadable reads as no answers (every server is then asked about again). */
function parseStore(data: Record<string, unknown> | undefined): Projects {
  if (!isObject(data?.projects)) return new Map();
  return new Map(Object.entries(data.projects).map(([key, servers]) => [key, parseAnswers(servers)]));
}

function storedProjects(projects: Projects): Record<string, Record<string, TrustAnswer>> {
  // Null-prototype objects: a server or directory named `__proto__` is stored as a plain key.
  const out: Record<string, Record<string, TrustAnswer>> = Object.create(null);
  for (const [key, answers] of projects)
    out[key] = Object.assign(Object.create(null) as Record<string, TrustAnswer>, Object.fromEntries(answers));
  return out;
}

export class TrustStore {
  constructor(readonly file: string) {}

  private async readAll(): Promise<Projects> {
    return parseStore(await readVersioned(this.file, FILE_VERSION));
  }

  /** The answers given for the project at `projectRoot`. Never throws. */
  async read(projectRoot: string): Promise<TrustRecord> {
    return (await this.readAll()).get(projectKey(projectRoot)) ?? new Map();
  }

  /** Saves `answers` for the project at `projectRoot` (other servers' answers stay). Throws if the file cannot be written. */
  save(projectRoot: string, answers: ReadonlyMap<string, TrustAnswer>): Promise<void> {
    return this.update(projectRoot, () => answers);
  }

  /**
   * Saves the answers `change` gives from the project's answers on disk, read in the same step (no other save of this
   * process comes between); nothing is written when it gives none. Throws if the file cannot be written.
   */
  update(projectRoot: string, change: (answers: TrustRecord) => ReadonlyMap<string, TrustAnswer>): Promise<void> {
    const key = projectKey(projectRoot);
    return serialised(this.file, async () => {
      // Another pi's read and write must not come between this one's: it would drop the answers written here.
      const release = await fileLock(`${this.file}.lock`);
      try {
        const projects = await this.readAll();
        const merged = new Map(projects.get(key));
        const answers = change(merged);
        if (answers.size === 0) return;
        for (const [name, answer] of answers) merged.set(name, answer);
        projects.set(key, merged);
        await writeVersioned(this.file, FILE_VERSION, { projects: storedProjects(projects) });
      } finally {
        release();
      }
    });
  }
}
