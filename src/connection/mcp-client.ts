/**
 * The SDK `Client` as the bridge builds it: the capabilities it declares to a server, and the handlers for everything
 * a server sends to the client on its own — requests that want an answer (the MCP spec's "client features":
 * elicitation, roots and sampling) and notifications (one of its lists changed, a resource it
 * was asked to watch changed, a log message).
 * A feature is declared only when a handler for it is given, so a server never asks for something nobody answers.
 */
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import {
  Client,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  type ClientCapabilities,
  type CreateMessageRequest,
  type CreateMessageResult,
  type ElicitRequest,
  type ElicitRequestURLParams,
  type ElicitResult,
  type LoggingMessageNotification,
  type Root,
} from "@modelcontextprotocol/client";
import type { Redactor } from "../common/redact.ts";
import { routeSdkConsole } from "../common/sdk-console.ts";
import { PROTOCOL_REVISIONS } from "../config/protocol-setting.ts";
import type { Negotiation } from "./protocol-negotiation.ts";

/** How the client introduces itself to a server in the handshake. */
export interface ClientInfo {
  name: string;
  version: string;
}

/** A server's text as the user may see it: its secrets hidden. */
export type Hide = (text: string) => string;

/** Answers to the requests a server may send the client. Each one present is declared as a capability. */
export interface ClientFeatures {
  /** Asks the user for input on the server's behalf (`elicitation/create`). */
  /** `hide` is for what is drawn on screen: the values that go back (choices, defaults) keep the server's secrets. */
  elicitation?: (request: ElicitRequest["params"], cancelled?: AbortSignal, hide?: Hide) => Promise<ElicitResult>;
  /** Has the client's model answer the server (`sampling/createMessage`); without tool use inside sampling. */
  sampling?: (request: CreateMessageRequest["params"], cancelled?: AbortSignal) => Promise<CreateMessageResult>;
  /** The directories the server may work in (`roots/list`), as they are at the time of asking. */
  roots?: () => Root[];
  /**
   * A request failed because the server first needs the user on these pages (error -32042): sends the user there and
   * says whether to run the request again. Given, it also declares URL-mode elicitation, which `elicitation` answers.
   */
  urlElicitationRequired?: (elicitations: ElicitRequestURLParams[], hide?: Hide) => Promise<boolean>;
  /** `notifications/elicitation/complete`: a page flow the user was sent to has finished. */
  elicitationComplete?: (elicitationId: string) => void;
}

/**
 * What the client answers a server: roots for every server (some list a tool only for a client with roots), in a task's
 * questions too, none for one whose entry says `"roots": false`; and the server's secrets hidden in what it asks pi's
 * model (which the user is shown, and the model gets) and the user (elicitation, a page a call needs first), as they
 * are in its results.
 */
export function connectionFeatures(
  given: ClientFeatures = {},
  offerRoots: boolean,
  projectRoot: string,
  redactor: Redactor,
): ClientFeatures {
  const { roots = () => [directoryRoot(projectRoot)], sampling, elicitation, ...features } = given;
  const pages = given.urlElicitationRequired;
  const hide: Hide = (text) => redactor.result(text);
  return {
    ...features,
    ...(offerRoots && { roots }),
    ...(sampling && { sampling: (params, cancelled) => sampling(redactor.result(params), cancelled) }),
    ...(elicitation && { elicitation: (params, cancelled) => elicitation(prose(params, redactor), cancelled, hide) }),
    ...(pages && { urlElicitationRequired: (elicitations) => pages(prose(elicitations, redactor), hide) }),
  };
}

/** What only the user reads: a request's values (choices, defaults, a page's URL) go back or are opened as given. */
const PROSE = new Set(["message", "title", "description", "enumNames"]);

/** `value` with the server's secrets hidden in its prose; from entries, so a field named `__proto__` stays one. */
function prose<T>(value: T, redactor: Redactor, key = "", depth = 0): T {
  if (typeof value === "string") return (PROSE.has(key) ? redactor.result(value) : value) as T;
  if (depth > 64 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => prose(item, redactor, key, depth + 1)) as T;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, prose(v, redactor, k, depth + 1)])) as T;
}

/** The lists a server may say changed (`notifications/<list>/list_changed`). */
export type ServerList = "tools" | "resources" | "prompts";

