// DPoP proofs (RFC 9449 §4): reading the header and checking a proof's signature, key and claims with jose.
import { calculateJwkThumbprint, EmbeddedJWK, errors, jwtVerify } from "jose";
import type { JWK } from "jose";
import { sha256Base64Url } from "../crypto/hash.ts";
import { invalidDpopProof } from "./errors.ts";

/**
 * Signature algorithms accepted in a proof: asymmetric only (RFC 9449 §4.3 refuses `none` and MACs). Ed25519 is
 * EdDSA's fully specified name (RFC 9864), which current clients (oauth4webapi) sign with.
 */
export const DPOP_ALGORITHMS = ["ES256", "EdDSA", "Ed25519"] as const;

/**
 * Longest DPoP header read, in characters: an ES256 or Ed25519 proof with `ath` and a nonce is under 1 KB, so this
 * refuses a padded header before any base64 or JSON work is spent on it.
 */
export const MAX_DPOP_HEADER_LENGTH = 4_096;

/** What a checked proof tells: the key's RFC 7638 thumbprint, and the replay record's name and lifetime. */
export interface DpopProof {
  /** base64url SHA-256 JWK thumbprint (RFC 7638) of the proof's public key: `cnf.jkt` of a bound token. */
  jkt: string;
  /** The proof's `jti`, as sent. */
  jti: string;
  /** The proof's `iat`, epoch seconds. */
  iat: number;
  /** The proof's `nonce` as sent (RFC 9449 §8), unchecked; undefined when absent. */
  nonce: unknown;
}

/** What a proof must match: the request it came with, the current time and, at a resource, the access token. */
export interface DpopExpectation {
  /** The request method (`htm`). */
  method: string;
  /** The public URL of the endpoint (`htu`), compared without query and fragment. */
  url: string;
  /** Epoch seconds now. */
  now: number;
  /** Seconds a proof's `iat` may lie before or after `now`. */
  windowSeconds: number;
  /** At a protected resource: the access token the proof's `ath` must hash (RFC 9449 §4.3 check 12). */
  accessToken?: string;
}

/**
 * The DPoP header's value, or undefined when the request has none.
 * @throws OAuthError invalid_dpop_proof when it is too long or sent more than once (RFC 9449 §4.3 check 1)
 */
export function readDpopHeader(request: Request): string | undefined {
  const value = request.headers.get("dpop");
  if (value === null) return undefined;
  if (value.length > MAX_DPOP_HEADER_LENGTH) throw invalidDpopProof("The DPoP header is too long");
  // Headers joins repeated fields with ", ", and a compact JWS holds neither a comma nor a space.
  if (/[,\s]/.test(value)) throw invalidDpopProof("Send exactly one DPoP header holding one proof");
  return value;
}

/**
 * Checks one proof against the request (RFC 9449 §4.3 checks 2 to 12; replay, check 11's `jti` part, is the
 * store's): returns its key thumbprint and replay identity.
 * @throws OAuthError invalid_dpop_proof for every way a proof can be wrong
 */
export async function verifyDpopProof(proof: string, expected: DpopExpectation): Promise<DpopProof> {
  const { payload, protectedHeader } = await verifySignature(proof);
  const { jti, htm, htu, iat, ath, nonce } = payload;
  // A jti is a random identifier (RFC 9449 §4.2 suggests 96 bits or more); 256 characters leave ample room.
  if (typeof jti !== "string" || jti.length === 0 || jti.length > 256) {
    throw invalidDpopProof("The proof needs a jti of 1 to 256 characters");
  }
  if (typeof htm !== "string") throw invalidDpopProof("The proof needs an htm");
  if (typeof htu !== "string") throw invalidDpopProof("The proof needs an htu");
  if (typeof iat !== "number" || !Number.isFinite(iat)) throw invalidDpopProof("The proof needs a numeric iat");
  if (htm !== expected.method) throw invalidDpopProof("The proof's htm is not this request's method");
  if (!sameResource(htu, expected.url)) throw invalidDpopProof("The proof's htu is not this endpoint");
  if (Math.abs(iat - expected.now) > expected.windowSeconds) {
    throw invalidDpopProof("The proof's iat is outside the accepted window");
  }
  await checkAth(ath, expected.accessToken);
  const jkt = await calculateJwkThumbprint(protectedHeader.jwk as JWK, "sha256");
  return { jkt, jti, iat, nonce };
}

/** Signature, `typ` and algorithm through jose; the embedded `jwk` must be a public key. */
async function verifySignature(proof: string) {
  try {
    return await jwtVerify(proof, EmbeddedJWK, { typ: "dpop+jwt", algorithms: [...DPOP_ALGORITHMS] });
  } catch (error) {
    // jose reports every malformed, unsigned or wrongly typed proof as one of its own errors.
    if (error instanceof errors.JOSEError) throw invalidDpopProof("The DPoP proof is invalid", { cause: error });
    throw error;
  }
}

/** True when `htu` names `endpoint`, ignoring query and fragment (RFC 9449 §4.3 check 9; URL parsing normalizes). */
function sameResource(htu: string, endpoint: string): boolean {
  if (!URL.canParse(htu)) return false;
  const a = new URL(htu);
  const b = new URL(endpoint);
  return a.origin === b.origin && a.pathname === b.pathname;
}

/** At a resource the proof must carry `ath`, the base64url SHA-256 of the access token; elsewhere it is ignored. */
async function checkAth(ath: unknown, accessToken: string | undefined): Promise<void> {
  if (accessToken === undefined) return;
  if (typeof ath !== "string") throw invalidDpopProof("The proof needs an ath");
  if (ath !== await sha256Base64Url(accessToken)) throw invalidDpopProof("The proof's ath is not this token's hash");
}
