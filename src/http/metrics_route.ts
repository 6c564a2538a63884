// GET /metrics: the Prometheus scrape endpoint, absent unless a metrics bearer secret is configured.
import type { RouteFactory } from "./router.ts";
import { bearerChallenge } from "./bearer.ts";
import { constantTimeEqual } from "../crypto/compare.ts";
import { OAuthError, invalidToken } from "../oauth/errors.ts";

const BEARER = /^Bearer +(\S+) *$/i;

/** Prometheus text exposition format, version 0.0.4. */
export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** The /metrics route: 404 when FIELDGATE_METRICS_TOKEN is unset, 401 without the right bearer secret. */
export const metricsRoutes: RouteFactory = (deps) => [{
  method: "GET",
  path: "/metrics",
  handler: async (request) => {
    const secret = deps.config.metricsToken;
    // Off means indistinguishable from an unknown path: no hint that a metrics endpoint exists.
    if (secret === undefined) throw new OAuthError("not_found", "No such endpoint");
    const presented = BEARER.exec(request.headers.get("authorization") ?? "")?.[1] ?? "";
    // Compare digests, not the strings: equal lengths make the comparison time independent of the secret.
    const [want, got] = await Promise.all([deps.digest(secret), deps.digest(presented)]);
    if (!constantTimeEqual(want, got)) {
      throw invalidToken("A valid metrics bearer token is required", {
        headers: { "www-authenticate": bearerChallenge(presented ? "invalid_token" : undefined) },
      });
    }
    return new Response(deps.metrics.render(), {
      status: 200,
      headers: { "content-type": METRICS_CONTENT_TYPE, "cache-control": "no-store" },
    });
  },
}];
