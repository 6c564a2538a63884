// Reading Doorkeeper export values: booleans, datetimes, secrets and token columns in their plain or hashed forms.
import type { Digest } from "../../deps.ts";
import { sha256Hex } from "../../crypto/hash.ts";

/** The one redirect URI Doorkeeper lets a client without a browser register: it names no place to send a code. */
export const OOB_REDIRECT_URI = "urn:ietf:wg:oauth:2.0:oob";

/** A field's value, or undefined when empty: a NULL and an empty string are one thing in optional columns. */
export function present(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/** `1`/`0`, `t`/`f`, `true`/`false` (any case), as the three databases write booleans; undefined for anything else. */
export function parseBoolean(value: string | undefined): boolean | undefined {
  const text = value?.trim().toLowerCase();
  if (text === "1" || text === "t" || text === "true") return true;
  if (text === "0" || text === "f" || text === "false") return false;
  return undefined;
}

const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:\s*(Z|[+-]\d{2}(?::?\d{2})?))?$/;

/**
 * `YYYY-MM-DD HH:MM:SS[.ffffff]` in UTC, or with a zone offset (PostgreSQL's timestamp with time zone), as epoch
 * seconds; undefined when the text is not such a time or names a day that does not exist.
 */
export function parseDatetime(value: string | undefined): number | undefined {
  const match = value === undefined ? null : DATETIME.exec(value.trim());
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, zone] = match;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  const date = new Date(ms);
  if (date.getUTCDate() !== Number(d) || date.getUTCHours() !== Number(h) || date.getUTCMinutes() !== Number(mi)) {
    return undefined;
  }
  let offset = 0;
  if (zone !== undefined && zone !== "Z") {
    const digits = zone.slice(1).replace(":", "");
    offset = (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || "0")) * 60 * (zone[0] === "-" ? -1 : 1);
  }
  return Math.floor(ms / 1000) - offset;
}

/** True for a bcrypt digest as Rails' has_secure_password, Devise and Doorkeeper's BCrypt secret storage write it. */
export function isBcryptDigest(value: string): boolean {
  return /^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/.test(value);
}

/** 64 lowercase hex characters: what Doorkeeper's hash_token_secrets and hash_application_secrets store (SHA-256). */
export function isSha256Hex(value: string): boolean {
  return /^[0-9a-f]{64}$/.test(value);
}

/**
 * The SHA-256 hex a secret or token column stands for: the column itself when Doorkeeper stored it hashed, else the
 * digest of the plaintext. fieldgate stores client secrets and Doorkeeper-shaped tokens as exactly that digest, so
 * either form authenticates the value the client holds and the plaintext is never kept.
 */
export async function sha256Of(column: string, digest: Digest = sha256Hex): Promise<string> {
  return isSha256Hex(column) ? column : await digest(column);
}
