/**
 * Remote servers over real HTTP on 127.0.0.1: Streamable HTTP, legacy SSE, the SSE fallback, auth failures, hangs.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer as createHttpServer, request as httpRequest } from "node:http";
import { createServer as createTlsServer } from "node:https";
import { type AddressInfo, createServer } from "node:net";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { BridgeError, describeError } from "../src/common/errors.ts";
import { redactShapes } from "../src/common/redact.ts";
import { automaticSignIn } from "../src/oauth/sign-in.ts";
import { AuthStore } from "../src/oauth/storage.ts";
import type { ServerConnection } from "../src/connection/server-connection.ts";
import { TINY_PNG } from "./fixtures/fixture-server.ts";
import {
  type RunningServer,
  startHanging,
  startPlain,
  startAnswering,
  startSse,
  startStreamableHttp,
  startUnauthorized,
} from "./fixtures/http-servers.ts";
import { type IdleClose, startIdleClosingProxy } from "./fixtures/idle-closing-proxy.ts";
import { connectFailure, connectionFor, tempDir, waitFor } from "./helpers.ts";
import { runTool, type ToolRun, toolsOf } from "./pi-tools.ts";

/** Calls `mcp_<server>_<tool>` of a connection. */
function call(
  connection: ServerConnection,
  tool: string,
  params: Record<string, unknown> = {},
  signal?: AbortSignal,
): Promise<ToolRun> {
  return runTool(toolsOf(connection).get(`mcp_${connection.name}_${tool}`), params, signal);
}

/** A port nothing listens on. */
/**
 * A stateless server behind a proxy that closes idle connections `how`: after a first echo, calls `echo` once the proxy
 * marked the idle connections to close, until a call met that close (at most 3 rounds: undici may have let an idle
 * connection go on its own first, when the machine is slow); then `check` gets each round's outcome.
 */
async function echoOnIdleClosed(
  how: IdleClose,
  check: (outcomes: Array<PromiseSettledResult<ToolRun>>, server: RunningServer) => void,
): Promise<void> {
  const server = await startStreamableHttp({ stateless: true });
  const proxy = await startIdleClosingProxy(server.url);
  const connection = connectionFor("web", { url: proxy.url });
  try {
    await connection.connect();
    assert.equal((await call(connection, "echo", { text: "first" })).text, "first");
    const met = () => (how === "unread" ? proxy.resetUnread() : proxy.resetAnswered());
    const outcomes: Array<PromiseSettledResult<ToolRun>> = [];
    for (let round = 0; round < 3 && met() === 0; round++) {
      assert.ok(proxy.closeIdle(how) >= 1, "an idle connection to close");
      outcomes.push((await Promise.allSettled([call(connection, "echo", { text: `${how} ${round}` })]))[0]!);
    }
    assert.ok(met() >= 1, `a request met the close (${how})`);
    check(outcomes, server);
  } finally {
    await connection.close();
    await proxy.close();
    await server.close();
  }
}

/**
 * A proxy in front of the server on `port` that ends its SSE answer to the POST carrying `method` early, as a proxy that
 * cuts a long stream does: after its first event (`afterFirst`), else right after its headers. The rest passes.
 */
