/**
 * A local server that exits because its `env` lacks a variable it needs (src/connection/local/missing-variable.ts):
 * the names are read from its output (stderr, or stdout lines that are not JSON-RPC), the error says how to pass them
 * (a server gets only what its `env` names, not pi's environment), and it is not restarted, since no restart changes
 * its environment.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  deprecationIn,
  missingVariables,
  requestIn,
  variablesAskedFor,
  withoutSourceExcerpts,
} from "../src/connection/local/missing-variable.ts";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { bundledFixture } from "./fixture-bundle.ts";
import { connectFailure, connectionFor, fixtureEntry, REPO_ROOT, tempDir, TEST_SOURCE } from "./helpers.ts";
import { runTool, toolsOf } from "./pi-tools.ts";

const KEYLESS_SERVER = bundledFixture(path.join(REPO_ROOT, "test", "fixtures", "keyless-server.mjs"));

/** A real server behind a check servers from READMEs make: without the variable it says so and exits. */
function keyed(env: Record<string, string> = {}) {
  const { command, args } = fixtureEntry();
  const check =
    'if [ -z "$MCP_TEST_API_KEY" ]; then echo "Error: MCP_TEST_API_KEY environment variable is required" >&2; exit 1; fi';
  return { command: "sh", args: ["-c", `${check}; exec "$0" "$@"`, command, ...args], env };
}

