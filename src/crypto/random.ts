// Random credentials: 256-bit values with a recognisable prefix per kind so secret scanners can spot leaks.
import type { Random } from "../deps.ts";
import { encodeBase64Url } from "./base64url.ts";

/** Prefixes by credential kind; a leaked `fgat_…` string is recognisably a fieldgate access token. */
export const TOKEN_PREFIX = {
  accessToken: "fgat_",
  refreshToken: "fgrt_",
  authorizationCode: "fgac_",
  clientSecret: "fgcs_",
  session: "fgss_",
  csrf: "fgcf_",
} as const;

export type TokenKind = keyof typeof TOKEN_PREFIX;

/** A fresh 256-bit random credential of the given kind, e.g. `fgat_` + 43 base64url characters. */
export function randomToken(random: Random, kind: TokenKind): string {
  return TOKEN_PREFIX[kind] + encodeBase64Url(random(32));
}

/** A random public identifier (not a secret), e.g. for client ids and grant families. */
export function randomId(random: Random, bytes = 16): string {
  return encodeBase64Url(random(bytes));
}
