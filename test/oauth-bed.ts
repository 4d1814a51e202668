/**
 * The one bed of the OAuth suites against the real authorization server (./fixtures/oauth-server.ts): a temp dir, the
 * fixtures and connections it started (closed after the suite), the events the connections published, a log file and
 * the error messages it saw, so a suite can check that no secret reached any of them; and the three steps every suite
 * takes: `setup` (a server, an auth dir, a callback port), `connect` (a connection through the bridge) and `echo` (a
 * tool call through it).
 */
import { mkdirSync } from "node:fs";
import * as path from "node:path";
import { after } from "node:test";
import type { EventSink } from "../src/common/events.ts";
import { LogFile } from "../src/common/log-file.ts";
import type { ServerConnection } from "../src/connection/server-connection.ts";
import type { SignInHandler } from "../src/oauth/provider.ts";
import { automaticSignIn } from "../src/oauth/sign-in.ts";
import { AuthStore } from "../src/oauth/storage.ts";
import { type OAuthFixture, type OAuthFixtureOptions, startOAuthServer } from "./fixtures/oauth-server.ts";
import { connectionFor, freePort, tempDir } from "./helpers.ts";
import { runTool, toolsOf } from "./pi-tools.ts";

/** How a suite's connections are made, unless a call says otherwise. */
export interface ConnectDefaults {
  /** The server's name in the config (its tools are `mcp_<name>_…`). */
  name?: string;
  /** Settings every `auth` block of the suite starts from. */
  auth?: Record<string, unknown>;
  /** The key the block goes under: `auth`, or pi 1.x's `oauth`. */
  authKey?: "auth" | "oauth";
  /** More of the config entry. */
  entry?: Record<string, unknown>;
  /** Who signs in: by default nobody waits (the authorization server approves at once); `null`: nobody can. */
  signIn?: SignInHandler | null;
  /** Who can sign in at the moment it is asked (over `signIn`): a session whose UI comes later. */
  signInNow?: () => SignInHandler | undefined;
  /** The store takes over pi 1.x's sign-ins from `<authDir>.json` (`mcp-auth.json` beside `mcp-auth/`, as pi has it). */
  piSignIns?: boolean;
  /** Bounds a sign-in (10 s unless set). */
  signInTimeoutMs?: number;
  /** Bounds each answer of the token endpoint (30 s, and no longer than the sign-in, unless set). */
  tokenTimeoutMs?: number;
}

export interface ConnectOptions extends ConnectDefaults {
  /** The server's URL, when not the fixture's. */
  url?: string;
  env?: NodeJS.ProcessEnv;
  /** Whether the project's config is trusted (a `!command` secret runs only then). */
  trusted?: () => boolean;
  /** The project root `${PROJECT_ROOT}` names, when not the repository's. */
  projectRoot?: string;
}

export interface OAuthBed {
  tmp: ReturnType<typeof tempDir>;
  fixtures: OAuthFixture[];
  connections: ServerConnection[];
  events: Array<{ channel: string; payload: Record<string, unknown> }>;
  sink: EventSink;
  logger: LogFile;
  messages: string[];
  /**
   * A new authorization server (closed with the suite), and for it a fresh agent dir with the bridge's auth dir and
   * the path of pi 1.x's file of sign-ins in it, and a free callback port.
   */
  setup(options?: OAuthFixtureOptions): Promise<{
    fixture: OAuthFixture;
    authDir: string;
    piFile: string;
    callbackPort: number;
  }>;
  /** A fresh auth dir (`<agent dir>/mcp-auth`, the agent dir made) in the bed's temp dir. */
  newAuthDir(): string;
  /** A connection to `fixture` with `auth` (over the suite's), its tokens in `authDir`; closed with the suite. */
  connect(
    fixture: OAuthFixture,
    authDir: string,
    auth?: Record<string, unknown>,
    options?: ConnectOptions,
  ): ServerConnection;
  /** The server's echo tool called with `text`; the message of a failure is kept for the secret checks. */
  echo(connection: ServerConnection, text: string): Promise<string>;
}

/** Call inside a `describe`: the bed, torn down by an `after` hook of that suite. */
export function oauthBed(prefix: string, defaults: ConnectDefaults = {}): OAuthBed {
  const tmp = tempDir(prefix);
  const events: OAuthBed["events"] = [];
  let dirs = 0;
  const bed: OAuthBed = {
    tmp,
    fixtures: [],
    connections: [],
    events,
    sink: (channel, payload) => events.push({ channel, payload }),
    logger: new LogFile(path.join(tmp.dir, "logs", "mcp.log")),
    messages: [],
    newAuthDir() {
      const agentDir = path.join(tmp.dir, `agent-${++dirs}`);
      mkdirSync(agentDir, { recursive: true });
      return path.join(agentDir, "mcp-auth");
    },
    async setup(options = {}) {
      const fixture = await startOAuthServer(options);
      bed.fixtures.push(fixture);
      const authDir = bed.newAuthDir();
      return { fixture, authDir, piFile: `${authDir}.json`, callbackPort: await freePort() };
    },
    connect(fixture, authDir, auth = {}, options = {}) {
      const settings = { ...defaults, ...options };
      const {
        name = "secure",
        authKey = "auth",
        url = fixture.url,
        env,
        piSignIns,
        signInTimeoutMs = 10_000,
      } = settings;
      const signIn = settings.signIn === undefined ? automaticSignIn() : settings.signIn;
      const entry = { url, [authKey]: { ...defaults.auth, ...auth }, ...defaults.entry, ...options.entry };
      const store = new AuthStore(authDir, piSignIns ? { piAuthFile: `${authDir}.json` } : {});
      const connection = connectionFor(name, entry, {
        authStore: store,
        signIn: options.signInNow ?? defaults.signInNow ?? (() => signIn ?? undefined),
        signInTimeoutMs,
        tokenTimeoutMs: settings.tokenTimeoutMs,
        events: bed.sink,
        logger: bed.logger,
        ...(env ? { env } : {}),
        ...(options.trusted ? { trusted: options.trusted } : {}),
        ...(options.projectRoot ? { projectRoot: options.projectRoot } : {}),
      });
      bed.connections.push(connection);
      return connection;
    },
    async echo(connection, text) {
      try {
        return (await runTool(toolsOf(connection).get(`mcp_${connection.name}_echo`), { text })).text;
      } catch (error) {
        bed.messages.push(String(error));
        throw error;
      }
    },
  };
  after(async () => {
    for (const c of bed.connections) await c.close();
    for (const f of bed.fixtures) await f.close();
    await bed.logger.close();
    tmp.cleanup();
  });
  return bed;
}
