/**
 * The OAuth redirect receiver: real HTTP on 127.0.0.1 with fetch. Ports come from the system (a port-0 bind), never
 * the default 9876, which may be in use on the machine running the tests.
 */
import assert from "node:assert/strict";
import { createServer, connect, type AddressInfo, type Server } from "node:net";
import { networkInterfaces } from "node:os";
import { describe, it } from "node:test";
import {
  CALLBACK_PATH,
  CALLBACK_PORT_TRIES,
  CallbackServer,
  DEFAULT_SIGN_IN_TIMEOUT_MS,
  OAuthCallbackError,
  parseRedirect,
} from "../src/oauth/callback-server.ts";
import { DEFAULT_OAUTH_CALLBACK_PORT as DEFAULT_CALLBACK_PORT } from "../src/config/defaults.ts";

const STATE = "state-0123456789abcdef";
const CODE = "SECRET-AUTH-CODE-42";

function listenOn(port: number): Promise<Server | undefined> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) =>
      error.code === "EADDRINUSE" ? resolve(undefined) : reject(error),
    );
    server.listen({ port, host: "127.0.0.1", exclusive: true }, () => resolve(server));
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A port the system just had free, with room for the tries after it. */
async function freeBasePort(): Promise<number> {
  // The system hands out ports near the top of the range only now and then: a few draws find one with room.
  for (let draw = 0; draw < 20; draw++) {
    const server = await listenOn(0);
    assert.ok(server);
    const { port } = server.address() as AddressInfo;
    await closeServer(server);
    if (port + CALLBACK_PORT_TRIES - 1 <= 65_535) return port;
  }
  assert.fail(`no free port with ${CALLBACK_PORT_TRIES - 1} ports above it in 20 draws`);
}

/** Holds the port (undefined when something else holds it already: taken either way). */
async function occupy(port: number): Promise<Server | undefined> {
  return listenOn(port);
}

/** True when a TCP connection to the port is refused. */
function refused(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
  });
}

function redirect(server: CallbackServer, params: Record<string, string>): string {
  return `${server.redirectUrl}?${new URLSearchParams(params).toString()}`;
}

async function get(url: string, init?: RequestInit): Promise<{ status: number; body: string; headers: Headers }> {
  const response = await fetch(url, init);
  return { status: response.status, body: await response.text(), headers: response.headers };
}

/** Whether a promise has settled, without consuming its outcome. */
function watch(promise: Promise<unknown>): { settled: () => boolean } {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  return { settled: () => settled };
}

/**
 * Resolves once the server has answered a request sent after everything before it: by then it has read what was sent
 * earlier (a request already written to it is read no later than a later one), and done all it does for a request
 * it answered (its page goes out with `Connection: close`, and the server is done with it when it closes the socket).
 */
async function served(server: CallbackServer): Promise<void> {
  assert.equal((await get(`http://127.0.0.1:${server.port}/`)).status, 404);
}

/** A GET written to the server on a socket of its own: `sent` once it is out, `answered` with the status line. */
function rawGet(url: string): { sent: Promise<void>; answered: Promise<string> } {
  const { port, pathname, search } = new URL(url);
  const socket = connect({ port: Number(port), host: "127.0.0.1" });
  const sent = new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.once("connect", () =>
      socket.write(`GET ${pathname}${search} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`, () => resolve()),
    );
  });
  let text = "";
  socket.on("data", (chunk) => (text += chunk.toString()));
  const answered = new Promise<string>((resolve) => socket.once("close", () => resolve(text.split("\r\n")[0] ?? "")));
  return { sent, answered };
}

function isReason(reason: OAuthCallbackError["reason"]) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof OAuthCallbackError, `expected OAuthCallbackError, got ${String(error)}`);
    assert.equal(error.reason, reason);
    assert.ok(!error.message.includes(CODE), "the code must not appear in an error message");
    return true;
  };
}