async function cuttingFront(port: number, method: string, afterFirst: boolean) {
  const front = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const options = { port, path: req.url, method: req.method, headers: req.headers };
      const upstream = httpRequest({ ...options, host: "127.0.0.1" }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        if (!body.includes(`"method":"${method}"`)) return void answer.pipe(res);
        if (!afterFirst) return void res.end();
        answer.once("data", (first: Buffer) => res.write(first, () => res.end()));
      });
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(front.address() as AddressInfo).port}/mcp`, front };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

for (const variant of ["stateful", "stateless"] as const) {
  describe(`Streamable HTTP (${variant})`, { timeout: 120_000 }, () => {
    let server: RunningServer;
    let connection: ServerConnection;
    before(async () => {
      server = await startStreamableHttp({ stateless: variant === "stateless" });
      connection = connectionFor("web", { url: server.url });
      await connection.connect();
    });
    after(async () => {
      await connection.close();
      await server.close();
    });

    test("lists and calls tools", async () => {
      assert.equal(connection.transport, "http");
      assert.equal(connection.fellBackToSse, false);
      assert.ok(connection.tools.some((t) => t.name === "echo"));
      assert.equal((await call(connection, "echo", { text: "over http" })).text, "over http");
      assert.deepEqual(server.calls.at(-1), { name: "echo", args: { text: "over http" } });
    });

    test("images and progress", async () => {
      const image = await call(connection, "image");
      assert.deepEqual(image.result.content[1], { type: "image", data: TINY_PNG, mimeType: "image/png" });
      const progress = await call(connection, "progress", { steps: 3, delayMs: 5 });
      assert.equal(progress.text, "done after 3 steps");
      assert.ok(progress.updates.length >= 2);
      assert.equal(progress.updates[0], "progress 1/3: step 1");
    });

    test(
      "cancellation reaches the server",
      { skip: variant === "stateless" && "a stateless server cannot tie a cancellation to a request" },
      async () => {
        const controller = new AbortController();
        const before = server.calls.length;
        const pending = call(connection, "slow", { ms: 30_000 }, controller.signal);
        await waitFor(() => server.calls.length > before, "the call to reach the server");
        controller.abort();
        await assert.rejects(pending, (e: unknown) => e instanceof BridgeError && e.kind === "cancelled");
        await waitFor(() => server.cancelled.includes("slow"), "the server to see the cancellation");
      },
    );
  });
}

describe("closing a remote connection", { timeout: 120_000 }, () => {
  test("ends the session and closes every socket", async () => {
    const server = await startStreamableHttp();
    const connection = connectionFor("web", { url: server.url });
    try {
      await connection.connect();
      await call(connection, "echo", { text: "x" });
      assert.ok(server.openSockets() > 0);
      await connection.close();
      assert.equal(connection.status, "disconnected");
      assert.ok(
        server.requests.some((r) => r.method === "DELETE"),
        "the session was terminated",
      );
      await waitFor(() => server.openSockets() === 0, "the client's sockets to close");
      await assert.rejects(call(connection, "echo", { text: "y" }), /shut down/);
    } finally {
      await server.close();
    }
  });
});

describe("legacy SSE", { timeout: 120_000 }, () => {
  let server: RunningServer;
  before(async () => {
    server = await startSse();
  });
  after(async () => {
    await server.close();
  });

  test('with `type: "sse"` it connects over SSE directly', async () => {
    const connection = connectionFor("old", { type: "sse", url: server.url });
    try {
      await connection.connect();
      assert.equal(connection.transport, "sse");
      assert.equal(connection.fellBackToSse, false);
      assert.equal((await call(connection, "echo", { text: "sse" })).text, "sse");
      assert.equal(
        server.requests.filter((r) => r.method === "POST" && r.path === "/sse").length,
        0,
        "no Streamable HTTP attempt",
      );
    } finally {
      await connection.close();
    }
  });

  test("without a type, a 405 to the Streamable HTTP POST falls back to SSE", async () => {
    const connection = connectionFor("old", { url: server.url });
    try {
      const postsBefore = server.requests.filter((r) => r.method === "POST" && r.path === "/sse").length;
      await connection.connect();
      assert.equal(connection.transport, "sse");
      assert.equal(connection.fellBackToSse, true);
      // Two Streamable HTTP POSTs, each refused: the revision probe (`server/discover`), then `initialize`.
      assert.equal(server.requests.filter((r) => r.method === "POST" && r.path === "/sse").length, postsBefore + 2);
      assert.equal((await call(connection, "add", { a: 1, b: 2 })).text, "3");
    } finally {
      await connection.close();
    }
  });
});

describe("the SSE fallback", { timeout: 120_000 }, () => {
  test('a legacy server that answers the POST with 400 (Playwright\'s "Missing sessionId") is reached over SSE', async () => {
    const server = await startSse({ refusePost: { status: 400, text: "Missing sessionId" } });
    const connection = connectionFor("pw", { url: server.url });
    try {
      await connection.connect();
      assert.equal(connection.transport, "sse");
      assert.equal(connection.fellBackToSse, true);
      assert.equal((await call(connection, "echo", { text: "via sse" })).text, "via sse");
    } finally {
      await connection.close();
      await server.close();
    }
  });

  test("a server that refuses everything with its own 400: the error is its answer to the POST", async () => {
    const server = await startAnswering(400, "Bad Request: unsupported MCP-Protocol-Version");
    const connection = connectionFor("strict", { url: server.url });
    try {
      const { message } = await connectFailure(connection);
      assert.match(message, /unsupported MCP-Protocol-Version/);
      assert.ok(
        server.requests.some((r) => r.method === "GET"),
        "the legacy transport was tried",
      );
    } finally {
      await connection.close();
      await server.close();
    }
  });

  test("an address that takes neither (404 to the POST, 405 to the legacy GET): the POST's answer, and check `url`", async () => {
    const server = await startPlain((req, res) => res.writeHead(req.method === "POST" ? 404 : 405).end("Not Found"));
    const connection = connectionFor("neither", { url: server.url, reconnect: { maxAttempts: 0 } });
    try {
      const { message } = await connectFailure(connection);
      assert.match(
        message,
        /Error POSTing to endpoint: Not Found \(nothing is served at this address: check that `url`/,
      );
    } finally {
      await connection.close();
      await server.close();
    }
  });
});

describe("remote failures", { timeout: 120_000 }, () => {
  test("a 401 server: an auth error naming the header and variable, no fallback, no reconnect loop, no secret shown", async () => {
    const server = await startUnauthorized();
    const connection = connectionFor(
      "locked",
      { url: server.url, headers: { Authorization: "Bearer ${MCP_TEST_TOKEN}" } },
      { env: { ...process.env, MCP_TEST_TOKEN: "tok-very-secret-1" } },
    );
    try {
      await assert.rejects(connection.connect(), (error: unknown) => {
        assert.ok(error instanceof BridgeError);
        assert.equal(error.kind, "auth");
        assert.match(error.message, /MCP server 'locked' rejected the request with HTTP 401 \(unauthorized\)/);
        assert.match(
          error.message,
          /check the `Authorization` header of 'locked' in project config .* \$\{MCP_TEST_TOKEN\} holds a valid/,
        );
        assert.doesNotMatch(error.message, /tok-very-secret-1/);
        return true;
      });
      assert.equal(server.requests.length, 1, "one request, then stop");
      assert.equal(server.requests[0]!.method, "POST");
      assert.equal(server.requests[0]!.authorization, "Bearer tok-very-secret-1", "the header was substituted");
    } finally {
      await connection.close();
      await server.close();
    }
  });

  // mcp-proxy's `--apiKey`: a 401 to everything, its metadata paths too. OAuth is on by default for an entry with no
  // `Authorization` header, and told the user to sign in, and `/mcp auth` then said the same: there is nothing to sign
  // in to. Whether someone could sign in or not, the error asks for the credential in `headers`.
  test("a 401 server that publishes no OAuth metadata (one that wants an API key): asked for a header, not a sign-in", async () => {
    const server = await startUnauthorized();
    const tmp = tempDir();
    const store = new AuthStore(path.join(tmp.dir, "mcp-auth"));
    try {
      for (const [entry, signIn, said] of [
        [{}, () => undefined, /: it sends no credentials; add an `Authorization` \(or API key\) header to 'keyed'/],
        [{ headers: { "X-API-Key": "wrong" } }, () => automaticSignIn(), /: check the `X-API-Key` header of 'keyed'/],
      ] as const) {
        const connection = connectionFor("keyed", { url: server.url, ...entry }, { authStore: store, signIn });
        await assert.rejects(connection.connect(), (error: unknown) => {
          assert.ok(error instanceof BridgeError);
          assert.equal(error.kind, "auth");
          assert.match(error.message, /^MCP server 'keyed' rejected the request with HTTP 401 \(unauthorized\)/);
          assert.match(error.message, said);
          assert.doesNotMatch(error.message, /sign in/);
          // The `!command` example survives the hiding of credentials that every shown message goes through.
          if (entry.headers) assert.match(redactShapes(error.message), /as a `!command` \(`"!cat <token file>"`\)/);
          return true;
        });
        await connection.close();
      }
    } finally {
      await server.close();
      tmp.cleanup();
    }
  });

  // mcp-proxy's `--apiKey` says why in `WWW-Authenticate` and in its body; others in the body only.
  test("a refusal's own words are quoted: `error_description`, or a JSON error's message; not a page, nor one word", async () => {
    const apiKey = "Unauthorized: Invalid or missing API key";
    const cases: Array<[RunningServer, string | undefined]> = [
      [
        await startAnswering(401, JSON.stringify({ error: { code: 401, message: "never read" } }), "application/json", {
          "WWW-Authenticate": `Bearer error="invalid_token", error_description="${apiKey}"`,
        }),
        apiKey,
      ],
      [
        await startAnswering(401, JSON.stringify({ error: { code: 401, message: apiKey } }), "application/json"),
        apiKey,
      ],
      [
        await startAnswering(403, JSON.stringify({ message: "Key wrong-key-1234 lacks the repo scope" })),
        "Key *** lacks the repo scope",
      ],
      [await startAnswering(401, "<html><body>Sign in to continue</body></html>", "text/html"), undefined],
      [await startAnswering(401, JSON.stringify({ error: "invalid_token" }), "application/json"), undefined],
      // Cut to 200 characters before the key the cut would split: it is redacted after the cut.
      [
        await startAnswering(401, JSON.stringify({ message: `${"word ".repeat(36)}bad key was: wrong-key-1234` })),
        `${"word ".repeat(36)}bad key was:`,
      ],
      // NestJS's shape: the status's one word in `error`, the server's own words in `message`.
      [await startAnswering(401, JSON.stringify({ statusCode: 401, error: "Unauthorized", message: apiKey })), apiKey],
    ];
    try {
      for (const [server, words] of cases) {
        const connection = connectionFor("keyed", { url: server.url, headers: { "X-API-Key": "wrong-key-1234" } });
        const { message } = await connectFailure(connection);
        const status = /HTTP (401|403)/.exec(message)?.[1];
        assert.ok(status, message);
        if (words)
          assert.ok(
            message.includes(
              `(${status === "401" ? "unauthorized" : "forbidden"}), saying ${JSON.stringify(words)}: check`,
            ),
            message,
          );
        else assert.doesNotMatch(message, /saying/);
      }
    } finally {
      await Promise.all(cases.map(([server]) => server.close()));
    }
  });

  test("a key sent under another scheme (`ApiKey …`, Elastic's; `SSWS …`, Okta's) and quoted back alone is hidden", async () => {
    for (const scheme of ["ApiKey", "SSWS"]) {
      const key = `${scheme.toLowerCase()}-key-4e7a9c1b`;
      const server = await startAnswering(401, JSON.stringify({ message: `The key ${key} is not valid` }));
      try {
        const connection = connectionFor("schemed", {
          url: server.url,
          headers: { Authorization: `${scheme} ${key}` },
        });
        const { message } = await connectFailure(connection);
        assert.ok(message.includes('saying "The key *** is not valid"'), message);
      } finally {
        await server.close();
      }
    }
  });

  test("a token revoked mid-session: the call fails with the auth message and is not retried", async () => {
    const auth = { token: "tok-first-valid" };
    const server = await startStreamableHttp({ auth });
    const connection = connectionFor(
      "gh",
      { url: server.url, headers: { Authorization: "Bearer ${MCP_TEST_TOKEN}" } },
      { env: { ...process.env, MCP_TEST_TOKEN: "tok-first-valid" } },
    );
    try {
      await connection.connect();
      assert.equal((await call(connection, "echo", { text: "a" })).text, "a");
      auth.token = "tok-rotated";
      const postsBefore = server.requests.filter((r) => r.method === "POST").length;
      await assert.rejects(call(connection, "echo", { text: "b" }), (error: unknown) => {
        assert.ok(error instanceof BridgeError && error.kind === "auth");
        assert.match(error.message, /HTTP 401/);
        assert.doesNotMatch(error.message, /tok-first-valid/);
        return true;
      });
      assert.equal(
        server.requests.filter((r) => r.method === "POST").length,
        postsBefore + 1,
        "no reconnect, no retry",
      );
    } finally {
      await connection.close();
      await server.close();
    }
  });

  test("a header value with a character HTTP cannot carry (a curly quote pasted in): the error names the header", async () => {
    const server = await startStreamableHttp();
    const headers = { "X-Api-Key": "\u201csecret-key\u201d" };
    const connection = connectionFor("quoted", { url: server.url, headers, reconnect: { maxAttempts: 0 } });
    try {
      await assert.rejects(connection.connect(), (error: unknown) => {
        assert.ok(error instanceof BridgeError && error.kind === "config", String(error));
        assert.match(
          error.message,
          /header `X-Api-Key` holds U\+201C, a character an HTTP header cannot carry: check its value in/,
        );
        assert.doesNotMatch(error.message, /secret-key/);
        return true;
      });
      assert.equal(server.requests.length, 0);
    } finally {
      await connection.close();
      await server.close();
    }
  });

  test("a url with a user name and password in it (`user:pass@`), which fetch never sends: a config error saying so", async () => {
    const server = await startStreamableHttp();
    const url = server.url.replace("http://", "http://alice:hunter2@");
    const connection = connectionFor("userinfo", { url, reconnect: { maxAttempts: 0 } });
    try {
      await assert.rejects(connection.connect(), (error: unknown) => {
        assert.ok(error instanceof BridgeError && error.kind === "config", String(error));
        assert.match(error.message, /`url` holds a user name and password \(`user:pass@`\), which are never sent/);
        assert.doesNotMatch(error.message, /hunter2/);
        return true;
      });
      assert.equal(server.requests.length, 0);
    } finally {
      await connection.close();
      await server.close();
    }
  });

  test("a missing variable in url or headers fails before any request", async () => {
    const server = await startStreamableHttp();
    delete process.env.MCP_TEST_UNSET_TOKEN;
    const connection = connectionFor("gh", {
      url: server.url,
      headers: { Authorization: "Bearer ${MCP_TEST_UNSET_TOKEN}" },
    });
    try {
      await assert.rejects(
        connection.connect(),
        /environment variable \$\{MCP_TEST_UNSET_TOKEN\} in header `Authorization` is not set/,
      );
      assert.equal(server.requests.length, 0);
    } finally {
      await connection.close();
      await server.close();
    }
  });

  test("a web page where the MCP endpoint was meant: the error says so, and where to look", async () => {
    const page = "<!doctype html><title>Sign in - Corp SSO</title>";
    const server = await startAnswering(200, page, "text/html; charset=utf-8");
    const connection = connectionFor("site", { url: server.url, reconnect: { maxAttempts: 0 } });
    try {
      const { message } = await connectFailure(connection);
      assert.match(message, /text\/html.*\(a web page, not MCP: check that `url` is the server's MCP endpoint/);
    } finally {
      await connection.close();
      await server.close();
    }
  });

  test("JSON that is no JSON-RPC message where MCP was meant (a health check's, an API's): said so, not 'Invalid input' alone", async () => {
    const server = await startAnswering(200, JSON.stringify({ status: "ok" }), "application/json");
    const connection = connectionFor("api", { url: server.url, reconnect: { maxAttempts: 0 } });
    try {
      const { message } = await connectFailure(connection);
      assert.match(
        message,
        /failed to connect: Invalid input \(an answer that is no MCP message.*check that `url` is the server's MCP endpoint/,
      );
    } finally {
      await server.close();
    }
  });

  test("a refusal with an empty body (a proxy's 503, a rate limit's 429): the error names its status", async () => {
    for (const status of [503, 429]) {
      const server = await startAnswering(status, "");
      const connection = connectionFor("bare", { url: server.url, reconnect: { maxAttempts: 0 } });
      try {
        const { message } = await connectFailure(connection);
        assert.match(message, new RegExp(`failed to connect: Error POSTing to endpoint: HTTP ${status}\\b`));
      } finally {
        await server.close();
      }
    }
  });

  test("a gateway's error page (a 502's HTML): the error names its status, not the page's markup", async () => {
    const page = `<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title><style>${"p{}".repeat(500)}</style></head></html>`;
    const server = await startAnswering(502, page, "text/html");
    const connection = connectionFor("gateway", { url: server.url, reconnect: { maxAttempts: 0 } });
    try {
      const { message } = await connectFailure(connection);
      assert.match(message, /failed to connect: Error POSTing to endpoint: HTTP 502\b/);
      assert.doesNotMatch(message, /DOCTYPE|<style>/);
    } finally {
      await server.close();
    }
  });

  test("a server that quotes its key back while it will not start: a request's error hides it in its causes too", async () => {
    const key = "sk-live-9f8e7d6c5b";
    const server = await startAnswering(500, `key ${key} is over its quota`, "text/plain");
    const entry = { url: server.url, headers: { "X-Api-Key": key }, reconnect: { maxAttempts: 0 } };
    const connection = connectionFor("quota", entry);
    try {
      // `/mcp resources`, `read_mcp_resource` and a prompt command describe an error with its causes.
      const error = await connection
        .withSession("resources/list", (c, options) => c.listResources(undefined, options))
        .then(
          () => assert.fail("listed"),
          (e: unknown) => e,
        );
      assert.match(describeError(error), /key \*\*\* is over its quota/);
      assert.doesNotMatch(describeError(error), /9f8e7d/);
    } finally {
      await connection.close();
      await server.close();
    }
  });

  test("a server that answers 503 with `Retry-After`: the reconnects wait as long as it asked, not the shorter backoff", async () => {
    const server = await startAnswering(503, "busy", "text/plain", { "Retry-After": "1" });
    const entry = { url: server.url, reconnect: { maxAttempts: 2, initialDelay: 20, maxDelay: 5000 } };
    const connection = connectionFor("busy", entry);
    try {
      const started = Date.now();
      await assert.rejects(connection.connect(), /Error POSTing to endpoint: busy/);
      await waitFor(() => connection.state.kind === "gaveUp", "the reconnects to give up", 10_000);
      // Two reconnects, each a second after the 503 before it.
      assert.ok(Date.now() - started >= 1900, `gave up after ${Date.now() - started} ms`);
    } finally {
      await connection.close();
      await server.close();
    }
  });

  test('a web page where a legacy SSE endpoint was meant (`type: "sse"`): the error says so, and where to look', async () => {
    const server = await startAnswering(200, "<!doctype html><title>Sign in</title>", "text/html");
    const connection = connectionFor("page", { type: "sse", url: server.url, reconnect: { maxAttempts: 0 } });
    try {
      const { message } = await connectFailure(connection);
      assert.match(
        message,
        /expected "text\/event-stream" \(no SSE stream: check that `url` is the server's SSE endpoint/,
      );
    } finally {
      await server.close();
    }
  });

  test('`type: "sse"` for a server that speaks Streamable HTTP (a GET without a session is 400): the error says to remove it', async () => {
    const server = await startStreamableHttp();
    const connection = connectionFor("moved", { type: "sse", url: server.url, reconnect: { maxAttempts: 0 } });
    try {
      const { message } = await connectFailure(connection);
      assert.match(message, /Non-200 status code \(400\) \(.*if it speaks Streamable HTTP.*remove `"type": "sse"`/);
    } finally {
      await server.close();
    }
  });

  test('`type: "sse"` for a stateless Streamable HTTP server (its GET stream names no endpoint): the timeout says to remove it', async () => {
    const server = await startStreamableHttp({ stateless: true });
    const entry = { type: "sse", url: server.url, timeout: 1000, reconnect: { maxAttempts: 0 } } as const;
    const connection = connectionFor("stateless", entry);
    try {
      const { message } = await connectFailure(connection);
      assert.match(message, /no endpoint on its SSE stream, .*if it speaks Streamable HTTP.*remove `"type": "sse"`/);
    } finally {
      await server.close();
    }
  });

  test("a server that never answers: a timeout, no SSE fallback, and no socket left open", async () => {
    const server = await startHanging();
    const connection = connectionFor("slowpoke", { url: server.url, timeout: 1000 });
    try {
      await assert.rejects(connection.connect(), (error: unknown) => {
        assert.ok(error instanceof BridgeError && error.kind === "timeout");
        assert.match(
          error.message,
          /MCP server 'slowpoke' at http:\/\/127\.0\.0\.1:\d+\/mcp: no answer to the MCP handshake after [\d.]+ s, when its `timeout` of 1 s ran out/,
        );
        return true;
      });
      // The revision probe for half the time, then `initialize` for the rest; no GET for an SSE fallback.
      assert.deepEqual(
        server.requests.map((r) => r.method),
        ["POST", "POST"],
      );
      // The connection's own pool is destroyed with it; a shared pool would keep an idle socket for its 4 s keep-alive.
      await waitFor(() => server.openSockets() === 0, "the client to close its socket");
    } finally {
      await connection.close();
      await server.close();
    }
  });

  test("connection refused", async () => {
    const port = await closedPort();
    const connection = connectionFor("down", { url: `http://127.0.0.1:${port}/mcp` });
    await assert.rejects(connection.connect(), (error: unknown) => {
      assert.ok(error instanceof BridgeError && error.kind === "transport");
      assert.match(
        error.message,
        /MCP server 'down' at http:\/\/127\.0\.0\.1:\d+\/mcp failed to connect: fetch failed: connect ECONNREFUSED .*is the server running\?/,
      );
      // The SDK's first request is its revision probe; that it failed says nothing a reader can use.
      assert.doesNotMatch(error.message, /negotiation|probe/);
      return true;
    });
  });

  test("a url with its port in a variable is shown as the address it is, not as an invalid URL", async () => {
    const port = await closedPort();
    const env = { ...process.env, MCP_TEST_DOWN_PORT: String(port) };
    const connection = connectionFor("down", { url: "http://127.0.0.1:${MCP_TEST_DOWN_PORT}/mcp" }, { env });
    await assert.rejects(
      connection.connect(),
      new RegExp(`MCP server 'down' at http://127\\.0\\.0\\.1:${port}/mcp failed to connect: `),
    );
  });

  test("an address that serves nothing (404 to the POST and to the legacy GET): the server's answer, and check `url`", async () => {
    const plain = createHttpServer((_req, res) => res.writeHead(404).end("no such page"));
    await new Promise<void>((resolve) => plain.listen(0, "127.0.0.1", resolve));
    const port = (plain.address() as AddressInfo).port;
    try {
      for (const [name, url, words] of [
        [
          "nothing",
          `http://127.0.0.1:${port}/mpc`,
          /Error POSTing to endpoint: no such page \(nothing is served at this address: check that `url` is the server's MCP endpoint/,
        ],
        [
          "notls",
          `https://127.0.0.1:${port}/mcp`,
          /failed to connect: fetch failed: wrong version number \(ERR_SSL_WRONG_VERSION_NUMBER\) \(the server did not answer in TLS: if it serves plain HTTP, write `http:\/\/` in `url`\)/,
        ],
      ] as const) {
        const connection = connectionFor(name, { url, reconnect: { maxAttempts: 0 } });
        await assert.rejects(connection.connect(), (error: Error) => {
          assert.match(error.message, words);
          return true;
        });
        await connection.close();
      }
    } finally {
      plain.closeAllConnections();
      await new Promise((resolve) => plain.close(resolve));
    }
  });

  test("a port Node's fetch refuses (X11's 6000, as browsers refuse it): said so, a config error, not retried", async () => {
    const connection = connectionFor("blocked", { url: "http://127.0.0.1:6000/mcp" });
    await assert.rejects(connection.connect(), (error: unknown) => {
      assert.ok(error instanceof BridgeError && error.kind === "config", String(error));
      assert.match(
        error.message,
        /^MCP server 'blocked' at http:\/\/127\.0\.0\.1:6000\/mcp: Node's fetch refuses to connect to port 6000, as browsers do \(https:\/\/fetch\.spec\.whatwg\.org\/#port-blocking\); serve it on another port and change `url` of 'blocked' in .*Reconnecting would not help, so it was not retried/,
      );
      return true;
    });
  });

  test("a refused port from a variable in `url`: the same message (a port is no secret), not a crash", async () => {
    const env = { ...process.env, MCP_TEST_BLOCKED_PORT: "6000" };
    const connection = connectionFor("blocked", { url: "http://127.0.0.1:${MCP_TEST_BLOCKED_PORT}/mcp" }, { env });
    await assert.rejects(connection.connect(), (error: unknown) => {
      assert.ok(error instanceof BridgeError && error.kind === "config", String(error));
      assert.match(error.message, /Node's fetch refuses to connect to port 6000, as browsers do/);
      return true;
    });
  });

  test("a host name that does not resolve: the hint says to check `url` and the machine's DNS", async () => {
    // `.invalid` never resolves (RFC 2606): the lookup fails at once, with no request leaving the machine.
    const connection = connectionFor("nohost", { url: "http://mcp.example.invalid/mcp" });
    await assert.rejects(connection.connect(), (error: unknown) => {
      assert.match(
        (error as Error).message,
        /^MCP server 'nohost' at http:\/\/mcp\.example\.invalid\/mcp failed to connect: fetch failed: getaddrinfo (ENOTFOUND|EAI_AGAIN) mcp\.example\.invalid \(its host name did not resolve: check `url` for a typo, and that this machine reaches it/,
      );
      return true;
    });
  });

  test("a certificate Node does not trust (self-signed, or an organisation's CA): NODE_EXTRA_CA_CERTS named", async () => {
    const tmp = tempDir();
    const [key, cert] = [path.join(tmp.dir, "key.pem"), path.join(tmp.dir, "cert.pem")];
    const request = "req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -days 1".split(" ");
    execFileSync("openssl", [...request, "-keyout", key, "-out", cert], { stdio: "ignore", timeout: 60_000 });
    const tls = createTlsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (_req, res) => res.end());
    await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve));
    const url = `https://127.0.0.1:${(tls.address() as AddressInfo).port}/mcp`;
    const connection = connectionFor("inhouse", { url, reconnect: { maxAttempts: 0 } });
    try {
      const { message } = await connectFailure(connection);
      assert.match(message, /self[- ]signed certificate.*start pi with NODE_EXTRA_CA_CERTS set to that CA's PEM file/);
    } finally {
      await connection.close();
      tls.closeAllConnections();
      await new Promise((resolve) => tls.close(resolve));
      tmp.cleanup();
    }
  });

  test("a connection dropped mid-call: reconnect to a new session and send again what `resendAfterDrop` allows", async () => {
    const server = await startStreamableHttp();
    const connection = connectionFor("web", { url: server.url, resendAfterDrop: ["crash_once"] });
    try {
      await connection.connect();
      const inits = () => server.requests.filter((r) => r.method === "POST").length;
      assert.equal((await call(connection, "crash_once")).text, "survived");
      assert.ok(inits() >= 3);
      assert.equal((await call(connection, "echo", { text: "again" })).text, "again");
    } finally {
      await connection.close();
      await server.close();
    }
  });

  test("a connection dropped mid-call: a tool with no hints is not sent again; the error says it may have run", async () => {
    const server = await startStreamableHttp();
    const connection = connectionFor("web", { url: server.url });
    try {
      await connection.connect();
      await assert.rejects(
        call(connection, "crash_once"),
        /dropped during the call of tool 'crash_once'.*may or may not have run.*add "crash_once" to "resendAfterDrop"/,
      );
      assert.equal(server.calls.filter((c) => c.name === "crash_once").length, 1, "received once");
      assert.equal((await call(connection, "echo", { text: "again" })).text, "again", "reconnected");
    } finally {
      await connection.close();
      await server.close();
    }
  });

  test("a server restarted between calls (sessions lost): the next call reconnects and works", async () => {
    const server = await startStreamableHttp();
    // The next call may go out on a socket the server has just closed: from the client that looks like a crash
    // mid-call (it may have arrived), so only a tool safe to repeat is sent again. A 404 for the lost session is not.
    const connection = connectionFor("web", { url: server.url, resendAfterDrop: ["echo"] });
    try {
      await connection.connect();
      assert.equal((await call(connection, "echo", { text: "1" })).text, "1");
      server.dropConnections();
      assert.equal((await call(connection, "echo", { text: "2" })).text, "2");
    } finally {
      await connection.close();
      await server.close();
    }
  });

  test("a server that closed an idle connection as a request came on it, unread: sent again on another, run once, the session kept", () =>
    echoOnIdleClosed("unread", (outcomes, server) => {
      for (const outcome of outcomes)
        assert.equal(outcome.status, "fulfilled", String((outcome as PromiseRejectedResult).reason));
      const echoes = server.calls.filter((c) => c.name === "echo").map((c) => c.args.text);
      assert.deepEqual(echoes, ["first", ...outcomes.map((_, round) => `unread ${round}`)], "each ran once");
      assert.equal(server.requests.filter((r) => r.rpc === "initialize").length, 1, "no reconnect");
    }));

  test("a connection closed after the first bytes of the answer: not sent again; the error says it may have run", () =>
    echoOnIdleClosed("answered", (outcomes, server) => {
      const last = outcomes.at(-1)!;
      assert.equal(last.status, "rejected");
      assert.match(String(last.reason), /dropped during the call of tool 'echo'.*may or may not have run/);
      const text = `answered ${outcomes.length - 1}`;
      assert.equal(server.calls.filter((c) => c.args.text === text).length, 1, "run once");
    }));

  test("a server that ends a call's SSE answer before the result: the call fails at once, not at its timeout", async () => {
    const server = await startStreamableHttp();
    const { url, front } = await cuttingFront(server.port, "tools/call", true);
    const connection = connectionFor("cut", { url, requestTimeout: 60_000 });
    try {
      await connection.connect();
      await assert.rejects(call(connection, "progress", { steps: 3, delayMs: 50 }), (error: Error) => {
        assert.match(
          error.message,
          /dropped during the call of tool 'progress' \(.*before answering\).*may or may not have run/,
        );
        return true;
      });
    } finally {
      await connection.close();
      front.closeAllConnections();
      await new Promise((resolve) => front.close(resolve));
      await server.close();
    }
  });

  test("a server that ends its SSE answer to `initialize` unanswered: the connect fails then, not at its timeout", async () => {
    const server = await startStreamableHttp();
    const { url, front } = await cuttingFront(server.port, "initialize", false);
    const connection = connectionFor("cut", { url, timeout: 60_000, reconnect: { maxAttempts: 0 } });
    try {
      const { message } = await connectFailure(connection);
      assert.match(message, /failed to connect: the server ended its response stream before answering/);
    } finally {
      front.closeAllConnections();
      await new Promise((resolve) => front.close(resolve));
      await server.close();
    }
  });

  for (const unknownSession400 of [false, true])
    test(`a server that forgot the session (${unknownSession400 ? "400 'No valid session ID', as server-everything" : "404"}): a tool with no hints is sent again, since it did not run`, async () => {
      const server = await startStreamableHttp({ unknownSession400 });
      const connection = connectionFor("web", { url: server.url });
      try {
        await connection.connect();
        server.forgetSessions!();
        assert.equal((await call(connection, "echo", { text: "after" })).text, "after");
        assert.equal(server.calls.filter((c) => c.name === "echo").length, 1, "run once, on the new session");
        assert.equal(server.requests.filter((r) => r.rpc === "initialize").length, 2, "one reconnect");
      } finally {
        await connection.close();
        await server.close();
      }
    });

  test("a tool call answered 503 (a proxy with no backend up): sent again after the reconnect, since it did not run", async () => {
    const server = await startStreamableHttp();
    let refused = 0;
    // In front of the server, a proxy that has no backend for the first tool call: 503, the call never passed on.
    const front = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const body = Buffer.concat(chunks);
        if (body.includes('"method":"tools/call"') && refused++ === 0) return void res.writeHead(503).end();
        const options = { port: server.port, path: req.url, method: req.method, headers: req.headers };
        httpRequest({ ...options, host: "127.0.0.1" }, (answer) => {
          res.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(res);
        }).end(body);
      });
    });
    await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(front.address() as AddressInfo).port}/mcp`;
    const connection = connectionFor("web", { url, reconnect: { initialDelay: 10, maxDelay: 20 } });
    try {
      await connection.connect();
      assert.equal((await call(connection, "echo", { text: "after" })).text, "after");
      assert.equal(server.calls.filter((c) => c.name === "echo").length, 1, "run once");
    } finally {
      await connection.close();
      front.closeAllConnections();
      await new Promise((resolve) => front.close(resolve));
      await server.close();
    }
  });

  test("a server that drops every connection: one reconnect, then a clear error", async () => {
    const server = await startStreamableHttp();
    const connection = connectionFor("web", { url: server.url, resendAfterDrop: ["crash_always"] });
    try {
      await connection.connect();
      await assert.rejects(
        call(connection, "crash_always"),
        /MCP server 'web' lost its connection during 'crash_always' again after reconnecting/,
      );
      // The server saw the call twice: the first try and the one retry on the new connection; no third.
      assert.equal(server.calls.filter((c) => c.name === "crash_always").length, 2);
      assert.equal(
        server.requests.filter((r) => r.rpc === "initialize").length,
        2,
        "the first connect and one reconnect",
      );
    } finally {
      await connection.close();
      await server.close();
    }
  });
});
