/**
 * Importing other MCP clients' configurations: sample files in each client's documented format (test/fixtures/imports),
 * the candidate locations per platform, and discovery against a temp home and project.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import type { ClientConfigFile, ClientId, ImportedServer, ImportLocations } from "../src/config/import/import-types.ts";
import { candidateFiles } from "../src/config/import/locations.ts";
import { discoverImports, parseClientConfig } from "../src/config/import/discover.ts";
import { inputVarName } from "../src/config/substitute.ts";

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "imports");

const LOC: ImportLocations = { home: "/home/ann", projectRoot: "/home/ann/work/shop", platform: "linux", env: {} };

/** Every literal credential in the sample files: none may ever show up in a note or an error. */
const FIXTURE_SECRETS = [
  "ghp_EXAMPLEonlyNotARealToken0000000000",
  "BSAexampleOnlyNotARealKey",
  "ctx7sk-example-only-not-a-real-key",
  "hunter2example",
  "sk_test_EXAMPLEonlyNotARealKey0000",
  "example-inline-key",
  "q8Vz2LmX7pR4tN1wK9cJ5hB3fD6gY0sAe4Uu",
  "example-query-key",
  "example-client-secret",
  "figd_example-only-not-a-real-token",
  "sntrys_example_only_not_a_real_token",
  "sk-EXAMPLEonlyNotARealKey000000",
  "MY_API_KEY_example_only",
];

function fixture(rel: string): string {
  return readFileSync(path.join(FIXTURES, rel), "utf8");
}

function parseFixture(client: ClientId, rel: string, scope: "user" | "project" = "user", loc: ImportLocations = LOC) {
  const file: ClientConfigFile = { client, scope, path: `/fixtures/${rel}` };
  const result = parseClientConfig(file, fixture(rel), loc);
  assertImportable(result.servers);
  assertNoSecretValues(result);
  return result;
}

/** The contract with the writer of `/mcp import`: every entry loads as is. */
function assertImportable(servers: ImportedServer[]): void {
  for (const server of servers) {
    const result = validateServerEntry(server.name, server.entry, { scope: "project", path: ".pi/mcp.json" });
    assert.deepEqual(result.errors, [], `${server.client} ${server.name}`);
    assert.deepEqual(result.warnings, [], `${server.client} ${server.name}`);
    assert.ok(result.config, `${server.client} ${server.name}`);
  }
}

function assertNoSecretValues(
  result: { servers: ImportedServer[]; errors: string[] },
  secrets: readonly string[] = FIXTURE_SECRETS,
): void {
  const shown = JSON.stringify([result.errors, result.servers.map((s) => [s.notes, s.inlineSecrets])]);
  for (const secret of secrets)
    assert.ok(!shown.includes(secret), `a secret value leaked into notes or errors: ${secret.slice(0, 4)}…`);
}

/** name → entry, for exact comparison. */
function entries(servers: ImportedServer[]): Record<string, Record<string, unknown>> {
  return Object.fromEntries(servers.map((s) => [s.name, s.entry]));
}

function server(servers: ImportedServer[], name: string): ImportedServer {
  const found = servers.find((s) => s.name === name);
  assert.ok(found, `no server ${name}`);
  return found;
}

describe("candidateFiles", { timeout: 60_000 }, () => {
  it("lists every documented file on Linux, under ~/.config", () => {
    assert.deepEqual(candidateFiles(LOC), [
      { client: "claude-desktop", scope: "user", path: "/home/ann/.config/Claude/claude_desktop_config.json" },
      { client: "claude-code", scope: "project", path: "/home/ann/work/shop/.mcp.json" },
      { client: "claude-code", scope: "user", path: "/home/ann/.claude.json" },
      { client: "cursor", scope: "project", path: "/home/ann/work/shop/.cursor/mcp.json" },
      { client: "cursor", scope: "user", path: "/home/ann/.cursor/mcp.json" },
      { client: "vscode", scope: "project", path: "/home/ann/work/shop/.vscode/mcp.json" },
      { client: "vscode", scope: "user", path: "/home/ann/.config/Code/User/mcp.json" },
      { client: "windsurf", scope: "user", path: "/home/ann/.codeium/windsurf/mcp_config.json" },
      { client: "codex", scope: "project", path: "/home/ann/work/shop/.codex/config.toml" },
      { client: "codex", scope: "user", path: "/home/ann/.codex/config.toml" },
      { client: "opencode", scope: "project", path: "/home/ann/work/shop/opencode.json" },
      { client: "opencode", scope: "project", path: "/home/ann/work/shop/opencode.jsonc" },
      { client: "opencode", scope: "user", path: "/home/ann/.config/opencode/opencode.json" },
      { client: "opencode", scope: "user", path: "/home/ann/.config/opencode/opencode.jsonc" },
      { client: "opencode", scope: "user", path: "/home/ann/.config/opencode/config.json" },
    ]);
  });

  it("uses ~/Library/Application Support for Claude Desktop and VS Code on macOS", () => {
    const files = candidateFiles({ home: "/Users/ann", projectRoot: "/Users/ann/shop", platform: "darwin", env: {} });
    const paths = (client: ClientId) => files.filter((f) => f.client === client).map((f) => f.path);
    assert.deepEqual(paths("claude-desktop"), [
      "/Users/ann/Library/Application Support/Claude/claude_desktop_config.json",
    ]);
    assert.deepEqual(paths("vscode"), [
      "/Users/ann/shop/.vscode/mcp.json",
      "/Users/ann/Library/Application Support/Code/User/mcp.json",
    ]);
    assert.deepEqual(paths("windsurf"), ["/Users/ann/.codeium/windsurf/mcp_config.json"]);
    // opencode keeps to XDG locations on macOS too.
    assert.deepEqual(paths("opencode").slice(2), [
      "/Users/ann/.config/opencode/opencode.json",
      "/Users/ann/.config/opencode/opencode.jsonc",
      "/Users/ann/.config/opencode/config.json",
    ]);
  });

  it("uses %APPDATA% and Windows paths on win32", () => {
    const loc: ImportLocations = {
      home: "C:\\Users\\ann",
      projectRoot: "D:\\src\\shop",
      platform: "win32",
      env: { APPDATA: "C:\\Users\\ann\\AppData\\Roaming" },
    };
    assert.deepEqual(
      candidateFiles(loc).map((f) => `${f.client} ${f.scope} ${f.path}`),
      [
        "claude-desktop user C:\\Users\\ann\\AppData\\Roaming\\Claude\\claude_desktop_config.json",
        "claude-code project D:\\src\\shop\\.mcp.json",
        "claude-code user C:\\Users\\ann\\.claude.json",
        "cursor project D:\\src\\shop\\.cursor\\mcp.json",
        "cursor user C:\\Users\\ann\\.cursor\\mcp.json",
        "vscode project D:\\src\\shop\\.vscode\\mcp.json",
        "vscode user C:\\Users\\ann\\AppData\\Roaming\\Code\\User\\mcp.json",
        "windsurf user C:\\Users\\ann\\.codeium\\windsurf\\mcp_config.json",
        "codex project D:\\src\\shop\\.codex\\config.toml",
        "codex user C:\\Users\\ann\\.codex\\config.toml",
        "opencode project D:\\src\\shop\\opencode.json",
        "opencode project D:\\src\\shop\\opencode.jsonc",
        "opencode user C:\\Users\\ann\\.config\\opencode\\opencode.json",
        "opencode user C:\\Users\\ann\\.config\\opencode\\opencode.jsonc",
        "opencode user C:\\Users\\ann\\.config\\opencode\\config.json",
      ],
    );
    // Without APPDATA, the default roaming directory.
    const noAppData = candidateFiles({ ...loc, env: {} });
    assert.equal(noAppData[0]!.path, "C:\\Users\\ann\\AppData\\Roaming\\Claude\\claude_desktop_config.json");
  });

  it("follows CODEX_HOME, CLAUDE_CONFIG_DIR, XDG_CONFIG_HOME and OPENCODE_CONFIG", () => {
    const files = candidateFiles({
      ...LOC,
      env: {
        CODEX_HOME: "/opt/codex",
        CLAUDE_CONFIG_DIR: "/opt/claude",
        XDG_CONFIG_HOME: "/xdg",
        OPENCODE_CONFIG: "config/opencode.json",
      },
    });
    const paths = files.map((f) => f.path);
    assert.ok(paths.includes("/opt/codex/config.toml"));
    assert.ok(!paths.includes("/home/ann/.codex/config.toml"));
    assert.ok(paths.includes("/opt/claude/.claude.json"));
    assert.ok(paths.includes("/xdg/Claude/claude_desktop_config.json"));
    assert.ok(paths.includes("/xdg/Code/User/mcp.json"));
    assert.ok(paths.includes("/xdg/opencode/opencode.json"));
    // A relative OPENCODE_CONFIG is taken from the project root.
    assert.deepEqual(files.at(-1), {
      client: "opencode",
      scope: "user",
      path: "/home/ann/work/shop/config/opencode.json",
    });
    // An empty variable counts as unset.
    assert.ok(
      candidateFiles({ ...LOC, env: { CODEX_HOME: "" } }).some((f) => f.path === "/home/ann/.codex/config.toml"),
    );
  });

  it("lists a file once when the project root is the home directory, as the user file it is", () => {
    const files = candidateFiles({ ...LOC, projectRoot: "/home/ann" });
    const cursor = files.filter((f) => f.client === "cursor");
    assert.deepEqual(cursor, [{ client: "cursor", scope: "user", path: "/home/ann/.cursor/mcp.json" }]);
    assert.deepEqual(
      files.filter((f) => f.client === "codex"),
      [{ client: "codex", scope: "user", path: "/home/ann/.codex/config.toml" }],
    );
    assert.equal(new Set(files.map((f) => f.path)).size, files.length);
  });
});

