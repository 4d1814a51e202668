/**
 * Every default a server entry falls back to, in one place: how long connecting and calls may take, how dropped
 * servers are retried, how often idle ones are checked, and where the OAuth redirect is received.
 */
import type { RetryPolicy } from "./types.ts";

/** How long a remote server's connect (initialize handshake) may take: `timeout`. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 15_000;
/**
 * How long a local server has to start and complete its handshake: `initTimeout`. As long as pi 1.x gives its own: the
 * first start of an `npx` server downloads it, which takes many seconds, more on a slow network or a loaded machine.
 */
export const DEFAULT_INIT_TIMEOUT_MS = 60_000;
/** How long one request may wait for its answer (progress notifications restart the wait): `requestTimeout`. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** Remote servers reconnect after min(2^attempt * 1 s, 60 s), up to 10 times. */
export const DEFAULT_REMOTE_RETRY: RetryPolicy = { maxAttempts: 10, initialDelayMs: 1000, maxDelayMs: 60_000 };
/** Local servers restart after a crash at 1 s, 2 s, 4 s … up to 30 s apart, `maxRestarts` (5) times. */
export const DEFAULT_LOCAL_RETRY: RetryPolicy = { maxAttempts: 5, initialDelayMs: 1000, maxDelayMs: 30_000 };
/** How long the hub keeps a shared server once its last pi session has left. */
export const DEFAULT_SHARED_IDLE_MS = 30_000;

/** How often an idle connection is pinged: `healthCheckInterval`. */
export const DEFAULT_HEALTH_CHECK_INTERVAL_MS = 5 * 60_000;
/** How long that ping may take: `pingTimeout`. */
export const DEFAULT_PING_TIMEOUT_MS = 10_000;

/** The first loopback port the OAuth redirect is received on: `auth.callbackPort`. */
export const DEFAULT_OAUTH_CALLBACK_PORT = 9876;

/** What a server may send before the bridge refuses it: `maxTools`, `maxSchemaBytes`, `maxMessageBytes`. */
export const DEFAULT_MAX_TOOLS = 500;
export const DEFAULT_MAX_SCHEMA_BYTES = 64 * 1024;
/** The largest one JSON-RPC message may be: a local server's stdout line, a remote server's JSON response or SSE event. */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
