// Planning the import of Doorkeeper resource owners (the --owners file) as fieldgate people.
import { MAX_BCRYPT_COST } from "../../crypto/bcrypt.ts";
import type { ImportedOwner, ImportRefusal } from "../../store/contract.ts";
import type { CsvRecord } from "../csv.ts";
import { RegistrationError, validateOrgSlug, validateUsername } from "../../oauth/registration.ts";
import { isBcryptDigest, present } from "./values.ts";

export const OWNER_COLUMNS = ["resource_owner_id", "username", "organization"] as const;

function passes(check: () => unknown): boolean {
  try {
    check();
    return true;
  } catch (error) {
    if (error instanceof RegistrationError) return false;
    throw error;
  }
}

/** Why an owner row cannot be imported, or undefined when it can. */
function ownerProblem(fields: Readonly<Record<string, string>>, digest: string | undefined): string | undefined {
  const { username = "", organization = "" } = fields;
  if (!present(fields.resource_owner_id) || !username || !organization) {
    return "resource_owner_id, username and organization are all required";
  }
  if (!passes(() => validateUsername(username))) return "the username is not 1 to 254 printable characters without spaces";
  if (!passes(() => validateOrgSlug(organization))) return "the organization must be lowercase letters, digits and dashes";
  if (digest === undefined) return undefined;
  if (!isBcryptDigest(digest)) return "password_digest is not a bcrypt digest ($2a$, $2b$ or $2y$)";
  // Each sign-in pays for the cost once (2^cost rounds): a digest made far above Devise's and Rails' defaults would
  // let one sign-in form occupy the server for seconds.
  if (Number(digest.slice(4, 6)) > MAX_BCRYPT_COST) return `password_digest has a cost above ${MAX_BCRYPT_COST}`;
  return undefined;
}

/** Every owner row as a person to import (or match by username), and the rows refused. */
export function planOwners(records: readonly CsvRecord[], refusals: ImportRefusal[]): ImportedOwner[] {
  const owners: ImportedOwner[] = [];
  const keys = new Set<string>();
  const usernames = new Set<string>();
  for (const { line, fields } of records) {
    const ownerKey = fields.resource_owner_id ?? "";
    const digest = present(fields.password_digest);
    const refuse = (reason: string) => refusals.push({ kind: "owner", line, id: ownerKey, reason });
    const bad = ownerProblem(fields, digest);
    if (bad) refuse(bad);
    else if (keys.has(ownerKey)) refuse("the resource_owner_id is listed twice");
    else if (usernames.has(fields.username!.toLowerCase())) refuse("the username is listed for another owner");
    else {
      keys.add(ownerKey);
      usernames.add(fields.username!.toLowerCase());
      owners.push({
        line,
        ownerKey,
        username: fields.username!,
        organization: fields.organization!,
        name: present(fields.name?.trim()) ?? null,
        passwordHash: digest ?? null,
      });
    }
  }
  return owners;
}
