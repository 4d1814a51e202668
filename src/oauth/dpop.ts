/**
 * Kept here: the SDK's `DpopSession` keeps its key in memory only, and tokens outlive the process.
 *
 * DPoP (RFC 9449, the MCP extension `io.modelcontextprotocol/auth/dpop`, SEP-1932) for one server's tokens: whether
 * to ask for DPoP-bound tokens, and the key they are bound to. The SDK does the protocol once a provider's `dpop()`
 * returns a `DpopSession`: a proof in every token request (retried with the authorization server's nonce on
 * `use_dpop_nonce`), and, for a `token_type: DPoP` token, the `DPoP` scheme with a fresh proof on every request to
 * the MCP server (retried with its nonce too). What is left to the bridge is the key's lifetime: a token is bound to
 * the key that asked for it, refresh tokens too, so the key is stored with the tokens (./storage.ts, 0600) and lives
 * and dies with them; pi restarted uses the stored tokens with the stored key.
 */
import {
  type AuthorizationServerMetadata,
  DPOP_SUPPORTED_ALGS,
  type DpopAlg,
  type DpopKeyPair,
  DpopSession,
  generateDpopKeyPair,
} from "@modelcontextprotocol/client";
import { BridgeError } from "../common/errors.ts";
import type { StoredDpopKey } from "./storage.ts";

/** The JWK members that are private key material (EC/OKP `d`; RSA's `d`, primes and CRT values). */
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth"] as const;
/** The algorithm asked for when the authorization server allows it: short proofs, fast signing, the SDK's default. */
const PREFERRED_ALG: DpopAlg = "ES256";

function isDpopAlg(value: unknown): value is DpopAlg {
  return typeof value === "string" && (DPOP_SUPPORTED_ALGS as readonly string[]).includes(value);
}

/** The secret parts of a stored key, to keep out of every message. */
function dpopSecrets(key: StoredDpopKey): string[] {
  return PRIVATE_MEMBERS.map((member) => key.jwk[member]).filter((value): value is string => typeof value === "string");
}

/** What the authorization server's metadata says it verifies proofs with (`dpop_signing_alg_values_supported`). */
function advertisedAlgs(metadata: AuthorizationServerMetadata | undefined): string[] | undefined {
  const algs = (metadata as Record<string, unknown> | undefined)?.dpop_signing_alg_values_supported;
  return Array.isArray(algs) ? algs.filter((alg): alg is string => typeof alg === "string") : undefined;
}

/** Why DPoP cannot be used although the config asks for it. */
class DpopUnavailableError extends Error {}

/**
 * The algorithm to sign proofs with, or undefined for plain Bearer tokens. `setting` is `auth.dpop`: unset, DPoP is
 * used where the authorization server advertises it with an algorithm the SDK signs; `true` always (ES256 where the
 * server does not say); `false` never.
 */
export function dpopAlgorithm(
  setting: boolean | undefined,
  metadata: AuthorizationServerMetadata | undefined,
): DpopAlg | undefined {
  if (setting === false) return undefined;
  const advertised = advertisedAlgs(metadata);
  if (advertised === undefined || advertised.length === 0) return setting ? PREFERRED_ALG : undefined;
  if (advertised.includes(PREFERRED_ALG)) return PREFERRED_ALG;
  const usable = advertised.find(isDpopAlg);
  if (usable === undefined && setting)
    throw new DpopUnavailableError(
      `its authorization server verifies DPoP proofs only with ${advertised.join(", ")}, and the bridge signs with ${DPOP_SUPPORTED_ALGS.join(", ")}; remove \`auth.dpop\` or set it to false`,
    );
  return usable;
}

/** A new key pair whose private half can be stored (the SDK's default keeps it in memory only). */
async function newKey(alg: DpopAlg): Promise<{ pair: DpopKeyPair; stored: StoredDpopKey }> {
  const pair = await generateDpopKeyPair({ alg, extractable: true });
  const { exportJWK } = await import("jose");
  const jwk = (await exportJWK(pair.privateKey)) as Record<string, unknown>;
  return { pair, stored: { alg, jwk } };
}