async function startOnFreePort(
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<{ server: CallbackServer; base: number }> {
  const base = await freeBasePort();
  const server = await CallbackServer.start({ port: base, ...options });
  return { server, base };
}

describe("oauth callback server", { timeout: 60_000 }, () => {
  it("has the documented defaults", () => {
    assert.equal(DEFAULT_CALLBACK_PORT, 9876);
    assert.equal(CALLBACK_PORT_TRIES, 6);
    assert.equal(CALLBACK_PATH, "/callback");
    assert.equal(DEFAULT_SIGN_IN_TIMEOUT_MS, 300_000);
  });

  it("receives the code, shows a constant success page, and closes itself", async () => {
    const { server, base } = await startOnFreePort();
    assert.equal(server.port, base);
    assert.equal(server.redirectUrl, `http://127.0.0.1:${base}/callback`);
    const wait = server.waitForGrant(STATE);
    const response = await get(redirect(server, { code: CODE, state: STATE }));
    assert.equal(response.status, 200);
    assert.match(response.body, /Signed in\. You can close this tab and return to pi\./);
    assert.ok(!response.body.includes(CODE));
    assert.equal(response.headers.get("content-type"), "text/html; charset=utf-8");
    assert.equal(response.headers.get("cache-control"), "no-store");
    assert.equal(response.headers.get("x-content-type-options"), "nosniff");
    assert.match(response.headers.get("content-security-policy") ?? "", /^default-src 'none'/);
    assert.deepEqual(await wait, { code: CODE });
    assert.equal(await refused(base), true, "the server stops listening once the sign-in is over");
    await server.close();
    await server.close();
  });

  it("listens on loopback only: this machine's other addresses are refused", async (t) => {
    const outward = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a && a.family === "IPv4" && !a.internal)
      .map((a) => a!.address);
    if (outward.length === 0) return t.skip("this machine has no address but loopback");
    const { server, base } = await startOnFreePort();
    try {
      assert.equal(await refused(base), false, "it listens on 127.0.0.1");
      for (const address of outward) assert.equal(await refused(base, address), true, address);
    } finally {
      await server.close();
    }
  });

  it("answers a wrong state with 400 and keeps waiting for the right one", async () => {
    const { server } = await startOnFreePort();
    const wait = server.waitForGrant(STATE);
    const watched = watch(wait);
    const wrong = await get(redirect(server, { code: "forged-code", state: "other-state" }));
    assert.equal(wrong.status, 400);
    assert.ok(!wrong.body.includes("forged-code") && !wrong.body.includes("other-state"));
    await served(server);
    assert.equal(watched.settled(), false, "a forged redirect must not end the wait");
    const right = await get(redirect(server, { code: CODE, state: STATE }));
    assert.equal(right.status, 200);
    assert.deepEqual(await wait, { code: CODE });
  });

  it("answers a missing state with 400, also for an error redirect, and keeps waiting", async () => {
    const { server } = await startOnFreePort();
    const wait = server.waitForGrant(STATE);
    const watched = watch(wait);
    assert.equal((await get(redirect(server, { code: CODE }))).status, 400);
    assert.equal((await get(redirect(server, { error: "access_denied" }))).status, 400);
    assert.equal((await get(redirect(server, { state: STATE }))).status, 400, "neither code nor error");
    await served(server);
    assert.equal(watched.settled(), false);
    await server.close();
    await assert.rejects(wait, isReason("cancelled"));
  });

  it("rejects an error redirect as denied without reflecting anything into the page", async () => {
    const { server, base } = await startOnFreePort();
    const wait = server.waitForGrant(STATE);
    const script = "<script>alert('pwned')</script>";
    const response = await get(
      redirect(server, { error: "access_denied", error_description: `User said no ${script}`, state: STATE }),
    );
    assert.equal(response.status, 200);
    assert.match(response.body, /Sign-in failed/);
    for (const reflected of ["<script>", "pwned", "access_denied", "User said no", STATE]) {
      assert.ok(!response.body.includes(reflected), `page reflects ${reflected}`);
    }
    assert.equal(response.headers.get("content-type"), "text/html; charset=utf-8");
    assert.match(response.headers.get("content-security-policy") ?? "", /^default-src 'none'/);
    await assert.rejects(wait, (error: unknown) => {
      isReason("denied")(error);
      assert.match((error as Error).message, /access_denied/);
      assert.match((error as Error).message, /User said no/);
      return true;
    });
    assert.equal(await refused(base), true);
  });

  it("serves nothing but GET /callback", async () => {
    const { server } = await startOnFreePort();
    const wait = server.waitForGrant(STATE);
    const watched = watch(wait);
    const marker = "reflect-me-please";
    const query = `?code=${CODE}&state=${STATE}&x=${marker}`;
    for (const path of ["/", `/${marker}`, `/callback/${query}`, `/other${query}`, `/favicon.ico`]) {
      const response = await get(`http://127.0.0.1:${server.port}${path}`);
      assert.equal(response.status, 404, path);
      assert.ok(!response.body.includes(marker) && !response.body.includes(CODE), path);
    }
    const post = await get(`${server.redirectUrl}${query}`, { method: "POST", body: marker });
    assert.equal(post.status, 404);
    assert.ok(!post.body.includes(marker));
    await served(server);
    assert.equal(watched.settled(), false);
    await server.close();
    await assert.rejects(wait, isReason("cancelled"));
  });

  it("holds a redirect that arrives before waitForGrant() and answers it once the state is known", async () => {
    const { server } = await startOnFreePort();
    const early = rawGet(redirect(server, { code: CODE, state: STATE }));
    await early.sent;
    await served(server);
    const wait = server.waitForGrant(STATE);
    assert.match(await early.answered, /^HTTP\/1\.1 200 /);
    assert.deepEqual(await wait, { code: CODE });
  });

  it("moves to the next port when the first is taken, and gives up after all tries", async () => {
    const base = await freeBasePort();
    const blocker = await occupy(base);
    try {
      const server = await CallbackServer.start({ port: base });
      // The next port, unless another test took that one meanwhile (files run in parallel): then one of the others.
      assert.ok(server.port > base && server.port < base + CALLBACK_PORT_TRIES, `moved from ${base} to ${server.port}`);
      assert.equal(server.redirectUrl, `http://127.0.0.1:${server.port}/callback`);
      await server.close();
    } finally {
      if (blocker) await closeServer(blocker);
    }

    const base2 = await freeBasePort();
    const blockers: Server[] = [];
    try {
      for (let port = base2; port < base2 + CALLBACK_PORT_TRIES; port++) {
        const held = await occupy(port);
        if (held) blockers.push(held);
      }
      await assert.rejects(CallbackServer.start({ port: base2 }), (error: unknown) => {
        isReason("ports_in_use")(error);
        assert.match((error as Error).message, new RegExp(`${base2}-${base2 + CALLBACK_PORT_TRIES - 1}`));
        return true;
      });
    } finally {
      await Promise.all(blockers.map(closeServer));
    }
  });

  it("times out, and frees the port", async () => {
    const { server, base } = await startOnFreePort({ timeoutMs: 200 });
    const wait = server.waitForGrant(STATE);
    await assert.rejects(wait, isReason("timeout"));
    const again = await occupy(base);
    assert.ok(again, "the port is free again after the timeout");
    await closeServer(again);
    await server.close();
  });

  it("is cancelled by its AbortSignal", async () => {
    const controller = new AbortController();
    const { server, base } = await startOnFreePort({ signal: controller.signal });
    const wait = server.waitForGrant(STATE);
    controller.abort();
    await assert.rejects(wait, isReason("cancelled"));
    assert.equal(await refused(base), true);
    await server.close();

    const aborted = new AbortController();
    aborted.abort();
    await assert.rejects(
      CallbackServer.start({ port: await freeBasePort(), signal: aborted.signal }),
      isReason("cancelled"),
    );
  });

  it("close() while waiting rejects with cancelled and is idempotent", async () => {
    const { server, base } = await startOnFreePort();
    const wait = server.waitForGrant(STATE);
    await Promise.all([server.close(), server.close()]);
    await assert.rejects(wait, isReason("cancelled"));
    await server.close();
    assert.equal(await refused(base), true);
    // A redirect after the wait is over changes nothing.
    server.submitRedirectUrl(redirect(server, { code: CODE, state: STATE }));
    await assert.rejects(server.waitForGrant(STATE), isReason("cancelled"));
  });

  it("accepts a pasted redirect URL with the same checks", async () => {
    const { server, base } = await startOnFreePort();
    const wait = server.waitForGrant(STATE);
    assert.throws(
      () => server.submitRedirectUrl(redirect(server, { code: CODE, state: "wrong" })),
      isReason("state_mismatch"),
    );
    assert.throws(() => server.submitRedirectUrl(redirect(server, { code: CODE })), isReason("state_mismatch"));
    assert.throws(() => server.submitRedirectUrl("just some text"), isReason("invalid_redirect"));
    assert.throws(() => server.submitRedirectUrl(`${server.redirectUrl}?state=${STATE}`), isReason("invalid_redirect"));
    assert.equal(watch(wait).settled(), false);
    server.submitRedirectUrl(redirect(server, { code: CODE, state: STATE }));
    assert.deepEqual(await wait, { code: CODE });
    assert.equal(await refused(base), true);

    const { server: denied } = await startOnFreePort();
    const deniedWait = denied.waitForGrant(STATE);
    denied.submitRedirectUrl(`?error=access_denied&state=${STATE}`);
    await assert.rejects(deniedWait, isReason("denied"));
  });

  it("refuses misuse of waitForGrant()", async () => {
    const { server } = await startOnFreePort();
    assert.throws(() => server.waitForGrant(""), TypeError);
    const wait = server.waitForGrant(STATE);
    assert.equal(server.waitForGrant(STATE), wait);
    assert.throws(() => server.waitForGrant("another-state"));
    await server.close();
    await assert.rejects(wait, isReason("cancelled"));
  });
});

