// Doorkeeper-shaped CSV exports (as psql `\copy … csv header` and `sqlite3 -header -csv` write them) for import tests.
import { createHash } from "node:crypto";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** Plaintext credentials the exports hold; none of them may reach fieldgate's database or log. */
export const PLAIN = {
  webSecret: "dk-web-secret-plain-0001-abcdefghijklmnop",
  syncSecret: "dk-sync-secret-plain-0002-abcdefghijklmno",
  aliceAccess: "dk-at-alice-live-0123456789abcdefghijklmnopq",
  aliceRefresh: "dk-rt-alice-live-0123456789abcdefghijklmnopq",
  aliceRevokedAccess: "dk-at-alice-revoked-0123456789abcdefghijklmn",
  aliceRevokedRefresh: "dk-rt-alice-revoked-0123456789abcdefghijklmn",
  bobOldAccess: "dk-at-bob-old-0123456789abcdefghijklmnopqrstu",
  bobRefreshA: "dk-rt-bob-A-0123456789abcdefghijklmnopqrstuvw",
  bobNewAccess: "dk-at-bob-new-0123456789abcdefghijklmnopqrstu",
  bobRefreshB: "dk-rt-bob-B-0123456789abcdefghijklmnopqrstuvw",
  strangerAccess: "dk-at-stranger-0123456789abcdefghijklmnopqrst",
  syncAccess: "dk-at-sync-cc-0123456789abcdefghijklmnopqrstu",
  carolExpiredAccess: "dk-at-carol-expired-0123456789abcdefghijklmno",
  chainRoot: "dk-rt-old-chain-0123456789abcdefghijklmnopqrs",
  chainA: "dk-rt-chain-a-0123456789abcdefghijklmnopqrstuv",
  chainB: "dk-rt-chain-b-0123456789abcdefghijklmnopqrstuv",
  alicePassword: "alice old password",
  bobPassword: "bob old password",
} as const;

/** bcrypt cost 12 digests of PLAIN.alicePassword ($2b$, as has_secure_password writes) and PLAIN.bobPassword ($2a$, Devise). */
export const DIGESTS = {
  alice: "$2b$12$9JczecLZFM/FiFKCufWQOuPR4aC/B3a5.ovnQwRTKQwNaN8qzERKO",
  bob: "$2a$12$lvQXMomdqF8UFCMNHAKrxOTArp0/fP7ovAA6jRAoHOkah12vxYUgW",
};

export const WEB_UID = "dk-web-uid-0001";
export const SYNC_UID = "dk-sync-uid-0002";
export const WEB_REDIRECTS = ["https://notes.example/cb", "https://notes.example/cb2"];

/** RFC 4180 field: quoted when it holds a comma, quote or line break. */
const field = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
const csv = (rows: string[][]) => rows.map((row) => row.map(field).join(",")).join("\n") + "\n";

/** oauth_applications: plaintext secrets, or with `hashed` the SHA-256 hex hash_application_secrets stores. */
export function applicationsCsv(hashed = false): string {
  const secret = (plain: string) => (hashed ? sha256(plain) : plain);
  return csv([
    ["id", "name", "uid", "secret", "redirect_uri", "scopes", "confidential", "created_at", "updated_at"],
    ["1", 'Notes, "beta"', WEB_UID, secret(PLAIN.webSecret), WEB_REDIRECTS.join("\n"), "fields:read", "1", "2024-03-01 10:00:00.123456", "2024-03-01 10:00:00"],
    ["2", "Nightly sync", SYNC_UID, sha256(PLAIN.syncSecret), "urn:ietf:wg:oauth:2.0:oob", "", "t", "2024-03-02 10:00:00", "2024-03-02 10:00:00"],
    ["3", "Mobile app", "dk-public-uid-0003", "", "https://mobile.example/cb", "fields:read", "0", "2024-03-03 10:00:00", "2024-03-03 10:00:00"],
    ["4", "Legacy", "dk-bcrypt-uid-0004", "$2a$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234", "https://legacy.example/cb", "fields:read", "1", "2024-03-04 10:00:00", "2024-03-04 10:00:00"],
    ["5", "Admin tool", "dk-admin-uid-0005", "admin-secret-plain", "https://admin.example/cb", "fields:read admin", "1", "2024-03-05 10:00:00", "2024-03-05 10:00:00"],
    ["6", "Printer", "dk-oob-uid-0006", "printer-secret-plain", "urn:ietf:wg:oauth:2.0:oob", "fields:read", "1", "2024-03-06 10:00:00", "2024-03-06 10:00:00"],
  ]);
}

export function integrationUsersCsv(): string {
  return csv([["uid", "username", "organization"], [SYNC_UID, "sync-robot@example.com", "acme"]]);
}

export function ownersCsv(): string {
  return csv([
    ["resource_owner_id", "username", "organization", "name", "password_digest"],
    ["10", "alice@example.com", "acme", "Alice A", DIGESTS.alice],
    ["11", "bob@example.com", "acme", "Bob", DIGESTS.bob],
    ["12", "carol@example.com", "beta", "", ""],
  ]);
}

/**
 * oauth_access_tokens at 2026-01-01T00:00:00Z (the fake clock's start): alice's live row and a revoked one, bob's
 * rotated pair (previous_refresh_token), a row whose owner has no mapping, a client-credentials token, an expired
 * row, and a chain refreshed twice before use. With `hashed`, the token columns hold SHA-256 hex.
 */
export function tokensCsv(hashed = false): string {
  const t = (plain: string) => (plain === "" ? "" : hashed ? sha256(plain) : plain);
  const header = ["id", "resource_owner_id", "application_id", "token", "refresh_token", "expires_in", "revoked_at", "created_at", "scopes", "previous_refresh_token"];
  return csv([
    header,
    ["100", "10", "1", t(PLAIN.aliceAccess), t(PLAIN.aliceRefresh), "7200", "", "2025-12-31 23:30:00", "fields:read", ""],
    ["101", "10", "1", t(PLAIN.aliceRevokedAccess), t(PLAIN.aliceRevokedRefresh), "7200", "2025-12-30 10:00:00", "2025-12-30 09:00:00", "fields:read", ""],
    ["102", "11", "1", t(PLAIN.bobOldAccess), t(PLAIN.bobRefreshA), "7200", "", "2025-12-01 08:00:00", "fields:read", ""],
    ["103", "11", "1", t(PLAIN.bobNewAccess), t(PLAIN.bobRefreshB), "7200", "", "2025-12-31 23:00:00+00", "fields:read", t(PLAIN.bobRefreshA)],
    ["104", "99", "1", t(PLAIN.strangerAccess), "", "7200", "", "2025-12-31 23:30:00", "fields:read", ""],
    ["105", "", "2", t(PLAIN.syncAccess), "", "7200", "", "2025-12-31 23:45:00", "", ""],
    ["106", "12", "1", t(PLAIN.carolExpiredAccess), "", "7200", "", "2025-11-01 00:00:00", "fields:read", ""],
    ["107", "10", "1", t("dk-at-chain-a-0123456789"), t(PLAIN.chainA), "7200", "2025-06-01 00:00:00", "2025-06-01 00:00:00", "fields:read", t(PLAIN.chainRoot)],
    ["108", "10", "1", t("dk-at-chain-b-0123456789"), t(PLAIN.chainB), "7200", "2025-06-01 00:00:00", "2025-06-01 00:00:01", "fields:read", t(PLAIN.chainRoot)],
  ]);
}

/** Every plaintext the exports carry, for scans of the database file and the log. */
export const PLAINTEXTS: readonly string[] = Object.values(PLAIN);
