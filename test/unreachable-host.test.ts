/**
 * A local server that cannot reach a host it needs before it answers (src/connection/local/unreachable-host.ts): the
 * host and the error are read from what its runtime printed, and the message points at the network, whether the server
 * exits or waits past its `initTimeout`.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { describe, test } from "node:test";
import { unreachableHost } from "../src/connection/local/unreachable-host.ts";
import { connectFailure, connectionFor, freePort, tempDir, waitFor } from "./helpers.ts";

describe("a host a local server could not reach, from its stderr", () => {
  test("Node's errors, inline or as an object, and Python's; none in a calm stderr", () => {
    assert.deepEqual(
      unreachableHost(["  [cause]: Error: getaddrinfo ENOTFOUND api.example.com", "    at x (node:dns:1:1)"]),
      {
        host: "api.example.com",
        error: "getaddrinfo ENOTFOUND",
      },
    );
    assert.deepEqual(unreachableHost(["Error: connect ECONNREFUSED 127.0.0.1:5432"]), {
      host: "127.0.0.1:5432",
      error: "connect ECONNREFUSED",
    });
    assert.deepEqual(
      unreachableHost([
        "{",
        "  errno: -3008,",
        "  code: 'EAI_AGAIN',",
        "  syscall: 'getaddrinfo',",
        "  hostname: 'h.test'",
        "}",
      ]),
      { host: "h.test", error: "EAI_AGAIN" },
    );
    // The same object as JSON, in an error a server answered with (firebase-tools' `mcp`).
    assert.deepEqual(unreachableHost(['Failed: {"code":"ENOTFOUND","syscall":"getaddrinfo","hostname":"h.test"}']), {
      host: "h.test",
      error: "ENOTFOUND",
    });
    const python =
      "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.example.org', port=443): Max retries exceeded " +
      "(Caused by NameResolutionError(\"Failed to resolve 'api.example.org' ([Errno -3] Temporary failure in name resolution)\"))";
    assert.deepEqual(unreachableHost(["Traceback (most recent call last):", python]), {
      host: "api.example.org",
      error: "Temporary failure in name resolution",
    });
    assert.deepEqual(
      unreachableHost([
        "  [cause]: Error: connect ECONNREFUSED 127.0.0.1:1234",
        "    code: 'ECONNREFUSED',",
        "    address: '127.0.0.1',",
      ]),
      { host: "127.0.0.1:1234", error: "connect ECONNREFUSED" },
      "the line with the host and port, over the object after it",
    );
    assert.deepEqual(
      unreachableHost([
        "Failed to start server: Error: Failed to load OpenAPI spec from url: fetch failed",
        "    at OpenAPISpecLoader.loadOpenAPISpec (file:///x/cli.js:14472:15)",
      ]),
      { host: undefined, error: "fetch failed" },
      "Node's fetch, its cause not printed",
    );
    assert.deepEqual(
      unreachableHost(["TypeError: fetch failed", "  [cause]: Error: getaddrinfo ENOTFOUND api.example.com"]),
      { host: "api.example.com", error: "getaddrinfo ENOTFOUND" },
      "its cause, where printed, names more",
    );
    assert.equal(unreachableHost(["listening on stdio", "ready"]), undefined);
    // A container engine that is not running: docker's and podman's command lines.
    assert.deepEqual(
      unreachableHost([
        "docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?",
      ]),
      { host: "the Docker daemon at unix:///var/run/docker.sock", error: "Cannot connect", engine: "Docker" },
    );
    // docker 29's words where its socket is not there (Docker Desktop not started).
    const docker29 =
      "failed to connect to the docker API at unix:///d.sock; check if the path is correct and if the daemon is running";
    assert.deepEqual(unreachableHost([`docker: ${docker29}: dial unix /d.sock: connect: no such file or directory`]), {
      ...{ host: "the Docker daemon at unix:///d.sock", error: "Cannot connect", engine: "Docker" },
    });
    assert.deepEqual(
      unreachableHost(["Error: Cannot connect to Podman. Please verify your connection to the Linux system using …"]),
      { host: "Podman", error: "Cannot connect", engine: "Podman" },
    );
    // The snyk CLI's wrapper: its download failed, and then its report of that to its error tracker.
    assert.deepEqual(
      unreachableHost([
        "2026-12-05T06:42:44.045Z: Error: getaddrinfo ENOTFOUND static.snyk.io",
        "Error: getaddrinfo ENOTFOUND o30291.ingest.sentry.io",
      ]),
      { host: "static.snyk.io", error: "getaddrinfo ENOTFOUND" },
      "what failed first",
    );
  });

  test("a server that exits on a real failed lookup: the message names the host, not the entry", async () => {
    const { message: error } = await connectFailure(
      connectionFor("offline", {
        command: process.execPath,
        args: ["--input-type=module", "-e", "await fetch('http://mcp-bridge-test.invalid/')"],
        maxRestarts: 0,
      }),
    );
    assert.match(
      error,
      /^MCP server 'offline': it could not reach mcp-bridge-test\.invalid \((getaddrinfo )?(ENOTFOUND|EAI_AGAIN)\), as its output says, and the process exited with code 1 .*: check that this machine reaches it/,
    );
    assert.doesNotMatch(error, /check `command`/);
  });

  test("a server that exits when nothing listens where it connects: the message asks whether that service runs", async () => {
    const closed = await freePort();
    const { message } = await connectFailure(
      connectionFor("redis", {
        command: process.execPath,
        args: ["--input-type=module", "-e", `await fetch("http://127.0.0.1:${closed}/")`],
        maxRestarts: 0,
      }),
    );
    assert.match(
      message,
      new RegExp(
        `could not reach 127\\.0\\.0\\.1:${closed} \\(connect ECONNREFUSED\\), as its output says, .*: nothing accepted the connection there \\(is the service`,
      ),
    );
  });

  const docker = spawnSync("sh", ["-c", "command -v docker"]).status === 0;
  test(
    "a server in a container whose engine is not running (the real docker command line): named, and restarted",
    {
      skip: docker ? false : "no docker command on this machine",
    },
    async () => {
      const tmp = tempDir();
      const socket = path.join(tmp.dir, "docker.sock");
      const connection = connectionFor("fetch", {
        command: "docker",
        args: ["run", "-i", "--rm", "mcp/fetch"],
        env: { DOCKER_HOST: `unix://${socket}` },
        maxRestarts: 2,
        reconnect: { initialDelay: 10, maxDelay: 10 },
      });
      try {
        const message = await connection.connect().then(
          () => assert.fail("connected"),
          (error: Error) => error.message,
        );
        assert.ok(
          message.startsWith(
            `MCP server 'fetch': it could not reach the Docker daemon at unix://${socket} (Cannot connect), as its output says, and the process exited with code `,
          ),
          message,
        );
        assert.match(message, /: Docker is not running: start it \(Docker Desktop, or `sudo systemctl start docker`\)/);
        // It may come up by itself (Docker Desktop starting): restarted until its restarts run out, not stopped as a
        // failure that repeats.
        await waitFor(() => connection.state.kind === "gaveUp", "the restarts to run out", 30_000);
        assert.deepEqual(connection.state, { ...connection.state, attempts: 2, exhausted: true }, "both restarts made");
      } finally {
        await connection.close();
        tmp.cleanup();
      }
    },
  );

  test("a server that waits for the host past its initTimeout: the message names the host beside the timeout", async () => {
    const { message: error } = await connectFailure(
      connectionFor("waiting", {
        command: "sh",
        args: ["-c", "echo 'Error: getaddrinfo ENOTFOUND api.example.test' >&2; exec sleep 60"],
        initTimeout: 3000,
        maxRestarts: 0,
      }),
    );
    assert.match(
      error,
      /`initTimeout` of 3 s ran out; .*its output says it could not reach api\.example\.test \(getaddrinfo ENOTFOUND\)/,
    );
  });
});