describe("parseRedirect", { timeout: 60_000 }, () => {
  it("returns the code of a matching redirect, from a string, a URL, or a bare query", () => {
    const url = `http://127.0.0.1:9876/callback?code=${CODE}&state=${STATE}`;
    assert.deepEqual(parseRedirect(url, STATE), { code: CODE });
    assert.deepEqual(parseRedirect(new URL(url), STATE), { code: CODE });
    assert.deepEqual(parseRedirect(`  ${url}\n`, STATE), { code: CODE });
    assert.deepEqual(parseRedirect(`?code=${CODE}&state=${STATE}`, STATE), { code: CODE });
    assert.deepEqual(parseRedirect(`code=${CODE}&state=${STATE}`, STATE), { code: CODE });
    assert.deepEqual(parseRedirect(`127.0.0.1:9876/callback?code=${CODE}&state=${STATE}`, STATE), { code: CODE });
    assert.deepEqual(parseRedirect(`?code=a%2Bb%3D&state=${STATE}`, STATE), { code: "a+b=" });
  });

  it("returns the authorization server's `iss` with the code, decoded, for the RFC 9207 check", () => {
    const iss = "https://as.example.com/tenant";
    assert.deepEqual(parseRedirect(`?code=${CODE}&state=${STATE}&iss=${encodeURIComponent(iss)}`, STATE), {
      code: CODE,
      iss,
    });
    assert.deepEqual(
      parseRedirect(`?code=${CODE}&state=${STATE}&iss=`, STATE),
      { code: CODE, iss: "" },
      "an empty iss is kept, to fail the check",
    );
  });

  it("returns the error, which wins over a code, with its description cleaned and cut", () => {
    assert.deepEqual(parseRedirect(`?error=access_denied&state=${STATE}`, STATE), { error: "access_denied" });
    assert.deepEqual(parseRedirect(`?error=server_error&code=${CODE}&state=${STATE}`, STATE), {
      error: "server_error",
    });
    const messy = "line one\r\nline\ttwo\u0007\u202Eevil\u200B";
    const parsed = parseRedirect(
      `?${new URLSearchParams({ error: "invalid_scope", error_description: messy, state: STATE })}`,
      STATE,
    );
    assert.deepEqual(parsed, { error: "invalid_scope", description: "line one line two evil" });
    const long = parseRedirect(
      `?${new URLSearchParams({ error: "x", error_description: "d".repeat(1000), state: STATE })}`,
      STATE,
    );
    assert.ok("description" in long && long.description !== undefined);
    assert.ok(Array.from(long.description).length <= 200);
    assert.ok(long.description.startsWith("ddd"));
  });

  it("throws state_mismatch for a missing, different or empty state", () => {
    assert.throws(() => parseRedirect(`?code=${CODE}`, STATE), isReason("state_mismatch"));
    assert.throws(() => parseRedirect(`?code=${CODE}&state=other`, STATE), isReason("state_mismatch"));
    assert.throws(() => parseRedirect(`?code=${CODE}&state=${STATE}x`, STATE), isReason("state_mismatch"));
    assert.throws(() => parseRedirect(`?code=${CODE}&state=`, ""), isReason("state_mismatch"));
    assert.throws(() => parseRedirect(`?error=access_denied&state=other`, STATE), isReason("state_mismatch"));
  });

  it("throws invalid_redirect when there is neither a code nor an error", () => {
    assert.throws(() => parseRedirect(`?state=${STATE}`, STATE), isReason("invalid_redirect"));
    assert.throws(() => parseRedirect(`?code=&error=&state=${STATE}`, STATE), isReason("invalid_redirect"));
    assert.throws(() => parseRedirect("not a url at all", STATE), isReason("invalid_redirect"));
    assert.throws(() => parseRedirect("", STATE), isReason("invalid_redirect"));
    assert.throws(() => parseRedirect(`http://127.0.0.1:9876/callback`, STATE), isReason("invalid_redirect"));
  });
});
