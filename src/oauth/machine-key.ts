/**
 * Kept here: the SDK's signer imports only a PKCS#8 PEM or a JWK, with the algorithm named by the caller.
 *
 * The private key of a `private_key_jwt` client (RFC 7523): read from its file (PEM — PKCS#8, PKCS#1 or SEC1 — or a
 * JWK), checked against the algorithm it is to sign with (or that algorithm taken from the key), and handed on as a
 * JWK, the form the SDK's signer takes for every algorithm. Errors name the file and what is wrong with it, never
 * the key.
 */
import { createPrivateKey, createSecretKey, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { codeOf, errorMessage } from "../common/errors.ts";

export interface SigningKey {
  /** The private key as a JWK (with its `kid`, if the file had one). */
  jwk: Record<string, unknown>;
  algorithm: string;
}

/** The algorithms each kind of key can sign with, the first its default. */
function algorithmsFor(key: KeyObject): string[] {
  const details = key.asymmetricKeyDetails;
  switch (key.asymmetricKeyType) {
    case "rsa":
      return ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512"];
    case "rsa-pss":
      return ["PS256", "PS384", "PS512"];
    case "ec": {
      const curve = {
        prime256v1: "ES256",
        "P-256": "ES256",
        secp384r1: "ES384",
        "P-384": "ES384",
        secp521r1: "ES512",
        "P-521": "ES512",
      }[details?.namedCurve ?? ""];
      return curve ? [curve] : [];
    }
    case "ed25519":
    case "ed448":
      return ["EdDSA"];
    default:
      return [];
  }
}

function parseKey(text: string): { key: KeyObject; kid?: string } {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    const jwk = JSON.parse(trimmed) as Record<string, unknown>;
    if (Array.isArray(jwk.keys)) throw new Error("it is a JWK Set; the file should hold the client's one private JWK");
    // A symmetric key (a client_secret_jwt one) holds no `d` either: it is said to be symmetric below.
    if (jwk.kty === "oct") return { key: createSecretKey(Buffer.from(String(jwk.k), "base64url")) };
    if (jwk.d === undefined) throw new Error("it is a public JWK; the client signs with the private one (with `d`)");
    return {
      key: createPrivateKey({ key: jwk as never, format: "jwk" }),
      kid: typeof jwk.kid === "string" ? jwk.kid : undefined,
    };
  }
  if (/-----BEGIN (RSA |EC )?PUBLIC KEY-----|-----BEGIN CERTIFICATE-----/.test(trimmed))
    throw new Error("it holds a public key or certificate; the client signs with the private key");
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(trimmed))
    throw new Error("the key is encrypted with a passphrase; store it unencrypted with permissions 0600");
  return { key: createPrivateKey(trimmed) };
}

/**
 * The key in `file` for signing with `algorithm` (the key's own default when unset). Throws an Error whose message
 * says what to fix, for a file that cannot be read, is no private key, or does not fit the algorithm.
 */
export function loadSigningKey(file: string, algorithm?: string): SigningKey {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = codeOf(error);
    const why = code === "ENOENT" ? "it does not exist" : (code ?? errorMessage(error));
    throw new Error(`the private key file ${file} cannot be read (${why})`);
  }
  let parsed: { key: KeyObject; kid?: string };
  try {
    parsed = parseKey(text);
  } catch (error) {
    // Node's parser errors say nothing of the key's bytes; still, only the reason's first line is kept.
    const reason = error instanceof SyntaxError ? "it is neither PEM nor JSON" : errorMessage(error).split("\n")[0];
    throw new Error(`the private key file ${file} holds no usable private key: ${reason}`);
  }
  const usable = algorithmsFor(parsed.key);
  if (usable.length === 0)
    throw new Error(
      `the private key file ${file} holds a ${parsed.key.asymmetricKeyType ?? "symmetric"} key, which cannot sign a client assertion`,
    );
  const chosen = algorithm ?? usable[0]!;
  if (!usable.includes(chosen))
    throw new Error(
      `the private key file ${file} holds a ${parsed.key.asymmetricKeyType} key, which cannot sign ${chosen}; it signs ${usable.join(", ")}`,
    );
  const jwk = parsed.key.export({ format: "jwk" }) as Record<string, unknown>;
  if (parsed.kid !== undefined) jwk.kid = parsed.kid;
  return { jwk, algorithm: chosen };
}
