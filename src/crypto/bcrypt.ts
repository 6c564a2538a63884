// Verifying bcrypt password digests that another system wrote (Rails' has_secure_password, Devise), via bcryptjs.
import bcrypt from "bcryptjs";

/** Highest bcrypt cost verified: Devise and has_secure_password default to 12, and each step doubles the work. */
export const MAX_BCRYPT_COST = 14;

const DIGEST = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/;

/** True for a `$2a$`/`$2b$`/`$2y$` digest fieldgate will verify (cost 4 to MAX_BCRYPT_COST). */
export function isVerifiableBcrypt(stored: string): boolean {
  const cost = Number(DIGEST.exec(stored)?.[1]);
  return cost >= 4 && cost <= MAX_BCRYPT_COST;
}

/**
 * Checks a password against a bcrypt digest; false for a digest it will not verify. bcrypt reads at most 72 bytes of
 * the password, exactly as the Ruby bcrypt gem that wrote the digest did.
 */
export async function verifyBcrypt(password: string, stored: string): Promise<boolean> {
  if (!isVerifiableBcrypt(stored)) return false;
  return await bcrypt.compare(password, stored);
}