describe("Claude Desktop", { timeout: 60_000 }, () => {
  it("imports mcpServers, stringifies env values, and reports an entry without a command", () => {
    const { servers, errors } = parseFixture("claude-desktop", "claude-desktop/claude_desktop_config.json");
    assert.deepEqual(entries(servers), {
      filesystem: {
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-filesystem", "/Users/ann/Desktop", "/Users/ann/Downloads"],
        // Offered the project root as its root, it would leave these directories for it.
        roots: false,
      },
      github: {
        command: "docker",
        args: ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
        env: { GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_EXAMPLEonlyNotARealToken0000000000" },
      },
      "brave-search": {
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-brave-search"],
        env: {
          BRAVE_API_KEY: "BSAexampleOnlyNotARealKey",
          GOOGLE_APPLICATION_CREDENTIALS: "/Users/ann/.config/gcloud/key.json",
          AUTH_ENABLED: "true",
        },
      },
      sqlite: { command: "uvx", args: ["mcp-server-sqlite", "--db-path", "/Users/ann/test.db"] },
      linear: { url: "https://mcp.linear.app/mcp" },
    });
    assert.deepEqual(errors, [
      'Claude Desktop config /fixtures/claude-desktop/claude_desktop_config.json: server "half-written": needs either `command` (a local server) or `url` (a remote server); not imported',
    ]);
    for (const s of servers) {
      assert.equal(s.client, "claude-desktop");
      assert.equal(s.sourcePath, "/fixtures/claude-desktop/claude_desktop_config.json");
      const roots = s.name === "filesystem" ? [server(servers, "filesystem").notes[0]!] : [];
      assert.deepEqual(s.notes, roots);
    }
    assert.match(server(servers, "filesystem").notes[0]!, /"roots": false` added: the filesystem server keeps to/);
    assert.deepEqual(server(servers, "github").inlineSecrets, ["env.GITHUB_PERSONAL_ACCESS_TOKEN"]);
    // A key file's path and a boolean flag are not secrets, whatever their names.
    assert.deepEqual(server(servers, "brave-search").inlineSecrets, ["env.BRAVE_API_KEY"]);
    assert.deepEqual(server(servers, "filesystem").inlineSecrets, []);
  });
});

describe("mcp-remote entries", { timeout: 60_000 }, () => {
  it("are imported as the remote servers they reach: headers (its env's values in them), transport, OAuth client, callback port", () => {
    const text = JSON.stringify({
      mcpServers: {
        atlassian: { command: "npx", args: ["-y", "mcp-remote", "https://mcp.atlassian.com/v1/sse"] },
        internal: {
          command: "npx",
          args: ["mcp-remote@latest", "https://mcp.example.com/mcp", "--header", "Authorization:${AUTH_HEADER}"],
          env: { AUTH_HEADER: "Bearer ${EXAMPLE_TOKEN}" },
        },
        pinned: {
          command: "mcp-remote",
          args: ["https://mcp.example.org/sse", "9876", "--transport", "sse-only", "--debug", "--header", "X-Broken"],
        },
        registered: {
          command: "bunx",
          args: [
            "mcp-remote",
            "https://mcp.example.net/mcp",
            "--static-oauth-client-info",
            '{"client_id":"pi-bridge"}',
            "--static-oauth-client-metadata",
            '{"scope":"read write","token_endpoint_auth_method":"none"}',
            "--resource",
            "https://mcp.example.net/",
          ],
          disabled: true,
        },
        notproxy: { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory", "https://x.example"] },
      },
    });
    const file: ClientConfigFile = { client: "claude-desktop", scope: "user", path: "/fixtures/remote.json" };
    const { servers, errors } = parseClientConfig(file, text, LOC);
    assert.deepEqual(errors, []);
    assert.deepEqual(entries(servers), {
      atlassian: { url: "https://mcp.atlassian.com/v1/sse" },
      internal: { url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer ${EXAMPLE_TOKEN}" } },
      pinned: { type: "sse", url: "https://mcp.example.org/sse", auth: { callbackPort: 9876 } },
      registered: {
        url: "https://mcp.example.net/mcp",
        auth: { clientId: "pi-bridge", scopes: ["read", "write"] },
        enabled: false,
      },
      notproxy: { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory", "https://x.example"] },
    });
    assertImportable(servers);
    assert.match(
      server(servers, "atlassian").notes.join("\n"),
      /ran `mcp-remote` to reach https:\/\/mcp\.atlassian\.com\/v1\/sse: imported as that remote server/,
    );
    assert.match(
      server(servers, "pinned").notes.join("\n"),
      /mcp-remote's `--debug` is not needed by mcp-bridge and was left out.*mcp-remote's `--header X-Broken` is not `Name: value`/s,
    );
    const registered = server(servers, "registered").notes.join("\n");
    assert.match(
      registered,
      /`token_endpoint_auth_method` of mcp-remote's `--static-oauth-client-metadata` was left out/,
    );
    assert.match(registered, /mcp-remote's `--resource` is not needed/);
    assert.doesNotMatch(registered, /mcp\.example\.net\/`/, "a flag's value is not taken for a flag");
    assert.deepEqual(server(servers, "notproxy").notes, []);
  });
  it("a key in the path of the URL it reaches stays out of the note about it (Zapier's, for Claude Desktop)", () => {
    const url = "https://mcp.zapier.com/api/mcp/s/NjNkNTc4ZDMtMjA0Zi00MjEzLWJhMmEtODJhZjRkNjU4NDI2OjE2Yzk0Zm==/sse";
    const text = JSON.stringify({ mcpServers: { zapier: { command: "npx", args: ["-y", "mcp-remote", url] } } });
    const file: ClientConfigFile = { client: "claude-desktop", scope: "user", path: "/fixtures/zapier.json" };
    const notes = server(parseClientConfig(file, text, LOC).servers, "zapier").notes.join("\n");
    assert.match(notes, /to reach https:\/\/mcp\.zapier\.com\/api\/mcp\/s\/\*\*\*\/sse:/);
  });

  it("a --header written without its colon is noted without the key it may hold", () => {
    const key = "sk-EXAMPLEonlyNotARealKey000000";
    const args = ["-y", "mcp-remote", "https://mcp.example.com/mcp", "--header", `Authorization=Bearer ${key}`];
    const more = ["--header", key];
    const text = JSON.stringify({ mcpServers: { typo: { command: "npx", args: [...args, ...more] } } });
    const file: ClientConfigFile = { client: "claude-desktop", scope: "user", path: "/fixtures/typo.json" };
    const result = parseClientConfig(file, text, LOC);
    assert.match(server(result.servers, "typo").notes.join("\n"), /`--header Authorization…` is not `Name: value`/);
    assertNoSecretValues(result, [key]);
  });

  it("an argument it does not know, a flag's value written with `=` or a bare key, is noted without the key", () => {
    const key = "sk-EXAMPLEonlyNotARealKey000000";
    const args = ["-y", "mcp-remote", "https://mcp.example.com/mcp", `--header=Authorization: Bearer ${key}`, key];
    const text = JSON.stringify({ mcpServers: { eq: { command: "npx", args } } });
    const file: ClientConfigFile = { client: "claude-desktop", scope: "user", path: "/fixtures/eq.json" };
    const result = parseClientConfig(file, text, LOC);
    assert.match(server(result.servers, "eq").notes.join("\n"), /`--header=…` is not needed/);
    assertNoSecretValues(result, [key]);
  });

  it("are found behind Windows' `cmd /c`, as guides for Claude Desktop on Windows write them", () => {
    const args = ["/c", "npx", "-y", "mcp-remote", "https://mcp.example.com/sse"];
    const text = JSON.stringify({ mcpServers: { win: { command: "cmd", args } } });
    const file: ClientConfigFile = { client: "claude-desktop", scope: "user", path: "C:\\Users\\ann\\claude.json" };
    const { servers } = parseClientConfig(file, text, { ...LOC, platform: "win32" });
    assert.deepEqual(entries(servers), { win: { url: "https://mcp.example.com/sse" } });
  });

  it("notes the variables of its env that no argument used, which the remote entry cannot carry", () => {
    const env = { AUTH_HEADER: "Bearer ${TOKEN}", NODE_EXTRA_CA_CERTS: "/etc/ssl/corp.pem" };
    const args = ["-y", "mcp-remote", "https://mcp.example.com/mcp", "--header", "Authorization:${AUTH_HEADER}"];
    const text = JSON.stringify({ mcpServers: { corp: { command: "npx", args, env } } });
    const file: ClientConfigFile = { client: "claude-desktop", scope: "user", path: "/fixtures/corp.json" };
    const notes = server(parseClientConfig(file, text, LOC).servers, "corp").notes.join("\n");
    assert.match(notes, /`env\.NODE_EXTRA_CA_CERTS`/);
    assert.doesNotMatch(notes, /AUTH_HEADER/);
  });
  it("a key in the URL it reaches stays out of the note about it", () => {
    const url =
      "https://server.smithery.ai/@acme/tools/mcp?api_key=example-query-key&profile=q8Vz2LmX7pR4tN1wK9cJ5hB3fD6gY0sAe4Uu";
    const text = JSON.stringify({ mcpServers: { tools: { command: "npx", args: ["-y", "mcp-remote", url] } } });
    const file: ClientConfigFile = { client: "claude-desktop", scope: "user", path: "/fixtures/keyed.json" };
    const result = parseClientConfig(file, text, LOC);
    assert.deepEqual(entries(result.servers), { tools: { url } });
    assert.deepEqual(server(result.servers, "tools").inlineSecrets, ["url"]);
    assert.match(
      server(result.servers, "tools").notes.join("\n"),
      /to reach https:\/\/server\.smithery\.ai\/@acme\/tools\/mcp:/,
    );
    assertNoSecretValues(result);
  });
});

describe("Claude Code", { timeout: 60_000 }, () => {
  it("imports .mcp.json: ${VAR:-default} kept, sse kept as a type, oauth mapped, headersHelper noted, ws rejected", () => {
    const { servers, errors } = parseFixture("claude-code", "claude-code/mcp.json", "project");
    assert.deepEqual(entries(servers), {
      sentry: { url: "https://mcp.sentry.dev/mcp" },
      "api-server": {
        url: "${API_BASE_URL:-https://api.example.com}/mcp",
        headers: { Authorization: "Bearer ${API_KEY}" },
      },
      events: { type: "sse", url: "https://events.example.com/sse", headers: { "X-API-Key": "${EVENTS_API_KEY}" } },
      db: {
        command: "npx",
        args: ["-y", "@bytebase/dbhub", "--dsn", "${DATABASE_URL}"],
        env: { LOG_LEVEL: "${LOG_LEVEL:-info}" },
      },
      internal: {
        url: "https://mcp.internal.example.com/mcp",
        auth: { clientId: "pi-bridge-client", callbackPort: 8080, scopes: "tools:read tools:write" },
      },
    });
    assert.deepEqual(server(servers, "internal").notes, [
      "`headersHelper` (a command that prints headers) is not supported: put the headers under `headers`",
    ]);
    assert.ok(servers.every((s) => s.inlineSecrets.length === 0));
    assert.equal(errors.length, 1);
    assert.match(
      errors[0]!,
      /^Claude Code config \/fixtures\/claude-code\/mcp\.json: server "socket": unknown `type` "ws"/,
    );
    assert.match(errors[0]!, /not imported$/);
  });

  it("takes ~/.claude.json's user servers and the local servers of this project only", () => {
    const { servers, errors } = parseFixture("claude-code", "claude-code/claude.json");
    assert.deepEqual(errors, []);
    assert.deepEqual(
      servers.map((s) => s.name),
      ["postgres", "playwright", "context7"],
    );
    assert.deepEqual(entries(servers), {
      postgres: {
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-postgres", "postgresql://shop:hunter2example@localhost:5432/shop"],
      },
      // The local entry wins over the user entry of the same name, as in Claude Code.
      playwright: { command: "npx", args: ["@playwright/mcp@latest", "--headless"] },
      context7: {
        url: "https://mcp.context7.com/mcp",
        headers: { CONTEXT7_API_KEY: "ctx7sk-example-only-not-a-real-key" },
      },
    });
    assert.deepEqual(server(servers, "postgres").notes, [
      "from Claude Code's local scope: it applies to this project only",
    ]);
    assert.deepEqual(server(servers, "playwright").notes, [
      "from Claude Code's local scope: it applies to this project only",
      "replaces Claude Code's user-scope server of the same name, as in Claude Code",
    ]);
    assert.deepEqual(server(servers, "context7").notes, []);
    // A password inside a connection string argument counts.
    assert.deepEqual(server(servers, "postgres").inlineSecrets, ["args[2]"]);
    assert.deepEqual(server(servers, "context7").inlineSecrets, ["headers.CONTEXT7_API_KEY"]);
  });

  it("picks the project entry for the right project only", () => {
    const names = (projectRoot: string, platform: NodeJS.Platform = "linux") =>
      parseFixture("claude-code", "claude-code/claude.json", "user", { ...LOC, projectRoot, platform }).servers.map(
        (s) => s.name,
      );
    assert.deepEqual(names("/home/ann/work/blog"), ["wordpress", "context7", "playwright"]);
    assert.deepEqual(names("/home/ann/work/shop/"), ["postgres", "playwright", "context7"]);
    assert.deepEqual(names("/home/ann/work"), ["context7", "playwright"]);
    assert.deepEqual(names("/home/ann/work/shop-old"), ["context7", "playwright"]);
    const blog = parseFixture("claude-code", "claude-code/claude.json", "user", {
      ...LOC,
      projectRoot: "/home/ann/work/blog",
    }).servers;
    assert.deepEqual(server(blog, "playwright").entry, { command: "npx", args: ["@playwright/mcp@latest"] });
  });

  it("matches Windows project keys written with forward slashes, ignoring case", () => {
    const text = JSON.stringify({
      projects: {
        "C:/Users/ann/shop": { mcpServers: { db: { type: "stdio", command: "npx", args: ["db-mcp"] } } },
        "C:/Users/ann/blog": { mcpServers: { wp: { type: "stdio", command: "npx", args: ["wp-mcp"] } } },
      },
    });
    const loc: ImportLocations = {
      home: "C:\\Users\\ann",
      projectRoot: "C:\\Users\\Ann\\shop\\",
      platform: "win32",
      env: {},
    };
    const { servers, errors } = parseClientConfig(
      { client: "claude-code", scope: "user", path: "C:\\Users\\ann\\.claude.json" },
      text,
      loc,
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(entries(servers), { db: { command: "npx", args: ["db-mcp"] } });
  });
});

describe("Cursor", { timeout: 60_000 }, () => {
  it("imports stdio and url entries, keeps ${env:VAR}, rewrites editor variables, maps static OAuth", () => {
    const { servers, errors } = parseFixture("cursor", "cursor/mcp.json", "project");
    assert.deepEqual(errors, []);
    assert.deepEqual(entries(servers), {
      supabase: {
        command: "npx",
        args: ["-y", "@supabase/mcp-server-supabase@latest", "--read-only", "--project-ref=abcdefghijklmnop"],
        env: { SUPABASE_ACCESS_TOKEN: "${env:SUPABASE_ACCESS_TOKEN}" },
      },
      notion: { url: "https://mcp.notion.com/mcp" },
      stripe: {
        url: "https://mcp.stripe.com",
        headers: { Authorization: "Bearer sk_test_EXAMPLEonlyNotARealKey0000" },
      },
      "local-tools": {
        command: "node",
        args: [
          "${PROJECT_ROOT}/tools/mcp-server.js",
          "--home",
          "/home/ann/.local-tools",
          "--api-key",
          "example-inline-key",
        ],
        env: { DEPLOY_HOOK: "q8Vz2LmX7pR4tN1wK9cJ5hB3fD6gY0sAe4Uu" },
      },
      "company-docs": {
        url: "https://mcp.example.com/mcp?apiKey=example-query-key",
        auth: { clientId: "${env:DOCS_CLIENT_ID}", clientSecret: "example-client-secret", scopes: ["docs:read"] },
      },
    });
    assert.deepEqual(server(servers, "local-tools").notes, [
      "`envFile` is not supported: copy the variables it sets into `env`",
      "`${workspaceFolder}` became `${PROJECT_ROOT}`, the directory pi starts in",
    ]);
    assert.deepEqual(server(servers, "supabase").inlineSecrets, []);
    assert.deepEqual(server(servers, "stripe").inlineSecrets, ["headers.Authorization"]);
    // A long random-looking value is caught by its shape; a value after `--api-key` by the flag.
    assert.deepEqual(server(servers, "local-tools").inlineSecrets, ["env.DEPLOY_HOOK", "args[4]"]);
    assert.deepEqual(server(servers, "company-docs").inlineSecrets, ["url", "auth.clientSecret"]);
  });
});

describe("VS Code", { timeout: 60_000 }, () => {
  it("turns inputs into ${VARS} with a note, ${workspaceFolder} into ${PROJECT_ROOT}, notes envFile and dev.debug, keeps dev.watch", () => {
    const { servers, errors } = parseFixture("vscode", "vscode/mcp.json", "project");
    assert.deepEqual(errors, []);
    assert.deepEqual(entries(servers), {
      github: { url: "https://api.githubcopilot.com/mcp/", headers: { Authorization: "Bearer ${GITHUB_TOKEN}" } },
      perplexity: {
        command: "npx",
        args: ["-y", "server-perplexity-ask"],
        env: { PERPLEXITY_API_KEY: "${PERPLEXITY_KEY}", LOG_LEVEL: "${LOG_LEVEL:-info}" },
      },
      fetch: { command: "uvx", args: ["mcp-server-fetch"] },
      memory: {
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-memory"],
        env: { MEMORY_FILE_PATH: "${PROJECT_ROOT}/.vscode/memory.jsonl" },
      },
      "my-python": {
        command: "uv",
        args: ["run", "server.py", "--name", "shop"],
        cwd: "${PROJECT_ROOT}/mcp",
        dev: { watch: "mcp/**/*.py" },
      },
      "legacy-sse": { type: "sse", url: "http://localhost:3001/sse" },
      picker: { command: "node", args: ["${command:pickServerScript}"], env: { NODE_ENV: "development" } },
    });
    assert.deepEqual(server(servers, "github").notes, [
      'VS Code input "github-token" (GitHub Personal Access Token) became ${GITHUB_TOKEN}: set GITHUB_TOKEN in the environment pi starts from',
    ]);
    assert.deepEqual(server(servers, "perplexity").notes, [
      'VS Code input "perplexity-key" (Perplexity API Key) became ${PERPLEXITY_KEY}: set PERPLEXITY_KEY in the environment pi starts from',
      'VS Code input "logLevel" (Log level) became ${LOG_LEVEL}: set LOG_LEVEL in the environment pi starts from',
    ]);
    assert.deepEqual(server(servers, "memory").notes, [
      "`envFile` is not supported: copy the variables it sets into `env`",
      "`${workspaceFolder}` became `${PROJECT_ROOT}`, the directory pi starts in",
    ]);
    assert.deepEqual(server(servers, "my-python").notes, [
      "`dev.debug` (VS Code's debugger) is not supported",
      "`${workspaceFolderBasename}` became this project's folder name",
      "`${workspaceFolder}` became `${PROJECT_ROOT}`, the directory pi starts in",
    ]);
    assert.deepEqual(server(servers, "picker").notes, [
      "`${command:pickServerScript}` in `args[0]` is a VS Code variable mcp-bridge cannot resolve; it is passed on as written",
    ]);
    assert.ok(servers.every((s) => s.inlineSecrets.length === 0));
  });

  it("names input variables in UPPER_SNAKE_CASE", () => {
    assert.equal(inputVarName("github-token"), "GITHUB_TOKEN");
    assert.equal(inputVarName("github_token"), "GITHUB_TOKEN");
    assert.equal(inputVarName("apiKey"), "API_KEY");
    assert.equal(inputVarName("my.input id"), "MY_INPUT_ID");
    assert.equal(inputVarName("1password"), "_1PASSWORD");
    assert.equal(inputVarName("---"), "INPUT");
  });

  it("handles an input without a declaration, and a password prompt's default is not copied", () => {
    const text = JSON.stringify({
      inputs: [
        {
          type: "promptString",
          id: "db-pass",
          description: "Database password",
          password: true,
          default: "changeme-please",
        },
      ],
      servers: {
        db: { type: "stdio", command: "db-mcp", env: { DB_PASSWORD: "${input:db-pass}", DB_USER: "${input:db_user}" } },
      },
    });
    const { servers, errors } = parseClientConfig({ client: "vscode", scope: "user", path: "/u/mcp.json" }, text, LOC);
    assert.deepEqual(errors, []);
    assert.deepEqual(servers[0]!.entry, {
      command: "db-mcp",
      env: { DB_PASSWORD: "${DB_PASS}", DB_USER: "${DB_USER}" },
    });
    assert.deepEqual(servers[0]!.notes, [
      'VS Code input "db-pass" (Database password) became ${DB_PASS}: set DB_PASS in the environment pi starts from',
      'VS Code input "db_user" became ${DB_USER}: set DB_USER in the environment pi starts from',
    ]);
    assert.ok(!JSON.stringify(servers).includes("changeme-please"));
  });

  it("reads the user-level mcp.json, where ${userHome} is this home", () => {
    const text =
      '{ "servers": { "notes": { "command": "notes-mcp", "args": ["--dir", "${userHome}${pathSeparator}notes"] } } }';
    const loc: ImportLocations = { home: "C:\\Users\\ann", projectRoot: "C:\\src\\shop", platform: "win32", env: {} };
    const { servers } = parseClientConfig(
      { client: "vscode", scope: "user", path: "C:\\Users\\ann\\AppData\\Roaming\\Code\\User\\mcp.json" },
      text,
      loc,
    );
    assert.deepEqual(servers[0]!.entry, { command: "notes-mcp", args: ["--dir", "C:\\Users\\ann\\notes"] });
  });
});

describe("Windsurf", { timeout: 60_000 }, () => {
  it("maps serverUrl to url, keeps disabled servers disabled, and notes unsupported fields and variables", () => {
    const { servers, errors } = parseFixture("windsurf", "windsurf/mcp_config.json");
    assert.deepEqual(errors, []);
    assert.deepEqual(entries(servers), {
      github: {
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-github"],
        env: { GITHUB_PERSONAL_ACCESS_TOKEN: "${env:GITHUB_TOKEN}" },
      },
      figma: { url: "https://mcp.figma.com/mcp", headers: { "X-Figma-Token": "figd_example-only-not-a-real-token" } },
      puppeteer: { command: "npx", args: ["-y", "@modelcontextprotocol/server-puppeteer"], enabled: false },
      notes: {
        command: "npx",
        args: ["-y", "@example/notes-mcp", "--dir", "${file:/Users/ann/.config/notes-dir.txt}"],
      },
    });
    assert.deepEqual(server(servers, "puppeteer").notes, [
      "`disabledTools` is not supported: all the server's tools are offered",
      'disabled in Windsurf; imported with "enabled": false',
    ]);
    assert.deepEqual(server(servers, "notes").notes, [
      "`${file:/Users/ann/.config/notes-dir.txt}` in `args[3]` is a Windsurf variable mcp-bridge cannot resolve; it is passed on as written",
    ]);
    assert.deepEqual(server(servers, "figma").inlineSecrets, ["headers.X-Figma-Token"]);
    assert.deepEqual(server(servers, "github").inlineSecrets, []);
  });
});

describe("Codex", { timeout: 60_000 }, () => {
  it("reads [mcp_servers.<name>] tables: env, env_vars, cwd, timeouts, bearer tokens, headers, enabled", () => {
    const { servers, errors } = parseFixture("codex", "codex/config.toml");
    assert.deepEqual(entries(servers), {
      context7: { command: "npx", args: ["-y", "@upstash/context7-mcp"] },
      sentry: {
        command: "npx",
        args: ["-y", "@sentry/mcp-server@latest"],
        // `env_vars` forwards SENTRY_HOST, but the table sets it explicitly too, and that value wins.
        env: { SENTRY_ACCESS_TOKEN: "sntrys_example_only_not_a_real_token", SENTRY_HOST: "sentry.example.com" },
        cwd: "/home/ann/tools",
        timeout: 20_000,
        requestTimeout: 90_500,
        enabled: false,
      },
      docs: { command: "uvx", args: ["docs-mcp", "--port", "8123"], env: { DOCS_ROOT: "/srv/docs" }, timeout: 15_000 },
      figma: {
        url: "https://mcp.figma.com/mcp",
        headers: { "X-Figma-Region": "us-east-1", Authorization: "Bearer ${FIGMA_OAUTH_TOKEN}" },
      },
      linear: { url: "https://mcp.linear.app/mcp", headers: { "X-Linear-Key": "${LINEAR_API_KEY}" } },
      legacy: {
        url: "https://mcp.example.com/mcp",
        headers: { Authorization: "Bearer sk-EXAMPLEonlyNotARealKey000000" },
      },
    });
    assert.deepEqual(errors, [
      'Codex config /fixtures/codex/config.toml: server "unfinished": needs either `command` (a local server) or `url` (a remote server); not imported',
    ]);
    assert.deepEqual(server(servers, "sentry").notes, [
      "`enabled_tools` is not supported: all the server's tools are offered",
      'disabled in Codex; imported with "enabled": false',
    ]);
    assert.deepEqual(server(servers, "linear").notes, [
      "`disabled_tools` is not supported: all the server's tools are offered",
      "`required` is not supported by mcp-bridge and was left out",
    ]);
    assert.deepEqual(server(servers, "sentry").inlineSecrets, ["env.SENTRY_ACCESS_TOKEN"]);
    assert.deepEqual(server(servers, "legacy").inlineSecrets, ["headers.Authorization"]);
    assert.deepEqual(server(servers, "figma").inlineSecrets, []);
  });

  it("turns env_vars into ${VAR} pass-throughs", () => {
    const text = '[mcp_servers.gh]\ncommand = "gh-mcp"\nenv_vars = ["GITHUB_TOKEN", "HTTPS_PROXY"]\n';
    const { servers, errors } = parseClientConfig({ client: "codex", scope: "user", path: "/c.toml" }, text, LOC);
    assert.deepEqual(errors, []);
    assert.deepEqual(servers[0]!.entry, {
      command: "gh-mcp",
      env: { GITHUB_TOKEN: "${GITHUB_TOKEN}", HTTPS_PROXY: "${HTTPS_PROXY}" },
    });
    assert.deepEqual(servers[0]!.inlineSecrets, []);
  });

  it("a startup timeout taken from startup_timeout_ms, beside a startup_timeout_sec that is no duration, is noted as that", () => {
    const text = '[mcp_servers.a]\ncommand = "x"\nstartup_timeout_sec = "soon"\nstartup_timeout_ms = 500\n';
    const { servers } = parseClientConfig({ client: "codex", scope: "user", path: "/c.toml" }, text, LOC);
    assert.equal(servers[0]!.entry.timeout, 1000);
    assert.deepEqual(
      servers[0]!.notes.filter((n) => n.includes("raised")),
      ["`startup_timeout_ms` of 500 ms is raised to 1000 ms, the shortest `timeout` read as milliseconds"],
    );
  });

  it("reports invalid TOML with its position but without the offending line", () => {
    const text = '[mcp_servers.a]\nurl = "https://x.example.com/mcp"\nbearer_token = "sk-LeakedIfQuoted0000000000000\n';
    const result = parseClientConfig({ client: "codex", scope: "user", path: "/c.toml" }, text, LOC);
    assert.deepEqual(result.servers, []);
    assert.equal(result.errors.length, 1);
    assert.match(result.errors[0]!, /^Codex config \/c\.toml: not valid TOML: .+ at line 3, column \d+$/);
    assertNoSecretValues(result, ["sk-LeakedIfQuoted0000000000000"]);
  });

  it("reports a non-table mcp_servers, and ignores a file without servers", () => {
    const file: ClientConfigFile = { client: "codex", scope: "user", path: "/c.toml" };
    assert.deepEqual(parseClientConfig(file, "mcp_servers = 5\n", LOC).errors, [
      "Codex config /c.toml: `mcp_servers` must be a table of servers ([mcp_servers.<name>])",
    ]);
    assert.deepEqual(parseClientConfig(file, 'model = "o3"\n', LOC), { servers: [], errors: [] });
  });
});

describe("opencode", { timeout: 60_000 }, () => {
  it("splits command arrays, maps environment and {env:VAR}, keeps timeouts, oauth and disabled servers", () => {
    const { servers, errors } = parseFixture("opencode", "opencode/opencode.jsonc", "project");
    assert.deepEqual(errors, []);
    assert.deepEqual(entries(servers), {
      jira: {
        command: "bun",
        args: ["x", "mcp-jira", "--project", "SHOP"],
        env: { JIRA_API_TOKEN: "${JIRA_API_TOKEN}", JIRA_URL: "https://shop.atlassian.net" },
      },
      everything: {
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-everything"],
        timeout: 10_000,
        enabled: false,
      },
      "secrets-file": { command: "node", args: ["tools/srv.js"], env: { API_KEY: "{file:~/.secrets/api-key}" } },
      context7: { url: "https://mcp.context7.com/mcp", headers: { CONTEXT7_API_KEY: "${CONTEXT7_API_KEY}" } },
      sentry: {
        url: "https://mcp.sentry.dev/mcp",
        auth: { clientId: "${SENTRY_CLIENT_ID}", scopes: "org:read project:read" },
      },
      internal: {
        url: "https://mcp.internal.example.com",
        headers: { Authorization: "Bearer MY_API_KEY_example_only" },
        auth: false,
      },
    });
    // `gh_grep` only switches off a server defined elsewhere: nothing to import, and nothing to report.
    assert.ok(!servers.some((s) => s.name === "gh_grep"));
    assert.deepEqual(server(servers, "everything").notes, ['disabled in opencode; imported with "enabled": false']);
    assert.deepEqual(server(servers, "secrets-file").notes, [
      "`{file:~/.secrets/api-key}` in `env.API_KEY` (opencode reads a file there) is not supported and is passed on as written",
    ]);
    // A file reference is not an inline secret; a literal bearer token is.
    assert.deepEqual(server(servers, "secrets-file").inlineSecrets, []);
    assert.deepEqual(server(servers, "internal").inlineSecrets, ["headers.Authorization"]);
    assert.deepEqual(server(servers, "jira").inlineSecrets, []);
  });

  it("reads the nested mcp.servers map, disabled and split timeouts", () => {
    const { servers, errors } = parseFixture("opencode", "opencode/opencode.v2.jsonc", "project");
    assert.deepEqual(errors, []);
    assert.deepEqual(entries(servers), {
      everything: {
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-everything"],
        cwd: "tools",
        timeout: 20_000,
        requestTimeout: 120_000,
      },
      docs: { url: "https://mcp.example.com/mcp", enabled: false },
    });
  });

  it("still takes a v1 server that happens to be called `servers`", () => {
    const text = '{ "mcp": { "servers": { "type": "local", "command": ["srv"] } } }';
    const { servers } = parseClientConfig(
      { client: "opencode", scope: "project", path: "/p/opencode.json" },
      text,
      LOC,
    );
    assert.deepEqual(entries(servers), { servers: { command: "srv" } });
  });
});

describe("parseClientConfig on bad input", { timeout: 60_000 }, () => {
  const file: ClientConfigFile = { client: "cursor", scope: "user", path: "/home/ann/.cursor/mcp.json" };

  it("a default that is itself a variable (${A:-${B}}) is one mcp-bridge resolves: no note about it", () => {
    const text = JSON.stringify({ mcpServers: { s: { command: "x", args: ["${DIR:-${HOME}/data}"] } } });
    const { servers, errors } = parseClientConfig(file, text, LOC);
    assert.deepEqual([errors, servers.map((s) => s.notes)], [[], [[]]]);
  });
  it("never throws, and reports each problem", () => {
    assert.deepEqual(parseClientConfig(file, "", LOC), { servers: [], errors: [] });
    assert.deepEqual(parseClientConfig(file, "{}", LOC), { servers: [], errors: [] });
    assert.deepEqual(parseClientConfig(file, "[]", LOC).errors, [
      "Cursor config /home/ann/.cursor/mcp.json: the file does not hold a JSON object",
    ]);
    assert.deepEqual(parseClientConfig(file, "null", LOC).errors, [
      "Cursor config /home/ann/.cursor/mcp.json: the file does not hold a JSON object",
    ]);
    assert.deepEqual(parseClientConfig(file, '{"mcpServers": []}', LOC).errors, [
      "Cursor config /home/ann/.cursor/mcp.json: `mcpServers` must be an object mapping server names to their settings",
    ]);
    assert.deepEqual(parseClientConfig(file, '{"mcpServers": {"a": "npx a"}}', LOC).errors, [
      'Cursor config /home/ann/.cursor/mcp.json: server "a": the entry must be an object; not imported',
    ]);
    const bad = parseClientConfig(
      file,
      '{"mcpServers": {"a": {"command": "npx", "env": {"TOKEN": "ghp_AbcdefghijklmnopQRSTUVWX1234"},}',
      LOC,
    );
    assert.deepEqual(bad.servers, []);
    assert.match(
      bad.errors[0]!,
      /^Cursor config \/home\/ann\/\.cursor\/mcp\.json: not valid JSON: \w+ at line 1, column \d+$/,
    );
    assertNoSecretValues(bad, ["ghp_AbcdefghijklmnopQRSTUVWX1234"]);
  });

  it("keeps a secret in an invalid URL out of the error", () => {
    const result = parseClientConfig(
      file,
      '{"mcpServers": {"a": {"url": "ftp://files.example.com/mcp?token=tok-Secret123456"}}}',
      LOC,
    );
    assert.deepEqual(result.servers, []);
    assert.equal(result.errors.length, 1);
    assert.match(result.errors[0]!, /server "a": `url` must use http or https/);
    assertNoSecretValues(result, ["tok-Secret123456"]);
  });

  it("reports an entry whose type contradicts it", () => {
    const result = parseClientConfig(
      file,
      '{"mcpServers": {"a": {"type": "stdio", "url": "https://x.example.com/mcp"}}}',
      LOC,
    );
    assert.deepEqual(result.servers, []);
    assert.match(result.errors[0]!, /`type` "stdio" runs a local command/);
  });
});

describe("inline secrets", { timeout: 60_000 }, () => {
  const file: ClientConfigFile = { client: "claude-code", scope: "project", path: "/p/.mcp.json" };
  const secretsOf = (entry: Record<string, unknown>) => {
    const result = parseClientConfig(file, JSON.stringify({ mcpServers: { s: entry } }), LOC);
    assert.deepEqual(result.errors, []);
    assertImportable(result.servers);
    return result.servers[0]!;
  };

  it("flags literals by key or by shape, never ${VAR} references, and never shows the values", () => {
    const imported = secretsOf({
      command: "srv",
      env: {
        OPENAI_API_KEY: "sk-proj-abcdefghijklmnopqrstuv",
        DB_PASSWORD: "correct horse",
        SLACK: "xoxb-123456789012-abcdefghij",
        AWS: "AKIAIOSFODNN7EXAMPLE",
        JWT: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig",
        DATABASE_URL: "postgres://app:pw-example-1@db.internal:5432/app",
        GITHUB_TOKEN: "${GITHUB_TOKEN}",
        API_KEY: "${API_KEY:-}",
        REGION: "eu-west-1",
        TRACE_ID: "123e4567-e89b-12d3-a456-426614174000",
        TOKEN_FILE: "./secrets/token",
        AUTH_URL: "https://auth.example.com/oauth",
        MAX_TOKENS: "4096",
        SERVER_PATH: "/work/scratch/clean2/examples/hello-server.mjs",
        CONFIG: "./config/prod-eu2/settings-v3.yaml",
        HOME_BIN: "~/tools/mcp-server-2025.1.3/bin",
        SCRIPT: "packages/server2/dist/index-1a2b3c.js",
      },
      args: ["--token=abc-literal-value", "--verbose", "--password", "${PW}"],
    });
    assert.deepEqual(imported.inlineSecrets, [
      "env.OPENAI_API_KEY",
      "env.DB_PASSWORD",
      "env.SLACK",
      "env.AWS",
      "env.JWT",
      "env.DATABASE_URL",
      "args[0]",
    ]);
    assertNoSecretValues({ servers: [imported], errors: [] }, [
      "sk-proj-abcdefghijklmnopqrstuv",
      "correct horse",
      "pw-example-1",
      "abc-literal-value",
    ]);

    const remote = secretsOf({
      type: "http",
      url: "https://user:pw@mcp.example.com/mcp",
      headers: { Authorization: "Basic dXNlcjpwYXNzd29yZA==", "X-Request-Source": "pi" },
    });
    assert.deepEqual(remote.inlineSecrets, ["headers.Authorization", "url"]);
    const referenced = secretsOf({
      type: "http",
      url: "https://mcp.example.com/mcp?key=${KEY}",
      headers: { Authorization: "Bearer ${TOKEN}" },
    });
    assert.deepEqual(referenced.inlineSecrets, []);
  });

  it("flags a URL that holds its key in its path, as Zapier's does", () => {
    const zapier = "https://mcp.zapier.com/api/mcp/s/NjNkNTc4ZDMtMjA0Zi00MjEzLWJhMmEtODJhZjRkNjU4NDI2OjE2Yzk0Zm==/mcp";
    assert.deepEqual(secretsOf({ url: zapier }).inlineSecrets, ["url"]);
    assert.deepEqual(
      secretsOf({ url: "https://actions.zapier.com/mcp/sk-ak-q8Vz2LmX7pR4tN1wK9cJ5h/sse" }).inlineSecrets,
      ["url"],
    );
    const plain = "https://mcp.example.com/v1/servers/123e4567-e89b-12d3-a456-426614174000/mcp";
    assert.deepEqual(secretsOf({ url: plain }).inlineSecrets, []);
  });

  it("flags a variable set on docker's command line, `-e DB_PASSWORD=…`, as it flags one in `env`", () => {
    const docker = secretsOf({
      command: "docker",
      args: ["run", "-i", "--rm", "-e", "DB_PASSWORD=hunter2hunter2", "-e", "MODE=ro", "img"],
    });
    assert.deepEqual(docker.inlineSecrets, ["args[4]"]);
  });
});

describe("discoverImports", { timeout: 60_000 }, () => {
  const root = mkdtempSync(path.join(tmpdir(), "mcp-bridge-importers-"));
  after(() => rmSync(root, { recursive: true, force: true }));

  function put(file: string, text: string): void {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  }

  it("reads the clients present, reports invalid and unreadable files, and skips missing ones", async () => {
    const home = path.join(root, "home");
    const project = path.join(root, "work", "shop");
    const loc: ImportLocations = { home, projectRoot: project, platform: "linux", env: {} };
    put(
      path.join(home, ".config", "Claude", "claude_desktop_config.json"),
      fixture("claude-desktop/claude_desktop_config.json"),
    );
    put(path.join(project, ".mcp.json"), fixture("claude-code/mcp.json"));
    put(
      path.join(home, ".claude.json"),
      fixture("claude-code/claude.json").replace('"/home/ann/work/shop"', JSON.stringify(project)),
    );
    put(path.join(project, ".cursor", "mcp.json"), '{\n  "mcpServers": {\n    "broken": { "command": "npx", }\n');
    put(path.join(home, ".codex", "config.toml"), fixture("codex/config.toml"));
    put(path.join(project, "opencode.jsonc"), fixture("opencode/opencode.jsonc"));
    // VS Code's user mcp.json is a directory here: reported, not fatal.
    mkdirSync(path.join(home, ".config", "Code", "User", "mcp.json"), { recursive: true });
    // A client whose directory exists without its file is as absent as one never installed.
    mkdirSync(path.join(home, ".codeium", "windsurf"), { recursive: true });

    const result = await discoverImports(loc);
    assertImportable(result.servers);
    assertNoSecretValues(result);

    const count = (client: ClientId) => result.servers.filter((s) => s.client === client).length;
    assert.equal(count("claude-desktop"), 5);
    assert.equal(count("claude-code"), 8);
    assert.equal(count("cursor"), 0);
    assert.equal(count("vscode"), 0);
    assert.equal(count("windsurf"), 0);
    assert.equal(count("codex"), 6);
    assert.equal(count("opencode"), 6);
    assert.deepEqual(
      result.servers
        .filter((s) => s.client === "claude-code")
        .map((s) => `${s.name} ${path.relative(root, s.sourcePath)}`),
      [
        "sentry work/shop/.mcp.json",
        "api-server work/shop/.mcp.json",
        "events work/shop/.mcp.json",
        "db work/shop/.mcp.json",
        "internal work/shop/.mcp.json",
        "postgres home/.claude.json",
        "playwright home/.claude.json",
        "context7 home/.claude.json",
      ],
    );

    const relative = result.errors.map((e) => e.split(root).join("<tmp>"));
    assert.equal(relative.length, 5);
    assert.match(
      relative[0]!,
      /^Claude Desktop config <tmp>\/home\/\.config\/Claude\/claude_desktop_config\.json: server "half-written": /,
    );
    assert.match(relative[1]!, /^Claude Code config <tmp>\/work\/shop\/\.mcp\.json: server "socket": /);
    assert.match(
      relative[2]!,
      /^Cursor config <tmp>\/work\/shop\/\.cursor\/mcp\.json: not valid JSON: CloseBraceExpected at line 4, column 1$/,
    );
    assert.equal(
      relative[3],
      "VS Code config <tmp>/home/.config/Code/User/mcp.json: cannot read the file: it is a directory",
    );
    assert.match(relative[4]!, /^Codex config <tmp>\/home\/\.codex\/config\.toml: server "unfinished": /);
  });

  it("Claude Code's local server comes before its project server of the same name: local over project, as there", async () => {
    const home = path.join(root, "scopes-home");
    const project = path.join(root, "scopes", "shop");
    put(path.join(project, ".mcp.json"), JSON.stringify({ mcpServers: { db: { command: "shared-db" } } }));
    const local = { projects: { [project]: { mcpServers: { db: { command: "my-db" } } } } };
    put(path.join(home, ".claude.json"), JSON.stringify(local));
    const { servers } = await discoverImports({ home, projectRoot: project, platform: "linux", env: {} });
    assert.deepEqual(
      servers.map((s) => `${s.name} ${String(s.entry.command)}`),
      ["db my-db"],
    );
  });

  it("a .mcp.json server rejected in Claude Code (disabledMcpjsonServers in .claude/settings*.json) is imported disabled", async () => {
    const home = path.join(root, "rejected-home");
    const project = path.join(root, "rejected", "shop");
    const servers = { db: { command: "db-server" }, sentry: { url: "https://mcp.sentry.dev/mcp" } };
    put(path.join(project, ".mcp.json"), JSON.stringify({ mcpServers: servers }));
    put(path.join(project, ".claude", "settings.local.json"), JSON.stringify({ disabledMcpjsonServers: ["db"] }));
    const found = await discoverImports({ home, projectRoot: project, platform: "linux", env: {} });
    assert.deepEqual(
      found.servers.map((s) => `${s.name} ${String(s.entry.enabled)}`),
      ["db false", "sentry undefined"],
    );
    assert.ok(
      found.servers[0]!.notes.some((n) => /disabled in Claude Code/.test(n)),
      found.servers[0]!.notes.join("\n"),
    );
  });

  // Claude Code also keeps the answer in ~/.claude.json, under the project's own entry (the fixture's empty lists).
  it("a .mcp.json server rejected in Claude Code's ~/.claude.json (the project's disabledMcpjsonServers) is imported disabled", async () => {
    const home = path.join(root, "rejected-json-home");
    const project = path.join(root, "rejected-json", "shop");
    const servers = { db: { command: "db-server" }, sentry: { url: "https://mcp.sentry.dev/mcp" } };
    put(path.join(project, ".mcp.json"), JSON.stringify({ mcpServers: servers }));
    const other = { disabledMcpjsonServers: ["sentry"] };
    const projects = { [project]: { disabledMcpjsonServers: ["db"] }, [path.join(root, "elsewhere")]: other };
    put(path.join(home, ".claude.json"), JSON.stringify({ projects }));
    const found = await discoverImports({ home, projectRoot: project, platform: "linux", env: {} });
    assert.deepEqual(
      found.servers.map((s) => `${s.name} ${String(s.entry.enabled)}`),
      ["db false", "sentry undefined"],
    );
  });

  // Claude Code's /mcp menu switches a server off for one project in ~/.claude.json: `disabledMcpServers`.
  it("a server of this project switched off in Claude Code's /mcp (the project's disabledMcpServers) is imported disabled", async () => {
    const home = path.join(root, "switched-home");
    const project = path.join(root, "switched", "shop");
    put(path.join(project, ".mcp.json"), JSON.stringify({ mcpServers: { db: { command: "db-server" } } }));
    const local = { mcpServers: { notes: { command: "notes-server" } }, disabledMcpServers: ["db", "notes"] };
    put(path.join(home, ".claude.json"), JSON.stringify({ projects: { [project]: local } }));
    const found = await discoverImports({ home, projectRoot: project, platform: "linux", env: {} });
    assert.deepEqual(found.servers.map((s) => `${s.name} ${String(s.entry.enabled)}`).sort(), [
      "db false",
      "notes false",
    ]);
    assert.ok(
      found.servers.every((s) => s.notes.some((n) => /disabledMcpServers/.test(n))),
      found.servers.map((s) => s.notes.join("\n")).join("\n"),
    );
  });

  // "A disabledMcpjsonServers entry in any settings file still rejects the server": the user's own too.
  it("a .mcp.json server rejected in the user's Claude Code settings (~/.claude/settings.json) is imported disabled", async () => {
    const home = path.join(root, "rejected-user-home");
    const project = path.join(root, "rejected-user", "shop");
    const servers = { db: { command: "db-server" }, sentry: { url: "https://mcp.sentry.dev/mcp" } };
    put(path.join(project, ".mcp.json"), JSON.stringify({ mcpServers: servers }));
    put(path.join(home, ".claude", "settings.json"), JSON.stringify({ disabledMcpjsonServers: ["db"] }));
    const found = await discoverImports({ home, projectRoot: project, platform: "linux", env: {} });
    assert.deepEqual(
      found.servers.map((s) => `${s.name} ${String(s.entry.enabled)}`),
      ["db false", "sentry undefined"],
    );
    // Where CLAUDE_CONFIG_DIR moves Claude Code's folder, its settings are there.
    const moved = path.join(root, "rejected-user-config");
    put(path.join(moved, "settings.json"), JSON.stringify({ disabledMcpjsonServers: ["sentry"] }));
    const env = { CLAUDE_CONFIG_DIR: moved };
    const there = await discoverImports({ home: project, projectRoot: project, platform: "linux", env });
    assert.deepEqual(
      there.servers.map((s) => `${s.name} ${String(s.entry.enabled)}`),
      ["db undefined", "sentry false"],
    );
  });

  it("finds nothing, and says nothing, in an empty home", async () => {
    const empty = path.join(root, "empty");
    mkdirSync(empty);
    assert.deepEqual(await discoverImports({ home: empty, projectRoot: empty, platform: "linux", env: {} }), {
      servers: [],
      errors: [],
    });
  });

  it(
    "reports a file it may not read",
    { skip: process.platform === "win32" ? "POSIX file modes only" : false },
    async () => {
      // Its own directory, which another user may pass through (0711) but not list.
      const base = mkdtempSync(path.join(tmpdir(), "mcp-bridge-importers-locked-"));
      chmodSync(base, 0o711);
      const home = path.join(base, "home");
      const file = path.join(home, ".cursor", "mcp.json");
      put(file, '{"mcpServers": {"a": {"command": "a"}}}');
      chmodSync(file, 0o000);
      const loc: ImportLocations = { home, projectRoot: path.join(base, "nowhere"), platform: "linux", env: {} };
      try {
        // Root reads a file whatever its mode, so as root the discovery runs in a child process as an unprivileged user.
        const result = process.getuid?.() === 0 ? discoverAsUnprivileged(loc) : await discoverImports(loc);
        assert.deepEqual(result.servers, []);
        assert.deepEqual(result.errors, [`Cursor config ${file}: cannot read the file: permission denied`]);
      } finally {
        rmSync(base, { recursive: true, force: true });
      }
    },
  );
});

/** The user `nobody` has on Debian and most Linux systems. */
const UNPRIVILEGED_ID = 65534;

/** `discoverImports(loc)` in a child process running as `nobody` (for a test run as root). */
function discoverAsUnprivileged(loc: ImportLocations): Awaited<ReturnType<typeof discoverImports>> {
  const module = new URL("../src/config/import/discover.ts", import.meta.url).href;
  const script = [
    `const { discoverImports } = await import(${JSON.stringify(module)});`,
    "process.stdout.write(JSON.stringify(await discoverImports(JSON.parse(process.env.IMPORT_LOCATIONS))));",
  ].join("\n");
  const child = spawnSync(
    process.execPath,
    ["--import", import.meta.resolve("tsx"), "--input-type=module", "-e", script],
    {
      uid: UNPRIVILEGED_ID,
      gid: UNPRIVILEGED_ID,
      cwd: "/",
      // tsx keeps a cache in the temp dir unless told not to; nothing of this run should stay behind.
      env: { PATH: process.env.PATH, IMPORT_LOCATIONS: JSON.stringify(loc), TSX_DISABLE_CACHE: "1" },
      encoding: "utf8",
      timeout: 60_000,
    },
  );
  assert.equal(child.status, 0, `the child running as uid ${UNPRIVILEGED_ID} failed: ${child.error ?? child.stderr}`);
  return JSON.parse(child.stdout) as Awaited<ReturnType<typeof discoverImports>>;
}
