/**
 * `/mcp add` from the MCP registry (src/pi/command-registry.ts, src/config/registry/): a real HTTP registry on
 * 127.0.0.1 answering as the official one's API does, real pi in-process with a scripted UI, real config files; and
 * the reading of server.json documents as the registry's own examples write them.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import type { AgentSession } from "@mariozechner/pi-coding-agent";
import { readRegistryServer, registryEntry, registryWays } from "../src/config/registry/server-json.ts";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import { startStreamableHttp, type RunningServer } from "./fixtures/http-servers.ts";
import { type RegistryFixture, startRegistry } from "./fixtures/registry-server.ts";
import { EXTENSION_DIR, freePort, restoreEnv, tempDir, TEST_SOURCE } from "./helpers.ts";
import { type InProcessPi, startInProcessPi } from "./pi-harness.ts";
import { startBridgeInPi } from "./bridge-in-pi.ts";
import { RecordingUI } from "./recording-ui.ts";

/** The official examples' shapes: an npm package with a required directory and variables, and a container image. */
const FILES = {
  name: "io.github.test/server-files",
  description: "Files on disk",
  version: "1.2.3",
  packages: [
    {
      registryType: "npm",
      identifier: "@test/server-files",
      version: "1.2.3",
      transport: { type: "stdio" },
      packageArguments: [
        { type: "positional", valueHint: "target_dir", description: "Directory to serve", isRequired: true },
      ],
      environmentVariables: [
        { name: "FILES_TOKEN", description: "API token", isRequired: true, isSecret: true },
        { name: "LOG_LEVEL", default: "info" },
        { name: "UNUSED_OPTION" },
      ],
    },
    {
      registryType: "oci",
      identifier: "docker.io/test/server-files",
      version: "1.2.3",
      transport: { type: "stdio" },
      packageArguments: [{ type: "positional", value: "/project" }],
      environmentVariables: [{ name: "FILES_TOKEN", isRequired: true, isSecret: true }],
    },
  ],
};

