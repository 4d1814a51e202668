/**
 * Kept here: the SDK's providers keep tokens in memory only.
 *
 * Where the OAuth state of remote MCP servers lives on disk: one directory, normally `<pi agent dir>/mcp-auth`, with
 * `<server>.json` holding a server's tokens (and the DPoP key they are bound to, if any), `<server>-client.json` its
 * client registration, and `.<server>-from-pi.json` which of pi 1.x's sign-ins for it was taken over (a digest only).
 *
 * These files hold secrets, so the directory is kept at 0700 and the files at 0600 (a looser directory is tightened,
 * and a looser file is replaced, on every write). A write goes to a temp file in the same directory that is then
 * renamed over the target, so a reader never sees half a file. Tokens and registrations are bound to the MCP server
 * URL they were obtained for: after the URL in the config changes they read as absent, so they are never presented to
 * another server. Reads never throw (a missing, unreadable or corrupt file reads as absent); writes and deletes throw
 * errors that name only the file and the errno code, never what was being written. Nothing here logs.
 */
import { existsSync, readFileSync, renameSync } from "node:fs";
import { chmod, mkdir, stat, unlink } from "node:fs/promises";
import * as path from "node:path";
import { type Static, type TSchema, Type } from "typebox";
import { Value } from "typebox/value";
import type { DpopAlg, OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/client";
import { replaceFile, serialised } from "../common/atomic-file.ts";
import { codeOf } from "../common/errors.ts";
import { shortHash } from "../common/text.ts";
import { ASYMMETRIC_JWS_ALGS } from "../config/types.ts";

/** `<agentDir>/mcp-auth`: the directory, inside pi's agent dir, that holds the OAuth files. */
export function authDir(agentDir: string): string {
  return path.join(agentDir, "mcp-auth");
}

const Text = Type.String();
/** The algorithms a stored DPoP key may have: the SDK signs proofs with each (../config/types.ts). */
export const DPOP_ALGS: readonly DpopAlg[] = ASYMMETRIC_JWS_ALGS;
/** A DPoP key as stored with the tokens it binds (./dpop.ts): the private JWK (public members included) and its algorithm. */
export interface StoredDpopKey {
  alg: DpopAlg;
  jwk: Record<string, unknown>;
}
const StoredDpopKeySchema = Type.Unsafe<StoredDpopKey>(
  Type.Object({
    alg: Type.Union(DPOP_ALGS.map((alg) => Type.Literal(alg))),
    jwk: Type.Object({ kty: Type.String(), d: Type.String() }),
  }),
);
const StoredTokensSchema = Type.Object({
  accessToken: Text,
  tokenType: Text,
  refreshToken: Type.Optional(Text),
  /** Epoch ms. */
  expiresAt: Type.Optional(Type.Number()),
  scopes: Type.Optional(Type.Array(Text)),
  idToken: Type.Optional(Text),
  /** The authorization server that issued the tokens, as the SDK reported it; handed back to it unchanged. */
  issuer: Type.Optional(Text),
  /** The MCP server URL the tokens are bound to. */
  serverUrl: Text,
  /** ISO timestamp. */
  savedAt: Text,
  /** The private key DPoP-bound tokens are bound to (./dpop.ts): it lives and dies with them. */
  dpopKey: Type.Optional(StoredDpopKeySchema),
});
export type StoredTokens = Static<typeof StoredTokensSchema>;

const StoredClientSchema = Type.Object({
  /** The MCP server URL the registration is bound to. */
  serverUrl: Text,
  /** ISO timestamp. */
  savedAt: Text,
  client: Type.Object({ client_id: Text }),
  /** The authorization server (its `issuer`) that issued the registration: another one needs its own. */
  issuer: Type.Optional(Text),
  /** The file of pi 1.x's sign-ins this registration was taken from, with the tokens issued to it (./pi-sign-ins.ts). */
  importedFrom: Type.Optional(Text),
});
export type StoredClient = Static<typeof StoredClientSchema> & { client: OAuthClientInformationMixed };

/** Which of pi 1.x's sign-ins for a server the bridge took over or signed out of: the next one it may take over is another. */
const ImportRecordSchema = Type.Object({
  serverUrl: Text,
  /** ./pi-sign-ins.ts `fingerprintOf`: a digest, not the tokens. */
  fingerprint: Text,
  /** ISO timestamp. */
  savedAt: Text,
});
export type ImportRecord = Static<typeof ImportRecordSchema>;

export interface AuthStoreOptions {
  /** pi 1.x's `mcp-auth.json`, whose sign-ins a server without tokens of its own takes over (./pi-sign-in-import.ts). */
  piAuthFile?: string;
}

/**
 * The SDK's tokens in stored form: `expires_in` becomes an absolute `expiresAt`, `scope` a list; `dpopKey` is the key
 * DPoP-bound tokens are bound to.
 */
export function toStoredTokens(
  tokens: OAuthTokens,
  serverUrl: string,
  now: number,
  dpopKey?: StoredDpopKey,
): StoredTokens {
  const stored: StoredTokens = {
    accessToken: tokens.access_token,
    tokenType: tokens.token_type,
    serverUrl,
    savedAt: new Date(now).toISOString(),
  };
  if (tokens.refresh_token !== undefined) stored.refreshToken = tokens.refresh_token;
  // The SDK reads a provider's `"expires_in": null` as 0: no lifetime given, not a token that is already expired.
  if (typeof tokens.expires_in === "number" && Number.isFinite(tokens.expires_in) && tokens.expires_in > 0)
    stored.expiresAt = now + Math.round(tokens.expires_in * 1000);
  if (tokens.scope !== undefined) stored.scopes = tokens.scope.split(/\s+/).filter((scope) => scope !== "");
  if (tokens.id_token !== undefined) stored.idToken = tokens.id_token;
  if (tokens.issuer !== undefined) stored.issuer = tokens.issuer;
  if (dpopKey !== undefined) stored.dpopKey = dpopKey;
  return stored;
}

/** Stored tokens in the SDK's form, with `expires_in` the whole seconds left at `now` (0 once expired). */
export function toOAuthTokens(stored: StoredTokens, now: number): OAuthTokens {
  const tokens: OAuthTokens = { access_token: stored.accessToken, token_type: stored.tokenType };
  if (stored.refreshToken !== undefined) tokens.refresh_token = stored.refreshToken;
  if (stored.expiresAt !== undefined) tokens.expires_in = Math.max(0, Math.floor((stored.expiresAt - now) / 1000));
  if (stored.scopes !== undefined) tokens.scope = stored.scopes.join(" ");
  if (stored.idToken !== undefined) tokens.id_token = stored.idToken;
  if (stored.issuer !== undefined) tokens.issuer = stored.issuer;
  return tokens;
}

/** Whether the tokens have an expiry that is at most `ms` after `now` (or already past). */
export function expiresWithin(stored: StoredTokens, ms: number, now: number): boolean {
  return stored.expiresAt !== undefined && stored.expiresAt - now <= ms;
}

const MAX_PLAIN_NAME_LENGTH = 80;
const CLIENT_SUFFIX = "-client";
/** Names Windows opens a device for, not a file, whatever follows a dot (`nul.json`, `nul.x.json`). */
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/i;

/**
 * The file-name stem for a server: its name where that is safe on every file system, else a safe form with a hash of
 * the original, so `a/b` and `a:b` (or `GitHub` and `github`) never share a file. A name that could be mistaken for another's file (one ending
 * in `-client`, or in what looks like the hash suffix) is hashed as well, so tokens and client files of different
 * servers can never coincide.
 */
function fileStem(server: string): string {
  const plain =
    // Lowercase only: macOS and Windows would give `GitHub` and `github` one file.
    /^[a-z0-9_.-]+$/.test(server) &&
    !server.startsWith(".") &&
    server.length <= MAX_PLAIN_NAME_LENGTH &&
    !server.endsWith(CLIENT_SUFFIX) &&
    !WINDOWS_DEVICE.test(server) &&
    !/-[0-9a-f]{8}$/.test(server);
  if (plain) return server;
  const safe = server
    .replace(/[^A-Za-z0-9_.-]/g, "_")
    .replace(/^\.+/, "_")
    .replace(WINDOWS_DEVICE, "_$&")
    .slice(0, MAX_PLAIN_NAME_LENGTH);
  return `${safe || "_"}-${shortHash(server)}`;
}

/** The stem a name with capitals had before case told files apart, if it had its name as is: its files are read still. */
function formerStem(server: string): string | undefined {
  return /[A-Z]/.test(server) && fileStem(server.toLowerCase()) === server.toLowerCase() ? server : undefined;
}

function sameUrl(a: string, b: string): boolean {
  return URL.canParse(a) && URL.canParse(b) && new URL(a).href === new URL(b).href;
}

/** The parsed JSON of `file`, or undefined when it is missing, unreadable or not JSON. */
function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}

