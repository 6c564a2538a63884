// The demo client's redirect URI: one definition for the seed, the demo routes and the sync at every start.
import type { DemoCredentials, Log } from "../deps.ts";
import type { Store } from "../store/contract.ts";

/** Where the demo client (src/ui/demo_routes.ts) takes its callback, under the current base URL. */
export function demoRedirectUri(baseUrl: string): string {
  return `${baseUrl}/demo/callback`;
}

/**
 * Re-registers the demo client's redirect URI under the current base URL. The seed registers it once, but the
 * base URL follows the port and FIELDGATE_BASE_URL of each start, and /oauth/authorize matches redirect URIs
 * exactly, so after a restart on another port the walkthrough would end on a "redirect_uri does not match" page.
 * Only the demo client is touched (it is fieldgate's own); every other client keeps what its owner registered.
 * @returns false when the database has no such authorization-code client (a credentials file from another database)
 */
export async function syncDemoRedirectUri(
  store: Store,
  options: { demo: DemoCredentials; baseUrl: string; log: Log },
): Promise<boolean> {
  const redirectUri = demoRedirectUri(options.baseUrl);
  const previous = await store.clients.replaceRedirectUri(options.demo.clientId, redirectUri);
  if (previous === undefined) {
    options.log("demo_client_missing", { client_id: options.demo.clientId });
    return false;
  }
  if (previous.length !== 1 || previous[0] !== redirectUri) {
    options.log("demo_redirect_uri_updated", {
      client_id: options.demo.clientId,
      redirect_uri: redirectUri,
      previous: previous.join(" "),
    });
  }
  return true;
}
