/**
 * The client the MCP conformance suite (`@modelcontextprotocol/conformance`) tests: the bridge's own config
 * validation, connection (transports, OAuth provider, callback server, token store) and tool calls, driven the way pi
 * drives them, with the authorization redirect followed without a browser.
 *
 * The harness runs `<command> <server URL>` with MCP_CONFORMANCE_SCENARIO set (and, for pre-registered clients,
 * MCP_CONFORMANCE_CONTEXT with their credentials). Exit code 0 when the scenario's steps ran, 1 otherwise; the
 * harness judges the rest from what reached its servers.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import { AuthStore } from "../src/oauth/storage.ts";
import { ServerConnection } from "../src/connection/server-connection.ts";
import { automaticSignIn } from "../src/oauth/sign-in.ts";
import { errorMessage } from "../src/common/errors.ts";
import { DialogBudget } from "../src/pi/dialog-budget.ts";
import { type ElicitationUi, elicitationFeatures } from "../src/pi/elicitation-dialog.ts";

/** The Client ID Metadata Document URL the suite's CIMD scenario expects. */
const CIMD_URL = "https://conformance-test.local/client-metadata.json";

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
/** What the harness passes a scenario's client: credentials of the kind it tests, and for some the exact calls to make. */
interface ScenarioContext {
  client_id?: string;
  client_secret?: string;
  private_key_pem?: string;
  signing_algorithm?: string;
  valid_jwt?: string;
  idp_client_id?: string;
  idp_id_token?: string;
  idp_token_endpoint?: string;
  toolCalls?: Array<{ name: string; arguments?: Record<string, unknown> }>;
}
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}") as ScenarioContext;

/** The tool each scenario wants called (the auth scenarios: whatever the server offers first). */
/** A user who presses Enter at every dialog. */
const PRESS_ENTER: ElicitationUi = {
  select: async (_title, options) => options[0],
  input: async () => "",
  notify: () => undefined,
};

/** The calls a scenario wants: those its context lists, every tool for the multi-round-trip ones, else {@link toolFor}'s. */
function callsFor(scenario: string, tools: string[]): Array<{ name: string; args: Record<string, unknown> }> {
  if (context.toolCalls) return context.toolCalls.map((call) => ({ name: call.name, args: call.arguments ?? {} }));
  if (scenario.startsWith("sep-2322")) return tools.map((name) => ({ name, args: {} }));
  const tool = toolFor(scenario, tools);
  return tool ? [tool] : [];
}

function toolFor(scenario: string, tools: string[]): { name: string; args: Record<string, unknown> } | undefined {
  switch (scenario) {
    case "initialize":
      return undefined;
    case "tools_call":
      return { name: "add_numbers", args: { a: 5, b: 3 } };
    case "elicitation-sep1034-client-defaults":
      return { name: "test_client_elicitation_defaults", args: {} };
    case "sse-retry":
      return { name: "test_reconnection", args: {} };
    default:
      return tools[0] ? { name: tools[0], args: {} } : undefined;
  }
}

/**
 * Waits (at most `maxMs`) until timers fire on time again. The suite starts every scenario's client at once, and
 * `sse-retry` measures the reconnect delay to within 250 ms: on a 2-core machine still busy starting the other
 * clients, that measures the machine, not the client.
 */
async function waitUntilPunctual(maxMs: number): Promise<void> {
  const deadline = Date.now() + maxMs;
  let punctual = 0;
  while (punctual < 20 && Date.now() < deadline) {
    const started = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 25));
    punctual = performance.now() - started < 30 ? punctual + 1 : 0;
  }
}

/** A port nothing listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** A client the scenario registered beforehand, for the authorization-code sign-in. */
function preRegistered(): Record<string, string> {
  const auth: Record<string, string> = {};
  if (context.client_id) auth.clientId = context.client_id;
  if (context.client_secret) auth.clientSecret = context.client_secret;
  return auth;
}

