// The one-time terminal block that hands the demo credentials to the operator (never the log stream).
import type { DemoSeed } from "./seed.ts";

/** Human-readable demo credentials with curl examples for the client_credentials flow and a GraphQL query. */
export function formatDemoBanner(seed: DemoSeed, options: { baseUrl: string; credentialsPath?: string }): string {
  const cc = seed.clientCredentialsClient;
  const ac = seed.authorizationCodeClient;
  const base = options.baseUrl;
  const tokenBody = JSON.stringify({ grant_type: "client_credentials", client_id: cc.client_id, client_secret: cc.client_secret });
  const query = JSON.stringify({ query: "{ fields { total_count } }" });
  return [
    "",
    "== fieldgate demo data created (shown once) ==",
    `Organization ${seed.organization} with ${seed.fields} fields.`,
    "",
    `Sign in at ${base}/ as:`,
    `  username: ${seed.username}`,
    `  password: ${seed.password}`,
    "",
    "Authorization-code client (Demo field notes app):",
    `  client_id:     ${ac.client_id}`,
    `  client_secret: ${ac.client_secret}`,
    `  redirect_uri:  ${ac.redirect_uri}`,
    "",
    `Client-credentials client (Demo nightly sync, acts as ${cc.integration_user}):`,
    `  client_id:     ${cc.client_id}`,
    `  client_secret: ${cc.client_secret}`,
    "",
    "Try it:",
    `  TOKEN=$(curl -s ${base}/oauth/token -H 'content-type: application/json' \\`,
    `    -d '${tokenBody}' | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')`,
    `  curl -s ${base}/graphql -H 'content-type: application/json' -H "authorization: Bearer $TOKEN" \\`,
    `    -d '${query}'`,
    "",
    options.credentialsPath
      ? `These credentials are also in ${options.credentialsPath} (mode 0600); the landing-page walkthrough reads it. Delete it to turn demo mode off.`
      : "These credentials are not stored anywhere else.",
    "",
  ].join("\n") + "\n";
}

/**
 * The line a later start prints in demo mode: where the walkthrough is and where the credentials shown at the first
 * start are kept (the secrets themselves are shown once only).
 */
export function formatDemoReminder(options: { baseUrl: string; credentialsPath: string | undefined }): string {
  const where = options.credentialsPath ? ` The demo user's password and clients are in ${options.credentialsPath}.` : "";
  return `fieldgate demo mode: open ${options.baseUrl}/ and press "Try the demo".${where}\n`;
}