/** An error naming only the file and the errno code: never the message of the original, nor what was written. */
function fsError(action: string, file: string, error: unknown): Error {
  const code = codeOf(error) ?? "unknown error";
  return Object.assign(new Error(`cannot ${action} ${file}: ${code}`), { code });
}

export class AuthStore {
  constructor(
    readonly dir: string,
    private readonly options: AuthStoreOptions = {},
  ) {}

  get piAuthFile(): string | undefined {
    return this.options.piAuthFile;
  }

  tokensPath(server: string): string {
    return path.join(this.dir, `${fileStem(server)}.json`);
  }

  clientPath(server: string): string {
    return path.join(this.dir, `${fileStem(server)}${CLIENT_SUFFIX}.json`);
  }

  /** The server's tokens, or undefined when there are none, they are unreadable, or they were stored for another URL. */
  tokens(server: string, serverUrl: string): StoredTokens | undefined {
    return this.read(this.movedFromFormer(server, "", serverUrl), StoredTokensSchema, serverUrl);
  }

  /**
   * The server's file with `suffix`, after moving there the one of its former name (see `formerStem`) if that is for
   * `serverUrl`: kept where it was, it would still be read after a logout deleted the new one.
   */
  private movedFromFormer(server: string, suffix: string, serverUrl: string): string {
    const file = path.join(this.dir, `${fileStem(server)}${suffix}.json`);
    const stem = formerStem(server);
    const former = stem && path.join(this.dir, `${stem}${suffix}.json`);
    const url = former && !existsSync(file) && (readJson(former) as { serverUrl?: unknown } | undefined)?.serverUrl;
    if (former && typeof url === "string" && sameUrl(url, serverUrl)) {
      try {
        renameSync(former, file);
      } catch {
        // Left where it was: the server signs in again.
      }
    }
    return file;
  }

