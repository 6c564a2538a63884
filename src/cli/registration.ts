// Registration as the CLI presents it: reading a password from stdin and showing a client.
import type { Client } from "../store/contract.ts";
import { isResourceServer } from "../store/rows.ts";
import { MIN_PASSWORD_LENGTH, validatePassword } from "../oauth/registration.ts";

/** What a terminal shows when --password-stdin reads from it (the text is not echoed). */
export const PASSWORD_PROMPT = `Password (at least ${MIN_PASSWORD_LENGTH} characters, not shown; Enter to finish): `;

/**
 * The password in stdin's text: the one line ending `echo` or a here-string adds is removed, other whitespace is
 * part of the password.
 * @throws RegistrationError when it is too short or too long
 */
export function passwordFromStdin(text: string): string {
  return validatePassword(text.replace(/\r?\n$/, ""));
}

/** A client as shown by list/show: every registration fact, never the secret digest. */
export function describeClient(client: Client, integrationUsername?: string): Record<string, unknown> {
  return {
    client_id: client.clientId,
    name: client.name,
    grant_type: client.grantType,
    // Added after grant_type, never in its place: scripts read grant_type (null for a resource server).
    resource_server: isResourceServer(client),
    redirect_uri: client.redirectUri,
    redirect_uris: client.redirectUris,
    scope: client.scope,
    integration_user: integrationUsername ?? null,
    disabled: client.disabled,
    require_dpop: client.requireDpop,
    created_at: client.createdAt,
    secret_rotated_at: client.secretRotatedAt,
  };
}
