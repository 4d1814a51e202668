/**
 * How test/fixtures/public-tools/*.json were made: each public MCP server below is installed from the npm registry
 * into a temporary folder, started once over stdio, and asked for its tools with the SDK client; the `tools` array it
 * sent is saved as it came, under a small header (package, version, date, how). Tokens are dummies: these servers
 * only check that one is present before they list their tools.
 *
 * Needs the network (the npm registry); not run by the tests or the bench, which read the saved files.
 *
 *   node --import tsx bench/capture-public-tools.ts            # every server below
 *   node --import tsx bench/capture-public-tools.ts github     # only the named ones
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";

interface PublicServer {
  /** The server's name in the fixture config (and the file name). */
  name: string;
  package: string;
  /** The package's executable, when it has more than one. */
  bin?: string;
  /** Arguments after the executable; `{dir}` is a scratch folder. */
  args?: string[];
  env?: Record<string, string>;
}

export const PUBLIC_SERVERS: PublicServer[] = [
  { name: "filesystem", package: "@modelcontextprotocol/server-filesystem", args: ["{dir}"] },
  { name: "everything", package: "@modelcontextprotocol/server-everything", args: ["stdio"] },
  { name: "memory", package: "@modelcontextprotocol/server-memory", env: { MEMORY_FILE_PATH: "{dir}/memory.json" } },
  { name: "sequential-thinking", package: "@modelcontextprotocol/server-sequential-thinking" },
  { name: "playwright", package: "@playwright/mcp", args: ["--headless"] },
  { name: "chrome-devtools", package: "chrome-devtools-mcp", args: ["--headless"] },
  { name: "github", package: "@modelcontextprotocol/server-github", env: { GITHUB_PERSONAL_ACCESS_TOKEN: "dummy" } },
  {
    name: "slack",
    package: "@modelcontextprotocol/server-slack",
    env: { SLACK_BOT_TOKEN: "xoxb-dummy", SLACK_TEAM_ID: "T0000" },
  },
  { name: "puppeteer", package: "@modelcontextprotocol/server-puppeteer" },
  { name: "notion", package: "@notionhq/notion-mcp-server", env: { NOTION_TOKEN: "ntn_dummy" } },
  {
    name: "supabase",
    package: "@supabase/mcp-server-supabase",
    args: ["--access-token", "dummy", "--project-ref", "dummy"],
  },
  { name: "kubernetes", package: "mcp-server-kubernetes" },
  { name: "sentry", package: "@sentry/mcp-server", args: ["--access-token=dummy"] },
  { name: "mongodb", package: "mongodb-mcp-server", env: { MDB_MCP_TELEMETRY: "disabled" } },
  { name: "desktop-commander", package: "@wonderwhy-er/desktop-commander" },
  { name: "context7", package: "@upstash/context7-mcp" },
  { name: "brave-search", package: "@modelcontextprotocol/server-brave-search", env: { BRAVE_API_KEY: "dummy" } },
  { name: "heroku", package: "@heroku/mcp-server", env: { HEROKU_API_KEY: "dummy" } },
];

const here = path.dirname(fileURLToPath(import.meta.url));
const outDir = path.join(here, "..", "test", "fixtures", "public-tools");

function installed(dir: string, pkg: string): { version: string; bin: string } {
  const manifest = JSON.parse(readFileSync(path.join(dir, "node_modules", pkg, "package.json"), "utf8")) as {
    version: string;
    bin?: string | Record<string, string>;
  };
  const bins =
    typeof manifest.bin === "string" ? { [pkg.split("/").pop() ?? pkg]: manifest.bin } : (manifest.bin ?? {});
  const first = Object.keys(bins)[0];
  if (!first) throw new Error(`${pkg} has no executable`);
  return { version: manifest.version, bin: first };
}

async function listAllTools(client: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const result = await client.listTools(cursor ? { cursor } : {}, { timeout: 60_000 });
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

async function capture(server: PublicServer): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), `capture-${server.name}-`));
  const fill = (text: string) => text.replaceAll("{dir}", dir);
  try {
    // Browsers are not downloaded: listing tools does not start one.
    const installEnv = { ...process.env, PUPPETEER_SKIP_DOWNLOAD: "1", PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1" };
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefix", dir, server.package], {
      stdio: "inherit",
      env: installEnv,
    });
    const { version, bin } = installed(dir, server.package);
    const command = path.join(dir, "node_modules", ".bin", server.bin ?? bin);
    const args = (server.args ?? []).map(fill);
    const env: Record<string, string> = { ...getDefaultEnvironment(), HOME: dir };
    for (const [key, value] of Object.entries(server.env ?? {})) env[key] = fill(value);
    const transport = new StdioClientTransport({ command, args, env, cwd: dir, stderr: "ignore" });
    // The capabilities pi's bridge declares in an interactive session, so servers list the tools they would list there.
    const client = new Client(
      { name: "mcp-bridge-capture", version: "0" },
      { capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: { form: {} } } },
    );
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: `file://${dir}`, name: "scratch" }] }));
    await client.connect(transport, { timeout: 120_000 });
    try {
      const tools = await listAllTools(client);
      const fixture = {
        server: server.name,
        package: server.package,
        version,
        captured: new Date().toISOString().slice(0, 10),
        how:
          `npm install ${server.package}@${version}; ${[server.bin ?? bin, ...(server.args ?? [])].join(" ")} over stdio` +
          `${server.env ? ` with ${Object.keys(server.env).join(", ")} set (dummy values)` : ""}; SDK Client tools/list (bench/capture-public-tools.ts)`,
        tools,
      };
      writeFileSync(path.join(outDir, `${server.name}.json`), `${JSON.stringify(fixture, null, 2)}\n`);
      console.log(`${server.name}: ${server.package}@${version}, ${tools.length} tools`);
    } finally {
      await client.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const wanted = process.argv.slice(2);
for (const server of PUBLIC_SERVERS) {
  if (wanted.length > 0 && !wanted.includes(server.name)) continue;
  try {
    await capture(server);
  } catch (error) {
    console.error(`${server.name}: not captured: ${error instanceof Error ? error.message : String(error)}`);
  }
}
