/**
 * Taking over the sign-in pi 1.x's built-in MCP stored for a server (`<agent dir>/mcp-auth.json`), for a server the
 * bridge has no tokens of its own for: the file is read only when it is a regular file of this user that no one else
 * can write, through one descriptor (the file checked is the file read); what ./pi-sign-ins.ts finds for the server is
 * copied into the bridge's own store. pi's file is never written, and nothing of its content goes into a message.
 */
import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import * as path from "node:path";
import { codeOf, errorMessage } from "../common/errors.ts";
import { commandArgument } from "../config/validate/name.ts";
import { findPiSignIn, planPiImport } from "./pi-sign-ins.ts";
import type { AuthStore } from "./storage.ts";

/** The file's name in pi's agent dir. */
const PI_AUTH_FILE_NAME = "mcp-auth.json";

export function piAuthFile(agentDir: string): string {
  return path.join(agentDir, PI_AUTH_FILE_NAME);
}

/** A file of sign-ins larger than this is not read: pi's holds a few kilobytes per server. */
const MAX_FILE_BYTES = 4 * 1024 * 1024;

export type PiFileRead = { kind: "missing" } | { kind: "refused"; problem: string } | { kind: "read"; text: string };

/** The file's text, if it is safe to trust: a regular file, this user's, that neither group nor others can write. */
export async function readPiAuthFile(file: string): Promise<PiFileRead> {
  let handle: FileHandle;
  try {
    // Non-blocking, so a FIFO in the file's place cannot hold the open; it is refused below as not a regular file.
    handle = await open(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    const code = codeOf(error) ?? "unknown error";
    return code === "ENOENT" ? { kind: "missing" } : { kind: "refused", problem: `it cannot be opened (${code})` };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { kind: "refused", problem: "it is not a regular file" };
    const uid = process.getuid?.();
    if (uid !== undefined && info.uid !== uid) return { kind: "refused", problem: "it belongs to another user" };
    if (process.platform !== "win32" && (info.mode & 0o022) !== 0) {
      const mode = (info.mode & 0o777).toString(8).padStart(4, "0");
      const problem = `other users can write it (mode ${mode}; \`chmod 600\` it to have its sign-ins used)`;
      return { kind: "refused", problem };
    }
    if (info.size > MAX_FILE_BYTES) return { kind: "refused", problem: "it is larger than 4 MiB" };
    return { kind: "read", text: await handle.readFile({ encoding: "utf8" }) };
  } catch (error) {
    return { kind: "refused", problem: `it cannot be read (${codeOf(error) ?? "unknown error"})` };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

export type PiImportOutcome =
  /** No file, or no sign-in in it for the server at this URL. */
  | { kind: "none" }
  /** The sign-in there was taken over, or signed out of, before. */
  | { kind: "seen" }
  | { kind: "imported"; file: string; refreshable: boolean }
  /** A sign-in is there, but nothing of it can be used (`reason` says why). */
  | { kind: "unusable"; file: string; reason: string }
  /** The file was not trusted or not understood; `warning` says so and what to do, naming only the file and server. */
  | { kind: "ignored"; file: string; warning: string };

export interface PiImportOptions {
  store: AuthStore;
  server: string;
  /** The server's URL as the bridge connects to it. */
  serverUrl: string;
  /** The config names a `clientId` (pi signed in as that client when it stored no registration). */
  configuredClient: boolean;
  now: number;
}

function ignoredWarning(file: string, server: string, problem: string): string {
  return `The sign-in pi 1.x may have stored for MCP server '${server}' was not used: ${file}: ${problem}. Run /mcp auth ${commandArgument(server)} to sign in here instead.`;
}

/** Copies pi's sign-in for the server into `store`, when there is one the bridge has not taken over or signed out of. */
export async function importPiSignIn(options: PiImportOptions): Promise<PiImportOutcome> {
  const { store, server, serverUrl, now } = options;
  const file = store.piAuthFile;
  if (!file) return { kind: "none" };
  const read = await readPiAuthFile(file);
  if (read.kind === "missing") return { kind: "none" };
  if (read.kind === "refused") return { kind: "ignored", file, warning: ignoredWarning(file, server, read.problem) };
  const lookup = findPiSignIn(read.text, server, serverUrl);
  if (lookup.kind === "none") return { kind: "none" };
  if (lookup.kind === "invalid")
    return { kind: "ignored", file, warning: ignoredWarning(file, server, lookup.problem) };
  if (store.importRecord(server, serverUrl)?.fingerprint === lookup.fingerprint) return { kind: "seen" };
  const plan = planPiImport(lookup.signIn, { serverUrl, configuredClient: options.configuredClient, now, from: file });
  if (plan.kind === "unusable") return { kind: "unusable", file, reason: plan.reason };
  try {
    // The registration first: tokens without the client they were issued to would be refreshed as another.
    if (plan.client) await store.saveClient(server, plan.client);
    await store.saveTokens(server, plan.tokens);
    await store.saveImportRecord(server, importRecord(serverUrl, lookup.fingerprint, now));
  } catch (error) {
    // The store's errors name only its own file and the errno code.
    const warning = ignoredWarning(file, server, `copying it failed (${errorMessage(error)})`);
    return { kind: "ignored", file, warning };
  }
  return { kind: "imported", file, refreshable: plan.refreshable };
}

/**
 * Records pi's current sign-in for the server as signed out of (for `/mcp logout`), so that it is not taken over
 * again; a sign-in pi makes later is. pi's file keeps it: signing out of pi is pi's own `/mcp logout`. Resolves to
 * pi's file when it holds a sign-in for the server.
 */
export async function declinePiSignIn(
  store: AuthStore,
  server: string,
  serverUrl: string,
): Promise<string | undefined> {
  const file = store.piAuthFile;
  if (!file) return undefined;
  const read = await readPiAuthFile(file);
  if (read.kind !== "read") return undefined;
  const lookup = findPiSignIn(read.text, server, serverUrl);
  if (lookup.kind !== "found") return undefined;
  await store.saveImportRecord(server, importRecord(serverUrl, lookup.fingerprint, Date.now()));
  return file;
}

/** What is kept of pi's sign-in for a server once it was taken over or signed out of: which one, and when. */
function importRecord(serverUrl: string, fingerprint: string, now: number) {
  return { serverUrl, fingerprint, savedAt: new Date(now).toISOString() };
}
