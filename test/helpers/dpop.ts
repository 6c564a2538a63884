// DPoP proofs for tests: a key pair and a proof builder whose every header and claim a test may override or drop.
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from "jose";
import { createHash, randomUUID } from "node:crypto";

export interface ProofKey {
  alg: "ES256" | "EdDSA";
  privateKey: CryptoKey;
  publicJwk: JWK;
}

/** A fresh extractable key pair for proofs. */
export async function proofKey(alg: "ES256" | "EdDSA" = "ES256"): Promise<ProofKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { alg, privateKey, publicJwk: await exportJWK(publicKey) };
}

/** What a proof says; `undefined` in `claims` or `header` drops that member. */
export interface ProofOptions {
  htm?: string;
  htu?: string;
  /** Epoch seconds. */
  iat?: number;
  jti?: string;
  accessToken?: string;
  claims?: Record<string, unknown>;
  header?: Record<string, unknown>;
}

/** A signed DPoP proof for `key`; jti is unique per call unless given. */
export async function makeProof(key: ProofKey, options: ProofOptions = {}): Promise<string> {
  const claims: Record<string, unknown> = {
    jti: options.jti ?? randomUUID(),
    htm: options.htm ?? "POST",
    htu: options.htu ?? "http://test/oauth/token",
    iat: options.iat ?? 1_700_000_000,
    ...(options.accessToken === undefined ? {} : { ath: athOf(options.accessToken) }),
    ...options.claims,
  };
  const header: Record<string, unknown> = { alg: key.alg, typ: "dpop+jwt", jwk: key.publicJwk, ...options.header };
  return await new SignJWT(dropUndefined(claims)).setProtectedHeader(dropUndefined(header) as never).sign(key.privateKey);
}

/** base64url SHA-256 of an access token: a proof's `ath`. */
export function athOf(accessToken: string): string {
  return createHash("sha256").update(accessToken).digest("base64url");
}

/** An unsigned token (`alg: none`) with a DPoP header: what jose never makes, built by hand. */
export function unsignedProof(key: ProofKey, claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "none", typ: "dpop+jwt", jwk: key.publicJwk })}.${part(claims)}.`;
}

function dropUndefined(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}

/** One way a proof is wrong: built from a good proof's options (`base`: the right htm, htu, iat and ath). */
export interface BadProof {
  name: string;
  proof: (key: ProofKey, base: ProofOptions) => Promise<string> | string;
}

/** The proofs RFC 9449 §4.3 refuses, for every endpoint that checks one (STYLE §9: one test per row). */
export const BAD_PROOFS: readonly BadProof[] = [
  { name: "wrong typ", proof: (key, base) => makeProof(key, { ...base, header: { typ: "JWT" } }) },
  {
    name: "alg none",
    proof: (key, base) => unsignedProof(key, { jti: randomUUID(), htm: base.htm, htu: base.htu, iat: base.iat }),
  },
  {
    name: "HS256",
    proof: (key, base) =>
      new SignJWT({ jti: randomUUID(), htm: base.htm, htu: base.htu, iat: base.iat })
        .setProtectedHeader({ alg: "HS256", typ: "dpop+jwt", jwk: key.publicJwk })
        .sign(new Uint8Array(32)),
  },
  { name: "a private key in jwk", proof: async (key, base) => makeProof(key, { ...base, header: { jwk: await exportJWK(key.privateKey) } }) },
  { name: "missing jti", proof: (key, base) => makeProof(key, { ...base, claims: { jti: undefined } }) },
  { name: "missing htm", proof: (key, base) => makeProof(key, { ...base, claims: { htm: undefined } }) },
  { name: "missing htu", proof: (key, base) => makeProof(key, { ...base, claims: { htu: undefined } }) },
  { name: "missing iat", proof: (key, base) => makeProof(key, { ...base, claims: { iat: undefined } }) },
  { name: "htm mismatch", proof: (key, base) => makeProof(key, { ...base, htm: base.htm === "GET" ? "PUT" : "GET" }) },
  { name: "htu mismatch", proof: (key, base) => makeProof(key, { ...base, htu: `${base.htu}/other` }) },
  { name: "iat too old", proof: (key, base) => makeProof(key, { ...base, iat: base.iat! - 61 }) },
  { name: "iat in the future", proof: (key, base) => makeProof(key, { ...base, iat: base.iat! + 61 }) },
];
