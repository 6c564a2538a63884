// A request's DPoP proof checked and spent: verification (dpop.ts), then the replay record every instance shares.
import type { Deps } from "../deps.ts";
import { nowSeconds } from "../deps.ts";
import { readDpopHeader, verifyDpopProof } from "./dpop.ts";
import { invalidDpopProof } from "./errors.ts";

/**
 * Checks the DPoP proof `request` carries for the endpoint at `path` (and, at a resource, `accessToken`), and records
 * it as used: the proof's key thumbprint, or undefined when the request carries no proof. The record costs one store
 * statement after the signature check, so a forged proof never reaches the store.
 * @throws OAuthError invalid_dpop_proof for a proof that is malformed, not for this request, or already used;
 * use_dpop_nonce when nonces are on and the proof's is missing, stale or forged
 */
export async function spendDpopProof(
  deps: Deps,
  request: Request,
  options: { path: string; accessToken?: string },
): Promise<string | undefined> {
  const proof = readDpopHeader(request);
  if (proof === undefined) return undefined;
  const windowSeconds = deps.config.dpopWindowSeconds;
  const checked = await verifyDpopProof(proof, {
    method: request.method,
    url: `${deps.config.baseUrl}${options.path}`,
    now: nowSeconds(deps.clock),
    windowSeconds,
    accessToken: options.accessToken,
  });
  if (deps.config.dpopNonce) await deps.dpopNonces.check(checked.nonce);
  // Keyed by key and jti: two clients' proofs never collide, and the digest bounds what a jti stores.
  const keyHash = await deps.digest(`${checked.jkt}.${checked.jti}`);
  if (!await deps.store.throttles.rememberProof(keyHash, checked.iat + windowSeconds)) {
    throw invalidDpopProof("The DPoP proof has already been used");
  }
  return checked.jkt;
}
