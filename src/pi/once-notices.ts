/**
 * Notices worth giving once, not at every start (remembered by ../bridge/notice-memory.ts): a `timeout` read as seconds
 * where that is not pi's own meaning, and a server's tools using schema keywords the model cannot see (nothing is to
 * be done about it; `/mcp` keeps saying it).
 */
import type { NoticeMemory } from "../bridge/notice-memory.ts";
import type { ConfigProblem, ServerConfig } from "../config/types.ts";
import { secondsNotices } from "../config/validate/timeout.ts";

export interface OnceNotices {
  /** Config notices to give this time. */
  problems: ConfigProblem[];
  /** Servers' notes given at an earlier start, as `server\0note`: left out of this start's notice. */
  told: Set<string>;
}

export async function onceNotices(
  memory: NoticeMemory,
  configs: readonly ServerConfig[],
  piMeansSeconds: boolean,
  schemaNotes: (server: string) => string[],
): Promise<OnceNotices> {
  const notes = configs.flatMap(({ name }) =>
    schemaNotes(name).map((text) => ({ key: `schema:${name}:${text}`, note: `${name}\0${text}` })),
  );
  const fresh = await memory.firstTime([...secondsNotices(configs, piMeansSeconds), ...notes]);
  const freshKeys = new Set(fresh.map((notice) => notice.key));
  return {
    problems: fresh.flatMap((notice) => ("problem" in notice ? [notice.problem] : [])),
    told: new Set(notes.filter((notice) => !freshKeys.has(notice.key)).map((notice) => notice.note)),
  };
}