/** The client-credentials scenarios' machine client: its secret, or its key written to a file as a user would keep it. */
function machineAuth(dir: string): Record<string, unknown> {
  const auth: Record<string, unknown> = { grantType: "client_credentials", clientId: context.client_id };
  if (context.client_secret) auth.clientSecret = context.client_secret;
  if (context.private_key_pem) {
    const keyFile = path.join(dir, "client-key.pem");
    writeFileSync(keyFile, context.private_key_pem, { mode: 0o600 });
    auth.privateKeyFile = keyFile;
    if (context.signing_algorithm) auth.signingAlgorithm = context.signing_algorithm;
  }
  return auth;
}

/** The workload identity scenario's client: its JWT in a variable, as a CI system hands it over. */
function workloadAuth(): Record<string, unknown> {
  process.env.CONFORMANCE_WORKLOAD_JWT = context.valid_jwt ?? "";
  return {
    grantType: "urn:ietf:params:oauth:grant-type:jwt-bearer",
    clientId: context.client_id,
    assertion: "${CONFORMANCE_WORKLOAD_JWT}",
  };
}

/** Enterprise-managed authorization: the user's ID token (from the enterprise sign-in) and the IdP to exchange it at. */
function enterpriseAuth(): Record<string, unknown> {
  process.env.CONFORMANCE_ID_TOKEN = context.idp_id_token ?? "";
  return {
    grantType: "urn:ietf:params:oauth:grant-type:jwt-bearer",
    clientId: context.client_id,
    clientSecret: context.client_secret,
    idpTokenUrl: context.idp_token_endpoint,
    idpClientId: context.idp_client_id,
    idToken: "${CONFORMANCE_ID_TOKEN}",
  };
}

async function main(): Promise<number> {
  if (!url) {
    console.error("usage: driver.ts <server URL>");
    return 2;
  }
  // The suite runs every scenario's client at once: each takes its own callback port rather than all contending for
  // 9876 and the five after it.
  const authDir = mkdtempSync(path.join(tmpdir(), "mcp-bridge-conformance-"));
  const auth = scenario.startsWith("auth/client-credentials-")
    ? machineAuth(authDir)
    : scenario === "auth/wif-jwt-bearer"
      ? workloadAuth()
      : // The same flow (SEP-990) under its earlier name in the 0.1 releases of the suite.
        scenario === "auth/enterprise-managed-authorization" || scenario === "auth/cross-app-access-complete-flow"
        ? enterpriseAuth()
        : { clientMetadataUrl: CIMD_URL, callbackPort: await freePort(), ...preRegistered() };
  const validated = validateServerEntry(
    "conformance",
    { url, auth, reconnect: false, timeout: 25_000 },
    { scope: "flag", path: "conformance" },
  );
  if (!validated.config) {
    console.error(validated.errors.join("; "));
    rmSync(authDir, { recursive: true, force: true });
    return 1;
  }
  const connection = new ServerConnection(validated.config, {
    projectRoot: process.cwd(),
    env: process.env,
    clientInfo: { name: "pi-mcp-bridge", version: "0.1.0" },
    authStore: new AuthStore(authDir),
    signIn: () => automaticSignIn(),
    signInTimeoutMs: 20_000,
    // pi's own elicitation dialogs, answered as a user pressing Enter at each: the first option (Fill in, a field's
    // default, Send) and an empty line (a field's default). The scenario checks the defaults arrive.
    features: elicitationFeatures("conformance", () => ({ ui: PRESS_ENTER }), new DialogBudget(() => {})),
  });
  try {
    await connection.connect();
    const calls = callsFor(
      scenario,
      connection.tools.map((t) => t.name),
    );
    if (scenario === "sse-retry") await waitUntilPunctual(15_000);
    // Every call is made even when one fails: the scenario judges each from what reached its server.
    let failed = false;
    for (const call of calls) {
      try {
        console.log(JSON.stringify(await connection.callTool(call.name, call.args)));
      } catch (error) {
        console.error(`${call.name}: ${errorMessage(error)}`);
        failed = true;
      }
    }
    return failed ? 1 : 0;
  } catch (error) {
    console.error(errorMessage(error));
    return 1;
  } finally {
    await connection.close();
    rmSync(authDir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