describe("server.json read into entries", () => {
  test("a package whose registryType is a name every JavaScript object has is no way to run it", () => {
    const packages = ["constructor", "toString", "__proto__"].map((registryType) => ({
      ...FILES.packages[0],
      registryType,
    }));
    const server = readRegistryServer({ server: { ...FILES, packages }, _meta: {} })!;
    assert.deepEqual(registryWays(server), []);
  });
  test("an npm package: npx with its version, a required argument asked for, variables from the environment", () => {
    const server = readRegistryServer({ server: FILES, _meta: {} })!;
    const [npm, oci] = registryWays(server);
    assert.equal(npm!.label, "run it here: npx @test/server-files@1.2.3");
    const { questions } = registryEntry(npm!);
    assert.deepEqual(questions, [
      { key: "packageArguments.0", prompt: "Directory to serve", default: undefined, choices: undefined },
    ]);
    const { entry } = registryEntry(npm!, { "packageArguments.0": "/data" });
    assert.deepEqual(entry, {
      command: "npx",
      args: ["-y", "@test/server-files@1.2.3", "/data"],
      env: { FILES_TOKEN: "${FILES_TOKEN}", LOG_LEVEL: "${LOG_LEVEL:-info}" },
    });
    // A container: stdin open, removed after, the variable passed in by name; quiet under the container checks.
    const container = registryEntry(oci!).entry;
    assert.deepEqual(container, {
      command: "docker",
      args: ["run", "-i", "--rm", "-e", "FILES_TOKEN", "docker.io/test/server-files:1.2.3", "/project"],
      env: { FILES_TOKEN: "${FILES_TOKEN}" },
    });
    for (const made of [entry, container])
      assert.deepEqual(validateServerEntry("files", made, TEST_SOURCE).warnings, []);
  });

  test("a required secret argument is a ${VAR} read when the server starts, not a question whose answer is saved", () => {
    const server = readRegistryServer({
      name: "io.example/keyed",
      packages: [
        {
          registryType: "npm",
          identifier: "keyed-mcp",
          transport: { type: "stdio" },
          packageArguments: [
            { type: "named", name: "--api-key", isRequired: true, isSecret: true },
            { type: "positional", valueHint: "access_token", isRequired: true, isSecret: true },
            { type: "named", name: "--optional-secret", isSecret: true },
          ],
        },
      ],
    })!;
    const { entry, questions } = registryEntry(registryWays(server)[0]!);
    assert.deepEqual(questions, []);
    assert.deepEqual(entry, {
      command: "npx",
      args: ["-y", "keyed-mcp", "--api-key", "${API_KEY}", "${ACCESS_TOKEN}"],
    });
  });

  test("a required variable with a default keeps its default; a secret's default is never written", () => {
    const server = readRegistryServer({
      name: "io.example/defaults",
      packages: [
        {
          registryType: "npm",
          identifier: "defaults-mcp",
          transport: { type: "stdio" },
          environmentVariables: [
            { name: "MODE", isRequired: true, default: "read-only" },
            { name: "API_KEY", isRequired: true, isSecret: true, default: "sk-example" },
          ],
        },
      ],
    })!;
    assert.deepEqual(registryEntry(registryWays(server)[0]!).entry.env, {
      MODE: "${MODE:-read-only}",
      API_KEY: "${API_KEY}",
    });
  });

  test("remotes: a header's {placeholder} read from the environment; packages no bridge can run are not offered", () => {
    const server = readRegistryServer({
      name: "io.example/hybrid",
      packages: [
        { registryType: "mcpb", identifier: "https://github.com/x/y.mcpb", transport: { type: "stdio" } },
        {
          registryType: "npm",
          identifier: "@x/http-only",
          transport: { type: "streamable-http", url: "http://localhost:3000/mcp" },
        },
        { registryType: "npm" },
      ],
      remotes: [
        {
          type: "streamable-http",
          url: "https://mcp.example.com/{tenant}/mcp",
          headers: [
            { name: "Authorization", value: "Bearer {api_token}", isSecret: true },
            { name: "X-Region", default: "eu" },
          ],
        },
        { type: "sse", url: "https://mcp.example.com/sse" },
        { type: "websocket", url: "wss://mcp.example.com" },
      ],
    })!;
    const ways = registryWays(server);
    assert.deepEqual(
      ways.map((way) => way.label),
      ["connect to it: https://mcp.example.com/{tenant}/mcp", "connect to it: https://mcp.example.com/sse"],
    );
    assert.deepEqual(registryEntry(ways[0]!).entry, {
      url: "https://mcp.example.com/${TENANT}/mcp",
      headers: { Authorization: "Bearer ${API_TOKEN}", "X-Region": "${X_REGION:-eu}" },
    });
    assert.deepEqual(registryEntry(ways[1]!).entry, { url: "https://mcp.example.com/sse", type: "sse" });
    assert.equal(readRegistryServer({ server: { description: "no name" } }), undefined);
    assert.equal(readRegistryServer("nonsense"), undefined);
  });

  test("a {placeholder}'s variable keeps its default or fixed value, in a URL and in an argument; a secret's default is never written", () => {
    const server = readRegistryServer({
      name: "io.example/regional",
      remotes: [
        {
          type: "streamable-http",
          url: "https://api.example.com/{region}/mcp",
          variables: { region: { isRequired: true, choices: ["us-east-1", "eu-west-1"], default: "us-east-1" } },
        },
      ],
      packages: [
        {
          registryType: "oci",
          identifier: "example/regional",
          transport: { type: "stdio" },
          runtimeArguments: [
            {
              type: "named",
              name: "--mount",
              value: "src={source_path},dst={target_path},{mode}{constructor}",
              variables: {
                source_path: { isRequired: true },
                target_path: { default: "/project" },
                mode: { value: "ro", isSecret: true, default: "rw" },
                constructor: { isSecret: true, default: "s3cret" },
              },
            },
          ],
        },
      ],
    })!;
    const [oci, remote] = registryWays(server);
    assert.deepEqual(registryEntry(remote!).entry, { url: "https://api.example.com/${REGION:-us-east-1}/mcp" });
    assert.deepEqual(registryEntry(oci!).entry.args, [
      "run",
      "-i",
      "--rm",
      "--mount",
      "src=${SOURCE_PATH},dst=${TARGET_PATH:-/project},ro${CONSTRUCTOR}",
      "example/regional",
    ]);
  });
});

