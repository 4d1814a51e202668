/**
 * What every OAuth suite against the real authorization server (./fixtures/oauth-server.ts) keeps: a temp dir, the
 * fixtures and connections it started (closed after the suite), the events the connections published, a log file and
 * the error messages it saw, so a suite can check that no secret reached any of them.
 */
import * as path from "node:path";
import { after } from "node:test";
import type { EventSink } from "../src/common/events.ts";
import { LogFile } from "../src/common/log-file.ts";
import type { ServerConnection } from "../src/connection/server-connection.ts";
import type { OAuthFixture } from "./fixtures/oauth-server.ts";
import { tempDir } from "./helpers.ts";

export interface OAuthBed {
  tmp: ReturnType<typeof tempDir>;
  fixtures: OAuthFixture[];
  connections: ServerConnection[];
  events: Array<{ channel: string; payload: Record<string, unknown> }>;
  sink: EventSink;
  logger: LogFile;
  messages: string[];
}

/** Call inside a `describe`: the bed, torn down by an `after` hook of that suite. */
export function oauthBed(prefix: string): OAuthBed {
  const tmp = tempDir(prefix);
  const events: OAuthBed["events"] = [];
  const bed: OAuthBed = {
    tmp,
    fixtures: [],
    connections: [],
    events,
    sink: (channel, payload) => events.push({ channel, payload }),
    logger: new LogFile(path.join(tmp.dir, "logs", "mcp.log")),
    messages: [],
  };
  after(async () => {
    for (const c of bed.connections) await c.close();
    for (const f of bed.fixtures) await f.close();
    await bed.logger.close();
    tmp.cleanup();
  });
  return bed;
}
