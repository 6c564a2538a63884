// GET /metrics: the Prometheus scrape endpoint, absent unless a metrics bearer secret is configured.
import type { RouteFactory } from "../http/router.ts";
import { bearerChallenge } from "../http/bearer.ts";
import { constantTimeEqual } from "../crypto/compare.ts";
import { invalidToken } from "../oauth/errors.ts";
import { renderBuildInfo, renderDatabaseCounts } from "../http/metrics.ts";

const BEARER = /^Bearer +(\S+) *$/i;

/** Prometheus text exposition format, version 0.0.4. */
export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/**
 * The /metrics route, 401 without the right bearer secret. Without FIELDGATE_METRICS_TOKEN there is no route at all:
 * every method answers 404 as for an unknown path (a registered GET would make other methods 405 with Allow, a
 * hint that the endpoint exists).
 */
export const metricsRoutes: RouteFactory = (deps) => {
  const secret = deps.config.metricsToken;
  if (secret === undefined) return [];
  return [{
    method: "GET",
    path: "/metrics",
    handler: async (request) => {
      const presented = BEARER.exec(request.headers.get("authorization") ?? "")?.[1] ?? "";
      // Compare digests, not the strings: equal lengths make the comparison time independent of the secret.
      const [want, got] = await Promise.all([deps.digest(secret), deps.digest(presented)]);
      if (!constantTimeEqual(want, got)) {
        throw invalidToken("A valid metrics bearer token is required", {
          headers: { "www-authenticate": bearerChallenge(presented ? "invalid_token" : undefined) },
        });
      }
      const text = renderBuildInfo(deps.version) + deps.metrics.render() + renderDatabaseCounts(deps.store.stats?.());
      return new Response(text, {
        status: 200,
        headers: { "content-type": METRICS_CONTENT_TYPE, "cache-control": "no-store" },
      });
    },
  }];
};
