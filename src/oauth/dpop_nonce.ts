// Server-provided DPoP nonces (RFC 9449 §8, §9), stateless: an HMAC of a time step under a key every instance shares.
import type { Deps, DpopNonces } from "../deps.ts";
import { nowSeconds } from "../deps.ts";
import { serverSecretKey } from "../crypto/server_secret.ts";
import { hmacSha256Base64Url } from "../crypto/hmac.ts";
import { constantTimeEqual } from "../crypto/compare.ts";
import { OAuthError } from "./errors.ts";

/** The server_secrets row the nonce key lives in: the database every instance shares, so any accepts another's. */
const SECRET_NAME = "dpop_nonce_key";

/**
 * The app's nonces: a nonce is accepted in its time step and the next, so it lives one to two DPoP windows. The key
 * is read from the store on first use, and a failed read is retried by the next request.
 */
export function createDpopNonces(deps: Pick<Deps, "store" | "clock" | "random" | "config">): DpopNonces {
  const keyed = serverSecretKey(deps, SECRET_NAME, (secret) => secret);
  const stepNow = () => Math.floor(nowSeconds(deps.clock) / deps.config.dpopWindowSeconds);
  const nonceOf = async (step: number) => `${step}.${await hmacSha256Base64Url(await keyed(), `dpop-nonce.${step}`)}`;
  const current = () => nonceOf(stepNow());
  return {
    current,
    async check(nonce) {
      const step = typeof nonce === "string" ? Number(/^(\d{1,15})\./.exec(nonce)?.[1]) : NaN;
      const now = stepNow();
      if ((step === now || step === now - 1) && constantTimeEqual(nonce as string, await nonceOf(step))) return;
      throw new OAuthError("use_dpop_nonce", "Sign the DPoP proof with the nonce in the DPoP-Nonce header", {
        headers: { "dpop-nonce": await current() },
      });
    },
  };
}