/** The key pair of a stored key; the private key is not extractable again once loaded. */
async function loadKey(stored: StoredDpopKey): Promise<DpopKeyPair> {
  const { importJWK, calculateJwkThumbprint } = await import("jose");
  const publicJwk: Record<string, unknown> = { ...stored.jwk };
  for (const member of PRIVATE_MEMBERS) delete publicJwk[member];
  delete publicJwk.key_ops;
  delete publicJwk.ext;
  const privateKey = (await importJWK(stored.jwk, stored.alg, { extractable: false })) as DpopKeyPair["privateKey"];
  const publicKey = (await importJWK(publicJwk, stored.alg)) as DpopKeyPair["privateKey"];
  const thumbprint = await calculateJwkThumbprint(publicJwk, "sha256");
  return { privateKey, publicKey, publicJwk, thumbprint, alg: stored.alg };
}

/** The same stored key, compared by its private part (what a rewritten file would change). */
function sameKey(a: StoredDpopKey, b: StoredDpopKey): boolean {
  return a.alg === b.alg && a.jwk.d === b.jwk.d;
}

/** A key in use: its session (made once), the key as stored once it is known, and whether tokens were stored with it. */
interface KeyInUse {
  alg: DpopAlg;
  session: Promise<DpopSession>;
  stored?: StoredDpopKey;
  bound?: boolean;
}

export interface DpopKeysOptions {
  server: string;
  /** `auth.dpop`. */
  setting: boolean | undefined;
  /** The key stored with the server's tokens now, if any. */
  storedKey(): StoredDpopKey | undefined;
  /** The authorization server's metadata, once discovery (or the config) has it. */
  metadata(): AuthorizationServerMetadata | undefined;
  /** Told the private parts of every key, to keep them out of messages. */
  onSecrets: (values: string[]) => void;
}

/**
 * One server's DPoP key, as its provider hands it to the SDK (`dpop()`): the key of the stored tokens when they have
 * one, else a new one made for the next token request (stored by the provider with the tokens it gets). The session
 * is kept as long as the key, since it also holds the nonces each server last sent.
 */
export class DpopKeys {
  private current?: KeyInUse;

  constructor(private readonly options: DpopKeysOptions) {}

  /** The session for the next request, or undefined when it goes without DPoP. */
  async session(): Promise<DpopSession | undefined> {
    const stored = this.options.storedKey();
    if (stored) {
      if (!this.current?.stored || !sameKey(this.current.stored, stored)) {
        this.options.onSecrets(dpopSecrets(stored));
        this.current = this.track({
          alg: stored.alg,
          stored,
          bound: true,
          session: loadKey(stored).then((keyPair) => DpopSession.create({ keyPair })),
        });
      }
      return await this.current.session;
    }
    const alg = this.algorithm();
    if (alg === undefined) return undefined;
    // Tokens bound to the key in use are gone (signed out, refused, replaced by a sign-in): a new key for new tokens.
    // Requests that ask at once share one new key (set before anything is awaited).
    if (!this.current || this.current.alg !== alg || this.current.bound) {
      const inUse = { alg } as KeyInUse;
      inUse.session = newKey(alg).then(({ pair, stored: key }) => {
        this.options.onSecrets(dpopSecrets(key));
        inUse.stored = key;
        return DpopSession.create({ keyPair: pair });
      });
      this.current = this.track(inUse);
    }
    return await this.current.session;
  }

  private algorithm(): DpopAlg | undefined {
    try {
      return dpopAlgorithm(this.options.setting, this.options.metadata());
    } catch (error) {
      if (!(error instanceof DpopUnavailableError)) throw error;
      const { server } = this.options;
      throw new BridgeError("auth", server, `MCP server '${server}': ${error.message}.`);
    }
  }

  /** A key that could not be made or loaded is not kept: the next request tries again. */
  private track(inUse: KeyInUse): KeyInUse {
    inUse.session.catch(() => {
      if (this.current === inUse) this.current = undefined;
    });
    return inUse;
  }

  /** The key to store with tokens of `tokenType` just issued: the one that asked for them, if they are DPoP-bound. */
  keyFor(tokenType: string): StoredDpopKey | undefined {
    if (tokenType.toLowerCase() !== "dpop" || !this.current?.stored) return undefined;
    this.current.bound = true;
    return this.current.stored;
  }
}
