// Planning the import of Doorkeeper's oauth_applications (and the --integration-users map) as fieldgate clients.
import { KNOWN_SCOPES } from "../../config.ts";
import type { ImportedClient, ImportRefusal } from "../../store/contract.ts";
import type { CsvRecord } from "../csv.ts";
import { MAX_REDIRECT_URIS, RegistrationError, validateOrgSlug, validateRedirectUri, validateUsername } from "../../oauth/registration.ts";
import { isBcryptDigest, OOB_REDIRECT_URI, parseBoolean, present, sha256Of } from "./values.ts";

export const APPLICATION_COLUMNS = ["id", "name", "uid", "secret", "redirect_uri", "scopes", "confidential"] as const;
export const INTEGRATION_COLUMNS = ["uid", "username", "organization"] as const;

/** An application's integration user, from --integration-users. */
export interface IntegrationUser {
  line: number;
  username: string;
  organization: string;
}

/** What the applications file yields: clients to import, refusals, and Doorkeeper's application ids by client_id. */
export interface ApplicationPlan {
  clients: ImportedClient[];
  refusals: ImportRefusal[];
  /** oauth_applications.id -> uid, for the applications planned as clients only. */
  uidById: Map<string, string>;
  /** oauth_applications.id of the applications refused: their tokens are refused with them. */
  refusedIds: Set<string>;
}

/** The message of a registration check that failed, or undefined when it passed. */
function problem(check: () => unknown): string | undefined {
  try {
    check();
    return undefined;
  } catch (error) {
    if (error instanceof RegistrationError) return error.message;
    throw error;
  }
}

/** The --integration-users rows by uid; a row that cannot be used becomes a refusal instead. */
export function readIntegrationUsers(records: readonly CsvRecord[], refusals: ImportRefusal[]): Map<string, IntegrationUser> {
  const byUid = new Map<string, IntegrationUser>();
  const usernames = new Set<string>();
  for (const { line, fields } of records) {
    const refuse = (reason: string) => refusals.push({ kind: "integration_user", line, id: fields.uid ?? "", reason });
    const uid = present(fields.uid);
    const username = present(fields.username);
    const organization = present(fields.organization);
    if (!uid || !username || !organization) refuse("uid, username and organization are all required");
    else if (byUid.has(uid)) refuse("the application is listed twice");
    else if (problem(() => validateUsername(username))) refuse("the username is not 1 to 254 printable characters without spaces");
    else if (problem(() => validateOrgSlug(organization))) refuse("the organization must be lowercase letters, digits and dashes");
    // Spec §1: each client-credentials application has an integration user of its own.
    else if (usernames.has(username.toLowerCase())) refuse("the integration user is already listed for another application");
    else {
      usernames.add(username.toLowerCase());
      byUid.set(uid, { line, username, organization });
    }
  }
  return byUid;
}

/** The fieldgate scope for Doorkeeper's `scopes`: empty means the server's defaults, here every scope fieldgate offers. */
function scopeOf(scopes: string): { scope: string } | { unknown: string[] } {
  const names = [...new Set(scopes.split(/\s+/).filter(Boolean))];
  if (names.length === 0) return { scope: Object.keys(KNOWN_SCOPES).join(" ") };
  const unknown = names.filter((name) => !Object.hasOwn(KNOWN_SCOPES, name));
  return unknown.length ? { unknown } : { scope: names.join(" ") };
}

/** The registered URIs of an authorization-code client, or why the application cannot be one. */
function redirectUrisOf(column: string): { uris: string[] } | { reason: string } {
  const listed = column.split(/\r?\n/).map((uri) => uri.trim()).filter(Boolean);
  const uris = [...new Set(listed.filter((uri) => uri !== OOB_REDIRECT_URI))];
  if (uris.length === 0) {
    return {
      reason: listed.length
        ? `its only redirect URI is ${OOB_REDIRECT_URI}: list it in --integration-users to import it as a client-credentials client`
        : "it has no redirect URI: list it in --integration-users to import it as a client-credentials client",
    };
  }
  if (uris.length > MAX_REDIRECT_URIS) return { reason: `it has more than ${MAX_REDIRECT_URIS} redirect URIs` };
  for (const uri of uris) {
    const bad = problem(() => validateRedirectUri(uri, "a redirect URI"));
    if (bad) return { reason: bad };
  }
  return { uris };
}

/** One application row as a client to import, or the reason it is refused. */
async function planApplication(fields: Readonly<Record<string, string>>, integration: IntegrationUser | undefined) {
  const uid = fields.uid!;
  const name = present(fields.name?.trim());
  const secret = fields.secret ?? "";
  if (!/^[\x21-\x7e]{1,255}$/.test(uid)) return { reason: "its uid is not 1 to 255 printable ASCII characters" };
  if (!name || name.length > 200) return { reason: "its name is empty or longer than 200 characters" };
  // RFC 6749 §2.1: fieldgate registers confidential clients only; a public one has no secret to authenticate with.
  if (parseBoolean(fields.confidential) !== true) return { reason: "it is a public application (confidential is not true)" };
  if (isBcryptDigest(secret)) return { reason: "its secret is stored as a bcrypt digest, which no fieldgate form can take: rotate it" };
  if (secret === "") return { reason: "it has no secret" };
  const scope = scopeOf(fields.scopes ?? "");
  if ("unknown" in scope) {
    return { reason: `unknown scope ${scope.unknown.join(", ")}; known scopes: ${Object.keys(KNOWN_SCOPES).join(", ")}` };
  }
  const common = { clientId: uid, secretHash: await sha256Of(secret), name, scope: scope.scope };
  if (integration) {
    const { username, organization } = integration;
    return { client: { ...common, grantType: "client_credentials" as const, redirectUris: [], integrationUser: { username, organization } } };
  }
  const uris = redirectUrisOf(fields.redirect_uri ?? "");
  if ("reason" in uris) return uris;
  return { client: { ...common, grantType: "authorization_code" as const, redirectUris: uris.uris, integrationUser: null } };
}

/** Plans every application: authorization-code clients, client-credentials ones for the uids the map lists, refusals. */
export async function planApplications(
  records: readonly CsvRecord[],
  integrationUsers: Map<string, IntegrationUser>,
): Promise<ApplicationPlan> {
  const plan: ApplicationPlan = { clients: [], refusals: [], uidById: new Map(), refusedIds: new Set() };
  const seen = new Set<string>();
  for (const { line, fields } of records) {
    const uid = fields.uid ?? "";
    const id = present(fields.id);
    // A refused row's id maps to no client, so its tokens cannot land on another application's client; an exact
    // repeat of a planned row (same id) keeps that row's mapping.
    const refuse = (reason: string) => {
      plan.refusals.push({ kind: "application", line, id: uid, reason });
      if (id !== undefined && !plan.uidById.has(id)) plan.refusedIds.add(id);
    };
    if (seen.has(uid)) {
      refuse("the uid is listed twice");
      continue;
    }
    seen.add(uid);
    const planned = await planApplication(fields, integrationUsers.get(uid));
    if ("reason" in planned) refuse(planned.reason);
    else {
      plan.clients.push({ line, ...planned.client });
      if (id !== undefined) plan.uidById.set(id, uid);
    }
  }
  for (const [uid, { line }] of integrationUsers) {
    if (!seen.has(uid)) plan.refusals.push({ kind: "integration_user", line, id: uid, reason: "no application with this uid" });
  }
  return plan;
}
