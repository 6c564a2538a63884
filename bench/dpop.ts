// DPoP for the bench: ES256 proofs signed synchronously with node:crypto, so autocannon's setupRequest can give every
// request a fresh one (the server accepts each jti once), and the issuer a server builds its htu from.
import { createHash, generateKeyPairSync, randomUUID, sign } from "node:crypto";

const b64 = (text: string) => Buffer.from(text).toString("base64url");

export interface DpopSigner {
  /** A new proof for `htm` `htu` (with `ath` when `accessToken` is given), `iat` now. */
  proof(htm: string, htu: string, accessToken?: string): string;
}

/** A signer over a fresh P-256 key, the one key every proof it makes carries. */
export function createDpopSigner(): DpopSigner {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const { kty, crv, x, y } = publicKey.export({ format: "jwk" });
  const header = b64(JSON.stringify({ typ: "dpop+jwt", alg: "ES256", jwk: { kty, crv, x, y } }));
  return {
    proof(htm, htu, accessToken) {
      const ath = accessToken === undefined ? {} : { ath: createHash("sha256").update(accessToken).digest("base64url") };
      const claims = { jti: randomUUID(), htm, htu, iat: Math.floor(Date.now() / 1000), ...ath };
      const input = `${header}.${b64(JSON.stringify(claims))}`;
      return `${input}.${sign("sha256", Buffer.from(input), { key: privateKey, dsaEncoding: "ieee-p1363" }).toString("base64url")}`;
    },
  };
}

/** The issuer (FIELDGATE_BASE_URL) of the server at `origin`: proofs name endpoints under it, not under `origin`. */
export async function issuerOf(origin: string): Promise<string> {
  const response = await fetch(`${origin}/.well-known/oauth-authorization-server`);
  const { issuer } = await response.json() as { issuer?: string };
  if (!response.ok || typeof issuer !== "string") throw new Error(`${origin} published no issuer (${response.status})`);
  return issuer;
}
