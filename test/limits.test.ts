/**
 * The bounds on what a server may send, on their own: the stdout line limit, the tool list and schema limits, the
 * config fields that set them, and which launcher failures no restart can fix.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Tool } from "@modelcontextprotocol/client";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import { ConnectTimeout } from "../src/common/errors.ts";
import { INSTALL_LIMIT_MS } from "../src/connection/connect-deadline.ts";
import { connectError } from "../src/connection/error-messages.ts";
import { permanentLaunchFailure } from "../src/connection/local/launch-failure.ts";
import { MessageSizeCounter, MessageTooLargeError } from "../src/connection/message-limit.ts";
import { LineFraming } from "../src/connection/local/stdio-framing.ts";
import { limitTools, MAX_SCHEMA_DEPTH, nestedDeeperThan } from "../src/translate/tool-list-limits.ts";

const SOURCE = { scope: "project" as const, path: "/p/.pi/mcp.json" };

function tool(name: string, inputSchema: Record<string, unknown> = { type: "object" }): Tool {
  return { name, inputSchema } as Tool;
}

describe("LineFraming", () => {
  test("splits messages across and within chunks, as the SDK's framing does", () => {
    const framing = new LineFraming(1024);
    framing.append(Buffer.from('{"jsonrpc":"2.0","method":"a"}\n{"jsonrpc":"2.0",'));
    framing.append(Buffer.from('"method":"b"}\r\n'));
    assert.deepEqual(framing.readMessage(), { jsonrpc: "2.0", method: "a" });
    assert.deepEqual(framing.readMessage(), { jsonrpc: "2.0", method: "b" });
    assert.equal(framing.readMessage(), null);
  });

  test("a line over the limit is refused as soon as it passes it, naming the limit, and nothing of it is kept", () => {
    const framing = new LineFraming(100);
    framing.append(Buffer.from("x".repeat(60)));
    assert.throws(
      () => framing.append(Buffer.from("x".repeat(60))),
      (error: unknown) => {
        assert.ok(error instanceof MessageTooLargeError);
        assert.equal(error.message, "a message from the server was over the 100 B limit (`maxMessageBytes`)");
        return true;
      },
    );
    assert.equal(framing.readMessage(), null);
    // A line exactly at the limit is fine.
    const exact = `{"jsonrpc":"2.0","method":"${"m".repeat(100 - 29)}"}`;
    assert.equal(Buffer.byteLength(exact), 100);
    framing.append(Buffer.from(`${exact}\n`));
    assert.equal((framing.readMessage() as { method: string }).method.length, 71);
  });

  test("a line that is not JSON-RPC throws when read and is consumed", () => {
    const framing = new LineFraming(1024);
    framing.append(Buffer.from('Starting server...\n{"jsonrpc":"2.0","method":"ok"}\n'));
    assert.throws(() => framing.readMessage());
    assert.deepEqual(framing.readMessage(), { jsonrpc: "2.0", method: "ok" });
  });
});

describe("MessageSizeCounter", () => {
  const bytes = (text: string) => Buffer.from(text);

  test("a JSON body is one message: every byte counts, up to and including the limit", () => {
    const counter = new MessageSizeCounter(10, false);
    assert.equal(counter.add(bytes('{"a":\n\n')), true);
    assert.equal(counter.add(bytes("123")), true, "10 bytes: at the limit");
    assert.equal(counter.add(bytes("4")), false, "11 bytes: over it, blank lines or not");
  });

  test("an SSE stream counts only since the last blank line, whichever line endings it uses", () => {
    for (const end of ["\n\n", "\r\n\r\n", "\r\r", "\r\n\n"]) {
      const counter = new MessageSizeCounter(20, true);
      // Many events, 100 times the limit in total, each within it.
      for (let i = 0; i < 100; i++)
        assert.equal(counter.add(bytes(`data: ${"x".repeat(10)}${end}`)), true, JSON.stringify(end));
      assert.equal(
        counter.add(bytes(`data: ${"x".repeat(20)}`)),
        false,
        `one event over the limit (${JSON.stringify(end)})`,
      );
    }
  });

  test("an SSE boundary split across chunks still ends the event; single line endings do not", () => {
    const split = new MessageSizeCounter(20, true);
    for (let i = 0; i < 10; i++) {
      assert.equal(split.add(bytes("data: 0123456789\r")), true);
      assert.equal(split.add(bytes("\n")), true);
      assert.equal(split.add(bytes("\r\n")), true);
    }
    const lines = new MessageSizeCounter(20, true);
    // One event of many short lines: no blank line, so it grows past the limit.
    assert.equal(lines.add(bytes("data: 1\ndata: 2\r\n")), true);
    assert.equal(lines.add(bytes("data: 3\rdata: 4\n")), false);
  });

  test("an event that ends in the chunk that takes it over the limit is still over it", () => {
    const counter = new MessageSizeCounter(20, true);
    assert.equal(counter.add(bytes("data: 0123456789")), true);
    assert.equal(counter.add(bytes("0123456789\n\ndata: x\n\n")), false);
  });
});

describe("limitTools", () => {
  test("at most maxTools, in the server's order, with one warning", () => {
    const tools = Array.from({ length: 12 }, (_, i) => tool(`t${i}`));
    const { tools: kept, warning } = limitTools(tools, { maxTools: 10, maxSchemaBytes: 64 * 1024 });
    assert.deepEqual(
      kept.map((t) => t.name),
      tools.slice(0, 10).map((t) => t.name),
    );
    assert.equal(warning, "it lists 12 usable tools; only the first 10 are registered (`maxTools`)");
    assert.equal(limitTools(tools, { maxTools: 12, maxSchemaBytes: 64 * 1024 }).warning, undefined);
  });

  test("schemas over maxSchemaBytes or nested too deeply are left out, named, without overflowing the stack", () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 100_000; i++) deep = { not: deep };
    const big = { type: "object", properties: { s: { type: "string", description: "x".repeat(2000) } } };
    const list = [
      tool("fine"),
      tool("big1", big),
      tool("deep", { type: "object", properties: { x: deep } }),
      tool("big2", big),
    ];
    const { tools, warning } = limitTools(list, { maxTools: 500, maxSchemaBytes: 1024 });
    assert.deepEqual(
      tools.map((t) => t.name),
      ["fine"],
    );
    assert.match(
      warning ?? "",
      /^2 tools left out because the input schema is over the 1\.0 KB limit \(`maxSchemaBytes`\): 'big1' \(2\.0 KB\), 'big2' \(2\.0 KB\); 1 tool left out because the input schema is nested deeper than 64 levels: 'deep'$/,
    );
  });

  test("a left-out tool's name is shown without control sequences and not at any length", () => {
    const big = { type: "object", description: "x".repeat(2000) };
    const { warning } = limitTools([tool(`evil\u001b]52;c;cHduZWQ=\u0007\u001b[2J${"n".repeat(500)}`, big)], {
      maxTools: 10,
      maxSchemaBytes: 1024,
    });
    assert.doesNotMatch(warning ?? "", /[\u0000-\u001f\u007f\u009b]/);
    assert.ok((warning ?? "").length < 400, warning);
  });

  test("nestedDeeperThan counts objects and arrays, iteratively", () => {
    assert.equal(nestedDeeperThan({ a: [{ b: 1 }] }, 3), false);
    assert.equal(nestedDeeperThan({ a: [{ b: {} }] }, 3), true);
    let chain: unknown = {};
    for (let i = 0; i < MAX_SCHEMA_DEPTH - 1; i++) chain = [chain];
    assert.equal(nestedDeeperThan(chain, MAX_SCHEMA_DEPTH), false);
    assert.equal(nestedDeeperThan([chain], MAX_SCHEMA_DEPTH), true);
  });
});

describe("limit fields", () => {
  test("defaults, overrides, and bad values", () => {
    const local = validateServerEntry("s", { command: "node" }, SOURCE).config!;
    assert.deepEqual(local.limits, { maxTools: 500, maxSchemaBytes: 64 * 1024, maxMessageBytes: 16 * 1024 * 1024 });
    const set = validateServerEntry(
      "s",
      { command: "node", maxTools: 20, maxSchemaBytes: 1000, maxMessageBytes: 2048 },
      SOURCE,
    ).config!;
    assert.deepEqual(set.limits, { maxTools: 20, maxSchemaBytes: 1000, maxMessageBytes: 2048 });
    assert.deepEqual(validateServerEntry("s", { command: "node", maxTools: 0, maxSchemaBytes: "big" }, SOURCE).errors, [
      "`maxTools` must be a whole number, 1 or more (got 0)",
      '`maxSchemaBytes` must be a whole number, 1 or more (got "big")',
    ]);
    // A remote server's messages are bounded too (its JSON responses and SSE events).
    assert.deepEqual(
      validateServerEntry("r", { url: "https://x.example/mcp", maxMessageBytes: 2048 }, SOURCE).config?.limits
        .maxMessageBytes,
      2048,
    );
  });
});

describe("permanentLaunchFailure", () => {
  const reason = (exitCode: number | null, stderr: string) => permanentLaunchFailure(exitCode, stderr)?.reason ?? "";

  test("npm E404 and ETARGET, and a shell's exit codes 127 and 126; not an ordinary crash", () => {
    assert.match(
      reason(1, "npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/x"),
      /does not exist in the npm registry/,
    );
    assert.match(reason(1, "npm ERR! code E404"), /npm E404/);
    assert.match(reason(1, "npm error code ETARGET\nnpm error notarget No matching version"), /ETARGET/);
    // What this machine's npm printed behind a TLS-inspecting gateway, without the gateway's CA.
    const gateway = [
      "npm error code SELF_SIGNED_CERT_IN_CHAIN",
      "npm error errno SELF_SIGNED_CERT_IN_CHAIN",
      "npm error request to https://registry.npmjs.org/@antv%2fmcp-server-chart failed, reason: self-signed certificate in certificate chain",
    ].join("\n");
    assert.match(reason(1, gateway), /npm does not trust the registry's certificate \(npm SELF_SIGNED_CERT_IN_CHAIN\)/);
    assert.equal(reason(1, "npm error code ECONNRESET"), "", "a network error may pass: started again");
    assert.equal(reason(127, "sh: 1: nope: not found"), "the program 'nope' it runs was not found (exit code 127)");
    // `npx -y @vercel/mcp-adapter`: npm runs the package's program through a shell, which does not find it.
    assert.equal(
      reason(127, "sh: 1: create-mcp-route: not found"),
      "the program 'create-mcp-route' it runs was not found (exit code 127)",
    );
    assert.equal(
      reason(127, "bash: line 1: foo: command not found"),
      "the program 'foo' it runs was not found (exit code 127)",
    );
    assert.equal(reason(127, ""), "its command was not found (exit code 127)");
    assert.match(reason(126, ""), /could not be run/);
    assert.equal(permanentLaunchFailure(1, "Error: connect ECONNREFUSED 127.0.0.1:5432"), undefined);
    // docker run by a user outside the docker group: no restart changes that.
    const denied = permanentLaunchFailure(
      126,
      "docker: permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock: Head …",
    );
    assert.deepEqual(denied, {
      reason: "docker may not use the Docker daemon's socket (permission denied)",
      fix: "add your user to the docker group (`sudo usermod -aG docker $USER`, then log in again) and reconnect",
    });
    assert.equal(permanentLaunchFailure(null, "fetching 404 page"), undefined);
    // `docker mcp gateway run` where Docker's MCP Toolkit is not installed, in docker 28's words and older docker's.
    for (const said of [
      "docker: unknown command: docker mcp\n\nRun 'docker --help'",
      "docker: 'mcp' is not a docker command.",
    ])
      assert.deepEqual(permanentLaunchFailure(1, said), {
        reason: "this docker has no `mcp` command: Docker's MCP Toolkit (its docker-mcp plugin) is not installed",
        fix: "turn on the MCP Toolkit in Docker Desktop, or install the docker-mcp plugin (github.com/docker/mcp-gateway) into ~/.docker/cli-plugins, then reconnect (`/mcp reconnect`)",
      });
    assert.match(reason(1, "docker: unknown command: docker compse"), /no `compse` command \(a plugin that is not/);
  });

  test("a program that says its Node.js is too old (convex on Node 20); not the version line of every crash", () => {
    const convex =
      "\n  Your Node version 20.20.2 is too old. Convex requires at least Node v22.0\n  You can use nvm (…)";
    assert.match(
      reason(1, convex),
      /^it needs a newer Node\.js than the one it ran on: it said "Your Node version 20\.20\.2 is too old\. Convex requires at least Node v22\.0"$/,
    );
    assert.match(reason(1, "Error: this package requires Node.js 22 or later"), /newer Node\.js/);
    assert.equal(
      permanentLaunchFailure(1, "TypeError: x is not a function\n    at y (z.js:1:1)\nNode.js v20.20.2"),
      undefined,
    );
    assert.equal(permanentLaunchFailure(1, "Error: the node id 'a1' is not supported by this tool"), undefined);
  });

  test("a native module built for another Node.js (a cached npx copy after a Node upgrade), or not built at all", () => {
    const copy = "/home/u/.npm/_npx/4b4c3e0b7d9a1f2c";
    const abi =
      `Error: The module '${copy}/node_modules/better-sqlite3/build/Release/better_sqlite3.node'\n` +
      "was compiled against a different Node.js version using\nNODE_MODULE_VERSION 115. This version of Node.js requires";
    const failure = permanentLaunchFailure(1, abi)!;
    assert.match(
      failure.reason,
      /^a native module of its package cannot be loaded by the Node\.js that runs it \(was compiled against a different Node\.js version\)/,
    );
    assert.match(failure.fix ?? "", new RegExp(`^delete npx's copy of the package \\(${copy}\\) and reconnect`));
    // @auth0/auth0-mcp-server on Linux without libsecret (its keytar's build is there, but cannot load without it),
    // started from a folder of the user's own.
    const keytar = 'Error: Failed to load keytar native addon, checked ["../build/Release"] on prebuilds/linux-x64';
    const keyring = permanentLaunchFailure(1, keytar)!;
    assert.match(keyring.reason, /keytar loads on Linux only where the libsecret library is installed/);
    assert.match(
      keyring.fix ?? "",
      /^install libsecret \(`libsecret-1-0` on Debian and Ubuntu.*; where it is installed, rebuild the server's packages/,
    );
    const mac = permanentLaunchFailure(1, keytar.replace("linux-x64", "darwin-arm64"))!;
    assert.match(mac.fix ?? "", /^rebuild the server's packages/);
  });
});

describe("a connect an npx install held to its limit", () => {
  test("says npm was still installing and how long an install may take, not that initTimeout ran out", () => {
    const config = validateServerEntry("kube", { command: "npx", args: ["-y", "k"] }, SOURCE).config!;
    const context = { config, redact: (text: string) => text, stderr: () => "", nonJsonLines: 0, oauth: false };
    const installing = connectError({ ...context, stage: "installing" }, new ConnectTimeout(), INSTALL_LIMIT_MS + 400);
    assert.equal(
      installing.message,
      "MCP server 'kube': npx was still installing its package after 600.4 s, so it was stopped (an install may take " +
        "10 minutes before the server's `initTimeout` counts); npm's own messages are in its stderr, and a slow " +
        "network or registry is the usual cause",
    );
    assert.equal(installing.kind, "timeout");
    // The same timeout once the program runs is the entry's own.
    const started = connectError({ ...context, stage: "starting" }, new ConnectTimeout(), 60_000);
    assert.match(started.message, /no answer to the MCP handshake after 60 s, when its `initTimeout` of 60 s ran out/);
    // After an install that was over before the deadline, the server had its whole time from its program's start.
    const after = connectError({ ...context, stage: "handshake", npxInstallMs: 50_000 }, new ConnectTimeout(), 110_000);
    assert.match(
      after.message,
      /after 110 s, when its `initTimeout` of 60 s ran out \(counted from its program's start, after npx installed its package in 50 s\); its process/,
    );
  });
});