describe("/mcp add from the MCP registry (pi's command API, scripted UI)", { timeout: 120_000 }, () => {
  const [project, agentDir] = [tempDir(), tempDir()];
  const userConfig = path.join(agentDir.dir, "mcp.json");
  const saved = { ...process.env };
  const ui = new RecordingUI();
  let remote: RunningServer;
  let registry: RegistryFixture;
  let pi: InProcessPi;
  let session: AgentSession;

  before(async () => {
    remote = await startStreamableHttp();
    registry = await startRegistry([
      FILES,
      {
        name: "io.github.test/everything",
        description: "Every feature of MCP",
        version: "2.0.0",
        remotes: [
          {
            type: "streamable-http",
            url: remote.url,
            headers: [{ name: "X-API-Key", isRequired: true, isSecret: true }],
          },
        ],
      },
      { name: "io.github.test/everything-old", description: "Removed", version: "1.0.0", status: "deleted" },
      // A common word: in every io.github namespace. The server named for it comes on the registry's second page.
      ...Array.from({ length: 120 }, (_, i) => ({
        name: `io.github.user${i}/tool`,
        description: "A tool",
        version: "1.0.0",
      })),
      {
        name: "io.github.github/github",
        description: "GitHub's own",
        version: "1.0.0",
        remotes: [{ type: "streamable-http", url: remote.url }],
      },
      {
        name: "io.github.test/ported",
        description: "Listens on a port",
        version: "1.0.0",
        packages: [
          {
            registryType: "npm",
            identifier: "@test/ported",
            transport: { type: "stdio" },
            packageArguments: [
              { type: "positional", description: "Port\x1b]0;pwned\x07", isRequired: true, default: "80\x1b[2J80" },
            ],
          },
        ],
      },
      {
        name: "io.github.test/odd\x1b]0;pwned\x07",
        description: "Odd",
        version: "1.0.0",
        packages: [
          { registryType: "mcpb\x1b[2J", identifier: "https://example.com/x.mcpb", transport: { type: "stdio" } },
        ],
      },
      {
        name: "io.github.test/paced",
        description: "Has a pace",
        version: "1.0.0",
        packages: [
          {
            registryType: "npm",
            identifier: "@test/paced",
            transport: { type: "stdio" },
            packageArguments: [
              { type: "positional", description: "Pace", isRequired: true, choices: ["fa\x1b[2Jst", "slow"] },
            ],
          },
        ],
      },
      { name: "com.acme/mcp", description: "Acme's", version: "1.0.0", remotes: [{ type: "sse", url: remote.url }] },
      {
        name: "io.github.test/bundle-only",
        description: "Only a bundle",
        version: "1.0.0",
        packages: [{ registryType: "mcpb", identifier: "https://example.com/x.mcpb", transport: { type: "stdio" } }],
      },
    ]);
    Object.assign(process.env, {
      HOME: project.dir,
      PI_CODING_AGENT_DIR: agentDir.dir,
      MCP_REGISTRY_URL: registry.url,
      PI_MCP_STARTUP_BUDGET_MS: "60000",
    });
    pi = await startInProcessPi({ cwd: project.dir, agentDir: agentDir.dir, extensionPaths: [EXTENSION_DIR] });
    ({ session } = pi);
    await session.bindExtensions({ uiContext: ui.context() });
  });

  after(async () => {
    await pi?.close();
    restoreEnv(saved);
    await Promise.all([remote?.close(), registry?.close()]);
    for (const dir of [project, agentDir]) dir.cleanup();
  });

  async function run(command: string, answers: unknown[]): Promise<string> {
    ui.answers = [...answers];
    const before = ui.notices.length;
    await session.prompt(command);
    assert.deepEqual(ui.answers, [], `every scripted answer was used by ${command}`);
    return ui.notices.slice(before).join("\n");
  }
  const savedServers = () =>
    (JSON.parse(readFileSync(userConfig, "utf8")) as { mcpServers: Record<string, unknown> }).mcpServers;

  test("a remote server: searched by name, the deleted version left out, its URL confirmed, the key's variable named", async () => {
    const text = await run("/mcp add", [
      "Find it in the MCP registry",
      "everything",
      "io.github.test/everything 2.0.0",
      "",
      true,
      "All projects",
    ]);
    assert.equal(registry.searches.at(-1)!.get("search"), "everything");
    assert.equal(registry.searches.at(-1)!.get("version"), "latest");
    const offered = ui.offered.at(-2)!;
    assert.deepEqual(
      offered,
      ["io.github.test/everything 2.0.0 — Every feature of MCP"],
      "the deleted one is not offered",
    );
    assert.match(ui.asked.join("\n"), /input: A name for it \(Enter for 'everything'\)/);
    assert.ok(
      ui.asked.some(
        (a) =>
          a ===
          `confirm: Add 'everything'?\nconnects to ${remote.url}\nwith X-API-Key (from your environment where written \${…})`,
      ),
    );
    assert.deepEqual(savedServers().everything, { url: remote.url, headers: { "X-API-Key": "${X_API_KEY}" } });
    assert.match(text, /'everything' needs X_API_KEY, which is not set/);
  });

  test("an npm package: the way picked, its required directory asked, the command confirmed before it is saved", async () => {
    await run("/mcp add", [
      "Find it in the MCP registry",
      "files",
      "io.github.test/server-files",
      "run it here: npx",
      "/srv/data",
      "files",
      true,
      "All projects",
    ]);
    assert.ok(ui.asked.includes("input: Directory to serve"));
    assert.match(
      ui.asked.at(-2)!,
      /^confirm: Add 'files'\?\nruns: npx -y @test\/server-files@1\.2\.3 \/srv\/data\nwith FILES_TOKEN, LOG_LEVEL/,
    );
    assert.deepEqual(savedServers().files, {
      command: "npx",
      args: ["-y", "@test/server-files@1.2.3", "/srv/data"],
      env: { FILES_TOKEN: "${FILES_TOKEN}", LOG_LEVEL: "${LOG_LEVEL:-info}" },
    });
  });

  test("a word in every namespace: several pages read, the server named for it offered first, thirty at most", async () => {
    await run("/mcp add", ["Find it in the MCP registry", "github", undefined]);
    assert.deepEqual(
      registry.searches.slice(-2).map((params) => [params.get("search"), params.get("cursor")]),
      [
        ["github", null],
        ["github", "100"],
      ],
    );
    const offered = ui.offered.at(-1)!;
    assert.equal(offered[0], "io.github.github/github 1.0.0 — GitHub's own");
    assert.equal(offered.length, 30);
  });

  test("declined at the confirmation, a server no way can run, nothing found, a registry that does not answer: nothing saved", async () => {
    const before = readFileSync(userConfig, "utf8");
    assert.match(
      await run("/mcp add", ["Find it in the MCP registry", "everything", "io.github.test/everything", "again", false]),
      /No server added/,
    );
    // Escape at a question that has a default ends the add too; the default is for Enter.
    assert.equal(
      await run("/mcp add", ["Find it in the MCP registry", "ported", "io.github.test/ported", undefined]),
      "No server added.",
    );
    assert.equal(ui.asked.at(-1), "input: Port", "the registry's text is shown without its terminal escapes");
    assert.equal(ui.placeholders.at(-1), "8080", "and so is its default");
    assert.match(
      await run("/mcp add", ["Find it in the MCP registry", "bundle", "io.github.test/bundle-only"]),
      /'io\.github\.test\/bundle-only' offers no way mcp-bridge can run or reach it \(mcpb \(stdio\)\)/,
    );
    assert.match(
      await run("/mcp add", ["Find it in the MCP registry", "odd", "io.github.test/odd"]),
      /^'io\.github\.test\/odd' offers no way mcp-bridge can run or reach it \(mcpb \(stdio\)\)/,
      "the registry's name and package type are shown without their terminal escapes",
    );
    // A server named only "mcp" in its namespace is named for the namespace.
    assert.equal(
      await run("/mcp add", ["Find it in the MCP registry", "acme", "com.acme/mcp", undefined]),
      "No server added.",
    );
    assert.equal(ui.asked.at(-1), "input: A name for it (Enter for 'acme')");
    await run("/mcp add", ["Find it in the MCP registry", "paced", "io.github.test/paced", "fast", undefined]);
    assert.deepEqual(ui.offered.at(-1), ["fast", "slow"], "the registry's choices without their terminal escapes");
    assert.match(
      await run("/mcp add", ["Find it in the MCP registry", "nothing-like-it"]),
      /No server in the MCP registry at http:\/\/127\.0\.0\.1:\d+ matches 'nothing-like-it'/,
    );
    process.env.MCP_REGISTRY_URL = `http://127.0.0.1:${await freePort()}/`;
    try {
      assert.match(
        await run("/mcp add", ["Find it in the MCP registry", "everything"]),
        /The MCP registry at http:\/\/127\.0\.0\.1:\d+ could not be searched: fetch failed/,
      );
    } finally {
      process.env.MCP_REGISTRY_URL = registry.url;
    }
    assert.equal(readFileSync(userConfig, "utf8"), before);
  });

  test("a registry that answers with no JSON: said so without the terminal escapes its answer held", async () => {
    const garbled = createServer((_req, res) => res.end("\x1b]0;pwned\x07<html>"));
    await new Promise<void>((resolve) => garbled.listen(0, "127.0.0.1", resolve));
    process.env.MCP_REGISTRY_URL = `http://127.0.0.1:${(garbled.address() as AddressInfo).port}`;
    try {
      const text = await run("/mcp add", ["Find it in the MCP registry", "everything"]);
      assert.match(text, /could not be searched: Unexpected token/);
      assert.doesNotMatch(text, /\x1b|\x07/);
    } finally {
      process.env.MCP_REGISTRY_URL = registry.url;
      await new Promise((resolve) => garbled.close(resolve));
    }
  });
});