  /** What `file` holds if it has the shape of `schema` and is for `serverUrl`. */
  private read<T extends TSchema>(file: string, schema: T, serverUrl: string): Static<T> | undefined {
    const data: unknown = readJson(file);
    return Value.Check(schema, data) && sameUrl((data as { serverUrl: string }).serverUrl, serverUrl)
      ? data
      : undefined;
  }

  saveTokens(server: string, tokens: StoredTokens): Promise<void> {
    return this.write(this.tokensPath(server), tokens);
  }

  async deleteTokens(server: string): Promise<void> {
    await this.remove(this.tokensPath(server));
  }

  /** The server's client registration, or undefined when there is none, it is unreadable, or it is for another URL. */
  client(server: string, serverUrl: string): StoredClient | undefined {
    const file = this.movedFromFormer(server, CLIENT_SUFFIX, serverUrl);
    return this.read(file, StoredClientSchema, serverUrl) as StoredClient | undefined;
  }

  saveClient(server: string, client: StoredClient): Promise<void> {
    return this.write(this.clientPath(server), client);
  }

  async deleteClient(server: string): Promise<void> {
    await this.remove(this.clientPath(server));
  }

  /** Where the import record is: a leading dot, so no server's own file (see `fileStem`) can have its name. */
  importRecordPath(server: string): string {
    return path.join(this.dir, `.${fileStem(server)}-from-pi.json`);
  }

  /** Which of pi's sign-ins for the server at `serverUrl` was taken over or signed out of last, if any. */
  importRecord(server: string, serverUrl: string): ImportRecord | undefined {
    return this.read(this.importRecordPath(server), ImportRecordSchema, serverUrl);
  }

  saveImportRecord(server: string, record: ImportRecord): Promise<void> {
    return this.write(this.importRecordPath(server), record);
  }

  /**
   * Deletes both (for `/mcp logout`); resolves true if anything was there. The import record stays: a sign-in taken
   * over from pi and signed out of here is not taken over again.
   */
  async logout(server: string): Promise<boolean> {
    const [tokens, client] = await Promise.all([
      this.remove(this.tokensPath(server)),
      this.remove(this.clientPath(server)),
    ]);
    return tokens || client;
  }

  private write(file: string, value: unknown): Promise<void> {
    // Serialised now, so a caller mutating `value` after the call cannot change what is written.
    const text = `${JSON.stringify(value, null, 2)}\n`;
    return serialised(file, async () => {
      await this.ensureDir();
      // The renamed file is a new inode created 0600, which also replaces a looser file that was there before.
      try {
        await replaceFile(file, text, { mode: 0o600, sync: true });
      } catch (error) {
        throw fsError("write", file, error);
      }
    });
  }

  /** Creates the directory 0700, or tightens an existing one that others can read or enter. */
  private async ensureDir(): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      if (process.platform !== "win32" && ((await stat(this.dir)).mode & 0o077) !== 0) await chmod(this.dir, 0o700);
    } catch (error) {
      throw fsError("create directory", this.dir, error);
    }
  }

  /** Deletes `file`; true if it was there. */
  private remove(file: string): Promise<boolean> {
    return serialised(file, async () => {
      try {
        await unlink(file);
        return true;
      } catch (error) {
        if (codeOf(error) === "ENOENT") return false;
        throw fsError("delete", file, error);
      }
    });
  }
}