describe("a server whose env lacks a variable it needs", () => {
  test("the names a line asks for, not those set, mentioned in passing, in a warning, or Node's error codes", () => {
    const asked = (line: string, configured: Record<string, string> = {}) => variablesAskedFor([line], configured);
    assert.deepEqual(asked("Error: BRAVE_API_KEY environment variable is required"), ["BRAVE_API_KEY"]);
    assert.deepEqual(asked("Please set SLACK_BOT_TOKEN and SLACK_TEAM_ID environment variables"), [
      "SLACK_BOT_TOKEN",
      "SLACK_TEAM_ID",
    ]);
    assert.deepEqual(asked("GITHUB_PERSONAL_ACCESS_TOKEN not set"), ["GITHUB_PERSONAL_ACCESS_TOKEN"]);
    assert.deepEqual(asked("Missing required environment variable: NOTION_TOKEN"), ["NOTION_TOKEN"]);
    assert.deepEqual(asked("Please set SLACK_BOT_TOKEN and SLACK_TEAM_ID", { SLACK_BOT_TOKEN: "x" }), [
      "SLACK_TEAM_ID",
    ]);
    // A value left empty as a README wrote it is not given; @tacticlaunch/mcp-linear says "not found", with a choice.
    assert.deepEqual(asked("Error: BRAVE_API_KEY environment variable is required", { BRAVE_API_KEY: " " }), [
      "BRAVE_API_KEY",
    ]);
    const linear =
      "Error starting MCP Linear Error: Linear credentials not found. Provide an API token via --token, LINEAR_API_TOKEN, or LINEAR_API_KEY, or sign in with `mcp-linear auth login`.";
    assert.deepEqual(asked(linear, { LINEAR_API_TOKEN: "" }), ["LINEAR_API_TOKEN"]);
    assert.deepEqual(asked(linear, { LINEAR_API_KEY: "lin_api_1" }), []);
    // @21st-dev/magic: the first of the names it takes.
    assert.deepEqual(
      asked(
        'No API key found. Old Magic keys were reset - get a fresh key at https://21st.dev/mcp and pass it as API_KEY="..." (or env TWENTY_FIRST_API_KEY / API_KEY_21ST).',
      ),
      ["API_KEY"],
    );
    // Stripe's and Supabase's servers: the variable is one way among two to give the key.
    assert.deepEqual(
      asked(
        "Error: Stripe API key not provided. Please either pass it as an argument --api-key=$KEY or set the STRIPE_SECRET_KEY environment variable.",
      ),
      ["STRIPE_SECRET_KEY"],
    );
    assert.deepEqual(
      asked(
        "Please provide a personal access token (PAT) with the --access-token flag or set the SUPABASE_ACCESS_TOKEN environment variable",
      ),
      ["SUPABASE_ACCESS_TOKEN"],
    );
    // @sanity/mcp-server (zod's formatted error, a line each), and t3-env's one line.
    const sanity = [
      "Invalid environment variables {",
      "_errors: [],",
      "MCP_USER_ROLE: {",
      "_errors: [",
      '"Invalid discriminator value"',
      "]",
      "}",
      "}",
    ];
    assert.deepEqual(variablesAskedFor(sanity, {}), ["MCP_USER_ROLE"]);
    assert.deepEqual(variablesAskedFor(sanity, { MCP_USER_ROLE: "guest" }), [], "given, and wrong: not missing");
    assert.deepEqual(asked("❌ Invalid environment variables: { DATABASE_URL: [ 'Required' ] }"), ["DATABASE_URL"]);
    assert.deepEqual(variablesAskedFor(["Invalid environment variables", "", "Using LOG_LEVEL=info"], {}), []);
    // obsidian-mcp-server: Node's code frame of the throw, then the error with the details as JSON.
    const obsidian = [
      "throw new Error(`Invalid environment configuration. Please check your .env file or environment variables. Details: ${JSON.stringify(errorDetails)}`);",
      "^",
      'Error: Invalid environment configuration. Please check your .env file or environment variables. Details: {"OBSIDIAN_API_KEY":["Required"]}',
      "    at file:///x/config/index.js:100:11",
    ];
    assert.deepEqual(variablesAskedFor(obsidian, {}), ["OBSIDIAN_API_KEY"]);
    // @sentry/mcp-server: the variable as the other way to give what a flag gives.
    assert.deepEqual(
      asked("Run `sentry-mcp auth login` interactively first, or pass `--access-token` / `SENTRY_ACCESS_TOKEN`."),
      ["SENTRY_ACCESS_TOKEN"],
    );
    // Brave's: four ways to give the key, one will do; airtable-mcp-server's names it between words.
    const brave =
      "Error: A Brave API key is required via --brave-api-key, BRAVE_API_KEY, --brave-api-key-file, or BRAVE_API_KEY_FILE.";
    assert.deepEqual(asked(brave), ["BRAVE_API_KEY"]);
    assert.deepEqual(asked(brave, { BRAVE_API_KEY_FILE: "/k" }), [], "one of them given");
    assert.deepEqual(
      asked("Error: airtable-mcp-server: No API key provided. Set it in the `AIRTABLE_API_KEY` environment variable"),
      ["AIRTABLE_API_KEY"],
    );
    assert.deepEqual(asked("Using LOG_LEVEL=info"), []);
    assert.deepEqual(asked("Warning: OPENAI_API_KEY is not set; summaries are off"), []);
    // @cocal/google-calendar-mcp lists a setting it offers beside the one it lacks (not named as a variable there).
    assert.deepEqual(
      asked("- To use a custom token location, set GOOGLE_CALENDAR_MCP_TOKEN_PATH environment variable"),
      [],
    );
    assert.deepEqual(asked('TypeError [ERR_INVALID_ARG_TYPE]: The "path" argument is required'), []);
    assert.deepEqual(asked("getaddrinfo EAI_AGAIN api.example.com: a connection is required"), []);
    // exa-mcp-server's and ElevenLabs' keys start with E and a word, as Node's codes do not.
    assert.deepEqual(
      asked(
        "web_search_exa error (401): API key must be provided as an argument or as an environment variable (EXA_API_KEY)",
      ),
      ["EXA_API_KEY"],
    );
    assert.deepEqual(asked("ELEVENLABS_API_KEY environment variable is required"), ["ELEVENLABS_API_KEY"]);
  });

  test("a line that asks for an argument, a sign-in or shows the usage; not a warning, nor a plea to try again", () => {
    assert.equal(
      requestIn(["Please provide a database URL as a command-line argument"]),
      "Please provide a database URL as a command-line argument",
    );
    assert.equal(
      requestIn(["Credentials not found. Please run with 'auth' argument first."]),
      "Credentials not found. Please run with 'auth' argument first.",
    );
    assert.equal(requestIn(["Usage: mcp-server-x <dir>", "  --flag"]), "Usage: mcp-server-x <dir>");
    // @composio/mcp without its `start`: yargs' usage, then the line that says what is missing.
    assert.equal(
      requestIn(["mcp <command>", "Commands:", "You need to specify a command"]),
      "You need to specify a command",
    );
    assert.equal(
      requestIn(["Not enough non-option arguments: got 0, need at least 1"]),
      "Not enough non-option arguments: got 0, need at least 1",
    );
    // @auth0/auth0-mcp-server before its `init` sign-in; not a file a server goes on without.
    const auth0 = "[ERROR:auth0-mcp] Authorization Error: No valid authorization token found";
    assert.equal(requestIn([auth0]), auth0);
    assert.equal(requestIn(["No config file found, using defaults"]), undefined);
    // @xeroapi/xero-mcp-server without its credentials, naming none of them.
    const xero = "Error: Environment Variables not set - please check your .env file";
    const thrown = [
      "file:///x/node_modules/@xeroapi/xero-mcp-server/dist/clients/xero-client.js:11",
      '    throw Error("Environment Variables not set - please check your .env file");',
      "    ^",
      "",
      xero,
    ];
    assert.equal(requestIn(withoutSourceExcerpts(thrown)), xero, "the error's own line, not the source above it");
    // mcp-server-trello is minified: the source line Node prints is the whole program, which reads TRELLO_BOARD_ID too.
    const minified = [
      "file:///x/build/index.js:1",
      'import{Server}from"@x";class T{constructor(){const r=process.env.TRELLO_BOARD_ID;if(!e)throw new Error("TRELLO_API_KEY and TRELLO_TOKEN environment variables are required")}}',
      " ".repeat(1020),
      "",
      "Error: TRELLO_API_KEY and TRELLO_TOKEN environment variables are required",
    ];
    assert.deepEqual(variablesAskedFor(withoutSourceExcerpts(minified), {}), ["TRELLO_API_KEY", "TRELLO_TOKEN"]);
    // The line that asked, where the stderr shown leaves it out, is quoted within bounds however long it is.
    const asking = `const k=process.env.LONG_KEY;${"x".repeat(5000)}; LONG_KEY is required`;
    const asks = { names: ["LONG_KEY"], inPi: [], unset: [], asking };
    const { reason } = missingVariables(
      { name: "s", source: { path: "/p/mcp.json" } },
      "exited with code 1",
      asks,
      false,
    );
    assert.ok(reason.length < 600, `${reason.length} characters`);
    assert.match(reason, /saying "const k=process\.env\.LONG_KEY;x+…/);
    // kubernetes-mcp-server without a kubeconfig context: the error above its usage text says what is wrong.
    const kube =
      "Error: unable to create kubernetes target provider: no current-context is set and no contexts are defined";
    assert.equal(
      requestIn([kube, "Configure a context with 'kubectl config set-context <name>'", "Usage:", "  x"]),
      kube,
    );
    // @gongrzhe/server-gmail-autoauth-mcp and @neondatabase/mcp-server-neon, started without what they need.
    const keys =
      "Error: OAuth keys file not found. Please place gcp-oauth.keys.json in current directory or ~/.gmail-mcp";
    assert.equal(requestIn([keys]), keys);
    assert.equal(requestIn(["Invalid number of arguments"]), "Invalid number of arguments");
    assert.equal(
      requestIn(["Error: No access token was provided.", "Usage: x [--access-token=<token>]"]),
      "Error: No access token was provided.",
    );
    assert.equal(requestIn(["No changes were provided to the cache; skipping"]), undefined);
    assert.equal(requestIn(["error: missing required argument 'path'"]), "error: missing required argument 'path'");
    // @cloudflare/mcp-server-cloudflare `run` without the account: what it lacks, and its usage on the same line.
    const account =
      "[DEBUG 2026-12-05T03:17:24.494Z] Uncaught exception: Error: Missing account ID. Usage: npx @cloudflare/mcp-server-cloudflare run [account_id]";
    assert.equal(requestIn(["Starting server", account]), account);
    assert.equal(requestIn(["fatal: missing project id"]), "fatal: missing project id");
    assert.equal(requestIn(["Loaded 3 tools, 0 missing descriptions"]), undefined);
    assert.equal(requestIn(["Warning: please set a region for faster answers"]), undefined);
    // @ivotoby/openapi-mcp-server without its spec.
    const spec =
      "Failed to start server: Error: OpenAPI spec is required. Use one of: --openapi-spec, --spec-from-stdin, or --spec-inline";
    assert.equal(requestIn([spec, "    at loadConfig (file:///x/cli.js:1:1)"]), spec);
    assert.equal(requestIn(["Rate limited. Please try again later."]), undefined);
  });

  test("a server that exits asking for an argument is started once, and the error quotes what it asked", async () => {
    const tmp = tempDir();
    const starts = path.join(tmp.dir, "starts");
    try {
      const { message, state } = await connectFailure(
        connectionFor("pg", {
          command: "sh",
          args: [
            "-c",
            `echo >> '${starts}'; echo 'Please provide a database URL as a command-line argument' >&2; exit 1`,
          ],
        }),
      );
      assert.match(
        message,
        /^MCP server 'pg': it said "Please provide a database URL as a command-line argument" \(the process exited with code 1 after [\d.]+ s\); give what it asks for in `args` or `env` of 'pg'/,
      );
      assert.equal(state, "gaveUp", "not restarted: a restart gets the same arguments");
      // Not started again to be asked with `initialize` alone either: it did not die of the revision probe.
      assert.equal(readFileSync(starts, "utf8"), "\n", "one start");
    } finally {
      tmp.cleanup();
    }
  });

  test("a long line that asks (a JSON log line with its stack): quoted within bounds, as the stderr below it is", async () => {
    const line = `{"level":50,"msg":"Please provide a database URL","stack":"${"at x (/srv/app/index.js:1:1) ".repeat(120)}"}`;
    const entry = { command: "sh", args: ["-c", `echo '${line}' >&2; exit 1`] };
    const { message } = await connectFailure(connectionFor("pg", entry));
    assert.match(message, /^MCP server 'pg': it said "\{\\"level\\":50,\\"msg\\":\\"Please provide a database URL/);
    assert.ok(message.length < 1500, `${message.length} characters`);
  });

  test("a server that prints its error on stdout, where messages go: read there too, and quoted", async () => {
    const { message, state } = await connectFailure(
      connectionFor("stdout", {
        command: "sh",
        args: ["-c", "echo 'Error: MCP_TEST_API_KEY environment variable is required'; exit 1"],
      }),
    );
    assert.match(message, /^MCP server 'stdout': it needs MCP_TEST_API_KEY, which its `env` does not set/);
    assert.match(
      message,
      /\nWhat it wrote to stdout that is not MCP:\n {2}Error: MCP_TEST_API_KEY environment variable is required/,
    );
    assert.equal(state, "gaveUp");
  });

  // @twilio-alpha/mcp without credentials logs in JSON-RPC's shape, a request of a method MCP does not have, and exits.
  test("a server that logs its error as a JSON-RPC message of its own method: quoted, not 'printed nothing'", async () => {
    const log = `{"jsonrpc":"2.0","method":"log","params":{"level":50,"message":"Error: Invalid AccountSid"},"id":"a1"}`;
    const other = `{"jsonrpc":"2.0","method":"$/trace","params":{"step":3}}`;
    const { message } = await connectFailure(
      connectionFor("twilio", { command: "sh", args: ["-c", `echo '${log}'; echo '${other}'; exit 1`] }),
    );
    assert.doesNotMatch(message, /printed nothing/);
    assert.match(
      message,
      /\nWhat it wrote to stdout that is not MCP:\n {2}log: Error: Invalid AccountSid\n {2}\$\/trace: \{"step":3\}$/,
    );
  });

  // @21st-dev/magic without its key says so on stderr and answers `initialize` with "Not authenticated".
  test("a server that answers the handshake with an error while asking for a variable: the entry to add, no restart", async () => {
    const tmp = tempDir();
    const starts = path.join(tmp.dir, "starts");
    const server = [
      `require("node:fs").appendFileSync(${JSON.stringify(starts)}, "\\n");`,
      `process.stderr.write('No API key found. Get a key and pass it as KEYED_API_KEY="..." (or env KEYED_TOKEN).\\n');`,
      'require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {',
      "  const { id } = JSON.parse(line);",
      '  const error = { code: -32603, message: "Not authenticated - your API key is missing" };',
      '  if (id !== undefined) process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, error }) + "\\n");',
      "});",
    ].join("\n");
    try {
      const { message, state } = await connectFailure(
        connectionFor("keyed", { command: process.execPath, args: ["-e", server] }),
      );
      assert.match(
        message,
        /^MCP server 'keyed': it needs KEYED_API_KEY, which its `env` does not set \(the process answered the MCP handshake with "[^"]*Not authenticated - your API key is missing", saying so\); add "KEYED_API_KEY": "\$\{KEYED_API_KEY\}" to `env` of 'keyed'/,
      );
      assert.match(message, /\nLast stderr lines:\n {2}No API key found/);
      assert.equal(state, "gaveUp", "not restarted: a restart gets the same environment");
      assert.equal(readFileSync(starts, "utf8"), "\n", "one start");
    } finally {
      tmp.cleanup();
    }
  });

  test("the handshake error it quotes is redacted before it is quoted: a key in it stays hidden", async () => {
    const server = [
      `process.stderr.write('No API key found: pass it as KEYED_API_KEY.\\n');`,
      'require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {',
      "  const { id } = JSON.parse(line);",
      '  const error = { code: -32603, message: \'Not authenticated with {"api_key": "sk-stale-9911"}\' };',
      '  if (id !== undefined) process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, error }) + "\\n");',
      "});",
    ].join("\n");
    const { message } = await connectFailure(
      connectionFor("keyed", { command: process.execPath, args: ["-e", server] }),
    );
    assert.match(message, /answered the MCP handshake with "[^\n]*Not authenticated with /, message);
    assert.doesNotMatch(message, /sk-stale-9911/);
  });

  // @gannonh/firebase-mcp without its key logs "[ERROR] SERVICE_ACCOUNT_KEY_PATH not set" and waits for ever.
  test("a server that asks for a variable and then never answers: the entry to add when its initTimeout ends, no restart", async () => {
    const tmp = tempDir();
    const starts = path.join(tmp.dir, "starts");
    const script = `echo >> '${starts}'; echo '[ERROR] HUNG_KEY_PATH not set' >&2; echo '[INFO] Waiting to initialize...' >&2; exec sleep 300`;
    try {
      const { message, state } = await connectFailure(
        connectionFor("hung", { command: "sh", args: ["-c", script], initTimeout: 4000 }),
      );
      assert.match(
        message,
        /^MCP server 'hung': it needs HUNG_KEY_PATH, which its `env` does not set \(the process gave no answer to the MCP handshake within its `initTimeout` of 4 s, saying so\); add "HUNG_KEY_PATH": "\$\{HUNG_KEY_PATH\}" to `env` of 'hung'/,
      );
      assert.equal(state, "gaveUp", "not restarted: a restart gets the same environment");
      assert.equal(readFileSync(starts, "utf8"), "\n", "one start");
    } finally {
      tmp.cleanup();
    }
  });

  // exa-mcp-server and @circleci/mcp-server-circleci start without their key and fail each call asking for it.
  test("a tool's error that asks for the server's own key it was not given says what to add to its entry", async () => {
    const entry = { command: "node", args: [KEYLESS_SERVER] };
    const where = `\`env\` of 'keyless' in ${TEST_SOURCE.path}`;
    for (const [env, advice] of [
      [
        { PATH: process.env.PATH ?? "" },
        `add "KEYLESS_API_KEY": "\${KEYLESS_API_KEY}" to ${where}, and set it where pi runs`,
      ],
      [
        { PATH: process.env.PATH ?? "", KEYLESS_API_KEY: "k-123" },
        `KEYLESS_API_KEY is set where pi runs, but a local server gets only the variables its \`env\` names`,
      ],
    ] as const) {
      const connection = connectionFor("keyless", entry, { env });
      try {
        await connection.connect();
        const tools = toolsOf(connection);
        const search = await runTool(tools.get("mcp_keyless_search")).then(
          () => assert.fail("the call succeeded"),
          (error: Error) => error.message,
        );
        assert.match(
          search,
          /environment variable \(KEYLESS_API_KEY\)\n\n\(MCP server 'keyless' runs without KEYLESS_API_KEY: /,
        );
        assert.ok(search.includes(advice), search);
        // A program one of its tools ran asks for its own setting: nothing about the server's entry.
        const run = await runTool(tools.get("mcp_keyless_run")).then(
          () => assert.fail("the call succeeded"),
          (error: Error) => error.message,
        );
        assert.equal(run, "Error: DATABASE_URL environment variable is required\nexit code 1");
      } finally {
        await connection.close();
      }
    }
  });

  // @railway/mcp-server, now part of the Railway CLI, says so and exits: a README's entry from before the move.
  test("a package that says it is deprecated is started once, and the error quotes it", async () => {
    const lines = [
      "npm warn deprecated @types/form-data@2.5.2: This is a stub types definition.",
      "@railway/mcp-server is deprecated.",
      "Railway MCP is now bundled into the Railway CLI.",
      "Or run the local stdio server directly with:",
      "railway mcp",
    ];
    assert.equal(deprecationIn(lines), "@railway/mcp-server is deprecated.");
    assert.equal(deprecationIn(lines.slice(0, 1)), undefined, "npm's warning about a dependency");
    const node = "(node:4242) [DEP0040] DeprecationWarning: The `punycode` module is deprecated.";
    assert.equal(deprecationIn([node, "Error: connect ECONNREFUSED 127.0.0.1:5432"]), undefined, "Node's, of a module");
    assert.equal(deprecationIn(["Warning: --port is deprecated, use --listen"]), undefined, "an option's");
    assert.equal(deprecationIn(["This package is no longer maintained."]), "This package is no longer maintained.");
    const script = lines.map((line) => `echo '${line}' >&2`).join("; ");
    const { message, state } = await connectFailure(
      connectionFor("railway", { command: "sh", args: ["-c", `${script}; exit 1`] }),
    );
    assert.match(
      message,
      /^MCP server 'railway': its package says it is deprecated: "@railway\/mcp-server is deprecated\." \(the process exited with code 1 after [\d.]+ s\); its output \(below\) names what replaces it: change `command` and `args` of 'railway' in \/test\/\.pi\/mcp\.json to that\. Restarting would not help/,
    );
    assert.match(message, /\n {2}railway mcp$/);
    assert.equal(state, "gaveUp");
  });

  // @sentry/mcp-server says what it lacks first, then prints 54 lines of usage: more than the tail of stderr kept.
  test("a server that names the variable it lacks above a long usage text: read from its first lines", async () => {
    const usage = Array.from({ length: 60 }, (_, i) => `  --option-${i} <value>   what option ${i} does`).join("\\n");
    const { message, state } = await connectFailure(
      connectionFor("sentry", {
        command: "sh",
        args: [
          "-c",
          "printf 'Error: No access token was provided.\\nRun `x auth login` first, or pass `--access-token` / " +
            `MCP_TEST_ACCESS_TOKEN.\\nUsage: x [--access-token=<token>]\\n${usage}\\n' >&2; exit 1`,
        ],
      }),
    );
    assert.match(message, /^MCP server 'sentry': it needs MCP_TEST_ACCESS_TOKEN, which its `env` does not set/);
    // The line that asked is not among the last lines shown (the usage text is): the reason quotes it.
    assert.ok(
      message.includes('saying "Run `x auth login` first, or pass `--access-token` / MCP_TEST_ACCESS_TOKEN.")'),
      message,
    );
    assert.match(message, /add "MCP_TEST_ACCESS_TOKEN": "\$\{MCP_TEST_ACCESS_TOKEN\}" to `env` of 'sentry'/);
    assert.equal(state, "gaveUp");
  });

  test("set where pi runs but not in its env: the error says a server gets only its env, and names the entry", async () => {
    const connection = connectionFor("keyed", keyed(), { env: { ...process.env, MCP_TEST_API_KEY: "k-123456" } });
    const { message: error, state } = await connectFailure(connection);
    assert.match(
      error,
      /^MCP server 'keyed': it needs MCP_TEST_API_KEY, which its `env` does not set \(the process exited with code 1 after [\d.]+ s, saying so\)/,
    );
    assert.match(
      error,
      /MCP_TEST_API_KEY is set where pi runs, but a local server gets only the variables its `env` names .*: add "MCP_TEST_API_KEY": "\$\{MCP_TEST_API_KEY\}" to `env` of 'keyed' in \/test\/\.pi\/mcp\.json/,
    );
    assert.equal(state, "gaveUp", "not restarted: a restart has the same environment");
  });

  test("two asked for, one set where pi runs and one nowhere: the error says to set the other where pi runs", async () => {
    const says = 'echo "Error: MCP_TEST_API_KEY and MCP_TEST_TEAM_ID environment variables are required" >&2; exit 1';
    const env = { ...process.env, MCP_TEST_API_KEY: "k-123456", MCP_TEST_TEAM_ID: undefined };
    const { message } = await connectFailure(connectionFor("two", { command: "sh", args: ["-c", says] }, { env }));
    assert.match(
      message,
      /MCP_TEST_API_KEY is set where pi runs, .*: add "MCP_TEST_API_KEY": .*, "MCP_TEST_TEAM_ID": /,
    );
    assert.match(message, /set MCP_TEST_TEAM_ID where pi runs/);
  });

  test("its env names the variable but takes it from one pi's environment lacks: the error says which to set", async () => {
    const entry = keyed({ MCP_TEST_API_KEY: "${MCP_TEST_UNSET_KEY}" });
    const env = { ...process.env, MCP_TEST_API_KEY: undefined, MCP_TEST_UNSET_KEY: undefined };
    const { message: error, state } = await connectFailure(connectionFor("keyed", entry, { env }));
    assert.match(
      error,
      /^MCP server 'keyed': it needs MCP_TEST_API_KEY, which was not passed to it \(the process exited with code 1 after [\d.]+ s, saying so\); its entry passes `MCP_TEST_API_KEY` from \$\{MCP_TEST_UNSET_KEY\}, which pi's environment lacks: set MCP_TEST_UNSET_KEY where pi starts/,
    );
    assert.doesNotMatch(error, /add "MCP_TEST_API_KEY"/, "the entry has it already");
    assert.equal(state, "gaveUp", "not restarted: a restart has the same environment");
  });

  test("its env leaves the variable empty, as a README's entry has it: the error says to write the value there", async () => {
    const env = { ...process.env, MCP_TEST_API_KEY: undefined };
    const { message: error, state } = await connectFailure(
      connectionFor("keyed", keyed({ MCP_TEST_API_KEY: "" }), { env }),
    );
    assert.match(
      error,
      /^MCP server 'keyed': it needs MCP_TEST_API_KEY, which its `env` leaves empty \(the process exited with code 1 after [\d.]+ s, saying so\); its entry leaves MCP_TEST_API_KEY empty: write the value in `env` of 'keyed' in \/test\/\.pi\/mcp\.json \(or "MCP_TEST_API_KEY": "\$\{MCP_TEST_API_KEY\}", set where pi runs\)/,
    );
    assert.equal(state, "gaveUp", "not restarted: a restart has the same environment");
  });

  test("an interactive program that found no terminal (a CLI not given its MCP subcommand): said so, not restarted", async () => {
    const { message, state } = await connectFailure(
      connectionFor("codex", { command: "sh", args: ["-c", "echo 'Error: stdin is not a terminal' >&2; exit 1"] }),
    );
    assert.match(
      message,
      /^MCP server 'codex': it said "Error: stdin is not a terminal": it ran as an interactive program, not as an MCP server \(the process exited with code 1 after [\d.]+ s\); check `args` of 'codex' in .* for the subcommand or flag that starts its MCP server/,
    );
    assert.equal(state, "gaveUp");
  });

  test("a command-line program whose usage names its MCP subcommand (xcodebuildmcp 2): the args to use, and with them it connects", async () => {
    const { command, args } = fixtureEntry();
    const server = [command, ...args].map((word) => JSON.stringify(word)).join(" ");
    const usage = `echo 'Usage: fakecli <command> [options]' >&2; echo "Run 'fakecli mcp' to start the MCP server." >&2`;
    const cli = {
      command: "sh",
      args: ["-c", `if [ "$1" = mcp ]; then exec ${server}; fi; ${usage}; exit 1`, "fakecli"],
    };
    const { message, state } = await connectFailure(connectionFor("cli", cli));
    assert.match(
      message,
      /^MCP server 'cli': it said "Run 'fakecli mcp' to start the MCP server\.": it ran as a command-line program, not as an MCP server \(the process exited with code 1 after [\d.]+ s\); add what starts its MCP server to `args` of 'cli' in \/test\/\.pi\/mcp\.json: "args": /,
    );
    const fixed = [...cli.args, "mcp"];
    assert.ok(message.includes(`"args": ${JSON.stringify(fixed)}. Restarting would not help`), message);
    assert.equal(state, "gaveUp");
    const connection = connectionFor("cli", { ...cli, args: fixed });
    try {
      await connection.connect();
      assert.equal(connection.status, "connected");
    } finally {
      await connection.close();
    }
  });

  test("with the entry the error gives, it connects", async () => {
    const connection = connectionFor("keyed", keyed({ MCP_TEST_API_KEY: "${MCP_TEST_API_KEY}" }), {
      env: { ...process.env, MCP_TEST_API_KEY: "k-123456" },
    });
    try {
      await connection.connect();
      assert.equal(connection.status, "connected");
    } finally {
      await connection.close();
    }
  });
});