describe("/mcp add from the registry when pi reloads while the registry answers", { timeout: 60_000 }, () => {
  test("the command ends quietly with the session it ran in, without a stale-context error in the next", async () => {
    // A registry that answers only when the test says so, with nothing found.
    let answer = () => {};
    let asked = () => {};
    const searched = new Promise<void>((resolve) => (asked = resolve));
    const registry = createServer((_req, res) => {
      answer = () => res.writeHead(200, { "content-type": "application/json" }).end('{"servers":[],"metadata":{}}');
      asked();
    });
    await new Promise<void>((resolve) => registry.listen(0, "127.0.0.1", resolve));
    process.env.MCP_REGISTRY_URL = `http://127.0.0.1:${(registry.address() as AddressInfo).port}`;
    const ui = new RecordingUI();
    ui.answers = ["Find it in the MCP registry", "nothing-matches"];
    const run = await startBridgeInPi({ mcpConfig: { mcpServers: {} }, uiContext: ui.context() });
    try {
      const adding = run.pi.session.prompt("/mcp add");
      await searched;
      await run.pi.session.reload();
      answer();
      await adding;
    } finally {
      await run.close();
      delete process.env.MCP_REGISTRY_URL;
      registry.closeAllConnections();
      registry.close();
    }
  });
});
