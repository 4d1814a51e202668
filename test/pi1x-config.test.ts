/**
 * Configs written for pi 1.x's built-in MCP, the pure parts: `timeout` below 1000 read as seconds (and where that is
 * said, once), `~/` in paths, which `!command` values there are and how each would run, how the trust question shows
 * them, and tool names that stay `mcp_<server>_<tool>`.
 */
import assert from "node:assert/strict";
import { statSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { commandValues, invocationOf, isCommandValue, outputSecrets } from "../src/config/command-value.ts";
import { convertEntry, Notes } from "../src/config/import/convert.ts";
import { layerConfigs } from "../src/config/layers.ts";
import { configVarRefs, expandHome, resolveServerConfig } from "../src/config/substitute.ts";
import { describeForTrust, trustFingerprint } from "../src/trust/trust-rules.ts";
import type { ConfigSource, ServerConfig } from "../src/config/types.ts";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import { secondsNotices } from "../src/config/validate/timeout.ts";
import { NoticeMemory } from "../src/bridge/notice-memory.ts";
import { redirectPlan } from "../src/oauth/redirect.ts";
import { toolNameFor } from "../src/translate/naming.ts";
import { tempDir } from "./helpers.ts";

const USER: ConfigSource = { scope: "user", path: "/home/me/.pi/agent/mcp.json" };
const PROJECT: ConfigSource = { scope: "project", path: "/work/app/.pi/mcp.json" };

function valid(entry: Record<string, unknown>): { config: ServerConfig; warnings: string[] } {
  const result = validateServerEntry("srv", entry, USER);
  assert.ok(result.config, `valid: ${result.errors.join("; ")}`);
  return { config: result.config, warnings: result.warnings };
}

describe("`timeout` as pi 1.x writes it", () => {
  test("below 1000 it is seconds: each request's deadline and the handshake's", () => {
    for (const entry of [
      { command: "x", timeout: 30 },
      { url: "https://example.com/mcp", timeout: 30 },
    ]) {
      const { config, warnings } = valid(entry);
      assert.equal(config.timeout, 30_000);
      assert.equal(config.requestTimeout, 30_000);
      assert.deepEqual(warnings, [], "not a config warning at every start: see the notices below");
    }
    assert.equal(valid({ command: "x", timeout: 0.5 }).config.requestTimeout, 500, "fractions of a second");
  });

  test("1000 and more stays milliseconds, the handshake's deadline, without a notice on either pi", () => {
    for (const timeout of [1000, 15_000]) {
      const { config, warnings } = valid({ url: "https://example.com/mcp", timeout });
      assert.equal(config.timeout, timeout);
      assert.equal(config.requestTimeout, 60_000, "requests keep the default");
      assert.deepEqual(warnings, []);
      assert.deepEqual(secondsNotices([config], false), []);
    }
  });

  test("an explicit requestTimeout or initTimeout (ms) wins over the seconds reading", () => {
    const explicit = valid({ command: "x", timeout: 30, requestTimeout: 5000 });
    assert.equal(explicit.config.requestTimeout, 5000);
    assert.equal(explicit.config.timeout, 30_000);
    assert.match(
      secondsNotices([explicit.config], false)[0]!.problem.message,
      /the handshake may take 30 s \(`requestTimeout` sets the requests'\)/,
    );
    const init = valid({ command: "x", timeout: 30, initTimeout: 2000 });
    assert.equal(init.config.timeout, 2000);
    assert.equal(init.config.requestTimeout, 30_000);
  });

  test("an import writes a connect timeout of at least 1000 ms, so it is not read as seconds", () => {
    const notes = new Notes();
    assert.equal(convertEntry("opencode", { type: "local", command: ["x"], timeout: 500 }, notes).timeout, 1000);
    assert.deepEqual(notes.list, [
      "`timeout` of 500 ms is raised to 1000 ms, the shortest `timeout` read as milliseconds",
    ]);
    assert.equal(convertEntry("opencode", { type: "local", command: ["x"], timeout: 5000 }, new Notes()).timeout, 5000);
  });

  test("bad values are still errors", () => {
    for (const timeout of [0, -5, "30"])
      assert.match(validateServerEntry("srv", { command: "x", timeout }, USER).errors.join(";"), /`timeout` must be/);
    // An `initTimeout` beside it decides the handshake, but a `timeout` no one can read is still said to be wrong.
    for (const timeout of [-5, "30"]) {
      const errors = validateServerEntry("srv", { command: "x", timeout, initTimeout: 5000 }, USER).errors;
      assert.match(errors.join(";"), /`timeout` must be/);
    }
  });

  test("pi 1.x's top-level autoEnableCodemode is read, without a warning; a wrong value is named", () => {
    const layered = layerConfigs([
      { source: USER, text: JSON.stringify({ autoEnableCodemode: false, mcpServers: {} }) },
    ]);
    assert.deepEqual(layered.problems, []);
    assert.equal(layered.exposure.autoCodemode, false);
    const wrong = layerConfigs([{ source: USER, text: JSON.stringify({ autoEnableCodemode: "no", mcpServers: {} }) }]);
    assert.match(wrong.problems[0]!.message, /`autoEnableCodemode` must be true or false; ignored/);
    // A server's `codemode` is kept beside the `deferred` it is read as; so is a top-level one.
    const codemode = layerConfigs([
      {
        source: USER,
        text: JSON.stringify({ exposure: "codemode", mcpServers: { a: { command: "x", exposure: "codemode" } } }),
      },
    ]);
    assert.deepEqual([codemode.servers[0]!.exposure, codemode.servers[0]!.codemode], ["deferred", true]);
    assert.equal(codemode.exposure.codemode, true);
    // A project's own `exposure` for the user's server decides it again.
    const toggled = layerConfigs([
      { source: USER, text: JSON.stringify({ mcpServers: { a: { command: "x", exposure: "codemode" } } }) },
      { source: PROJECT, text: JSON.stringify({ mcpServers: { a: { exposure: "direct" } } }) },
    ]);
    assert.deepEqual([toggled.servers[0]!.exposure, toggled.servers[0]!.codemode], ["direct", false]);
  });

  test("the seconds reading is said where pi does not mean seconds (pi 0.73), as a warning of the file and server, keyed to be said once", () => {
    const layered = layerConfigs([
      {
        source: USER,
        text: JSON.stringify({
          mcpServers: { slow: { command: "x", timeout: 45 }, fast: { command: "x", timeout: 5000 } },
        }),
      },
    ]);
    assert.equal(layered.servers[0]!.requestTimeout, 45_000);
    assert.deepEqual(layered.problems, [], "nothing at every start");
    const notices = secondsNotices(layered.servers, false);
    assert.deepEqual(
      notices.map((n) => [n.problem.level, n.problem.server, n.problem.source.path]),
      [["warning", "slow", USER.path]],
    );
    assert.match(
      notices[0]!.problem.message,
      /`timeout` 45 is below 1000, so it is read as seconds, as pi 1\.x means it: each request may take 45 s/,
    );
    // The key names the file, the server and the value: the same setting is said once; a changed value is said again.
    const changed = layerConfigs([
      { source: USER, text: JSON.stringify({ mcpServers: { slow: { command: "x", timeout: 90 } } }) },
    ]);
    assert.notEqual(secondsNotices(changed.servers, false)[0]!.key, notices[0]!.key);
    assert.equal(
      secondsNotices(
        layerConfigs([
          {
            source: USER,
            text: JSON.stringify({ mcpServers: { slow: { url: "https://x.example/mcp", timeout: 45 } } }),
          },
        ]).servers,
        false,
      )[0]!.key,
      notices[0]!.key,
    );
  });

  test("on pi 1.x, where `timeout` in seconds is what pi's own docs say, nothing is said", () => {
    const layered = layerConfigs([
      { source: USER, text: JSON.stringify({ mcpServers: { slow: { command: "x", timeout: 45 } } }) },
    ]);
    assert.deepEqual(secondsNotices(layered.servers, true), []);
  });
});

describe("notices given once", () => {
  const notice = (key: string) => ({ key, problem: { level: "warning" as const, source: USER, message: key } });

  test("each is given the first time only, also to another process sharing the file; nothing is lost between them", async () => {
    const dir = tempDir("mcp-bridge-notices-");
    try {
      const file = path.join(dir.dir, "mcp-bridge", "notices.json");
      const one = new NoticeMemory(file);
      assert.deepEqual(
        (await one.firstTime([notice("a"), notice("b")])).map((n) => n.key),
        ["a", "b"],
      );
      assert.deepEqual(await one.firstTime([notice("a")]), []);
      // Another pi process: its own instance on the same file.
      const other = new NoticeMemory(file);
      assert.deepEqual(
        (await other.firstTime([notice("b"), notice("c")])).map((n) => n.key),
        ["c"],
      );
      assert.deepEqual(await one.firstTime([notice("c")]), [], "what the other process gave is known here too");
      assert.equal((statSync(file).mode & 0o777).toString(8), "600");
      assert.equal(one.error, undefined);
    } finally {
      dir.cleanup();
    }
  });

  test("a corrupt file reads as nothing given; a file that cannot be written gives the notice and says why", async () => {
    const dir = tempDir("mcp-bridge-notices-");
    try {
      const file = path.join(dir.dir, "notices.json");
      writeFileSync(file, "{ not json");
      assert.deepEqual(
        (await new NoticeMemory(file).firstTime([notice("a")])).map((n) => n.key),
        ["a"],
      );
      // A directory where the file's folder should be: nothing can be written there.
      writeFileSync(path.join(dir.dir, "blocked"), "");
      const blocked = new NoticeMemory(path.join(dir.dir, "blocked", "notices.json"));
      assert.deepEqual(
        (await blocked.firstTime([notice("a")])).map((n) => n.key),
        ["a"],
      );
      assert.match(blocked.error ?? "", /cannot write .*blocked\/notices\.json/);
      assert.deepEqual(
        (await blocked.firstTime([notice("a")])).map((n) => n.key),
        ["a"],
        "not remembered, so given again",
      );
    } finally {
      dir.cleanup();
    }
  });
});

describe("`~/` in command, args and cwd", () => {
  const home = "/home/someone";
  test("expandHome: `~` and a leading `~/` only", () => {
    assert.equal(expandHome("~", home), home);
    assert.equal(expandHome("~/bin/server", home), path.join(home, "bin/server"));
    assert.equal(expandHome("a/~/b", home), "a/~/b");
    assert.equal(expandHome("~other/x", home), "~other/x");
    assert.equal(expandHome("--root=~/x", home), "--root=~/x", "as pi 1.x: only a value that starts with it");
    assert.equal(expandHome("~\\bin", home, "win32"), path.join(home, "bin"));
    assert.equal(expandHome("~\\bin", home, "linux"), "~\\bin");
  });

  test("a local server's command, each argument and cwd; a relative cwd from the project (session) directory", () => {
    const { config } = valid({ command: "~/bin/server", args: ["~/data", "plain", "~"], cwd: "~/work" });
    const resolved = resolveServerConfig(config, {}, "/repo", { home });
    assert.ok(resolved.endpoint?.kind === "stdio");
    assert.equal(resolved.endpoint.command, path.join(home, "bin/server"));
    assert.deepEqual(resolved.endpoint.args, [path.join(home, "data"), "plain", home]);
    assert.equal(resolved.endpoint.cwd, path.join(home, "work"));
    const relative = resolveServerConfig(valid({ command: "x", cwd: "tools" }).config, {}, "/repo", { home });
    assert.equal(relative.endpoint?.kind === "stdio" && relative.endpoint.cwd, "/repo/tools");
  });

  test("without a home given, the user's", () => {
    const resolved = resolveServerConfig(valid({ command: "~/x" }).config, {}, "/repo");
    assert.equal(
      resolved.endpoint?.kind === "stdio" && resolved.endpoint.command,
      path.join(process.env.HOME ?? "", "x"),
    );
  });
});

describe("`!command` values", () => {
  test("which values are commands: a leading `!`, in a local server's env and a remote server's headers", () => {
    assert.equal(isCommandValue("!gh auth token"), true);
    assert.equal(isCommandValue("Bearer !x"), false);
    const local = valid({ command: "x", env: { TOKEN: "!gh auth token", PLAIN: "value", VAR: "${HOME}" } }).config;
    assert.deepEqual(commandValues(local), [{ field: "env.TOKEN", command: "gh auth token" }]);
    const remote = valid({
      url: "https://example.com/mcp",
      headers: { Authorization: "!echo Bearer $(gh auth token)" },
    }).config;
    assert.deepEqual(commandValues(remote), [
      { field: "headers.Authorization", command: "echo Bearer $(gh auth token)" },
    ]);
  });

  test("a remote server's OAuth client secret may be one, named as the file names it", () => {
    const remote = valid({
      url: "https://example.com/mcp",
      oauth: { clientId: "c", clientSecret: "!pass show oauth" },
    }).config;
    assert.deepEqual(commandValues(remote), [{ field: "oauth.clientSecret", command: "pass show oauth" }]);
    assert.ok(describeForTrust(remote).includes("OAuth client secret ← output of: pass show oauth"));
    const written = valid({
      url: "https://example.com/mcp",
      auth: { clientId: "c", clientSecret: "!pass show oauth" },
    }).config;
    assert.equal(commandValues(written)[0]!.field, "auth.clientSecret");
  });

  test("a command without shell syntax runs without a shell; anything else under /bin/sh -c", () => {
    assert.deepEqual(invocationOf("gh auth token", "linux"), { shell: false, file: "gh", args: ["auth", "token"] });
    // On Windows `az` is az.cmd, which Node starts only through a shell: without one it is 'not found'.
    assert.deepEqual(invocationOf("az account get-access-token", "win32"), {
      shell: true,
      line: "az account get-access-token",
    });
    assert.deepEqual(invocationOf("  /usr/bin/pass show  work/api-key "), {
      shell: false,
      file: "/usr/bin/pass",
      args: ["show", "work/api-key"],
    });
    for (const line of [
      "echo Bearer $(gh auth token)",
      "cat ~/.token",
      "security find-generic-password -s 'my key' -w",
      'printf "%s" x',
      "a | b",
      "a && b",
      "a; b",
      "cat < file",
      "echo x > file",
      "echo $HOME",
      "echo `date`",
      "ls *.txt",
      "TOKEN=1 cmd",
      "echo a\\ b",
    ]) {
      assert.equal(invocationOf(line).shell, true, line);
    }
  });

  test("its output is a secret, with and without a header's scheme", () => {
    assert.deepEqual(outputSecrets("Bearer abc123"), ["Bearer abc123", "abc123"]);
    assert.deepEqual(outputSecrets("abc123"), ["abc123"]);
  });

  test("resolving: without outputs nothing runs and the value stays as written; with them, the output; a missing one is an error", () => {
    const { config } = valid({ command: "x", env: { TOKEN: "!gh auth token", PORT: "8080" } });
    const template = resolveServerConfig(config, {}, "/repo");
    assert.equal(template.endpoint?.kind === "stdio" && template.endpoint.env.TOKEN, "!gh auth token");
    assert.equal(
      template.secrets.includes("!gh auth token"),
      false,
      "the template is no secret: /mcp and the trust question show it",
    );
    const resolved = resolveServerConfig(config, {}, "/repo", {
      commandOutputs: new Map([["env.TOKEN", "tok-123456"]]),
    });
    assert.equal(resolved.endpoint?.kind === "stdio" && resolved.endpoint.env.TOKEN, "tok-123456");
    assert.ok(resolved.secrets.includes("tok-123456"));
    const missing = resolveServerConfig(config, {}, "/repo", { commandOutputs: new Map() });
    assert.equal(missing.endpoint, undefined);
    assert.match(missing.errors.join(";"), /`env\.TOKEN`'s command has not run/);

    const remote = valid({ url: "https://example.com/mcp", headers: { Authorization: "!pass show api" } }).config;
    const header = resolveServerConfig(remote, {}, "/repo", {
      commandOutputs: new Map([["headers.Authorization", "Bearer sekret-99"]]),
    });
    assert.equal(header.endpoint?.kind === "http" && header.endpoint.headers.Authorization, "Bearer sekret-99");
    assert.ok(header.secrets.includes("sekret-99"));
  });

  test("the trust question shows the command; a `${VAR}` in it is the shell's, not listed as the bridge's variable", () => {
    const { config } = valid({ command: "x", env: { TOKEN: "!cat ${TOKEN_FILE}", KEY: "${API_KEY}" } });
    assert.ok(describeForTrust(config).includes("env: TOKEN ← output of: cat ${TOKEN_FILE}, KEY ← ${API_KEY}"));
    assert.deepEqual(configVarRefs(config), ["API_KEY"]);
    const changed = valid({ command: "x", env: { TOKEN: "!cat ${OTHER_FILE}", KEY: "${API_KEY}" } }).config;
    assert.notEqual(trustFingerprint(changed), trustFingerprint(config), "a changed command asks for trust again");
  });
});

describe("tool names", () => {
  test("a pi 1.x config (no prefix) keeps mcp_<server>_<tool>; a prefix replaces it", () => {
    const { config } = valid({
      command: "npx",
      args: ["-y", "server"],
      exposure: "codemode",
      description: "Files",
      timeout: 60,
    });
    assert.equal(config.prefix, undefined);
    assert.equal(toolNameFor("my-files", "read_file", config.prefix), "mcp_my-files_read_file");
    assert.equal(
      toolNameFor("my-files", "read_file", valid({ command: "x", prefix: "fs" }).config.prefix),
      "fs_read_file",
    );
  });
});

describe("`oauth`, pi 1.x's name for `auth`", () => {
  const url = "https://mcp.example.com/mcp";
  const errorsOf = (entry: Record<string, unknown>) =>
    validateServerEntry("srv", { url, ...entry }, USER).errors.join("; ");

  test("read as `auth`, with pi 1.x's keys", () => {
    const { config } = valid({
      url,
      oauth: {
        clientId: "my-client",
        clientSecret: "${EXAMPLE_SECRET}",
        callbackPort: 8765,
        callbackUrl: "http://localhost/oauth/callback",
        scope: "read write",
        authServerMetadataUrl: "https://example.okta.com/.well-known/openid-configuration",
      },
    });
    assert.deepEqual(config.oauth, {
      callbackPort: 8765,
      clientId: "my-client",
      clientSecret: "${EXAMPLE_SECRET}",
      authorizationUrl: undefined,
      tokenUrl: undefined,
      clientMetadataUrl: undefined,
      scopes: ["read", "write"],
      callbackUrl: "http://localhost/oauth/callback",
      authServerMetadataUrl: "https://example.okta.com/.well-known/openid-configuration",
    });
    assert.equal(
      valid({ url, oauth: { clientName: "Claude Code", clientRegistration: "dcr" } }).config.oauth?.clientName,
      "Claude Code",
    );
  });

  test("both `auth` and `oauth`: an error", () => {
    assert.match(
      errorsOf({ auth: { clientId: "a" }, oauth: { clientId: "b" } }),
      /has both `auth` and `oauth`: they are one setting .*keep one/,
    );
  });

  test("callbackUrl: http on localhost, 127.0.0.1 or [::1] only, no query or fragment, its port agreeing with callbackPort", () => {
    for (const ok of ["http://localhost/callback", "http://127.0.0.1:8765/cb", "http://[::1]:9000/x"])
      assert.equal(errorsOf({ oauth: { callbackUrl: ok } }), "", ok);
    for (const bad of [
      "https://localhost/cb",
      "http://example.com/cb",
      "http://127.0.0.2/cb",
      "http://localhost/cb?x=1",
      "http://localhost/cb#f",
      "callback",
    ]) {
      assert.match(
        errorsOf({ oauth: { callbackUrl: bad } }),
        /`oauth\.callbackUrl` must be an http URL on localhost, 127\.0\.0\.1 or \[::1\]/,
        bad,
      );
    }
    assert.match(
      errorsOf({ oauth: { callbackUrl: "http://localhost:1234/cb", callbackPort: 4321 } }),
      /name different ports/,
    );
    // The default port written out is a port all the same.
    assert.match(
      errorsOf({ oauth: { callbackUrl: "http://localhost:80/cb", callbackPort: 4321 } }),
      /name different ports/,
    );
    // Sent as written, port 0 names no port the browser can reach.
    assert.match(
      errorsOf({ oauth: { callbackUrl: "http://localhost:0/cb" } }),
      /`oauth\.callbackUrl` cannot name port 0/,
    );
  });

  test("clientRegistration: auto, dcr or cimd; cimd needs a document of the user's and no clientId or clientName", () => {
    assert.match(errorsOf({ oauth: { clientRegistration: "always" } }), /must be "auto", "dcr" or "cimd"/);
    assert.match(
      errorsOf({ oauth: { clientRegistration: "cimd" } }),
      /"cimd" needs `oauth\.clientMetadataUrl`.*the bridge has none of its own/,
    );
    assert.match(
      errorsOf({ oauth: { clientRegistration: "cimd", clientId: "x", clientMetadataUrl: "https://a.example/c.json" } }),
      /cannot go with/,
    );
    assert.equal(
      errorsOf({ oauth: { clientRegistration: "cimd", clientMetadataUrl: "https://a.example/c.json" } }),
      "",
    );
  });

  test("authServerMetadataUrl: https, or http on loopback; not with configured endpoints", () => {
    assert.equal(
      errorsOf({ oauth: { authServerMetadataUrl: "http://127.0.0.1:8080/.well-known/oauth-authorization-server" } }),
      "",
    );
    assert.match(
      errorsOf({ oauth: { authServerMetadataUrl: "http://auth.example.com/meta" } }),
      /must be an https URL, or http on localhost/,
    );
    assert.match(
      errorsOf({
        oauth: {
          authServerMetadataUrl: "https://a.example/m",
          authorizationUrl: "https://a.example/auth",
          tokenUrl: "https://a.example/token",
        },
      }),
      /both replace discovery/,
    );
  });

  test("authServerMetadataUrl and clientMetadataUrl written as a ${VAR} are taken: the variable is filled in at connect time", () => {
    assert.equal(
      errorsOf({ oauth: { authServerMetadataUrl: "${AUTH_METADATA_URL}", clientMetadataUrl: "${CLIENT_DOCUMENT}" } }),
      "",
    );
    assert.match(
      errorsOf({
        oauth: {
          authServerMetadataUrl: "${META}",
          authorizationUrl: "https://a.example/a",
          tokenUrl: "https://a.example/t",
        },
      }),
      /both replace discovery/,
    );
  });

  test("pi 1.x's `auth.provider` is refused with what to do instead", () => {
    assert.match(
      errorsOf({ auth: { provider: "github" } }),
      /`auth\.provider` \(pi 1\.x's token of a \/login provider\) is not supported here/,
    );
  });

  test("the trust question names the redirect and metadata URLs", () => {
    const { config } = valid({
      url,
      oauth: { authServerMetadataUrl: "https://a.example/meta", callbackUrl: "http://localhost/cb" },
    });
    assert.ok(describeForTrust(config).includes("OAuth endpoints: https://a.example/meta, http://localhost/cb"));
  });
});

describe("where the OAuth redirect comes back", () => {
  test("default, a callbackUrl with a port (as written), one without (the port put in)", () => {
    const plain = redirectPlan({ callbackPort: 9876 });
    assert.deepEqual(
      [plain.host, plain.path, plain.ports.length, plain.uri(9877)],
      ["127.0.0.1", "/callback", 6, "http://127.0.0.1:9877/callback"],
    );
    const fixed = redirectPlan({ callbackPort: 9876, callbackUrl: "http://localhost:8765/oauth/cb" });
    assert.deepEqual(
      [fixed.host, fixed.path, fixed.ports, fixed.uri(8765)],
      ["127.0.0.1", "/oauth/cb", [8765], "http://localhost:8765/oauth/cb"],
    );
    const open = redirectPlan({ callbackPort: 5000, callbackUrl: "http://[::1]/cb" });
    assert.deepEqual(
      [open.host, open.path, open.ports[0], open.uri(5001)],
      ["::1", "/cb", 5000, "http://[::1]:5001/cb"],
    );
    assert.deepEqual(redirectPlan({ callbackPort: 65_534 }).ports, [65_534, 65_535]);
  });

  test("a callbackUrl that writes the default port 80 listens there and is sent as written", () => {
    const plan = redirectPlan({ callbackPort: 9876, callbackUrl: "http://localhost:80/cb" });
    assert.deepEqual([plan.ports, plan.uri(80)], [[80], "http://localhost:80/cb"]);
  });
});
