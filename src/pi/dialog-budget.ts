/**
 * How much of the user's attention a server's requests may take (sampling, elicitation, a page a call needs first):
 * one request at a time from each server, and one dialog at a time of all servers, since pi shows one and a second
 * would replace the first; at most 5 requests a minute from each server, so a burst is refused at once, unasked,
 * rather than queued; none at all from a server the user chose to refuse for the rest of the pi session. Refusals are
 * told to the user in one notice per burst, with their count and why, never one per request; the server gets an error
 * or a decline that says why.
 */
import { plural } from "../common/text.ts";
import { isObject } from "../common/values.ts";

const DIALOGS_PER_MINUTE = 5;
const WINDOW_MS = 60_000;
/** A burst's notice waits this long for the rest of the burst; a server gets at most one such notice a minute. */
const NOTICE_DELAY_MS = 1000;

/** The session entry that records a server the user refused for the rest of the session (`{server}`). */
export const DENIED_ENTRY = "mcp-bridge.dialogs-denied";
/** What the dialog offers so that a server asks no more this session. */
export const DENY_REST = "Deny the rest from this server for this session";

type Refusal = "denied" | "limit";

interface ServerState {
  /** When each request in the window was let through. */
  admitted: number[];
  denied: boolean;
  /** Refused since the last notice, by why. */
  refused: Record<Refusal, number>;
  lastNotice: number;
  /** The server's dialog shown now, or its last one; its next waits for it. */
  shown: Promise<unknown>;
  timer?: ReturnType<typeof setTimeout>;
}

export class DialogBudget {
  private servers = new Map<string, ServerState>();
  /** The dialog on screen, of any server: pi shows one, and a second replaces the first, left unanswered unseen. */
  private screen: Promise<unknown> = Promise.resolve();
  /** Aborted when a new session starts: pi took the old one's dialogs away unanswered, and their servers are told. */
  private session = new AbortController();

  constructor(
    private readonly notify: (text: string) => void,
    /** Records in pi's session a server the user refused for the rest of it, for the bridge a /reload loads anew. */
    private readonly record?: (server: string) => void,
  ) {}

  /**
   * Runs `dialog` for `server` once the dialogs before it are done, when the server may ask now; otherwise returns
   * `refuse(reason)` at once, where `reason` is what the server is told. `screen`: the whole of `dialog` is one on
   * screen (a form); else it puts each of its own there ({@link onScreen}), a model's answer between them.
   */
  async run<T>(server: string, dialog: () => Promise<T>, refuse: (reason: string) => T, screen = true): Promise<T> {
    const state = this.stateOf(server);
    const now = Date.now();
    state.admitted = state.admitted.filter((t) => now - t < WINDOW_MS);
    if (state.denied) return refuse(this.refused(server, state, "denied"));
    if (state.admitted.length >= DIALOGS_PER_MINUTE) return refuse(this.refused(server, state, "limit"));
    state.admitted.push(now);
    // Requests let through before the user denied the rest are refused when their turn comes.
    const turn = state.shown.then(() =>
      state.denied ? refuse(this.refused(server, state, "denied")) : screen ? this.onScreen(dialog) : dialog(),
    );
    state.shown = turn.catch(() => undefined);
    return turn;
  }

  /** Shows `dialogs` once no other's are on screen; a model's answer is not awaited here, so holds up no one. */
  onScreen<T>(dialogs: () => Promise<T>): Promise<T> {
    const turn = this.screen.then(dialogs);
    this.screen = turn.catch(() => undefined);
    return turn;
  }

  /** Aborts once the session the dialogs are shown in has ended. */
  get ended(): AbortSignal {
    return this.session.signal;
  }

  /** The user chose {@link DENY_REST} in one of `server`'s dialogs. */
  denyRest(server: string): void {
    this.stateOf(server).denied = true;
    this.record?.(server);
  }

  /** A new pi session: every server may ask again; a reload goes on with those its `entries` record as refused. */
  reset(entries: readonly unknown[] = []): void {
    for (const state of this.servers.values()) clearTimeout(state.timer);
    this.servers.clear();
    // pi takes the old session's dialogs away unanswered (on /new, a resume): none is on screen any more.
    this.screen = Promise.resolve();
    this.session.abort();
    this.session = new AbortController();
    for (const e of entries)
      if (isObject(e) && e.customType === DENIED_ENTRY && isObject(e.data) && typeof e.data.server === "string")
        this.stateOf(e.data.server).denied = true;
  }

  private stateOf(server: string): ServerState {
    const state = this.servers.get(server) ?? {
      admitted: [],
      denied: false,
      refused: { denied: 0, limit: 0 },
      lastNotice: -Infinity,
      shown: Promise.resolve(),
    };
    this.servers.set(server, state);
    return state;
  }

  /** Counts a refusal for the burst's notice; what the server is told. */
  private refused(server: string, state: ServerState, why: Refusal): string {
    state.refused[why]++;
    if (!state.timer) {
      const delay = Math.max(NOTICE_DELAY_MS, state.lastNotice + WINDOW_MS - Date.now());
      state.timer = setTimeout(() => this.tell(server, state), delay);
      state.timer.unref?.();
    }
    const who = `MCP server '${server}'`;
    return why === "denied"
      ? `The user denied the rest of ${who}'s requests for this session; this one was refused without asking`
      : `${who} sent more than ${DIALOGS_PER_MINUTE} requests for the user in a minute; this one was refused without asking`;
  }

  private tell(server: string, state: ServerState): void {
    state.timer = undefined;
    state.lastNotice = Date.now();
    const { denied, limit } = state.refused;
    state.refused = { denied: 0, limit: 0 };
    const reasons = [
      limit &&
        `${limit} as it sent more than ${DIALOGS_PER_MINUTE} in a minute, the most pi puts to you from one server`,
      denied &&
        `${denied} as you chose to deny the rest of its requests for this session (a new session, /new, lets it ask again)`,
    ];
    this.notify(
      `Refused ${plural(denied + limit, "request")} from MCP server '${server}' without asking you: ` +
        `${reasons.filter(Boolean).join("; ")}.`,
    );
  }
}