/**
 * A change a server announced besides its tool list (which the connection fetches itself), or its connection closed
 * for good (disabled, removed, shut down), so what it offered is gone.
 */
export type ServerChange =
  { kind: "list"; list: Exclude<ServerList, "tools"> } | { kind: "updated"; uri: string } | { kind: "closed" };

/** What the client hears from a server without asking. */
export interface ServerNotifications {
  /** `notifications/<list>/list_changed`, each time it comes (./list-refresh.ts bounds the reads). */
  listChanged(list: ServerList): void;
  /** `notifications/resources/updated`: a resource the client subscribed to changed. */
  resourceUpdated(uri: string): void;
  /** `notifications/message`: a log record from the server. */
  logMessage(params: LoggingMessageNotification["params"]): void;
}

export function clientCapabilities(features: ClientFeatures): ClientCapabilities {
  const capabilities: ClientCapabilities = {};
  // applyDefaults: the SDK fills in the defaults of the server's schema that an answer leaves out.
  if (features.elicitation)
    capabilities.elicitation = {
      form: { applyDefaults: true },
      ...(features.urlElicitationRequired ? { url: {} } : {}),
    };
  if (features.sampling) capabilities.sampling = {};
  // listChanged: the client says when its roots change (`notifications/roots/list_changed`).
  if (features.roots) capabilities.roots = { listChanged: true };
  return capabilities;
}

/**
 * The `_meta` envelope a request of the newest revision carries (its version, the client, what the client can do): what
 * the SDK's own revision probe sends, for a request the bridge sends itself before the SDK takes over.
 */
export function newestRevisionEnvelope(clientInfo: ClientInfo, features: ClientFeatures): Record<string, unknown> {
  return {
    [PROTOCOL_VERSION_META_KEY]: PROTOCOL_REVISIONS[0],
    [CLIENT_INFO_META_KEY]: clientInfo,
    [CLIENT_CAPABILITIES_META_KEY]: clientCapabilities(features),
  };
}

/** A client that declares `features`, answers a server's requests with them, and passes notifications on. */
export function createMcpClient(
  clientInfo: ClientInfo,
  features: ClientFeatures,
  notifications: ServerNotifications,
  negotiation: Negotiation,
): Client {
  // The SDK's own console notices must not reach pi's terminal (see ../common/sdk-console.ts).
  routeSdkConsole();
  // The bridge fetches a list itself, so it can bound the fetch and drop a result from a connection since replaced.
  // No debounce here: the SDK's waits for a pause that a server saying so without pause never makes, so its list was
  // never read again; ./list-refresh.ts bounds the reads instead.
  const changed = (list: ServerList) => ({
    autoRefresh: false,
    debounceMs: 0,
    onChanged: () => notifications.listChanged(list),
  });
  const client = new Client(clientInfo, {
    versionNegotiation: negotiation.versionNegotiation,
    supportedProtocolVersions: negotiation.supportedProtocolVersions,
    capabilities: clientCapabilities(features),
    listChanged: { tools: changed("tools"), resources: changed("resources"), prompts: changed("prompts") },
  });
  const { elicitation, elicitationComplete, roots, sampling } = features;
  if (sampling)
    client.setRequestHandler("sampling/createMessage", (request, ctx) => sampling(request.params, ctx.mcpReq.signal));
  if (elicitation)
    client.setRequestHandler("elicitation/create", (request, ctx) => elicitation(request.params, ctx.mcpReq.signal));
  if (elicitationComplete)
    client.setNotificationHandler("notifications/elicitation/complete", (n) =>
      elicitationComplete(n.params.elicitationId),
    );
  if (roots) client.setRequestHandler("roots/list", () => ({ roots: roots() }));
  client.setNotificationHandler("notifications/resources/updated", (notification) =>
    notifications.resourceUpdated(notification.params.uri),
  );
  client.setNotificationHandler("notifications/message", (notification) =>
    notifications.logMessage(notification.params),
  );
  return client;
}

/** A directory as an MCP root: its `file://` URL, named after its last path segment. */
export function directoryRoot(directory: string): Root {
  const absolute = path.resolve(directory);
  return { uri: pathToFileURL(absolute).href, name: path.basename(absolute) || absolute };
}
